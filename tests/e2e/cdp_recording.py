"""Shared by the end-to-end recording tests: run `steadyhand record` and drive its Chromium over CDP, as a
user's own script would (README "Record your first flow"), then replay with `steadyhand run`."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def record(project: Path, flow: str, drive: Callable[..., None], *url: str,
           env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Run `steadyhand record` on ``project``, let ``drive(page)`` act over CDP, stop it with SIGTERM.

    Returns ``(exit code, stdout, stderr)``; waits at most 60 s for the recorder to be ready.
    """
    port = free_port()
    e = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    e.pop("DISPLAY", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "core.cli", "record", "--project", str(project), "--flow", flow, "--headless",
         "--cdp-port", str(port), *url], cwd=ROOT, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        head = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            assert line, "".join(head) + proc.stderr.read()
            head.append(line)
            if line.startswith("Close the page"):
                break
        with sync_playwright() as pw:
            browser = pw.chromium.connect_over_cdp(f"http://127.0.0.1:{port}")
            drive(browser.contexts[0].pages[0])
            browser.close()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, "".join(head) + out, err


def replay(project: Path, flow: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`steadyhand run PROJECT --flow FLOW --headless --no-store [ARGS]`."""
    return subprocess.run([sys.executable, "-m", "core.cli", "run", str(project), "--flow", flow, "--headless",
                           "--no-store", *args], cwd=ROOT, capture_output=True, text=True, timeout=180,
                          env={**os.environ, **(env or {})})
