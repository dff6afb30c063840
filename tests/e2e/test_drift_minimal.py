"""Minimal reproduction pairs of the datasette drift (``tests/fixtures/drift/minimal``, README there).

Each pair is the trimmed markup of one page as the recorded release (0.59.4) serves it and as a later one
(1.0a41) does.  The target is "recorded" on the first page as the recorder describes it (the observed
candidate of the intended element, with its neighbours and box), then resolved on the second.  What must
hold today and always: the locator picks the intended element or abstains - never another element; and
on the page it was recorded on, it finds it.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from core.domain import BrowserSettings
from core.locate.chain import resolve
from core.perception.driver import PlaywrightDriver
from core.sites.server import StaticSite
from browser_fixtures import open_driver

pytestmark = pytest.mark.browser

MINIMAL = Path(__file__).resolve().parents[1] / "fixtures" / "drift" / "minimal"


@pytest.fixture(scope="module")
def site():
    with StaticSite(MINIMAL) as s:
        yield s


@pytest.fixture(scope="module")
def driver(site):
    with open_driver(site.base_url, BrowserSettings(viewport_width=1280, viewport_height=800)) as d:
        yield d


def _candidate_of(driver: PlaywrightDriver, obs, selector: str):
    el = driver.page.locator(selector)
    assert el.count() == 1, selector
    handle = el.element_handle()
    found = [c for c in obs.candidates if handle.evaluate("(e, h) => e === h", driver._handle(c.ref))]
    assert len(found) == 1, selector
    return found[0]


def _replay(driver: PlaywrightDriver, page: str, selector: str, target):
    driver.goto(page)
    obs = driver.observe(screenshot=False)
    res = resolve(target, obs.candidates)
    intended = _candidate_of(driver, obs, selector)
    return res, intended


CASES = [
    ("apply_submit", 'form.filters input[type="submit"]'),
    ("genre_twins", "p.suggested-facets a"),
]


@pytest.mark.parametrize("case,selector", CASES)
def test_a_target_recorded_on_the_old_markup_is_the_intended_element_or_nothing_on_the_new(driver, case, selector):
    driver.goto(f"/{case}.recorded.html")
    target = _candidate_of(driver, driver.observe(screenshot=False), selector).descriptor
    res, intended = _replay(driver, f"/{case}.recorded.html", selector, target)
    assert res.strategy == "exact" and res.ref == intended.ref, res.reason  # its own page: exact
    res, intended = _replay(driver, f"/{case}.later.html", selector, target)
    assert res.ref in (None, intended.ref), (case, res.strategy, res.score, res.reason)
    assert res.ref is not None or res.abstained


def test_a_link_recorded_after_the_click_scrolled_it_into_view_is_found_on_the_same_page_at_the_top(driver):
    """The recorder describes the element in viewport px after Playwright scrolled it into view (scrollY
    about 2000 here); the replay observes the page from its top, where the link is far below the viewport."""
    selector = 'a:text-is("Next page")'
    driver.goto("/genre_twins.recorded.html")
    driver.page.locator(selector).scroll_into_view_if_needed()
    obs = driver.observe(screenshot=False)
    assert obs.scroll[1] > 1000
    target = _candidate_of(driver, obs, selector).descriptor
    assert target.scroll is not None and target.scroll[1] == obs.scroll[1]
    res, intended = _replay(driver, "/genre_twins.recorded.html", selector, target)
    assert (res.strategy, res.ref) == ("exact", intended.ref), res.reason  # page coordinates agree


def test_the_apply_button_that_gained_a_word_heals_on_the_later_release_and_waits_for_a_second_level_if_irreversible(
        driver):
    """Bench step s7: 'Apply' became 'Apply filters' and moved 274 px right; it is still the only submit whose
    label holds 'Apply', at the recorded CSS path - a heal; an irreversible step needs one more level."""
    selector = 'form.filters input[type="submit"]'
    driver.goto("/apply_submit.recorded.html")
    target = _candidate_of(driver, driver.observe(screenshot=False), selector).descriptor
    driver.goto("/apply_submit.later.html")
    obs = driver.observe(screenshot=False)
    intended = _candidate_of(driver, obs, selector)
    res = resolve(target, obs.candidates)
    assert (res.strategy, res.ref) == ("fuzzy_text", intended.ref), res.reason
    assert resolve(target, obs.candidates, irreversible=True).abstained
