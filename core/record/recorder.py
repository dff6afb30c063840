"""Record a flow by demonstration: a Chromium the user (or a script) drives, and a listener in every frame.

One :class:`Recorder` owns one Chromium (a persistent profile, so that a
script connecting over CDP sees the recorded page) and must be used from
one thread only (STACK.md).  The in-page listener (``recorder_lib.js``)
reports each user action through an exposed binding; the recorder turns it
into a step with the element's full descriptor, a PNG crop, an anchor, the
light signatures before and after (S2) and the observed delta (S5).  Steps
are spooled to disk as they are recorded, so memory stays flat over long
sessions and a crash loses nothing already recorded.
"""
from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
from collections import deque
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Mapping
from urllib.parse import urldefrag

from core.act.expect import observed_deltas
from core.domain import (
    Anchor, BBox, BrowserSettings, ElementDescriptor, Flow, Observation, Step, StepEvidence, WaitSettings,
)
from core.perception.browser import CHROMIUM_ARGS, BrowserLaunchError, find_chromium
from core.perception.driver import DEFAULT_WAITS, NavigationError, PlaywrightDriver
from core.project.loader import flow_from_mapping, flow_to_mapping
from core.project.params import is_placeholder, placeholder, placeholder_name
from core.secrets import Redactor

from .events import (
    AddAssertion, ElementPicked, ForwardClick, ForwardKey, ForwardMove, ForwardScroll, ForwardType, LiveFrame, RecorderCommand,
    RecorderError, RecorderEvent, RecordingStarted, RecordingStopped, SetInspect, StepRecorded, StepRemoved,
    StopRecording,
)
from .steps import SUGGESTED_ASSERTIONS, SecretPolicy, StepBuilder, assertion_step, relative_url

__all__ = ["Recorder", "RecordingDriver", "RecordingSpool", "RECORDER_LIB", "crop_png", "CdpPortInUse", "check_cdp_port",
           "free_cdp_port"]

RECORDER_LIB = (Path(__file__).with_name("recorder_lib.js")).read_text(encoding="utf-8")
#: A main-frame navigation request starting this long (s) after the last user action is the user's
#: own (address bar, reload), not an effect of that action.
NAVIGATION_GRACE_S = 2.0
#: Wait at least this long (ms) after an action before judging the page settled.
MIN_EFFECT_MS = 150
#: Margin around the element in its crop, CSS px.
CROP_MARGIN_PX = 4


def crop_png(png: bytes, box: BBox, dpr: float, *, margin: float = CROP_MARGIN_PX) -> bytes:
    """Crop ``box`` (CSS px, viewport coordinates) plus ``margin`` out of a screenshot (device px).

    Returns ``b""`` when the box lies outside the screenshot.
    """
    import io

    from PIL import Image

    if not png or box.width <= 0 or box.height <= 0:
        return b""
    with Image.open(io.BytesIO(png)) as im:
        left = max(0, int((box.x - margin) * dpr))
        top = max(0, int((box.y - margin) * dpr))
        right = min(im.width, int((box.x + box.width + margin) * dpr + 0.999))
        bottom = min(im.height, int((box.y + box.height + margin) * dpr + 0.999))
        if right - left < 2 or bottom - top < 2:
            return b""
        out = io.BytesIO()
        im.crop((left, top, right, bottom)).save(out, format="PNG", optimize=True)
        return out.getvalue()


class CdpPortInUse(BrowserLaunchError):
    """The CDP port asked for is taken (Chromium would quietly listen elsewhere)."""


def check_cdp_port(port: int) -> None:
    """Raise :class:`CdpPortInUse` unless ``port`` is free on 127.0.0.1 and on ::1.

    Chromium falls back to ``[::1]`` when 127.0.0.1 is taken, so a script
    connecting to ``127.0.0.1:<port>`` would reach someone else.
    """
    import socket

    for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        try:
            sock = socket.socket(family, socket.SOCK_STREAM)
        except OSError:
            continue  # no IPv6 on this machine
        try:
            # like Chromium: connections of an earlier session in TIME_WAIT do not make the port busy
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, port))
        except OSError as exc:
            if family == socket.AF_INET6 and exc.errno == 99:  # EADDRNOTAVAIL: ::1 not configured
                continue
            raise CdpPortInUse(f"CDP port {port} is in use on {host}; choose another --cdp-port") from None
        finally:
            sock.close()


def free_cdp_port() -> int:
    """A TCP port free on 127.0.0.1 now, for a CDP endpoint (the OS picks it)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RecordingDriver(PlaywrightDriver):
    """A :class:`PlaywrightDriver` on a persistent profile, optionally with a CDP endpoint on 127.0.0.1.

    Parameters
    ----------
    cdp_port : int | None
        Open Chromium's remote-debugging port (bound to 127.0.0.1) so that
        scripts can drive the recorded page with ``connect_over_cdp``.
    """

    def __init__(self, settings: BrowserSettings, *, base_url: str, redactor: Redactor | None = None,
                 headless: bool | None = None, cdp_port: int | None = None, profile_parent: Path | None = None,
                 waits: WaitSettings = DEFAULT_WAITS) -> None:
        super().__init__(settings, base_url=base_url, redactor=redactor, headless=headless, waits=waits)
        self.cdp_port = cdp_port
        self.profile_parent = profile_parent
        self._profile = ""

    @property
    def cdp_endpoint(self) -> str:
        """``"http://127.0.0.1:<port>"`` or ``""``."""
        return f"http://127.0.0.1:{self.cdp_port}" if self.cdp_port else ""

    def open(self) -> None:
        """Start Chromium with a fresh temporary profile and the page library in every frame.

        Raises
        ------
        BrowserLaunchError
            When Chromium is missing or fails to start (e.g. the CDP port is taken).
        """
        from playwright.sync_api import Error as PwError
        from playwright.sync_api import sync_playwright

        exe = find_chromium(self.settings.executable_path)
        args = list(CHROMIUM_ARGS)
        if self.cdp_port:
            check_cdp_port(int(self.cdp_port))
            args += [f"--remote-debugging-port={int(self.cdp_port)}", "--remote-debugging-address=127.0.0.1"]
        if self.profile_parent is not None:
            Path(self.profile_parent).mkdir(parents=True, exist_ok=True)
        self._profile = tempfile.mkdtemp(prefix="steadyhand-rec-",
                                         dir=str(self.profile_parent) if self.profile_parent else None)
        self._pw = sync_playwright().start()
        try:
            context = self._pw.chromium.launch_persistent_context(
                self._profile, executable_path=exe, headless=self.headless, args=args, **self._context_options())
        except PwError as exc:
            shutil.rmtree(self._profile, ignore_errors=True)
            raise self._launch_failed(exc, exe) from None
        self._use_context(context)

    def close(self) -> None:
        """Close Chromium and remove the temporary profile; never raises."""
        super().close()
        if self._profile:
            shutil.rmtree(self._profile, ignore_errors=True)
            self._profile = ""


class RecordingSpool:
    """Append-only journal of recorded steps and their crops on disk.

    ``<folder>/steps.jsonl`` holds one JSON object per line: ``{"op": "step",
    "step": {...}}`` or ``{"op": "remove", "index": n}``; crops are
    ``<folder>/<step id>.png``.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._fh = open(self.folder / "steps.jsonl", "a", encoding="utf-8")

    def add(self, step: Step, crop: bytes) -> None:
        """Append ``step`` (and write its crop)."""
        if crop:
            (self.folder / f"{step.id}.png").write_bytes(crop)
        else:
            (self.folder / f"{step.id}.png").unlink(missing_ok=True)
        data = flow_to_mapping(Flow("spool", "/", (step,)))["steps"][0]
        self._fh.write(json.dumps({"op": "step", "step": data}) + "\n")
        self._fh.flush()

    def write_meta(self, meta: Mapping[str, Any]) -> None:
        """Write ``meta.json`` (flow name, start URL): enough to rebuild the flow from the journal."""
        (self.folder / "meta.json").write_text(json.dumps(dict(meta)), encoding="utf-8")

    def read_meta(self) -> dict[str, Any]:
        """``meta.json`` as written by :meth:`write_meta` (``{}`` when missing or unreadable)."""
        try:
            return dict(json.loads((self.folder / "meta.json").read_text(encoding="utf-8")))
        except (OSError, ValueError):
            return {}

    def remove(self, index: int) -> None:
        """Record that step ``index`` (0-based) was withdrawn."""
        self._fh.write(json.dumps({"op": "remove", "index": index}) + "\n")
        self._fh.flush()

    def read(self) -> tuple[list[Step], dict[str, bytes]]:
        """All steps in order and their crops by step id."""
        self._fh.flush()
        raw: list[dict[str, Any]] = []
        with open(self.folder / "steps.jsonl", encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    continue
                rec = json.loads(line)
                if rec["op"] == "step":
                    raw.append(rec["step"])
                elif rec["op"] == "remove" and 0 <= rec["index"] < len(raw):
                    del raw[rec["index"]]
        flow = flow_from_mapping({"name": "spool", "steps": raw}, self.folder / "steps.jsonl")
        crops = {}
        for s in flow.steps:
            p = self.folder / f"{s.id}.png"
            if p.is_file():
                crops[s.id] = p.read_bytes()
        return list(flow.steps), crops

    def close(self, *, delete: bool = False) -> None:
        """Close the journal; remove the folder when ``delete``."""
        try:
            self._fh.close()
        except Exception:
            pass
        if delete:
            shutil.rmtree(self.folder, ignore_errors=True)


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


class Recorder:
    """Records one flow. Use from one thread: ``start()``, then ``pump()`` in a loop, then ``stop()``.

    Parameters
    ----------
    flow_name : str
        Name of the flow being recorded.
    settings : BrowserSettings
        The project's browser settings (viewport, device scale factor...;
        ``Project.engine_settings.browser``).
    base_url : str
        The site's base URL; URLs are stored relative to it.
    start_url : str
        Where recording starts (absolute, or relative to ``base_url``).
    spool_dir : Path
        Folder for the step journal and crops (removed after a successful save).
    on_event : Callable[[RecorderEvent], None]
        Receives every event, on the recording thread.
    headless : bool | None
        Run Chromium headless (None: the project's setting).
    cdp_port : int | None
        Open a CDP endpoint on 127.0.0.1 at this port.
    secrets : Mapping[str, str]
        Declared secrets, name -> value: typed values equal to one become
        ``{name}``, and are masked in screenshots and text.
    live_frames : bool
        Emit :class:`LiveFrame` events (the studio's live view).
    auto_assert : bool
        In inspect mode add the first suggested assertion at once (no
        front end to ask; the CLI).
    params : Mapping[str, str] | None
        The project's parameters: a typed value equal to one becomes ``{name}``.
    waits : WaitSettings
        The project's waits (``Project.engine_settings.waits``): how long
        the page must be quiet after an action (P6, S7).
    """

    def __init__(self, *, flow_name: str, settings: BrowserSettings, base_url: str, start_url: str, spool_dir: Path,
                 on_event: Callable[[RecorderEvent], None] = lambda e: None, headless: bool | None = None,
                 cdp_port: int | None = None, secrets: Mapping[str, str] | None = None, live_frames: bool = False,
                 auto_assert: bool = False, params: Mapping[str, str] | None = None,
                 waits: WaitSettings = DEFAULT_WAITS) -> None:
        self.flow_name = flow_name
        self.base_url = base_url.rstrip("/")
        self.start_url = start_url
        self.on_event = on_event
        self.live_frames = live_frames
        self.auto_assert = auto_assert
        self.secrets = dict(secrets or {})
        values = [v for v in self.secrets.values() if v]
        self.driver = RecordingDriver(settings, base_url=base_url, redactor=Redactor(values), headless=headless,
                                      cdp_port=cdp_port, profile_parent=Path(spool_dir), waits=waits)
        self.driver.secret_values = values
        self.builder = StepBuilder(base_url=self.base_url, secrets=SecretPolicy(self.secrets), known_params=params)
        self.spool = RecordingSpool(spool_dir)
        self._queue: deque[tuple[Any, dict[str, Any], float]] = deque()
        self._requests: deque[tuple[float, str]] = deque(maxlen=200)
        self._navigations: set[str] = set()  # CDP request ids of main-frame navigations in flight
        self._main_frame_id = ""
        self._frames_to_watch: list[Any] = []  # iframes that navigated: out-of-process ones get a CDP session
        self._frame_sessions: dict[Any, Any] = {}
        self._snap: Observation | None = None
        self._snap_time = 0.0
        self._last_action = 0.0
        self._picks: dict[int, dict[str, Any]] = {}
        self._pick_seq = 0
        self._closed_page = False
        self._stopped: RecordingStopped | None = None
        self._last_mutations: int | None = None
        self._last_live = 0.0
        self._last_event_t = 0.0
        self._pending: _Pending | None = None
        self._draft: tuple[Any, dict[str, Any], float] | None = None
        self.inspect = False
        #: Events of kinds the recorder does not turn into steps (counted, for diagnostics).
        self.ignored = 0

    # --- life cycle -------------------------------------------------------------------
    def start(self) -> None:
        """Launch Chromium, install the listener, open the start URL and take the first snapshot.

        Raises
        ------
        BrowserLaunchError, NavigationError
        """
        self.driver.open()
        ctx = self.driver._context
        ctx.add_init_script(RECORDER_LIB)
        ctx.expose_binding("__steadyhandRecord", self._on_binding)
        page = self.driver.page
        self._watch_network(page)
        page.on("framenavigated", self._on_navigated)
        page.on("framedetached", lambda f: self._frame_sessions.pop(f, None))
        page.on("close", lambda *_: setattr(self, "_closed_page", True))
        self._last_action = time.monotonic() + 3600.0  # the start page's own navigations are not steps
        self.driver.goto(self.start_url)
        self._last_action = time.monotonic()
        self._snapshot()
        self.start_url = self.driver.page.url  # where the user began (after any redirect)
        self.spool.write_meta({"flow": self.flow_name,
                               "start_url": relative_url(self._absolute(self.start_url), self.base_url)})
        self.on_event(RecordingStarted(self.flow_name, self.driver.page.url, self.driver.cdp_endpoint,
                                       bool(self.driver.headless)))

    @property
    def page_closed(self) -> bool:
        """True once the recorded page was closed (by the user or a script)."""
        return self._closed_page

    def pump(self, wait_ms: int = 50) -> bool:
        """Let Playwright deliver events for up to ``wait_ms`` and turn pending ones into steps.

        Returns False once the page is closed.
        """
        if self._closed_page:
            return False
        try:
            self.driver.page.wait_for_timeout(wait_ms)
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
        page = self.driver.page
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
        for frame in list(self.driver.page.frames):
            try:
                frame.evaluate("on => window.__steadyhandRec && window.__steadyhandRec.setInspect(on)", self.inspect)
            except Exception:
                pass

    def stop(self, reason: str = "stopped") -> RecordingStopped:
        """Flush typing still pending in the page, close Chromium and return every recorded step.

        Safe to call more than once and after the page or browser died.
        """
        if self._stopped is not None:
            return self._stopped
        if not self._closed_page:
            for frame in list(self.driver.page.frames):
                try:
                    frame.evaluate("() => window.__steadyhandRec && window.__steadyhandRec.flush()")
                except Exception:
                    pass
            try:
                self.pump(60)
                if self._pending is not None and not self._closed_page:
                    self._settle(self._pending.t, self._pending.before)
                    self._snapshot()
                    self._finalize(after=self._snap, end=self._snap_time)
            except Exception:
                pass
        # what the page reported but was not turned into steps yet (the page may be gone by now)
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
        self.driver.close()
        steps, crops = self.spool.read()
        flow = Flow(name=self.flow_name, start_url=relative_url(self._absolute(self.start_url), self.base_url),
                    steps=tuple(steps), params=dict(self.builder.params), secrets=tuple(self.builder.flow_secrets),
                    description="Recorded by demonstration.")
        files = {}
        used = {s.action.value for s in steps} | set(flow.params.values())
        for f in sorted((self.spool.folder / "files").glob("*")) if (self.spool.folder / "files").is_dir() else []:
            rel = f"{self.flow_name}.files/{f.name}"
            if rel in used:
                files[rel] = f.read_bytes()
        self._stopped = RecordingStopped(flow, crops, reason, files)
        self.on_event(self._stopped)
        return self._stopped

    def discard_spool(self) -> None:
        """Remove the journal once the flow was saved."""
        self.spool.close(delete=True)

    # --- callbacks (run inside Playwright's dispatch: only queue) -----------------------
    def _on_binding(self, source: Mapping[str, Any], payload: Any) -> None:
        if isinstance(payload, dict) and "kind" in payload:
            now = time.monotonic()
            if payload["kind"] == "draft":  # typing not committed yet: kept in case the page goes away
                self._draft = (source.get("frame"), {**payload, "kind": "input"}, now)
                return
            self._draft = None  # the page commits typing before reporting anything else
            if payload["kind"] not in ("mode", "pick", "pick_text"):
                self._last_action = now  # before the page loads that this action may start
            self._queue.append((source.get("frame"), payload, now))

    def _watch_network(self, page: Any) -> None:
        """Follow the page's requests through a CDP session of its own: writes (S6) and main-frame navigations.

        Not Playwright's ``request`` events: subscribing to them makes Playwright keep every Request and
        Response object of the page alive (in this process and in its driver) until 10,000 of each have
        piled up, ~14 KB per request here.  CDP events are plain dicts, dropped once handled.  An
        out-of-process (cross-site) iframe has a session of its own once it has navigated (:meth:`pump`).
        """
        cdp = self._network_session(page)
        self._main_frame_id = str(cdp.send("Page.getFrameTree")["frameTree"]["frame"]["id"])

    def _network_session(self, page_or_frame: Any) -> Any:
        cdp = self.driver._context.new_cdp_session(page_or_frame)
        cdp.on("Network.requestWillBeSent", self._on_request)
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

    def _on_request_done(self, event: Mapping[str, Any]) -> None:
        self._navigations.discard(event.get("requestId"))

    def _on_navigated(self, frame: Any) -> None:
        try:
            if frame == self.driver.page.main_frame:
                self._navigations.clear()  # committed: the page is loading now
            else:
                self._frames_to_watch.append(frame)
        except Exception:
            pass

    # --- processing -------------------------------------------------------------------
    def _absolute(self, url: str) -> str:
        return self.driver.absolute(url)

    def _snapshot(self) -> Observation:
        obs = self.driver.observe(screenshot=True, neighbours=False)
        self._snap, self._snap_time = obs, time.monotonic()
        probe = self.driver.probe() or {}
        self._last_mutations = probe.get("mutations")
        if self.live_frames:
            self._last_live = self._snap_time
            self.on_event(LiveFrame(obs.screenshot_png, obs.device_pixel_ratio, obs.url, obs.candidates))
        return obs

    def _try_snapshot(self) -> Observation | None:
        """A snapshot, or None when the page cannot be captured now (mid-navigation, closing).

        A step is never lost for want of a picture: it is then recorded without crop or after-state.
        """
        for attempt in range(2):
            try:
                return self._snapshot()
            except Exception:
                if self._closed_page or attempt:
                    return None
                try:
                    self.driver.page.wait_for_load_state("domcontentloaded", timeout=5000)
                except Exception:
                    return None
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
        vp = self.driver.page.viewport_size or {"width": 1280, "height": 800}
        anchor = item.pop("anchor", None)
        desc = ElementDescriptor.from_mapping({**item, "bbox": None, "viewport": None, "anchor": None}).with_(
            bbox=BBox(x + offset[0], y + offset[1], w, h), viewport=(int(vp["width"]), int(vp["height"])),
            device_pixel_ratio=float(self.driver.settings.device_scale_factor),
            frame=self.driver._frame_label(frame) if frame is not None else "")
        if anchor and anchor.get("text"):
            desc = desc.with_(anchor=Anchor(self.driver.redactor.text(str(anchor["text"])), str(anchor.get("role", "")),
                                            float(anchor.get("dx", 0.0)), float(anchor.get("dy", 0.0))))
        return desc

    def _process(self, frame: Any, event: dict[str, Any], t: float) -> None:
        kind = event.get("kind")
        if kind == "mode":
            self.inspect = bool(event.get("inspect"))
            return
        if kind in ("pick", "pick_text"):
            self._pick(frame, event)
            return
        if kind not in ("click", "dblclick", "input", "select", "check", "uncheck", "hover", "press", "scroll",
                        "upload", "navigate"):
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
        if self._pending is not None:
            self._finalize(after_pre=event.get("pre"), end=t)
        before = snap if snap is not None and self._snap_time <= t else None
        self._pending = _Pending(event, desc, crop, t, before)
        self._last_event_t = t

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

        stored = []
        for name, data in zip(event.get("files", ()), event.get("data", ())):
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
        self._settle(p.t, p.before, value_only=p.event.get("kind") in ("input", "select", "check", "uncheck"))
        if self._queue or self._closed_page or self._pending is not p:
            return  # the user acted again meanwhile: that action's pre-state ends this step
        after = self._try_snapshot()
        self._finalize(after=after, end=self._snap_time if after is not None else time.monotonic())

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
            evidence = StepEvidence(p.before.signature.digest, after.signature.digest, observed)
        else:
            evidence = StepEvidence(p.before.signature.digest if p.before is not None else "",
                                    after.signature.digest if after is not None else "", observed)
        wrote = kind != "input" and any(p.t - 0.05 <= rt <= end for rt, _ in self._requests)
        step, removed = self.builder.build(p.event, p.desc, evidence=evidence, observed=observed,
                                           reliable=complete or bool(decisive),
                                           wrote=wrote, t=p.t)
        if not complete and step.expect == "none":
            step = replace(step, expect="auto")  # "nothing changed" needs both snapshots to be said
        for idx in removed:
            self.spool.remove(idx)
            self.on_event(StepRemoved(idx))
        crop = p.crop
        if crop:
            step = replace(step, target=step.target.with_(crop=f"{self.flow_name}.crops/{step.id}.png"))
        self.spool.add(step, crop)
        self.on_event(StepRecorded(self.builder.count - 1, step, crop))

    def _settle(self, t: float, before: Observation | None, *, value_only: bool = False) -> None:
        """Let an action take effect: at least 150 ms, then quiet (P6), and any page load it started (S7).

        ``value_only`` actions (typing, choosing) change no DOM: quiet is enough.
        """
        waited_ms = (time.monotonic() - t) * 1000.0
        if waited_ms < MIN_EFFECT_MS:
            self.driver.page.wait_for_timeout(int(MIN_EFFECT_MS - waited_ms))
        start = None if value_only else {"mutations": self._last_mutations, "url": before.url if before else None}
        deadline = time.monotonic() + 30.0
        while True:
            self.driver.wait_settled(start=start)
            if not self._navigations or time.monotonic() > deadline or self._closed_page or self._queue:
                return
            self.driver.page.wait_for_timeout(50)

    def _pick(self, frame: Any, event: dict[str, Any]) -> None:
        self._pick_seq += 1
        pid = self._pick_seq
        if event["kind"] == "pick_text":
            text = self.driver.redactor.text(str(event.get("text", "")))
            pick = ElementPicked(pid, ElementDescriptor(), text=text, suggested=("text_appears",), page_text=True)
        else:
            desc = self._descriptor(frame, event.get("desc"))
            text = self.driver.redactor.text(str(event.get("text", "")))
            value = self.driver.redactor.text(str(event.get("value", "")))
            raw = event.get("desc") or {}
            if raw.get("is_password"):
                value = ""
            if not event.get("interactive", True):
                # plain text (a status line, a cell): replay finds it by its text on the page (P7)
                pick = ElementPicked(pid, ElementDescriptor(), text=text, suggested=("text_appears",) if text else (),
                                     page_text=True)
                self._picks[pid] = {"pick": pick}
                self.on_event(pick)
                if self.auto_assert and pick.suggested:
                    self.add_assertion(pid, "text_appears", text)
                return
            suggested = SUGGESTED_ASSERTIONS.get(desc.role, ("text_equals", "visible", "text_contains")
                                                 if text else ("visible",))
            if int(event.get("count", 1)) > 1:
                suggested = tuple(suggested) + ("count",)
            pick = ElementPicked(pid, desc, text=text, value=value, enabled=bool(event.get("enabled", True)),
                                 visible=bool(event.get("visible", True)), count=int(event.get("count", 1)),
                                 count_selector=str(event.get("count_selector", "")), suggested=tuple(suggested))
        self._picks[pid] = {"pick": pick}
        while len(self._picks) > 50:
            del self._picks[min(self._picks)]
        self.on_event(pick)
        if self.auto_assert and pick.suggested:
            kind = pick.suggested[0]
            self.add_assertion(pid, kind, self.default_expected(pick, kind))

    @staticmethod
    def default_expected(pick: ElementPicked, kind: str) -> str:
        """The expected text an assertion of ``kind`` gets from a pick (what the page shows now)."""
        if kind in ("text_equals", "text_contains", "text_appears"):
            return pick.text
        if kind == "value":
            return pick.value
        if kind == "count":
            return str(pick.count)
        return ""

    def add_assertion(self, pick_id: int, kind: str, expected: str) -> Step | None:
        """Add an assertion step about pick ``pick_id``; returns it (None for an unknown pick).

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
        expected = placeholder(declared) if declared else expected
        step = assertion_step(self.builder.next_id(), kind, expected, pick.descriptor,
                              count_selector=pick.count_selector)
        step = self.builder.add(step)
        crop = b""
        if self._snap is not None and step.target.bbox is not None:
            crop = crop_png(self._snap.screenshot_png, step.target.bbox, self._snap.device_pixel_ratio)
            if crop:
                step = replace(step, target=step.target.with_(crop=f"{self.flow_name}.crops/{step.id}.png"))
        self.spool.add(step, crop)
        self.on_event(StepRecorded(self.builder.count - 1, step, crop))
        return step


def recover_journal(folder: Path) -> tuple[Flow, dict[str, bytes], dict[str, bytes]] | None:
    """Rebuild a recording from a journal left by a process that was killed.

    Returns ``(flow, crops, files)`` or None when the folder holds no step.
    Secret parameters are the ``{name}`` placeholders of password fields.

    Raises
    ------
    core.project.ProjectError
        When the journal is corrupt.
    """
    spool = RecordingSpool(folder)
    try:
        steps, crops = spool.read()
        meta = spool.read_meta()
    finally:
        spool.close()
    if not steps:
        return None
    name = str(meta.get("flow") or folder.name.rsplit("-", 2)[0])
    secrets = sorted({placeholder_name(s.action.value) for s in steps
                      if s.action.kind == "input" and s.target.type == "password" and is_placeholder(s.action.value)})
    files = {}
    for f in sorted((folder / "files").glob("*")) if (folder / "files").is_dir() else []:
        files[f"{name}.files/{f.name}"] = f.read_bytes()
    flow = Flow(name=name, start_url=str(meta.get("start_url") or "/"), steps=tuple(steps), secrets=tuple(secrets),
                description="Recorded by demonstration (recovered from the journal of an interrupted recording).")
    return flow, crops, files


def run_until_stopped(recorder: Recorder, should_stop: Callable[[], bool],
                      commands: Callable[[], list[RecorderCommand]] = lambda: []) -> RecordingStopped:
    """Pump ``recorder`` until ``should_stop()`` or the page closes; returns the stop event.

    ``commands()`` is polled between pumps; a :class:`StopRecording` ends the loop.
    """
    reason = "stopped"
    while True:
        stop_cmd = False
        for cmd in commands():
            if isinstance(cmd, StopRecording):
                stop_cmd = True
                break
            try:
                recorder.handle(cmd)
            except Exception as exc:
                recorder.on_event(RecorderError(f"{type(cmd).__name__} failed: {str(exc).splitlines()[0] if str(exc) else exc!r}"))
        if stop_cmd:
            break
        if should_stop():
            reason = "signal"
            break
        if not recorder.pump(50):
            reason = "signal" if should_stop() else "page closed"
            break
    return recorder.stop(reason)


__all__ += ["run_until_stopped", "recover_journal", "NavigationError"]
