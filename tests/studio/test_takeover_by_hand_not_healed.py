"""A step done by hand in the studio with the REAL engine is "by hand", never "healed" (tester's report, item 3).

``leave_request`` on the ``inline-edit`` variant: step 10 "Type the reason" opens
the breaker (the locator's best guess is the label "Reason", semantic 0.54,
on which the engine refused to act).  The person takes over, double-clicks
"Reason" in the live view and types the reason, chooses "replace this step"
and hands back.  The step's StepFinished said healed=True (the event log read
"by hand · healed"); a heal is a passed step found by another level than
exact, and the engine did not act on that proposal.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt

from core.domain import BBox
from core.engine.events import StepFinished, TakeoverFrame
from studio.run_state import RunState
from tests.e2e.takeover_project import inline_edit_demo

pytestmark = pytest.mark.browser
TIMEOUT_MS = 120_000
#: The label "Reason" of the inline-edit variant, CSS px of the 1280x800 page (as a recording of it measured).
REASON_LABEL = BBox(321.0, 478.6, 638.0, 20.0)


def test_a_step_done_by_hand_in_the_live_view_is_not_reported_healed(qtbot, tmp_path: Path, paused_at_escalation) -> None:  # noqa: ANN001
    project = inline_edit_demo(tmp_path / "demo")
    w = paused_at_escalation(project, "leave_request", timeout_ms=TIMEOUT_MS)
    assert w.escalations_panel.model.items[0].event.index == 9
    frames: list[TakeoverFrame] = []
    finished: list[StepFinished] = []
    w.bridge.event_received.connect(lambda e: frames.append(e) if isinstance(e, TakeoverFrame) else None)
    w.bridge.event_received.connect(lambda e: finished.append(e) if isinstance(e, StepFinished) else None)
    qtbot.mouseClick(w.escalations_panel.answers.buttons["take_over"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.state is RunState.TAKEN_OVER and bool(frames), timeout=TIMEOUT_MS)
    at = w.live_view.map_to_widget(REASON_LABEL).center()
    qtbot.mouseDClick(w.live_view, Qt.MouseButton.LeftButton, pos=QPoint(round(at.x()), round(at.y())))
    banner = w.takeover_banner
    qtbot.waitUntil(lambda: "Reason" in banner.actions.text(), timeout=TIMEOUT_MS)
    qtbot.keyClicks(w.live_view, "Family trip")
    qtbot.waitUntil(lambda: "Fill" in banner.actions.text(), timeout=TIMEOUT_MS)
    qtbot.mouseClick(banner.meaning_buttons["replace"], Qt.MouseButton.LeftButton)
    qtbot.mouseClick(banner.hand_back_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.state is RunState.FINISHED, timeout=TIMEOUT_MS)
    (step10,) = [e for e in finished if e.index == 9]
    assert step10.status == "manual" and not step10.healed
    assert "leave_request passed with help" in w.state_label.text()
    w.close()
