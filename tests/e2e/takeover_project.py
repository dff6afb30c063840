"""A copy of the demo project whose flows name controls the page does not have: takeovers are needed.

``inline_edit_demo`` and ``take_over_the_reason``: the ``inline-edit`` variant, whose ``leave_request`` step 10
opens the breaker, taken over on CDP and handed back as ``replace``.

``export_report`` step 4 clicks "Print the summary" (a button this release of
the app does not have: the locator chain abstains, the control is unfindable)
where the page has "Export report"; with ``password=True`` step 2 types into
a "Passphrase" field the login page does not have either.
"""
from __future__ import annotations

from typing import Any

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[2]

_PRINT = '''- id: s4
  name: Print the summary
  action: click
  selector: '#print-summary'
  target:
    tag: button
    role: button
    name: Print the summary
    text: Print the summary
    id: print-summary
    type: button
    css_path: button#print-summary
    bbox: [40.0, 700.0, 120.0, 39.8]
    viewport: [1280, 800]
    device_pixel_ratio: 1.0
  expect: overlay_open
  after:
    dialog: true
    dialog_name: Export report
'''

_PASSPHRASE = '''- id: s2
  name: Type the passphrase
  action: input
  value: '{password}'
  selector: '#passphrase'
  target:
    tag: input
    role: textbox
    name: Passphrase
    label: Passphrase
    id: passphrase
    type: password
    css_path: input#passphrase
    bbox: [40.0, 700.0, 330.0, 40.0]
    viewport: [1280, 800]
    device_pixel_ratio: 1.0
'''


def _swap(text: str, step_id: str, next_id: str, block: str) -> str:
    start, end = text.index(f"- id: {step_id}\n"), text.index(f"- id: {next_id}\n")
    return text[:start] + block + text[end:]


def broken_demo(dest: Path, *, password: bool = False, variant: str = "baseline") -> Path:
    """Copy ``projects/demo`` to ``dest`` (no latency, no store) with the unfindable controls; returns it."""
    shutil.copytree(ROOT / "projects" / "demo", dest, ignore=shutil.ignore_patterns(".steadyhand"))
    cfg = dest / "steadyhand.yaml"
    cfg.write_text(cfg.read_text(encoding="utf-8").replace('latency_ms: "800"', 'latency_ms: "0"')
                   .replace("variant: baseline", f"variant: {variant}"), encoding="utf-8")
    flow = dest / "flows" / "export_report.yaml"
    text = _swap(flow.read_text(encoding="utf-8"), "s4", "s5", _PRINT)
    if password:
        text = _swap(text, "s2", "s3", _PASSPHRASE)
    flow.write_text(text, encoding="utf-8")
    return dest


def cli(*args: str, **kw: Any) -> subprocess.CompletedProcess:
    """``python -m core.cli ARGS`` from the repository root (stdout, stderr captured; ``kw`` to ``subprocess.run``)."""
    return subprocess.run([sys.executable, "-m", "core.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=180, **kw)


def wait_for(proc: subprocess.Popen, pattern: str, seen: list[str], timeout: float = 90) -> re.Match:
    """Read ``proc``'s stderr (kept in ``seen``) until a line matches ``pattern``."""
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


def take_over_the_reason(project: Path, *extra: str, meaning: str = "replace",
                         type_it: bool = True) -> tuple[subprocess.CompletedProcess, str]:
    """Run leave_request, take step 10 over on CDP (double-click Reason, type unless not ``type_it``), hand back
    as ``meaning``; the finished run (its stderr) and everything it printed on stderr."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("DISPLAY", None)
    proc = subprocess.Popen([sys.executable, "-m", "core.cli", "run", str(project), "--flow", "leave_request",
                             "--headless", "--on-escalation", "wait", "--takeover-timeout", "90", *extra],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen: list[str] = []
    try:
        endpoint = wait_for(proc, r"step 10 is yours; CDP (http://127\.0\.0\.1:\d+)", seen).group(1)
        with sync_playwright() as pw:
            browser = pw.chromium.connect_over_cdp(endpoint)
            page = next(p for c in browser.contexts for p in c.pages if "/requests/new" in p.url)
            page.get_by_text("Reason", exact=True).dblclick()
            if type_it:
                page.keyboard.type("Family trip")
            page.wait_for_timeout(400)
            out = cli("handback", str(project), "--as", meaning)
            assert out.returncode == 0, out.stderr
        rest, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    return subprocess.CompletedProcess(proc.args, proc.returncode, rest, err), "".join(seen) + err
