"""A loopback site for the verification and recovery pages (``fixtures/verify``) that counts every write.

GET serves the fixture files; ``/go/<n>`` answers 303 to the list (mode ``"list"``) or to a
confirmation page ``/confirm/<n>`` (mode ``"confirm"``: a later release); every POST is counted by path
(the ground truth of what was written) and answered 200.
"""
from __future__ import annotations

import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

FIXTURE = Path(__file__).with_name("fixtures") / "verify"


class VerifySite:
    """``start()`` / ``stop()``; ``posts`` counts POSTs by path; ``mode`` picks where ``/go/<n>`` leads."""

    def __init__(self) -> None:
        self.posts: Counter[str] = Counter()
        self.mode = "list"
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, body: bytes = b"", ctype: str = "text/html", location: str = "") -> None:
                self.send_response(status)
                if location:
                    self.send_header("Location", location)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802
                path = self.path.split("?")[0]
                if path.startswith("/go/"):
                    n = path.rsplit("/", 1)[-1]
                    self._send(303, location=f"/list.html?archived={n}" if site.mode == "list" else f"/confirm/{n}")
                    return
                if path.startswith("/confirm/"):
                    path = "/confirm.html"
                if path == "/filter-error.html":
                    path = "/filter.html"
                f = (FIXTURE / path.lstrip("/")).resolve()
                if f.parent != FIXTURE.resolve() or not f.is_file():
                    self._send(404, b"not found")
                    return
                self._send(200, f.read_bytes())

            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                site.posts[self.path.split("?")[0]] += 1
                self._send(200, b'{"ok": true}', "application/json")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> "VerifySite":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class Events:
    """An event sink: every engine event in order; ``of(type)`` filters."""

    def __init__(self) -> None:
        self.events: list[object] = []

    def __call__(self, event: object) -> None:
        self.events.append(event)

    def of(self, kind: type) -> list:
        return [e for e in self.events if isinstance(e, kind)]
