"""The requests a page sends, with what makes them beacons, for the inferred reversibility label (S6).

:class:`NetworkWatch` follows one Playwright page (CDP
``Network.requestWillBeSent`` and ``responseReceived`` on a session of its
own - Playwright's request events would keep every request object alive)
and keeps the last :data:`KEEP` requests as
:class:`~core.act.writes.RequestSeen` records on the ``time.monotonic``
clock.  Chromium does not say which fetches were sent with ``keepalive``:
a small init script of our own (:data:`NET_HOOK`, not the page library)
wraps ``fetch`` and reports those through an exposed binding, so they can
be told from the user's writes (a ``navigator.sendBeacon`` request has the
resource type ``Ping`` already).  What counts
as a write is :func:`core.act.writes.server_writes` (pure).

Used from the one thread that owns Playwright (architecture rule 10).
"""
from __future__ import annotations

import inspect
import time
from collections import deque
from typing import Any, Callable

from core.act.writes import RequestSeen

__all__ = ["NetworkWatch", "NetHook", "NET_HOOK", "BINDING", "KEEP", "event_handler"]

#: Requests kept (oldest dropped).
KEEP = 500
#: Name of the binding the hook reports keepalive requests through.
BINDING = "__steadyhandNetMark"
#: A mark and a request match when sent within this many seconds of each other.
_MARK_WINDOW_S = 2.0

#: Wraps fetch (``keepalive`` in its init or Request); reports (method, url).  ``navigator.sendBeacon`` needs no
#: mark: Chromium gives its requests the resource type ``Ping`` (:data:`core.act.writes.BEACON_TYPES`), and a mark
#: would cost a call into this process for every beacon.
NET_HOOK = """
(() => {
  if (window.__steadyhandNetHook) return;
  window.__steadyhandNetHook = true;
  const mark = (method, url) => {
    try { const abs = new URL(String(url), location.href).href;
          if (typeof window.%(b)s === 'function') window.%(b)s(String(method || 'GET').toUpperCase(), abs); }
    catch (e) { /* never break the page */ }
  };
  const origFetch = window.fetch;
  if (typeof origFetch === 'function') {
    window.fetch = function (input, init) {
      try {
        const isReq = typeof Request !== 'undefined' && input instanceof Request;
        const keep = (init && init.keepalive) || (isReq && input.keepalive);
        if (keep) mark((init && init.method) || (isReq ? input.method : 'GET'), isReq ? input.url : input);
      } catch (e) { /* ignore */ }
      return origFetch.apply(this, arguments);
    };
  }
})();
""" % {"b": BINDING}


_ANY_ARGS = inspect.Signature([inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL)])


def event_handler(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` as a handler for a Playwright event (``page.on``, ``cdp.on``) that costs no signature reading.

    Playwright reads the handler's ``inspect.signature`` at every event it delivers (to pass it only the
    arguments it takes); a bound method's costs about 25 us each time, a function that carries its own
    ``__signature__`` about 5 us.  The handler returned takes ``*args`` and calls ``fn(*args)``; Playwright then
    passes every argument of the event - one for each event this package follows.
    """
    def handler(*args: Any) -> Any:
        return fn(*args)

    handler.__signature__ = _ANY_ARGS  # type: ignore[attr-defined]
    return handler


class NetHook:
    """The keepalive marks of one browser context, its binding exposed before the context's first page.

    :meth:`core.perception.driver.PlaywrightDriver` makes one with every fresh context it opens
    (:meth:`install`) and adds :data:`NET_HOOK` to the init script it installs anyway: every document of the
    context then has the hook from its start, and a :class:`NetworkWatch` of one of its pages only follows
    the marks (three round trips fewer than exposing the binding on a page that exists, adding the script
    and running it in the page's frames).
    """

    def __init__(self) -> None:
        self._followers: list[NetworkWatch] = []

    @classmethod
    def install(cls, context: Any) -> "NetHook | None":
        """Expose the binding in ``context`` (which must have no page yet: documents opened before never get
        the hook) and keep the hook on it; None when the binding could not be exposed (then nothing is kept
        and the caller must not add :data:`NET_HOOK`)."""
        hook = cls()
        try:
            context.expose_binding(BINDING, hook._on_mark)
            context._steadyhand_net_hook = hook  # noqa: SLF001 - one hook per context
        except Exception:  # noqa: BLE001 - exposed already by someone else: the watch finds out itself
            return None
        return hook

    def _on_mark(self, source: Any, method: str, url: str) -> None:
        now = time.monotonic()
        for f in self._followers:
            f._marks.append((now, str(method), str(url)))


class NetworkWatch:
    """Requests of one page (re-attached when the driver's page changes).

    Parameters
    ----------
    page : playwright Page
        The page to follow; the hook is installed in its context (documents
        to come) and evaluated into the documents already loaded.
    """

    def __init__(self, page: Any) -> None:
        self.page = page
        self._seen: deque[RequestSeen] = deque(maxlen=KEEP)
        self._pos: dict[str, int] = {}
        self._seq = 0
        self._marks: deque[tuple[float, str, str]] = deque(maxlen=200)
        self._followers: list[NetworkWatch] = []
        #: Round trips made to have Playwright deliver the page's pending events (:meth:`between`), counted.
        self.flushes = 0
        #: Requests seen sent and responses seen received on the page, beacons (``sendBeacon``) left out, and
        #: responses that set a cookie (``Set-Cookie``, a beacon's too), counted: a cookie can change only with
        #: one of them or by a script (:meth:`core.perception.effects.EffectWatch.mark`).
        self.requests = 0
        self.responses = 0
        self.cookies_set = 0
        self._pings: deque[str] = deque(maxlen=KEEP)
        #: Requests that got no response (CDP ``Network.loadingFailed``): ``(t, the request as seen, the
        #: browser's reason)``, ``t`` on the ``time.monotonic`` clock when it failed; the last :data:`KEEP`.
        self.failures: deque[tuple[float, RequestSeen, str]] = deque(maxlen=KEEP)
        #: The driver whose looks bound the flushes (its ``looks`` counter; set by :meth:`of`): None flushes on
        #: every :meth:`between`.
        self.driver: Any = None
        self._flushed_look: int | None = None
        context = page.context
        # CDP Network events, not Playwright's "request" events: those keep every Request and Response
        # alive in this process (~14 KB each, measured by `steadyhand bench record`)
        self._cdp = context.new_cdp_session(page)
        self._cdp.on("Network.requestWillBeSent", event_handler(self._on_request))
        self._cdp.on("Network.responseReceived", event_handler(self._on_response))
        self._cdp.on("Network.responseReceivedExtraInfo", event_handler(self._on_response_headers))
        self._cdp.on("Network.loadingFailed", event_handler(self._on_failed))
        self._cdp.send("Network.enable", {"maxTotalBufferSize": 0, "maxResourceBufferSize": 0, "maxPostDataSize": 0})
        owner = getattr(context, "_steadyhand_net_hook", None)
        if isinstance(owner, NetHook):  # installed with the context, before any page: every document has it
            owner._followers.append(self)
            return
        if isinstance(owner, NetworkWatch):
            owner._followers.append(self)
        else:
            try:
                context.expose_binding(BINDING, self._on_mark)
                context.add_init_script(NET_HOOK)
            except Exception:  # noqa: BLE001 - exposed already by someone else: marks are not seen
                pass
            try:
                context._steadyhand_net_hook = self  # noqa: SLF001 - one hook per context
            except Exception:  # noqa: BLE001
                pass
        for frame in page.frames:
            try:
                frame.evaluate(NET_HOOK)
            except Exception:  # noqa: BLE001 - a frame navigating away
                pass

    @classmethod
    def of(cls, driver: Any) -> "NetworkWatch | None":
        """The watch of ``driver``'s current page (made on first use); None for drivers without a page."""
        watch = follow_page(driver, cls, "_steadyhand_netwatch")
        if watch is not None and watch.driver is None:
            watch.driver = driver
        return watch

    # --- events ---------------------------------------------------------------------
    def _on_mark(self, source: Any, method: str, url: str) -> None:
        now = time.monotonic()
        self._marks.append((now, str(method), str(url)))
        for f in getattr(self, "_followers", ()):
            f._marks.append((now, str(method), str(url)))

    def _on_request(self, event: Any) -> None:
        try:
            req = event["request"]
            rec = RequestSeen(time.monotonic(), str(req.get("method", "GET")).upper(), str(req.get("url", "")),
                              str(event.get("type", "other")).lower())
            rid = str(event["requestId"])
        except Exception:  # noqa: BLE001
            return
        redirect = event.get("redirectResponse")
        if isinstance(redirect, dict) and "status" in redirect:  # a POST answered 303: its status is that one
            self._on_response({"requestId": rid, "response": redirect})
        self._seq += 1
        if rec.resource_type == "ping":
            self._pings.append(rid)
        else:
            self.requests += 1
        self._seen.append(rec)
        self._pos[rid] = self._seq
        if len(self._pos) > KEEP:
            self._pos.pop(next(iter(self._pos)))

    def _on_response_headers(self, event: Any) -> None:
        try:
            if any(str(k).lower() == "set-cookie" for k in (event.get("headers") or {})):
                self.cookies_set += 1
        except Exception:  # noqa: BLE001
            return

    def _on_response(self, event: Any) -> None:
        if str(event.get("requestId", "")) not in self._pings:
            self.responses += 1
        try:
            status = int(event["response"]["status"])
        except Exception:  # noqa: BLE001
            return
        pos = self._position(event)
        if pos is not None:
            old = self._seen[pos]
            self._seen[pos] = RequestSeen(old.t, old.method, old.url, old.resource_type, old.keepalive, status)

    def _on_failed(self, event: Any) -> None:
        pos = self._position(event)
        if pos is not None:
            self.failures.append((time.monotonic(), self._seen[pos], str(event.get("errorText") or "failed")))

    def _position(self, event: Any) -> int | None:
        """Where the request an event names (its ``requestId``) is in the kept requests; None when not kept."""
        try:
            seq = self._pos.get(str(event["requestId"]))
        except Exception:  # noqa: BLE001
            return None
        if seq is None:
            return None
        pos = len(self._seen) - (self._seq - seq) - 1
        return pos if 0 <= pos < len(self._seen) else None

    # --- queries --------------------------------------------------------------------
    def _marked(self, r: RequestSeen) -> bool:
        return any(m == r.method and u == r.url and abs(t - r.t) <= _MARK_WINDOW_S for t, m, u in self._marks)

    def between(self, t0: float, t1: float | None = None) -> list[RequestSeen]:
        """Requests sent in ``[t0, t1]`` (monotonic s; ``t1`` None = now), keepalive marks applied.

        Playwright is first asked to deliver the events pending on its connection (requests, marks: one round
        trip, counted in :attr:`flushes`) - once per look of the driver (its ``looks`` counter): the calls after
        the first that follow the same observation (the checkpoint's, the write inference's, the landing's,
        the evidence's, the skills capture's) read the same requests, and any round trip to the page since
        has delivered the events that arrived before its answer.  A driver whose looks are such round trips
        (``looks_deliver`` true: :class:`core.perception.driver.PlaywrightDriver`, whose every observation
        evaluates in the page) needs no flush at all: the page sent a request's event before it answered the
        look.  Without a driver's count every call flushes.
        """
        looks = getattr(self.driver, "looks", None)
        if isinstance(looks, int) and looks != self._flushed_look and getattr(self.driver, "looks_deliver", False):
            self._flushed_look = looks  # the look read the page after the events: they were delivered before it
        if not isinstance(looks, int) or looks != self._flushed_look:
            try:
                self.page.wait_for_timeout(1)  # let Playwright deliver pending events (requests, marks)
            except Exception:  # noqa: BLE001 - a closed page has no more requests
                pass
            self.flushes += 1
            self._flushed_look = looks if isinstance(looks, int) else None
        end = time.monotonic() if t1 is None else t1
        out = []
        for r in list(self._seen):
            if t0 <= r.t <= end:
                out.append(RequestSeen(r.t, r.method, r.url, r.resource_type, True, r.status)
                           if not r.keepalive and self._marked(r) else r)
        return out


def follow_page(driver: Any, cls: type, attr: str) -> Any:
    """The ``cls(page)`` follower of ``driver``'s current page, made on first use and cached on the driver as
    ``attr`` (a new page gets a new one); None for drivers without a page or a page that cannot be followed."""
    page = getattr(driver, "page", None)
    if page is None or not hasattr(page, "on"):
        return None
    follower = getattr(driver, attr, None)
    if isinstance(follower, cls) and getattr(follower, "page", None) is page:
        return follower
    try:
        follower = cls(page)
        setattr(driver, attr, follower)
    except Exception:  # noqa: BLE001 - a page that cannot be followed: nothing is inferred from it
        return None
    return follower
