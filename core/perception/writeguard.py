"""A network guard that stops the page's writes to the app before they leave the browser (S6).

Exploration without ``--allow-writes`` never performs an action it believes
irreversible; this guard is the second line behind that belief: a request
that would write to the app (:func:`core.act.writes.server_writes`' rules:
POST / PUT / PATCH / DELETE by fetch, XHR, a form or a navigation to the
page's own origin; analytics beacons and keepalive pings pass) is aborted
by a Playwright route, and remembered, so the action that sent it is
marked irreversible and its effect discarded.  The server never sees it.
"""
from __future__ import annotations

import time
from typing import Any

from core.act.writes import WRITE_METHODS, WRITE_TYPES, BEACON_TYPES, RequestSeen

__all__ = ["WriteGuard"]


class WriteGuard:
    """Abort the app's write requests of one browser context (Playwright sync API, engine thread only).

    Parameters
    ----------
    context : playwright BrowserContext
        The context whose pages are guarded (every page, every frame).
    origin : str
        ``scheme://host:port`` of the app; writes to other origins are not the app's data and pass.
    """

    def __init__(self, context: Any, origin: str) -> None:
        self.context = context
        self.origin = origin.rstrip("/")
        #: Requests aborted so far, in order.
        self.blocked: list[RequestSeen] = []
        context.route("**/*", self._route)

    def _route(self, route: Any, request: Any) -> None:
        method, rtype, url = request.method.upper(), request.resource_type, request.url
        same = url.startswith(self.origin + "/") or url == self.origin
        if same and method in WRITE_METHODS and rtype in WRITE_TYPES and rtype not in BEACON_TYPES:
            self.blocked.append(RequestSeen(time.monotonic(), method, url, rtype))
            route.abort("blockedbyclient")
            return
        route.fallback()  # to any other handler of the context, else to the network

    def take(self) -> list[RequestSeen]:
        """The requests blocked since the last call (and forget them)."""
        out, self.blocked = self.blocked, []
        return out
