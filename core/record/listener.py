"""The recording listener: turns what a user does on a page into steps, on any page it is attached to.

A :class:`RecordingListener` attaches to a Playwright page (or browser
context) that it does not own: the recorder's own Chromium, or the page the
engine is driving while a human takes over.  It installs the in-page
listener (``recorder_lib.js``, with the page library it needs) in every
frame - as an init script for documents to come and evaluated into the
frames already loaded - and an exposed binding through which the page
reports each user action.  It follows the page's requests over a CDP
session of its own.  Each action becomes a step with the element's full
descriptor, a PNG crop, an anchor, the light signatures before and after
(S2) and the observed delta (S5); steps go to the journal
(:class:`~core.record.journal.RecordingSpool`) as they are recorded.

:meth:`RecordingListener.detach` removes the init script, the binding, its
event handlers and CDP sessions, and suspends the in-page listener of the
documents still open (it goes inert), so the page is left as it was found
and a later listener can attach again.  Like the page, a listener is used
from the one thread that owns Playwright (architecture rule 10).
"""
from __future__ import annotations

import json
import re
import time
from collections import deque
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Mapping
from urllib.parse import urldefrag

from tenacity import Retrying, retry_if_exception, stop_after_attempt

from core.state.crop import CROP_MARGIN_PX, crop_png
from core.act.after import observed_after, whole_token_sub
from core.act.expect import observed_deltas
from core.act.space import spec
from core.domain import AfterState, Anchor, BBox, BrowserSettings, ElementDescriptor, Observation, Step, StepEvidence
from core.act.landing import LIST_KINDS, base_path, origin_of, own_status
from core.act.writes import RequestSeen
from core.act.regions import REGION_SEP, PageRegions, changed_regions, read_regions
from core.perception.effects import item_counts
from core.perception.driver import PAGE_LIB, PlaywrightDriver
from core.perception.pagefacts import main_heading
from core.project.params import escape, placeholder
from core.secrets import Redactor

from .events import (
    AddAssertion, ElementPicked, InspectChanged, ForwardClick, ForwardKey, ForwardMove, ForwardScroll, ForwardType, LiveFrame,
    RecorderCommand, RecorderError, RecorderEvent, SetInspect, StepRecorded, StepRemoved,
)
from .journal import RecordingSpool
from .review import same_named
from .steps import DISAPPEARANCE_KINDS, SecretPolicy, StepBuilder, assertion_step, suggested_assertions

__all__ = ["RecordingListener", "Recording", "RECORDER_LIB", "LISTENER_SCRIPT", "BINDING", "crop_png",
           "NAVIGATION_GRACE_S", "MIN_EFFECT_MS", "CROP_MARGIN_PX"]

RECORDER_LIB = (Path(__file__).with_name("recorder_lib.js")).read_text(encoding="utf-8")
#: What runs in every frame: the page library (kept if the page has it already) and the recorder's listener.
LISTENER_SCRIPT = f"{PAGE_LIB}\n;\n{RECORDER_LIB}"
#: Name of the exposed function the in-page listener reports through.
BINDING = "__steadyhandRecord"
#: A main-frame navigation request starting this long (s) after the last user action is the user's
#: own (address bar, reload), not an effect of that action.
NAVIGATION_GRACE_S = 2.0
#: Wait at least this long (ms) after an action before judging the page settled.
MIN_EFFECT_MS = 150
#: How long (ms) a pick's check by meaning may take to read the element Playwright's role locator found.
PICK_READ_MS = 1000
#: How long (ms) the page is given to report a later action when typing's after-picture shows another URL
#: (the page reports an action synchronously in its handler; 100 ms covers the report's trip to this process).
LATE_EVENT_MS = 100
#: Kinds of page events that become steps.
STEP_KINDS = ("click", "dblclick", "input", "select", "check", "uncheck", "hover", "press", "scroll", "upload",
              "navigate")


@dataclass(frozen=True, slots=True)
class Recording:
    """What one attachment of a :class:`RecordingListener` recorded.

    Attributes
    ----------
    steps : tuple[Step, ...]
        The steps in order (withdrawn ones left out), as in the journal.
    crops : Mapping[str, bytes]
        PNG crops (device px) by step id.
    files : Mapping[str, bytes]
        Uploaded files that a step or parameter refers to, by their path
        relative to the flows folder (``"<flow>.files/<name>"``).
    params : Mapping[str, str]
        Parameters the steps introduced, name -> recorded value.
    secrets : tuple[str, ...]
        Names of the secret parameters the steps use (values never kept).
    start_url : str
        The page's absolute URL when the listener attached.
    """

    steps: tuple[Step, ...]
    crops: Mapping[str, bytes]
    files: Mapping[str, bytes]
    params: Mapping[str, str]
    secrets: tuple[str, ...]
    start_url: str = ""


@dataclass
class _Pending:
    """An action seen but not yet a step: its effect is known when the next action or a pause comes."""

    event: dict[str, Any]
    desc: ElementDescriptor
    crop: bytes
    t: float
    before: Observation | None


def _decisive(pre: Mapping[str, Any], url: str, modals: int, titles: tuple[str, ...]) -> list[str]:
    """Navigation and overlay deltas between a pre-state and a later state (S5)."""
    out: list[str] = []
    if urldefrag(str(pre.get("url", "")))[0] != urldefrag(url)[0]:
        out.append("navigation")
    before = int(pre.get("modals", 0))
    if modals > before:
        out.append("overlay_open")
    elif modals < before:
        out.append("overlay_close")
    elif modals and tuple(pre.get("titles", ())) != titles:
        out.append("overlay_open")
    return out


def _unique_test_id(desc: ElementDescriptor, page: Observation | None) -> ElementDescriptor:
    """``desc`` without its test id when another element of ``page`` has the same one (Gradio marks every text
    box ``data-testid="textbox"``): such an id identifies nothing, and Playwright's codegen, whose locators
    ``steadyhand export`` writes, never picks a test id that matches several elements."""
    if not desc.test_id or page is None:
        return desc
    same = sum(c.descriptor.test_id == desc.test_id and c.descriptor.frame == desc.frame for c in page.candidates)
    return desc.with_(test_id="") if same > 1 else desc


def _page_of(target: Any, driver: PlaywrightDriver | None) -> Any:
    """The page a listener records: ``target`` itself, or the driver's (else first) page of a context."""
    if hasattr(target, "main_frame"):  # a Page
        if driver is not None and driver.page is not target:
            raise ValueError("the driver drives another page than the one to listen to")
        return target
    pages = list(target.pages)
    if driver is not None:
        if driver.page not in pages:
            raise ValueError("the driver's page is not in the browser context to listen to")
        return driver.page
    if not pages:
        raise ValueError("the browser context has no page to listen to")
    return pages[0]


def _observer(page: Any, settings: BrowserSettings, base_url: str, secrets: Mapping[str, str]) -> PlaywrightDriver:
    """A driver over a page it does not own, to observe it only: never opened, never closed by the listener."""
    values = [v for v in secrets.values() if v]
    driver = PlaywrightDriver(settings, base_url=base_url, redactor=Redactor(values))
    driver._context, driver.page = page.context, page
    driver.secret_values = values
    return driver


class RecordingListener:
    """Records what a user does on a page it does not own: ``attach()``, ``pump()`` in a loop, ``detach()``.

    Parameters
    ----------
    target : playwright.sync_api.Page | playwright.sync_api.BrowserContext
        Where to listen.  A page: that page alone.  A context: every page
        of it reports, and the page recorded (snapshots, requests) is the
        driver's page, else the context's first page.
    flow_name : str
        Name of the flow the steps belong to (crop and upload paths are
        ``<flow>.crops/...`` and ``<flow>.files/...``).
    base_url : str
        The site's base URL; URLs are stored relative to it.
    spool : RecordingSpool | Path
        The journal steps are written to (a folder: a journal opened
        there).  The listener never deletes it.
    driver : PlaywrightDriver | None
        The driver of the page (the engine's, or the recorder's own): its
        observations, waits and secret masking are used.  None: an
        observer over the page is made from ``settings`` and ``secrets``.
    settings : BrowserSettings | None
        Browser settings of that observer (None: the defaults).
    on_event : Callable[[RecorderEvent], None]
        Receives every event (steps, picks, live frames, errors) on the
        thread that pumps.
    secrets : Mapping[str, str] | None
        Declared secrets, name -> value: typed values equal to one become
        ``{name}``.
    params : Mapping[str, str] | None
        The project's parameters: a typed value equal to one becomes ``{name}``.
    live_frames : bool
        Emit :class:`LiveFrame` events (the studio's live view).
    auto_assert : bool
        In inspect mode add the first suggested assertion at once.

    Raises
    ------
    ValueError
        When ``driver`` drives another page, or a context has no page.
    """

    def __init__(self, target: Any, *, flow_name: str, base_url: str, spool: RecordingSpool | Path,
                 driver: PlaywrightDriver | None = None, settings: BrowserSettings | None = None,
                 on_event: Callable[[RecorderEvent], None] = lambda e: None, secrets: Mapping[str, str] | None = None,
                 params: Mapping[str, str] | None = None, live_frames: bool = False, auto_assert: bool = False) -> None:
        self.flow_name = flow_name
        self.base_url = base_url.rstrip("/")
        self.on_event = on_event
        self.live_frames = live_frames
        self.auto_assert = auto_assert
        self.secrets = dict(secrets or {})
        self._target = target
        self.page = _page_of(target, driver)
        self.driver = driver if driver is not None else _observer(self.page, settings or BrowserSettings(), base_url,
                                                                  self.secrets)
        self.builder = StepBuilder(base_url=self.base_url, secrets=SecretPolicy(self.secrets), known_params=params)
        self.spool = spool if isinstance(spool, RecordingSpool) else RecordingSpool(Path(spool))
        self.start_url = ""
        self._state = "new"  # -> "attached" -> "detached"
        self._result: Recording | None = None
        self._disposables: list[Any] = []  # init script and binding
        self._handlers: list[tuple[str, Callable[..., None]]] = []
        self._cdp: Any = None
        self._queue: deque[tuple[Any, dict[str, Any], float]] = deque()
        self._requests: deque[tuple[float, str]] = deque(maxlen=200)
        #: Every request's hops as ``[t, method, url, type, status]`` (status None until answered), and the
        #: hop in flight by CDP request id: the status of a step's own request (``AfterState.response_status``)
        self._hops: deque[list[Any]] = deque(maxlen=400)
        self._hop_of: dict[str, list[Any]] = {}
        #: List item counts of the latest snapshots (:attr:`EffectSnapshot.items`), by snapshot identity
        self._counts: deque[tuple[Observation, dict[str, int]]] = deque(maxlen=4)
        self._regions: deque[tuple[Observation, PageRegions]] = deque(maxlen=4)
        self._navigations: set[str] = set()  # CDP request ids of main-frame navigations in flight
        self._main_frame_id = ""
        self._frames_to_watch: list[Any] = []  # iframes that navigated: out-of-process ones get a CDP session
        self._frame_sessions: dict[Any, Any] = {}
        self._snap: Observation | None = None
        self._snap_time = 0.0
        #: The snapshot before the latest one: the before-state of an action whose event came in after a
        #: snapshot that already shows its effect (typing flushed by the same key press or click)
        self._prev_snap: Observation | None = None
        self._prev_snap_time = 0.0
        self._last_action = 0.0
        self._picks: dict[int, dict[str, Any]] = {}
        self._pick_seq = 0
        self._closed_page = False
        self._last_mutations: int | None = None
        self._last_live = 0.0
        self._last_event_t = 0.0
        self._pending: _Pending | None = None
        self._draft: tuple[Any, dict[str, Any], float] | None = None
        self._after_next: list[Step] = []  # disappearance checks waiting for the next action
        self.inspect = False
        #: Events of kinds the listener does not turn into steps (counted, for diagnostics).
        self.ignored = 0

    # --- life cycle -------------------------------------------------------------------
    def attach(self) -> None:
        """Install the listener in every frame of the page (loaded ones too) and take the first snapshot.

        What the page does from now on is the user's: its own loads are
        not steps for :data:`NAVIGATION_GRACE_S` s.

        Raises
        ------
        RuntimeError
            When this listener was attached before (make a new one; the
            page accepts any number of attachments, one at a time).
        playwright.sync_api.Error
            When another listener is attached to the page right now.
        """
        if self._state != "new":
            raise RuntimeError("a RecordingListener attaches once; make a new one to record again")
        self._state = "attached"
        try:
            self._install()
            self._last_action = time.monotonic()
            self._snapshot()
        except BaseException:
            self._uninstall()
            self._state = "detached"
            raise
        self.start_url = self.page.url

    def _install(self) -> None:
        """Init script and binding on the target, page event handlers, the CDP session, existing frames."""
        self._disposables.append(self._target.add_init_script(LISTENER_SCRIPT))
        self._disposables.append(self._target.expose_binding(BINDING, self._on_binding))
        self._watch_network(self.page)
        for event, handler in (("framenavigated", self._on_navigated), ("framedetached", self._on_frame_detached),
                               ("close", self._on_close)):
            self.page.on(event, handler)
            self._handlers.append((event, handler))
        for frame in list(self.page.frames):
            try:  # an init script runs on new documents only: the loaded ones get the listener now
                frame.evaluate(LISTENER_SCRIPT)
            except Exception:
                pass  # a frame navigating: its new document gets the init script
            if frame != self.page.main_frame:
                self._frames_to_watch.append(frame)

    @property
    def attached(self) -> bool:
        """True between :meth:`attach` and :meth:`detach`."""
        return self._state == "attached"

    @property
    def page_closed(self) -> bool:
        """True once the recorded page was closed (by the user or a script)."""
        return self._closed_page

    @property
    def backlog(self) -> int:
        """Page events received and not yet turned into steps."""
        return len(self._queue)

    def pump(self, wait_ms: int = 50) -> bool:
        """Let Playwright deliver events for up to ``wait_ms`` and turn pending ones into steps.

        Returns False once the page is closed or the listener detached.
        """
        if self._closed_page or self._state != "attached":
            return False
        try:
            self.page.wait_for_timeout(wait_ms)
        except Exception:
            self._closed_page = True
            return False
        while self._frames_to_watch and not self._closed_page:
            self._watch_frame(self._frames_to_watch.pop())
        while self._queue and not self._closed_page:
            frame, event, t = self._queue.popleft()
            try:
                self._process(frame, event, t)
            except Exception as exc:  # a frame went away mid-step: report and go on
                if self._closed_page:
                    break
                self.on_event(RecorderError(self.driver.redactor.text(f"could not record a {event.get('kind')}: "
                                                                      f"{str(exc).splitlines()[0] if str(exc) else exc!r}")))
        if self._pending is not None and not self._closed_page:
            try:
                self._finish_idle()
            except Exception:
                if not self._closed_page:
                    raise
        elif self.live_frames and not self._closed_page:
            self._maybe_live_frame()
        return not self._closed_page

    def handle(self, command: RecorderCommand) -> None:
        """Apply one command from a front end (forwarded input, inspect mode, assertions)."""
        page = self.page
        if isinstance(command, (ForwardClick, ForwardType, ForwardKey, ForwardScroll)):
            self._last_action = time.monotonic()  # forwarded input is the user's: what it loads is not a step
        if isinstance(command, SetInspect):
            self.set_inspect(command.on)
        elif isinstance(command, ForwardClick):
            if command.double:
                page.mouse.dblclick(command.x, command.y)
            else:
                page.mouse.click(command.x, command.y)
        elif isinstance(command, ForwardMove):
            page.mouse.move(command.x, command.y)
        elif isinstance(command, ForwardType):
            page.keyboard.type(command.text)
        elif isinstance(command, ForwardKey):
            page.keyboard.press(command.key)
        elif isinstance(command, ForwardScroll):
            page.mouse.move(command.x, command.y)
            page.mouse.wheel(command.dx, command.dy)
        elif isinstance(command, AddAssertion):
            self.add_assertion(command.pick_id, command.kind, command.expected)

    def set_inspect(self, on: bool) -> None:
        """Turn inspect mode on or off in every frame."""
        self.inspect = bool(on)
        self._in_frames("on => window.__steadyhandRec && window.__steadyhandRec.setInspect(on)", self.inspect)

    def _in_frames(self, script: str, arg: Any = None) -> None:
        """Evaluate ``script`` in every frame of the page, skipping frames that fail (navigating, gone)."""
        for frame in list(self.page.frames):
            try:
                frame.evaluate(script, arg)
            except Exception:
                pass

    def detach(self) -> Recording:
        """Record what is still pending, take the listener off the page and return what was recorded.

        Typing not committed yet in the page is flushed first.  Safe to call
        more than once (the same result) and after the page or browser died.
        The page keeps working: its own library and the driver are left as
        they were (the driver's last observation is the listener's, so refs
        from before :meth:`attach` are stale).

        Raises
        ------
        core.record.journal.JournalVersionError, core.project.ProjectError
            When the journal cannot be read back.
        """
        if self._result is not None:
            return self._result
        if self._state == "attached":
            self._flush_page()
            if not self._closed_page:
                self._in_frames("() => window.__steadyhandRec && window.__steadyhandRec.suspend()")
            self._drain()
            self._uninstall()
        self._state = "detached"
        self._result = self._recording()
        self.spool.close()
        return self._result

    def _flush_page(self) -> None:
        """Commit typing pending in the page and let the last action take effect (page still open)."""
        if self._closed_page:
            return
        self._in_frames("() => window.__steadyhandRec && window.__steadyhandRec.flush()")
        try:
            self.pump(60)
            if self._pending is not None and not self._closed_page:
                self._settle(self._pending.t, self._pending.before)
                self._snapshot()
                self._finalize(after=self._snap, end=self._snap_time)
        except Exception:
            pass

    def _drain(self) -> None:
        """Turn what the page reported but was not processed yet into steps (the page may be gone by now)."""
        while self._queue:
            frame, event, t = self._queue.popleft()
            try:
                self._process(frame, event, t)
            except Exception:
                pass
        if self._draft is not None:  # the page closed before it could commit the typing
            frame, event, t = self._draft
            self._draft = None
            try:
                self._process(frame, event, t)
            except Exception:
                pass
        if self._pending is not None:
            self._finalize(end=time.monotonic())
        while self._after_next:  # no action followed: the checks end the recording
            self._add_check(self._after_next.pop(0))

    def _uninstall(self) -> None:
        """Remove the init script, the binding, the page event handlers and the CDP sessions; never raises."""
        for disposable in reversed(self._disposables):
            try:
                disposable.close()
            except Exception:
                pass
        self._disposables.clear()
        for event, handler in self._handlers:
            try:
                self.page.remove_listener(event, handler)
            except Exception:
                pass
        self._handlers.clear()
        for session in [self._cdp, *self._frame_sessions.values()]:
            try:
                if session is not None:
                    session.detach()
            except Exception:
                pass
        self._cdp = None
        self._frame_sessions.clear()
        self._frames_to_watch.clear()

    def _recording(self) -> Recording:
        """The journal's steps and crops, and the uploaded files the steps or parameters refer to."""
        steps, crops = self.spool.read()
        files = {}
        used = {s.action.value for s in steps} | set(self.builder.params.values())
        folder = self.spool.folder / "files"
        for f in sorted(folder.glob("*")) if folder.is_dir() else []:
            rel = f"{self.flow_name}.files/{f.name}"
            if rel in used:
                files[rel] = f.read_bytes()
        return Recording(tuple(steps), crops, files, dict(self.builder.params), tuple(self.builder.flow_secrets),
                         self.start_url)

    # --- callbacks (run inside Playwright's dispatch: only queue) -----------------------
    def _on_binding(self, source: Mapping[str, Any], payload: Any) -> None:
        if self._state != "attached":
            return
        if isinstance(payload, dict) and "kind" in payload:
            now = time.monotonic()
            if payload["kind"] == "draft":  # typing not committed yet: kept in case the page goes away
                self._draft = (source.get("frame"), {**payload, "kind": "input"}, now)
                return
            self._draft = None  # the page commits typing before reporting anything else
            if payload["kind"] not in ("mode", "pick", "pick_text"):
                self._last_action = now  # before the page loads that this action may start
            self._queue.append((source.get("frame"), payload, now))

    def _on_close(self, *_: Any) -> None:
        self._closed_page = True

    def _on_frame_detached(self, frame: Any) -> None:
        self._frame_sessions.pop(frame, None)

    def _watch_network(self, page: Any) -> None:
        """Follow the page's requests through a CDP session of its own: writes (S6) and main-frame navigations.

        Not Playwright's ``request`` events: subscribing to them makes Playwright keep every Request and
        Response object of the page alive (in this process and in its driver) until 10,000 of each have
        piled up, ~14 KB per request here.  CDP events are plain dicts, dropped once handled.  An
        out-of-process (cross-site) iframe has a session of its own once it has navigated (:meth:`pump`).
        """
        self._cdp = self._network_session(page)
        self._main_frame_id = str(self._cdp.send("Page.getFrameTree")["frameTree"]["frame"]["id"])

    def _network_session(self, page_or_frame: Any) -> Any:
        cdp = self.page.context.new_cdp_session(page_or_frame)
        cdp.on("Network.requestWillBeSent", self._on_request)
        cdp.on("Network.responseReceived", self._on_response)
        cdp.on("Network.loadingFinished", self._on_request_done)
        cdp.on("Network.loadingFailed", self._on_request_done)
        # no response bodies kept for this session (Playwright's own session keeps what it needs)
        cdp.send("Network.enable", {"maxTotalBufferSize": 0, "maxResourceBufferSize": 0, "maxPostDataSize": 0})
        return cdp

    def _watch_frame(self, frame: Any) -> None:
        """Follow the requests of an iframe that navigated when it runs out of process (its own CDP target)."""
        old = self._frame_sessions.pop(frame, None)
        if old is not None:
            try:
                old.detach()
            except Exception:
                pass
        try:
            if frame.is_detached():
                return
            self._frame_sessions[frame] = self._network_session(frame)
        except Exception:
            pass  # an in-process frame: the page's session sees its requests

    def _on_request(self, event: Mapping[str, Any]) -> None:
        try:
            request = event["request"]
            # beacons ("Ping") are analytics, not writes of the application (S6)
            if request["method"] not in ("GET", "HEAD", "OPTIONS") and event.get("type") != "Ping":
                self._requests.append((time.monotonic(), request["method"]))
            rid = str(event["requestId"])
            redirect = event.get("redirectResponse")
            if isinstance(redirect, dict) and rid in self._hop_of:  # a POST answered 303: that hop's status
                self._hop_of[rid][4] = int(redirect.get("status", 0)) or None
            hop = [time.monotonic(), str(request["method"]).upper(), str(request["url"]),
                   str(event.get("type", "other")).lower(), None]
            self._hops.append(hop)
            self._hop_of[rid] = hop
            while len(self._hop_of) > 400:
                self._hop_of.pop(next(iter(self._hop_of)))
            # a navigation request's id is its loader's id (as Playwright tells navigation requests)
            if (event.get("type") == "Document" and event["requestId"] == event.get("loaderId")
                    and event.get("frameId") == self._main_frame_id):
                self._navigations.add(event["requestId"])
                now = time.monotonic()
                # no user action just before: the user typed the URL (or a script called goto)
                if "redirectResponse" not in event and now - self._last_action > NAVIGATION_GRACE_S:
                    url = str(request["url"]) + str(request.get("urlFragment", ""))
                    self._queue.append((None, {"kind": "navigate", "url": url}, now))
        except Exception:
            pass

    def _on_response(self, event: Mapping[str, Any]) -> None:
        try:
            hop = self._hop_of.get(str(event["requestId"]))
            if hop is not None:
                hop[4] = int(event["response"]["status"])
        except Exception:
            pass

    def _on_request_done(self, event: Mapping[str, Any]) -> None:
        self._navigations.discard(event.get("requestId"))
        if "errorText" in event:  # failed without an answer (refused, aborted): no status will come
            self._hop_of.pop(str(event.get("requestId")), None)

    def _on_navigated(self, frame: Any) -> None:
        try:
            if frame == self.page.main_frame:
                self._navigations.clear()  # committed: the page is loading now
            else:
                self._frames_to_watch.append(frame)
        except Exception:
            pass

    # --- processing -------------------------------------------------------------------
    def _snapshot(self) -> Observation:
        obs = self.driver.observe(screenshot=True, neighbours=False)
        self._prev_snap, self._prev_snap_time = self._snap, self._snap_time
        self._snap, self._snap_time = obs, time.monotonic()
        probe = self.driver.probe() or {}
        self._last_mutations = probe.get("mutations")
        counts = item_counts(self.driver)  # list item counts: what a step added to a list (issue 19)
        if counts is not None:
            self._counts.append((obs, counts))
        regions = read_regions(self.driver)  # the main landmark, the regions a step changes (issue 19)
        if regions is not None:
            self._regions.append((obs, regions))
        if self.live_frames:
            self._last_live = self._snap_time
            self.on_event(LiveFrame(obs.screenshot_png, obs.device_pixel_ratio, obs.url, obs.candidates))
        return obs

    def _try_snapshot(self) -> Observation | None:
        """A snapshot, or None when the page cannot be captured now (mid-navigation, closing).

        A step is never lost for want of a picture: it is then recorded without crop or after-state.
        """
        # two tries (tenacity), the second once the document has loaded (action timeout); none when the page closed
        retrying = Retrying(stop=stop_after_attempt(2), reraise=True,
                            retry=retry_if_exception(lambda _exc: not self._closed_page),
                            before_sleep=lambda _state: self.page.wait_for_load_state(
                                "domcontentloaded", timeout=self.driver.settings.action_timeout_ms))
        try:
            return retrying(self._snapshot)
        except Exception:
            return None

    def _maybe_live_frame(self) -> None:
        now = time.monotonic()
        if now - self._last_live < 0.4:
            return
        self._last_live = now
        probe = self.driver.probe()
        if probe is None or probe.get("mutations") != self._last_mutations or probe.get("url") != (
                self._snap.url if self._snap else None):
            try:
                self._snapshot()
            except Exception:
                pass

    def _descriptor(self, frame: Any, raw: Mapping[str, Any] | None) -> ElementDescriptor:
        if not raw:
            return ElementDescriptor()
        item = dict(raw)
        self.driver._redact_item(item)
        offset = self.driver._frame_offset(frame) if frame is not None else (0.0, 0.0)
        offset = offset or (0.0, 0.0)
        x, y, w, h = item["bbox"]
        vp = self.page.viewport_size or {"width": 1280, "height": 800}
        anchor = item.pop("anchor", None)
        # the main frame's scroll when the user acted (a click that scrolled the element into view): EXACT
        # compares page coordinates with it
        desc = ElementDescriptor.from_mapping({**item, "bbox": None, "viewport": None, "anchor": None}).with_(
            bbox=BBox(x + offset[0], y + offset[1], w, h), viewport=(int(vp["width"]), int(vp["height"])),
            device_pixel_ratio=float(self.driver.settings.device_scale_factor),
            frame=self.driver._frame_label(frame) if frame is not None else "")
        if anchor and anchor.get("text"):
            desc = desc.with_(anchor=Anchor(self.driver.redactor.text(str(anchor["text"])), str(anchor.get("role", "")),
                                            float(anchor.get("dx", 0.0)), float(anchor.get("dy", 0.0))))
        if desc.scope is not None:  # the row's text may hold what the user typed: masked as the anchor is
            desc = desc.with_(scope=desc.scope.__class__(desc.scope.role, self.driver.redactor.text(desc.scope.name)))
        return desc

    def _process(self, frame: Any, event: dict[str, Any], t: float) -> None:
        kind = event.get("kind")
        if kind == "mode":
            on = bool(event.get("inspect"))
            if on != self.inspect:
                self.inspect = on
                self.on_event(InspectChanged(on))  # the Assert button shows the mode the page is in
            return
        if kind in ("pick", "pick_text"):
            self._pick(frame, event)
            return
        if kind not in STEP_KINDS:
            self.ignored += 1
            return
        if kind != "navigate":
            self._last_action = t
        if kind == "upload" and event.get("data"):
            event = self._keep_uploads(event)
        desc = self._descriptor(frame, event.get("desc"))
        pre = event.get("pre") or {}
        # Crop from the latest snapshot when it shows the page the user acted on (same URL, same
        # dialogs); else take one now, which may already show the action's effect: no crop then.
        if not self._shows(self._snap, pre) and (self._snap is None or self._snap_time <= t):
            self._try_snapshot()
        snap = self._snap
        crop = b""
        if snap is not None and desc.bbox is not None and kind not in ("scroll", "navigate"):
            if self._snap_time <= t and self._shows(snap, pre):
                crop = crop_png(snap.screenshot_png, desc.bbox, snap.device_pixel_ratio)
            elif self._still_there(frame, event.get("desc") or {}):
                fresh = self._try_snapshot()  # the element is where it was and uncovered: picture it now
                if fresh is not None and self._still_there(frame, event.get("desc") or {}):
                    crop = crop_png(fresh.screenshot_png, desc.bbox, fresh.device_pixel_ratio)
                snap = self._snap
        before = snap if snap is not None and self._snap_time <= t else None
        if before is None and self._prev_snap is not None and self._prev_snap_time <= t and self._shows(
                self._prev_snap, pre):
            before = self._prev_snap  # taken before the action on the page it acted on (issue 19)
        desc = _unique_test_id(desc, before or snap)
        if kind == "input" and self._focus_click_on(event):
            before = self._pending.before if self._pending is not None else before  # typing absorbs its click
            self._pending = None
        if self._pending is not None:
            self._finalize(after_pre=event.get("pre"), end=t)
        self._pending = _Pending(event, desc, crop, t, before)
        self._last_event_t = t

    def _focus_click_on(self, event: Mapping[str, Any]) -> bool:
        """Whether the pending action is a click that focused the field ``event`` (typing or its draft) is in."""
        p = self._pending
        if p is None or p.event.get("kind") != "click" or not p.event.get("focus"):
            return False
        a, b = p.event.get("desc") or {}, event.get("desc") or {}
        return bool(a.get("css_path")) and (a.get("css_path"), a.get("shadow")) == (b.get("css_path"), b.get("shadow"))

    @staticmethod
    def _still_there(frame: Any, raw: Mapping[str, Any]) -> bool:
        """Whether the element is still at its recorded box (2 px) and on top at its centre."""
        if frame is None or not raw.get("css_path") or raw.get("shadow") or not raw.get("bbox"):
            return False
        try:
            return bool(frame.evaluate(
                "([css, b]) => { const e = document.querySelector(css); if (!e) return false;"
                " const r = e.getBoundingClientRect();"
                " if (Math.abs(r.x - b[0]) > 2 || Math.abs(r.y - b[1]) > 2 || Math.abs(r.width - b[2]) > 2"
                " || Math.abs(r.height - b[3]) > 2) return false;"
                " const top = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);"
                " return !!top && (top === e || e.contains(top)); }", [raw["css_path"], list(raw["bbox"])]))
        except Exception:
            return False

    @staticmethod
    def _shows(snap: Observation | None, pre: Mapping[str, Any]) -> bool:
        """Whether ``snap`` shows the page of pre-state ``pre`` (URL and open dialogs; frames: any)."""
        if snap is None:
            return False
        if not pre or not pre.get("top", True):
            return True
        return (urldefrag(str(pre.get("url", "")))[0] == urldefrag(snap.url)[0]
                and int(pre.get("modals", 0)) == len(snap.modal_titles))

    def _keep_uploads(self, event: dict[str, Any]) -> dict[str, Any]:
        """Write uploaded files (sent base64 by the page) to the spool; the step refers to their saved place."""
        import base64

        # files too large to travel (over 2 MB in all) come without data: nothing is kept for them
        stored = []
        for name, data in zip(event.get("files", ()), event.get("data", ()), strict=False):
            safe = re.sub(r"[^\w.-]+", "_", str(name)).lstrip(".") or "upload"
            if not data:
                continue
            (self.spool.folder / "files").mkdir(exist_ok=True)
            (self.spool.folder / "files" / safe).write_bytes(base64.b64decode(data))
            stored.append(f"{self.flow_name}.files/{safe}")
        return {**{k: v for k, v in event.items() if k != "data"}, "stored": stored}

    def _finish_idle(self) -> None:
        """The user paused: let the pending action take effect, then take the after-state."""
        p = self._pending
        if p is None or self._queue or time.monotonic() - p.t < MIN_EFFECT_MS / 1000.0:
            return
        if self._draft is not None and self._focus_click_on(self._draft[1]):
            return  # the user is typing into the field the click focused: the typing's step takes it in
        self._settle(p.t, p.before, value_only=p.event.get("kind") in ("input", "select", "check", "uncheck"))
        if self._queue or self._closed_page or self._pending is not p:
            return  # the user acted again meanwhile: that action's pre-state ends this step
        after = self._try_snapshot()
        if after is not None and not self._queue and self._left_page(p, after):
            self.page.wait_for_timeout(LATE_EVENT_MS)  # a later action's report may still be on its way
        if self._queue or self._closed_page or self._pending is not p:
            # the user acted again while the page was pictured (a corrected field, then Sign in at once): the
            # picture may show that action's effect, not this one's - that action's pre-state ends this step
            return
        self._finalize(after=after, end=self._snap_time if after is not None else time.monotonic())

    @staticmethod
    def _left_page(p: _Pending, after: Observation) -> bool:
        """Whether a value-only action (typing, choosing) seems to have left its page: ``after`` is on another
        URL than the one the action was done on - an effect typing rarely has, and a later click often does."""
        if p.event.get("kind") not in ("input", "select", "check", "uncheck"):
            return False
        pre = p.event.get("pre") or {}
        return bool(pre.get("top", True)) and bool(pre.get("url")) and (
            urldefrag(str(pre.get("url")))[0] != urldefrag(after.url)[0])

    def _finalize(self, *, after_pre: Mapping[str, Any] | None = None, after: Observation | None = None,
                  end: float) -> None:
        """Turn the pending action into a step, now that the state after it is known."""
        p = self._pending
        self._pending = None
        if p is None:
            return
        kind = str(p.event["kind"])
        pre = p.event.get("pre") or {}
        decisive: list[str] = []
        if after_pre is not None and pre and bool(after_pre.get("top")) == bool(pre.get("top")):
            decisive = _decisive(pre, str(after_pre.get("url", "")), int(after_pre.get("modals", 0)),
                                 tuple(after_pre.get("titles", ())))
        elif after is not None and pre.get("top", True):
            decisive = _decisive(pre, after.url, len(after.modal_titles), tuple(after.modal_titles))
        evidence = None
        observed: tuple[str, ...] = tuple(decisive)
        complete = False
        if p.before is not None and after is not None:
            full = observed_deltas(p.before, after)
            observed = tuple(dict.fromkeys(decisive + list(full)))
            complete = True
            evidence = StepEvidence(p.before.signature.digest, after.signature.digest, observed,
                                    self._after_state(p.before, after, p.desc, kind, self._own_status(p, end)))
        else:
            evidence = StepEvidence(p.before.signature.digest if p.before is not None else "",
                                    after.signature.digest if after is not None else "", observed)
        wrote = kind != "input" and any(p.t - 0.05 <= rt <= end for rt, _ in self._requests)
        step, removed = self.builder.build(p.event, p.desc, evidence=evidence, observed=observed,
                                           reliable=complete or bool(decisive),
                                           wrote=wrote, t=p.t)
        for idx in removed:
            self.spool.remove(idx)
            self.on_event(StepRemoved(idx))
        crop = p.crop
        if crop:
            step = replace(step, target=step.target.with_(crop=f"{self.flow_name}.crops/{step.id}.png"))
        self.spool.add(step, crop)
        dup = same_named(p.desc, p.before.candidates) if p.before is not None else 0
        self.on_event(StepRecorded(self.builder.count - 1, step, crop, dup))
        while self._after_next:  # checks that something went away after this action
            self._add_check(self._after_next.pop(0))

    def _own_status(self, p: _Pending, end: float) -> int | None:
        """The status of the step's own request(s) sent from the action to ``end``
        (:func:`core.act.landing.own_status`; same origin as the page acted on)."""
        page = p.before.url if p.before is not None else str((p.event.get("pre") or {}).get("url", ""))
        seen = [RequestSeen(h[0], h[1], h[2], h[3], False, h[4]) for h in list(self._hops)
                if p.t - 0.05 <= h[0] <= end]
        return own_status(seen, origin_of(page or self.base_url))

    def _items(self, obs: Observation) -> dict[str, int] | None:
        return next((c for o, c in self._counts if o is obs), None)

    def _list_change(self, before: Observation, after: Observation) -> tuple[str, int]:
        """``(kind, delta)`` when the step added or removed one item of one kind of list on the same page
        (``("li", 1)``); ``("", 0)`` when no list changed by one, or several kinds changed differently."""
        if urldefrag(before.url)[0] != urldefrag(after.url)[0]:
            return "", 0
        a, b = self._items(before), self._items(after)
        if a is None or b is None:
            return "", 0
        deltas = {k: int(b.get(k, 0)) - int(a.get(k, 0)) for k in LIST_KINDS}
        moved = [k for k in LIST_KINDS if deltas[k]]
        if not moved or len({deltas[k] for k in moved}) != 1 or abs(deltas[moved[0]]) != 1:
            return "", 0
        return moved[0], deltas[moved[0]]

    def _after_state(self, before: Observation, after: Observation, desc: ElementDescriptor,
                     kind: str, status: int | None = None) -> AfterState | None:
        """Where the step landed (issue 9 item 3): URL pattern, title, main heading, dialog, changed field,
        the status of its own request, the list it grew or shrank by one; parameter and secret values
        generalised to ``{name}``, the heading masked like all text."""
        heading = main_heading(self.driver)
        if heading is None:
            return None
        target = next((c for c in before.candidates if c.descriptor.css_path == desc.css_path
                       and c.descriptor.frame == desc.frame), None) if desc.css_path else None
        names = {**self.builder.known_params, **{k: v for k, v in self.secrets.items() if v}}
        got = observed_after(before, after, heading=self.driver.redactor.text(heading), params=names, target=target,
                             base=base_path(self.base_url))  # relative: the flow runs under another prefix
        if self._draft is not None or spec(kind).read_only:
            # typing already under way belongs to the next step, and a scroll or hover changes no field
            got = replace(got, field_changed="", field_appeared="")
        elif spec(kind).expected != "value":
            # only a value action (fill, choose, check) vouches for the field it changed: the before snapshot
            # of a click or key press may predate the previous step's value reaching the page, which would
            # pin that field on this step (an editor that appeared, kind 15, stays)
            got = replace(got, field_changed="")
        if not spec(kind).read_only:
            got = replace(got, response_status=status)
        if not spec(kind).read_only and spec(kind).expected != "value":  # a click or key press that adds or removes
            list_kind, delta = self._list_change(before, after)
            got = replace(got, list_kind=list_kind, list_delta=delta)
        else:
            got = replace(got, target_state="")  # a check action's own state is its expected effect already
        reg_a = next((r for o, r in self._regions if o is after), None)
        if reg_a is not None:  # masked like the heading: a name may hold a typed value
            got = replace(got, landmark=whole_token_sub(self.driver.redactor.text(reg_a.landmark), names))
            reg_b = next((r for o, r in self._regions if o is before), None)
            same = urldefrag(before.url)[0] == urldefrag(after.url)[0]
            if reg_b is not None and same and not spec(kind).read_only and spec(kind).expected != "value":
                inner = changed_regions(reg_b, reg_a)[0][:3]
                got = replace(got, region=REGION_SEP.join(
                    whole_token_sub(self.driver.redactor.text(k), names).replace(REGION_SEP, " / ") for k in inner))
        return got

    def _settle(self, t: float, before: Observation | None, *, value_only: bool = False) -> None:
        """Let an action take effect: at least 150 ms, then quiet (P6), and any page load it started (S7).

        ``value_only`` actions (typing, choosing) change no DOM: quiet is enough.
        """
        waited_ms = (time.monotonic() - t) * 1000.0
        if waited_ms < MIN_EFFECT_MS:
            self.page.wait_for_timeout(int(MIN_EFFECT_MS - waited_ms))
        start = None if value_only else {"mutations": self._last_mutations, "url": before.url if before else None}
        deadline = time.monotonic() + 30.0
        while True:
            self.driver.wait_settled(start=start)
            if not self._navigations or time.monotonic() > deadline or self._closed_page or self._queue:
                return
            self.page.wait_for_timeout(50)

    def _pick(self, frame: Any, event: dict[str, Any]) -> None:
        """An element or text picked in inspect mode: offer the checks of that element (P7).

        Selected text is checked on the page (``text_appears``, or
        ``text_absent`` after the next action).  A picked element is checked
        itself: a control through its descriptor (the locator resolves it),
        any other element (a status line, a cell) and a check that it went
        away through its selector.
        """
        self._pick_seq += 1
        pid = self._pick_seq
        if event["kind"] == "pick_text":
            text = self.driver.redactor.text(str(event.get("text", "")))
            pick = ElementPicked(pid, ElementDescriptor(), text=text, suggested=("text_appears", "text_absent"),
                                 page_text=True)
        else:
            desc = self._descriptor(frame, event.get("desc"))
            text = self.driver.redactor.text(str(event.get("text", "")))
            value = self.driver.redactor.text(str(event.get("value", "")))
            raw = event.get("desc") or {}
            if raw.get("is_password"):
                value = ""
            selector = str(event.get("selector", ""))
            interactive = bool(event.get("interactive", True))
            if selector and not interactive and frame == self.page.main_frame:
                selector = self._by_meaning(frame, desc, text) or selector
            if not interactive and not selector:
                # plain text in a frame of another origin: replay finds it by its text on the page (P7)
                pick = ElementPicked(pid, ElementDescriptor(), text=text,
                                     suggested=("text_appears", "text_absent") if text else (), page_text=True)
            else:
                suggested = suggested_assertions(desc.role, text, interactive=interactive,
                                                 count=int(event.get("count", 1)))
                if not event.get("whole", True):  # longer than what travels: its text can only be contained
                    suggested = tuple(k for k in suggested if k != "text_equals")
                if not selector:
                    suggested = tuple(k for k in suggested if k != "hidden")
                pick = ElementPicked(pid, desc, text=text, value=value, enabled=bool(event.get("enabled", True)),
                                     visible=bool(event.get("visible", True)), count=int(event.get("count", 1)),
                                     count_selector=str(event.get("count_selector", "")), suggested=suggested,
                                     selector=selector if not interactive or "hidden" in suggested else "")
                self._picks[pid] = {"pick": pick, "interactive": interactive}
        self._picks.setdefault(pid, {"pick": pick, "interactive": False})
        while len(self._picks) > 50:
            del self._picks[min(self._picks)]
        self.on_event(pick)
        if self.auto_assert and pick.suggested:
            # Shift held while picking: the check that it goes away (offered among the suggestions)
            gone = [k for k in pick.suggested if k in DISAPPEARANCE_KINDS] if event.get("gone") else []
            kind = gone[0] if gone else pick.suggested[0]
            self.add_assertion(pid, kind, self.default_expected(pick, kind))

    @staticmethod
    def _by_meaning(frame: Any, desc: ElementDescriptor, text: str) -> str:
        """A picked element that is no control (a table cell, a heading, a status line) by its meaning, as
        Playwright's codegen finds it: ``internal:role=ROLE[name="NAME"s]`` when exactly one element of the page
        has its role and exact accessible name, by Playwright's own reading, and shows the text picked; "" when
        not (no role or name, several alike, another text: its position's CSS path stays).  A check found this
        way holds wherever the row or line moved (a table with more rows, a banner above it)."""
        role, name = desc.role, " ".join(desc.name.split())
        if not role or role in ("generic", "none", "presentation") or not name or len(name) > 200:
            return ""
        selector = f"internal:role={role}[name={json.dumps(name, ensure_ascii=False)}s]"
        try:
            loc = frame.locator(selector)
            if loc.count() != 1:
                return ""
            shown = " ".join(str(loc.first.inner_text(timeout=PICK_READ_MS)).split())
        except Exception:  # noqa: BLE001 - a role Playwright does not know, a page navigating: the CSS path
            return ""
        return selector if shown and shown == " ".join(text.split()) else ""

    @staticmethod
    def default_expected(pick: ElementPicked, kind: str) -> str:
        """The expected text an assertion of ``kind`` gets from a pick (what the page shows now)."""
        if kind in ("text_equals", "text_contains", "text_appears", "text_absent"):
            return pick.text
        if kind == "value":
            return pick.value
        if kind == "count":
            return str(pick.count)
        return ""

    def add_assertion(self, pick_id: int, kind: str, expected: str) -> Step | None:
        """Add an assertion step about pick ``pick_id``; returns it (None for an unknown pick).

        The check goes after the action before it.  A check that something
        went away (``hidden``, ``text_absent``) is added once the user's next
        action is recorded, after it (what was picked is on the page when
        picked); when no action follows, at the end of the recording.

        Raises
        ------
        ValueError
            For an unknown assertion kind.
        """
        entry = self._picks.get(pick_id)
        if entry is None:
            self.on_event(RecorderError(f"no picked element #{pick_id} to assert on"))
            return None
        pick: ElementPicked = entry["pick"]
        p = self._pending
        if p is not None and not self._closed_page:  # the action before the check comes first
            self._settle(p.t, p.before)
            after = self._try_snapshot()
            self._finalize(after=after, end=time.monotonic())
        elif p is not None:
            self._finalize(end=time.monotonic())
        declared = self.builder.secrets.for_value(expected)
        expected = placeholder(declared) if declared else escape(expected)  # page text is literal
        # a control is found by its meaning (R2); anything else, and a control that must be gone, by its selector
        selector = pick.selector if (not entry.get("interactive", True) or kind == "hidden") else ""
        step = assertion_step("", kind, expected, pick.descriptor, count_selector=pick.count_selector,
                              selector=selector)
        if kind in DISAPPEARANCE_KINDS:
            # what was picked is on the page now: it is checked once the user's next action is done
            self._after_next.append(step)
            return step
        return self._add_check(step)

    def _add_check(self, step: Step) -> Step:
        """Append an assertion step to the recording (journal, crop, event)."""
        step = self.builder.add(step)
        crop = b""
        if self._snap is not None and step.target.bbox is not None:
            crop = crop_png(self._snap.screenshot_png, step.target.bbox, self._snap.device_pixel_ratio)
            if crop:
                step = replace(step, target=step.target.with_(crop=f"{self.flow_name}.crops/{step.id}.png"))
        self.spool.add(step, crop)
        self.on_event(StepRecorded(self.builder.count - 1, step, crop))
        return step
