"""Demo app in real Chromium (baseline variant), checked against the server's ground truth."""
from __future__ import annotations

import re
from datetime import date

import pytest
from playwright.sync_api import Page, expect

from core.sites.demo import DEMO_PASSWORD, DemoSite

pytestmark = pytest.mark.browser

INTERACTIVE = ('a[href], button, input:not([type="hidden"]), select, textarea, form, '
               '[role="option"], [role="combobox"], [tabindex]:not([tabindex="-1"])')


def page_ids(site: DemoSite, kind: str | None = None) -> list[str]:
    return [a["gt"] for a in site.activations() if a["source"] == "page" and (kind is None or a["kind"] == kind)]


def missing_gt(page: Page) -> list[str]:
    """Outer HTML of visible interactive elements without data-gt."""
    return page.eval_on_selector_all(
        INTERACTIVE,
        "els => els.filter(e => !e.dataset.gt && e.getClientRects().length).map(e => e.outerHTML.slice(0, 120))")


def test_sign_in(site: DemoSite, page: Page) -> None:
    page.goto(site.url("/login"))
    expect(page).to_have_title("Sign in – LeaveDesk")
    page.get_by_label("User name").fill("alice")
    page.get_by_label("Password").fill(DEMO_PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(site.url("/requests"))
    expect(page.get_by_role("heading", name="Leave requests")).to_be_visible()
    expect(page.locator("#current-user")).to_have_text("Alice Martin")
    expect(page.get_by_text("Today: Mon, Mar 2, 2026")).to_be_visible()
    site.wait_for_activation("login.form", kind="submit")
    site.wait_for_activation("login.password", kind="input-commit")
    assert "login.submit" in page_ids(site, "click")
    assert "login.username" in page_ids(site, "input-commit")
    assert [a["outcome"] for a in site.activations() if a["kind"] == "login"] == ["ok"]
    assert site.writes() == []

    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url(site.url("/login"))
    page.goto(site.url("/requests"))
    assert page.url == site.url("/login?next=/requests")


def test_three_bad_passwords_lock_the_account(site: DemoSite, page: Page) -> None:
    page.goto(site.url("/login"))
    page.get_by_label("User name").fill("alice")
    alert = page.get_by_role("alert")
    for attempt, left in ((1, "2 attempts left"), (2, "1 attempt left")):
        page.get_by_label("Password").fill(f"wrong-{attempt}")
        page.get_by_role("button", name="Sign in").click()
        expect(alert).to_contain_text(f"Incorrect user name or password. {left} before the account is locked.")
    page.get_by_label("Password").fill("wrong-3")
    page.get_by_role("button", name="Sign in").click()
    expect(alert.locator("strong")).to_have_text("Account locked")
    expect(alert).to_contain_text("Too many failed sign-in attempts. Ask an administrator to unlock your account.")
    page.get_by_label("Password").fill(DEMO_PASSWORD)
    # the submit beacon can arrive before the server has handled the POST: wait for the POST's answer
    with page.expect_response(lambda r: r.request.method == "POST" and "/login" in r.url):
        page.get_by_label("Password").press("Enter")
    site.wait_for_activation("login.form", kind="submit", count=4)
    expect(alert).to_contain_text("Account locked")
    assert page.url.startswith(site.url("/login"))
    report = site.ground_truth_report(["login.*"])
    assert report["failed_logins"] == 4 and report["login_attempts"] == 4
    assert report["wrong_activations"] == 0 and report["writes"] == 0
    assert [a["outcome"] for a in site.activations() if a["kind"] == "login"] == [
        "bad_password", "bad_password", "locked", "locked"]


def test_file_a_leave_request_through_the_date_picker(site: DemoSite, page: Page, sign_in) -> None:
    sign_in(page)
    page.get_by_role("link", name="New request").click()
    page.wait_for_url(site.url("/requests/new"))
    expect(page.get_by_role("heading", name="New leave request")).to_be_visible()
    submit = page.get_by_role("button", name="Submit")
    expect(submit).to_be_disabled()

    page.get_by_label("Leave type").select_option(label="Annual leave")
    expect(submit).to_be_disabled()

    page.get_by_role("button", name="Choose start date").click()
    picker = page.get_by_role("dialog", name="Choose start date")
    expect(picker).to_be_visible()
    expect(picker.get_by_role("heading")).to_have_text("March 2026")  # opens on the server's month
    expect(picker.get_by_role("button", name="March 1, 2026")).to_be_disabled()  # before "today"
    expect(picker.get_by_role("button", name="March 2, 2026")).to_have_attribute("aria-current", "date")
    picker.get_by_role("button", name="Next month").click()
    expect(picker.get_by_role("heading")).to_have_text("April 2026")
    picker.get_by_role("button", name="Previous month").click()
    picker.get_by_role("button", name="March 9, 2026").click()
    expect(picker).to_be_hidden()
    expect(page.get_by_label("Start date", exact=True)).to_have_value("2026-03-09")
    expect(submit).to_be_disabled()

    page.get_by_role("button", name="Choose end date").click()
    end_picker = page.get_by_role("dialog", name="Choose end date")
    expect(end_picker.get_by_role("button", name="March 8, 2026")).to_be_disabled()  # before the start
    end_picker.get_by_role("button", name="March 13, 2026").click()
    expect(page.get_by_label("End date", exact=True)).to_have_value("2026-03-13")
    expect(page.get_by_text("Duration: 5 working days (Mar 9, 2026 – Mar 13, 2026)")).to_be_visible()
    expect(submit).to_be_disabled()  # the reason is still empty

    page.get_by_label("Reason").fill("Ski week")
    expect(submit).to_be_enabled()
    submit.dblclick()  # the second click lands on a disabled button: one write only
    expect(page.get_by_role("progressbar", name="Saving request")).to_be_visible()
    expect(submit).to_be_disabled()
    expect(page.locator("form")).to_have_attribute("aria-busy", "true")

    page.wait_for_url(site.url("/requests"))
    expect(page.get_by_role("status").filter(has_text="Request submitted")).to_be_visible()
    row = page.locator("tbody tr").filter(has_text="LR-0007")
    expect(row).to_contain_text("Mar 9, 2026")
    expect(row).to_contain_text("Annual leave")
    expect(row).to_contain_text("Pending")

    writes = site.writes()
    assert [(w["op"], w["ok"], w["duplicate"]) for w in writes] == [("create_request", True, False)]
    site.wait_for_activation("new.form", kind="submit")
    ids = page_ids(site)
    for gt in ("requests.new", "new.type", "new.start.open", "new.start.next", "new.start.prev",
               "new.start.day.2026-03-09", "new.end.open", "new.end.day.2026-03-13", "new.reason", "new.submit"):
        assert gt in ids, gt
    assert ("new.type", "change") in [(a["gt"], a["kind"]) for a in site.activations()]
    report = site.ground_truth_report(["login.*", "requests.new", "new.*"])
    assert report["wrong_activations"] == 0 and report["duplicate_writes"] == 0


def test_typed_dates_are_validated(site: DemoSite, page: Page, sign_in) -> None:
    sign_in(page)
    page.goto(site.url("/requests/new"))
    submit = page.get_by_role("button", name="Submit")
    page.get_by_label("Leave type").select_option("sick")
    page.get_by_label("Reason").fill("Dentist")
    page.get_by_label("Start date", exact=True).fill("2026-02-27")
    expect(page.get_by_text("The start date cannot be in the past.")).to_be_visible()
    expect(page.get_by_label("Start date", exact=True)).to_have_attribute("aria-invalid", "true")
    page.get_by_label("Start date", exact=True).fill("2026-03-10")
    page.get_by_label("End date", exact=True).fill("2026-03-09")
    expect(page.get_by_text("The end date must be on or after the start date.")).to_be_visible()
    expect(submit).to_be_disabled()
    page.get_by_label("End date", exact=True).fill("2026-03-1")
    page.get_by_label("End date", exact=True).blur()
    expect(page.get_by_text("Enter the date as YYYY-MM-DD.")).to_be_visible()
    page.get_by_label("End date", exact=True).fill("2026-03-10")
    expect(submit).to_be_enabled()
    page.get_by_label("End date", exact=True).press("Enter")  # Enter submits the form
    page.wait_for_url(site.url("/requests"))
    expect(page.locator("tbody tr").filter(has_text="LR-0007")).to_contain_text("Sick leave")
    assert [w["op"] for w in site.writes()] == ["create_request"]


def test_the_calendar_follows_the_server_clock(site: DemoSite, page: Page, sign_in) -> None:
    site.set_today(date(2026, 2, 20))
    sign_in(page)
    page.goto(site.url("/requests/new"))
    expect(page.get_by_text("Today: Fri, Feb 20, 2026")).to_be_visible()
    page.get_by_role("button", name="Choose start date").click()
    picker = page.get_by_role("dialog", name="Choose start date")
    expect(picker.get_by_role("heading")).to_have_text("February 2026")
    expect(picker.get_by_role("button", name="February 19, 2026")).to_be_disabled()
    expect(picker.get_by_role("button", name="February 20, 2026")).to_be_enabled()
    page.keyboard.press("Escape")
    expect(picker).to_be_hidden()


def test_sort_the_table(site: DemoSite, page: Page, sign_in) -> None:
    sign_in(page)
    refs = page.locator("tbody tr td:first-child")
    header = page.get_by_role("columnheader", name="Employee")
    expect(page.get_by_role("columnheader", name="Start")).to_have_attribute("aria-sort", "ascending")
    expect(refs).to_have_text(["LR-0002", "LR-0004", "LR-0001", "LR-0003", "LR-0005", "LR-0006"])
    page.get_by_role("button", name="Employee").click()
    expect(header).to_have_attribute("aria-sort", "ascending")
    expect(page.get_by_role("columnheader", name="Start")).not_to_have_attribute("aria-sort", re.compile(".*"))
    expect(refs).to_have_text(["LR-0001", "LR-0004", "LR-0006", "LR-0002", "LR-0003", "LR-0005"])
    page.get_by_role("button", name="Employee").click()
    expect(header).to_have_attribute("aria-sort", "descending")
    expect(refs).to_have_text(["LR-0002", "LR-0003", "LR-0005", "LR-0001", "LR-0004", "LR-0006"])
    page.get_by_role("button", name="Days").click()
    expect(page.get_by_text("Sorted by Days, ascending")).to_be_visible()
    expect(refs.first).to_have_text("LR-0004")
    site.wait_for_activation("requests.sort.employee", kind="click", count=2)
    site.wait_for_activation("requests.sort.days", kind="click")
    assert site.writes() == []


def test_export_a_report_through_the_dialog(site: DemoSite, page: Page, sign_in) -> None:
    sign_in(page)
    export = page.get_by_role("button", name="Export report")
    save = page.get_by_role("button", name="Save report")
    ebox, sbox = export.bounding_box(), save.bounding_box()
    assert abs(ebox["y"] - sbox["y"]) < 1 and 0 <= sbox["x"] - (ebox["x"] + ebox["width"]) <= 12  # adjacent
    export.click()
    dialog = page.get_by_role("dialog", name="Export report")
    expect(dialog).to_be_visible()
    expect(dialog).to_have_attribute("aria-modal", "true")
    expect(dialog).to_contain_text("Export 6 leave requests as a CSV file?")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    export.click()
    with page.expect_download() as download:
        dialog.get_by_role("button", name="Confirm").click()
    assert download.value.suggested_filename == "leave-report-2026-03-02.csv"
    expect(page.get_by_role("status").filter(has_text="Report exported")).to_have_text("Report exported (6 requests).")
    expect(dialog).to_be_hidden()
    site.wait_for_activation("dialog.export.confirm")
    report = site.ground_truth_report(["login.*", "requests.export", "dialog.export.*"])
    assert report["exports"] == 1 and report["writes"] == 0
    assert report["wrong_activations"] == 0 and report["missing"] == []


def test_save_report_instead_of_export_is_a_wrong_click_and_a_write(site: DemoSite, page: Page, sign_in) -> None:
    sign_in(page)
    page.get_by_role("button", name="Save report").click()
    expect(page.get_by_role("status").filter(has_text="Report saved")).to_have_text("Report saved as RPT-0001 (6 requests).")
    site.wait_for_activation("requests.save")
    report = site.ground_truth_report(["login.*", "requests.export", "dialog.export.*"])
    assert report["wrong"] == ["requests.save"]
    assert report["writes_by_op"] == {"save_report": 1} and report["exports"] == 0


def test_row_actions_and_the_delete_confirmation(site: DemoSite, page: Page, sign_in) -> None:
    sign_in(page)
    row = page.locator("tbody tr").filter(has_text="LR-0003")
    row.get_by_role("button", name="Approve").click()
    expect(row).to_contain_text("Approved")
    expect(row.get_by_role("button", name="Approve")).to_be_disabled()
    expect(page.get_by_role("status").filter(has_text="approved")).to_have_text("Request LR-0003 approved.")

    row.get_by_role("button", name="Delete").click()
    dialog = page.get_by_role("dialog", name="Delete request?")
    expect(dialog).to_have_attribute("aria-modal", "true")
    expect(dialog).to_contain_text("LR-0003 (Bob Chen, Annual leave, Apr 6, 2026 – Apr 10, 2026) will be deleted.")
    expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    row.get_by_role("button", name="Delete").click()
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    row.get_by_role("button", name="Delete").click()
    dialog.get_by_role("button", name="Delete").click()
    expect(row).to_have_count(0)
    expect(page.get_by_text("Request LR-0003 deleted.")).to_be_visible()
    assert [(w["op"], w["target"]) for w in site.writes()] == [("approve_request", 3), ("delete_request", 3)]
    site.wait_for_activation("dialog.delete.confirm")
    assert page_ids(site).count("row.3.delete") == 3
    assert page_ids(site).count("dialog.delete.cancel") == 1


@pytest.mark.parametrize("variant", ["baseline", "tweaked"])
def test_every_control_carries_a_ground_truth_id(site: DemoSite, page: Page, sign_in, variant: str) -> None:
    site.set_variant(variant)
    page.goto(site.url("/login"))
    assert missing_gt(page) == []
    sign_in(page)
    assert missing_gt(page) == []
    page.get_by_role("button", name="Export report").click()
    assert missing_gt(page) == []
    page.keyboard.press("Escape")
    page.locator("tbody tr").first.get_by_role("button", name="Delete").click()
    if variant == "tweaked":
        page.get_by_role("dialog", name="Delete request?").get_by_role("button", name="Delete").click()
        expect(page.get_by_role("dialog", name="Confirm deletion")).to_be_visible()
    assert missing_gt(page) == []
    page.goto(site.url("/requests/new"))
    assert missing_gt(page) == []
    page.get_by_role("button", name="Choose start date").click()
    if variant == "tweaked":
        page.get_by_role("combobox", name="Leave type").click()
    assert missing_gt(page) == []
    gts = page.eval_on_selector_all("[data-gt]", "els => els.map(e => e.dataset.gt)")
    assert len(gts) == len(set(gts))
