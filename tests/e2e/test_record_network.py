"""The recorder follows the page's requests without making Playwright keep them.

It watches writes (S6) and navigations through CDP Network events: a
subscription to Playwright's ``request`` events would keep every Request and
Response object alive in the recording process until 10,000 of each pile up
(~14 KB per request, measured by ``steadyhand bench record``).  Writes made
inside a cross-site (out-of-process) iframe are still seen.
"""
from __future__ import annotations

import gc
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from core.domain import BrowserSettings
from core.record.recorder import Recorder

FETCHES = 300


class _Site(BaseHTTPRequestHandler):
    """``/``: a page with a Save button (POST) and a cross-site iframe (``localhost``) with another."""

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802
        port = self.server.server_address[1]
        if self.path.startswith("/inner"):
            body = "<button onclick=\"fetch('/save', {method: 'POST', body: 'x'})\">Save inside</button>"
        elif self.path.startswith("/ping"):
            body = "ok"
        else:
            body = ("<h1>Outer</h1><button onclick=\"fetch('/save', {method: 'POST', body: 'x'})\">Save</button>"
                    "<button>Nothing</button>"
                    f"<iframe src='http://localhost:{port}/inner' width=300 height=80></iframe>")
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(204)
        self.end_headers()


@pytest.fixture
def base_url():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def _requests_alive() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o).__name__ == "Request" and "playwright" in type(o).__module__)


def test_writes_are_seen_in_the_page_and_a_cross_site_iframe_and_requests_are_not_kept(base_url, tmp_path: Path):
    rec = Recorder(flow_name="net", settings=BrowserSettings(), base_url=base_url, start_url="/",
                   spool_dir=tmp_path / "spool", headless=True)
    rec.start()
    try:
        page = rec.driver.page
        for _ in range(10):
            rec.pump(50)
        before = _requests_alive()
        page.evaluate("async n => { for (let i = 0; i < n; i++) await fetch('/ping?' + i); }", FETCHES)
        for _ in range(10):
            rec.pump(50)
        kept = _requests_alive() - before
        page.get_by_role("button", name="Nothing").click()
        for _ in range(20):
            rec.pump(50)
        page.get_by_role("button", name="Save", exact=True).click()
        for _ in range(20):
            rec.pump(50)
        inner = next(f for f in page.frames if "/inner" in f.url)
        inner.get_by_role("button", name="Save inside").click()
        for _ in range(30):
            rec.pump(50)
    finally:
        result = rec.stop()
        rec.discard_spool()
    assert kept < FETCHES // 10, f"{kept} Playwright Request objects kept after {FETCHES} fetches"
    steps = [(s.target.name, s.reversible) for s in result.flow.steps]
    assert steps == [("Nothing", True), ("Save", False), ("Save inside", False)], steps
