"""The fast settle wait after an action that changed nothing (a fill) ends before its idle bound only when no
reaction the action set off is pending (``page_lib.js`` reactionsSince, ``PlaywrightDriver.wait_settled``'s
``react_from``), in Chromium.

* a page that does nothing after the fill: the wait ends early (``early`` in its answer);
* a poller (``setInterval``, and a timeout its callback schedules - the demo's spinner does that): no reaction,
  the wait still ends early;
* a validator's timeout (100 ms), or a chain of them (0 ms, then 150 ms): waited for, so the verification
  sees the field cleared - on the run path too (`steadyhand run`'s session: the fill is never passed);
* a reaction in the page's next animation frame: the early end comes after that frame, so it is seen too,
  and long before the quiet time (40 ms) on a page that reacts to nothing.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from core.domain import BrowserSettings
from core.engine.session import ProjectSession
from core.perception.driver import PlaywrightDriver
from core.project import load_project
from core.sites.server import LoopbackServer, Response

pytestmark = pytest.mark.browser

#: ``{script}``: the page's own script.
PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Fill</title></head><body><main>
<h1>Fill page</h1><label for="city">City</label> <input id="city" type="text">
<button type="button" id="save" onclick="document.getElementById('out').textContent = 'Saved'">Save</button>
<p id="out"></p></main><script>{script}</script></body></html>"""

SCRIPTS = {
    "none": "",
    "poller": "setInterval(() => { window.ticks = (window.ticks || 0) + 1; setTimeout(() => {}, 300); }, 50);",
    "validator": "const c = document.getElementById('city');"
                 "c.addEventListener('input', () => setTimeout(() => { c.value = ''; }, 100));",
    "chain": "const c = document.getElementById('city');"
             "c.addEventListener('input', () => setTimeout(() => setTimeout(() => { c.value = ''; }, 150), 0));",
    # a widget that normalises what was typed in its next animation frame (no timer, no DOM mutation)
    "frame": "const c = document.getElementById('city');"
             "c.addEventListener('input', () => requestAnimationFrame(() => { c.value = ''; }));",
}


@pytest.fixture(scope="module")
def server():
    s = LoopbackServer()
    for name, script in SCRIPTS.items():
        html = PAGE.format(script=script)
        s.route("GET", f"/{name}", lambda req, html=html: Response.text(html, 200, "text/html; charset=utf-8"))
    with s:
        yield s


@pytest.fixture
def driver(server):
    d = PlaywrightDriver(BrowserSettings(), base_url=server.base_url, headless=True)
    d.open()
    try:
        yield d
    finally:
        d.close()


def _fill_and_wait(driver: PlaywrightDriver, page: str) -> tuple[dict, str]:
    driver.goto(f"/{page}")
    driver.page.wait_for_timeout(200)  # the poller's timers run meanwhile
    start = driver.probe()
    assert isinstance(start["timerSeq"], int)
    driver.page.fill("#city", "Paris")
    got = driver.wait_settled(start=start, idle_ms=1500, quiet_ms=40, react_from=start["timerSeq"])
    return got, driver.page.input_value("#city")


def test_a_fill_nothing_reacts_to_ends_the_wait_early(driver) -> None:
    got, value = _fill_and_wait(driver, "none")
    assert got.get("early") is True and got["changed"] is False and got["timed_out"] is False
    assert value == "Paris"


def test_the_early_end_comes_after_the_next_animation_frame_not_the_quiet_time(driver) -> None:
    got, value = _fill_and_wait(driver, "frame")
    assert value == ""  # the frame callback ran before the wait ended
    assert got.get("early") is True
    # measured in the page: the wait ended once the frame was drawn, not after the page's quiet time
    driver.goto("/none")
    start = driver.probe()
    driver.page.fill("#city", "Paris")
    quiet = 2000.0  # a quiet time no frame takes: the early end came from the frame
    t = driver.wait_settled(start=start, idle_ms=5000, quiet_ms=quiet, react_from=start["timerSeq"])
    assert t.get("early") is True and t["ms"] < quiet


def test_a_poller_is_no_reaction_and_the_wait_still_ends_early(driver) -> None:
    got, value = _fill_and_wait(driver, "poller")
    assert got.get("early") is True and value == "Paris"


@pytest.mark.parametrize("page", ["validator", "chain"])
def test_a_validators_timeout_is_waited_for_and_its_clearing_seen(driver, page: str) -> None:
    got, value = _fill_and_wait(driver, page)
    assert value == ""  # the wait did not end before the validator ran
    assert got["timed_out"] is False


def test_without_react_from_the_wait_keeps_its_idle_bound(driver) -> None:
    driver.goto("/none")
    start = driver.probe()
    driver.page.fill("#city", "Paris")
    got = driver.wait_settled(start=start, idle_ms=300, quiet_ms=40)
    assert "early" not in got and got["ms"] >= 300


FLOW = {
    "schema_version": 1, "name": "fill", "description": "Type a city, save.", "start_url": "/chain",
    "steps": [
        {"id": "s1", "name": "Type the city", "action": "input", "value": "Paris",
         "target": {"tag": "input", "role": "textbox", "name": "City", "label": "City", "id": "city", "type": "text"}},
        {"id": "s2", "name": "Save", "action": "click",
         "target": {"tag": "button", "role": "button", "name": "Save", "text": "Save", "id": "save"}},
    ],
}


def test_on_the_run_path_a_fill_a_chained_validator_clears_is_never_passed(server, tmp_path: Path) -> None:
    root = tmp_path / "fill"
    (root / "flows").mkdir(parents=True)
    settings = {"schema_version": 1, "name": "Fill", "base_url": server.base_url,
                "browser": {"headless": True, "viewport": {"width": 1280, "height": 800}},
                "waits": {"retries": 1, "retry_delay_ms": 0}}
    (root / "steadyhand.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))
    (root / "flows" / "fill.yaml").write_text(yaml.safe_dump(FLOW, sort_keys=False))
    project = load_project(root)
    assert project.engine_settings.evidence == "failures"  # the fast path's level, `steadyhand run`'s default
    with ProjectSession(project, headless=True) as session:
        result = session.run_flow(project.flows["fill"])
        pressed = session.driver.evaluate("() => document.getElementById('out').textContent")  # type: ignore[union-attr]
    assert result.status != "passed"
    first = result.steps[0]
    assert first.status != "passed" and "empty after the fill" in (first.error + str(first.verdict))
    assert pressed == ""  # the next step never ran on the undone fill


def test_steadyhands_own_effect_snapshot_before_the_action_is_no_reaction(driver) -> None:
    """The act phase snapshots what the page keeps right before acting (its IndexedDB read has a 300 ms limit
    timer): that timer is Steadyhand's own, the wait still ends early."""
    from core.perception.effects import EffectWatch

    driver.goto("/none")
    start = driver.probe()
    watch = EffectWatch.of(driver)
    assert watch is not None and watch.mark(driver) is not None
    # right after it its 300 ms limit timer is still pending: it must not count as a reaction of the action
    assert driver.evaluate("(s) => window.__steadyhand.reactionsSince(s)", start["timerSeq"]) == 0
    driver.page.fill("#city", "Paris")
    # an idle bound shorter than the snapshot's 300 ms limit timer: were it counted, the bound would end the wait
    got = driver.wait_settled(start=start, idle_ms=200, quiet_ms=40, react_from=start["timerSeq"])
    assert got.get("early") is True
