"""Ports and endpoints (issue 21 item 6): every command that opens a CDP port refuses one in use, binds 127.0.0.1
explicitly and prints the endpoint it really bound (checked to be its own browser); Chromium gets --no-sandbox
only when it runs as root.  `run --on-escalation wait` once started a second Chromium on [::1] and printed the
first run's endpoint."""
from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from core.domain import BrowserSettings
from core.perception.browser import CdpPortInUse, bound_cdp_endpoint, chromium_args, free_cdp_port
from core.perception.driver import PlaywrightDriver

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.browser


def cli(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STEADYHAND_")}
    return subprocess.run([sys.executable, "-m", "core.cli", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def _listen(family: int, host: str) -> socket.socket:
    sock = socket.socket(family, socket.SOCK_STREAM)
    if family == socket.AF_INET6:
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    sock.bind((host, 0))
    sock.listen()
    return sock


@pytest.mark.parametrize("family,host", [(socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")])
def test_run_waiting_on_escalations_refuses_a_cdp_port_in_use(tmp_path: Path, family: int, host: str) -> None:
    try:
        taken = _listen(family, host)
    except OSError:
        pytest.fail(f"{host} is not configured on this machine")
    port = taken.getsockname()[1]
    try:
        res = cli("run", str(ROOT / "projects" / "demo"), "--flow", "export_report", "--headless", "--no-store",
                  "--on-escalation", "wait", "--cdp-port", str(port))
    finally:
        taken.close()
    assert res.returncode == 2, res.stdout + res.stderr
    assert f"steadyhand: error: CDP port {port} is in use on {host}; choose another --cdp-port" in res.stderr
    assert "Traceback" not in res.stderr and "takeover: waiting" not in res.stderr


def test_run_waiting_on_escalations_prints_the_endpoint_it_bound(tmp_path: Path) -> None:
    port = free_cdp_port()
    res = cli("run", str(ROOT / "projects" / "demo"), "--flow", "export_report", "--headless", "--no-store",
              "--on-escalation", "wait", "--cdp-port", str(port))
    assert res.returncode == 0, res.stdout + res.stderr
    assert re.search(rf"takeover: waiting on escalations; CDP http://127\.0\.0\.1:{port}\b", res.stderr), res.stderr


class _NotABrowser(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        body = json.dumps([{"id": "someone-else", "type": "page"}]).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_the_endpoint_is_bound_on_ipv4_loopback_and_checked_to_be_this_browser() -> None:
    port = free_cdp_port()
    driver = PlaywrightDriver(BrowserSettings(), base_url="about:blank", headless=True)
    driver.cdp_port = port
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NotABrowser)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        driver.open()
        assert driver.cdp_endpoint == f"http://127.0.0.1:{port}"
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(f"http://127.0.0.1:{port}/json/version", timeout=5) as resp:
            assert "webSocketDebuggerUrl" in json.loads(resp.read())
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s6:  # nothing of ours on [::1]
            s6.settimeout(2)
            assert s6.connect_ex(("::1", port, 0, 0)) != 0
        with pytest.raises(CdpPortInUse, match="belongs to another program"):
            bound_cdp_endpoint(server.server_address[1], driver.page)
    finally:
        server.shutdown()
        driver.close()


def test_a_driver_refuses_a_taken_port_before_chromium_starts() -> None:
    taken = _listen(socket.AF_INET, "127.0.0.1")
    driver = PlaywrightDriver(BrowserSettings(), base_url="about:blank", headless=True)
    driver.cdp_port = taken.getsockname()[1]
    try:
        with pytest.raises(CdpPortInUse, match="is in use on 127.0.0.1"):
            driver.open()
        assert driver.cdp_endpoint == ""
    finally:
        taken.close()
        driver.close()


def test_no_sandbox_only_for_root() -> None:
    assert "--no-sandbox" not in chromium_args(1000)
    assert chromium_args(0)[0] == "--no-sandbox"
    assert ("--no-sandbox" in chromium_args()) == (os.geteuid() == 0)
    assert set(chromium_args(1000)) < set(chromium_args(0))
