"""Record a flow by demonstration: a Chromium the user (or a script) drives, with a recording listener on it.

One :class:`Recorder` owns one Chromium (a persistent profile, so that a
script connecting over CDP sees the recorded page) and must be used from
one thread only (architecture rule 10).  It manages the browser (launch, CDP endpoint,
profile, the context whose pages - popups too - are listened to) and the
journal's place; listening is the job of a
:class:`~core.record.listener.RecordingListener` attached to that context,
the same listener that attaches to the engine's page when a human takes
over.  Steps are spooled to disk as they are recorded
(:mod:`core.record.journal`), so memory stays flat over long sessions and
a crash loses nothing already recorded.
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Callable, Mapping

from core.act.landing import base_path
from core.domain import BrowserSettings, Flow, Step, WaitSettings
from core.perception.browser import (
    CHROMIUM_ARGS, CdpPortInUse, cdp_args, check_cdp_port, find_chromium,
    free_cdp_port, write_quiet_prefs,
)
from core.perception.driver import DEFAULT_WAITS, NavigationError, PlaywrightDriver
from core.secrets import Redactor

from .events import RecorderCommand, RecorderError, RecorderEvent, RecordingStarted, RecordingStopped, StopRecording
from .journal import RecordingSpool, recover_journal
from .listener import RECORDER_LIB, Recording, RecordingListener, crop_png
from .steps import StepBuilder, relative_url

__all__ = ["Recorder", "RecordingDriver", "RecordingSpool", "RECORDER_LIB", "crop_png", "CdpPortInUse", "check_cdp_port",
           "free_cdp_port"]


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
            check_cdp_port(int(self.cdp_port))  # Chromium would bind [::1] instead: refused before it starts
            args += cdp_args(self.cdp_port)
        if self.profile_parent is not None:
            Path(self.profile_parent).mkdir(parents=True, exist_ok=True)
        self._profile = tempfile.mkdtemp(prefix="steadyhand-rec-",
                                         dir=str(self.profile_parent) if self.profile_parent else None)
        write_quiet_prefs(self._profile)  # no "Save password?" bubble over the recorded page
        self._pw = sync_playwright().start()
        try:
            context = self._pw.chromium.launch_persistent_context(
                self._profile, executable_path=exe, headless=self.headless, args=args, **self._context_options())
        except PwError as exc:
            shutil.rmtree(self._profile, ignore_errors=True)
            raise self._launch_failed(exc, exe) from None
        try:
            self._use_context(context)
            self._check_cdp()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Close Chromium and remove the temporary profile; never raises."""
        super().close()
        if self._profile:
            shutil.rmtree(self._profile, ignore_errors=True)
            self._profile = ""


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
        Where recording starts (absolute, or relative to ``base_url``); saved as the flow's start URL as
        asked, even when the server redirects it (to a login page).
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
        self.params = dict(params or {})
        values = [v for v in self.secrets.values() if v]
        self.driver = RecordingDriver(settings, base_url=base_url, redactor=Redactor(values), headless=headless,
                                      cdp_port=cdp_port, profile_parent=Path(spool_dir), waits=waits)
        self.driver.secret_values = values
        self.spool = RecordingSpool(spool_dir)
        #: The listener on the browser's context (None before :meth:`start`).
        self.listener: RecordingListener | None = None
        self._stopped: RecordingStopped | None = None

    # --- life cycle -------------------------------------------------------------------
    def start(self) -> None:
        """Launch Chromium, open the start URL, attach the listener (it takes the first snapshot).

        Raises
        ------
        BrowserLaunchError, NavigationError
        """
        self.driver.open()
        self.driver.goto(self.start_url)  # the start page's own loads happen before listening: not steps
        self.listener = RecordingListener(
            self.driver._context, driver=self.driver, flow_name=self.flow_name, base_url=self.base_url,
            spool=self.spool, on_event=self.on_event, secrets=self.secrets, params=self.params,
            live_frames=self.live_frames, auto_assert=self.auto_assert)
        self.listener.attach()
        # what the user asked for, not where the server sent them: a protected page redirects to its login,
        # and replaying from the asked URL meets the same redirect before the recorded login steps
        self.spool.write_meta({"flow": self.flow_name, "start_url": self.saved_start_url})
        self.on_event(RecordingStarted(self.flow_name, self.driver.page.url, self.driver.cdp_endpoint,
                                       bool(self.driver.headless), self.saved_start_url))

    @property
    def saved_start_url(self) -> str:
        """The flow's ``start_url``: the URL asked for (never a redirect's target), relative to the base URL
        when it is under it (``"/protected/"``), else absolute."""
        return relative_url(self.driver.absolute(self.start_url), self.base_url)

    @property
    def builder(self) -> StepBuilder | None:
        """The listener's step builder (None before :meth:`start`)."""
        return self.listener.builder if self.listener is not None else None

    @property
    def inspect(self) -> bool:
        """Whether inspect mode is on."""
        return self.listener.inspect if self.listener is not None else False

    @property
    def ignored(self) -> int:
        """Page events of kinds that do not become steps (counted, for diagnostics)."""
        return self.listener.ignored if self.listener is not None else 0

    @property
    def backlog(self) -> int:
        """Page events received and not yet turned into steps."""
        return self.listener.backlog if self.listener is not None else 0

    @property
    def page_closed(self) -> bool:
        """True once the recorded page was closed (by the user or a script)."""
        return self.listener.page_closed if self.listener is not None else False

    def pump(self, wait_ms: int = 50) -> bool:
        """Let Playwright deliver events for up to ``wait_ms`` and turn pending ones into steps.

        Returns False once the page is closed (or before :meth:`start`).
        """
        return self.listener.pump(wait_ms) if self.listener is not None else False

    def handle(self, command: RecorderCommand) -> None:
        """Apply one command from a front end (forwarded input, inspect mode, assertions)."""
        if self.listener is not None:
            self.listener.handle(command)

    def set_inspect(self, on: bool) -> None:
        """Turn inspect mode on or off in every frame."""
        if self.listener is not None:
            self.listener.set_inspect(on)

    default_expected = staticmethod(RecordingListener.default_expected)

    def add_assertion(self, pick_id: int, kind: str, expected: str) -> Step | None:
        """Add an assertion step about pick ``pick_id``; returns it (None for an unknown pick or before start).

        Raises
        ------
        ValueError
            For an unknown assertion kind.
        """
        return self.listener.add_assertion(pick_id, kind, expected) if self.listener is not None else None

    def stop(self, reason: str = "stopped") -> RecordingStopped:
        """Flush typing still pending in the page, close Chromium and return every recorded step.

        Safe to call more than once and after the page or browser died.
        """
        if self._stopped is not None:
            return self._stopped
        got = self.listener.detach() if self.listener is not None else Recording((), {}, {}, {}, ())
        self.driver.close()
        flow = Flow(name=self.flow_name, start_url=self.saved_start_url,
                    steps=got.steps, params=dict(got.params), secrets=got.secrets,
                    description="Recorded by demonstration.", base_path=base_path(self.base_url) + "/")
        self._stopped = RecordingStopped(flow, dict(got.crops), reason, dict(got.files))
        self.on_event(self._stopped)
        return self._stopped

    def discard_spool(self) -> None:
        """Remove the journal once the flow was saved."""
        self.spool.close(delete=True)


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


__all__ += ["run_until_stopped", "recover_journal", "NavigationError", "RecordingListener"]
