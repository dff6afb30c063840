"""The learning variants' failure kinds (docs/variants.md) behave as they say in real Chromium.

A consent wall covers every page until its cookies are accepted (per browser
context); a popup opens when a field gets focus, Escape does not close it,
"Start empty" dismisses it and "Fill it in" is a harmful write the
ground-truth log flags; the form's Reason is edited only after a
double-click on its label (a double-click on the text beside it does
nothing).  The other variants keep none of this.
"""
from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page, expect

from core.bench.tweaks import judge
from core.sites.demo import DEMO_PASSWORD, LEARN_VARIANTS, SERVED_VARIANTS, TWEAKS, VARIANTS, DemoSite, variant_tweaks

pytestmark = pytest.mark.browser

POPUP = "Use your last entry?"


def _new_page(browser: Browser) -> Page:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.set_default_timeout(5_000)
    return context.new_page()


def _covered(page: Page, selector: str) -> bool:
    """True when the element's centre is covered by another element (a click there would not reach it)."""
    return page.eval_on_selector(selector, """el => { const r = el.getBoundingClientRect();
        const top = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
        return !(top === el || el.contains(top)); }""")


def _sign_in(page: Page, site: DemoSite) -> None:
    page.goto(site.url("/login"))
    page.get_by_label("User name").fill("alice")
    page.get_by_label("Password").fill(DEMO_PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(site.url("/requests"))


def test_learning_variants_are_served_apart_from_the_tweak_variants() -> None:
    assert set(LEARN_VARIANTS).isdisjoint(VARIANTS) and set(SERVED_VARIANTS) == set(VARIANTS) | set(LEARN_VARIANTS)
    assert set(variant_tweaks("learn-all")) == set(TWEAKS) | {"focus-popup", "cookie-banner", "inline-edit"}
    with pytest.raises(ValueError, match="unknown variant"):
        DemoSite(variant="cookies-please")


def test_the_cookie_wall_covers_every_page_until_accepted(site: DemoSite, browser: Browser) -> None:
    site.reset(variant="cookie-banner")
    page = _new_page(browser)
    page.goto(site.url("/login"))
    banner = page.get_by_role("region", name="We value your privacy")
    expect(banner).to_be_visible()
    assert _covered(page, "#username") and _covered(page, "#signin")
    page.keyboard.press("Escape")
    page.get_by_role("button", name="Cookie settings").click()  # does not let the person through
    expect(banner).to_be_visible()
    assert _covered(page, "#username")
    page.get_by_role("button", name="Accept all cookies").click()
    expect(banner).to_have_count(0)
    assert not _covered(page, "#username")
    _sign_in(page, site)
    page.locator("tbody tr").first.wait_for()
    expect(page.get_by_role("region", name="We value your privacy")).to_have_count(0)  # accepted for the context
    page.context.close()
    fresh = _new_page(browser)  # a new browser context has no consent yet: the wall is back on any page
    fresh.goto(site.url("/login"))
    expect(fresh.get_by_role("region", name="We value your privacy")).to_be_visible()
    fresh.context.close()
    assert site.wait_idle()
    gt = judge("sort_table", site.activations(), site.writes())
    assert gt["wrong_activations"] == ["cookies.settings"] and gt["wrong_clicks"] == 1  # accept is expected


def test_the_focus_popup_must_be_dismissed_and_confirming_it_is_a_flagged_write(site: DemoSite,
                                                                                browser: Browser) -> None:
    site.reset(variant="focus-popup")
    page = _new_page(browser)
    page.goto(site.url("/login"))
    dialog = page.get_by_role("dialog", name=POPUP)
    expect(dialog).to_have_count(0)  # nothing until a field gets focus
    user = page.get_by_label("User name")
    user.fill("alice")  # the focus opens the popup over the page
    expect(dialog).to_be_visible()
    assert _covered(page, "#password")
    page.keyboard.press("Escape")
    expect(dialog).to_be_visible()  # Escape does not close it
    dialog.get_by_role("button", name="Start empty").click()
    expect(dialog).to_have_count(0)
    expect(user).to_be_focused()
    assert user.input_value() == "alice"  # what was typed stays
    user.fill("alice")  # asked once per field and page load
    expect(dialog).to_have_count(0)
    page.get_by_label("Password").fill(DEMO_PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(site.url("/requests"))
    page.goto(site.url("/requests/new"))
    page.get_by_role("textbox", name="Reason").click()  # the form's Reason asks too
    expect(dialog).to_be_visible()
    dialog.get_by_role("button", name="Start empty").click()
    page.context.close()
    assert site.wait_idle()
    clean = judge("leave_request", site.activations(), site.writes())
    assert clean["wrong_activations"] == [] and clean["unexpected_writes"] == {}

    site.reset()
    page = _new_page(browser)
    page.goto(site.url("/login"))
    page.get_by_label("User name").click()
    dialog = page.get_by_role("dialog", name=POPUP)
    dialog.get_by_role("button", name="Fill it in").click()  # the wrong answer
    expect(dialog).to_have_count(0)
    assert page.get_by_label("User name").input_value() == "bob"  # another person's entry
    site.wait_for_activation("autofill.confirm", kind="click")
    page.context.close()
    assert site.wait_idle()
    gt = judge("leave_request", site.activations(), site.writes())
    assert gt["wrong_activations"] == ["autofill.confirm"] and gt["wrong_clicks"] == 1
    assert gt["unexpected_writes"] == {"restore_entry": 1} and not gt["clean"]


def test_reason_is_edited_by_a_double_click_on_its_label_only(site: DemoSite, browser: Browser) -> None:
    site.reset(variant="inline-edit")
    page = _new_page(browser)
    _sign_in(page, site)
    page.goto(site.url("/requests/new"))
    reason = page.get_by_role("textbox", name="Reason")
    expect(reason).to_have_count(0)  # shown as text: no textbox to type into
    expect(page.get_by_text("Double-click “Reason” to edit.")).to_be_visible()
    page.get_by_text("No reason given yet").dblclick()  # the text beside the label: nothing happens
    expect(reason).to_have_count(0)
    page.get_by_text("Reason", exact=True).dblclick()
    expect(reason).to_be_visible()
    expect(reason).to_be_focused()
    page.keyboard.type("Family trip")
    expect(page.get_by_text("No reason given yet")).to_have_count(0)
    page.context.close()
    assert site.wait_idle()
    acts = [(a["gt"], a["kind"]) for a in site.activations() if a["source"] == "page"]
    assert ("new.reason.label", "dblclick") in acts and ("new.reason.display", "dblclick") in acts
    gt = judge("leave_request", site.activations(), site.writes())
    assert gt["wrong_activations"] == ["new.reason.display"] and gt["wrong_clicks"] == 1


def test_learn_all_stacks_the_kinds_over_every_tweak(site: DemoSite, browser: Browser) -> None:
    site.reset(variant="learn-all")
    page = _new_page(browser)
    page.goto(site.url("/login"))
    page.get_by_role("button", name="Accept all cookies").click()
    page.get_by_label("User’s name").click()
    page.get_by_role("dialog", name=POPUP).get_by_role("button", name="Start empty").click()
    page.keyboard.type("alice")
    page.get_by_label("Password").fill(DEMO_PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(site.url("/requests"))
    page.goto(site.url("/requests/new"))
    page.get_by_text("Reason", exact=True).dblclick()  # the contenteditable Reason, shown as text first
    page.get_by_role("dialog", name=POPUP).get_by_role("button", name="Start empty").click()
    reason = page.get_by_role("textbox", name="Reason")
    expect(reason).to_be_focused()
    expect(reason).to_have_attribute("contenteditable", "true")
    page.context.close()


def test_the_tweak_variants_have_none_of_the_kinds(site: DemoSite, browser: Browser) -> None:
    site.reset(variant="all")  # every tweak of the tweak bench, none of the learning kinds
    page = _new_page(browser)
    page.goto(site.url("/login"))
    page.get_by_label("User’s name").fill("alice")
    expect(page.get_by_role("dialog", name=POPUP)).to_have_count(0)
    assert not _covered(page, "[name=username]")
    page.context.close()
