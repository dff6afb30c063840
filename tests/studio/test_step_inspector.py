"""The step inspector and the element picker on real runs of the demo app (real Chromium, the real store).

Runs ``export_report`` through the engine twice - once keeping every screenshot (evidence ``full``), once
keeping them only for steps that need a closer look (``failures``) - then drives the inspector and the picker
with mouse clicks as a person would: open a step, switch Before / Action / After, read the locator, requests and
timing, pick another element on the screenshot, set it as the step's target in the flow file, undo.  Offscreen
screenshots of what was shown go to ``/tmp/inspect_shots``.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

from core.engine.plugins.snapshot import snapshot_relpath
from core.engine.session import ProjectSession
from core.heal.flowfile import digest
from core.project import load_project
from core.store import Store
from core.store.heals import HealTable
from studio.inspector import StepInspector
from studio.picker import PICKED_STRATEGY
from studio.theme import apply_theme

ROOT = Path(__file__).resolve().parents[2]
SHOTS = Path("/tmp/inspect_shots")
#: The comment the test writes into the flow file: a pick must leave it where it is.
COMMENT = "# kept by hand: the export button, next to its look-alike\n"


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> tuple[Path, str, str]:  # noqa: ANN001
    """The demo project copied, ``export_report`` run at evidence ``full`` then ``failures``: (root, run ids)."""
    root = tmp_path_factory.mktemp("inspect") / "demo"
    shutil.copytree(ROOT / "projects" / "demo", root, ignore=shutil.ignore_patterns(".steadyhand"))
    settings = yaml.safe_load((root / "steadyhand.yaml").read_text())
    settings["site_options"]["latency_ms"] = "150"
    (root / "steadyhand.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))
    flow = root / "flows" / "export_report.yaml"
    text = flow.read_text()
    flow.write_text(text.replace("- id: s4\n", COMMENT + "- id: s4\n", 1))
    ids = []
    for level in ("full", "failures"):
        with ProjectSession(load_project(root), headless=True, evidence=level) as session:
            result = session.run_flow(session.project.flows["export_report"])
            assert result.status == "passed", result.error
            ids.append(result.run_id)
    return root, ids[0], ids[1]


@pytest.fixture
def inspector(qtbot, demo):  # noqa: ANN001, ANN201
    from PySide6.QtWidgets import QApplication

    apply_theme(QApplication.instance())  # type: ignore[arg-type]
    root, _full, _failures = demo
    w = StepInspector(root / ".steadyhand", load_project(root))
    qtbot.addWidget(w)
    w.resize(1600, 950)
    w.show()
    qtbot.waitExposed(w)
    return w


def _shot(widget, name: str) -> None:  # noqa: ANN001
    SHOTS.mkdir(parents=True, exist_ok=True)
    widget.grab().save(str(SHOTS / f"{name}.png"))


def _click(widget) -> None:  # noqa: ANN001
    QTest.mouseClick(widget, Qt.MouseButton.LeftButton)


def _click_css(w: StepInspector, x: float, y: float) -> None:
    """Click the canvas at CSS px (x, y) of the shown observation."""
    k = w.canvas.scale() * w.canvas.dpr
    at = QPoint(int(x * k), int(y * k))
    QTest.mouseMove(w.canvas, at)
    QTest.mouseClick(w.canvas, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, at)


def test_each_step_has_its_page_stored_without_secrets(demo) -> None:  # noqa: ANN001
    root, full, failures = demo
    media = root / ".steadyhand"
    with Store.open(media / "store.sqlite", read_only=True) as store:
        steps = store.run_detail(full).steps
    files = [json.loads((media / snapshot_relpath(full, s.index)).read_text()) for s in steps]
    export = next(f for f in files if f["step_id"] == "s4")
    x, y, bw, bh = export["target"]["box"]
    px, py = export["point"]
    assert x <= px <= x + bw and y <= py <= y + bh, "the action point lies on the target"
    refs = {e["ref"]: e for e in export["before"]["elements"]}
    assert refs[export["target"]["ref"]]["descriptor"]["name"] == "Export report"
    sign_in = next(f for f in files if f["step_id"] == "s3")
    assert any(r["method"] == "POST" for r in sign_in["requests"]), "the login form's request is listed"
    lean = json.loads((media / snapshot_relpath(failures, 3)).read_text())
    assert lean["target"] and lean["before"] is not None and "elements" not in lean["before"], \
        "without a screenshot the page's elements are not kept"
    for f in (media / "inspect").rglob("*.json"):
        assert "demo-pass" not in f.read_text(), f"the password reached {f.name}"


def test_a_step_shown_as_the_trace_viewer_shows_an_action(inspector, demo) -> None:  # noqa: ANN001
    root, full, _ = demo
    w = inspector
    assert w.open_run(full[:8], 3)  # the 8 characters History prints are enough
    assert w.current.step.title == "Export report" and w.step_list.currentRow() == 3
    _click(w.mode_buttons["before"])
    assert w.mode == "before" and not w.canvas.image.isNull()
    assert w.canvas.target is not None and w.canvas.target == w.current.target_box and w.canvas.point is None
    _click(w.mode_buttons["action"])
    assert w.canvas.point == w.current.point and "pointer landed" in w.caption.text()
    _shot(w, "inspector_action")
    w.tabs.setCurrentWidget(w.locator_view)
    text = w.locator_view.toPlainText()
    assert "found as recorded" in text and "Why:" in text and "_" not in text.split("Why:")[0]
    _shot(w, "inspector_locator")
    _click(w.mode_buttons["after"])
    assert w.canvas.target is None and w.canvas.regions, "what changed is drawn on the after image"
    assert "Confirm" in {e.descriptor.name for e in w.canvas.elements}, "the after page's dialog is listed"
    w.tabs.setCurrentWidget(w.step_view)
    assert "as expected" in w.step_view.toPlainText() and "overlay_open" not in w.step_view.toPlainText()
    # the sign-in step's requests, listed one by one
    w.step_list.setCurrentRow(2)
    assert w.current.step.title == "Sign in"
    rows = [w.network.item(r, 0).text() + " " + w.network.item(r, 1).text() for r in range(w.network.rowCount())]
    assert w.network.rowCount() == len(w.current.requests) >= 1 and any(r.startswith("POST ") for r in rows)
    w.tabs.setCurrentWidget(w.network)
    _shot(w, "inspector_network")
    w.tabs.setCurrentWidget(w.phases)
    assert [n for n, _ms in w.phases.phases][:2] == ["observe", "fingerprint"] and "active" in w.phases.note
    _shot(w, "inspector_timing")
    # zoom in and back to fit
    fit = w.canvas.scale()
    _click(w.zoom_in)
    assert w.canvas.scale() == pytest.approx(fit * 1.25)
    _click(w.zoom_fit)
    assert w.canvas.zoom is None and w.canvas.scale() == pytest.approx(fit)


def test_a_screenshot_not_kept_is_said_plainly(inspector, demo) -> None:  # noqa: ANN001
    _root, _full, failures = demo
    w = inspector
    assert w.open_run(failures, 3)
    _click(w.mode_buttons["before"])
    assert w.canvas.image.isNull() and "No screenshot of the page before the action" in w.canvas.message
    assert "evidence: failures" in w.canvas.message and not w.pick_button.isEnabled()
    assert w.canvas.target is None or w.canvas.image.isNull()
    w.tabs.setCurrentWidget(w.locator_view)
    assert "found as recorded" in w.locator_view.toPlainText(), "the locator's record is there without images"
    _shot(w, "inspector_no_screenshot")


def test_pick_another_element_set_it_as_the_target_and_undo(inspector, demo) -> None:  # noqa: ANN001
    root, full, _ = demo
    flow = root / "flows" / "export_report.yaml"
    original = flow.read_bytes()
    w = inspector
    assert w.open_run(full, 3)
    _click(w.mode_buttons["before"])
    _click(w.pick_button)
    assert w.canvas.picking
    save = next(e for e in w.canvas.elements if e.descriptor.name == "Save report")
    b = save.box
    _click_css(w, b.x + b.width / 2, b.y + b.height / 2)
    panel = w.pick_panel
    assert w.tabs.currentWidget() is panel and panel.check is not None
    check = panel.check
    assert check.element.ref == save.ref and check.finds
    assert ("name", "Export report", "Save report") in check.changes
    assert 'button named "Save report"' in panel.locator_label.text() and "unique on this page" in \
        panel.locator_label.text()
    assert "finds exactly this element" in panel.engine_label.text()
    _shot(w, "picker_checked")
    if panel.confirm_box.isVisible():
        assert not panel.set_button.isEnabled()
        _click(panel.confirm_box)
    assert panel.set_button.isEnabled()
    _click(panel.set_button)
    assert panel.result is not None, panel.result_label.text()
    written = flow.read_text()
    step = next(s for s in yaml.safe_load(written)["steps"] if s["id"] == "s4")
    assert step["target"]["name"] == "Save report" and "selector" not in step
    assert COMMENT in written, "the flow file's comment stays where it was"
    assert next(s for s in load_project(root).flows["export_report"].steps if s.id == "s4").target.name == \
        "Save report"
    with Store.open(root / ".steadyhand" / "store.sqlite", read_only=True) as store:
        rec = HealTable(store).get(panel.result.proposal_id)
    assert rec is not None and rec.status == "accepted" and rec.strategy == PICKED_STRATEGY and rec.diff
    assert rec.before_screenshot == w.current.before_rel
    _shot(w, "picker_written")
    _click(panel.undo_button)
    assert flow.read_bytes() == original and "Undone" in panel.result_label.text()
    # picked again after the undo: written again (a pick is its own decision each time)
    _click_css(w, b.x + b.width / 2, b.y + b.height / 2)
    if panel.confirm_box.isVisible():
        _click(panel.confirm_box)
    _click(panel.set_button)
    assert panel.result is not None and "Save report" in flow.read_text()
    # the file changes behind the studio's back: the undo refuses instead of overwriting that change
    flow.write_text(flow.read_text() + "# edited by hand\n")
    _click(panel.undo_button)
    assert "changed since" in panel.result_label.text() and flow.read_text().endswith("# edited by hand\n")
    flow.write_bytes(original)


def test_a_look_alike_needs_confirmation_and_a_stale_check_writes_nothing(inspector, demo) -> None:  # noqa: ANN001
    root, full, _ = demo
    flow = root / "flows" / "export_report.yaml"
    original = flow.read_bytes()
    w = inspector
    assert w.open_run(full, 3)
    _click(w.mode_buttons["before"])
    _click(w.pick_button)
    approve = [e for e in w.canvas.elements if e.descriptor.name == "Approve" and e.enabled]
    assert len(approve) >= 2
    b = approve[0].box
    _click_css(w, b.x + b.width / 2, b.y + b.height / 2)
    panel = w.pick_panel
    check = panel.check
    assert check is not None and check.matches >= 2 and "names" in panel.locator_label.text()
    assert panel.confirm_box.isVisible() and not panel.set_button.isEnabled(), "a look-alike needs a confirmation"
    _click(panel.confirm_box)
    assert panel.set_button.isEnabled() == (not check.blocking)
    # the flow file changes between the check and the write: nothing is written
    flow.write_text(flow.read_text().replace(COMMENT, COMMENT + "# another edit\n"))
    changed = flow.read_bytes()
    if panel.set_button.isEnabled():
        _click(panel.set_button)
        assert panel.result is None and "changed on disk since the element was picked" in panel.result_label.text()
    assert flow.read_bytes() == changed and digest(changed) != check.file_digest
    _shot(w, "picker_refused")
    flow.write_bytes(original)


def test_the_inspector_opens_from_a_double_click_in_history(qtbot, demo) -> None:  # noqa: ANN001
    from studio.main_window import MainWindow
    from studio.testing import RecordingEngine

    root, full, _ = demo
    w = MainWindow(root, engine_factory=RecordingEngine.factory([]), close_timeout=5.0)
    qtbot.addWidget(w)
    try:
        assert w.history_panel.open_run(full)
        lst = w.history_panel.viewer.step_list
        w.history_dock.show()
        w.history_dock.raise_()
        w.show()
        qtbot.waitExposed(w)
        item = lst.item(4)
        rect = lst.visualItemRect(item)
        assert lst.isVisible() and rect.isValid()
        # a person's double-click: press and release, then the second press (Qt's views act on a double-click
        # only on the item the first press was on)
        QTest.mouseClick(lst.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, rect.center())
        QTest.mouseDClick(lst.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, rect.center())
        ins = next(c for c in w.findChildren(StepInspector))
        assert ins.isVisible() and ins.run_id == full and ins.current.index == 4
        assert ins.current.step.title == "Confirm the export"
        # the menu action opens the step selected in History
        lst.setCurrentRow(1)
        w.action_inspect.trigger()
        assert ins.current.index == 1
    finally:
        w.shutdown()


def test_pick_a_target_on_the_live_page_of_a_paused_run(qtbot, tmp_path) -> None:  # noqa: ANN001
    """A real run paused by a breakpoint before "Export report": the page it is at, picked on, fixes that step."""
    from studio.main_window import MainWindow
    from studio.run_state import RunState

    project = tmp_path / "demo"
    shutil.copytree(ROOT / "projects" / "demo", project, ignore=shutil.ignore_patterns(".steadyhand"))
    for f in (project / "flows").glob("*.yaml"):
        if f.stem != "export_report":
            f.unlink()
    doc = yaml.safe_load((project / "steadyhand.yaml").read_text())
    doc["site_options"]["latency_ms"] = "100"
    (project / "steadyhand.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    flow = project / "flows" / "export_report.yaml"
    w = MainWindow(project, close_timeout=15.0)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    with qtbot.waitActive(w):
        w.activateWindow()
    try:
        assert w.steps_panel.model.current_flow == "export_report"
        g = w.breakpoint_gutter
        y = g.sectionViewportPosition(3) + g.sectionSize(3) // 2
        qtbot.mouseClick(g.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(g.width() // 2, y))  # "Export report"
        qtbot.keyClick(w, Qt.Key.Key_F5)
        qtbot.waitUntil(lambda: w.state in (RunState.PAUSED, RunState.FINISHED), timeout=120_000)
        assert w.state is RunState.PAUSED
        w.action_pick_live.trigger()
        ins = next(c for c in w.findChildren(StepInspector))
        assert ins.isVisible() and ins.live_image is not None, w.statusBar().currentMessage()
        assert ins.current.step.step_id == "s4" and "live page" in ins.header.text()
        assert ins.canvas.picking and not ins.canvas.image.isNull()
        save = next(e for e in ins.canvas.elements if e.descriptor.name == "Save report")
        _click_css(ins, save.box.x + save.box.width / 2, save.box.y + save.box.height / 2)
        panel = ins.pick_panel
        assert panel.check is not None and panel.check.finds, panel.engine_label.text()
        _shot(ins, "picker_live_page")
        if panel.confirm_box.isVisible():
            _click(panel.confirm_box)
        _click(panel.set_button)
        assert panel.result is not None, panel.result_label.text()
        step = next(s for s in yaml.safe_load(flow.read_text())["steps"] if s["id"] == "s4")
        assert step["target"]["name"] == "Save report"
        qtbot.keyClick(w, Qt.Key.Key_F5, Qt.KeyboardModifier.ShiftModifier)  # Stop
        qtbot.waitUntil(lambda: w.state is RunState.FINISHED, timeout=120_000)
    finally:
        w.shutdown()


def test_an_irreversible_step_asks_first_and_a_parametrised_target_is_refused(inspector, demo) -> None:  # noqa: ANN001
    root, full, _ = demo
    flow = root / "flows" / "export_report.yaml"
    original = flow.read_bytes()
    text = original.decode()
    at = text.index("- id: s5\n")
    # the confirmation step marked irreversible, the user name field's target named by a parameter
    edited = text[:at] + text[at:].replace("  action: click\n", "  action: click\n  reversible: false\n", 1)
    edited = edited.replace("    name: User name\n", "    name: '{user} name'\n", 1)
    flow.write_text(edited)
    try:
        w = inspector
        assert w.open_run(full, 4)
        _click(w.mode_buttons["before"])
        _click(w.pick_button)
        cancel = next(e for e in w.canvas.elements if e.descriptor.name == "Cancel")
        _click_css(w, cancel.box.x + cancel.box.width / 2, cancel.box.y + cancel.box.height / 2)
        panel = w.pick_panel
        assert panel.check is not None and panel.check.finds and not panel.check.blocking
        assert panel.confirm_box.isVisible() and "cannot be taken back" in panel.confirm_text.text()
        assert not panel.set_button.isEnabled()
        _click(panel.confirm_box)
        assert panel.set_button.isEnabled()
        _shot(w, "picker_irreversible")
        w.step_list.setCurrentRow(0)  # "Type the user name": its target has a parameter
        _click(w.mode_buttons["before"])
        _click(w.pick_button)
        field = next(e for e in w.canvas.elements if e.descriptor.label == "Password")
        _click_css(w, field.box.x + field.box.width / 2, field.box.y + field.box.height / 2)
        assert panel.check is not None and any("parameters" in b for b in panel.check.blocking)
        assert not panel.set_button.isEnabled() and "parameters" in panel.engine_label.text()
        assert flow.read_text() == edited, "nothing was written"
    finally:
        flow.write_bytes(original)


def test_edit_a_steps_value_and_expected_change_in_place_and_undo(inspector, demo) -> None:  # noqa: ANN001
    root, full, _ = demo
    flow = root / "flows" / "export_report.yaml"
    original = flow.read_bytes()
    w = inspector
    assert w.open_run(full, 3)  # "Export report": a click, expecting a dialog
    panel = w.edit_panel
    w.tabs.setCurrentWidget(panel)
    assert panel.action.currentData() == "click" and panel.expect.currentData() == "overlay_open"
    assert not panel.save_button.isEnabled(), "nothing changed yet"
    panel.expect.setFocus()
    QTest.keyClick(panel.expect, Qt.Key.Key_Down)  # overlay_open -> overlay_close
    assert panel.expect.currentData() == "overlay_close"
    assert "-  expect: overlay_open" in panel.diff.toPlainText() and "+  expect: overlay_close" in \
        panel.diff.toPlainText()
    _shot(w, "inspector_edit_step")
    _click(panel.save_button)
    written = flow.read_text()
    step = next(s for s in yaml.safe_load(written)["steps"] if s["id"] == "s4")
    assert step["expect"] == "overlay_close" and COMMENT in written
    assert len(written.splitlines()) == len(original.decode().splitlines()), "one line changed in place"
    _click(panel.undo_button)
    assert flow.read_bytes() == original
    # a value on a click step the flow would not load with is refused before anything is written
    w.step_list.setCurrentRow(0)  # "Type the user name": its value is the {user} parameter
    assert panel.value.text() == "{user}"
    panel.value.setFocus()
    QTest.keyClicks(panel.value, " Smith")
    assert "+  value: '{user} Smith'" in panel.diff.toPlainText()
    flow.write_text(flow.read_text() + "# edited elsewhere\n")  # the file changes behind the panel's back
    _click(panel.save_button)
    assert "changed on disk" in panel.note.text() and "Smith" not in flow.read_text()
    flow.write_bytes(original)


def test_the_step_paused_at_opens_from_the_timeline_with_its_attempts(qtbot, tmp_path) -> None:  # noqa: ANN001
    """trial-57: a double click on the paused step of the Timeline opened the inspector on step 1, listing only the
    steps already finished.  A real run of leave_request whose Submit was renamed in the flow: the engine tries
    step 11, fails, escalates and waits there."""
    from studio.main_window import MainWindow
    from studio.run_state import RunState

    project = tmp_path / "demo"
    shutil.copytree(ROOT / "projects" / "demo", project, ignore=shutil.ignore_patterns(".steadyhand"))
    for f in (project / "flows").glob("*.yaml"):
        if f.stem != "leave_request":
            f.unlink()
    flow = project / "flows" / "leave_request.yaml"
    text = flow.read_text(encoding="utf-8")
    i = text.index("- id: s11\n")
    flow.write_text(text[:i] + text[i:].replace("Submit", "Send it").replace("submit-request", "send-it"),
                    encoding="utf-8")
    w = MainWindow(project, run_on_show=True, close_timeout=15.0)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    try:
        qtbot.waitUntil(lambda: w.state is RunState.PAUSED and w.escalations_panel.model.open_count == 1,
                        timeout=120_000)
        w.timeline_dock.raise_()
        panel = w.timeline_panel
        qtbot.waitUntil(lambda: any(panel.model.step(r).paused for r in range(panel.model.rowCount())), timeout=10_000)
        row = next(r for r in range(panel.model.rowCount()) if panel.model.step(r).paused)
        paused = panel.model.step(row)
        assert paused.index == 10
        # the Timeline row says its attempts so far (trial-56)
        assert "attempt" in panel.model.data(panel.model.index(row, panel.model.COL_STATUS))
        view = panel.table
        idx = panel.proxy.mapFromSource(panel.model.index(row, 1))
        view.scrollTo(idx)
        pos = view.visualRect(idx).center()
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
        QTest.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
        qtbot.waitUntil(lambda: bool(w.findChildren(StepInspector)), timeout=5000)
        ins = w.findChildren(StepInspector)[0]
        assert ins.isVisible()
        assert ins.current.index == 10, ins.header.text()  # the clicked step, not step 1
        assert [s.index for s in ins.steps] == list(range(11))  # the paused step listed after the finished ones
        assert ins.current.step.title and ins.current.step.attempts >= 1 and ins.current.resolutions
        assert "paused" in ins.step_list.item(10).text()
        _shot(ins, "inspector_paused_step")
        qtbot.keyClick(w, Qt.Key.Key_F5, Qt.KeyboardModifier.ShiftModifier)  # Stop
        qtbot.waitUntil(lambda: w.state is RunState.FINISHED, timeout=120_000)
    finally:
        w.shutdown()
