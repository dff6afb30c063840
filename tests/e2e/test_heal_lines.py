"""What a heal says it changed, through the CLI on the demo app's ``tweaked`` variant in real Chromium.

On the tweaked app the Sign in button reads the same but its id changed (``signin`` -> ``btn-signin``) and
"Export report" became "Export report (E)" (``core/sites/demo.py``).  The progress line, ``heals list`` and
the HTML report say the id changed for the first (not "button 'Sign in' -> button 'Sign in'"), and the report
lists its Heals section once, each heal in it once.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "core.cli", *args], cwd=ROOT, env=dict(os.environ),
                          capture_output=True, text=True, timeout=300)


def test_a_heal_line_says_the_id_changed_and_the_report_lists_each_heal_once(tmp_path) -> None:
    project = tmp_path / "demo-tweaked"
    shutil.copytree(ROOT / "projects" / "demo", project, ignore=shutil.ignore_patterns(".steadyhand"))
    settings = yaml.safe_load((project / "steadyhand.yaml").read_text())
    settings["site_options"]["variant"] = "tweaked"
    (project / "steadyhand.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))

    report = tmp_path / "r.html"
    r = _cli("run", str(project), "--flow", "export_report", "--headless", "--no-screenshots", "--html", str(report))
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout + r.stderr
    assert "button 'Sign in' (id signin -> btn-signin" in out, out
    assert "button 'Sign in' -> button 'Sign in'" not in out
    assert "button 'Export report' -> button 'Export report (E)'" in out  # another label: both said

    listed = _cli("heals", "list", str(project))
    assert listed.returncode == 0, listed.stderr
    assert "button 'Sign in' (id signin -> btn-signin)" in listed.stdout, listed.stdout

    doc = report.read_text()
    assert doc.count("<h2>Heals</h2>") == 1
    ids = re.findall(r"<h3>heal #(\d+) ", doc)
    assert len(ids) == 2 and len(set(ids)) == 2, ids
    assert "button &#39;Sign in&#39; (id signin -&gt; btn-signin)" in doc
