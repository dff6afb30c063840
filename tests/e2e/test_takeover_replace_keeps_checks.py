"""A step replaced by hand keeps what of it still applies (tester's report, item 1: lost data).

Variant ``inline-edit``: the Reason field is shown as text until its label is
double-clicked, so ``leave_request`` step 10 "Type the reason" opens the
breaker.  A script connected over CDP takes the step over (double-click
"Reason", type the reason), hands back as ``replace`` and the correction is
accepted with ``steadyhand corrections accept``: the flow file keeps step
10's check (Submit enabled) and its selector ``#reason`` on the step that
types into that field, and the edited flow replays green with no human.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from playwright.sync_api import sync_playwright

from takeover_project import ROOT

pytestmark = pytest.mark.browser


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "core.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=180)


def _wait_for(proc: subprocess.Popen, pattern: str, seen: list[str], timeout: float = 90) -> re.Match:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        assert line, "".join(seen)
        seen.append(line)
        m = re.search(pattern, line)
        if m:
            return m
    raise AssertionError(f"no {pattern!r} in:\n{''.join(seen)}")


def inline_edit_demo(dest: Path) -> Path:
    """Copy ``projects/demo`` to ``dest`` (no latency, no store), served as the ``inline-edit`` variant."""
    shutil.copytree(ROOT / "projects" / "demo", dest, ignore=shutil.ignore_patterns(".steadyhand"))
    cfg = dest / "steadyhand.yaml"
    cfg.write_text(cfg.read_text(encoding="utf-8").replace('latency_ms: "800"', 'latency_ms: "0"')
                   .replace("variant: baseline", "variant: inline-edit"), encoding="utf-8")
    return dest


def take_over_the_reason(project: Path, *extra: str) -> tuple[subprocess.CompletedProcess, str]:
    """Run leave_request, take step 10 over on CDP (double-click Reason, type), hand back as replace."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("DISPLAY", None)
    proc = subprocess.Popen([sys.executable, "-m", "core.cli", "run", str(project), "--flow", "leave_request",
                             "--headless", "--on-escalation", "wait", "--takeover-timeout", "90", *extra],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen: list[str] = []
    try:
        endpoint = _wait_for(proc, r"step 10 is yours; CDP (http://127\.0\.0\.1:\d+)", seen).group(1)
        with sync_playwright() as pw:
            browser = pw.chromium.connect_over_cdp(endpoint)
            page = next(p for c in browser.contexts for p in c.pages if "/requests/new" in p.url)
            page.get_by_text("Reason", exact=True).dblclick()
            page.keyboard.type("Family trip")
            page.wait_for_timeout(400)
            out = _cli("handback", str(project), "--as", "replace")
            assert out.returncode == 0, out.stderr
        rest, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    return subprocess.CompletedProcess(proc.args, proc.returncode, rest, err), "".join(seen) + err


def test_replacing_a_step_by_hand_keeps_its_check_and_selector(tmp_path: Path) -> None:
    project = inline_edit_demo(tmp_path / "demo")
    run, log = take_over_the_reason(project)
    assert run.returncode == 0, log
    shown = _cli("corrections", "show", str(project), "1")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("--- a/"), shown.stdout  # nothing of the old step is dropped: no line above
    assert "-  assertions:" not in shown.stdout and "-  selector: '#reason'" not in shown.stdout
    accepted = _cli("corrections", "accept", str(project), "1")
    assert accepted.returncode == 0, accepted.stderr
    steps = yaml.safe_load((project / "flows" / "leave_request.yaml").read_text(encoding="utf-8"))["steps"]
    assert [s["id"] for s in steps][9:] == ["s10_h1", "s10_h2", "s11"]
    dbl, typed = steps[9], steps[10]
    assert dbl["action"] == "dblclick" and "assertions" not in dbl and "selector" not in dbl
    assert typed["action"] == "input" and typed["value"] == "{reason}"
    assert typed["selector"] == "#reason"
    assert typed["assertions"] == [{"kind": "enabled", "selector": "role=button[name='Submit']"}]
    assert typed["target"]["exact"] is False
    again = _cli("run", str(project), "--flow", "leave_request", "--headless", "--no-store")
    assert again.returncode == 0, again.stdout + again.stderr
