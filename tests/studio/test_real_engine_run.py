"""The studio window offscreen driving a REAL run: engine thread, Playwright, Chromium, demo app."""
from __future__ import annotations

import shutil
from pathlib import Path

import yaml

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
