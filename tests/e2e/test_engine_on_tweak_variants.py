"""The engine on the demo's UI-tweak variants, judged by the demo server's activation log (bench tweaks).

``nested-dialog`` moves the export buttons into a dialog stacked over the recorded one (an R tweak, not
a popup); ``all`` adds an unexpected "What's new" popup covering the page on top of every other tweak:
the engine dismisses it by its close control, never its "Take the tour" button, and goes on.  Every flow
passes; no wrong click, no double write.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("variant", ["nested-dialog", "all"])
def test_export_report_passes_with_no_wrong_click(variant, tmp_path) -> None:
    out = tmp_path / "tweaks.json"
    r = subprocess.run([sys.executable, "-m", "core.cli", "bench", "tweaks", "--variants", variant,
                        "--flows", "export_report", "--json", str(out)], cwd=ROOT, env=dict(os.environ),
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    (row,) = json.loads(out.read_text())["variants"]
    assert row["variant"] == variant
    assert row["wrong_clicks"] == 0 and row.get("double_writes", 0) == 0, r.stdout
    assert row["passed"] == row["flows"] == 1, r.stdout
