"""Desktop habits of the studio window, offscreen, over a copy of the bundled demo project on disk.

Menus and F1, Ctrl+F, QSettings round trip, the project folder watcher
(reload when idle, a bar during a run, the next Start uses the files on
disk), an invalid flow file marked (the project opens), a missing project
path gets a dialog, closing over an unsaved recording asks, and the
settings dialog writes a project file that loads (comments kept).
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import shiboken6
import yaml
from PySide6.QtCore import QCoreApplication, QEvent, QSettings, Qt
from PySide6.QtWidgets import QMessageBox

from core.engine.events import RunFinished, RunStarted
from core.project import load_project
from studio.habits import shortcut_rows
from studio.main_window import INVALID_ROLE, MainWindow
from studio.run_state import RunState
from studio.testing import FakeRecorder, RecordingEngine
from studio.views.recorder import RecorderState
from studio.views.settings_dialog import SettingsDialog, edit_settings_text

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def demo(tmp_path) -> Path:
    dst = tmp_path / "demo"
    shutil.copytree(ROOT / "projects" / "demo", dst, ignore=shutil.ignore_patterns(".steadyhand"))
    return dst


@pytest.fixture
def open_window(qtbot):  # noqa: ANN001, ANN201
    made: list[MainWindow] = []

    def make(root: Path, **kw) -> tuple[MainWindow, list[RecordingEngine]]:  # noqa: ANN003
        engines: list[RecordingEngine] = []
        w = MainWindow(root, engine_factory=RecordingEngine.factory(engines), close_timeout=5.0, **kw)
        made.append(w)
        return w, engines

    yield make
    for w in made:
        if not shiboken6.isValid(w):
            continue
        w.shutdown()
        w.close()
        w.deleteLater()  # a closed window's application shortcuts would make the next window's ambiguous
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


def test_menus_f1_and_ctrl_q_are_there(open_window, demo) -> None:
    w, _ = open_window(demo)
    titles = [a.text().replace("&", "") for a in w.menuBar().actions()]
    assert titles == ["File", "Edit", "Run", "View", "Help"]
    rows = {(m, key) for m, _t, key in shortcut_rows(w)}
    for need in (("File", "Ctrl+Q"), ("File", "Ctrl+O"), ("Edit", "Ctrl+F"), ("Run", "F5"), ("Run", "F10"),
                 ("Run", "Shift+F5"), ("Run", "F6"), ("Help", "F1")):
        assert need in rows, rows
    view = [a.text() for a in w.view_menu.actions()]
    assert {"Flows", "Steps", "Event log", "Escalations", "Review"} <= set(view)
    w.action_shortcuts.trigger()
    assert w.shortcuts_dialog.isVisible() and w.shortcuts_dialog.table.rowCount() == len(shortcut_rows(w))


def test_an_invalid_flow_file_is_marked_and_the_rest_opens(open_window, demo) -> None:
    (demo / "flows" / "broken.yaml").write_text("name: broken\nstart_url: /\nsteps: 3\n")
    w, _ = open_window(demo)
    assert set(w.flow_names()) == {"export_report", "leave_request", "login_lockout", "sort_table"}
    bad = [w.flows_list.item(i) for i in range(w.flows_list.count())
           if w.flows_list.item(i).data(INVALID_ROLE) is not None]
    assert len(bad) == 1 and "broken.yaml" in bad[0].text() and "invalid" in bad[0].text()
    assert "steps" in bad[0].data(INVALID_ROLE) and "broken.yaml" in bad[0].toolTip()
    assert "broken" not in w.checked_flows()
    w.set_checked_flows(w.flow_names())
    assert bad[0].data(Qt.ItemDataRole.CheckStateRole) is None  # never gets a check box
    w.flows_list.setCurrentItem(bad[0])
    assert "Invalid flow file" in w.caption.text()


def test_a_missing_project_path_gets_a_dialog_not_a_traceback(open_window, demo, tmp_path) -> None:
    w, _ = open_window(demo)
    w.show()
    assert w.open_project(tmp_path / "nowhere") is None
    assert w.error_dialog.isVisible() and "project folder not found" in w.error_dialog.text()
    assert w.errors_button.isVisible() and "nowhere" in w.errors_button.errors[-1][0]
    w.error_dialog.close()
    assert w.open_project(tmp_path) is None and "no steadyhand.yaml" in w.error_dialog.text()


def test_files_changed_on_disk_reload_when_idle(qtbot, open_window, demo) -> None:
    w, _ = open_window(demo)
    flow = demo / "flows" / "sort_table.yaml"
    flow.write_text(flow.read_text().replace("description: Sort the requests", "description: edited on disk", 1))
    qtbot.waitUntil(lambda: w.project.flows["sort_table"].description.startswith("edited on disk"), timeout=5000)
    assert w.files_bar.isHidden()
    (demo / "flows" / "copy.yaml").write_text(flow.read_text().replace("name: sort_table", "name: sort_copy", 1))
    qtbot.waitUntil(lambda: "sort_copy" in w.flow_names(), timeout=5000)


def test_during_a_run_the_change_is_announced_and_the_next_start_uses_the_files(qtbot, open_window, demo) -> None:
    w, engines = open_window(demo)
    w.set_checked_flows(["sort_table"])
    assert w.start_run()
    with qtbot.waitSignal(w.bridge.event_received, timeout=5000):
        engines[0].emit_from_thread(RunStarted("r1", "Demo", ("sort_table",)))
    assert w.state is RunState.RUNNING
    flow = demo / "flows" / "sort_table.yaml"
    flow.write_text(flow.read_text().replace("description: Sort the requests", "description: changed", 1))
    qtbot.waitUntil(lambda: not w.files_bar.isHidden(), timeout=5000)
    assert "sort_table.yaml" in w.files_text.text() and w.files_reload.isHidden()  # no reload mid-run
    assert not w.project.flows["sort_table"].description.startswith("changed")  # the running batch keeps its files
    with qtbot.waitSignal(w.bridge.event_received, timeout=5000):
        engines[0].emit_from_thread(RunFinished("r1", ()))
    # reloaded as soon as nothing runs (trial-72/82: the bar stayed until a later click)
    qtbot.waitUntil(lambda: w.project.flows["sort_table"].description.startswith("changed"), timeout=5000)
    assert w.files_bar.isHidden()
    assert w.start_run()
    assert engines[-1] is not engines[0]
    assert engines[-1].project.flows["sort_table"].description.startswith("changed") and w.files_bar.isHidden()


def test_qsettings_round_trip_of_layout_splitters_and_flow(qtbot, open_window, demo, tmp_path) -> None:
    ini = str(tmp_path / "studio.ini")
    w, _ = open_window(demo, settings=QSettings(ini, QSettings.Format.IniFormat))
    w.resize(780, 560)  # inside the offscreen screen, which restoreGeometry clamps to
    w.show()
    w.log_dock.hide()
    w.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, w.escalations_dock)
    w.flows_list.setCurrentRow(w.flow_names().index("sort_table"))
    w.steps_panel.splitter.setSizes([300, 500])
    qtbot.wait(100)  # the docks re-lay out after the move
    sizes = w.steps_panel.splitter.sizes()
    w.close()
    w.shutdown()
    w.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    w2, _ = open_window(demo, settings=QSettings(ini, QSettings.Format.IniFormat))
    w2.show()
    assert w2.flows_list.currentItem().data(Qt.ItemDataRole.UserRole) == "sort_table"
    assert w2.log_dock.isHidden() and not w2.steps_dock.isHidden()
    assert w2.dockWidgetArea(w2.escalations_dock) == Qt.DockWidgetArea.RightDockWidgetArea
    qtbot.waitUntil(lambda: w2.steps_panel.splitter.sizes() == sizes, timeout=3000)
    assert w2.size().width() == 780
    assert str(demo.resolve()) in QSettings(ini, QSettings.Format.IniFormat).value("recentProjects")


def test_ctrl_f_filters_steps_and_highlights_the_log(qtbot, open_window, demo) -> None:
    w, _ = open_window(demo)
    w.show()
    w.flows_list.setCurrentRow(w.flow_names().index("export_report"))
    total = w.steps_panel.model.rowCount()
    w.event_log.log("export started")
    w.event_log.log("nothing here")
    with qtbot.waitActive(w):
        w.activateWindow()
    qtbot.keyClick(w, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert w.find_bar.isVisible()
    qtbot.keyClicks(w.find_bar.edit, "export")
    t = w.steps_panel.table
    shown = [r for r in range(total) if not t.isRowHidden(r)]
    assert 0 < len(shown) < total
    assert all("export" in " ".join(str(t.model().index(r, c).data() or "") for c in range(t.model().columnCount()))
               .lower() for r in shown)
    assert len(w.event_log.extraSelections()) >= 1 and "1 log line" in w.find_bar.summary.text()
    w.find_bar.close_bar()
    assert not any(t.isRowHidden(r) for r in range(total)) and not w.event_log.extraSelections()


def _record(qtbot, w: MainWindow, recorders: list[FakeRecorder]) -> None:  # noqa: ANN001
    w.show()
    w.action_record.trigger()
    d = w.recorder_dock
    d.name_edit.setText("new_flow")
    assert d.start_recording()
    qtbot.waitUntil(lambda: d.state is RecorderState.RECORDING, timeout=5000)
    recorders[0].play_sample(3)
    qtbot.waitUntil(lambda: d.model.rowCount() == 3, timeout=5000)
    d.stop_recording()
    qtbot.waitUntil(lambda: d.state is RecorderState.STOPPED, timeout=5000)
    assert d.dirty


def test_closing_over_an_unsaved_recording_asks_save_discard_cancel(qtbot, open_window, demo) -> None:
    recorders: list[FakeRecorder] = []
    w, _ = open_window(demo, recorder_factory=FakeRecorder.factory(recorders))
    _record(qtbot, w, recorders)
    asked: list[str] = []

    def answer(button: QMessageBox.StandardButton):  # noqa: ANN202
        def ask(text: str, *, save: bool) -> QMessageBox.StandardButton:
            asked.append(text)
            return button
        return ask

    w.ask_unsaved = answer(QMessageBox.StandardButton.Cancel)
    assert not w.request_close() and w.isVisible() and "3 recorded steps" in asked[-1]
    w.ask_unsaved = answer(QMessageBox.StandardButton.Save)
    assert w.request_close() and not w.isVisible()
    assert "new_flow" in load_project(demo).flows


def test_discard_closes_without_saving(qtbot, open_window, demo) -> None:
    recorders: list[FakeRecorder] = []
    w, _ = open_window(demo, recorder_factory=FakeRecorder.factory(recorders))
    _record(qtbot, w, recorders)
    w.ask_unsaved = lambda _text, *, save: QMessageBox.StandardButton.Discard
    assert w.request_close() and not (demo / "flows" / "new_flow.yaml").exists()


def test_settings_dialog_writes_a_project_file_that_reloads(qtbot, open_window, demo) -> None:
    settings = demo / "steadyhand.yaml"
    settings.write_text(settings.read_text().replace("breaker:\n  threshold: 3\n",
                                                     "breaker:   # keep me\n  threshold: 3   # R4\n"))
    w, _ = open_window(demo)
    dlg = SettingsDialog(demo, w)
    qtbot.addWidget(dlg)
    dlg.editors[("breaker", "threshold")].setValue(5)
    dlg.editors[("locator", "margin")].setValue(0.25)
    dlg.editors[("waits", "retries")].setValue(2)
    assert dlg.save() and dlg.written
    text = settings.read_text()
    assert "breaker:   # keep me\n  threshold: 5   # R4\n" in text and text.index("name: Demo") < text.index("site:")
    project = load_project(demo)
    assert project.engine_settings.breaker.threshold == 5
    assert project.engine_settings.locator.margin == pytest.approx(0.25)
    assert project.engine_settings.waits.retries == 2
    assert w.reload_project() and w.project.engine_settings.breaker.threshold == 5

    before = settings.read_text()
    bad = SettingsDialog(demo, w)
    qtbot.addWidget(bad)
    bad.editors[("breaker", "loop_repeats")].setValue(9)
    bad.editors[("breaker", "loop_window")].setValue(3)
    assert not bad.save() and "loop_window (3) must be >= loop_repeats (9)" in bad.problem.text()
    assert settings.read_text() == before


def test_edit_settings_text_appends_missing_keys_and_sections() -> None:
    text = "name: x\nsite: demo\nwaits: {retries: 1}\nbreaker:\n  threshold: 3\n"
    out = edit_settings_text(text, {"breaker": {"loop_window": 12}, "locator": {"margin": 0.2},
                                    "waits": {"quiet_ms": 80}})
    data = yaml.safe_load(out)
    assert data["breaker"] == {"threshold": 3, "loop_window": 12} and data["locator"] == {"margin": 0.2}
    assert data["waits"] == {"retries": 1, "quiet_ms": 80} and out.startswith("name: x\nsite: demo\n")


def test_an_empty_project_says_how_to_record_its_first_flow(open_window, demo) -> None:
    shutil.rmtree(demo / "flows")
    w, _ = open_window(demo)
    assert w.flow_names() == [] and w.checked_flows() == ()
    assert "Record your first one" in w.flows_list.item(0).text()
    assert "record your first flow (Ctrl+R)" in w.state_label.text() and not w.action_start.isEnabled()


def test_the_run_data_folder_appearing_is_not_a_change_of_the_project(qtbot, tmp_path) -> None:  # noqa: ANN001
    from studio.habits import ProjectWatcher

    (tmp_path / "flows").mkdir()
    (tmp_path / "steadyhand.yaml").write_text("name: W\n")
    (tmp_path / "flows" / "a.yaml").write_text("name: a\n")
    watcher = ProjectWatcher(tmp_path)
    seen: list[list[str]] = []
    watcher.changed.connect(seen.append)
    (tmp_path / ".steadyhand").mkdir()  # the first run makes its data folder in the project root
    (tmp_path / "notes.txt").write_text("not a project file")
    qtbot.wait(900)
    assert seen == []
    (tmp_path / "flows" / "a.yaml").write_text("name: a\nsteps: []\n")
    qtbot.waitUntil(lambda: bool(seen), timeout=5000)
