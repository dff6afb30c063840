"""Console errors, uncaught exceptions and failed requests of the engine's page, on the monotonic clock.

:class:`PageLog` follows one Playwright page (``console`` messages of type
``error`` and ``pageerror``; the requests that got no response are the page's
:class:`~core.perception.netwatch.NetworkWatch`'s, from CDP's
``Network.loadingFailed``) and keeps the last :data:`KEEP` entries; :meth:`PageLog.between` returns those of a time
window, which :mod:`core.engine.evidence` attributes to the step that was
running.  HTTP errors (status >= 400) come from the page's
:class:`~core.perception.netwatch.NetworkWatch`; beacons and keepalive
pings are left out as the watch tells them (:func:`core.act.writes.is_beacon`),
and so are requests the browser aborted itself (``net::ERR_ABORTED``: a
navigation cancelled them; the app did not fail).

Texts are cut to :data:`MAX_TEXT` chars and URLs to origin and path (a
query may hold data); the caller masks secrets.  Used from the one thread
that owns Playwright (architecture rule 10).
"""
from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from core.act.writes import RequestSeen, is_beacon
from core.perception.netwatch import NetworkWatch

__all__ = ["PageLog", "LogEntry", "KEEP", "MAX_TEXT", "failed_requests"]

#: Entries kept per page (oldest dropped).
KEEP = 300
#: Longest text kept of one message (chars).
MAX_TEXT = 500


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One console error (``kind`` ``error``), uncaught exception (``exception``) or failed request
    (``request``: ``method``, ``url`` origin and path, ``error`` the browser's reason) at ``t``
    (``time.monotonic`` s)."""

    t: float
    kind: str
    text: str
    source: str = ""
    method: str = ""
    url: str = ""
    resource_type: str = ""


def _short_url(url: str) -> str:
    try:
        u = urlsplit(url)
    except ValueError:
        return ""
    if not u.scheme:
        return url[:200]
    return f"{u.scheme}://{u.netloc}{u.path or '/'}"[:300]


class PageLog:
    """The console and failed requests of one page (re-made when the driver's page changes)."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self._entries: deque[LogEntry] = deque(maxlen=KEEP)
        from .netwatch import event_handler

        page.on("console", event_handler(self._on_console))
        page.on("pageerror", event_handler(self._on_pageerror))
        #: The page's network watch, whose CDP session reports the requests that got no response
        #: (``Network.loadingFailed``): no subscription of Playwright's own (a round trip, and a request object
        #: sent to this process for every request).  Set by :meth:`of`; None: no failed request is known.
        self.watch: NetworkWatch | None = None

    @classmethod
    def of(cls, driver: Any) -> "PageLog | None":
        """The log of ``driver``'s current page (made on first use); None for drivers without a page."""
        from .netwatch import follow_page

        log = follow_page(driver, cls, "_steadyhand_pagelog")
        if log is not None and log.watch is None:
            log.watch = NetworkWatch.of(driver)
        return log

    # --- Playwright events (engine thread) ---------------------------------------------
    def _on_console(self, msg: Any) -> None:
        try:
            if msg.type != "error":
                return
            loc = msg.location or {}
            src = _short_url(str(loc.get("url", "")))
            line = loc.get("lineNumber")
            self._entries.append(LogEntry(time.monotonic(), "error", str(msg.text)[:MAX_TEXT],
                                          f"{src}:{line + 1}" if src and isinstance(line, int) else src))
        except Exception:  # noqa: BLE001 - never break the run over a log line
            pass

    def _on_pageerror(self, error: Any) -> None:
        try:
            name = getattr(error, "name", "") or "Error"
            message = getattr(error, "message", "") or str(error)
            self._entries.append(LogEntry(time.monotonic(), "exception", f"{name}: {message}"[:MAX_TEXT]))
        except Exception:  # noqa: BLE001
            pass


    # --- queries -------------------------------------------------------------------------
    def between(self, t0: float, t1: float | None = None) -> list[LogEntry]:
        """Entries in ``[t0, t1]`` (monotonic s; ``t1`` None = now), oldest first."""
        end = time.monotonic() if t1 is None else t1
        out = [e for e in list(self._entries) if t0 <= e.t <= end]
        if self.watch is not None:
            out += [LogEntry(t, "request", why[:MAX_TEXT], method=r.method, url=_short_url(r.url),
                             resource_type=r.resource_type) for t, r, why in list(self.watch.failures) if t0 <= t <= end]
            out.sort(key=lambda e: e.t)
        return out


def failed_requests(driver: Any, t0: float, t1: float | None = None) -> list[tuple[float, str, str, int | None, str, str]]:
    """Failed requests of ``driver``'s page in ``[t0, t1]``: ``(t, method, url, status, resource type, error)``.

    HTTP statuses >= 400 from the page's network watch, requests without a
    response from its :class:`PageLog`; beacons, keepalive pings and
    ``net::ERR_ABORTED`` left out.  URLs are origin and path.
    """
    watch = NetworkWatch.of(driver)
    seen: list[RequestSeen] = watch.between(t0, t1) if watch is not None else []
    out: list[tuple[float, str, str, int | None, str, str]] = []
    for r in seen:
        if r.status is not None and r.status >= 400 and not is_beacon(r):
            out.append((r.t, r.method, _short_url(r.url), r.status, r.resource_type, ""))
    log = PageLog.of(driver)
    for e in (log.between(t0, t1) if log is not None else ()):
        if e.kind != "request" or "ERR_ABORTED" in e.text:
            continue
        same = [r for r in seen if r.method == e.method and _short_url(r.url) == e.url]
        if e.resource_type in ("beacon", "ping") or any(is_beacon(r) for r in same):
            continue
        out.append((e.t, e.method, e.url, None, e.resource_type, e.text))
    out.sort(key=lambda x: x[0])
    return out
