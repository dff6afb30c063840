"""Injected server faults on a real loopback server (werkzeug): 500, slow, hang, reset, page script errors."""
from __future__ import annotations

import threading
import time

import httpx
import pytest

from core.sites.faults import SCRIPT_ERROR_TEXT, ServerFault
from core.sites.server import LoopbackServer, Response


@pytest.fixture
def server():
    calls: list[str] = []
    srv = LoopbackServer()
    srv.route("POST", "/api/write", lambda req: (calls.append("write"), Response.json({"ok": True}, 201))[1])
    srv.route("GET", "/page", lambda req: Response.text("<html><body>hi</body></html>",
                                                          content_type="text/html; charset=utf-8"))
    srv.start()
    srv.calls = calls
    yield srv
    if srv.fault is not None:
        srv.fault.release()
    srv.stop()


def test_error_answers_500_without_calling_the_handler(server):
    server.fault = ServerFault("error", "/api/write", "POST")
    r = httpx.post(server.url("/api/write"))
    assert r.status_code == 500 and server.calls == [] and server.fault.hits == 1
    assert httpx.get(server.url("/page")).status_code == 200  # other requests are untouched


def test_slow_answers_late_and_the_write_happens(server):
    server.fault = ServerFault("slow", "/api/*", "POST", delay_ms=400)
    t = time.monotonic()
    r = httpx.post(server.url("/api/write"))
    assert r.status_code == 201 and time.monotonic() - t >= 0.35 and server.calls == ["write"]


def test_hang_holds_until_released_then_503_and_no_write(server):
    fault = ServerFault("hang", "/api/write")
    server.fault = fault
    threading.Timer(0.5, fault.release).start()
    t = time.monotonic()
    r = httpx.post(server.url("/api/write"), timeout=10)
    assert r.status_code == 503 and time.monotonic() - t >= 0.45 and server.calls == []


def test_reset_resets_the_connection(server):
    server.fault = ServerFault("reset", "/api/write")
    with pytest.raises(httpx.TransportError):
        httpx.post(server.url("/api/write"))
    assert server.calls == []


def test_script_error_is_appended_to_html_pages_only(server):
    server.fault = ServerFault("script_error", "*", "GET")
    body = httpx.get(server.url("/page")).text
    assert SCRIPT_ERROR_TEXT in body and "<script>throw new Error(" in body


@pytest.mark.parametrize("kwargs, words", [({"kind": "explode"}, "unknown server fault"),
                                           ({"kind": "slow", "delay_ms": -1}, "delay_ms")])
def test_bad_faults_are_refused(kwargs, words):
    with pytest.raises(ValueError, match=words):
        ServerFault(**kwargs)
