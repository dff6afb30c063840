"""Take over hands the person the page as the escalation showed it; it is rolled back only when they ask (issue 23
item 4), with the REAL engine and Chromium.

The demo's ``leave_request`` names a Submit button the page does not have (renamed "Send it"): the locator
abstains at step 11 with the form filled in.  The person takes over: nothing is reloaded, closed or cleared (a
hand-back with nothing done finds the page's state unchanged).  They type into Reason in the live view, then press
"Roll back to before this step": the engine restores the form as it was handed over, says what it did, drops the
recorded action, and the hand-back again finds the page as the escalation showed it.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from PySide6.QtCore import QPoint, Qt

from core.engine.events import TakeoverFrame, TakeoverRolledBack
from studio.main_window import MainWindow
from studio.run_state import RunState
from tests.e2e.takeover_project import ROOT

TIMEOUT_MS = 120_000


def _project(dest: Path) -> Path:
    shutil.copytree(ROOT / "projects" / "demo", dest, ignore=shutil.ignore_patterns(".steadyhand"))
    cfg = dest / "steadyhand.yaml"
    cfg.write_text(cfg.read_text(encoding="utf-8").replace('latency_ms: "800"', 'latency_ms: "0"'), encoding="utf-8")
    for f in (dest / "flows").glob("*.yaml"):
        if f.stem != "leave_request":
            f.unlink()
    flow = dest / "flows" / "leave_request.yaml"
    text = flow.read_text(encoding="utf-8")
    i = text.index("- id: s11\n")
    flow.write_text(text[:i] + text[i:].replace("Submit", "Send it").replace("submit-request", "send-it"),
                    encoding="utf-8")
    return dest


def _start(qtbot, project: Path) -> tuple[MainWindow, list]:  # noqa: ANN001
    w = MainWindow(project, run_on_show=True, close_timeout=15.0)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    events: list = []
    w.bridge.event_received.connect(events.append)
    w.show()
    qtbot.waitUntil(lambda: w.state is RunState.PAUSED and w.escalations_panel.model.open_count == 1,
                    timeout=TIMEOUT_MS)
    assert w.escalations_panel.model.items[0].event.index == 10
    qtbot.mouseClick(w.escalations_panel.answers.buttons["take_over"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.state is RunState.TAKEN_OVER and any(isinstance(e, TakeoverFrame) for e in events),
                    timeout=TIMEOUT_MS)
    return w, events


def _hand_back_to_the_end(qtbot, w: MainWindow) -> str:  # noqa: ANN001
    banner = w.takeover_banner
    banner.continue_from.setValue(banner.continue_from.maximum())  # end of the flow
    qtbot.mouseClick(banner.hand_back_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.state is RunState.FINISHED, timeout=TIMEOUT_MS)
    return w.steps_panel.model.rows("leave_request")[10].error


def test_take_over_keeps_the_page_as_the_escalation_showed_it(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    w, _events = _start(qtbot, _project(tmp_path / "demo"))
    banner = w.takeover_banner
    assert "as the escalation showed it" in banner.title.text()
    assert banner.rollback_button.isVisible() and banner.rollback_button.isEnabled()
    # nothing done: the page's state (URL, texts, elements, form values) is the one the step observed
    assert "nothing was done on the page" in _hand_back_to_the_end(qtbot, w)
    w.close()


def test_roll_back_only_when_asked_and_say_what_was_rolled_back(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    w, events = _start(qtbot, _project(tmp_path / "demo"))
    banner = w.takeover_banner
    qtbot.waitUntil(lambda: any(c.descriptor.name == "Reason" for c in w.live_view.candidates), timeout=TIMEOUT_MS)
    reason = next(c for c in w.live_view.candidates if c.descriptor.name == "Reason")
    centre = w.live_view.map_to_widget(reason.descriptor.bbox).center()
    qtbot.mouseClick(w.live_view, Qt.MouseButton.LeftButton, pos=QPoint(round(centre.x()), round(centre.y())))
    w.live_view.flush_click()
    qtbot.keyClicks(w.live_view, " to Rome")
    qtbot.waitUntil(lambda: "Reason" in banner.actions.text(), timeout=TIMEOUT_MS)

    qtbot.mouseClick(banner.rollback_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: any(isinstance(e, TakeoverRolledBack) for e in events), timeout=TIMEOUT_MS)
    (done,) = [e for e in events if isinstance(e, TakeoverRolledBack)]
    assert done.ok and done.index == 10 and done.dropped >= 1
    assert "restored the form values" in done.detail
    assert banner.notice.isVisible() and "Rolled back to before this step" in banner.notice.text()
    assert "dropped" in banner.notice.text()
    qtbot.waitUntil(lambda: "No action recorded yet" in banner.actions.text(), timeout=TIMEOUT_MS)
    assert banner.rollback_button.isEnabled()
    assert "Rolled back to before this step" in w.event_log.toPlainText()
    shots = os.environ.get("STEADYHAND_SHOTS")
    if shots:
        w.grab().save(str(Path(shots) / "takeover-rolled-back.png"))
    # back as the escalation showed it: the hand-back finds nothing done on the page
    assert "nothing was done on the page" in _hand_back_to_the_end(qtbot, w)
    w.close()
