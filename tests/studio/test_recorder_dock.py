"""Recorder dock over a FakeRecorder: live steps with thumbnails, edits saved to YAML, live-view input
forwarded in CSS px, assertions from a pick, replay verdicts from the engine."""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Callable, Iterator

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QImage, QKeySequence, QPixmap, QWheelEvent
from PySide6.QtWidgets import QApplication

from core.domain import Action, BBox, ElementDescriptor, Flow, Resolution, RunResult, Step, Verdict
from core.engine.events import (
    FlowFinished, FlowStarted, RunFinished, RunStarted, Start, StepFinished, StepStarted, TargetResolved,
    VerdictReached,
)
from core.project.loader import load_flow
from core.record.events import (
    AddAssertion, ForwardClick, ForwardKey, ForwardScroll, ForwardType, LiveFrame, RecorderError, RecordingStopped,
    SetInspect, StepRecorded, StopRecording,
)
from studio.main_window import MainWindow
from studio.recorder_bridge import RecorderBridge
from studio.samples import sample_recording
from studio.testing import FakeRecorder, RecordingEngine
from studio.views.live_view import LiveView
from studio.views.recorder import RecordedStepsModel, RecorderDock, RecorderState, param_slug, valid_flow_name

M = RecordedStepsModel
DEMO = Path(__file__).resolve().parents[2] / "projects" / "demo"
T = 5000


@pytest.fixture
def demo_root(tmp_path: Path) -> Path:
    """A copy of projects/demo (settings and flows, no run data)."""
    root = tmp_path / "demo"
    shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns(".steadyhand"))
    return root


@pytest.fixture
def studio(qtbot, demo_root: Path) -> Iterator[tuple[MainWindow, list[FakeRecorder], list[RecordingEngine]]]:  # noqa: ANN001
    """The main window over the demo copy (real loader), a RecordingEngine and FakeRecorders."""
    recorders: list[FakeRecorder] = []
    engines: list[RecordingEngine] = []
    w = MainWindow(demo_root, engine_factory=RecordingEngine.factory(engines),
                   recorder_factory=FakeRecorder.factory(recorders), close_timeout=5.0)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    yield w, recorders, engines
    w.close()


def _cell(model: RecordedStepsModel, row: int, col: int, role: int = Qt.ItemDataRole.DisplayRole) -> object:
    return model.data(model.index(row, col), role)


def _start(qtbot, w: MainWindow, recorders: list[FakeRecorder], name: str = "export_csv") -> FakeRecorder:  # noqa: ANN001
    dock = w.recorder_dock
    w.action_record.trigger()
    dock.name_edit.setText(name)
    assert dock.record_button.isEnabled()
    dock.record_button.click()
    qtbot.waitUntil(lambda: dock.state is RecorderState.RECORDING, timeout=T)
    return recorders[-1]


def _stop(qtbot, dock: RecorderDock) -> None:  # noqa: ANN001
    dock.stop_button.click()
    qtbot.waitUntil(lambda: dock.state is RecorderState.STOPPED, timeout=T)


def _rows(qtbot, dock: RecorderDock, n: int) -> None:  # noqa: ANN001
    qtbot.waitUntil(lambda: dock.model.rowCount() == n, timeout=T)


# --- live steps -------------------------------------------------------------------------------


def test_recorded_steps_appear_live_with_thumbnails(qtbot, studio) -> None:  # noqa: ANN001
    w, recorders, _ = studio
    dock = w.recorder_dock
    assert not dock.isVisibleTo(w)  # hidden until asked for
    rec = _start(qtbot, w, recorders)
    assert dock.isVisibleTo(w) and w.action_record.isChecked()
    assert rec.started and rec.flow_name == "export_csv" and rec.url is None and rec.headless
    assert w.live_view.interactive() and "Recording" in w.caption.text()

    rec.play_sample(3)
    _rows(qtbot, dock, 3)
    m = dock.model
    assert [m.headerData(c, Qt.Orientation.Horizontal) for c in range(m.columnCount())] == [
        "#", "Element", "Step", "Action", "Value", "Expect", "Irrev.", "Read-only", "Replay"]
    assert [_cell(m, r, M.COL_TITLE) for r in range(3)] == ["Type the user name", "Type the password", "Click Log in"]
    assert [_cell(m, r, M.COL_ACTION) for r in range(3)] == ["input", "input", "click"]
    assert [_cell(m, r, M.COL_VALUE) for r in range(3)] == ["alice", "{password}", ""]
    assert [_cell(m, r, M.COL_EXPECT) for r in range(3)] == ["value", "value", "navigation"]
    assert "secret" in str(_cell(m, 1, M.COL_VALUE, Qt.ItemDataRole.ToolTipRole))
    for r in range(3):
        thumb = _cell(m, r, M.COL_THUMB, Qt.ItemDataRole.DecorationRole)
        assert isinstance(thumb, QPixmap) and not thumb.isNull()
        assert 40 <= thumb.width() <= 112 and thumb.height() <= 34
    # the thumbnail is the element's crop: the user name field is mostly white with dark text
    img = _cell(m, 0, M.COL_THUMB, Qt.ItemDataRole.DecorationRole).toImage()
    assert img.pixelColor(img.width() // 2, img.height() // 2).lightness() > 200
    # the page is shown while recording: the last live frame, in the main window's live view
    assert not w.live_view.image.isNull() and len(w.live_view.candidates) > 0
    assert "3 steps" in dock.count_label.text() and not dock.save_button.isEnabled()


def test_recorder_withdrawals_and_replacements_follow_its_indices(qtbot, studio) -> None:  # noqa: ANN001
    w, recorders, _ = studio
    dock = w.recorder_dock
    rec = _start(qtbot, w, recorders)
    rec.play_sample(4)
    _rows(qtbot, dock, 4)
    dock.model.move(3, -3)  # the user reorders: recorder index 3 is now row 0
    assert dock.model.row(0).id == "s4"
    rec.remove(1)  # the recorder withdraws its step 1 (s2)
    _rows(qtbot, dock, 3)
    assert [r.id for r in dock.model.rows()] == ["s4", "s1", "s3"]
    s3 = rec.steps[1]
    rec.record(Step("s3", Action("dblclick"), name="Double-click Log in", target=s3.target), index=1)
    qtbot.waitUntil(lambda: _cell(dock.model, 2, M.COL_ACTION) == "dblclick", timeout=T)
    assert dock.model.rowCount() == 3 and _cell(dock.model, 2, M.COL_THUMB, Qt.ItemDataRole.DecorationRole)


# --- edits end up in the saved YAML -------------------------------------------------------------


def test_edits_are_saved_into_the_project(qtbot, studio, demo_root: Path) -> None:  # noqa: ANN001
    w, recorders, _ = studio
    dock = w.recorder_dock
    rec = _start(qtbot, w, recorders, "export_csv")
    rec.play_sample()
    _rows(qtbot, dock, 7)
    m = dock.model

    # edits while recording survive the recorder's final flow
    assert m.setData(m.index(0, M.COL_TITLE), "Enter the user")
    assert _cell(m, 0, M.COL_TITLE) == "Enter the user"
    dock.select_row(0)
    assert dock.param_button.isEnabled()
    assert param_slug(m.row(0).step.target.label) == "user_name"
    assert dock.make_parameter(0, "user_name")
    assert _cell(m, 0, M.COL_VALUE) == "{user_name}"
    dock.select_row(1)
    assert not dock.param_button.isEnabled()  # the password is already a secret placeholder
    assert not dock.make_parameter(1, "pw") and "no literal value" in dock.message.text()

    _stop(qtbot, dock)
    assert StopRecording() in rec.commands
    qtbot.waitUntil(lambda: rec.closed, timeout=T)  # closed on a helper thread
    assert not w.live_view.interactive()
    assert dock.save_button.isEnabled() and not dock.replay_button.isEnabled()

    # after the stop: delete "Click Reports" (s4), move "Click Export" (s6) above "Choose Format CSV" (s5)
    dock.select_row(3)
    assert _cell(m, 3, M.COL_TITLE) == "Click Reports"
    dock.delete_button.click()
    assert m.rowCount() == 6 and dock.selected_row() == 3
    dock.select_row(4)
    dock.up_button.click()
    assert [r.id for r in m.rows()] == ["s1", "s2", "s3", "s6", "s5", "s7"]
    assert dock.selected_row() == 3
    dock.down_button.click()
    dock.up_button.click()
    # flags: irreversible through the tool button, read-only through the table's check box
    dock.irreversible_button.click()
    assert _cell(m, 3, M.COL_IRREVERSIBLE, Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Checked
    assert m.setData(m.index(5, M.COL_READ_ONLY), Qt.CheckState.Checked.value, Qt.ItemDataRole.CheckStateRole)
    assert _cell(m, 5, M.COL_READ_ONLY, Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Checked
    # a name already used for another value is refused
    dock.select_row(4)
    assert not dock.make_parameter(4, "user_name") and "already stands for" in dock.message.text()
    assert dock.make_parameter(4, "format")
    # a click has no value: its element's accessible name becomes the parameter ("click the button the task names")
    dock.select_row(3)
    assert dock.param_button.isEnabled()
    assert dock.make_parameter(3, "button") and "element named" in dock.message.text()
    assert not dock.param_button.isEnabled()

    path = dock.save()
    assert path == demo_root / "flows" / "export_csv.yaml" and path.is_file()
    flow = load_flow(path)
    assert flow.name == "export_csv" and flow.start_url == "/login"
    assert [s.id for s in flow.steps] == ["s1", "s2", "s3", "s6", "s5", "s7"]
    assert [s.name for s in flow.steps] == ["Enter the user", "Type the password", "Click Log in", "Click {button}",
                                            "Choose Format CSV", "Check 'Export ready' is shown"]
    assert flow.steps[0].action.value == "{user_name}" and flow.steps[1].action.value == "{password}"
    assert flow.steps[4].action.value == "{format}"
    assert dict(flow.params) == {"user_name": "alice", "format": "CSV", "button": "Export"}
    assert flow.steps[3].target.name == "{button}" and flow.steps[3].target.text in ("{button}", "")
    assert [s.reversible for s in flow.steps] == [True, True, True, False, True, True]
    assert [s.read_only for s in flow.steps] == [False] * 5 + [True]
    assert flow.steps[5].assertions[0].kind == "text_contains"
    assert flow.steps[2].expect == "navigation" and flow.steps[2].recorded.observed == ("navigation", "content")
    crops = path.parent / "export_csv.crops"
    assert flow.steps[0].target.crop == "export_csv.crops/s1.png"
    assert sorted(p.name for p in crops.glob("*.png")) == ["s1.png", "s2.png", "s3.png", "s5.png", "s6.png",
                                                          "s7.png"]
    assert QImage(str(crops / "s6.png")).width() > 100
    text = path.read_text()
    assert "alice" in text and "demo-pass" not in text  # the literal became a default; no secret values

    # the project was reloaded: the new flow is listed, Replay is possible, Save has nothing new
    assert "export_csv" in w.flow_names() and "export_csv" in w.project.flows
    assert dock.state is RecorderState.SAVED and dock.replay_button.isEnabled()
    assert not dock.save_button.isEnabled()
    # editing again needs another save before a replay
    m.rename(0, "Type the user")
    assert dock.state is RecorderState.STOPPED and dock.save_button.isEnabled()
    assert not dock.replay_button.isEnabled()
    dock.save()
    assert load_flow(path).steps[0].name == "Type the user"


def test_a_flow_name_must_be_a_file_stem_and_existing_flows_are_flagged(qtbot, studio) -> None:  # noqa: ANN001
    w, _, _ = studio
    dock = w.recorder_dock
    w.action_record.trigger()
    assert valid_flow_name("leave_request-2") and not valid_flow_name("a b") and not valid_flow_name("../x")
    assert not valid_flow_name("x.yaml") and not valid_flow_name("")
    dock.name_edit.setText("my flow")
    assert not dock.record_button.isEnabled() and dock.name_hint.isVisibleTo(dock)
    assert "Not a file name" in dock.name_hint.text()
    dock.name_edit.setText("login_lockout")  # a flow of the demo project
    assert dock.record_button.isEnabled() and "replaces it" in dock.name_hint.text()
    assert dock.save_button.text() == "Replace"
    dock.name_edit.setText("brand_new")
    assert not dock.name_hint.isVisibleTo(dock) and dock.save_button.text() == "Save"
    assert dock.name_edit.placeholderText() and "demo" in dock.url_edit.placeholderText()


def test_the_url_field_is_passed_to_the_recorder(qtbot, studio) -> None:  # noqa: ANN001
    w, recorders, _ = studio
    w.action_record.trigger()
    w.recorder_dock.url_edit.setText("http://127.0.0.1:9999/reports")
    rec = _start(qtbot, w, recorders, "reports_flow")
    assert rec.url == "http://127.0.0.1:9999/reports"
    assert not w.recorder_dock.url_edit.isEnabled()


# --- live view forwarding ----------------------------------------------------------------------


def test_live_view_maps_widget_px_to_css_px_under_dpr_2_and_a_scaled_widget(qtbot) -> None:  # noqa: ANN001
    view = LiveView()
    qtbot.addWidget(view)
    view.resize(640, 600)
    img = QImage(1600, 900, QImage.Format.Format_RGB32)  # 800x450 CSS px at dpr 2
    img.fill(Qt.GlobalColor.white)
    view.set_image(img, device_pixel_ratio=2.0)
    assert view.scale() == pytest.approx(0.4)  # 640 / 1600; image drawn 640x360 from y 120
    assert view.map_to_css(QPointF(400, 280)) == pytest.approx((500.0, 200.0))
    assert view.map_to_css(QPointF(10, 50)) is None  # above the image
    box = BBox(100, 50, 200, 40)
    assert view.map_to_css(view.map_to_widget(box).topLeft()) == pytest.approx((100.0, 50.0))

    clicks: list[tuple[float, float, bool]] = []
    view.page_clicked.connect(lambda x, y, d: clicks.append((x, y, d)))
    view.show()
    qtbot.waitExposed(view)
    qtbot.mouseClick(view, Qt.MouseButton.LeftButton, pos=QPoint(400, 280))
    assert clicks == []  # passive by default
    view.set_interactive(True)
    qtbot.mouseClick(view, Qt.MouseButton.LeftButton, pos=QPoint(400, 280))
    assert clicks == []  # waits to see whether a second click makes it a double click
    qtbot.waitUntil(lambda: bool(clicks), timeout=T)
    qtbot.mouseClick(view, Qt.MouseButton.LeftButton, pos=QPoint(400, 20))  # outside the image: nothing
    qtbot.wait(QApplication.doubleClickInterval() + 50)
    assert clicks == [(500.0, 200.0, False)]
    # a click followed at once by a key is reported before the key
    order: list[str] = []
    view.page_clicked.connect(lambda *_a: order.append("click"))
    view.text_typed.connect(lambda t: order.append(t))
    qtbot.mouseClick(view, Qt.MouseButton.LeftButton, pos=QPoint(400, 280))
    qtbot.keyClicks(view, "x")
    assert order == ["click", "x"]
    # a double click is one gesture: no single click before it
    clicks.clear()
    qtbot.mouseDClick(view, Qt.MouseButton.LeftButton, pos=QPoint(400, 280))
    qtbot.wait(QApplication.doubleClickInterval() + 50)
    assert clicks == [(500.0, 200.0, True)]
    view.set_interactive(False)
    assert view.focusPolicy() == Qt.FocusPolicy.NoFocus


def test_clicks_wheel_and_keys_on_the_live_view_are_forwarded(qtbot, studio) -> None:  # noqa: ANN001
    w, recorders, _ = studio
    w.show()
    qtbot.waitExposed(w)
    rec = _start(qtbot, w, recorders)
    rec.frame("login", dpr=2.0)
    lv = w.live_view
    qtbot.waitUntil(lambda: lv.device_pixel_ratio == 2.0, timeout=T)
    assert lv.image.width() == 2560 and lv.interactive()
    assert 0 < lv.scale() < 0.5  # the widget is smaller than the 2560 px screenshot

    log_in = next(c for c in lv.candidates if c.descriptor.name == "Log in")
    bbox = log_in.descriptor.bbox
    centre = lv.map_to_widget(bbox).center()
    # widget px = offset + CSS * dpr * scale
    assert centre.x() == pytest.approx(lv.image_rect().x() + (bbox.x + bbox.width / 2) * 2.0 * lv.scale())
    n = len(rec.commands)
    qtbot.mouseClick(lv, Qt.MouseButton.LeftButton, pos=centre.toPoint())
    qtbot.waitUntil(lambda: len(rec.commands) > n, timeout=T)
    click = rec.commands[-1]
    assert isinstance(click, ForwardClick) and not click.double
    tol = 1.0 / (2.0 * lv.scale())  # one widget px, in CSS px
    assert click.x == pytest.approx(bbox.x + bbox.width / 2, abs=tol)
    assert click.y == pytest.approx(bbox.y + bbox.height / 2, abs=tol)

    n = len(rec.commands)
    qtbot.mouseClick(lv, Qt.MouseButton.LeftButton, pos=centre.toPoint())  # press, release, press...
    qtbot.mouseDClick(lv, Qt.MouseButton.LeftButton, pos=centre.toPoint())  # ...double click: one command
    qtbot.wait(QApplication.doubleClickInterval() + 50)
    dbl = rec.commands[n:]
    assert len(dbl) == 1 and isinstance(dbl[0], ForwardClick) and dbl[0].double
    assert dbl[0].x == pytest.approx(click.x, abs=tol) and dbl[0].y == pytest.approx(click.y, abs=tol)

    assert lv.hasFocus()
    n = len(rec.commands)
    qtbot.keyClicks(lv, "al")
    qtbot.keyClick(lv, Qt.Key.Key_Backspace)
    qtbot.keyClick(lv, Qt.Key.Key_Tab)
    qtbot.keyClick(lv, Qt.Key.Key_Return)
    qtbot.keyClick(lv, Qt.Key.Key_Escape)
    qtbot.keyClick(lv, Qt.Key.Key_Left)
    qtbot.keyClick(lv, Qt.Key.Key_Delete)
    qtbot.keyClick(lv, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    assert rec.commands[n:] == [ForwardType("a"), ForwardType("l"), ForwardKey("Backspace"), ForwardKey("Tab"),
                                ForwardKey("Enter"), ForwardKey("Escape"), ForwardKey("ArrowLeft"),
                                ForwardKey("Delete"), ForwardKey("Control+a")]
    assert lv.hasFocus()  # Tab went to the page, not to the next widget

    n = len(rec.commands)
    pos = centre
    wheel = QWheelEvent(pos, QPointF(lv.mapToGlobal(pos.toPoint())), QPoint(), QPoint(0, -240),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(lv, wheel)
    scroll = rec.commands[n]
    assert isinstance(scroll, ForwardScroll) and (scroll.dx, scroll.dy) == (0.0, 200.0)
    assert scroll.x == pytest.approx(click.x, abs=tol) and scroll.y == pytest.approx(click.y, abs=tol)

    # a run cannot start meanwhile (one page in the live view)
    assert not w.action_start.isEnabled() and w.start_run(("login_lockout",)) is False

    _stop(qtbot, w.recorder_dock)
    n = len(rec.commands)
    qtbot.mouseClick(lv, Qt.MouseButton.LeftButton, pos=centre.toPoint())
    qtbot.wait(QApplication.doubleClickInterval() + 50)
    assert len(rec.commands) == n and not lv.interactive()
    assert w.action_start.isEnabled()


def test_live_frames_go_to_the_live_view_and_engine_observations_wait(qtbot, studio) -> None:  # noqa: ANN001
    w, recorders, _ = studio
    rec = _start(qtbot, w, recorders)
    rec.frame("reports")
    qtbot.waitUntil(lambda: "reports" in w.caption.text(), timeout=T)
    assert "Recording export_csv" in w.caption.text() and "candidates" in w.caption.text()


# --- assertions ------------------------------------------------------------------------------


def test_a_picked_element_becomes_an_assertion(qtbot, studio) -> None:  # noqa: ANN001
    w, recorders, _ = studio
    dock = w.recorder_dock
    rec = _start(qtbot, w, recorders)
    dock.assert_button.click()
    assert rec.commands[-1] == SetInspect(True) and dock.inspecting
    assert w.live_view.cursor().shape() == Qt.CursorShape.CrossCursor

    alert = ElementDescriptor(tag="div", role="alert", name="Export ready: q3-report.csv (12 kB)",
                              bbox=BBox(48, 430, 520, 40))
    rec.pick(alert, text="Export ready: q3-report.csv (12 kB)", count=3, count_selector="div.alert",
             suggested=("text_contains", "visible", "count"))
    panel = dock.assertion_panel
    qtbot.waitUntil(lambda: panel.isVisibleTo(dock), timeout=T)
    assert [panel.kind_combo.itemData(i) for i in range(panel.kind_combo.count())] == [
        "text_contains", "visible", "count"]
    assert [panel.kind_combo.itemText(i) for i in range(panel.kind_combo.count())] == [
        "its text contains", "it is visible", "the number of elements like it is"]
    assert panel.expected_edit.text() == "Export ready: q3-report.csv (12 kB)"
    assert "alert" in panel.subject.text()
    panel.select_kind("count")
    assert panel.expected_edit.text() == "3" and "div.alert" in panel.hint
    panel.select_kind("visible")
    assert panel.expected_edit.text() == "" and not panel.expected_edit.isEnabled()
    panel.select_kind("text_contains")
    panel.expected_edit.setText("Export ready")
    panel.add_button.click()
    assert rec.commands[-1] == AddAssertion(1, "text_contains", "Export ready")
    assert not panel.isVisibleTo(dock)
    _rows(qtbot, dock, 1)  # the recorder answers with an assert step
    assert _cell(dock.model, 0, M.COL_ACTION) == "assert"
    assert _cell(dock.model, 0, M.COL_VALUE) == "text_contains \u201cExport ready\u201d"

    # a page-level text selection offers page assertions; a value pick prefills the value
    rec.pick(ElementDescriptor(), text="Quarterly reports", page_text=True)
    qtbot.waitUntil(lambda: panel.isVisibleTo(dock), timeout=T)
    assert panel.kind_combo.itemData(0) == "text_appears" and panel.expected_edit.text() == "Quarterly reports"
    field = ElementDescriptor(tag="input", role="textbox", name="User name")
    rec.pick(field, value="alice", suggested=("value", "enabled"))
    qtbot.waitUntil(lambda: panel.kind == "value", timeout=T)
    assert panel.expected_edit.text() == "alice"
    panel.cancel_button.click()
    assert not panel.isVisibleTo(dock)

    dock.assert_button.click()
    assert rec.commands[-1] == SetInspect(False)
    assert w.live_view.cursor().shape() == Qt.CursorShape.PointingHandCursor


# --- replay ----------------------------------------------------------------------------------


def test_replay_runs_the_saved_flow_and_shows_each_verdict(qtbot, studio) -> None:  # noqa: ANN001
    w, recorders, engines = studio
    dock = w.recorder_dock
    rec = _start(qtbot, w, recorders, "export_csv")
    rec.play_sample(4)
    _rows(qtbot, dock, 4)
    _stop(qtbot, dock)
    assert dock.save() is not None
    assert dock.replay_button.isEnabled()

    dock.replay_button.click()
    engine = engines[-1]
    assert engine.started and engine.commands == [Start(flows=("export_csv",))]
    assert [_cell(dock.model, r, M.COL_REPLAY) for r in range(4)] == ["pending"] * 4
    assert not dock.replay_button.isEnabled() and not dock.record_button.isEnabled()  # a run is active

    f, run = "export_csv", "r1"
    semantic = Resolution("semantic", "0:4", 0.84, 0.4, 3.0, reason="the submit button")
    events = [RunStarted(run, "Demo", (f,)), FlowStarted(run, f, tuple(s.step.title for s in sample_recording()[:4])),
              StepStarted(run, f, 0, "a", 1), VerdictReached(run, f, 0, Verdict("as_expected", "value")),
              StepFinished(run, f, 0, "passed", False, 10),
              StepStarted(run, f, 1, "b", 1), VerdictReached(run, f, 1, Verdict("as_expected", "value")),
              TargetResolved(run, f, 2, semantic, None),
              StepFinished(run, f, 1, "passed", False, 10),
              StepStarted(run, f, 2, "c", 1),
              VerdictReached(run, f, 2, Verdict("changed_unexpectedly", "navigation", ("value",), "stayed put")),
              StepFinished(run, f, 2, "failed", True, 10),
              StepStarted(run, f, 3, "d", 1)]
    with qtbot.waitSignal(w.bridge.event_received, timeout=T, check_params_cb=lambda e: e is events[-1]):
        engine.emit_from_thread(*events)
    replay = [_cell(dock.model, r, M.COL_REPLAY) for r in range(4)]
    assert replay == ["as expected", "as expected", "changed unexpectedly \u00b7 healed (semantic)", "running\u2026"]
    assert _cell(dock.model, 2, M.COL_REPLAY, Qt.ItemDataRole.ToolTipRole) == "stayed put"
    assert _cell(dock.model, 0, M.COL_REPLAY, Qt.ItemDataRole.ForegroundRole).color().name() == "#3fb96b"
    result = RunResult(run, f, "failed", (), 1, 1, 2.5)
    last = [VerdictReached(run, f, 3, Verdict("failed", "none", (), "element missing")),
            StepFinished(run, f, 3, "failed", False, 10), FlowFinished(run, result), RunFinished(run, (result,))]
    with qtbot.waitSignal(w.bridge.event_received, timeout=T, check_params_cb=lambda e: e is last[-1]):
        engine.emit_from_thread(*last)
    assert _cell(dock.model, 3, M.COL_REPLAY) == "failed"
    assert "Replay of" in dock.message.text() and "failed" in dock.message.text()
    assert dock.replay_button.isEnabled() and dock.record_button.isEnabled()


def test_reload_project_picks_up_new_flows_and_rebuilds_the_engine(qtbot, studio, demo_root: Path) -> None:  # noqa: ANN001
    w, _, engines = studio
    before = w.flow_names()
    w.set_checked_flows([before[0]])
    w.start_run()
    assert w.reload_project() is False  # not while a run is in progress
    done = RunFinished("x", ())
    with qtbot.waitSignal(w.bridge.event_received, timeout=T, check_params_cb=lambda e: e is done):
        engines[0].emit_from_thread(RunStarted("x", "Demo", (before[0],)), done)
    shutil.copy(demo_root / "flows" / "sort_table.yaml", demo_root / "flows" / "sort_again.yaml")
    text = (demo_root / "flows" / "sort_again.yaml").read_text().replace("name: sort_table", "name: sort_again")
    (demo_root / "flows" / "sort_again.yaml").write_text(text)
    assert w.reload_project()
    assert "sort_again" in w.flow_names() and w.checked_flows() == (before[0], "sort_again")
    assert engines[0].closed and w.bridge.engine is None
    assert w.start_run(("sort_again",)) and len(engines) == 2 and engines[1].commands == [Start(("sort_again",))]


# --- failures and lifecycle --------------------------------------------------------------------


def test_a_recorder_that_cannot_start_is_reported(qtbot, studio) -> None:  # noqa: ANN001
    w, _, _ = studio
    dock = w.recorder_dock

    def broken(project, flow_name, url, on_event, headless):  # noqa: ANN001, ANN202
        raise ModuleNotFoundError("No module named 'core.record.runner'")

    dock._factory = broken  # noqa: SLF001 - inject a failing factory after construction
    w.action_record.trigger()
    assert dock.start_recording() is False
    assert dock.state is RecorderState.IDLE and "core.record.runner" in dock.message.text()
    assert not w.live_view.interactive() and w.action_start.isEnabled()


def test_a_fatal_error_ends_the_recording_and_keeps_the_steps(qtbot, studio) -> None:  # noqa: ANN001
    w, recorders, _ = studio
    dock = w.recorder_dock
    rec = _start(qtbot, w, recorders)
    rec.play_sample(2)
    _rows(qtbot, dock, 2)
    rec.emit_from_thread(RecorderError("page closed", fatal=True))
    qtbot.waitUntil(lambda: dock.state is RecorderState.STOPPED, timeout=T)
    assert "page closed" in dock.message.text() and not w.live_view.interactive()
    assert dock.save_button.isEnabled()
    # a RecordingStopped that still follows is applied
    rec.emit_from_thread(RecordingStopped(Flow(rec.flow_name, "/login", tuple(rec.steps)), {}, "error: page closed"))
    qtbot.waitUntil(lambda: dock.model.base_flow is not None, timeout=T)
    assert dock.model.rowCount() == 2 and "error: page closed" in dock.message.text()


def test_events_of_an_old_session_are_dropped(qtbot, project) -> None:  # noqa: ANN001
    bridge = RecorderBridge()
    made: list[FakeRecorder] = []
    got: list[object] = []
    bridge.step_recorded.connect(lambda e, _img: got.append(e))
    bridge.open(project, "a", None, FakeRecorder.factory(made, announce=False))
    old = made[0]
    bridge.open(project, "b", None, FakeRecorder.factory(made, announce=False))
    assert old.closed and bridge.recorder is made[1]
    sample = sample_recording()[0]
    old.emit_from_thread(StepRecorded(0, sample.step, sample.crop_png))
    with qtbot.waitSignal(bridge.step_recorded, timeout=T):
        made[1].emit_from_thread(StepRecorded(0, sample.step, sample.crop_png))
    assert len(got) == 1 and bridge.dropped_count == 1
    bridge.close()
    assert made[1].closed and bridge.send(StopRecording()) is False


def test_live_frames_superseded_in_the_queue_are_not_decoded(qtbot, project) -> None:  # noqa: ANN001
    bridge = RecorderBridge()
    made: list[FakeRecorder] = []
    frames: list[tuple[LiveFrame, QImage]] = []
    bridge.live_frame.connect(lambda e, img: frames.append((e, img)))
    bridge.open(project, "a", None, FakeRecorder.factory(made, announce=False))
    rec = made[0]
    first, second = rec._frame_event("login"), rec._frame_event("reports")  # noqa: SLF001
    post = bridge._poster(bridge._session)  # noqa: SLF001 - the recorder's own callback
    with qtbot.waitSignal(bridge.live_frame, timeout=T):
        # both are queued before the decoder may take one (it waits for this lock): the first is superseded
        with bridge.decoder._cond:  # noqa: SLF001
            post(first)
            post(second)
    qtbot.wait(20)
    assert [e.url for e, _ in frames] == [second.url] and not frames[0][1].isNull()
    bridge.close()


def test_ctrl_r_toggles_the_recorder_and_closing_the_window_closes_the_recorder(qtbot, studio) -> None:  # noqa: ANN001
    w, recorders, _ = studio
    assert w.action_record.shortcut() == QKeySequence("Ctrl+R") and not w.action_record.isChecked()
    w.show()
    with qtbot.waitActive(w):
        w.activateWindow()
    qtbot.keyClick(w, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)
    assert w.recorder_dock.isVisible()
    rec = _start(qtbot, w, recorders)
    w.close()
    assert rec.closed and w.recorder_dock.bridge.recorder is None


@pytest.fixture
def make_dock(qtbot, project) -> Callable[..., RecorderDock]:  # noqa: ANN001
    def make(**options: object) -> RecorderDock:
        d = RecorderDock(project, **options)  # type: ignore[arg-type]
        qtbot.addWidget(d)
        return d
    return make


def test_the_dock_works_alone_without_a_replay_handler(qtbot, make_dock) -> None:  # noqa: ANN001
    made: list[FakeRecorder] = []
    dock = make_dock(recorder_factory=FakeRecorder.factory(made))
    dock.name_edit.setText("alone")
    assert dock.start_recording()
    qtbot.waitUntil(lambda: dock.state is RecorderState.RECORDING, timeout=T)
    made[0].play_sample(2)
    _rows(qtbot, dock, 2)
    dock.stop_recording()
    qtbot.waitUntil(lambda: dock.state is RecorderState.STOPPED, timeout=T)
    assert dock.save() is not None and not dock.replay_button.isEnabled() and dock.replay() is False


def test_values_of_password_fields_never_show_but_keys_pressed_in_them_do(qtbot) -> None:  # noqa: ANN001
    m = RecordedStepsModel()
    pw = ElementDescriptor(tag="input", role="textbox", name="Password", type="password")
    m.add_recorded(0, Step("s1", Action("input", "hunter2"), target=pw))
    m.add_recorded(1, Step("s2", Action("press", "Enter"), target=pw))
    m.add_recorded(2, Step("s3", Action("input", "{password}"), target=pw))
    assert [_cell(m, r, M.COL_VALUE) for r in range(3)] == ["\u2022" * 6, "Enter", "{password}"]
    assert not m.row(0).can_parametrize()  # a secret literal never becomes a parameter default


@pytest.mark.browser
def test_a_real_recording_is_saved_and_replayed(qtbot, demo_root: Path) -> None:  # noqa: ANN001
    """Real RecorderRunner (headless Chromium, demo app) driven through the live view, then the real engine."""
    for f in (demo_root / "flows").glob("*.yaml"):
        f.unlink()
    w = MainWindow(demo_root, close_timeout=15.0)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    qtbot.waitExposed(w)
    dock, lv = w.recorder_dock, w.live_view
    w.action_record.trigger()
    dock.name_edit.setText("sign_in")
    assert dock.start_recording()
    qtbot.waitUntil(lambda: any(c.descriptor.label_text == "User name" for c in lv.candidates), timeout=60_000)
    user = next(c for c in lv.candidates if c.descriptor.label_text == "User name")
    qtbot.mouseClick(lv, Qt.MouseButton.LeftButton, pos=lv.map_to_widget(user.descriptor.bbox).center().toPoint())
    qtbot.keyClicks(lv, "alice")
    qtbot.keyClick(lv, Qt.Key.Key_Tab)
    # the click that focused the field is taken into the typing's step once the typing commits
    qtbot.waitUntil(lambda: dock.model.rowCount() >= 1 and dock.model.row(0).step.action.kind == "input",
                    timeout=30_000)
    assert dock.model.row(0).step.action.kind == "input" and dock.model.row(0).step.action.value == "{user}"
    assert dock.model.row(0).crop_png
    dock.stop_recording()
    qtbot.waitUntil(lambda: dock.state is RecorderState.STOPPED, timeout=60_000)
    path = dock.save()
    assert path is not None and load_flow(path).steps[0].action.value == "{user}"
    assert "sign_in" in w.flow_names()
    assert dock.replay()
    qtbot.waitUntil(lambda: w.state.value == "finished", timeout=120_000)
    first = _cell(dock.model, 0, M.COL_REPLAY)
    assert first and first.startswith("as expected"), first
    w.close()


def test_the_steps_table_marks_names_to_review(qtbot):  # noqa: ANN001
    m = RecordedStepsModel()
    fine = Step("s1", name="Click Save", action=Action("click"), target=ElementDescriptor(
        tag="button", role="button", name="Save", text="Save", css_path="button#save"))
    twin = Step("s2", name="Click Edit", action=Action("click"), target=ElementDescriptor(
        tag="a", role="link", name="Edit", text="Edit", css_path="a#e2"))
    blank = Step("s3", name="Click button", action=Action("click"), target=ElementDescriptor(
        tag="button", role="button", css_path="button#gear"))
    m.add_recorded(0, fine, same_named=0)
    m.add_recorded(1, twin, same_named=1)
    m.add_recorded(2, blank)
    assert [[f.kind for f in _cell(m, i, M.COL_TITLE, M.ReviewRole)] for i in range(3)] == [
        [], ["duplicate_name"], ["empty_name"]]
    assert _cell(m, 0, M.COL_TITLE, Qt.ItemDataRole.ForegroundRole) is None
    amber = _cell(m, 1, M.COL_TITLE, Qt.ItemDataRole.ForegroundRole)
    assert amber is not None and amber.color().name() == "#f5a524"
    assert "check: 2 elements on the page are a link named 'Edit'" in _cell(m, 1, M.COL_TITLE,
                                                                             Qt.ItemDataRole.ToolTipRole)
    assert "check:" not in _cell(m, 0, M.COL_TITLE, Qt.ItemDataRole.ToolTipRole)
    # the recorder replaced its step 2 (a merge): the new step's count replaces the old one's
    m.add_recorded(1, Step("s2", name="Click Edit", action=Action("click"), target=twin.target), same_named=0)
    assert _cell(m, 1, M.COL_TITLE, M.ReviewRole) == []


# --- a flow file changed on disk since the dock saved it (issue 23 item 1) --------------------------------------


def _saved(qtbot, w: MainWindow, recorders: list[FakeRecorder]) -> Path:  # noqa: ANN001
    dock = w.recorder_dock
    rec = _start(qtbot, w, recorders, "export_csv")
    rec.play_sample()
    _rows(qtbot, dock, 7)
    _stop(qtbot, dock)
    path = dock.save()
    assert path is not None and len(load_flow(path).steps) == 7
    return path


def _edit_on_disk(path: Path) -> None:
    """What an accepted correction or a hand edit does: the flow file gains a step (here after step 3)."""
    import yaml  # noqa: PLC0415

    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc["steps"].insert(3, {"id": "s3_h1", "name": "Click Dismiss", "action": "click", "selector": "#dismiss"})
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")


def _tick_read_only(m: RecordedStepsModel, row: int) -> None:
    assert m.setData(m.index(row, M.COL_READ_ONLY), Qt.CheckState.Checked.value, Qt.ItemDataRole.CheckStateRole)


def test_a_file_changed_on_disk_is_reloaded_when_nothing_was_edited(qtbot, studio) -> None:  # noqa: ANN001
    w, recorders, _ = studio
    dock = w.recorder_dock
    path = _saved(qtbot, w, recorders)
    _edit_on_disk(path)
    # the studio's file watcher reloads the project; the dock, with nothing edited, takes the file as it is now
    qtbot.waitUntil(lambda: dock.model.rowCount() == 8, timeout=T)
    assert [r.id for r in dock.model.rows()][3] == "s3_h1" and "Reloaded" in dock.message.text()
    _tick_read_only(dock.model, 0)
    dock.save_button.click()
    flow = load_flow(path)
    assert [s.id for s in flow.steps][3] == "s3_h1" and len(flow.steps) == 8  # the change on disk is kept
    assert flow.steps[0].read_only  # and so is the edit made after it


def test_save_never_writes_a_stale_copy_over_a_file_changed_on_disk(qtbot, studio) -> None:  # noqa: ANN001
    from PySide6.QtCore import QTimer  # noqa: PLC0415

    w, recorders, _ = studio
    dock = w.recorder_dock
    path = _saved(qtbot, w, recorders)
    _tick_read_only(dock.model, 0)  # edited in the dock ...
    _edit_on_disk(path)  # ... while a correction was accepted
    on_disk = path.read_bytes()
    qtbot.waitUntil(lambda: "changed on disk" in dock.message.text(), timeout=T)  # said, the edits kept
    assert dock.model.rowCount() == 7 and dock.model.row(0).read_only

    def answer(choice: str) -> None:
        def click() -> None:
            assert dock.conflict_box is not None and dock.conflict_box.isVisible()
            dock.conflict_buttons[choice].click()
        QTimer.singleShot(50, click)

    answer("cancel")
    dock.save_button.click()
    assert path.read_bytes() == on_disk and "Not saved" in dock.message.text()  # nothing written over it

    answer("save_as")
    dock.save_button.click()
    mine = path.with_name("export_csv_2.yaml")
    assert path.read_bytes() == on_disk and len(load_flow(mine).steps) == 7 and load_flow(mine).steps[0].read_only
    assert dock.flow_name() == "export_csv_2"



def test_my_edits_can_be_applied_to_the_file_as_it_is_on_disk(qtbot, studio) -> None:  # noqa: ANN001
    from PySide6.QtCore import QTimer  # noqa: PLC0415

    w, recorders, _ = studio
    dock = w.recorder_dock
    path = _saved(qtbot, w, recorders)
    _tick_read_only(dock.model, 0)
    dock.model.rename(1, "Type the secret")
    _edit_on_disk(path)
    QTimer.singleShot(50, lambda: dock.conflict_buttons["merge"].click())
    dock.save_button.click()
    flow = load_flow(path)
    assert [s.id for s in flow.steps] == ["s1", "s2", "s3", "s3_h1", "s4", "s5", "s6", "s7"]  # the file's step kept
    assert flow.steps[0].read_only and flow.steps[1].name == "Type the secret"  # and my edits applied
    assert not flow.steps[3].read_only
    assert dock.model.rowCount() == 8 and dock.state is RecorderState.SAVED and not dock.dirty


def test_reload_drops_the_docks_edits_and_shows_the_file(qtbot, studio) -> None:  # noqa: ANN001
    from PySide6.QtCore import QTimer  # noqa: PLC0415

    w, recorders, _ = studio
    dock = w.recorder_dock
    path = _saved(qtbot, w, recorders)
    _tick_read_only(dock.model, 0)
    _edit_on_disk(path)
    on_disk = path.read_bytes()
    QTimer.singleShot(50, lambda: dock.conflict_buttons["reload"].click())
    dock.save_button.click()
    assert path.read_bytes() == on_disk
    assert dock.model.rowCount() == 8 and not dock.model.row(0).read_only and not dock.dirty
