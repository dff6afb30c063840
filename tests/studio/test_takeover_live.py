"""A takeover in the studio with the REAL engine: the human's click goes through the live view to the engine's page.

The demo's ``export_report`` names a control the page does not have at step 4
(tests/e2e/takeover_project.py): the locator abstains and the engine escalates.
The user takes over, clicks "Export report" in the live view (image px -> CSS
px -> the engine thread's page), the click is recorded with its full
descriptor, the person chooses "replace" (a recorded action never chooses it), the run finishes green, and the
correction is stored and offered as a flow edit whose diff replaces step 4;
accepting it writes the flow file, which then loads with the new step.
"""
from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QPoint, Qt

from core.domain import Candidate
from core.engine.events import CorrectionOffered, TakeoverFrame
from core.heal.corrections import list_corrections
from core.project import load_flow
from core.record.events import ForwardClick
from core.store import Store, store_path
from studio.main_window import MainWindow
from studio.run_state import RunState
from tests.e2e.takeover_project import broken_demo

TIMEOUT_MS = 120_000


def _export_button(w: MainWindow) -> Candidate | None:
    return next((c for c in w.live_view.candidates if c.descriptor.name == "Export report"), None)


def test_takeover_click_in_the_live_view_is_recorded_and_offered_as_a_flow_edit(qtbot, tmp_path: Path, paused_at_escalation) -> None:  # noqa: ANN001
    project = broken_demo(tmp_path / "demo")
    w = paused_at_escalation(project, "export_report", timeout_ms=TIMEOUT_MS)
    esc = w.escalations_panel.model.items[0].event
    assert esc.index == 3 and "take_over" in esc.answers and "Print the summary" in esc.reason
    assert not w.live_view.interactive()  # an escalation alone does not hand the page over
    frames: list[TakeoverFrame] = []
    offers: list[CorrectionOffered] = []
    w.bridge.event_received.connect(lambda e: frames.append(e) if isinstance(e, TakeoverFrame) else None)
    w.takeover.correction_offered.connect(offers.append)

    qtbot.mouseClick(w.escalations_panel.answers.buttons["take_over"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.state is RunState.TAKEN_OVER and bool(frames), timeout=TIMEOUT_MS)
    assert w.takeover.active and w.live_view.interactive()
    banner = w.takeover_banner
    assert banner.meaning == "insert" and banner.continue_from.value() == 4
    assert "live view" in banner.title.text()
    qtbot.waitUntil(lambda: _export_button(w) is not None, timeout=TIMEOUT_MS)  # the engine's page, live
    target = _export_button(w)
    centre = w.live_view.map_to_widget(target.descriptor.bbox).center()
    qtbot.mouseClick(w.live_view, Qt.MouseButton.LeftButton, pos=QPoint(round(centre.x()), round(centre.y())))
    w.live_view.flush_click()  # a single click, not the first half of a double click
    sent = [c for c in w.takeover.sent if isinstance(c, ForwardClick)]
    assert len(sent) == 1
    box = target.descriptor.bbox
    assert box.x <= sent[0].x <= box.x + box.width and box.y <= sent[0].y <= box.y + box.height  # CSS px
    qtbot.waitUntil(lambda: "Export report" in banner.actions.text(), timeout=TIMEOUT_MS)
    assert banner.meaning == "insert" and banner.continue_from.value() == 4  # a recorded action changes nothing
    qtbot.mouseClick(banner.meaning_buttons["replace"], Qt.MouseButton.LeftButton)  # the person did the step
    assert banner.meaning == "replace" and banner.continue_from.value() == 5
    shots = os.environ.get("STEADYHAND_SHOTS")
    if shots:
        w.grab().save(str(Path(shots) / "takeover-live.png"))

    qtbot.mouseClick(banner.hand_back_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.state is RunState.FINISHED and bool(offers), timeout=TIMEOUT_MS)
    rows = w.steps_panel.model.rows("export_report")
    assert [r.status for r in rows] == ["passed", "passed", "passed", "manual", "passed"]
    assert "export_report passed" in w.state_label.text()
    assert not w.takeover.active and not w.live_view.interactive()

    offer = offers[-1]
    assert offer.state == "offered" and offer.meaning == "replace" and offer.steps == ("Click Export report",)
    assert "-- id: s4\n" in offer.diff and "+- id: s4_h1\n" in offer.diff
    assert "+    name: Export report\n" in offer.diff and "-  selector: '#print-summary'\n" in offer.diff
    dialog = w.takeover.dialog
    assert dialog is not None and dialog.isVisible() and dialog.diff.toPlainText() == offer.diff
    store = Store.open(store_path(project))
    try:
        (rec,) = list_corrections(store)
        assert rec.id == offer.correction_id and rec.step_id == "s4" and rec.step_index == 3
        assert rec.steps[0]["target"]["role"] == "button" and rec.steps[0]["target"]["name"] == "Export report"
        assert rec.page["url"].endswith("/requests") and rec.crops
    finally:
        store.close()
    flow_file = project / "flows" / "export_report.yaml"
    assert "s4_h1" not in flow_file.read_text()  # offered, not applied
    if shots:
        dialog.grab().save(str(Path(shots) / "takeover-correction.png"))
    assert dialog.accept_edit()
    assert [s.id for s in load_flow(flow_file).steps] == ["s1", "s2", "s3", "s4_h1", "s5"]
    assert not dialog.accept_button.isEnabled()
    dialog.close()
    w.close()
