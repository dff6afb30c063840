"""Every UI-tweak variant of the demo (docs/variants.md) serves, changes the DOM it says it changes,
and stays usable by a person: a person-like script (it reads labels as shown, closes what pops up)
completes each demo flow on it, and the ground-truth log stays truthful (same ids, no wrong or
double activation)."""
from __future__ import annotations

import math
import re

import pytest
from playwright.sync_api import Page, expect

from core.sites.demo import DEMO_PASSWORD, TWEAKS, VARIANT_TWEAKS, VARIANTS, DemoSite

pytestmark = pytest.mark.browser

POPUP = "What’s new in LeaveDesk"


class Person:
    """Does the demo flows the way a person would on any variant: by what the screen says."""

    def __init__(self, site: DemoSite, page: Page) -> None:
        self.site, self.page = site, page
        self.popup_seen = False
        self.dismiss_by_escape = False

    def close_popup_if_any(self) -> None:
        """The popup opens as the requests page starts: a person sees it and closes it first."""
        if "popup" not in self.site.tweaks or self.popup_seen:
            return
        dialog = self.page.get_by_role("dialog", name=POPUP)
        dialog.wait_for(state="visible", timeout=5_000)
        if self.dismiss_by_escape:
            self.page.keyboard.press("Escape")
        else:
            dialog.get_by_role("button", name="Close").click()
        expect(dialog).to_have_count(0)
        self.popup_seen = True

    def sign_in(self, user: str = "alice", password: str = DEMO_PASSWORD) -> None:
        p = self.page
        p.goto(self.site.url("/login"))
        p.get_by_label(re.compile(r"^User(’s)? name$")).fill(user)
        p.get_by_label("Password").fill(password)
        p.get_by_role("button", name="Sign in").click()

    def requests_page(self) -> None:
        self.page.wait_for_url(self.site.url("/requests"))
        self.page.locator("tbody tr").first.wait_for()
        self.close_popup_if_any()

    def leave_request(self) -> None:
        p = self.page
        self.sign_in()
        self.requests_page()
        p.get_by_role("link", name=re.compile(r"^New request")).click()
        p.wait_for_url(self.site.url("/requests/new"))
        if p.locator("select").count():
            p.get_by_label("Leave type").select_option(label="Annual leave")
        else:
            p.get_by_role("combobox", name="Leave type").click()
            p.get_by_role("option", name="Annual leave").click()
        p.get_by_role("button", name="Choose start date").click()
        p.get_by_role("button", name="March 9, 2026").click()
        p.get_by_role("button", name="Choose end date").click()
        p.get_by_role("button", name="March 13, 2026").click()
        reason = p.get_by_role("textbox", name="Reason")
        reason.click()
        p.keyboard.type("Family trip")
        p.keyboard.press("Tab")
        submit = p.get_by_role("button", name="Submit")
        expect(submit).to_be_enabled()
        submit.click()
        expect(p.get_by_text("Request submitted")).to_be_visible()
        expect(p.locator("tbody tr").filter(has_text="LR-0007")).to_contain_text("Annual leave")

    def export_report(self) -> None:
        p = self.page
        self.sign_in()
        self.requests_page()
        p.get_by_role("button", name=re.compile(r"^Export report")).click()
        outer = p.get_by_role("dialog", name="Export report")
        outer.get_by_role("button", name="Confirm").click()
        expect(p.get_by_text("Report exported (6 requests).")).to_be_visible()

    def sort_table(self) -> None:
        p = self.page
        self.sign_in()
        self.requests_page()
        header = p.get_by_role("columnheader", name=re.compile("Employee", re.I)).get_by_role("button")
        header.click()
        expect(p.get_by_text("Sorted by Employee, ascending")).to_be_visible()
        header.click()
        expect(p.get_by_text("Sorted by Employee, descending")).to_be_visible()

    def login_lockout(self) -> None:
        p = self.page
        self.sign_in("bob", "not-" + "my-password")
        expect(p.get_by_text("Incorrect user name or password")).to_be_visible()
        for expected in ("1 attempt left", "Account locked"):
            p.get_by_label("Password").fill("not-" + "my-password")
            p.get_by_role("button", name="Sign in").click()
            expect(p.get_by_text(expected)).to_be_visible()


#: What each flow may activate (data-gt patterns); dismissing the popup by its close button is allowed.
EXPECTED = {
    "leave_request": ["login.*", "requests.new", "new.type", "new.type.option.*", "new.start*", "new.end*",
                      "new.reason", "new.form", "new.submit", "popup.close"],
    "export_report": ["login.*", "requests.export", "dialog.export.confirm", "popup.close"],
    "sort_table": ["login.*", "requests.sort.employee", "popup.close"],
    "login_lockout": ["login.*"],
}


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_person_completes_every_flow_and_the_log_stays_truthful(site: DemoSite, browser, variant: str) -> None:
    site.reset(variant=variant)
    for flow in EXPECTED:
        site.reset()
        context = browser.new_context(viewport={"width": 1280, "height": 800}, accept_downloads=True)
        context.set_default_timeout(10_000)
        person = Person(site, context.new_page())
        person.dismiss_by_escape = flow == "sort_table"  # Escape dismisses the popup too
        getattr(person, flow)()
        if flow == "leave_request":
            site.wait_for_activation("new.submit", kind="click")
        if flow == "export_report":
            site.wait_for_activation("dialog.export.confirm", kind="click")
        if flow == "sort_table":  # the page posts its activations: a late one would land in the next flow's log
            site.wait_for_activation("requests.sort.employee", kind="click")
        context.close()
        assert site.wait_idle()  # the page's last beacons are logged before the log is read and reset
        gt = site.ground_truth_report(EXPECTED[flow])
        assert gt["wrong"] == [], (variant, flow, gt["wrong"])
        assert gt["duplicate_writes"] == 0, (variant, flow, gt["duplicates"])
        assert gt["writes_by_op"] == ({"create_request": 1} if flow == "leave_request" else {}), (variant, flow)
        if flow == "login_lockout":
            assert gt["failed_logins"] == 3
        if flow == "export_report":
            assert gt["exports"] == 1
        if "popup" in site.tweaks and flow != "login_lockout":
            popup = gt["activations_by_gt"].get("popup.close", 0)
            assert popup == (0 if flow == "sort_table" else 1), (flow, gt["activations_by_gt"])


def test_every_tweak_is_in_a_variant_and_all_combines_them() -> None:
    used = {t for v, ts in VARIANT_TWEAKS.items() if v not in ("all", "tweaked") for t in ts}
    assert used == set(TWEAKS) == set(VARIANT_TWEAKS["all"])
    assert VARIANT_TWEAKS["baseline"] == ()


def _centre(page: Page, role: str, name: str | re.Pattern) -> tuple[float, float]:
    box = page.get_by_role(role, name=name).bounding_box()
    assert box is not None
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def test_moved_shifts_sign_in_by_20_px(site: DemoSite, page: Page) -> None:
    page.goto(site.url("/login"))
    before = _centre(page, "button", "Sign in")
    site.set_variant("moved")
    page.reload()
    after = _centre(page, "button", "Sign in")
    assert after[0] - before[0] == pytest.approx(20, abs=0.5) and after[1] == pytest.approx(before[1], abs=0.5)
    expect(page.locator("#signin")).to_have_count(1)  # nothing else changed


def test_relayout_swaps_neighbours(site: DemoSite, page: Page, sign_in) -> None:
    site.set_variant("relayout")
    sign_in(page)
    names = page.locator(".toolbar .btn").all_inner_texts()
    assert names == ["New request", "Save report", "Export report"]
    export = _centre(page, "button", "Export report")
    save = _centre(page, "button", "Save report")
    assert export[0] > save[0] and export[1] > 150  # the toolbar moved under the heading, Save now left of Export
    page.goto(site.url("/requests/new"))
    order = page.locator("form .field > label, form .field.check > label").all_inner_texts()
    assert order.index("Notify my manager by email") < order.index("Reason")
    assert page.locator(".form-actions > .btn").all_inner_texts() == ["Cancel", "Submit"]


def test_suffix_and_typographic_apostrophe(site: DemoSite, page: Page, sign_in) -> None:
    site.set_variant("suffix")
    page.goto(site.url("/login"))
    expect(page.locator("label[for=username]")).to_have_text("User’s name")
    sign_in_label = page.get_by_label("User’s name")
    expect(sign_in_label).to_have_attribute("id", "username")
    sign_in_label.fill("alice")
    page.get_by_label("Password").fill(DEMO_PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.locator("tbody tr").first.wait_for()
    expect(page.get_by_role("button", name="Export report (E)", exact=True)).to_be_visible()
    expect(page.get_by_role("link", name="New request (N)", exact=True)).to_be_visible()
    expect(page.get_by_role("button", name="Export report", exact=True)).to_have_count(0)


def test_custom_input_replaces_select_and_textarea(site: DemoSite, page: Page, sign_in) -> None:
    site.set_variant("custom-input")
    sign_in(page)
    page.goto(site.url("/requests/new"))
    expect(page.locator("select, textarea")).to_have_count(0)
    reason = page.get_by_role("textbox", name="Reason")
    expect(reason).to_have_attribute("contenteditable", "true")
    expect(reason).to_have_attribute("aria-multiline", "true")
    page.get_by_text("Reason", exact=True).click()  # the label focuses the widget
    expect(reason).to_be_focused()
    page.keyboard.type("Dentist")
    page.keyboard.press("Tab")
    assert page.locator("input[type=hidden][name=reason]").input_value() == "Dentist"
    site.wait_for_activation("new.reason", kind="input-commit")
    reason.fill("Dentist, again")
    assert page.locator("input[type=hidden][name=reason]").input_value() == "Dentist, again"


def test_nested_dialog_puts_the_export_buttons_in_an_inner_dialog(site: DemoSite, page: Page, sign_in) -> None:
    site.set_variant("nested-dialog")
    sign_in(page)
    page.get_by_role("button", name="Export report").click()
    outer = page.get_by_role("dialog", name="Export report")
    inner = outer.get_by_role("dialog", name="Export options")
    expect(inner).to_be_visible()
    expect(inner.get_by_role("button")).to_have_text(["Cancel", "Confirm"])
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog")).to_have_count(0)
    page.locator("tbody tr").first.get_by_role("button", name="Delete").click()
    page.get_by_role("dialog", name="Delete request?").get_by_role("button", name="Delete").click()
    expect(page.get_by_role("dialog", name="Confirm deletion")).to_be_visible()
    assert site.writes() == []


def test_columns_reordered(site: DemoSite, page: Page, sign_in) -> None:
    site.set_variant("columns")
    sign_in(page)
    expect(page.locator("thead th")).to_have_text(["Ref", "Status", "Start", "End", "Days", "Employee", "Type", "Actions"])
    expect(page.locator("#requests-table")).to_have_count(1)  # ids unchanged


def test_noise_changes_text_and_shows_a_spinner(site: DemoSite, page: Page, sign_in) -> None:
    site.set_variant("noise")
    sign_in(page)
    status = page.locator("#sync-status .noise-text")
    first = status.inner_text()
    assert re.fullmatch(r"Synced \d\d:\d\d:\d\d\.\d{3} · trace [0-9a-f-]{36}", first), first
    expect(status).not_to_have_text(first)
    spinner = page.locator("#sync-status .spinner")
    expect(spinner).to_have_attribute("role", "progressbar")
    expect(spinner).to_have_attribute("aria-label", "Syncing")
    # shown 300 ms every 1.5 s: watch every animation frame (Playwright's own polling can keep missing it)
    page.wait_for_function("() => { const s = document.querySelector('#sync-status .spinner');"
                           " return !!s && !s.hidden && s.getClientRects().length > 0; }", polling="raf", timeout=4_000)
    expect(page.locator("#summary")).to_contain_text(re.compile(r"refreshed \d\d:\d\d:\d\d"))


def test_popup_is_dismissed_by_escape_or_close_and_comes_once(site: DemoSite, page: Page, sign_in) -> None:
    site.set_variant("popup")
    sign_in(page)
    dialog = page.get_by_role("dialog", name=POPUP)
    expect(dialog).to_be_visible()
    expect(dialog.get_by_role("button", name="Close")).to_be_focused()
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    page.reload()
    page.locator("tbody tr").first.wait_for()
    page.wait_for_timeout(1000)
    expect(dialog).to_have_count(0)  # once per tab session
    assert "popup.tour" not in [a["gt"] for a in site.activations()]


def test_all_combines_the_tweaks(site: DemoSite, page: Page) -> None:
    site.set_variant("all")
    page.goto(site.url("/login"))
    expect(page.locator("#login-user")).to_have_count(1)
    expect(page.get_by_label("User’s name")).to_be_visible()
    expect(page.locator("#sync-status")).to_be_visible()
    assert math.isfinite(_centre(page, "button", "Sign in")[0])


def test_every_control_of_the_all_variant_carries_a_unique_ground_truth_id(site: DemoSite, page: Page) -> None:
    interactive = ('a[href], button, input:not([type=hidden]), select, textarea, [role=button], [role=option], '
                   '[role=combobox], [role=textbox], [contenteditable=true]')

    def missing() -> list[str]:
        return page.eval_on_selector_all(
            interactive,
            "els => els.filter(e => !e.dataset.gt && e.getClientRects().length).map(e => e.outerHTML.slice(0, 120))")

    site.set_variant("all")
    page.goto(site.url("/login"))
    assert missing() == []
    page.get_by_label("User’s name").fill("alice")
    page.get_by_label("Password").fill(DEMO_PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("dialog", name=POPUP).wait_for()
    assert missing() == []
    page.get_by_role("button", name="Close").click()
    page.get_by_role("button", name="Export report (E)").click()
    assert missing() == []
    page.keyboard.press("Escape")
    page.goto(site.url("/requests/new"))
    page.get_by_role("combobox", name="Leave type").click()
    assert missing() == []
    gts = page.eval_on_selector_all("[data-gt]", "els => els.map(e => e.dataset.gt)")
    assert len(gts) == len(set(gts)) and "new.reason" in gts
