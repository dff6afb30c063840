"""The main window driven end to end by the scripted FakeEngine on its own thread."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from core.engine.events import Resume, Start, Stop
from studio.app import main
from studio.main_window import MainWindow
from studio.run_state import RunState
from studio.samples import SAMPLE_DPR
from studio.testing import FakeEngine

TIMEOUT_MS = 20000
REPO = Path(__file__).resolve().parents[2]


def _activate(qtbot, w: MainWindow) -> None:  # noqa: ANN001
    w.show()
    with qtbot.waitActive(w):
        w.activateWindow()


def test_run_escalates_then_resumes_to_the_end(qtbot, make_window) -> None:  # noqa: ANN001
    w = make_window(FakeEngine.factory(), run_on_show=True)
    _activate(qtbot, w)
    qtbot.waitUntil(lambda: w.state is RunState.PAUSED, timeout=TIMEOUT_MS)
    engine = w.bridge.engine
    assert isinstance(engine, FakeEngine) and engine.alive
    assert engine.commands == [Start(flows=("login_lockout", "export_report"))]

    # paused at the escalation of step 6
    rows = w.steps_panel.model.rows("login_lockout")
    assert [r.status for r in rows] == ["passed"] * 5 + ["escalated", "pending"]
    assert rows[3].strategy == "semantic" and rows[3].healed
    assert rows[5].strategy == "abstained"
    esc = w.escalations_panel.model.items
    assert len(esc) == 1 and esc[0].state == "open" and esc[0].event.index == 5
    assert "Escalated at step 6" in w.banner_text.text()
    assert w.breaker.text() == "Breaker closed \u00b7 1/3"
    assert _actions(w) == (True, False, True, True) and w.action_start.text() == "Resume"
    img = w.live_view.image
    assert (img.width(), img.height()) == (round(1280 * SAMPLE_DPR), round(720 * SAMPLE_DPR))
    assert len(w.live_view.candidates) == 11
    assert "before step 6" in w.caption.text()
    # the ambiguous candidates of the abstained step are outlined for the user
    alternatives = [(c.descriptor.role, c.descriptor.name, label) for c, label in w.live_view.alternatives]
    assert alternatives == [("link", "Unlock account", "#1 0.78"), ("button", "Unlock account", "#2 0.76"),
                            ("link", "Forgot password?", "#3 0.31")]

    qtbot.keyClick(w, Qt.Key.Key_F5)  # resume: answers the escalation with "retry"
    qtbot.waitUntil(lambda: w.state is RunState.FINISHED, timeout=TIMEOUT_MS)
    assert engine.commands[-1] == Resume()
    rows = w.steps_panel.model.rows("login_lockout")
    assert [r.status for r in rows][-2:] == ["passed", "passed"]
    assert rows[5].attempt == 2 and rows[5].strategy == "exact"  # the second attempt resolved the target
    assert [r.status for r in w.steps_panel.model.rows("export_report")] == ["passed"] * 4
    assert w.steps_panel.model.current_flow == "export_report"
    assert w.escalations_panel.model.items[0].state == "retried"  # F5 answered it with Retry
    assert "login_lockout passed, export_report passed" in w.state_label.text()
    assert _actions(w) == (True, False, True, False)

    w.close()
    assert not engine.alive and engine.closed


def test_step_by_step_then_stop(qtbot, make_window) -> None:  # noqa: ANN001
    w = make_window(FakeEngine.factory())
    w.set_checked_flows(["export_report"])
    _activate(qtbot, w)
    qtbot.keyClick(w, Qt.Key.Key_F10)  # from idle: start paused before step 1
    qtbot.waitUntil(lambda: w.state is RunState.PAUSED, timeout=TIMEOUT_MS)
    rows = lambda: [r.status for r in w.steps_panel.model.rows("export_report")]  # noqa: E731
    assert rows() == ["pending"] * 4
    assert "Paused before step 1" in w.banner_text.text()

    qtbot.keyClick(w, Qt.Key.Key_F10)
    qtbot.waitUntil(lambda: w.state is RunState.PAUSED and rows()[0] == "passed", timeout=TIMEOUT_MS)
    assert rows() == ["passed", "pending", "pending", "pending"]
    assert "step 2/4" in w.state_label.text()

    qtbot.keyClick(w, Qt.Key.Key_F5, Qt.KeyboardModifier.ShiftModifier)  # stop
    qtbot.waitUntil(lambda: w.state is RunState.FINISHED, timeout=TIMEOUT_MS)
    assert w.bridge.engine.commands[-1] == Stop()
    assert "export_report stopped" in w.state_label.text()


def test_a_second_run_replaces_the_first(qtbot, make_window) -> None:  # noqa: ANN001
    w = make_window(FakeEngine.factory())
    w.set_checked_flows(["export_report"])
    w.start_run()
    qtbot.waitUntil(lambda: w.state is RunState.FINISHED, timeout=TIMEOUT_MS)
    first = w.bridge.run_id
    w.start_run()
    qtbot.waitUntil(lambda: w.state is RunState.FINISHED and w.bridge.run_id != first, timeout=TIMEOUT_MS)
    assert w.bridge.run_id == "fake-2" and w.run_label.text() == "run fake-2"
    assert [r.status for r in w.steps_panel.model.rows("export_report")] == ["passed"] * 4


# The studio's own event loop (app.exec()) run in a fresh process, as `steadyhand studio` runs it: inside the
# test process a first app.exec() would also run the deferred deletions that earlier tests left queued.
_MAIN_UNTIL_CLOSED = """
import sys
from pathlib import Path
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication
from studio.app import main
from studio.main_window import MainWindow
from studio.run_state import RunState
from studio.samples import sample_project
from studio.testing import FakeEngine

root = Path(sys.argv[1])
project = sample_project(root)
seen = []

def drive():
    wins = [x for x in QApplication.topLevelWidgets() if isinstance(x, MainWindow)]
    if wins and wins[0].state is RunState.PAUSED:
        wins[0].start_or_resume()
    if wins and wins[0].state is RunState.FINISHED:
        seen.append(wins[0].state_label.text())
        wins[0].close()
        return
    QTimer.singleShot(20, drive)

QTimer.singleShot(0, drive)
code = main(project.root, run=True, engine_factory=FakeEngine.factory(), project_loader=lambda _p: project,
            settings=QSettings(str(root / "studio.ini"), QSettings.Format.IniFormat))
print("state:", seen[0] if seen else "(the window closed before the run finished)")
sys.exit(code)
"""


def test_app_main_runs_the_studio_until_its_window_closes(tmp_path) -> None:  # noqa: ANN001
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", _MAIN_UNTIL_CLOSED, str(tmp_path / "project")], env=env,
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "export_report passed" in done.stdout


def test_app_main_reports_an_unreadable_project(capsys: pytest.CaptureFixture[str], tmp_path) -> None:  # noqa: ANN001
    def loader(path):  # noqa: ANN001, ANN202
        raise FileNotFoundError(f"{path}/steadyhand.yaml")

    assert main(tmp_path, project_loader=loader) == 2
    assert "cannot open" in capsys.readouterr().err


def _actions(w: MainWindow) -> tuple[bool, bool, bool, bool]:
    return (w.action_start.isEnabled(), w.action_pause.isEnabled(), w.action_step.isEnabled(),
            w.action_stop.isEnabled())
