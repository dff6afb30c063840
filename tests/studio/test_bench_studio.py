"""``steadyhand bench studio``: the studio replays a demo flow offscreen and prints its figures."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run([sys.executable, "-m", "core.cli", "bench", "studio", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)


def test_bench_studio_replays_and_prints_its_figures(tmp_path: Path) -> None:
    out = tmp_path / "studio.json"
    proc = _cli("--flows", "sort_table", "--json", str(out), "--why")
    assert proc.returncode == 0, proc.stderr
    # beside the studio's figures, the floor: an empty event loop's heartbeat in its own process, at the same time
    assert "floor: an empty event loop" in proc.stdout and "heartbeat lateness, p99" in proc.stdout
    # --why: what the GUI thread did in its longest stalls (or that none passed the threshold)
    assert "why (the longest stalls, sampled):" in proc.stdout and "modules imported while the run went" in proc.stdout
    assert "longest GUI event-loop stall" in proc.stdout and "live view frames per second" in proc.stdout
    assert "(goal <= 50 ms:" in proc.stdout and "(goal >= 10:" in proc.stdout  # the bars beside the figures
    assert "live frames received per s" in proc.stdout and "a recording went at the same time" in proc.stdout
    doc = json.loads(out.read_text())
    assert {"stall_ms", "fps", "fps_received", "steps", "latency_ms", "lateness_p99_ms"} <= set(doc)
    assert isinstance(doc["floor_stall_ms"], float) and isinstance(doc["floor_p99_ms"], float)
    assert isinstance(doc["stall_ms"], float) and doc["stall_ms"] >= 0
    # the screencast's frames reached the studio and the live view painted them
    assert doc["frames_received"] > 0 and doc["frames"] > 0
    assert isinstance(doc["fps"], float) and doc["fps"] > 0
    assert doc["recording"] is True and doc["recording_frames"] > 0  # the recording's live frames came too
    # a live frame costs the GUI thread little CPU: decoding and scaling ran off it (CPU time: load does not blur it)
    assert max(doc["frame_handover_ms"]) <= 50 and max(doc["frame_paint_ms"]) <= 50
    assert doc["steps"] == 5 and doc["results"] == {"sort_table": "passed"}
    assert "propagateSizeHints" not in proc.stderr


def test_bench_studio_names_an_unknown_flow() -> None:
    proc = _cli("--flows", "no_such_flow")
    assert proc.returncode == 2
    assert "unknown flow no_such_flow" in proc.stderr
