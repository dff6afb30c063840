"""The browser driver: Playwright + Chromium behind one small interface.

Only the engine thread may call a driver (Playwright pages are bound to the
thread that created them; architecture rule 10).  :class:`PlaywrightDriver` is the real
one; :mod:`core.perception.fake` holds a fake for unit tests of pure logic.

Coordinates: candidate boxes are CSS px in top-level viewport coordinates
(iframe offsets accumulated); screenshots are device px (CSS px x device
pixel ratio).
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import re
import time
from pathlib import Path
from typing import Any, Mapping, Protocol
from urllib.parse import urljoin

from tenacity import Retrying, retry_if_not_exception_type, stop_after_attempt

from core.domain import (
    Action, Assertion, BBox, BrowserSettings, Candidate, ElementDescriptor, Observation, TextBox, WaitSettings,
)
from core.perception.axtree import ax_entries, element_at
from core.perception.browser import CHROMIUM_ARGS, BrowserLaunchError, bound_cdp_endpoint, cdp_args, check_cdp_port, find_chromium
from core.perception.grid import Grid
from core.perception.netwatch import NET_HOOK, NetHook, event_handler
from core.perception.pagefacts import ARRIVING_JS
from core.secrets import Redactor, mask_boxes_png
from core.state.signature import light_signature

__all__ = ["Driver", "PlaywrightDriver", "ActionError", "NavigationError", "BrowserClosedError", "PAGE_LIB",
           "DEFAULT_WAITS", "PageError", "PageScriptError", "PageUnresponsiveError", "PageLoadingError"]

PAGE_LIB = (Path(__file__).with_name("page_lib.js")).read_text(encoding="utf-8")

#: The waits of a driver built without the project's (the defaults of :class:`~core.domain.WaitSettings`).
DEFAULT_WAITS = WaitSettings()
#: Poll interval of :meth:`PlaywrightDriver.wait_settled`, s.
_SETTLE_POLL_S = 0.03
#: In-page settle waits sent after a navigation destroyed the document of the one before (each fails in a few ms
#: when it meets the old document on its way out) before the polling loop waits for the new document instead.
SETTLE_NAVIGATED_TRIES = 3
#: Longest slice (ms) of the in-page settle wait (:meth:`PlaywrightDriver._settle_in_page`) before the polling
#: loop takes over; and how often (ms) the page checks itself meanwhile (a timer, no round trip).
SETTLE_SLICE_MS = 3000.0
SETTLE_SLICE_POLL_MS = 10.0
#: The fast settle wait's calm time (ms): once nothing an action set off is pending, the page must go this long
#: with no DOM mutation, no request ending and no message posted (:data:`_SETTLE_JS`).  Twice the 5 ms a
#: cooperative scheduler works before it yields (React's scheduler posts its next slice through a
#: ``MessageChannel`` every 5 ms), so a render split in slices is still under way when the wait looks.
SETTLE_CALM_MS = 10.0
#: Longest time (ms) a navigation to another document that has not replaced the page yet keeps a settle wait
#: waiting (``leavingMs`` of the page library's probe): one that takes longer - a 204 answer, a link answered
#: as an attachment (a download the page cannot tell from a navigation until it is answered), a navigation
#: cancelled after it began - no longer counts, and a slower server's page is met by the verify phase's second
#: look; one that commits replaces the page and the wait goes on there.
LEAVE_MS = 1500.0
#: The in-page settle wait: :meth:`PlaywrightDriver.wait_settled`'s rules on the page library's probe.
_SETTLE_JS = r"""async ([startMut, startUrl, quiet, idle, limit, slice, poll, reactFrom, calm, leaveMs, origin]) => {
  const lib = window.__steadyhand;
  if (!lib || !lib.probe) return null;
  const t0 = performance.now();
  const rest = lib.sleep || ((ms) => new Promise((r) => setTimeout(r, ms)));
  // a fast wait that finds itself in another document than the one it began in (the action navigated): that
  // document's own reactions count, all of them since it began, and it must have loaded whole
  const fresh = origin !== null && origin !== undefined && Math.abs(performance.timeOrigin - origin) > 1;
  const base = fresh ? 0 : reactFrom;
  const early = (fresh || (reactFrom !== null && reactFrom !== undefined)) && typeof lib.reactionsSince === 'function';
  // whether a finite CSS animation or transition still runs when the wait ends (a dialog fading in)
  const moving = () => { try { return document.getAnimations().some((a) => a.playState === 'running'
    && Number.isFinite(a.effect.getComputedTiming().endTime)); } catch (e) { return true; } };
  // and, when something moves, whether a dialog is arriving (in the page, not shown yet, its show animation
  // running: core.perception.pagefacts.ARRIVING_JS)
  const end = (r) => {
    if (r.done && !r.timed_out) {
      r.moving = moving();
      try { r.arriving = r.moving ? !!(__ARRIVING__)() : false; } catch (e) { r.arriving = true; }
    }
    return r;
  };
  let changed = false;
  for (;;) {
    const p = lib.probe();
    const el = performance.now() - t0;
    if (startUrl !== null && p.url !== startUrl) changed = true;
    if (startMut !== null && p.mutations !== startMut) changed = true;
    const leaving = p.leavingMs !== null && p.leavingMs !== undefined && p.leavingMs < leaveMs;
    const pending = p.inflight > 0 || (p.loading && p.loading.length > 0) || p.ready === 'loading' || leaving;
    if (!pending && p.quietMs >= quiet && (changed || startMut === null)) return end({ done: true, changed, timed_out: false });
    if (!pending && el >= idle) return end({ done: true, changed, timed_out: false });
    // the fast path: the wait ends once nothing the action set off is pending - no request in flight, no
    // reaction (a validator's timeout, a frame callback, an idle callback) - and the page was calm for `calm`
    // ms: no DOM mutation, no request ending, no message posted (a scheduler's next slice of work)
    if (early && !pending && (!fresh || p.ready === 'complete') && p.quietMs >= calm
        && performance.now() - (lib.state.lastPost || 0) >= calm && lib.reactionsSince(base) === 0)
      return end({ done: true, changed, timed_out: false, early: true });
    if (el >= limit) return end({ done: true, changed, timed_out: true });
    if (el >= slice) return end({ done: false, changed, timed_out: false });
    await rest(early && el < 4 * calm ? Math.min(poll, 2) : poll);
  }
}"""
_SETTLE_JS = _SETTLE_JS.replace("__ARRIVING__", ARRIVING_JS.strip())
#: The page library's ``pinned`` (index and description, with neighbours) of each element a locator matched, as
#: the library's JSON answers (:meth:`PlaywrightDriver._pinned_all`).
_PINNED_ALL_JS = r"""(els) => els.map((e) => window.__steadyhand && window.__steadyhand.callOn
  ? window.__steadyhand.callOn("pinned", e, "[true]") : "__steadyhand-missing__")"""
#: The page library's index of each element a locator matched (:meth:`PlaywrightDriver.ref_indices`): -1 when the
#: last observation did not list it, -2 without the library.
_REF_INDICES_JS = r"""(els) => {
  const lib = window.__steadyhand;
  const refs = lib && lib.state ? lib.state.refs : null;
  return els.map((e) => { if (!refs) return -2; for (let i = 0; i < refs.length; i++) if (refs[i] === e) return i; return -1; });
}"""
#: What Playwright says of a call whose document went away under it (a navigation, a frame detached).
_NAVIGATED = re.compile(r"context was destroyed|frame was detached|navigat", re.IGNORECASE)
#: How many elements a locator matched and the page library's ``assertInfo`` of the first (JSON text), as
#: ``[n, answer]``; ``[0, null]`` for none, the library's missing mark for a frame without it.
_FIRST_ASSERT_INFO_JS = r"""(els) => {
  if (!els.length) return [0, null];
  const lib = window.__steadyhand;
  return [els.length, lib && lib.callOn ? lib.callOn("assertInfo", els[0], "[]") : "__steadyhand-missing__"];
}"""
#: Most elements (all frames of the page together) for which observe reads Chromium's accessibility tree.
#: ``Accessibility.getFullAXTree`` costs about 1 ms per 2 DOM nodes (7.4 s for a 1,000-row table of 7,000
#: elements, 15,000 AX nodes, on the 2-core test machine) against well under 1 s for the page library's
#: whole collect; above this the page library's in-page names are used for every element - recorder and
#: replay apply the same rule, so a descriptor recorded on a long page is named as replay names it.
AX_TREE_MAX_ELEMENTS = 5000
#: Longest time (s) a light look taken at the end of a settle wait stands for the next light look
#: (:meth:`PlaywrightDriver.wait_settled` ``look``): the kernel's own work between the two takes milliseconds;
#: anything asked of the page meanwhile drops it at once.
LOOK_KEPT_S = 0.1
#: The settle wait's read of the page's text right after its look (``wait_settled(text=True)``): the page
#: library's ``allText`` answer (JSON text), as :meth:`PlaywrightDriver._check_once` reads it.
_TEXT_READ = "try { r.text = lib.call('allText', '[]'); } catch (e) { r.text = null; } "
#: Page library functions that only read the page (their calls keep the next step's reads a settle wait took,
#: :meth:`PlaywrightDriver.read_ahead`): an assertion's text, the probe, an element's description.
_LIB_READS = frozenset({"allText", "probe", "assertInfo", "stamp", "loadingEvidence", "modals", "secretRects"})
#: Poll interval of :meth:`PlaywrightDriver.check_assertion`, s.
_ASSERT_POLL_S = 0.1


class ActionError(RuntimeError):
    """An action could not be performed (element gone, covered, timeout...)."""


class NavigationError(RuntimeError):
    """A page could not be loaded (unreachable URL, HTTP error, timeout)."""


class BrowserClosedError(RuntimeError):
    """The page, its browser context or the browser itself is gone (crashed, killed or closed).

    Not a failed action: nothing can be retried on a dead page, so the run
    ends with error kind ``browser``.
    """


class PageError(RuntimeError):
    """The page cannot be observed or acted on as it is; the step escalates with this message (never a hang).

    Subclasses say why.  Not a failed action to retry blindly: the recovery
    policy hands it to a human at once (failure kind ``page``).
    """


class PageScriptError(PageError):
    """The page's own scripts broke the in-page library; the message holds the page's error text
    (``"TypeError: ... is not a function"``) and the URL."""


class PageUnresponsiveError(PageError):
    """The page did not answer an evaluation within the script time limit (its main thread is busy,
    e.g. a script in an endless loop); the message says the limit (ms) and what was asked."""


class PageLoadingError(PageError):
    """The page still shows loading indicators (spinner, skeleton rows, ``aria-busy``) after the
    loading bound (``WaitSettings.loading_max_ms``); the message says ``"still loading after N ms"``
    and the evidence."""


#: What the page library's ``call`` answers when it is not installed in a frame.
_NO_LIB = "__steadyhand-missing__"


class Driver(Protocol):
    """What the engine needs from a browser."""

    def open(self) -> None: ...
    def close(self) -> None: ...
    def goto(self, url: str) -> None: ...
    def observe(self, *, screenshot: bool = True) -> Observation: ...
    def refs_for_selector(self, selector: str) -> list[Candidate]: ...
    def perform(self, action: Action, ref: str | None, value: str) -> None: ...
    def wait_settled(self, *, long: bool = False, start: dict[str, Any] | None = None,
                     idle_ms: float | None = None, limit_ms: float | None = None) -> dict[str, Any]: ...
    def check_assertion(self, assertion: Assertion, ref: str | None, expected: str) -> tuple[bool, str]: ...
    def evaluate(self, script: str, arg: Any = None) -> Any: ...


def _scroll_of(raw: Mapping[str, Any] | None) -> tuple[float, float] | None:
    """The main frame's ``(scrollX, scrollY)`` in CSS px from a collected page, None when absent."""
    sc = (raw or {}).get("scroll")
    return (float(sc[0]), float(sc[1])) if sc and len(sc) == 2 else None


def _candidate(ref: str, item: dict[str, Any], *, dx: float, dy: float, viewport: tuple[int, int],
               dpr: float, frame: str, grid: Grid, scroll: tuple[float, float] | None = None) -> Candidate:
    x, y, w, h = item["bbox"]
    box = BBox(x + dx, y + dy, w, h)
    desc = ElementDescriptor.from_mapping(item, bbox=box, viewport=viewport, device_pixel_ratio=dpr, frame=frame,
                                          scroll=scroll)
    return Candidate(
        ref=ref, descriptor=desc, enabled=bool(item.get("enabled", True)), visible=bool(item.get("visible", True)),
        editable=bool(item.get("editable", False)), checked=item.get("checked"), value=str(item.get("value", "")),
        covered=bool(item.get("covered", False)), grid_cell=grid.cell_of_box(box),
        extra={"is_password": bool(item.get("is_password")), "in_viewport": bool(item.get("in_viewport", True)),
               "focused": bool(item.get("focused")), "required": bool(item.get("required"))},
    )


_ROLE_NAMED = re.compile(r'^internal:role=([a-z]+)\[name=("(?:[^"\\]|\\.)*")s\]$')


def _none_matches(selector: str) -> str:
    """What a check says when its selector finds nothing: in plain words for a role and exact name
    (``internal:role=cell[name="Edsger"s]``: "no cell named 'Edsger' on the page"), else the selector."""
    m = _ROLE_NAMED.match(selector)
    if m:
        try:
            return f"no {m.group(1)} named {json.loads(m.group(2))!r} on the page"
        except ValueError:
            pass
    return f"no element matches {selector!r}"


def _then_key(selector: str, token_js: str, script: str | None, arg: Any) -> tuple[str, str, str | None, str]:
    """What tells one step's reads before acting from another's (:meth:`PlaywrightDriver.read_ahead`)."""
    return selector, token_js, script, json.dumps(arg, sort_keys=True)


#: A step's reads before acting (:meth:`PlaywrightDriver.read_ahead`): the page library's indices of the elements
#: a locator matched (``els``; ``-1`` for one the last look did not list), its probe, and what ``script`` (a page
#: function or null) returned for ``arg``; ``token`` is passed through.  ``null`` without the page library.
_READS_JS = r"""async (els, token, script, arg) => {
  const lib = window.__steadyhand;
  if (!lib || !lib.state || !lib.call) return null;
  const refs = lib.state.refs;
  const indices = els.map((e) => { for (let i = 0; i < refs.length; i++) if (refs[i] === e) return i; return -1; });
  const probe = lib.call('probe', '[]');
  let read = null;
  if (script) { try { read = await script(arg); } catch (e) { read = null; } }
  return { token, same: true, indices, probe, read };
}"""
#: The next step's reads after a settle wait's look (:meth:`PlaywrightDriver.wait_settled` ``then``), as
#: :meth:`PlaywrightDriver.read_ahead` makes them (:data:`_READS_JS`); only when no DOM mutation came since the
#: elements of ``selector`` were matched (at the call's start) and the document had finished loading then (a
#: stylesheet that arrives later changes no DOM but can change a name: an icon font's glyph), else ``null`` (the
#: next step reads them itself).
_THEN_JS = r"""async (els, m0, loaded, tokenFn, script, arg) => {
  const lib = window.__steadyhand;
  if (!lib || !lib.state || m0 === null || !loaded || lib.state.mutations !== m0) return null;
  const got = await (__READS__)(els, tokenFn(), script, arg);
  return got && lib.state.mutations === m0 ? got : null;
}""".replace("__READS__", _READS_JS)


def _light_src(collect_args: dict[str, Any], pre: str | None, post: str | None) -> str:
    """The page function (no argument) of a light look: ``[pre's result, stamp, collect, post's result, post ran]``
    (:meth:`PlaywrightDriver._light_read`); the library's answers as JSON text, a function that threw null."""
    lib = "window.__steadyhand"
    guard = "(f) => { try { return f(); } catch (e) { return null; } }"
    return (f"() => {{ const g = {guard}; const a = {'g(' + pre + ')' if pre else 'null'}; "
            f"if (!({lib} && {lib}.call)) return [a, null, null, null, false]; "
            f"const s = {lib}.call('stamp', '[]'); "
            f"const r = {lib}.call('collect', {json.dumps(json.dumps([collect_args]))}); "
            f"const b = {'g(' + post + ')' if post else 'null'}; return [a, s, r, b, {'true' if post else 'false'}]; }}")


def _settled(t0: float, changed: bool, got: Mapping[str, Any]) -> dict[str, Any]:
    """:meth:`PlaywrightDriver.wait_settled`'s answer from an in-page wait's ``got`` that ended (``done``), begun at
    ``t0`` (``time.monotonic()`` s): ms waited, ``changed``, ``timed_out``, and ``early``, ``moving``, ``arriving``
    when the page said them."""
    out: dict[str, Any] = {"ms": (time.monotonic() - t0) * 1000.0, "changed": changed,
                           "timed_out": bool(got["timed_out"])}
    if got.get("early"):
        out["early"] = True
    for k in ("moving", "arriving"):
        if k in got:
            out[k] = bool(got[k])
    return out


class PlaywrightDriver:
    """Real Chromium through Playwright's sync API.

    Parameters
    ----------
    settings : BrowserSettings
        Browser settings of the project (``Project.engine_settings.browser``).
    base_url : str
        Relative URLs are joined to this.
    redactor : Redactor
        Masks secret values in text; password fields and fields holding a
        secret are painted over in screenshots.
    headless : bool | None
        Overrides ``settings.headless`` when given.
    waits : WaitSettings
        Quiet time, settle and loading bounds and the assertion polling time
        (P6, S7; ``Project.engine_settings.waits``).
    """

    def __init__(self, settings: BrowserSettings, *, base_url: str, redactor: Redactor | None = None,
                 headless: bool | None = None, waits: WaitSettings = DEFAULT_WAITS) -> None:
        self.settings = settings
        self.waits = waits
        self.base_url = base_url.rstrip("/") + "/"
        self.redactor = redactor or Redactor(())
        self.headless = settings.headless if headless is None else headless
        #: More Chromium arguments.
        self.extra_args: list[str] = []
        #: Open Chromium's remote-debugging endpoint on 127.0.0.1 at this port (a takeover over CDP): refused
        #: when the port is in use, checked after the launch to be this browser's (:attr:`cdp_endpoint`).
        self.cdp_port: int | None = None
        self._cdp_endpoint = ""
        #: Connect to this browser instead of launching one (``run --browser-endpoint``, core.perception.remote):
        #: a Playwright server's ``ws://`` URL or a Chromium's DevTools URL; "" launches Chromium here.
        self.endpoint = ""
        self._pw: Any = None
        self._browser: Any = None
        self._context: Any = None
        self.page: Any = None
        self._frames: list[Any] = []
        self.console_errors: list[str] = []
        #: Secret values whose text occurrences are painted over in screenshots.
        self.secret_values: list[str] = []
        self._held: dict[str, Any] = {}
        self._held_seq = 0
        #: Name candidates from Chromium's accessibility tree (False: the page library's in-page names only,
        #: for measuring what the tree costs).
        self.ax_tree = True
        self._ax_session: Any = None
        self._ax_page: Any = None
        #: (frame, document token, DOM mutations) of each frame when the accessibility tree was last read.
        self._ax_key: Any = None
        #: Time limit of every evaluation in the page and every CDP request, ms (the project's
        #: ``browser.action_timeout_ms``, 5000 by default): a page that does not answer in time raises
        #: :class:`PageUnresponsiveError` instead of hanging the run.
        self.script_timeout_ms = float(settings.action_timeout_ms)
        #: ms spent inside the page library's functions (in-page time, without transfer), summed over calls;
        #: :meth:`observe` resets it, so after an observation it is that observation's in-page time.
        self.page_ms = 0.0
        #: ``(before, after)``: what the functions :meth:`observe` was given as ``around`` returned in its last
        #: call (None: not given, threw or not read).
        self.around: tuple[Any, Any] = (None, None)
        #: Observations made (:meth:`observe`), counted: a :class:`~core.perception.netwatch.NetworkWatch`
        #: delivers the page's pending network events once per look (``NetworkWatch.flushes``).
        self.looks = 0
        #: Every look is a round trip to the page, made after what it sees: the network events the page sent
        #: before it answered are delivered by then (:meth:`core.perception.netwatch.NetworkWatch.between`).
        self.looks_deliver = True
        #: Light looks of a page of one frame read in one round trip (:meth:`_light_read`), counted.
        self.light_reads = 0
        #: The reads of the last light look of the main frame (collect arguments as JSON, pre, post).
        self._light_key: Any = None
        #: The reads of the last light look of the main frame taken with a read after it (a step's look without a
        #: screenshot): the look a page just loaded gets (:meth:`goto` ``look``).
        self._plain_key: Any = None
        #: A light look a settle wait took at its end: (key, what it returned, time.monotonic()), or None.
        self._looked: Any = None
        self._settle_left = False  # the last in-page settle wait's document was destroyed by a navigation
        #: The main frame's text a settle wait read right after its look (``text``): (library answer, time), or None.
        self._text_kept: Any = None
        #: Light looks taken by a settle wait in its own round trip and used by :meth:`observe`, counted.
        self.looks_ahead = 0
        #: The next step's reads a settle wait took after its look (:meth:`wait_settled` ``then``): (key, what
        #: :meth:`read_ahead` would return, time.monotonic()), or None.
        self._ahead_kept: Any = None
        #: Reads before acting that :meth:`read_ahead` answered from a settle wait's round trip, counted.
        self.reads_kept = 0
        #: The last :meth:`observe` took the light look a settle wait took at its end (:attr:`_looked`): the
        #: reads that wait took after that look (:attr:`_ahead_kept`) name that observation's elements
        #: (:meth:`ref_indices`, :meth:`probe_and_read` answer from them; a flow's first step, its look taken
        #: by :meth:`goto`).
        self._look_kept = False
        #: True while :meth:`_lib` calls a page library function that only reads (:data:`_LIB_READS`).
        self._reading = False
        #: Fresh contexts :meth:`new_context_page` gave: ``made`` (the old one closed, a new one made: five round
        #: trips to Chromium), ``unused`` (the context in place kept: never loaded a page since it was made).
        self.contexts = {"made": 0, "unused": 0}
        #: The current context was made by this driver and never navigated by :meth:`goto` since.
        self._unused = False

    # --- life cycle -----------------------------------------------------------------
    def open(self) -> None:
        """Start Playwright and Chromium and open one page.

        Raises
        ------
        BrowserLaunchError
            When Chromium is missing or fails to start (message says what to do).
        """
        from playwright.sync_api import Error as PwError
        from playwright.sync_api import sync_playwright

        if self.endpoint:  # a browser kept elsewhere (a Playwright server, a Grid node): connected, never launched
            self._open_remote()
            return
        exe = find_chromium(self.settings.executable_path)
        cdp = cdp_args(self.cdp_port) if self.cdp_port else []
        if self.cdp_port:
            check_cdp_port(int(self.cdp_port))  # Chromium would bind [::1] instead: refused before it starts
        self._pw = sync_playwright().start()
        try:
            self._browser = self._pw.chromium.launch(
                executable_path=exe, headless=self.headless, args=list(CHROMIUM_ARGS) + list(self.extra_args) + cdp,
                slow_mo=self.settings.slow_mo_ms or None)
        except PwError as exc:
            raise self._launch_failed(exc, exe) from None
        try:
            self._new_context()
            self._check_cdp()
        except BaseException:
            self.close()  # never leave Playwright running on this thread: the next open would fail
            raise

    def _open_remote(self) -> None:
        """Connect to :attr:`endpoint` (:func:`core.perception.remote.connect_browser`) and open this run's own
        context and page there.  Raises BrowserLaunchError (the endpoint named without its credentials)."""
        from playwright.sync_api import sync_playwright

        from core.perception.remote import connect_browser

        self._pw = sync_playwright().start()
        try:
            self._browser = connect_browser(self._pw, self.endpoint, slow_mo_ms=self.settings.slow_mo_ms)
            self._new_context()
        except BaseException:
            self.close()
            raise

    @property
    def context(self) -> Any:
        """The Playwright browser context of the current page (None before :meth:`open`); engine thread only."""
        return self._context

    @property
    def cdp_endpoint(self) -> str:
        """``"http://127.0.0.1:<port>"`` once :meth:`open` checked that the endpoint is this browser's, else ``""``."""
        return self._cdp_endpoint

    def _check_cdp(self) -> None:
        """Check the remote-debugging endpoint really bound (raises ``CdpPortInUse``, a BrowserLaunchError)."""
        self._cdp_endpoint = bound_cdp_endpoint(int(self.cdp_port), self.page) if self.cdp_port else ""

    def _launch_failed(self, exc: Exception, exe: str | None) -> BrowserLaunchError:
        """Stop Playwright after a failed launch; the error to raise, saying what to do."""
        self._pw.stop()
        self._pw = None
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
        where = exe or "Playwright's bundled browser"
        return BrowserLaunchError(
            f"Chromium could not be started ({where}): {first}. Install Debian's chromium "
            "(apt-get install chromium) or set STEADYHAND_CHROMIUM to a Chromium executable.")

    def _context_options(self) -> dict[str, Any]:
        """Viewport (CSS px), device scale factor, locale and time zone of the project's browser settings."""
        b = self.settings
        return {"viewport": {"width": b.viewport_width, "height": b.viewport_height},
                "device_scale_factor": self.settings.device_scale_factor, "locale": self.settings.locale,
                "timezone_id": self.settings.timezone}

    def _use_context(self, context: Any) -> None:
        """Install the page library and the timeouts in ``context`` and take its first page (or a new one)."""
        self._held.clear()
        self._context = context
        # a fresh context: the network watch's binding and hook go in before the first page (NetHook)
        hook = NetHook.install(context) if not context.pages else None
        context.add_init_script(PAGE_LIB + "\n;" + NET_HOOK if hook is not None else PAGE_LIB)
        context.set_default_timeout(self.settings.action_timeout_ms)
        context.set_default_navigation_timeout(self.settings.navigation_timeout_ms)
        self.page = context.pages[0] if context.pages else context.new_page()
        self.page.on("console", event_handler(self._on_console))
        self._unused = False

    def _new_context(self) -> None:
        """A fresh browser context (no cookies) with the page library and one page."""
        self._use_context(self._browser.new_context(**self._context_options()))
        self._unused = True

    def _still_unused(self) -> bool:
        """Whether the current context is as fresh as a new one: made by this driver and never loaded a page
        (not by :meth:`goto`, nor by anyone else: its one page still shows ``about:blank``)."""
        if not self._unused or self._context is None or self.page is None:
            return False
        try:
            return not self.page.is_closed() and self.page.url == "about:blank" and len(self._context.pages) == 1
        except Exception:  # noqa: BLE001 - a context whose browser is gone
            return False

    def _on_console(self, msg: Any) -> None:
        if msg.type == "error":
            self.console_errors.append(self.redactor.text(msg.text)[:300])

    def close(self) -> None:
        """Close the page, browser and Playwright; never raises."""
        # a browser reached at an endpoint is not ours to close: our context goes, stopping Playwright disconnects
        own_browser = not self.endpoint
        for closer in (lambda: self._context and self._context.close(),
                       lambda: own_browser and self._browser and self._browser.close(),
                       lambda: self._pw and self._pw.stop()):
            try:
                closer()
            except Exception:
                pass
        self._pw = self._browser = self._context = self.page = None
        self._ax_session = self._ax_page = None

    def new_context_page(self) -> None:
        """Replace the page with a fresh one in a fresh context (clean cookies).

        A context this driver made and that never loaded a page (the one :meth:`open` made, before a session's
        first flow) is as fresh as a new one: it is kept, with its page.  Counted in :attr:`contexts`.
        """
        if self._still_unused():
            self._held.clear()
            self.contexts["unused"] += 1
            return
        self.contexts["made"] += 1
        if self._context is not None:
            try:
                self._context.close()
            except Exception:
                pass
        self._new_context()

    # --- navigation -----------------------------------------------------------------
    def absolute(self, url: str) -> str:
        """Join a flow URL (relative to the base URL) to the base URL."""
        if url.startswith(("http://", "https://", "file:", "about:", "data:")):
            return url
        return urljoin(self.base_url, url.lstrip("/"))

    def goto(self, url: str, *, quiet_ms: float | None = None, look: bool = False,
             then: tuple[str, str, str | None, Any] | None = None) -> None:
        """Load ``url`` (relative to the base URL), then wait until the page is quiet (:meth:`wait_settled`, as a
        new document: it ends once the page loaded whole, was calm and none of its own reactions is pending, or
        after the quiet time; ``quiet_ms`` replaces ``waits.quiet_ms`` there, as on the fast path; ``look``: the wait takes the next
        light look in its round trip, as there; ``then``, with ``look``: and the first step's reads before acting
        after it, which :meth:`ref_indices` and :meth:`probe_and_read` then answer when that step's observation
        is that look).

        Raises
        ------
        NavigationError
            Unreachable host, HTTP status >= 400, or timeout.
        """
        from playwright.sync_api import Error as PwError

        target = self.absolute(url)
        self._unused = False
        try:
            resp = self.page.goto(target, wait_until="domcontentloaded")
        except PwError as exc:
            first = str(exc).strip().splitlines()[0]
            raise NavigationError(f"cannot load {target}: {first}") from None
        if resp is not None and resp.status >= 400:
            raise NavigationError(f"cannot load {target}: HTTP {resp.status}")
        if look and self._plain_key is not None:
            self._light_key = self._plain_key  # the first step's before-look, not the last step's after-look
        self.wait_settled(quiet_ms=quiet_ms, look=look, then=then if look else None, new_document=True)

    def evaluate(self, script: str, arg: Any = None) -> Any:
        """``page.evaluate`` within :attr:`script_timeout_ms`.

        Raises
        ------
        PageUnresponsiveError
            When the page does not answer in time.
        """
        return self._bounded(self.page, "evaluate", script, arg, what="evaluate")

    # --- time-limited calls into the page ---------------------------------------------
    def _bounded(self, obj: Any, method: str, *args: Any, what: str, ms: float | None = None) -> Any:
        """``obj.<method>(*args)`` of Playwright's sync API, abandoned after ``ms`` (default :attr:`script_timeout_ms`).

        Playwright's ``evaluate``, ``evaluate_handle``, ``frame_element`` and
        ``bounding_box`` have no timeout of their own and wait for ever on a
        page whose main thread never becomes free.  The call's coroutine
        runs under ``asyncio.wait_for`` on Playwright's own loop; cancelling
        it aborts the call in Playwright (``connection.py``: "cancelling the
        task that awaits the call aborts it").  An object that is not a
        Playwright sync object is called directly.

        Raises
        ------
        PageUnresponsiveError
            When the call did not finish in time (the page is alive).
        BrowserClosedError
            When the page or the browser died meanwhile.
        """
        limit = float(self.script_timeout_ms if ms is None else ms)
        self._looked = None  # anything asked of the page: a look taken before no longer stands for the next one
        if not self._reading:  # a read of the page library changes nothing the next step's reads saw
            self._ahead_kept = self._text_kept = None
        impl, sync = getattr(obj, "_impl_obj", None), getattr(obj, "_sync", None)
        if impl is None or sync is None:
            return getattr(obj, method)(*args)
        from playwright.sync_api._generated import mapping

        # the impl methods take every argument positionally (Keyboard.press(key, delay): pass delay=None)
        coro = getattr(impl, method)(*[mapping.to_impl(a) for a in args])

        async def limited() -> Any:
            return await asyncio.wait_for(coro, limit / 1000.0)

        try:
            return mapping.from_maybe_impl(sync(limited()))
        except asyncio.TimeoutError:
            self._check_alive()
            raise PageUnresponsiveError(
                f"the page did not answer within {limit:.0f} ms ({what}) at {self._url()}: its own scripts keep "
                "its main thread busy (script time limit: browser.action_timeout_ms)") from None

    def _url(self) -> str:
        try:
            return self.redactor.text(str(self.page.url))
        except Exception:
            return "(no page)"

    def _answer(self, raw: Any, name: str, frame: Any) -> Any:
        """The result of a page library ``call``, or :class:`PageScriptError` with the page's error text."""
        try:
            msg = json.loads(raw) if isinstance(raw, str) else None
        except ValueError:
            msg = None
        if not isinstance(msg, dict):
            raise PageScriptError(f"the page library's {name} returned no readable answer at {self._frame_url(frame)} "
                                  f"(got {type(raw).__name__}): the page's scripts broke it")
        if "error" in msg:
            raise PageScriptError(f"the page's scripts broke Steadyhand's page library at {self._frame_url(frame)} "
                                  f"({name}): {self.redactor.text(str(msg['error']))}")
        self.page_ms += float(msg.get("ms") or 0.0)
        return msg.get("ok")

    def _frame_url(self, frame: Any) -> str:
        try:
            return self.redactor.text(str(frame.url))
        except Exception:
            return self._url()

    def _lib(self, frame: Any, name: str, *args: Any) -> Any:
        """Call page library function ``name`` in ``frame`` (JSON in, JSON out), within the script time limit.

        Installs the library first when the frame lacks it (a frame the init
        script did not reach).

        Raises
        ------
        PageScriptError
            When the page's scripts broke the library (the message holds their error).
        PageUnresponsiveError
            When the frame did not answer in time.
        """
        src = (f"() => window.__steadyhand && window.__steadyhand.call ? window.__steadyhand.call({json.dumps(name)}, "
               f"{json.dumps(json.dumps(list(args)))}) : {json.dumps(_NO_LIB)}")
        self._reading = name in _LIB_READS
        try:
            raw = self._bounded(frame, "evaluate", src, None, what=f"page library {name}")
        finally:
            self._reading = False
        if raw == _NO_LIB:
            self._bounded(frame, "evaluate", PAGE_LIB, None, what="installing the page library")
            raw = self._bounded(frame, "evaluate", src, None, what=f"page library {name}")
        return self._answer(raw, name, frame)

    def _lib_with(self, frame: Any, name: str, args: list[Any], *, pre: str | None = None,
                  post: str | None = None) -> tuple[Any, Any, Any, bool]:
        """Page library function ``name`` in ``frame`` (as :meth:`_lib`) with the functions ``pre`` and ``post``
        (sources, no argument) run right before and right after it in the same round trip and the same task.

        Returns ``(pre's result, the library's answer, post's result, whether post ran)``; a function that
        threw gives None.  When the frame lacks the library, it is installed and ``name`` called again by
        :meth:`_lib`: ``post`` then did not run (False).

        Raises
        ------
        PageScriptError, PageUnresponsiveError
            As :meth:`_lib`.
        """
        call = (f"window.__steadyhand && window.__steadyhand.call ? window.__steadyhand.call({json.dumps(name)}, "
                f"{json.dumps(json.dumps(list(args)))}) : {json.dumps(_NO_LIB)}")
        guard = "(f) => { try { return f(); } catch (e) { return null; } }"
        src = (f"() => {{ const g = {guard}; const a = {'g(' + pre + ')' if pre else 'null'}; const r = {call}; "
               f"const b = {'g(' + post + ')' if post else 'null'}; return [a, r, b]; }}")
        got = self._bounded(frame, "evaluate", src, None, what=f"page library {name}")
        if not isinstance(got, list) or len(got) != 3:
            raise PageScriptError(f"the page library's {name} returned no readable answer at "
                                  f"{self._frame_url(frame)}: the page's scripts broke it")
        before, raw, after = got
        if raw == _NO_LIB:
            return before, self._lib(frame, name, *args), None, False
        return before, self._answer(raw, name, frame), after, post is not None

    def _light_read(self, frame: Any, collect_args: dict[str, Any], pre: str | None,
                    post: str | None) -> tuple[Any, Any, Any, Any, bool] | None:
        """The light look's reads of ``frame`` in one round trip and one task of the page: ``pre`` (a function
        of no argument, or None), the page library's ``stamp`` and ``collect`` (``collect_args``), then ``post``.

        Returns ``(pre's result, the stamp, the collected elements, post's result, whether post ran)``, a
        function that threw giving None; None when the frame lacks the page library (the caller then reads
        the frame the long way, which installs it).  Counted in :attr:`light_reads`.  The reads are
        remembered (:attr:`_light_key`) so that a settle wait can take the next light look of the main frame
        in its own round trip (:meth:`wait_settled` ``look``).

        Raises
        ------
        PageScriptError, PageUnresponsiveError
            As :meth:`_lib`.
        """
        if frame == self.page.main_frame:
            self._light_key = (json.dumps(collect_args, sort_keys=True), pre, post)
            if post is not None:  # a step's look without a screenshot: what a page just loaded is looked at with
                self._plain_key = self._light_key
        got = self._bounded(frame, "evaluate", _light_src(collect_args, pre, post), None,
                            what="page library light look")
        return self._light_answer(frame, got)

    def _light_answer(self, frame: Any, got: Any) -> tuple[Any, Any, Any, Any, bool] | None:
        """:meth:`_light_read`'s result from what its page function (:func:`_light_src`) returned."""
        if not isinstance(got, list) or len(got) != 5:
            raise PageScriptError(f"the page library's light look returned no readable answer at "
                                  f"{self._frame_url(frame)}: the page's scripts broke it")
        before, stamp, raw, after, post_read = got
        if stamp is None or raw is None:
            return None
        self.light_reads += 1
        return before, self._answer(stamp, "stamp", frame), self._answer(raw, "collect", frame), after, \
            bool(post_read)

    def _looked_for(self, collect_args: dict[str, Any], pre: str | None, post: str | None) -> Any:
        """The light look a settle wait took at its end (:meth:`wait_settled` ``look``), when it was taken with
        these reads and nothing was asked of the page since (at most :data:`LOOK_KEPT_S` ago); else None.
        Taken once: a second call gives None.

        Raises
        ------
        BrowserClosedError
            When the page or the browser is gone since (crashed or killed), as a read of the page would.
        """
        looked, self._looked = self._looked, None
        if looked is None:
            return None
        key, got, at = looked
        if key != (json.dumps(collect_args, sort_keys=True), pre, post) or time.monotonic() - at > LOOK_KEPT_S:
            return None
        self._check_alive()  # a page or browser that died since is told as a read of it would tell it
        return got

    def _read_js(self, script: str) -> Any:
        """``script`` (a function of no argument) in the main frame; None when it threw or the page did not
        answer (what :meth:`observe` leaves in :attr:`around` then)."""
        try:
            return self.evaluate(script)
        except Exception:  # noqa: BLE001 - the reader says "unknown", never fails the observation
            return None

    def _lib_on(self, handle: Any, name: str, *args: Any) -> Any:
        """Call page library function ``name`` with the element behind ``handle`` first (see :meth:`_lib`)."""
        src = (f"(e) => window.__steadyhand && window.__steadyhand.callOn ? window.__steadyhand.callOn("
               f"{json.dumps(name)}, e, {json.dumps(json.dumps(list(args)))}) : {json.dumps(_NO_LIB)}")
        raw = self._bounded(handle, "evaluate", src, None, what=f"page library {name}")
        if raw == _NO_LIB:
            frame = handle.owner_frame()
            if frame is not None:
                self._ensure_lib(frame)
            raw = self._bounded(handle, "evaluate", src, None, what=f"page library {name}")
        return self._answer(raw, name, handle)

    # --- observation ----------------------------------------------------------------
    def _ensure_lib(self, frame: Any) -> None:
        """Install the page library in ``frame`` unless it is there (within the script time limit)."""
        if not self._bounded(frame, "evaluate", "() => !!(window.__steadyhand && window.__steadyhand.version === 1)",
                             None, what="checking the page library"):
            self._bounded(frame, "evaluate", PAGE_LIB, None, what="installing the page library")

    def _frame_offset(self, frame: Any) -> tuple[float, float] | None:
        """Top-left of ``frame``'s content box in top-level CSS px (None: not laid out or gone)."""
        if frame == self.page.main_frame:
            return (0.0, 0.0)
        try:
            el = self._bounded(frame, "frame_element", what="locating a frame")
            box = self._bounded(el, "bounding_box", what="locating a frame")
            if not box:
                return None
            border = self._bounded(el, "evaluate", "e => [e.clientLeft, e.clientTop]", None, what="locating a frame")
            return (box["x"] + border[0], box["y"] + border[1])
        except PageError:
            raise
        except Exception:
            return None

    def _ax_cdp(self) -> Any:
        """The one CDP session of the current page used to read its accessibility tree (made on first use)."""
        if self._ax_page is not self.page or self._ax_session is None:
            self._ax_session = self._context.new_cdp_session(self.page)
            self._ax_page = self.page
        return self._ax_session

    def ax_maps(self, frames: list[Any]) -> dict[Any, dict[str, list[str]]]:
        """Browser-given roles and names of the elements of ``frames``, keyed as the page library's ``collect`` reads them.

        One ``DOM.getDocument`` (depth -1, pierced) for the page and one
        ``Accessibility.getFullAXTree`` per frame, over one CDP session
        (:mod:`core.perception.axtree`).  A frame whose document is not in
        the page's DOM tree (an out-of-process iframe) or whose tree cannot
        be read is left out: its elements keep the page library's in-page
        names.  Never raises.

        Returns
        -------
        dict
            Playwright frame -> ``{element path: [tag, role, name]}``.
        """
        out: dict[Any, dict[str, list[str]]] = {}
        try:
            cdp = self._ax_cdp()
            root = cdp.send("DOM.getDocument", {"depth": -1, "pierce": True}, timeout=self.script_timeout_ms)["root"]
        except Exception:
            self._ax_session = None
            return out
        docs: dict[Any, Any] = {self.page.main_frame: root}
        # CDP puts an iframe's frame id on the <iframe> element's node, not on its content document
        frame_ids: dict[Any, str] = {}

        def document_of(frame: Any) -> Any:
            if frame in docs:
                return docs[frame]
            docs[frame] = None
            parent = frame.parent_frame
            pdoc = document_of(parent) if parent is not None else None
            if pdoc is not None:
                try:
                    path = self._lib_on(self._bounded(frame, "frame_element", what="locating a frame"), "nodePath")
                    node = element_at(pdoc, [int(x) for x in path.split("/")]) if path else None
                    docs[frame] = node.get("contentDocument") if node is not None else None
                    if node is not None and node.get("frameId"):
                        frame_ids[frame] = str(node["frameId"])
                except PageError:
                    raise
                except Exception:
                    docs[frame] = None
            return docs[frame]

        for frame in frames:
            doc = document_of(frame)
            if doc is None or (frame != self.page.main_frame and frame not in frame_ids):
                continue
            try:
                params = {"frameId": frame_ids[frame]} if frame in frame_ids else {}
                nodes = cdp.send("Accessibility.getFullAXTree", params, timeout=self.script_timeout_ms)["nodes"]
            except Exception:
                continue
            out[frame] = ax_entries(doc, nodes)
        return out

    def _frame_label(self, frame: Any) -> str:
        parts = []
        f = frame
        while f is not None and f != self.page.main_frame:
            parts.append(f.name or f.url.rsplit("/", 1)[-1] or "frame")
            f = f.parent_frame
        return " > ".join(reversed(parts))

    def _await_loaded(self, page: Any) -> None:
        """Before another look: wait (navigation timeout) for the document to load; a dead page raises."""
        try:
            page.wait_for_load_state("domcontentloaded", timeout=self.settings.navigation_timeout_ms)
        except Exception:
            self._check_alive()

    def observe(self, *, screenshot: bool = True, neighbours: bool = True, ax: bool = True,
                around: tuple[str, str] | None = None) -> Observation:
        """Observe the page: interactive elements with boxes, text, signature, screenshot.

        ``ax=False`` is the light look of the fast path (:mod:`core.engine.fastpath`): Chromium's
        accessibility tree is not read again; elements keep the names it gave them at the last full look
        while their in-page name is unchanged, and the others are named in the page (as on pages above
        :data:`AX_TREE_MAX_ELEMENTS`).  The tree costs 40-140 ms of a 10-180 ms observation on pages of
        100-1,000 elements (``bench overhead``).

        ``around`` (``(before_js, after_js)``, sources of functions of no argument run in the main frame): their
        results are left in :attr:`around` as ``(before, after)``, each None when it threw or could not run.
        ``before_js`` runs before anything of the page is read, in the same round trip as the first one;
        ``after_js`` after the main frame's elements are read - in the same round trip, in the same task of the
        page (nothing of the page can run between the two), when nothing else is taken after them (no
        screenshot); else in a round trip of its own at the end.  Two round trips fewer than reading them apart
        (:class:`core.engine.screen.ScreenTracker` reads its tokens so).

        Secrets are masked: password values never leave the page, values of
        declared secrets are replaced in text, and both kinds of fields are
        painted over in the screenshot.  ``Observation.loading`` lists what
        says the page is still loading (frame label first for an iframe's).

        Every call into the page is bounded by :attr:`script_timeout_ms`;
        Chromium's accessibility tree is read only up to
        :data:`AX_TREE_MAX_ELEMENTS` elements.

        Raises
        ------
        PageScriptError
            When the page's scripts broke the page library (their error text in the message).
        PageUnresponsiveError
            When the page did not answer or paint in time.
        BrowserClosedError
            When the page or the browser is gone.
        """
        page = self.page
        self.page_ms = 0.0
        self.around = (None, None)
        self._look_kept = False
        pre_js, post_js = around if around is not None else (None, None)
        raw_main: dict[str, Any] | None = None
        candidates: list[Candidate] = []
        items_all: list[dict[str, Any]] = []
        self._frames = []
        secret_boxes: list[tuple[float, float, float, float]] = []
        # a navigation in progress destroys the page's context mid-look: look again once it has loaded, 3 looks
        # at most (tenacity); a broken or stuck page (PageError) and a closed browser end the look at once
        for attempt in Retrying(stop=stop_after_attempt(3), reraise=True,
                                retry=retry_if_not_exception_type((PageError, BrowserClosedError)),
                                before_sleep=lambda _state: self._await_loaded(page)):
            with attempt:
                raw_main = None
                candidates, items_all, self._frames, secret_boxes = [], [], [], []
                extra_texts: list[str] = []
                loading: list[str] = []
                anchors: list[TextBox] = []
                frames = [page.main_frame] + [f for f in page.frames if f != page.main_frame]
                offsets = {f: self._frame_offset(f) for f in frames}
                live = [f for f in frames if offsets[f] is not None]
                # one round trip per frame: installs the library where missing, counts elements and mutations
                pre: Any = None
                post: Any = None
                post_read = False
                stamps = []
                light: dict[Any, Any] = {}  # the light look of a page of one frame: one round trip
                if not ax and live == [page.main_frame]:
                    f = page.main_frame
                    light_post = post_js if not screenshot else None
                    ahead = self._looked_for({"neighbours": neighbours, "ax": None}, pre_js, light_post)
                    if ahead is not None:
                        got = self._light_answer(f, ahead)
                        self.looks_ahead += 1
                        self._look_kept = True
                    else:
                        got = self._light_read(f, {"neighbours": neighbours, "ax": None}, pre_js, light_post)
                    if got is not None:
                        pre, stamp, light[f], post, post_read = got
                        stamps.append((f, stamp))
                for f in live if not light else ():
                    if pre_js is not None and f == page.main_frame:
                        pre, stamp, _, _ = self._lib_with(f, "stamp", [], pre=pre_js)
                    else:
                        stamp = self._lib(f, "stamp")
                    stamps.append((f, stamp))
                use_ax = self.ax_tree and sum(int(s["elements"]) for _, s in stamps) <= AX_TREE_MAX_ELEMENTS
                key = [(f, s["doc"], s["mutations"]) for f, s in stamps]
                if use_ax and not ax:
                    ax_maps: dict[Any, Any] = {}  # the light look: the kept entries name what they still cover
                elif use_ax and key != self._ax_key:
                    ax_maps = self.ax_maps(live)
                    self._ax_key = key
                else:
                    # no DOM mutation in any frame since the tree was last read (or too many elements): the page
                    # library names the elements from the entries it kept then (or computes names in the page)
                    ax_maps = {}
                    if not use_ax:
                        self._ax_key = None
                for frame in frames:
                    offset = offsets[frame]
                    if offset is None:
                        continue
                    collect_args = {"neighbours": neighbours, "ax": ax_maps.get(frame)}
                    if frame in light:
                        raw = light[frame]
                    elif post_js is not None and not screenshot and frame == page.main_frame:
                        _, raw, post, post_read = self._lib_with(frame, "collect", [collect_args], post=post_js)
                    else:
                        raw = self._lib(frame, "collect", collect_args)
                    if use_ax and ax and frame not in ax_maps and raw.get("unnamed"):
                        # an element the kept tree entries do not cover (shown by CSS alone, e.g. on :hover)
                        fresh = self.ax_maps([frame])
                        if frame in fresh:
                            ax_maps[frame] = fresh[frame]
                            raw = self._lib(frame, "collect", {"neighbours": neighbours, "ax": fresh[frame]})
                    fi = len(self._frames)
                    self._frames.append(frame)
                    if raw_main is None:
                        raw_main = raw
                        extra_texts.append(str(raw.get("shadow_text", "")))
                    else:
                        extra_texts.append(f"{raw.get('text', '')} {raw.get('shadow_text', '')}")
                    vp = tuple(raw_main["viewport"])
                    dpr = float(raw_main["dpr"])
                    grid = Grid(max(1, vp[0]), max(1, vp[1]))
                    label = self._frame_label(frame)
                    loading.extend(f"{label}: {e}" if label else str(e) for e in raw.get("loading") or ())
                    anchors.extend(TextBox(self.redactor.text(str(t)), str(r), BBox(x + offset[0], y + offset[1], w, h),
                                           label) for t, r, x, y, w, h in raw.get("anchors") or ())
                    if self.secret_values and screenshot:
                        for x, y, w, h in self._lib(frame, "secretRects", self.secret_values):
                            secret_boxes.append(((x + offset[0]) * dpr - 2, (y + offset[1]) * dpr - 2,
                                                 w * dpr + 4, h * dpr + 4))
                    for idx, item in enumerate(raw["items"]):
                        value = str(item.get("value", ""))
                        masked = self.redactor.text(value)
                        if masked != value:
                            item["value"] = masked
                        self._redact_item(item)
                        cand = _candidate(f"{fi}:{idx}", item, dx=offset[0], dy=offset[1], viewport=vp, dpr=dpr,
                                          frame=label, grid=grid, scroll=_scroll_of(raw_main))
                        if item.get("is_password") or masked != value:
                            b = cand.descriptor.bbox
                            assert b is not None
                            secret_boxes.append((b.x * dpr, b.y * dpr, b.width * dpr, b.height * dpr))
                        candidates.append(cand)
                        items_all.append(item)
        assert raw_main is not None
        raw_sig = dict(raw_main)
        raw_sig["items"] = items_all
        raw_sig["text"] = self.redactor.text(str(raw_main.get("text", "")))
        raw_sig["extra_text"] = self.redactor.text(" ".join(t for t in extra_texts if t.strip()))
        sig = light_signature(raw_sig)
        png = b""
        if screenshot:
            png = self._screenshot()
            if secret_boxes:
                png = mask_boxes_png(png, secret_boxes)
        self.looks += 1
        if around is not None:
            if pre_js is not None and not any(f == page.main_frame for f, _ in stamps):
                pre = self._read_js(pre_js)  # the main frame was not read (gone): as late as it can be
            if post_js is not None and not post_read:
                post = self._read_js(post_js)
            self.around = (pre, post)
        return Observation(
            url=str(raw_main["url"]), title=self.redactor.text(str(raw_main["title"])),
            viewport=tuple(raw_main["viewport"]), device_pixel_ratio=float(raw_main["dpr"]),  # type: ignore[arg-type]
            scroll=tuple(raw_main["scroll"]), candidates=tuple(candidates),  # type: ignore[arg-type]
            visible_text=raw_sig["text"], signature=sig, screenshot_png=png,
            modal_titles=tuple(self.redactor.text(m) for m in raw_main.get("modals", ())),
            loading=tuple(self.redactor.text(e) for e in loading),
            timestamp_ms=time.time() * 1000.0, anchors=tuple(anchors),
        )

    def _screenshot(self) -> bytes:
        """A PNG of the viewport within :attr:`script_timeout_ms` (a busy page never paints).

        Raises
        ------
        PageUnresponsiveError
            When the page did not paint in time.
        """
        from playwright.sync_api import TimeoutError as PwTimeout

        try:
            return bytes(self.page.screenshot(type="png", timeout=self.script_timeout_ms))
        except PwTimeout:
            self._check_alive()
            raise PageUnresponsiveError(f"the page did not paint within {self.script_timeout_ms:.0f} ms (screenshot) "
                                        f"at {self._url()}: its own scripts keep its main thread busy") from None

    def _redact_item(self, item: dict[str, Any]) -> None:
        """Mask secret values in every text field of an observed element (in place)."""
        if not self.redactor:
            return  # no secret declared: nothing to mask (a long table has thousands of items)
        for key in ("text", "name", "label", "value", "title", "placeholder", "container"):
            item[key] = self.redactor.text(str(item.get(key, "")))
        item["neighbours"] = [self.redactor.text(str(n)) for n in item.get("neighbours", ())]

    def refs_for_selector(self, selector: str) -> list[Candidate]:
        """Candidates matched by a Playwright selector, in the frames of the last observation.

        Elements that the observer did not list (not considered interactive)
        are described on the fly and get a fresh ref.  A selector that enters
        an iframe (``iframe >> internal:control=enter-frame >> ...``) matches
        from the parent frame; its elements get refs of the frame they live in.
        """
        out: list[Candidate] = []
        seen: set[str] = set()
        for frame in self._frames:
            if ">>" not in selector:  # matches in this frame alone: described in one round trip
                pinned = self._pinned_all(frame, selector)
                if pinned is not None:
                    offset = self._frame_offset(frame) if pinned else None
                    fi = self._frames.index(frame)
                    for info in pinned if offset is not None else ():
                        ref = f"{fi}:{info['i']}"
                        if ref in seen:
                            continue
                        seen.add(ref)
                        out.append(self._selector_candidate(ref, info["d"], offset, frame))
                    continue
            try:
                handles = self._bounded(frame.locator(selector), "element_handles", what=f"selector {selector!r}")
            except PageError:
                raise
            except Exception:
                handles = []
            for h in handles:
                owner = h.owner_frame()
                if owner not in self._frames:
                    continue
                fi = self._frames.index(owner)
                offset = self._frame_offset(owner)
                if offset is None:
                    continue
                info = self._lib_on(h, "pinned", True)
                ref = f"{fi}:{info['i']}"
                if ref in seen:
                    continue
                seen.add(ref)
                out.append(self._selector_candidate(ref, info["d"], offset, owner))
        return out

    def _selector_candidate(self, ref: str, item: dict[str, Any], offset: tuple[float, float], frame: Any) -> Candidate:
        self._redact_item(item)
        vp = tuple(self.page.viewport_size.values()) if self.page.viewport_size else (1280, 800)
        return _candidate(ref, item, dx=offset[0], dy=offset[1], viewport=vp,  # type: ignore[arg-type]
                          dpr=self.settings.device_scale_factor, frame=self._frame_label(frame), grid=Grid(vp[0], vp[1]))

    def _pinned_all(self, frame: Any, selector: str) -> list[dict[str, Any]] | None:
        """The page library's ``pinned`` answer (``{"i": index, "d": description}``) of every element of ``frame``
        that ``selector`` matches, in one round trip; None when the frame lacks the library (or the selector
        cannot be read there), so that the caller goes element by element."""
        try:
            raws = self._bounded(frame.locator(selector), "evaluate_all", _PINNED_ALL_JS, None,
                                 what=f"selector {selector!r}")
        except PageError:
            raise
        except Exception:  # noqa: BLE001 - a frame navigating away, a selector this frame cannot read
            return None
        if not isinstance(raws, list) or any(r == _NO_LIB for r in raws):
            return None
        return [self._answer(r, "pinned", frame) for r in raws]

    def ref_indices(self, selector: str) -> list[int]:
        """The page library's indices (``"0:<i>"`` refs of the last observation) of the main frame's elements
        that Playwright's ``selector`` matches, in one round trip; -1 for an element the observation did not list.

        Raises
        ------
        PageUnresponsiveError
            When the page does not answer within :attr:`script_timeout_ms`.
        """
        kept = self._kept_reads(selector=selector)
        if kept is not None:
            return list(kept["indices"])
        got = self._bounded(self.page.main_frame.locator(selector), "evaluate_all", _REF_INDICES_JS, None,
                            what=f"selector {selector!r}")
        return [int(i) for i in got] if isinstance(got, list) else []

    def _kept_reads(self, *, selector: str | None = None, script: str | None = None, arg: Any = None,
                    scripted: bool = False) -> dict[str, Any] | None:
        """The reads a settle wait took right after the light look the last :meth:`observe` used
        (:attr:`_look_kept`), when they were taken for ``selector`` (and, with ``scripted``, for ``script`` and
        ``arg``), at most :data:`LOOK_KEPT_S` ago and nothing but a page library read was asked of the page
        since (:meth:`_bounded` drops them): :meth:`read_ahead`'s answer, else None.  Not consumed: the
        locator's indices and the probe are asked for one after the other."""
        kept = self._ahead_kept
        if kept is None or not self._look_kept:
            return None
        key, got, at = kept
        if time.monotonic() - at > LOOK_KEPT_S or not got.get("same"):
            return None
        if selector is not None and key[0] != selector:
            return None
        if scripted and (key[2] != script or key[3] != json.dumps(arg, sort_keys=True)):
            return None
        self._check_alive()  # a page or browser that died since is told as a read of it would tell it
        self.reads_kept += 1
        return got

    # --- acting ---------------------------------------------------------------------
    def hold(self, ref: str) -> str:
        """Pin the element behind ``ref`` so that it stays addressable after later observations.

        Returns a ref (``"held:<n>"``) usable wherever a candidate ref is; the
        last 8 are kept.

        Raises
        ------
        ActionError
            When the element is gone.
        """
        handle = self._handle(ref)
        self._held_seq += 1
        key = f"held:{self._held_seq}"
        self._held[key] = handle
        while len(self._held) > 8:
            old = self._held.pop(next(iter(self._held)))
            try:
                old.dispose()
            except Exception:
                pass
        return key

    def _handle(self, ref: str) -> Any:
        if ref.startswith("held:"):
            if ref not in self._held:
                raise ActionError(f"element {ref} is no longer held")
            return self._held[ref]
        try:
            fi_s, idx_s = ref.split(":")
            frame = self._frames[int(fi_s)]
            handle = self._bounded(frame, "evaluate_handle", "i => window.__steadyhand.ref(i)", int(idx_s),
                                   what=f"element {ref}").as_element()
        except PageError:
            raise
        except Exception as exc:
            raise ActionError(f"element {ref} is gone: {exc}") from None
        if handle is None:
            raise ActionError(f"element {ref} is gone")
        return handle

    def perform(self, action: Action, ref: str | None, value: str, *, locator: str | None = None) -> None:
        """Perform one action of the closed action space.

        With ``locator`` (a Playwright selector of the main frame that matched
        exactly the element of ``ref``: the fast path, :mod:`core.engine.fastpath`)
        the action goes through Playwright's own locator, with its auto-waiting
        and its strictness (a locator that matches several elements by then
        fails: never the wrong one).

        Parameters
        ----------
        action : Action
            What to do.
        ref : str | None
            Target candidate ref from the latest observation (None for
            targetless actions).
        value : str
            The action's value with parameters already bound.

        Raises
        ------
        ActionError
            When the element is gone, not actionable within the timeout, or
            the action fails.
        """
        self._looked = self._ahead_kept = None
        from playwright.sync_api import Error as PwError, TimeoutError as PwTimeout

        page = self.page
        t = action.timeout_ms or self.settings.action_timeout_ms  # 0: the project's (P6)
        kind = action.kind
        try:
            if kind == "navigate":
                self.goto(value)
                return
            if kind == "back":
                page.go_back(wait_until="domcontentloaded")
                return
            if kind == "scroll":
                dx, dy = {"down": (0, action.distance), "up": (0, -action.distance),
                          "right": (action.distance, 0), "left": (-action.distance, 0)}[action.direction]
                if ref:
                    self._handle(ref).hover(timeout=t)
                self._bounded(page.mouse, "wheel", dx, dy, what="scroll", ms=t)
                return
            if kind in ("wait", "screenshot", "assert"):
                if kind == "wait" and value:
                    try:
                        page.get_by_text(value).first.wait_for(state="visible", timeout=t)
                    except PwTimeout:
                        raise ActionError(self.redactor.text(f"the text {value!r} did not appear within {t} ms")) \
                            from None
                return
            if kind == "press" and not ref:
                self._bounded(page.keyboard, "press", value, None, what=f"key {value}", ms=t)
                return
            if ref is None:
                raise ActionError(f"{kind} needs a target element")
            h = page.main_frame.locator(locator) if locator else self._handle(ref)
            if kind == "click":
                h.click(timeout=t)
            elif kind == "dblclick":
                h.dblclick(timeout=t)
            elif kind == "hover":
                h.hover(timeout=t)
            elif kind == "check":
                h.check(timeout=t)
            elif kind == "uncheck":
                h.uncheck(timeout=t)
            elif kind == "press":
                h.press(value, timeout=t)
            elif kind == "upload":
                h.set_input_files(value, timeout=t)
            elif kind == "input":
                self._fill(h, value, t)
            elif kind == "select":
                # the option is read in the element (a bounded evaluate): the locator's one element, strictly
                self._select(h.element_handle(timeout=t) if locator else h, value, t)
            else:  # pragma: no cover - the action space is closed by the schema
                raise ActionError(f"unknown action {kind!r}")
        except ActionError:
            self._check_alive()
            raise
        except PwError as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            self._check_alive()  # a dead page is not a failed action: the run ends (error kind "browser")
            raise ActionError(self.redactor.text(f"{kind} failed: {first}")) from None

    def _fill(self, h: Any, value: str, timeout: int) -> None:
        from playwright.sync_api import Error as PwError

        try:
            h.fill(value, timeout=timeout)  # clears existing content first (P5)
            return
        except PwError as exc:
            if "not an <input>" not in str(exc) and "not editable" not in str(exc).lower():
                raise
        # a custom widget: focus it, select all, type
        h.click(timeout=timeout)
        for key in ("Control+A", "Delete"):
            self._bounded(self.page.keyboard, "press", key, None, what="clearing a custom field", ms=timeout)
        self._bounded(self.page.keyboard, "type", value, None, what="typing into a custom field", ms=timeout)

    def _select(self, h: Any, value: str, timeout: int) -> None:
        tag = self._bounded(h, "evaluate", "e => e.tagName.toLowerCase()", None, what="select")
        if tag == "select":
            # by visible text, else by option value (codegen scripts record values), without waiting
            by = self._bounded(h, "evaluate", "(e, v) => { const o = e.options; let l = false, w = false; "
                               "for (let i = 0; i < o.length; i++) { if (o[i].label === v || o[i].text.trim() === v) "
                               "l = true; if (o[i].value === v) w = true; } return l ? 'label' : w ? 'value' : 'none'; }",
                               value, what="select")
            if by == "value":
                h.select_option(value=value, timeout=timeout)
                return
            from playwright.sync_api import TimeoutError as PwTimeout

            try:  # an option not there yet (options loaded late) is waited for, as the script's select waits
                h.select_option(label=value, timeout=timeout)
            except PwTimeout:
                if by != "none":
                    raise
                shown = self._bounded(h, "evaluate", "(e) => Array.from(e.options).slice(0, 12).map((o) => "
                                      "(o.text || o.label || o.value).trim())", None, what="select")
                listed = ", ".join(repr(str(t)) for t in shown or ())
                raise ActionError(self.redactor.text(
                    f"the list has no option {value!r} (waited {timeout} ms; its options: {listed or 'none'})"
                )) from None
            return
        # a custom listbox / combobox: open it and click the option by accessible name
        h.click(timeout=timeout)
        option = self.page.get_by_role("option", name=value, exact=True)
        if self._bounded(option, "count", what="finding an option", ms=timeout) == 0:
            option = self.page.get_by_role("option", name=value)
        option.first.click(timeout=timeout)

    # --- waiting (P6, S7) -------------------------------------------------------------
    def is_alive(self) -> bool:
        """True when the browser is connected and the page is open."""
        try:
            if self.page is None or self.page.is_closed():
                return False
            browser = self._browser or (self._context.browser if self._context is not None else None)
            return browser is None or bool(browser.is_connected())  # a persistent context may have no Browser
        except Exception:
            return False

    def _check_alive(self) -> None:
        """Raise :class:`BrowserClosedError` when the page or the browser is gone."""
        if not self.is_alive():
            raise BrowserClosedError("the page or the browser was closed (crashed or killed)")

    def probe(self) -> dict[str, Any] | None:
        """Cheap quiet-ness probe of the main frame; None while navigating.

        Raises
        ------
        BrowserClosedError
            When the page or the browser is gone (a dead page is not "navigating").
        """
        try:
            return dict(self._lib(self.page.main_frame, "probe"))
        except PageError:
            raise
        except Exception:  # the document is being replaced (navigation)
            self._check_alive()
            return None

    def probe_and_read(self, script: str, arg: Any = None) -> tuple[dict[str, Any] | None, Any]:
        """:meth:`probe`, then the page function ``script`` (source; may be async) called with ``arg``, in the main
        frame, in one round trip: ``(probe, what script returned)``.

        The probe is as :meth:`probe` gives it (None while navigating); what ``script`` returned is None when it
        threw, the page was navigating or it could not run.  The act phase reads the page's kept state
        (:data:`core.perception.effects.SNAPSHOT_JS`) so, right after the probe it takes anyway.

        Raises
        ------
        PageScriptError, PageUnresponsiveError, BrowserClosedError
            As :meth:`probe`.
        """
        kept = self._kept_reads(script=script, arg=arg, scripted=True)
        if kept is not None:
            return dict(kept["probe"]), kept.get("read")
        frame = self.page.main_frame
        src = (f"async (arg) => {{ const lib = window.__steadyhand; "
               f"const p = lib && lib.call ? lib.call('probe', '[]') : {json.dumps(_NO_LIB)}; let r = null; "
               f"try {{ r = await ({script})(arg); }} catch (e) {{ r = null; }} return [p, r]; }}")
        try:
            got = self._bounded(frame, "evaluate", src, arg, what="page library probe")
        except PageError:
            raise
        except Exception:  # the document is being replaced (navigation)
            self._check_alive()
            return None, None
        if not isinstance(got, list) or len(got) != 2 or got[0] == _NO_LIB:
            return self.probe(), None
        return dict(self._answer(got[0], "probe", frame)), got[1]

    def read_ahead(self, selector: str, token_js: str, last_token: Any, script: str | None = None,
                   arg: Any = None) -> dict[str, Any] | None:
        """The reads a step makes before acting, in one round trip to the main frame, when the page is as it was.

        ``token_js`` (a page function's source) is evaluated first; only when its result equals ``last_token``
        (compared as JSON: the page did nothing since the token was read) the rest is read in the same task:

        * ``indices``: the page library's indices (``"0:<i>"`` refs of the last observation) of the elements
          Playwright's ``selector`` matches, as :meth:`ref_indices` gives them (``[]`` for ``selector=""``);
        * ``probe``: the page library's probe, as :meth:`probe` gives it;
        * ``read``: what the page function ``script`` (may be async) returned for ``arg`` (None: threw, or no
          ``script``).

        Returns ``{"token": ..., "same": bool, ...}`` (the three keys above only when ``same``), or None when the
        page was navigating or has no page library (the caller reads on its own).

        No round trip when the last settle wait read the same (its ``then``, :meth:`wait_settled`) at most
        :data:`LOOK_KEPT_S` ago, with its token equal to ``last_token``, and nothing but a page library read
        (:data:`_LIB_READS`) was asked of the page since: that answer is returned.

        Raises
        ------
        PageScriptError, PageUnresponsiveError, BrowserClosedError
            As :meth:`probe`.
        """
        kept, self._ahead_kept = self._ahead_kept, None
        if kept is not None:
            key, got, at = kept
            if (key == _then_key(selector, token_js, script, arg) and time.monotonic() - at <= LOOK_KEPT_S
                    and json.dumps(got.get("token")) == json.dumps(last_token)):
                self._check_alive()  # a page or browser that died since is told as a read of it would tell it
                self.reads_kept += 1
                return dict(got)
        frame = self.page.main_frame
        fn = (f"async (els, [last, arg]) => {{ const token = ({token_js})(); "
              f"if (JSON.stringify(token) !== JSON.stringify(last)) return {{ token, same: false }}; "
              f"return await ({_READS_JS})(els, token, {script or 'null'}, arg); }}")
        try:
            if selector:
                got = self._bounded(frame.locator(selector), "evaluate_all", fn, [last_token, arg],
                                    what=f"selector {selector!r}")
            else:
                got = self._bounded(frame, "evaluate", f"(a) => ({fn})([], a)", [last_token, arg],
                                    what="page library probe")
        except PageError:
            raise
        except Exception:  # the document is being replaced (navigation), or a selector Playwright refused
            self._check_alive()
            return None
        if not isinstance(got, dict):
            return None
        return self._reads_answer(got, frame) if got.get("same") else got

    def _reads_answer(self, got: dict[str, Any], frame: Any) -> dict[str, Any]:
        """What :data:`_READS_JS` returned, its indices as ints and its probe decoded (:meth:`_answer`)."""
        got["indices"] = [int(i) for i in got.get("indices") or ()]
        got["probe"] = dict(self._answer(got.get("probe"), "probe", frame))
        return got

    def wait_loaded(self, limit_ms: float, *, started: float | None = None) -> float:
        """Wait until the main frame shows no loading indicator and is quiet (failure kind 4, S7).

        Polls :meth:`probe` every 30 ms.  ``started`` (``time.monotonic()``)
        counts time already spent waiting against ``limit_ms``.

        Returns
        -------
        float
            ms waited in this call.

        Raises
        ------
        PageLoadingError
            ``"still loading after N ms: <evidence>"`` once ``limit_ms`` is reached.
        PageScriptError, PageUnresponsiveError
            When the page breaks the library or stops answering.
        """
        t0 = time.monotonic()
        origin = t0 if started is None else started
        evidence: list[str] = []
        while True:
            p = self.probe()
            if p is not None:
                evidence = [str(e) for e in p.get("loading") or ()]
                if not evidence and p.get("ready") != "loading" and p.get("quietMs", 0) >= self.waits.quiet_ms:
                    return (time.monotonic() - t0) * 1000.0
            total = (time.monotonic() - origin) * 1000.0
            if total >= limit_ms:
                why = "; ".join(evidence) if evidence else "the document is still loading"
                raise PageLoadingError(f"still loading after {limit_ms:.0f} ms at {self._url()}: "
                                       f"{self.redactor.text(why)}")
            time.sleep(_SETTLE_POLL_S)

    def wait_settled(self, *, long: bool = False, start: dict[str, Any] | None = None,
                     idle_ms: float | None = None, limit_ms: float | None = None,
                     quiet_ms: float | None = None, react_from: int | None = None,
                     look: bool = False, then: tuple[str, str, str | None, Any] | None = None,
                     new_document: bool = False, text: bool = False) -> dict[str, Any]:
        """Wait until the page is quiet (P6: the settle time is an upper bound, not a sleep).

        ``text`` (with ``look``; a step with text assertions): the main frame's visible text is read in the same
        task right after the look, and :meth:`check_now` judges the step's text assertions on it without a
        round trip when asked before anything but a page library read is asked of the page (within
        :data:`LOOK_KEPT_S`).

        ``new_document`` (a page just loaded: :meth:`goto`): the wait also ends by the rule a fast wait applies in
        a document its action navigated to - the document loaded whole, calm for :data:`SETTLE_CALM_MS` and none
        of its own reactions pending since it began (``{"early": True}``) - besides the quiet time.

        ``look`` (the fast path's): when the wait ends in the page, the page's next light look of the main
        frame - the reads of the last one (:meth:`_light_read`) - is taken in the same task and the same round
        trip, and :meth:`observe` uses it when it is asked for that look before anything else is asked of the
        page (within :data:`LOOK_KEPT_S`): the look of the page as the wait found it settled, one round trip
        fewer.  ``then`` (with ``look``): the next step's reads before acting, ``(selector, token_js, script,
        arg)`` as :meth:`read_ahead` takes them, read in the same task right after that look when no DOM
        mutation came since the call began; :meth:`read_ahead` answers them without a round trip when they are
        asked for before anything but a page library read is asked of the page (within :data:`LOOK_KEPT_S`).

        ``idle_ms`` and ``limit_ms``, when given, replace ``waits.settle_max_ms``
        and the loading limit (the engine's learnt budget, S7;
        :mod:`core.recover.waits`); ``quiet_ms`` replaces ``waits.quiet_ms``
        (the fast path's shorter quiet, :data:`core.engine.fastpath.FAST_QUIET_MS`).

        ``react_from`` (the page library's ``timerSeq`` read by :meth:`probe` right before the action; the
        fast path's): the wait also ends - before the idle bound and the quiet time - once nothing is pending,
        no *reaction* the action set off is pending, and the page was calm for :data:`SETTLE_CALM_MS` (no DOM
        mutation, no request ending, no message posted).  A reaction (``reactionsSince`` in ``page_lib.js``) is
        a timeout or idle callback of at most 1 s scheduled since outside a poller's timer (a validator's
        ``setTimeout`` is waited for, a ``setInterval`` poller is not), or an animation frame callback of a
        chain of at most three (a widget that normalises a value in its next frame; a loop that goes on
        frame after frame is an animation, not waited for).  An action whose handlers did their work at once
        ends the wait in about one round trip.  A later change is seen by the light look's verdict and the
        next step's reuse check (:mod:`core.engine.fastpath`).  ``{"early": True}`` is then in the answer.  Only
        the in-page wait ends early; the polling fallback (a navigation, a page without the library) keeps the
        idle bound.

        Returns as soon as a change was seen and the page is quiet (no DOM
        mutation for ``waits.quiet_ms``, 120 ms by default; no request in
        flight, no loading indicator); else after ``waits.settle_max_ms``
        (500 ms, P6) when nothing is pending.  While a loading indicator or
        request is pending it keeps waiting up to ``waits.loading_max_ms``
        (30 s, S7), twice that when ``long`` (submits).

        Returns
        -------
        dict
            ``{"ms": waited ms, "changed": bool, "timed_out": bool}``; when the wait ran in the page, also
            ``"moving"``: whether a finite CSS animation or transition was still running as it ended, and
            ``"arriving"``: whether a dialog was arriving then (:data:`core.perception.pagefacts.ARRIVING_JS`).
        """
        t0 = time.monotonic()
        start = start or {}
        start_mut = start.get("mutations")
        start_url = start.get("url")
        w = self.waits
        limit = limit_ms if limit_ms is not None else w.loading_max_ms * (2 if long else 1)
        settle_max = idle_ms if idle_ms is not None else w.settle_max_ms
        changed = False
        quiet_ms = float(w.quiet_ms if quiet_ms is None else quiet_ms)
        # a fast wait (react_from) knows its document: in the next one it ends by the same rule
        origin = start.get("origin") if react_from is not None else None
        origin = float(origin) if isinstance(origin, (int, float)) and not isinstance(origin, bool) else None
        if new_document:  # no document's performance.timeOrigin is 0: the page is a new document to the rule
            react_from, origin = 0 if react_from is None else react_from, 0.0
        fast = self._settle_in_page(start_mut, start_url, quiet_ms, float(settle_max), float(limit), react_from,
                                    look=look, then=then, origin=origin, text=text)
        if fast is not None:
            if fast["done"]:
                return _settled(t0, bool(fast["changed"]), fast)
            changed = bool(fast["changed"])  # the page navigated or the slice ended: the polling goes on
        else:
            # the action's navigation destroyed the document the wait ran in: the wait goes on in the new one at
            # once (the call waits for its context), without probing for it first; a call that met the old one
            # on its way out is sent again, at most SETTLE_NAVIGATED_TRIES times
            tries = 0
            while self._settle_left and tries < SETTLE_NAVIGATED_TRIES:
                tries += 1
                elapsed = (time.monotonic() - t0) * 1000.0
                again = self._settle_in_page(None, None, quiet_ms, max(0.0, settle_max - elapsed),
                                             max(1.0, limit - elapsed), look=look, then=then, origin=origin,
                                             text=text)
                if again is None:
                    continue
                changed = True
                if again["done"]:
                    return _settled(t0, True, again)
                break  # the slice ended: the polling loop goes on
        while True:
            elapsed = (time.monotonic() - t0) * 1000.0
            p = self.probe()
            if p is None:
                changed = True
                if elapsed >= limit:
                    return {"ms": elapsed, "changed": changed, "timed_out": True}
                try:
                    self.page.wait_for_load_state("domcontentloaded",
                                                  timeout=max(1.0, min(self.settings.action_timeout_ms, limit - elapsed)))
                except Exception:
                    self._check_alive()
            else:
                if start_url is not None and p["url"] != start_url:
                    changed = True
                if start_mut is not None and p["mutations"] != start_mut:
                    changed = True
                leaving = p.get("leavingMs")
                pending = (p["inflight"] > 0 or p["loading"] or p["ready"] == "loading"
                           or (isinstance(leaving, (int, float)) and leaving < LEAVE_MS))
                quiet = p["quietMs"] >= quiet_ms
                # a fast wait now in another document: the in-page wait below decides, by the fast rule
                fresh = (origin is not None and isinstance(p.get("origin"), (int, float))
                         and abs(float(p["origin"]) - origin) > 1.0)
                if not pending and quiet and (changed or start_mut is None) and not fresh:
                    return {"ms": elapsed, "changed": changed, "timed_out": False}
                if not pending and elapsed >= settle_max:
                    return {"ms": elapsed, "changed": changed, "timed_out": False}
                if elapsed >= limit:
                    return {"ms": elapsed, "changed": changed, "timed_out": True}
                if changed:  # a new document with the library (a navigation): its wait runs in the page again
                    again = self._settle_in_page(None, None, quiet_ms, max(0.0, settle_max - elapsed),
                                                 max(1.0, limit - elapsed), look=look, then=then, origin=origin,
                                                 text=text)
                    if again is not None and again["done"]:
                        return _settled(t0, True, again)
                    if again is not None:
                        continue  # the slice ended: probe the page as it is now
            time.sleep(_SETTLE_POLL_S)

    def _settle_in_page(self, start_mut: Any, start_url: Any, quiet_ms: float, idle_ms: float,
                        limit_ms: float, react_from: int | None = None, *, look: bool = False,
                        then: tuple[str, str, str | None, Any] | None = None,
                        origin: float | None = None, text: bool = False) -> dict[str, Any] | None:
        """The settle wait of :meth:`wait_settled` run inside the page, answered the moment it is over.

        The same rules as the polling loop, checked every
        :data:`SETTLE_SLICE_POLL_MS` in the page instead of a probe round trip
        every 30 ms: no overshoot, one call.  At most :data:`SETTLE_SLICE_MS`
        in one call; ``{"done": False, ...}`` when the slice ended first.
        None when it cannot say - the page navigated (its document is gone),
        has no page library, or did not answer within the slice and a
        second: the caller's polling loop takes over (and judges a page that
        does not answer).  ``then`` and ``text``: :meth:`wait_settled`'s.  ``origin``: the ``performance.timeOrigin`` of the
        document the (fast) wait began in: found in another document, the wait ends by the fast rule once that
        document has loaded whole and none of its own reactions is pending.
        """
        slice_ms = min(limit_ms, SETTLE_SLICE_MS)
        key = self._light_key if look else None
        script = _SETTLE_JS
        args = [start_mut, start_url, quiet_ms, idle_ms, limit_ms, slice_ms, SETTLE_SLICE_POLL_MS, react_from,
                SETTLE_CALM_MS, LEAVE_MS, origin]
        target: Any = None  # the main frame (or the next step's locator in it)
        method, call_args = "evaluate", [args]
        if key is not None:  # the light look right as the wait ends, in the same task (wait_settled's look)
            collect_args, pre, post = json.loads(key[0]), key[1], key[2]
            reads = ""
            if then is not None:  # and the next step's reads after it (wait_settled's then)
                selector, token_js, read_js, read_arg = then
                reads = (f"if (r.look) {{ try {{ r.ahead = await ({_THEN_JS})(els, m0, loaded, {token_js}, "
                         f"{read_js or 'null'}, rarg); }} catch (e) {{ r.ahead = null; }} }} ")
                call_args = [[args, read_arg]]
                if selector:
                    method = "evaluate_all"
            body = (f"const lib = window.__steadyhand; const m0 = lib && lib.state ? lib.state.mutations : null; "
                    f"const loaded = document.readyState === 'complete'; "
                    f"const r = await ({_SETTLE_JS})(args); if (r && r.done) {{ "
                    f"try {{ r.look = ({_light_src(collect_args, pre, post)})(); }} catch (e) {{ r.look = null; }} "
                    f"{_TEXT_READ if text else ''}{reads}}} return r;")
            if then is None:
                script = f"async (args) => {{ const els = []; {body} }}"
            elif method == "evaluate_all":
                script = f"async (els, [args, rarg]) => {{ {body} }}"
            else:
                script = f"async ([args, rarg]) => {{ const els = []; {body} }}"
        self._settle_left = False
        try:
            target = self.page.main_frame
            if method == "evaluate_all" and then is not None:
                target = target.locator(then[0])
            got = self._bounded(target, method, script, *call_args, what="settle wait", ms=slice_ms + 1000.0)
        except BrowserClosedError:
            raise
        except Exception as exc:  # noqa: BLE001 - navigating, no library, a busy page: the polling loop decides
            # a selector Playwright refused: the wait again without the next step's reads; a document the
            # action replaced (its context destroyed before the URL says so): wait_settled sends the wait again,
            # to the new one, with the reads (_settle_left)
            navigated = bool(_NAVIGATED.search(str(exc).split("\n", 1)[0]))
            self._settle_left = navigated
            if then is not None and then[0] and self._url() == start_url and not navigated:
                return self._settle_in_page(start_mut, start_url, quiet_ms, idle_ms, limit_ms, react_from, look=look,
                                            origin=origin, text=text)
            return None
        if not isinstance(got, dict) or "done" not in got:
            return None
        looked = got.pop("look", None)
        kept = got.pop("ahead", None)
        said = got.pop("text", None)
        if key is not None and isinstance(said, str):
            self._text_kept = (said, time.monotonic())
        if key is not None and isinstance(looked, list):
            self._looked = (key, looked, time.monotonic())
            self._look_kept = False  # the look just taken is not the one the last observation used
            if then is not None and isinstance(kept, dict) and kept.get("same"):
                self._ahead_kept = (_then_key(*then), self._reads_answer(kept, self.page.main_frame),
                                    time.monotonic())
        return got

    # --- assertions (P7) ------------------------------------------------------------
    def check_now(self, assertion: Assertion, ref: str | None, expected: str) -> tuple[bool, str]:
        """Check one assertion once, without polling (whether a goal already holds before acting).

        Raises the same errors as :meth:`check_assertion`.
        """
        return self._check_once(assertion, ref, expected, kept=True)

    def check_assertion(self, assertion: Assertion, ref: str | None, expected: str) -> tuple[bool, str]:
        """Check one assertion, polling up to ``waits.assertion_timeout_ms`` (2 s by default).

        Returns
        -------
        (bool, str)
            Whether it holds and a one-line explanation (secrets masked).

        Raises
        ------
        PageScriptError, PageUnresponsiveError
            When the page breaks the page library or stops answering.
        """
        deadline = time.monotonic() + self.waits.assertion_timeout_ms / 1000.0
        ok, why = False, ""
        tries = 0
        while True:
            tries += 1
            if tries == 2:  # the page changed while the assertion was polled: a settle wait's reads are old
                self._ahead_kept = None
            try:
                ok, why = self._check_once(assertion, ref, expected)
            except PageError:
                raise  # a broken or stuck page: the step escalates with it, not a failed assertion
            except Exception as exc:
                ok, why = False, f"cannot check: {str(exc).splitlines()[0] if str(exc) else exc!r}"
            if ok or time.monotonic() >= deadline:
                return ok, self.redactor.text(why)
            time.sleep(_ASSERT_POLL_S)

    def _secret_value_equals(self, h: Any, expected: str) -> tuple[bool, str]:
        """Compare a password field's value by its SHA-256 digest, computed in the page.

        The field's value never leaves the page and the expected value never
        enters it; only where Web Crypto is missing (a page that is not a
        secure context) does the page compare the two itself and return a
        boolean.  The message never shows either value.
        """
        digest = self._bounded(h, "evaluate", """async (e) => {
            if (!(window.crypto && crypto.subtle)) return null;
            const b = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(e.value || ''));
            return Array.from(new Uint8Array(b)).map((x) => x.toString(16).padStart(2, '0')).join(''); }""",
                               None, what="comparing a secret field")
        if digest is None:
            same = bool(self._bounded(h, "evaluate", "(e, want) => (e.value || '') === want", expected,
                                      what="comparing a secret field"))
        else:
            same = digest == hashlib.sha256(expected.encode("utf-8")).hexdigest()
        return same, ("the secret field holds the expected value" if same
                      else "the secret field does not hold the expected value")

    def _check_once(self, a: Assertion, ref: str | None, expected: str, *, kept: bool = False) -> tuple[bool, str]:
        """One check of ``a``; ``kept``: a text assertion may read the main frame's text a settle wait read right
        after its look (``wait_settled(text=True)``) instead of asking the page again."""
        page = self.page
        kind = a.kind
        if kind in ("text_appears", "text_absent"):
            said = self._text_kept if kept else None
            if said is not None and time.monotonic() - said[1] > LOOK_KEPT_S:
                said = self._text_kept = None
            texts = []
            for f in page.frames:
                if said is not None and f == page.main_frame:
                    texts.append(str(self._answer(said[0], "allText", f)))
                else:
                    texts.append(str(self._lib(f, "allText")))
            present = any(expected in t for t in texts)
            if kind == "text_appears":
                return present, f"text {expected!r} {'appears' if present else 'does not appear'}"
            return (not present), f"text {expected!r} {'is present' if present else 'is absent'}"
        if kind == "url_contains":
            return expected in page.url, f"URL is {page.url}"
        h: Any = None
        if a.selector:
            loc = page.locator(a.selector)
            if kind == "count":
                n = self._bounded(loc, "count", what=f"selector {a.selector!r}")
                return str(n) == expected, f"{n} elements match {a.selector!r}"
            # how many match and the first one's facts, in one round trip that only reads (the next step's
            # reads a settle wait took stay: _reading)
            self._reading = True
            try:
                n, raw = self._bounded(loc, "evaluate_all", _FIRST_ASSERT_INFO_JS, None,
                                       what=f"selector {a.selector!r}")
            finally:
                self._reading = False
            if n == 0:
                return kind == "hidden", _none_matches(a.selector)
            if raw == _NO_LIB:  # a frame the init script did not reach: the library is installed on the way
                h = loc.first.element_handle()
                info = self._lib_on(h, "assertInfo")
            else:
                info = self._answer(raw, "assertInfo", page.main_frame)
        elif ref:
            h = self._handle(ref)
            info = self._lib_on(h, "assertInfo")
        else:
            return False, "no element to assert on"
        d, text = info["d"], " ".join(str(info["t"]).split())
        if kind == "visible":
            return bool(d["visible"]), "visible" if d["visible"] else "not visible"
        if kind == "hidden":
            return not d["visible"], "hidden" if not d["visible"] else "visible"
        if kind == "enabled":
            return bool(d["enabled"]), "enabled" if d["enabled"] else "disabled"
        if kind == "disabled":
            return not d["enabled"], "disabled" if not d["enabled"] else "enabled"
        if kind == "text_equals":
            return text == expected, f"text is {text[:80]!r}"
        if kind == "text_contains":
            return expected in text, f"text is {text[:80]!r}"
        if kind == "value":
            if d.get("is_password"):
                if h is None:
                    h = page.locator(a.selector).first.element_handle()
                return self._secret_value_equals(h, expected)
            return str(d["value"]) == expected, f"value is {str(d['value'])[:80]!r}"
        if kind == "count":
            return False, "count needs a selector"
        return False, f"unknown assertion {kind}"
