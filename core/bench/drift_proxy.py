"""A loopback reverse proxy that strips a path prefix: ``/staging/x`` is forwarded to the upstream's ``/x``.

datasette's ``base_url`` setting writes its links with the prefix but expects a proxy in front to take the
prefix off the requests (served with the prefix left on, some links double it); this is that proxy, for
``steadyhand bench drift``'s replays under ``/staging``.  Standard library only, threaded, 127.0.0.1 only;
a path outside the prefix answers 404 (``/`` redirects to the prefix).  Hop-by-hop headers are dropped.

Errors: OSError when the port cannot be bound; an upstream that does not answer within
:data:`UPSTREAM_TIMEOUT_S` gives the client a 502.
"""
from __future__ import annotations

import http.client
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import importlib.util

from .drift_app_env import SERVERS_DIR


def _load_wsgi():
    """The dispatcher's module (drift_servers/ is not a package: its app servers run in other environments and
    import their frameworks, which the architecture keeps out of core; the prefix rules are shared with it)."""
    spec = importlib.util.spec_from_file_location("_steadyhand_drift_wsgi",
                                                  SERVERS_DIR / "drift_wsgi.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_wsgi = _load_wsgi()
normalise_prefix, split_path = _wsgi.normalise_prefix, _wsgi.split_path

__all__ = ["PrefixProxy", "UPSTREAM_TIMEOUT_S"]

#: Seconds one upstream request may take.
UPSTREAM_TIMEOUT_S = 30.0
_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailers",
        "transfer-encoding", "upgrade", "content-length"}


class PrefixProxy:
    """Serve ``http://127.0.0.1:<port><prefix>/...`` from ``upstream`` (``http://127.0.0.1:N``); a context manager."""

    def __init__(self, prefix: str, upstream_port: int, port: int = 0) -> None:
        self.prefix = normalise_prefix(prefix)
        self.upstream_port = upstream_port
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet
                pass

            def _forward(self) -> None:
                path, _, query = self.path.partition("?")
                split = split_path(proxy.prefix, path)
                if split is None:
                    code, headers, body = (302, {"Location": proxy.prefix + "/"}, b"") if path == "/" else \
                        (404, {"Content-Type": "text/plain"}, f"not under {proxy.prefix}/".encode())
                else:
                    code, headers, body = proxy.fetch(self.command, (split[1] or "/") + (f"?{query}" if query else ""),
                                                      self.headers, self.rfile.read(int(self.headers.get("Content-Length")
                                                                                        or 0)))
                self.send_response(code)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            do_GET = do_POST = do_HEAD = _forward

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.prefix}"

    def fetch(self, method: str, path: str, headers, body: bytes) -> tuple[int, dict[str, str], bytes]:
        """One upstream request; (status, response headers without hop-by-hop ones, body)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.upstream_port, timeout=UPSTREAM_TIMEOUT_S)
        try:
            out = {k: v for k, v in headers.items() if k.lower() not in _HOP and k.lower() != "host"}
            out["Host"] = f"127.0.0.1:{self.upstream_port}"
            conn.request(method, path, body=body or None, headers=out)
            resp = conn.getresponse()
            data = resp.read()
            return resp.status, {k: v for k, v in resp.getheaders() if k.lower() not in _HOP}, data
        except OSError as exc:
            return 502, {"Content-Type": "text/plain"}, f"upstream: {exc}".encode()
        finally:
            conn.close()

    def __enter__(self) -> "PrefixProxy":
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
