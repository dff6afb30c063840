"""The "tweaked" variant applies the UI tweaks of R; the ground-truth ids stay the same."""
from __future__ import annotations

import math

import pytest
from playwright.sync_api import Page, expect

from core.sites.demo import DemoSite

pytestmark = pytest.mark.browser


def centre(page: Page, role: str, name: str) -> tuple[float, float]:
    box = page.get_by_role(role, name=name).bounding_box()
    assert box is not None
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def test_sign_in_button_moves_and_ids_change(site: DemoSite, page: Page) -> None:
    page.goto(site.url("/login"))
    before = centre(page, "button", "Sign in")
    assert page.locator("#username").count() == 1 and page.locator("#signin").count() == 1
    site.set_variant("tweaked")
    page.reload()
    after = centre(page, "button", "Sign in")
    assert math.dist(before, after) >= 20  # R: "a button moves 20 px"
    assert page.locator("#username").count() == 0 and page.locator("#signin").count() == 0
    expect(page.get_by_label("User name")).to_have_attribute("id", "login-user")
    page.get_by_label("User name").fill("bob")
    page.get_by_label("Password").fill("demo-pass")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(site.url("/requests"))
    site.wait_for_activation("login.submit", kind="click")  # same ground-truth id in both variants


def test_requests_page_label_suffix_and_reordered_columns(site: DemoSite, page: Page, sign_in) -> None:
    sign_in(page)
    headers = page.locator("thead th")
    expect(headers).to_have_text(["Ref", "Employee", "Type", "Start", "End", "Days", "Status", "Actions"])
    expect(page.get_by_role("button", name="Export report", exact=True)).to_be_visible()
    site.set_variant("tweaked")
    page.reload()
    expect(headers).to_have_text(["Ref", "Status", "Start", "End", "Days", "Employee", "Type", "Actions"])
    expect(page.get_by_role("button", name="Export report", exact=True)).to_have_count(0)
    export = page.get_by_role("button", name="Export report (E)", exact=True)
    expect(export).to_have_attribute("id", "btn-export")
    export.click()
    page.get_by_role("dialog", name="Export report").get_by_role("button", name="Confirm").click()
    expect(page.get_by_text("Report exported (6 requests).")).to_be_visible()
    site.wait_for_activation("dialog.export.confirm")
    assert "requests.export" in [a["gt"] for a in site.activations()]


def test_leave_type_is_a_custom_listbox(site: DemoSite, page: Page, sign_in) -> None:
    site.set_variant("tweaked")
    sign_in(page)
    page.goto(site.url("/requests/new"))
    expect(page.locator("select")).to_have_count(0)
    combo = page.get_by_role("combobox", name="Leave type")
    expect(combo).to_have_attribute("aria-expanded", "false")
    combo.click()
    expect(combo).to_have_attribute("aria-expanded", "true")
    listbox = page.get_by_role("listbox", name="Leave type")
    expect(listbox.get_by_role("option")).to_have_text(
        ["Annual leave", "Sick leave", "Parental leave", "Unpaid leave", "Training"])
    listbox.get_by_role("option", name="Training").click()
    expect(listbox).to_be_hidden()
    expect(combo).to_contain_text("Training")
    # keyboard: open, move down one, choose
    combo.press("ArrowDown")
    combo.press("ArrowUp")
    combo.press("Enter")
    expect(combo).to_contain_text("Unpaid leave")
    page.get_by_label("Start date", exact=True).fill("2026-03-23")
    page.get_by_label("End date", exact=True).fill("2026-03-24")
    page.get_by_label("Reason").fill("Course")
    page.get_by_role("button", name="Submit").click()
    page.wait_for_url(site.url("/requests"))
    expect(page.locator("tbody tr").filter(has_text="LR-0007")).to_contain_text("Unpaid leave")
    site.wait_for_activation("new.type", kind="change", count=2)
    assert "new.type.option.training" in [a["gt"] for a in site.activations()]
    assert [(w["op"], w["duplicate"]) for w in site.writes()] == [("create_request", False)]


def test_delete_confirmation_becomes_two_nested_dialogs(site: DemoSite, page: Page, sign_in) -> None:
    site.set_variant("tweaked")
    sign_in(page)
    row = page.locator("tbody tr").filter(has_text="LR-0006")
    row.get_by_role("button", name="Delete").click()
    outer = page.get_by_role("dialog", name="Delete request?")
    outer.get_by_role("button", name="Delete").click()
    inner = page.get_by_role("dialog", name="Confirm deletion")
    expect(inner).to_be_visible()
    expect(page.get_by_role("dialog")).to_have_count(2)
    expect(outer.get_by_role("dialog", name="Confirm deletion")).to_have_count(1)  # nested in the DOM
    assert site.writes() == []  # nothing deleted yet
    inner.get_by_role("button", name="Cancel").click()
    expect(inner).to_be_hidden()
    expect(outer).to_be_visible()
    outer.get_by_role("button", name="Delete").click()
    inner.get_by_role("button", name="Yes, delete").click()
    expect(page.get_by_role("dialog")).to_have_count(0)
    expect(row).to_have_count(0)
    assert [(w["op"], w["target"]) for w in site.writes()] == [("delete_request", 6)]
    site.wait_for_activation("dialog.delete2.confirm")
