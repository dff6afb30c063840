"""A small loopback HTTP server: static files plus JSON routes, served by werkzeug's WSGI server.

Bundled sites (the demo app, MiniWoB++ pages) are served by one
:class:`LoopbackServer` each, bound to ``127.0.0.1`` on a free port (port 0,
architecture rule 11) and run in a daemon thread.
:class:`StaticSite` adds static files from one folder: correct MIME types,
no directory listing, path traversal refused, ``Cache-Control: no-store``
(a site variant switched between runs must never be served from cache).

Routes are the hook for APIs: ``server.route("POST", "/api/items/{id}",
handler)`` where ``handler(request) -> Response`` and ``request.params``
holds the ``{name}`` segments.  Routes are tried before static files.

The server is quiet: no per-request log lines; a handler that raises gets a
500 JSON answer and one ``logging`` record on the ``core.sites`` logger.
"""
from __future__ import annotations

import json
import logging
import mimetypes
import re
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Mapping
from urllib.parse import parse_qs

from core.sites.faults import SCRIPT_ERROR_TEXT, ServerFault, reset_connection

__all__ = [
    "Request", "Response", "Handler", "LoopbackServer", "StaticSite", "CountingSite",
    "file_response", "content_type_for",
]

log = logging.getLogger("core.sites")

#: Largest request body accepted, bytes.
MAX_BODY_BYTES = 1_000_000

#: MIME types of web files, fixed here so that they do not depend on the
#: host's ``/etc/mime.types`` (Debian maps ``.js`` differently across releases).
_MIME = {
    ".html": "text/html; charset=utf-8",
    ".htm": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".json": "application/json",
    ".map": "application/json",
    ".txt": "text/plain; charset=utf-8",
    ".csv": "text/csv; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".ico": "image/x-icon",
    ".woff": "font/woff",
    ".woff2": "font/woff2",
    ".ttf": "font/ttf",
    ".wav": "audio/wav",
    ".mp3": "audio/mpeg",
    ".xml": "application/xml",
}


def content_type_for(path: Path | str) -> str:
    """MIME type (with charset for text) of a file, from its suffix.

    Unknown suffixes fall back to :mod:`mimetypes`, then
    ``application/octet-stream``.
    """
    suffix = Path(path).suffix.lower()
    if suffix in _MIME:
        return _MIME[suffix]
    guessed, _ = mimetypes.guess_type(str(path))
    return guessed or "application/octet-stream"


@dataclass(frozen=True, slots=True)
class Request:
    """One HTTP request as seen by a route handler.

    Attributes
    ----------
    method : str
        Upper-case method (``"GET"``; ``HEAD`` is dispatched as ``GET``).
    path : str
        URL path, percent-decoded, without query.
    query : Mapping[str, list[str]]
        Parsed query string.
    headers : Mapping[str, str]
        Request headers, keys lower-case.
    body : bytes
        Raw body (at most :data:`MAX_BODY_BYTES`).
    cookies : Mapping[str, str]
        Cookies sent by the client.
    params : Mapping[str, str]
        Values of the ``{name}`` segments of the matched route pattern.
    """

    method: str
    path: str
    query: Mapping[str, list[str]] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    cookies: Mapping[str, str] = field(default_factory=dict)
    params: Mapping[str, str] = field(default_factory=dict)

    def json(self) -> Any:
        """Body parsed as JSON; ``{}`` when empty.

        Raises
        ------
        ValueError
            The body is not valid JSON.
        """
        if not self.body.strip():
            return {}
        return json.loads(self.body.decode("utf-8"))

    def arg(self, name: str, default: str = "") -> str:
        """First value of query parameter ``name`` (``default`` if absent)."""
        values = self.query.get(name)
        return values[0] if values else default


@dataclass(frozen=True, slots=True)
class Response:
    """What a handler returns.

    Attributes
    ----------
    status : int
        HTTP status code.
    body : bytes
        Response body (dropped for ``HEAD``).
    content_type : str
        ``Content-Type`` header value.
    headers : tuple[tuple[str, str], ...]
        Extra headers (``Set-Cookie`` may repeat).
    """

    status: int = 200
    body: bytes = b""
    content_type: str = "text/plain; charset=utf-8"
    headers: tuple[tuple[str, str], ...] = ()

    @classmethod
    def json(cls, data: Any, status: int = 200, headers: tuple[tuple[str, str], ...] = ()) -> "Response":
        """JSON response (UTF-8, compact)."""
        body = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        return cls(status, body, "application/json", headers)

    @classmethod
    def text(cls, text: str, status: int = 200, content_type: str = "text/plain; charset=utf-8",
             headers: tuple[tuple[str, str], ...] = ()) -> "Response":
        """Text response encoded as UTF-8."""
        return cls(status, text.encode("utf-8"), content_type, headers)

    @classmethod
    def redirect(cls, location: str, status: int = 302) -> "Response":
        """Redirect to ``location`` (a path on the same server)."""
        return cls(status, b"", "text/plain; charset=utf-8", (("Location", location),))

    @classmethod
    def empty(cls, status: int = 204) -> "Response":
        """Response without a body."""
        return cls(status)

    @classmethod
    def error(cls, status: int, text: str, /, **extra: Any) -> "Response":
        """JSON error ``{"error": text, ...extra}``."""
        return cls.json({"error": text, **extra}, status)

    def with_headers(self, *headers: tuple[str, str]) -> "Response":
        """Copy with extra headers appended."""
        return replace(self, headers=self.headers + tuple(headers))


Handler = Callable[[Request], Response]

_NOT_FOUND_HTML = (
    "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Not found</title></head>"
    "<body><h1>Not found</h1><p>There is nothing at this address.</p></body></html>"
)


def file_response(path: Path) -> Response:
    """Serve one existing regular file with its MIME type; 404 otherwise."""
    if not path.is_file():
        return Response.text(_NOT_FOUND_HTML, 404, "text/html; charset=utf-8")
    return Response(200, path.read_bytes(), content_type_for(path))


@dataclass(frozen=True, slots=True)
class _Route:
    method: str
    pattern: str
    regex: re.Pattern[str]
    handler: Handler


def _compile(pattern: str) -> re.Pattern[str]:
    """``/api/items/{id}`` -> regex with named groups; a segment never spans ``/``."""
    out, pos = [], 0
    for m in re.finditer(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", pattern):
        out.append(re.escape(pattern[pos:m.start()]))
        out.append(f"(?P<{m.group(1)}>[^/]+)")
        pos = m.end()
    out.append(re.escape(pattern[pos:]))
    return re.compile("^" + "".join(out) + "$")


def _quiet_handler() -> type:
    """Werkzeug's request handler, quiet (no per-request lines), HTTP/1.0 and with a read timeout."""
    from werkzeug.serving import WSGIRequestHandler

    class QuietHandler(WSGIRequestHandler):
        protocol_version = "HTTP/1.0"  # one request per connection: no idle keep-alive threads
        timeout = 30  # s; a silent client is dropped

        def log(self, type: str, message: str, *args: Any) -> None:  # noqa: A002 - werkzeug's signature
            if type == "error":
                log.debug("site server: " + message, *args)

        def log_request(self, *args: Any, **kwargs: Any) -> None:
            return

        def version_string(self) -> str:
            return "SteadyhandSite/1.0"

    return QuietHandler


def _wsgi_app(owner: "LoopbackServer") -> Callable[..., Any]:
    """The WSGI application of ``owner``: werkzeug parses the request, ``owner.handle`` answers it."""
    from werkzeug.exceptions import RequestEntityTooLarge
    from werkzeug.wrappers import Request as WRequest
    from werkzeug.wrappers import Response as WResponse

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        with owner._activity:
            owner._in_flight += 1
        try:
            return answer(environ, start_response)
        finally:
            with owner._activity:
                owner._in_flight -= 1
                owner._last_done = time.monotonic()
                owner._activity.notify_all()

    def answer(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        wreq = WRequest(environ)
        wreq.max_content_length = MAX_BODY_BYTES
        try:
            body = wreq.get_data(cache=False)
        except RequestEntityTooLarge:
            body = None
        if body is None:
            response = Response.error(413, "Request body too large")
        else:
            method = "GET" if wreq.method == "HEAD" else wreq.method
            request = Request(
                method=method,
                path=wreq.path or "/",
                query=parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True),
                headers={k.lower(): v for k, v in wreq.headers.items()},
                body=body,
                cookies=dict(wreq.cookies),
            )
            fault = owner.fault if owner.fault is not None and owner.fault.matches(method, request.path) else None
            if fault is not None:  # an injected fault (core.sites.faults): benchmarks and tests only
                fault.hits += 1
                fault.hold()
                if fault.kind == "reset":
                    reset_connection(environ.get("werkzeug.socket"))
                    # werkzeug takes a ConnectionError as a dropped connection: nothing more is sent or logged
                    raise ConnectionResetError("injected fault: connection reset")
            try:
                if fault is not None and fault.kind in ("error", "hang"):
                    response = (Response.error(500, "Internal error: injected fault") if fault.kind == "error"
                                else Response.error(503, "Service unavailable: injected hang ended"))
                else:
                    response = owner.handle(request)
                if fault is not None and fault.kind == "script_error" and response.content_type.startswith("text/html"):
                    response = replace(response, body=response.body + (
                        f"<script>throw new Error({SCRIPT_ERROR_TEXT!r});</script>").encode("utf-8"))
            except Exception as exc:  # a bug in a handler must not kill the server
                log.exception("handler failed for %s %s", wreq.method, wreq.full_path)
                response = Response.error(500, f"Internal error: {type(exc).__name__}")
        out = WResponse(response.body, status=response.status, content_type=response.content_type)
        out.headers["Cache-Control"] = "no-store"
        out.headers["X-Content-Type-Options"] = "nosniff"
        for name, value in response.headers:
            out.headers.add(name, value)
        return out(environ, start_response)

    return app


class LoopbackServer:
    """HTTP server on ``127.0.0.1`` (free port) in a daemon thread, with routes.

    Parameters
    ----------
    port : int
        TCP port; 0 (default) picks a free one.

    Examples
    --------
    >>> srv = LoopbackServer()
    >>> srv.route("GET", "/api/ping", lambda req: Response.json({"ok": True}))
    >>> with srv:
    ...     url = srv.base_url + "/api/ping"
    """

    host = "127.0.0.1"

    def __init__(self, *, port: int = 0) -> None:
        self._port = port
        self._routes: list[_Route] = []
        self._httpd: Any = None  # werkzeug.serving.ThreadedWSGIServer
        self._thread: threading.Thread | None = None
        self._activity = threading.Condition()
        self._in_flight = 0
        self._last_done = 0.0
        #: An injected fault (:class:`core.sites.faults.ServerFault`), None on a good day.
        self.fault: ServerFault | None = None

    # -- routes -------------------------------------------------------------
    def route(self, method: str, pattern: str, handler: Handler) -> None:
        """Register ``handler`` for ``method`` on URL paths matching ``pattern``.

        ``pattern`` is a path with ``{name}`` segments (``/api/items/{id}``);
        routes are tried in registration order, before static files.
        """
        self._routes.append(_Route(method.upper(), pattern, _compile(pattern), handler))

    def handle(self, request: Request) -> Response:
        """Answer one request: the first matching route, else :meth:`fallback`.

        A path matched by a route of another method gets 405.
        """
        allowed: list[str] = []
        for r in self._routes:
            m = r.regex.match(request.path)
            if not m:
                continue
            if r.method != request.method:
                allowed.append(r.method)
                continue
            return r.handler(replace(request, params=m.groupdict()))
        if allowed:
            return Response.error(405, "Method not allowed").with_headers(("Allow", ", ".join(sorted(set(allowed)))))
        return self.fallback(request)

    def fallback(self, request: Request) -> Response:
        """Answer a request no route matched (404 here; static files in subclasses)."""
        return Response.error(404, "Not found")

    def wait_idle(self, *, quiet_s: float = 0.3, timeout_s: float = 5.0) -> bool:
        """Block until no request is being answered and none ended for ``quiet_s`` s; False after ``timeout_s``.

        For harnesses: a page's late beacons (activations it posts while a
        test closes it) are answered before the next test resets the site.
        """
        deadline = time.monotonic() + timeout_s
        with self._activity:
            while True:
                now = time.monotonic()
                quiet_for = now - self._last_done
                if self._in_flight == 0 and quiet_for >= quiet_s:
                    return True
                if now >= deadline:
                    return False
                wait = quiet_s - quiet_for if self._in_flight == 0 else quiet_s
                self._activity.wait(timeout=max(0.01, min(wait, deadline - now)))

    # -- lifecycle ------------------------------------------------------------
    @property
    def running(self) -> bool:
        """True between :meth:`start` and :meth:`stop`."""
        return self._httpd is not None

    @property
    def port(self) -> int:
        """Bound TCP port.

        Raises
        ------
        RuntimeError
            The server is not started.
        """
        if self._httpd is None:
            raise RuntimeError("server not started")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>`` (no trailing slash).

        Raises
        ------
        RuntimeError
            The server is not started.
        """
        return f"http://{self.host}:{self.port}"

    def url(self, path: str = "/") -> str:
        """Absolute URL of ``path`` on this server."""
        return self.base_url + (path if path.startswith("/") else "/" + path)

    def start(self) -> "LoopbackServer":
        """Bind and serve in a daemon thread; returns ``self``.  Idempotent."""
        if self._httpd is not None:
            return self
        import socket

        from werkzeug.serving import ThreadedWSGIServer

        # bound here (werkzeug would print and exit on a bind error): an OSError names the port
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.host, self._port))
            sock.listen(64)
            httpd = ThreadedWSGIServer(self.host, sock.getsockname()[1], _wsgi_app(self), handler=_quiet_handler(),
                                       fd=sock.fileno())
        finally:
            sock.close()  # werkzeug serves a duplicate of it
        httpd.daemon_threads = True
        self._httpd = httpd
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.1},
            name=f"{type(self).__name__}:{self.port}", daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket.  Idempotent."""
        httpd, thread = self._httpd, self._thread
        self._httpd = self._thread = None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.server_close()
        if thread is not None:
            thread.join(timeout=5)

    def __enter__(self) -> "LoopbackServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class StaticSite(LoopbackServer):
    """Loopback server of the files under ``root``, plus routes.

    Parameters
    ----------
    root : Path
        Folder served.  Only regular files inside it (after resolving
        symlinks) are served; anything else is 404.
    mount : str
        URL prefix the folder is served under (``"/"`` or ``"/static/"``).
    index : str
        File served for a directory URL, if present; directories are never
        listed.
    port : int
        TCP port; 0 (default) picks a free one.
    """

    def __init__(self, root: Path, *, mount: str = "/", index: str = "index.html", port: int = 0) -> None:
        super().__init__(port=port)
        self._root = Path(root).resolve()
        if not self._root.is_dir():
            raise FileNotFoundError(f"not a folder: {root}")
        self._mount = "/" + mount.strip("/") + "/" if mount.strip("/") else "/"
        self._index = index

    @property
    def root(self) -> Path:
        """Resolved folder served."""
        return self._root

    def resolve(self, relpath: str) -> Path | None:
        """File under :attr:`root` for a relative URL path, or None.

        None when the path climbs out of the root (``..``, absolute parts,
        symlinks pointing outside), names a hidden file, or does not exist.
        A directory maps to its index file.
        """
        parts = [p for p in relpath.replace("\\", "/").split("/") if p not in ("", ".")]
        if any(p == ".." or p.startswith(".") or "\x00" in p for p in parts):
            return None
        candidate = self._root.joinpath(*parts) if parts else self._root
        try:
            candidate = candidate.resolve()
        except (OSError, RuntimeError):
            return None
        if not candidate.is_relative_to(self._root):
            return None
        if candidate.is_dir():
            candidate = candidate / self._index
        return candidate if candidate.is_file() else None

    def serve(self, relpath: str) -> Response:
        """Response for the file at ``relpath`` under the root (404 if refused)."""
        path = self.resolve(relpath)
        if path is None:
            return Response.text(_NOT_FOUND_HTML, 404, "text/html; charset=utf-8")
        return file_response(path)

    def fallback(self, request: Request) -> Response:
        """Static files for ``GET`` under the mount point; else 404/405."""
        if not request.path.startswith(self._mount) and request.path + "/" != self._mount:
            return super().fallback(request)
        if request.method != "GET":
            return Response.error(405, "Method not allowed").with_headers(("Allow", "GET, HEAD"))
        return self.serve(request.path[len(self._mount):])


class CountingSite(LoopbackServer):
    """A small loopback site of given pages that counts the requests it answers, per method and path.

    What tests need to serve a page or two and then say how often each was asked for (a write sent once, a
    page loaded twice), without a hand-made ``http.server`` each.

    Parameters
    ----------
    pages : Mapping[str, str | bytes | Response | Callable[[Request], Response]]
        URL path (``"/people"``; a ``{name}`` segment matches any one segment) -> the HTML text (served as
        ``text/html; charset=utf-8``), raw bytes (``application/octet-stream``), a :class:`Response`, or a
        handler called with the :class:`Request`.  Every method is answered on a page's path.  Other paths: 404.
    port : int
        TCP port on 127.0.0.1; 0 (default) picks a free one.
    """

    def __init__(self, pages: Mapping[str, Any], *, port: int = 0) -> None:
        super().__init__(port=port)
        self._counts: dict[tuple[str, str], int] = {}
        self._count_lock = threading.Lock()
        for path, page in pages.items():
            for method in ("GET", "POST", "PUT", "PATCH", "DELETE"):
                self.route(method, path, self._page_handler(page))

    @staticmethod
    def _page_handler(page: Any) -> Handler:
        if callable(page):
            return page  # type: ignore[no-any-return]
        if isinstance(page, Response):
            return lambda _request: page
        if isinstance(page, bytes):
            return lambda _request: Response(200, page, "application/octet-stream")
        return lambda _request: Response.text(str(page), content_type="text/html; charset=utf-8")

    def handle(self, request: Request) -> Response:
        """Count the request (``(method, path)``), then answer it as :meth:`LoopbackServer.handle` does."""
        with self._count_lock:
            key = (request.method, request.path)
            self._counts[key] = self._counts.get(key, 0) + 1
        return super().handle(request)

    def count(self, path: str, method: str = "GET") -> int:
        """How many ``method`` requests for ``path`` were answered so far."""
        with self._count_lock:
            return self._counts.get((method.upper(), path), 0)

    def counts(self) -> dict[tuple[str, str], int]:
        """Every ``(method, path)`` asked for so far -> how many times (a copy)."""
        with self._count_lock:
            return dict(self._counts)
