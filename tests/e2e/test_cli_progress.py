"""`steadyhand run` in real Chromium: a progress bar on a terminal (a pty), plain lines in a pipe."""
from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
ARGS = ["-m", "core.cli", "run", str(ROOT / "projects" / "miniwob"), "--flow", "click-test", "--episodes", "2",
        "--headless", "--no-store"]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "STEADYHAND_PROGRESS"}
    env.update(TERM="xterm-256color", COLUMNS="100")
    return env


def test_pipe_gets_plain_lines_without_escape_codes() -> None:
    r = subprocess.run([sys.executable, *ARGS], cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "\x1b" not in r.stdout + r.stderr
    assert "[1/2] click-test#1000" in r.stderr and "[2/2] click-test#1001" in r.stderr
    assert "click-test#1001: passed" in r.stderr


def test_terminal_gets_a_bar_over_the_episodes() -> None:
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, *ARGS], cwd=ROOT, env=_env(), stdin=follower, stdout=follower,
                            stderr=follower, close_fds=True)
    os.close(follower)
    chunks: list[bytes] = []
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 1.0)
        if ready:
            try:
                data = os.read(leader, 65536)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    os.close(leader)
    assert proc.wait(timeout=30) == 0
    text = b"".join(chunks).decode("utf-8", "replace")
    assert "\x1b[" in text  # the bar is drawn and redrawn
    assert "2/2" in text and "flows" in text
    assert "click-test#1001: passed" in text  # the per-episode lines are still printed, above the bar
    assert "[1/2]" not in text  # not the plain form
