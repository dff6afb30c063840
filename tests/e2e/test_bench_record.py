"""`steadyhand bench record`: the recorder memory benchmark, run as a user runs it (a short run).

Memory and speed figures are measured, never asserted: the test checks that
every figure is printed and written, that the driven activity was recorded,
and that nothing was saved into the project.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from core.bench.record_memory import FIGURES, Report, Sample, format_report

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "projects" / "demo"


def _tree(folder: Path) -> dict[str, int]:
    """The project's files (not its run data, which other tests running in parallel may write)."""
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*")
            if p.is_file() and ".steadyhand" not in p.relative_to(folder).parts}


def _recordings(folder: Path) -> set[str]:
    d = folder / ".steadyhand" / "recordings"
    return {p.name for p in d.iterdir()} if d.is_dir() else set()


def test_bench_record_prints_every_figure_and_records_steps(tmp_path):
    before, spools = _tree(DEMO), _recordings(DEMO)
    out_json = tmp_path / "bench.json"
    proc = subprocess.run(
        [sys.executable, "-m", "core.cli", "bench", "record", "--minutes", "0.2", "--rate", "5", "--sample-s", "3",
         "--project", str(DEMO), "--json", str(out_json)],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    out = proc.stdout
    assert "0.2 min at 5 events/s" in out and "a sample every 3 s" in out
    for _key, label, unit, _memory in FIGURES:
        assert (f"{label} ({unit})" if unit else label) in out, label
    assert "spool on disk at the end:" in out
    assert "verdict:" in out and "max(10% of start, 5 MB)" in out
    steps = int(out.split("steps recorded: ", 1)[1].split()[0])
    events = int(out.split("events sent", 1)[0].rsplit(" ", 2)[-2])
    assert steps > 0 and events > 0

    doc = json.loads(out_json.read_text(encoding="utf-8"))
    assert {"config", "duration_s", "events_sent", "events_by_kind", "steps_recorded", "spool_bytes", "figures",
            "samples", "verdict"} <= set(doc)
    assert doc["config"] == {"project": str(DEMO), "minutes": 0.2, "rate": 5.0, "sample_s": 3.0}
    assert doc["steps_recorded"] == steps and doc["events_sent"] == events
    assert {"click", "keystroke"} <= set(doc["events_by_kind"])
    assert len(doc["samples"]) >= 2
    for key, _label, _unit, memory in FIGURES:
        fig = doc["figures"][key]
        assert {"start", "end", "peak", "growth"} <= set(fig)
        assert fig["peak"] >= max(fig["start"], fig["end"])
        assert ("allowed_growth" in fig) == memory
    assert set(doc["verdict"]) >= {"flat", "criterion", "grown"}
    # nothing saved into the project: no flow, no spool, no run data
    assert _tree(DEMO) == before and _recordings(DEMO) == spools


def _sample(t: float, python: float, renderer: float, heap: float) -> Sample:
    return Sample(t_s=t, python_rss_mb=python, python_objects=1000, driver_rss_mb=100.0, renderer_rss_mb=renderer,
                  renderers=1, js_heap_mb=heap, dom_nodes=300, js_listeners=50, documents=2, steps=1, backlog=0,
                  spool_mb=0.1, events=10)


def test_verdict_allows_the_larger_of_ten_percent_and_five_mb():
    r = Report(project="p", minutes=1, rate=5, sample_s=10)
    r.samples = [_sample(0, 100.0, 400.0, 2.0), _sample(60, 109.0, 439.0, 6.9)]
    assert r.flat and "verdict: flat" in format_report(r)
    r.samples.append(_sample(120, 100.0, 400.0, 7.5))  # JS heap +5.5 MB: more than max(0.2, 5)
    assert not r.flat and r.grown() == ["JS heap (after GC)"]
    assert "verdict: grew: JS heap (after GC)" in format_report(r)
