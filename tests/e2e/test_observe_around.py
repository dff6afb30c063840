"""The page functions read around an observation (the change tracker's tokens) ride on the observation's own
round trips: the same answers as reading them apart, two page evaluations fewer, the after-read in the same
task as the elements' read, and a page whose function throws gives None, never a failed observation."""
from __future__ import annotations

from core.engine.screen import FACTS_JS, TOKEN_JS
from tests.e2e.browser_fixtures import driver_on

PAGE = """<!doctype html><title>t</title><h1>Leave</h1>
<label>Name <input id="n"></label><button onclick="document.body.append('x')">Go</button>"""


def test_around_reads_match_separate_reads_and_cost_no_round_trip(tmp_path) -> None:
    (tmp_path / "index.html").write_text(PAGE)
    with driver_on(tmp_path) as d:
        d.goto("/index.html")
        apart_before = d.evaluate(TOKEN_JS)
        d.observe(screenshot=False, ax=False)
        apart_after = d.evaluate(FACTS_JS)
        obs = d.observe(screenshot=False, ax=False, around=(TOKEN_JS, FACTS_JS))
        before, facts = d.around
        assert before == apart_before  # nothing happened on the page: the same token
        assert facts["token"] == apart_after["token"]
        assert facts == apart_after
        assert any(c.descriptor.role == "button" for c in obs.candidates)

        import core.perception.driver as drv

        calls = []
        real = drv.PlaywrightDriver._bounded

        def counted(self, target, method, *a, **k):
            if method == "evaluate":
                calls.append(method)
            return real(self, target, method, *a, **k)

        drv.PlaywrightDriver._bounded = counted
        try:
            d.observe(screenshot=False, ax=False)
            plain = len(calls)
            calls.clear()
            d.observe(screenshot=False, ax=False, around=(TOKEN_JS, FACTS_JS))
            folded = len(calls)
        finally:
            drv.PlaywrightDriver._bounded = real
        assert folded == plain  # the two reads added no evaluation of their own


def test_with_a_screenshot_the_after_read_comes_after_it_and_a_throwing_function_gives_none(tmp_path) -> None:
    (tmp_path / "index.html").write_text(PAGE)
    with driver_on(tmp_path) as d:
        d.goto("/index.html")
        obs = d.observe(screenshot=True, ax=False, around=("() => { throw new Error('no'); }", FACTS_JS))
        assert obs.screenshot_png
        before, facts = d.around
        assert before is None
        assert isinstance(facts, dict) and facts["token"][0].endswith("/index.html")
        d.observe(screenshot=False, ax=False)
        assert d.around == (None, None)  # not asked: nothing left from the last call
