"""Which requests an action caused are server writes: the inferred reversibility label (S6).

A step whose flow file does not say ``reversible:`` is judged by the
requests its action caused: a write to the app (POST / PUT / PATCH / DELETE
sent by ``fetch``, XHR, a form or a document navigation to the page's own
origin) makes it irreversible - it is never retried blindly.  Real pages
send requests that are not the user's data, and those must not switch off
the retries of every step:

- analytics beacons: ``navigator.sendBeacon`` (Chromium's ``ping`` resource
  type, and marked by the page hook), ``<a ping>``, ``fetch(..., {keepalive:
  true})`` (marked by the page hook), CSP reports;
- background traffic: a request (method + path) that was seen when no
  action was in flight - polling, telemetry timers - or during the action
  window of a step that changed nothing;
- a request the server refused: answered with a 4xx status (a sign-in
  answered 401, a form answered 422) wrote nothing.  A 5xx answer, or none
  yet, stays a write: the server may have written before it failed.

Pure functions over :class:`RequestSeen` records; the browser side is
:mod:`core.perception.netwatch`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable
from urllib.parse import urlsplit

__all__ = ["RequestSeen", "WRITE_METHODS", "WRITE_TYPES", "BEACON_TYPES", "request_key", "refused", "is_beacon",
           "server_writes", "refused_writes", "Background"]

#: HTTP methods that write (S6).
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: Resource types (Playwright's names) through which a page writes the user's data.
WRITE_TYPES = frozenset({"fetch", "xhr", "document", "other"})
#: Resource types that are never the user's data (analytics and reports).
BEACON_TYPES = frozenset({"ping", "cspviolationreport", "beacon"})


@dataclass(frozen=True, slots=True)
class RequestSeen:
    """One request the page sent.

    Attributes
    ----------
    t : float
        When it was sent, seconds on the ``time.monotonic`` clock.
    method : str
        HTTP method, upper case.
    url : str
        Full URL (never stored: only its origin and path are shown).
    resource_type : str
        Playwright's resource type (``fetch``, ``xhr``, ``document``, ``ping``...).
    keepalive : bool
        Sent with ``keepalive: true`` or by ``navigator.sendBeacon`` (the page hook marked it).
    status : int | None
        HTTP status of its response; None while unknown (in flight, failed).
    """

    t: float
    method: str
    url: str
    resource_type: str
    keepalive: bool = False
    status: int | None = None

    @property
    def shown(self) -> str:
        """``"POST /api/requests 201"`` - method, path and status, no query (it may hold data)."""
        status = f" {self.status}" if self.status is not None else ""
        return f"{self.method} {urlsplit(self.url).path or '/'}{status}"

    @property
    def succeeded(self) -> bool | None:
        """True for a 1xx-3xx response, False for 4xx/5xx, None when no status is known."""
        return None if self.status is None else self.status < 400


def refused(r: RequestSeen) -> bool:
    """True when the server answered ``r`` with a 4xx status (400-499): it refused the request, nothing was
    written.  A 5xx or no answer is not a refusal (the write may have happened)."""
    return r.status is not None and 400 <= r.status < 500


def request_key(r: RequestSeen) -> tuple[str, str, str]:
    """``(method, origin, path)``: the same endpoint whatever its query (polling adds timestamps)."""
    u = urlsplit(r.url)
    return (r.method, f"{u.scheme}://{u.netloc}", u.path)


def is_beacon(r: RequestSeen) -> bool:
    """An analytics beacon, a keepalive fetch or a report: never the user's data."""
    return r.keepalive or r.resource_type in BEACON_TYPES


class Background:
    """Endpoints that the page calls by itself (polling, telemetry): their writes are not the user's.

    Fed with requests seen while no action was in flight (:meth:`idle`) and
    the requests of action windows that changed nothing (:meth:`idle` too);
    bounded to 200 endpoints (oldest forgotten).
    """

    LIMIT = 200

    def __init__(self) -> None:
        self._keys: dict[tuple[str, str, str], None] = {}

    def idle(self, requests: Iterable[RequestSeen]) -> None:
        """Remember the endpoints of ``requests`` as background traffic."""
        for r in requests:
            self._keys[request_key(r)] = None
            while len(self._keys) > self.LIMIT:
                self._keys.pop(next(iter(self._keys)))

    def __contains__(self, r: object) -> bool:
        return isinstance(r, RequestSeen) and request_key(r) in self._keys

    def __len__(self) -> int:
        return len(self._keys)


def server_writes(requests: Iterable[RequestSeen], *, origin: str,
                  background: Background | None = None) -> list[RequestSeen]:
    """The requests of an action window that write the user's data to the app (S6).

    Parameters
    ----------
    requests : Iterable[RequestSeen]
        Requests sent between the start of the action and the end of its settle wait.
    origin : str
        ``scheme://host:port`` of the app (the page's origin): writes to other
        hosts (third-party analytics) are not the app's data.
    background : Background | None
        Endpoints seen without any action: excluded.

    Returns
    -------
    list[RequestSeen]
        Writes in the order they were sent; empty when the action wrote nothing.
    """
    return [r for r in _app_writes(requests, origin, background) if not refused(r)]


def refused_writes(requests: Iterable[RequestSeen], *, origin: str,
                   background: Background | None = None) -> list[RequestSeen]:
    """The requests of an action window that would have written to the app but that the server refused (4xx,
    :func:`refused`): the same filter as :func:`server_writes`, the other side of its last rule."""
    return [r for r in _app_writes(requests, origin, background) if refused(r)]


#: Resource types of the requests a page's script sends (not a document load: a navigation is undone by going
#: back, and a rollback checks that).
SCRIPT_TYPES = frozenset({"fetch", "xhr", "other"})


def app_requests(requests: Iterable[RequestSeen], *, origin: str,
                 background: Background | None = None) -> list[RequestSeen]:
    """The requests of an action window that the page's script sent to the app, whatever their method: fetch,
    XHR or other (no document, image, script or style), to ``origin``, not a beacon, not a background endpoint.

    An action that adds or submits and sent one has reached the server even when the method says "read"
    (``GET /add?item=...``): its effect is seen, and it is never repeated (issue 19,
    :func:`core.engine.norepeat.no_repeat`)."""
    out = []
    for r in requests:
        if r.resource_type not in SCRIPT_TYPES or is_beacon(r):
            continue
        if origin and request_key(r)[1] != origin.rstrip("/"):
            continue
        if background is not None and r in background:
            continue
        out.append(r)
    return out


def _app_writes(requests: Iterable[RequestSeen], origin: str, background: Background | None) -> list[RequestSeen]:
    out = []
    for r in requests:
        if r.method not in WRITE_METHODS or r.resource_type not in WRITE_TYPES or is_beacon(r):
            continue
        if origin and request_key(r)[1] != origin.rstrip("/"):
            continue
        if background is not None and r in background:
            continue
        out.append(r)
    return out
