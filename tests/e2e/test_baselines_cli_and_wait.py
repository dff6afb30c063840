"""``steadyhand baselines list|reset`` (R1 baselines that keep alerting after a real change) and a wait that times out."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from core.domain import Action, BrowserSettings
from core.perception.driver import ActionError, PlaywrightDriver
from core.sites.server import StaticSite

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "core.cli", *args], cwd=ROOT, env=dict(os.environ),
                          capture_output=True, text=True, timeout=300)


def test_baselines_are_listed_and_forgotten_without_touching_the_flow_file(tmp_path) -> None:
    project = tmp_path / "demo"
    shutil.copytree(ROOT / "projects" / "demo", project, ignore=shutil.ignore_patterns(".steadyhand"))
    flow_file = project / "flows" / "sort_table.yaml"
    before = flow_file.read_bytes()
    assert _cli("baselines", "list", str(project)).stdout.startswith("no baselines")
    r = _cli("run", str(project), "--headless", "--flow", "sort_table")
    assert r.returncode == 0, r.stdout + r.stderr
    listed = _cli("baselines", "list", str(project))
    assert listed.returncode == 0 and "sort_table step s1: ok" in listed.stdout, listed.stdout
    n = len(listed.stdout.splitlines())
    reset = _cli("baselines", "reset", str(project), "--flow", "sort_table")
    assert reset.returncode == 0 and reset.stdout.startswith(f"{n} baseline{'' if n == 1 else 's'} forgotten"), reset.stdout
    assert _cli("baselines", "list", str(project)).stdout.startswith("no baselines")
    assert flow_file.read_bytes() == before


def test_a_wait_for_text_that_never_appears_says_which_text_and_how_long(tmp_path) -> None:
    (tmp_path / "index.html").write_text("<!doctype html><title>t</title><p>Hello</p>")
    with StaticSite(tmp_path) as site:
        d = PlaywrightDriver(BrowserSettings(), base_url=site.base_url, headless=True)
        d.open()
        try:
            d.goto("/index.html")
            with pytest.raises(ActionError, match=r"the text 'Goodbye' did not appear within 700 ms"):
                d.perform(Action("wait", value="Goodbye", timeout_ms=700), None, "Goodbye")
            d.perform(Action("wait", value="Hello", timeout_ms=700), None, "Hello")
        finally:
            d.close()
