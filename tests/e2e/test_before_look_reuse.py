"""The before-look of a step is the previous step's after-look only when nothing changed in between
(issue 20: skip what is provably unchanged), on `steadyhand run`'s session, a real page, real Chromium.

The page's "Start" shows "Preparing" at once and, 250 ms later, from a timer, "Ready" in the same
paragraph - a text change only, the kind a stale look would silently miss.  The run control holds the
second step at its observe phase (a pause point, as a person's pause would) until the timer fired.  That
step's before-look must then be a new look that shows "Ready", never the first step's after-look; without
the timer's change (a page whose "Start" changes nothing later) the after-look is reused.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from core.engine.control import HeadlessControl
from core.engine.events import ObservationMade
from core.engine.session import ProjectSession
from core.project import load_project
from core.sites.server import LoopbackServer, Response

pytestmark = pytest.mark.browser

#: ``{later}``: the timer's delay in ms (-1: no timer).
PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Timer</title></head><body><main>
<h1>Timer page</h1>
<button type="button" id="start" onclick="const st = document.getElementById('status');
 st.textContent = 'Preparing'; if ({later} >= 0) setTimeout(() => {{ st.textContent = 'Ready'; }}, {later})">Start</button>
<button type="button" id="next" onclick="document.getElementById('done').textContent = 'Next pressed'">Next</button>
<p id="status"></p><p id="done"></p></main></body></html>"""

FLOW = {
    "schema_version": 1, "name": "timer", "description": "Start, then next.", "start_url": "/page",
    "steps": [
        {"id": "s1", "name": "Start", "action": "click",
         "target": {"tag": "button", "role": "button", "name": "Start", "text": "Start", "id": "start"}},
        {"id": "s2", "name": "Next", "action": "click",
         "target": {"tag": "button", "role": "button", "name": "Next", "text": "Next", "id": "next"},
         "assertions": [{"kind": "text_appears", "expected": "Next pressed"}]},
    ],
}

#: How long the second step is held at its observe phase, ms: well past the timer's 250 ms.
HOLD_MS = 900


class HoldSecondStep(HeadlessControl):
    """Holds step 2 at its observe pause point for :data:`HOLD_MS` (the page's timer fires meanwhile)."""

    def pause_point(self, run_id: str, flow: str, index: int, phase: str) -> None:
        super().pause_point(run_id, flow, index, phase)
        if index == 1 and phase == "observe":
            time.sleep(HOLD_MS / 1000.0)


def _run(tmp_path: Path, later: int) -> tuple[Any, list[ObservationMade]]:
    server = LoopbackServer()
    html = PAGE.format(later=later)
    server.route("GET", "/page", lambda req: Response.text(html, 200, "text/html; charset=utf-8"))
    seen: list[ObservationMade] = []
    with server:
        root = tmp_path / f"timer{later}"
        (root / "flows").mkdir(parents=True)
        settings = {"schema_version": 1, "name": "Timer", "base_url": server.base_url,
                    "browser": {"headless": True, "viewport": {"width": 1280, "height": 800}}}
        (root / "steadyhand.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))
        (root / "flows" / "timer.yaml").write_text(yaml.safe_dump(FLOW, sort_keys=False))
        project = load_project(root)
        emit = lambda e: seen.append(e) if isinstance(e, ObservationMade) else None  # noqa: E731
        with ProjectSession(project, headless=True, control=HoldSecondStep(), emit=emit) as session:
            result = session.run_flow(project.flows["timer"])
    return result, seen


def test_a_change_from_a_timer_between_two_steps_gets_a_new_before_look_that_shows_it(tmp_path) -> None:
    result, seen = _run(tmp_path, later=250)
    assert result.status == "passed", result.error
    after_1 = next(e for e in seen if e.index == 0 and e.when == "after")
    before_2 = [e for e in seen if e.index == 1 and e.when == "before"]
    assert "Preparing" in after_1.observation.visible_text  # the first step's look came before the timer
    assert before_2 and not before_2[0].reused  # the timer's change: looked again
    assert before_2[0].observation is not after_1.observation
    assert "Ready" in before_2[0].observation.visible_text and "Preparing" not in before_2[0].observation.visible_text


def test_without_a_change_between_two_steps_the_after_look_stands_as_the_next_before(tmp_path) -> None:
    result, seen = _run(tmp_path, later=-1)
    assert result.status == "passed", result.error
    after_1 = next(e for e in seen if e.index == 0 and e.when == "after")
    before_2 = [e for e in seen if e.index == 1 and e.when == "before"]
    assert before_2 and before_2[0].reused and before_2[0].observation is after_1.observation
