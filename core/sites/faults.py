"""Fault injection for the loopback servers: a bad day of the target server, on request.

A :class:`ServerFault` set on a :class:`~core.sites.server.LoopbackServer`
(``server.fault = ServerFault("error", path="/api/requests", method="POST")``,
or :meth:`core.sites.demo.DemoSite.set_fault`) changes how the requests it
matches are answered:

``error``
    HTTP 500 with a JSON body; the route's handler is never called (no write).
``slow``
    the answer is held ``delay_ms`` ms, then the route answers normally (its
    write happens, late).
``hang``
    the answer is held until the fault is cleared or ``delay_ms`` ms passed
    (at most :data:`HANG_MAX_MS`), then HTTP 503; the handler is never called.
``reset``
    the TCP connection is reset (``SO_LINGER`` 0, then closed): the browser
    sees ``net::ERR_CONNECTION_RESET``; the handler is never called.
``script_error``
    HTML pages get a ``<script>`` that throws an ``Error`` at load (a page
    JavaScript error); everything else is answered normally.

``path`` is an :mod:`fnmatch` pattern of the URL path (``"*"``: every
request), ``method`` an upper-case method or ``""`` for any.  Only benchmarks
and tests set faults; the engine never knows about them.
"""
from __future__ import annotations

import fnmatch
import socket
import struct
import threading
from dataclasses import dataclass, field

__all__ = ["FAULT_KINDS", "HANG_MAX_MS", "ServerFault", "SCRIPT_ERROR_TEXT", "reset_connection"]

#: The kinds of :class:`ServerFault`.
FAULT_KINDS = ("error", "slow", "hang", "reset", "script_error")
#: Longest hold of a ``hang`` fault, ms: every wait has a limit, the server's too.
HANG_MAX_MS = 120_000
#: The message of the ``script_error`` fault's thrown Error.
SCRIPT_ERROR_TEXT = "injected fault: page script error"


@dataclass
class ServerFault:
    """One injected fault (see the module doc); ``hits`` counts the requests it changed.

    Raises
    ------
    ValueError
        An unknown ``kind`` (names the kinds) or a negative ``delay_ms``.
    """

    kind: str
    path: str = "*"
    method: str = ""
    delay_ms: int = 0
    hits: int = 0
    released: threading.Event = field(default_factory=threading.Event, repr=False)

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown server fault {self.kind!r}; expected one of {', '.join(FAULT_KINDS)}")
        if self.delay_ms < 0:
            raise ValueError(f"delay_ms must be >= 0, got {self.delay_ms}")
        self.method = self.method.upper()

    def matches(self, method: str, path: str) -> bool:
        """True when a request ``method path`` is one this fault changes."""
        return (not self.method or self.method == method.upper()) and fnmatch.fnmatchcase(path, self.path)

    def hold(self) -> None:
        """Block as the fault says (``slow``: ``delay_ms``; ``hang``: until :meth:`release`, bounded)."""
        if self.kind == "slow":
            self.released.wait(self.delay_ms / 1000.0)
        elif self.kind == "hang":
            limit = self.delay_ms or HANG_MAX_MS
            self.released.wait(min(limit, HANG_MAX_MS) / 1000.0)

    def release(self) -> None:
        """End every hold now (a cleared fault never keeps a request waiting)."""
        self.released.set()


def reset_connection(sock: socket.socket | None) -> None:
    """Reset a TCP connection: ``SO_LINGER`` on with 0 s, then close (the peer reads ECONNRESET)."""
    if sock is None:
        return
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    try:
        # close the descriptor now: a plain close() waits for the handler's file objects to close first
        # (and werkzeug then answers), _real_close marks the socket closed so no later call touches the fd
        getattr(sock, "_real_close", sock.close)()
    except OSError:
        pass
