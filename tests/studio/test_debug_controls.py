"""Run controls, breakpoints and the breaker panel in the studio, offscreen, over REAL runs.

Engine thread, Playwright, Chromium, the demo app (and one page written here whose button does
nothing) - no fake engine.  Each test uses its own copy of the demo project, so the breakpoints it
saves in ``.steadyhand/studio.json`` are its own.
"""
from __future__ import annotations

import json
import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest
import yaml
from PySide6.QtCore import QPoint, Qt

from core.engine.breakpoints import Conditions
from studio.main_window import MainWindow
from studio.run_state import RunState

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_MS = 120_000


def _demo_copy(tmp_path: Path, flows: list[str], variant: str = "baseline") -> Path:
    dst = tmp_path / "demo"
    shutil.copytree(ROOT / "projects" / "demo", dst, ignore=shutil.ignore_patterns(".steadyhand"))
    for f in (dst / "flows").glob("*.yaml"):
        if f.stem not in flows:
            f.unlink()
    _set_variant(dst, variant)
    return dst


def _set_variant(project: Path, variant: str) -> None:
    doc = yaml.safe_load((project / "steadyhand.yaml").read_text())
    doc["site_options"].update(variant=variant, latency_ms="100")  # a short submit latency: a faster test
    (project / "steadyhand.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))


def _window(qtbot, project: Path) -> MainWindow:  # noqa: ANN001
    w = MainWindow(project, close_timeout=15.0)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    with qtbot.waitActive(w):
        w.activateWindow()
    return w


def _statuses(w: MainWindow, flow: str) -> list[str]:
    return [r.status for r in w.steps_panel.model.rows(flow)]


def _wait_paused_or_finished(qtbot, w: MainWindow) -> RunState:  # noqa: ANN001
    qtbot.waitUntil(lambda: w.state in (RunState.PAUSED, RunState.FINISHED), timeout=TIMEOUT_MS)
    return w.state


def _click_gutter(qtbot, w: MainWindow, row: int) -> None:  # noqa: ANN001
    g = w.breakpoint_gutter
    y = g.sectionViewportPosition(row) + g.sectionSize(row) // 2
    qtbot.mouseClick(g.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(g.width() // 2, y))


def _run_to_end(qtbot, w: MainWindow, limit: int = 20) -> list[str]:  # noqa: ANN001
    """Resume (F5) at every pause until the run finishes; returns the pause reasons met."""
    reasons = []
    for _ in range(limit):
        if _wait_paused_or_finished(qtbot, w) is RunState.FINISHED:
            return reasons
        reasons.append(w._pause_reason)
        qtbot.keyClick(w, Qt.Key.Key_F5)
        qtbot.waitUntil(lambda: w.state is not RunState.PAUSED, timeout=TIMEOUT_MS)
    raise AssertionError(f"the run did not finish after {limit} resumes: {reasons}")


def test_breakpoint_step_stop_and_f10_from_idle(qtbot, tmp_path) -> None:  # noqa: ANN001
    project = _demo_copy(tmp_path, ["sort_table"])
    w = _window(qtbot, project)
    assert w.steps_panel.model.current_flow == "sort_table"
    _click_gutter(qtbot, w, 3)  # "Sort by employee"
    assert w.breakpoint_gutter.has_breakpoint(3)
    saved = json.loads((project / ".steadyhand" / "studio.json").read_text())
    assert saved["breakpoints"]["steps"] == {"sort_table": ["s4"]}

    qtbot.keyClick(w, Qt.Key.Key_F5)
    assert _wait_paused_or_finished(qtbot, w) is RunState.PAUSED
    assert _statuses(w, "sort_table") == ["passed"] * 3 + ["running", "pending"]
    reason = "breakpoint: step 4 'Sort by employee', before it starts"
    assert w._pause_reason == reason and reason in w.state_label.text()  # the status bar says why
    assert "Paused at step 4" in w.banner_text.text()
    assert w.steps_panel.model.data(w.steps_panel.model.index(3, w.steps_panel.model.COL_STATUS)) == "paused"

    qtbot.keyClick(w, Qt.Key.Key_F10)  # Step: exactly step 4, then paused before step 5
    qtbot.waitUntil(lambda: w.state is RunState.PAUSED and _statuses(w, "sort_table")[3] == "passed",
                    timeout=TIMEOUT_MS)
    assert _statuses(w, "sort_table") == ["passed"] * 4 + ["running"]
    assert "Paused before step 5" in w.banner_text.text()
    assert "at step 5/5" in w.state_label.text()

    qtbot.keyClick(w, Qt.Key.Key_F5, Qt.KeyboardModifier.ShiftModifier)  # Stop
    qtbot.waitUntil(lambda: w.state is RunState.FINISHED, timeout=TIMEOUT_MS)
    assert _statuses(w, "sort_table") == ["passed"] * 4 + ["stopped"]
    assert "sort_table stopped" in w.state_label.text()
    assert w.escalations_panel.model.rowCount() == 0 and w.breaker.final

    # the engine is left clean: the next run (breakpoint cleared) replays the whole flow
    _click_gutter(qtbot, w, 3)
    assert not w.breakpoint_gutter.has_breakpoint(3)
    qtbot.keyClick(w, Qt.Key.Key_F5)
    qtbot.waitUntil(lambda: w.state is RunState.FINISHED, timeout=TIMEOUT_MS)
    assert _statuses(w, "sort_table") == ["passed"] * 5
    assert not w.live_view.image.isNull()

    # F10 from idle: the last run's frame goes, the run starts paused before step 1 (never "step 0")
    qtbot.keyClick(w, Qt.Key.Key_F10)
    assert w.live_view.image.isNull()
    qtbot.waitUntil(lambda: w.state is RunState.PAUSED, timeout=TIMEOUT_MS)
    assert "Paused before step 1" in w.banner_text.text() and "step 0" not in w.banner_text.text()
    assert _statuses(w, "sort_table")[1:] == ["pending"] * 4
    qtbot.keyClick(w, Qt.Key.Key_F10)
    qtbot.waitUntil(lambda: w.state is RunState.PAUSED and _statuses(w, "sort_table")[0] == "passed",
                    timeout=TIMEOUT_MS)
    assert _statuses(w, "sort_table") == ["passed", "running", "pending", "pending", "pending"]
    assert not w.live_view.image.isNull()  # this run's page
    w.stop()
    qtbot.waitUntil(lambda: w.state is RunState.FINISHED, timeout=TIMEOUT_MS)
    assert _statuses(w, "sort_table")[1] == "stopped"
    w.close()


def test_an_irreversible_step_breaks_before_the_demo_submit(qtbot, tmp_path) -> None:  # noqa: ANN001
    project = _demo_copy(tmp_path, ["leave_request"])
    w = _window(qtbot, project)
    w.breakpoints_panel.checks["irreversible"].setChecked(True)
    w.start_run()
    assert _wait_paused_or_finished(qtbot, w) is RunState.PAUSED
    flow = w.project.flows["leave_request"]
    submit = next(i for i, s in enumerate(flow.steps) if not s.reversible)
    assert w.run_state.answers is None  # a breakpoint, not an escalation
    reason = f"breakpoint: step {submit + 1} '{flow.steps[submit].title}' is irreversible: paused before it acts"
    assert w._pause_reason == reason
    rows = w.steps_panel.model.rows("leave_request")
    assert [r.status for r in rows[:submit]] == ["passed"] * submit and rows[submit].action == ""  # not acted
    assert _run_to_end(qtbot, w) == [reason]  # resumed once, no other pause
    assert _statuses(w, "leave_request") == ["passed"] * len(flow.steps)
    w.close()


def test_low_confidence_and_abstained_break_on_a_tweak_variant(qtbot, tmp_path) -> None:  # noqa: ANN001
    project = _demo_copy(tmp_path, ["export_report"], variant="all")
    w = _window(qtbot, project)
    w.breakpoints_panel.threshold.setValue(0.99)  # any heal is below it; an exact match scores 1.0
    w.breakpoints_panel.checks["low_confidence"].setChecked(True)
    w.breakpoints_panel.checks["abstained"].setChecked(True)
    w.start_run()
    reasons = _run_to_end(qtbot, w)
    assert any("the locator abstained" in r for r in reasons), reasons
    low = [r for r in reasons if "confidence" in r]
    assert low and all("is below 0.99" in r for r in low), reasons
    assert _statuses(w, "export_report") == ["passed"] * 5  # the popup was dismissed and the step found again
    # the plots hold one confidence point per resolved step and one latency point per finished step
    panel = w.breaker_panel
    assert len(panel.latency) == 5 and len(panel.confidence) == 5
    assert panel.abstentions and not any(a for _x, _s, a in panel.confidence)  # abstained once, found later
    w.close()


def test_changed_against_the_baseline_breaks(qtbot, tmp_path) -> None:  # noqa: ANN001
    project = _demo_copy(tmp_path, ["sort_table"])
    w = _window(qtbot, project)
    w.start_run()  # a passing run keeps this project's baselines
    qtbot.waitUntil(lambda: w.state is RunState.FINISHED, timeout=TIMEOUT_MS)
    assert _statuses(w, "sort_table") == ["passed"] * 5
    _set_variant(project, "all")
    assert w.reload_project()
    w.breakpoints_panel.checks["changed"].setChecked(True)
    w.start_run()
    assert _wait_paused_or_finished(qtbot, w) is RunState.PAUSED
    assert "changed against its baseline" in w._pause_reason and w._pause_reason in w.state_label.text()
    w.stop()
    qtbot.waitUntil(lambda: w.state is RunState.FINISHED, timeout=TIMEOUT_MS)
    w.close()


# --- a page written here: its Save button does nothing --------------------------------------------------

_DEAD_PAGE = b"""<!doctype html><html><head><title>Settings</title></head><body>
<h1>Settings</h1><p>Nothing here reacts.</p><button id="save" type="button">Save</button></body></html>"""


@pytest.fixture
def dead_site() -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(_DEAD_PAGE)))
            self.end_headers()
            self.wfile.write(_DEAD_PAGE)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _dead_project(tmp_path: Path, base_url: str) -> Path:
    root = tmp_path / "dead"
    (root / "flows").mkdir(parents=True)
    (root / "steadyhand.yaml").write_text(yaml.safe_dump({
        "schema_version": 1, "name": "Dead button", "base_url": base_url,
        "browser": {"headless": True, "viewport": {"width": 1000, "height": 600}},
        "waits": {"retry_delay_ms": 50}, "breaker": {"threshold": 3}}, sort_keys=False))
    (root / "flows" / "save_settings.yaml").write_text(yaml.safe_dump({
        "schema_version": 1, "name": "save_settings", "start_url": "/settings",
        "steps": [{"id": "s1", "name": "Save the settings", "action": "click", "selector": "#save",
                   "target": {"tag": "button", "role": "button", "name": "Save", "text": "Save", "id": "save"}}],
    }, sort_keys=False))
    return root


def test_verdict_breakpoint_and_the_breaker_half_opens_on_resume(qtbot, tmp_path, dead_site) -> None:  # noqa: ANN001
    project = _dead_project(tmp_path, dead_site)
    w = _window(qtbot, project)
    seen: list[tuple[str, int, int]] = []
    w.bridge.breaker_changed.connect(lambda e: seen.append((e.state, e.consecutive_failures, e.failed_probes)))
    w.breakpoints_panel.checks["verdict"].setChecked(True)
    w.start_run()
    # every attempt's verdict "unchanged" breaks, before the failure is handled
    for attempt in (1, 2, 3):
        assert _wait_paused_or_finished(qtbot, w) is RunState.PAUSED
        assert w._pause_reason.startswith("breakpoint: step 1 'Save the settings': verdict unchanged"), attempt
        assert w.run_state.answers is None
        w.start_or_resume()
        qtbot.waitUntil(lambda: w.state is not RunState.PAUSED, timeout=TIMEOUT_MS)
    # three failures in a row: the breaker is open and the engine asks
    qtbot.waitUntil(lambda: w.state is RunState.PAUSED and w.run_state.answers is not None, timeout=TIMEOUT_MS)
    panel = w.breaker_panel
    assert (panel.state, panel.failures, panel.threshold) == ("open", 3, 3)
    assert w.breaker.text() == "Breaker OPEN \u00b7 3/3"
    left = panel.seconds_to_half_open()
    assert left is not None and 0 < left <= 300 and panel.timer_label.text() != "\u2014"
    assert "exactly one probe" in panel.hint_label.text()
    w.breakpoints_panel.checks["verdict"].setChecked(False)  # sent to the running engine at once

    w.start_or_resume()  # Resume = the one half-open probe (R4)
    qtbot.waitUntil(lambda: w.state is RunState.PAUSED and w.run_state.answers is not None
                    and panel.failed_probes == 1, timeout=TIMEOUT_MS)
    opened = seen.index(("open", 3, 0))
    assert ("half_open", 3, 0) in seen[opened:]             # resuming half-opened it ...
    assert seen[-1] == ("open", 3, 1)                       # ... its probe failed: open again, still 3/3
    assert all(n <= 3 for _s, n, _p in seen)                # never "4/3"
    assert panel.state_text() == "OPEN"

    w.stop()
    qtbot.waitUntil(lambda: w.state is RunState.FINISHED, timeout=TIMEOUT_MS)
    assert panel.state_text() == "OPEN \u00b7 run ended" and panel.timer_label.text() == "\u2014"
    assert w.breaker.text() == "Breaker OPEN \u00b7 3/3 \u00b7 run ended"
    assert "ended with the breaker open" in panel.hint_label.text()
    w.close()


def test_a_failed_assertion_fails_its_flow_and_the_batch_goes_on(qtbot, tmp_path) -> None:  # noqa: ANN001
    project = _demo_copy(tmp_path, ["sort_table", "export_report"])
    flow = project / "flows" / "sort_table.yaml"
    doc = yaml.safe_load(flow.read_text())
    doc["steps"][4].setdefault("assertions", []).append({"kind": "text_appears", "expected": "Sorted by Mood"})
    flow.write_text(yaml.safe_dump(doc, sort_keys=False))
    w = _window(qtbot, project)
    w.set_checked_flows(["sort_table", "export_report"])
    w.start_run()
    qtbot.waitUntil(lambda: w.state is RunState.FINISHED, timeout=TIMEOUT_MS)  # nobody answered anything
    assert _statuses(w, "sort_table") == ["passed"] * 4 + ["failed"]
    assert "Sorted by Mood" in w.steps_panel.model.rows("sort_table")[4].error
    assert _statuses(w, "export_report") == ["passed"] * 5
    assert w.escalations_panel.model.rowCount() == 0
    assert "sort_table failed" in w.state_label.text() and "export_report passed" in w.state_label.text()
    w.close()


def test_breakpoints_persist_across_a_reload_and_a_new_window(qtbot, tmp_path) -> None:  # noqa: ANN001
    project = _demo_copy(tmp_path, ["sort_table", "export_report"])
    w = _window(qtbot, project)
    w.flows_list.setCurrentRow(w.flow_names().index("sort_table"))
    _click_gutter(qtbot, w, 1)
    w.breakpoints_panel.checks["abstained"].setChecked(True)
    w.breakpoints_panel.threshold.setValue(0.65)
    assert w.reload_project()
    assert w.breakpoint_gutter.has_breakpoint(1) and w.breakpoints_panel.checks["abstained"].isChecked()
    w.close()

    again = _window(qtbot, project)
    again.flows_list.setCurrentRow(again.flow_names().index("export_report"))
    assert not again.breakpoint_gutter.has_breakpoint(1)  # it was set on the other flow
    again.flows_list.setCurrentRow(again.flow_names().index("sort_table"))
    assert again.breakpoint_gutter.has_breakpoint(1) and not again.breakpoint_gutter.has_breakpoint(0)
    assert again.breakpoint_book.breakpoints.conditions == Conditions(abstained=True, confidence_below=0.65)
    assert [again.breakpoints_panel.list.item(i).text() for i in range(again.breakpoints_panel.list.count())] == [
        "\u25cf sort_table \u00b7 step 2 \u2018Type the password\u2019"]
    again.close()


def test_an_empty_project_says_record_your_first_flow(qtbot, tmp_path) -> None:  # noqa: ANN001
    root = tmp_path / "empty"
    (root / "flows").mkdir(parents=True)
    (root / "steadyhand.yaml").write_text("schema_version: 1\nname: Empty\nbase_url: http://127.0.0.1:9\n")
    w = _window(qtbot, root)
    assert not w.action_start.isEnabled() and not w.action_step.isEnabled()
    assert "record your first flow" in w.state_label.text() and "F5" not in w.state_label.text()
    w.close()
