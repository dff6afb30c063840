"""The studio window offscreen driving a REAL run: engine thread, Playwright, Chromium, demo app."""
from __future__ import annotations

import shutil
from pathlib import Path

import yaml
from PySide6.QtCore import Qt

from studio.main_window import MainWindow
from studio.run_state import RunState

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_MS = 120_000


def _demo_copy(tmp_path: Path, flows: list[str]) -> Path:
    dst = tmp_path / "demo"
    shutil.copytree(ROOT / "projects" / "demo", dst, ignore=shutil.ignore_patterns(".steadyhand"))
    for f in (dst / "flows").glob("*.yaml"):
        if f.stem not in flows:
            f.unlink()
    return dst


def test_window_replays_the_demo_with_the_real_engine(qtbot, tmp_path):
    project = _demo_copy(tmp_path, ["sort_table"])
    w = MainWindow(project, run_on_show=True, close_timeout=15.0)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    qtbot.waitUntil(lambda: w.state is RunState.FINISHED, timeout=TIMEOUT_MS)
    rows = w.steps_panel.model.rows("sort_table")
    assert [r.status for r in rows] == ["passed"] * 5
    assert all(r.strategy == "exact" for r in rows)
    # the live view shows the real page: a screenshot with the DOM boxes of its interactive elements
    img = w.live_view.image
    assert not img.isNull() and img.width() == 1280
    names = {c.descriptor.name for c in w.live_view.candidates}
    assert {"Export report", "Save report", "New request"} <= names
    assert w.escalations_panel.model.rowCount() == 0
    # one run id everywhere (issue 23 item 5): the status bar shows the store's id, as History and
    # `steadyhand history list` do, and `steadyhand report` takes exactly what it shows
    from core.cli import main  # noqa: PLC0415
    from core.store import Store, store_path  # noqa: PLC0415

    with Store.open(store_path(project), read_only=True) as store:
        (run,) = store.list_runs()
    assert w.run_label.text() == f"run {run.id[:8]}" and run.id in w.run_label.toolTip()
    shown = w.run_label.text().removeprefix("run ")
    assert main(["report", shown, "--project", str(project), "-o", str(tmp_path / "report.html")]) == 0
    w.grab().save(str(tmp_path / "studio-real.png"))
    assert (tmp_path / "studio-real.png").stat().st_size > 10_000
    w.close()


def test_window_pauses_on_an_escalation_and_stops(qtbot, tmp_path):
    project = _demo_copy(tmp_path, ["export_report"])
    flow = project / "flows" / "export_report.yaml"
    doc = yaml.safe_load(flow.read_text())
    # the export button is gone from the step: selector and descriptor point at nothing on the page
    doc["steps"][3]["selector"] = "#no-such-button"
    doc["steps"][3]["target"] = {"tag": "button", "role": "button", "name": "Archive everything"}
    flow.write_text(yaml.safe_dump(doc, sort_keys=False))
    w = MainWindow(project, run_on_show=True, close_timeout=15.0)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitUntil(lambda: w.state is RunState.PAUSED, timeout=TIMEOUT_MS)
    esc = w.escalations_panel.model.items
    assert len(esc) == 1 and esc[0].event.index == 3
    assert "abstained" in esc[0].event.reason
    w.stop()
    qtbot.waitUntil(lambda: w.state is RunState.FINISHED, timeout=TIMEOUT_MS)
    rows = w.steps_panel.model.rows("export_report")
    assert [r.status for r in rows][:4] == ["passed", "passed", "passed", "escalated"]
    w.close()


def test_take_over_an_escalated_step_and_hand_back_to_the_next(qtbot, tmp_path):
    project = _demo_copy(tmp_path, ["export_report"])
    flow = project / "flows" / "export_report.yaml"
    doc = yaml.safe_load(flow.read_text())
    # a step the page has nothing for: the locator abstains and the engine asks; the human judges the
    # page fine as it is, takes over, and hands back from the next step
    doc["steps"].insert(3, {"id": "s3b", "name": "Dismiss the welcome tip", "action": "click",
                            "selector": "#no-such-tip",
                            "target": {"tag": "button", "role": "button", "name": "Dismiss tip"}})
    flow.write_text(yaml.safe_dump(doc, sort_keys=False))
    w = MainWindow(project, run_on_show=True, close_timeout=15.0)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    qtbot.waitUntil(lambda: w.state is RunState.PAUSED and w.escalations_panel.model.open_count == 1,
                    timeout=TIMEOUT_MS)
    esc = w.escalations_panel.model.items[0].event
    assert esc.index == 3 and "take_over" in esc.answers
    panel = w.escalations_panel
    assert panel.answers.shown() == tuple(a for a in ("retry", "skip", "take_over", "stop") if a in esc.answers)
    assert panel.candidates.topLevelItemCount() == max(1, len(esc.candidates))

    qtbot.mouseClick(panel.answers.buttons["take_over"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.state is RunState.TAKEN_OVER, timeout=TIMEOUT_MS)
    banner = w.takeover_banner
    assert banner.isVisibleTo(w) and banner.continue_from.value() == 4  # 1-based: where it began
    assert "taken over at step 4/6" in w.state_label.text()
    banner.continue_from.setValue(5)  # the page is fine as it is: go on with "Export report"
    qtbot.mouseClick(banner.hand_back_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.state is RunState.FINISHED, timeout=TIMEOUT_MS)
    rows = w.steps_panel.model.rows("export_report")
    # nothing was done on the page: the step is said to be skipped by hand, not done
    assert [r.status for r in rows] == ["passed", "passed", "passed", "skipped", "passed", "passed"]
    assert rows[3].error == "skipped by hand (nothing was done on the page); continued from step 5"
    log = w.event_log.toPlainText()
    assert "taken over at step 4" in log and "handed back, continuing from step 5" in log
    assert "export_report passed" in w.state_label.text()
    w.close()
