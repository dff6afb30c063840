"""Run exactly what you want (issue 23, beyond the fixes, item 3), with the REAL engine on the demo app:
one flow from its context menu, up to / through a step from the steps table's context menu (the steps before
it replayed, then a pause), and a watch mode that runs a flow again when its file changes on disk."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMenu

from core.engine.events import FlowFinished, FlowStarted
from studio.main_window import MainWindow
from studio.run_state import RunState

DEMO = Path(__file__).resolve().parents[2] / "projects" / "demo"
TIMEOUT_MS = 120_000


def _window(qtbot, tmp_path: Path) -> tuple[MainWindow, list]:  # noqa: ANN001
    root = tmp_path / "demo"
    shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns(".steadyhand"))
    cfg = root / "steadyhand.yaml"
    cfg.write_text(cfg.read_text(encoding="utf-8").replace('latency_ms: "800"', 'latency_ms: "0"'), encoding="utf-8")
    w = MainWindow(root, close_timeout=15.0)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    events: list = []
    w.bridge.event_received.connect(events.append)
    w.show()
    return w, events


def _menu_action(menu: QMenu, starts: str):  # noqa: ANN202
    return next(a for a in menu.actions() if a.text().startswith(starts))


def _flow_menu(w: MainWindow, name: str) -> QMenu:
    row = w.flow_names().index(name)
    w.flows_list.setCurrentRow(row)
    pos = w.flows_list.visualItemRect(w.flows_list.item(row)).center()
    w._flows_menu(pos)  # noqa: SLF001 - what a right click on the item opens
    return w._context_menu  # noqa: SLF001


def test_run_one_flow_from_its_context_menu_and_the_toolbar(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    w, events = _window(qtbot, tmp_path)
    assert len(w.checked_flows()) == 4  # F5 would run all four
    menu = _flow_menu(w, "sort_table")
    _menu_action(menu, "Run sort_table").trigger()
    qtbot.waitUntil(lambda: w.state is RunState.FINISHED, timeout=TIMEOUT_MS)
    assert [e.flow for e in events if isinstance(e, FlowStarted)] == ["sort_table"]
    assert [e.result.status for e in events if isinstance(e, FlowFinished)] == ["passed"]
    assert w.action_run_flow.isEnabled() and w.action_run_flow.text() == "Run this flow"
    w.action_run_flow.trigger()  # the toolbar: the selected flow again, alone
    qtbot.waitUntil(lambda: w.state is RunState.FINISHED and len([e for e in events if isinstance(e, FlowFinished)]) == 2,
                    timeout=TIMEOUT_MS)
    assert [e.flow for e in events if isinstance(e, FlowStarted)] == ["sort_table", "sort_table"]
    shots = os.environ.get("STEADYHAND_SHOTS")
    if shots:
        _flow_menu(w, "sort_table").grab().save(str(Path(shots) / "flow-context-menu.png"))
    w.close()


def test_run_through_a_step_pauses_after_it_then_goes_on(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    w, events = _window(qtbot, tmp_path)
    book_before = w.breakpoint_book.breakpoints
    w.flows_list.setCurrentRow(w.flow_names().index("sort_table"))
    t = w.steps_panel.table
    t.selectRow(1)
    w._steps_menu(t.visualRect(t.model().index(1, 1)).center())  # noqa: SLF001 - a right click on step 2
    menu = w._context_menu  # noqa: SLF001
    assert _menu_action(menu, "Run up to step 2").isEnabled()
    _menu_action(menu, "Run through step 2 (pause after it)").trigger()
    qtbot.waitUntil(lambda: w.state is RunState.PAUSED, timeout=TIMEOUT_MS)
    rows = w.steps_panel.model.rows("sort_table")
    assert [r.status for r in rows[:2]] == ["passed", "passed"] and rows[2].status in ("pending", "running")
    assert "breakpoint" in w._pause_reason  # noqa: SLF001
    assert w.breakpoint_book.breakpoints == book_before  # the pause was this run's only: nothing saved
    qtbot.keyClick(w, Qt.Key.Key_F5)
    qtbot.waitUntil(lambda: w.state is RunState.FINISHED, timeout=TIMEOUT_MS)
    assert [r.status for r in w.steps_panel.model.rows("sort_table")] == ["passed"] * 5
    # the next run does not pause there again
    assert w.run_flow("sort_table")
    qtbot.waitUntil(lambda: w.state is RunState.FINISHED and len([e for e in events if isinstance(e, FlowFinished)]) == 2,
                    timeout=TIMEOUT_MS)
    w.close()


def test_run_up_to_a_step_replays_the_steps_before_it_and_pauses_before_it(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    w, _events = _window(qtbot, tmp_path)
    assert w.run_from_step("sort_table", 3)
    qtbot.waitUntil(lambda: w.state is RunState.PAUSED, timeout=TIMEOUT_MS)
    rows = w.steps_panel.model.rows("sort_table")
    assert [r.status for r in rows[:3]] == ["passed"] * 3 and rows[3].status in ("pending", "running")
    w.stop()
    qtbot.waitUntil(lambda: w.state is RunState.FINISHED, timeout=TIMEOUT_MS)
    w.close()


def test_watch_mode_runs_a_flow_again_when_its_file_changes(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    w, events = _window(qtbot, tmp_path)
    menu = _flow_menu(w, "sort_table")
    watch = _menu_action(menu, "Watch:")
    assert watch.isCheckable() and not watch.isChecked()
    watch.trigger()
    assert "sort_table" in w.watched and "watched" in w.flows_list.item(w.flow_names().index("sort_table")).text()
    flow_file = w.project_path / "flows" / "sort_table.yaml"
    flow_file.write_text(flow_file.read_text(encoding="utf-8").replace(
        "description: Sort the requests table", "description: Sort the leave requests table"), encoding="utf-8")
    qtbot.waitUntil(lambda: any(isinstance(e, FlowFinished) for e in events), timeout=TIMEOUT_MS)
    qtbot.waitUntil(lambda: w.state is RunState.FINISHED, timeout=TIMEOUT_MS)
    assert [e.flow for e in events if isinstance(e, FlowStarted)] == ["sort_table"]
    assert w.project.flows["sort_table"].description.startswith("Sort the leave requests table")
    # another flow's file changing does not run the watched one
    other = w.project_path / "flows" / "export_report.yaml"
    other.write_text(other.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    qtbot.wait(3000)
    assert len([e for e in events if isinstance(e, FlowStarted)]) == 1
    w.close()
