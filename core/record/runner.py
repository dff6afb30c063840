"""Recording on a thread of its own (the studio): the thread owns Playwright, commands arrive on a queue."""
from __future__ import annotations

import queue
import threading
import time
from pathlib import Path
from typing import Callable

from core.sites.adapters import SiteAdapter, open_site
from core.project import Project

from .events import RecorderCommand, RecorderError, RecorderEvent, RecordingStopped, StopRecording
from .recorder import Recorder, run_until_stopped

__all__ = ["RecorderRunner", "spool_dir_for", "project_secrets"]


def spool_dir_for(project: Project, flow_name: str) -> Path:
    """``<project>/.steadyhand/recordings/<flow>-<timestamp>``: the journal of one recording."""
    return project.data_dir / "recordings" / f"{flow_name}-{time.strftime('%Y%m%d-%H%M%S')}"


def project_secrets(project: Project) -> dict[str, str]:
    """Declared secrets of the project that have a value (env, keyring or default), name -> value."""
    from core.secrets import MissingSecretError, resolve_secret

    out: dict[str, str] = {}
    for name, spec in project.settings.secrets.items():
        try:
            out[name] = resolve_secret(name, project=project.name, default=spec.default)
        except MissingSecretError:
            continue
    return out


class RecorderRunner:
    """Runs a :class:`~core.record.recorder.Recorder` on its own thread.

    Parameters
    ----------
    project : Project
        The project; its bundled site is served when ``url`` is None.
    flow_name : str
        Name of the flow being recorded.
    url : str | None
        Start URL (absolute or relative to the site); None: the site's base URL.
    on_event : Callable[[RecorderEvent], None]
        Receives events on the recorder thread.
    headless : bool
        Headless Chromium (the studio forwards live-view input then).
    cdp_port : int | None
        CDP endpoint on 127.0.0.1 for scripts.
    """

    def __init__(self, project: Project, *, flow_name: str, url: str | None,
                 on_event: Callable[[RecorderEvent], None], headless: bool = True, cdp_port: int | None = None) -> None:
        self.project = project
        self.flow_name = flow_name
        self.url = url
        self.on_event = on_event
        self.headless = headless
        self.cdp_port = cdp_port
        self._commands: queue.Queue[RecorderCommand] = queue.Queue()
        self._thread = threading.Thread(target=self._main, name="steadyhand-recorder", daemon=True)
        self.result: RecordingStopped | None = None

    def start(self) -> None:
        """Start the thread (Chromium starts on it)."""
        self._thread.start()

    def send(self, command: RecorderCommand) -> None:
        """Queue a command; safe from any thread."""
        self._commands.put(command)

    def close(self, timeout: float = 10.0) -> None:
        """Stop recording (the recorded steps are still reported) and join the thread."""
        if self._thread.is_alive():
            self._commands.put(StopRecording())
            self._thread.join(timeout)

    def _drain(self) -> list[RecorderCommand]:
        out: list[RecorderCommand] = []
        while True:
            try:
                out.append(self._commands.get_nowait())
            except queue.Empty:
                return out

    def _main(self) -> None:
        site: SiteAdapter | None = None
        recorder: Recorder | None = None
        try:
            site = open_site(self.project)
            if self.project.settings.site == "demo" and hasattr(site, "site"):
                site.site.reset()  # type: ignore[attr-defined]
            recorder = Recorder(
                flow_name=self.flow_name, settings=self.project.engine_settings.browser, base_url=site.base_url,
                start_url=self.url or "/", spool_dir=spool_dir_for(self.project, self.flow_name),
                on_event=self.on_event, headless=self.headless, cdp_port=self.cdp_port,
                secrets=project_secrets(self.project), live_frames=True,
                params=self.project.settings.params, waits=self.project.engine_settings.waits)
            recorder.start()
            self.result = run_until_stopped(recorder, lambda: False, self._drain)
            recorder.discard_spool()
        except Exception as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            self.on_event(RecorderError(first, fatal=True))
            if recorder is not None:
                try:
                    self.result = recorder.stop(f"error: {first}")
                except Exception:
                    pass
        finally:
            if site is not None:
                try:
                    site.close()
                except Exception:
                    pass
