"""``steadyhand run --browser-endpoint URL`` through the real command line on the bundled demo project.

* a Playwright browser server (``python -m playwright launch-server``, the Playwright package's own driver,
  Debian's Chromium, bound to 127.0.0.1): reached with ``browser_type.connect``;
* a Chromium started here with ``--remote-debugging-port`` on 127.0.0.1 (what a Selenium Grid 4 node exposes):
  reached with ``connect_over_cdp``; the run closes its own context only, the browser lives on;
* a host off this machine is refused (exit 2, one line) unless the project lists it under
  ``browser.endpoint_hosts`` and is trusted; then the connection is tried, and a refused one is the
  broken-environment exit (4) within the connect limit.

The local launch is made impossible (``STEADYHAND_CHROMIUM`` names a missing file), so a run that passes ran
in the endpoint's browser.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from core.exitcodes import EXIT_ENVIRONMENT, EXIT_INPUT, EXIT_OK
from core.perception.browser import CHROMIUM_ARGS

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
#: Longest wait for a browser server or a Chromium to say where it listens, s.
START_LIMIT_S = 60


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if not k.startswith("STEADYHAND_")}
    e["PYTHONPATH"] = str(ROOT)
    e["STEADYHAND_CHROMIUM"] = "/nonexistent/chromium"  # a local launch fails: only the endpoint's browser can run
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "core.cli", *args], cwd=ROOT, env=e, capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    p = tmp_path / "demo"
    shutil.copytree(ROOT / "projects" / "demo", p)
    return p


@pytest.fixture
def playwright_server(tmp_path: Path):
    conf = tmp_path / "server.json"
    conf.write_text(json.dumps({"executablePath": CHROMIUM, "headless": True, "host": "127.0.0.1", "port": 0,
                                "args": list(CHROMIUM_ARGS)}))
    # a session of its own: the wrapper starts Playwright's node server as a child, which a terminate of the
    # wrapper alone would leave running after the test
    proc = subprocess.Popen([sys.executable, "-m", "playwright", "launch-server", "--browser", "chromium",
                             "--config", str(conf)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + START_LIMIT_S
        line = ""
        while time.monotonic() < deadline and not line.startswith("ws://"):
            line = proc.stdout.readline().strip()  # the server prints its ws:// endpoint first
            assert line or proc.poll() is None, "the Playwright server ended before saying its endpoint"
        assert line.startswith("ws://127.0.0.1:"), line
        yield line
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)  # the wrapper and the node server it started
        except ProcessLookupError:
            pass
        proc.wait(timeout=30)


@pytest.fixture
def cdp_chromium(tmp_path: Path):
    port = _free_port()
    proc = subprocess.Popen([CHROMIUM, "--headless=new", *CHROMIUM_ARGS, f"--remote-debugging-port={port}",
                             "--remote-debugging-address=127.0.0.1", f"--user-data-dir={tmp_path / 'profile'}",
                             "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_LIMIT_S
        while True:
            try:
                with urllib.request.urlopen(f"{url}/json/version", timeout=2) as r:
                    json.loads(r.read())
                break
            except OSError:
                assert time.monotonic() < deadline and proc.poll() is None, "Chromium's DevTools endpoint never answered"
                time.sleep(0.2)
        yield url, proc
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_a_run_in_a_playwright_browser_server(demo: Path, tmp_path: Path, playwright_server: str) -> None:
    out = tmp_path / "run.json"
    r = _run("run", str(demo), "--flow", "login_lockout", "--browser-endpoint", playwright_server, "--json", str(out))
    assert r.returncode == EXIT_OK, r.stderr
    assert json.loads(out.read_text())["flows"][0]["passed"] is True
    token = playwright_server.rsplit("/", 1)[1]
    assert token not in r.stderr + r.stdout  # the server's path token is never printed


def test_the_local_launch_really_is_impossible_without_an_endpoint(demo: Path) -> None:
    r = _run("run", str(demo), "--flow", "login_lockout")
    assert r.returncode == EXIT_ENVIRONMENT and "/nonexistent/chromium" in r.stderr


def test_a_run_over_cdp_leaves_the_browser_it_did_not_start(demo: Path, tmp_path: Path, cdp_chromium) -> None:
    url, proc = cdp_chromium
    out = tmp_path / "run.json"
    r = _run("run", str(demo), "--flow", "login_lockout", "--browser-endpoint", url, "--json", str(out))
    assert r.returncode == EXIT_OK, r.stderr
    assert json.loads(out.read_text())["flows"][0]["passed"] is True
    assert proc.poll() is None  # the Grid node's browser is not ours to close
    with urllib.request.urlopen(f"{url}/json/list", timeout=5) as resp:
        pages = json.loads(resp.read())
    assert not any("127.0.0.1" in p.get("url", "") and "/login" in p.get("url", "") for p in pages), pages


def test_an_endpoint_off_this_machine_is_refused_unless_listed_and_trusted(demo: Path, tmp_path: Path) -> None:
    host = socket.gethostname()
    assert host and host != "localhost"
    url = f"ws://user:hunter2@{host}:{_free_port()}/secret-token"
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    r = _run("run", str(demo), "--flow", "login_lockout", "--browser-endpoint", url, env=env, timeout=120)
    errors = [line for line in r.stderr.splitlines() if line.startswith("steadyhand: error:")]
    assert r.returncode == EXIT_INPUT and len(errors) == 1 and "browser.endpoint_hosts" in errors[0], r.stderr
    assert "hunter2" not in r.stderr and "secret-token" not in r.stderr

    settings = demo / "steadyhand.yaml"
    doc = yaml.safe_load(settings.read_text())
    doc["browser"]["endpoint_hosts"] = [host]
    settings.write_text(yaml.safe_dump(doc))
    r = _run("run", str(demo), "--flow", "login_lockout", "--browser-endpoint", url, env=env, timeout=120)
    assert r.returncode == EXIT_INPUT and "steadyhand trust" in r.stderr, r.stderr

    t = _run("trust", str(demo), env=env, timeout=120)
    assert t.returncode == EXIT_OK, t.stderr
    assert "browser.endpoint_hosts" in t.stdout
    started = time.monotonic()
    r = _run("run", str(demo), "--flow", "login_lockout", "--browser-endpoint", url, env=env, timeout=120)
    assert r.returncode == EXIT_ENVIRONMENT, r.stderr  # allowed now: tried, and nothing listens there
    assert "cannot connect to the Playwright browser server" in r.stderr
    assert "hunter2" not in r.stderr and "secret-token" not in r.stderr
    assert time.monotonic() - started < 100


@pytest.mark.parametrize("value", ["ftp://127.0.0.1:21", "127.0.0.1:9222", "ws://:3000/"])
def test_a_bad_endpoint_is_one_line_and_bad_input(demo: Path, value: str) -> None:
    r = _run("run", str(demo), "--browser-endpoint", value, timeout=120)
    errors = [line for line in r.stderr.splitlines() if line.startswith("steadyhand: error:")]
    assert r.returncode == EXIT_INPUT and len(errors) == 1 and "--browser-endpoint" in errors[0], r.stderr


def test_takeover_wait_needs_a_browser_launched_here(demo: Path) -> None:
    r = _run("run", str(demo), "--browser-endpoint", "http://127.0.0.1:9", "--on-escalation", "wait", timeout=120)
    assert r.returncode == EXIT_INPUT and "--on-escalation" in r.stderr
