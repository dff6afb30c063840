"""``steadyhand record``: record a flow in Chromium and save it into the project."""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
from pathlib import Path
from typing import Any

from core.act.expect import change_words
from core.domain.resources import module_name
from core.exitcodes import EXIT_ENVIRONMENT, EXIT_INPUT, EXIT_OK

from .events import ElementPicked, RecorderError, RecorderEvent, StepRecorded, StepRemoved
from .review import format_review, review_flags
from .save import RecordingNotSaved, save_recording, valid_flow_name

__all__ = ["add_record_parser", "record_command"]


def add_record_parser(sub: Any) -> argparse.ArgumentParser:
    """Add the ``record`` subcommand to an ``argparse`` subparsers object."""
    p = sub.add_parser("record", help="record a new flow by demonstration",
                       description="Open Chromium on URL (default: the project's bundled site), record what you do, "
                                   "and save it as flows/NAME.yaml when you close the page or press Ctrl-C.")
    p.add_argument("url", nargs="?", help="start URL, absolute or relative to the project's site (default: its base URL)")
    p.add_argument("--project", required=True, help="project folder (holds steadyhand.yaml)")
    p.add_argument("--flow", required=True, help="name of the new flow (file stem)")
    p.add_argument("--headless", action="store_true",
                   help="no browser window (drive it over CDP); the default when there is no display")
    p.add_argument("--cdp-port", type=int, metavar="N",
                   help="CDP endpoint on 127.0.0.1:N for scripts (headless without it: a free port is chosen)")
    p.add_argument("--force", action="store_true", help="overwrite an existing flow of that name")
    p.add_argument("-q", "--quiet", action="store_true", help="no line per recorded step")
    return p


def _err(msg: str) -> None:
    print(f"steadyhand: error: {msg}", file=sys.stderr)


def _has_display() -> bool:
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


class _Printer:
    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        #: step id -> other elements of the page with its target's role and name, at record time (the review)
        self.same_named: dict[str, int] = {}

    def __call__(self, event: RecorderEvent) -> None:
        if isinstance(event, StepRecorded):
            self.same_named[event.step.id] = event.same_named
        if isinstance(event, StepRecorded) and not self.quiet:
            s = event.step
            what = f" = {s.action.value!r}" if s.action.value and s.action.kind in ("input", "upload") else ""
            effect = f"  -> {change_words(s.expect)}" if s.expect not in ("auto", "none") else ""
            print(f"  {s.id:<4} {s.name}{what}{effect}", flush=True)
        elif isinstance(event, StepRemoved) and not self.quiet:
            print(f"  (step s{event.index + 1} merged into the next one)", flush=True)
        elif isinstance(event, ElementPicked) and not self.quiet:
            print(f"  picked {event.descriptor.label_text or event.text[:40]!r} to assert on", flush=True)
        elif isinstance(event, RecorderError):
            print(f"steadyhand: {'error' if event.fatal else 'warning'}: {event.message}", file=sys.stderr, flush=True)


CHILD_ENV = "STEADYHAND_RECORD_CHILD"


def _run_in_own_session(argv: list[str], args: argparse.Namespace) -> int:
    """Re-run this command in a child process of its own session and relay stop signals to it.

    Ctrl-C in a terminal signals the whole foreground process group: Playwright's
    driver and Chromium would die with us before the typing still pending in the
    page could be flushed.  The child (and its browser) never see the terminal's
    signals; we pass Ctrl-C on as SIGINT and SIGTERM or SIGHUP as SIGTERM to the
    child alone, and it stops, flushes and saves.
    """
    import subprocess

    child = subprocess.Popen([sys.executable, "-m", module_name("core.cli"), *argv], env={**os.environ, CHILD_ENV: "1"},
                             start_new_session=True)

    def relay(signum: int, _frame: Any) -> None:
        if child.poll() is None:
            child.send_signal(signal.SIGINT if signum == signal.SIGINT else signal.SIGTERM)

    previous = {s: signal.signal(s, relay) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        while True:
            try:
                code = child.wait()
                break
            except KeyboardInterrupt:  # pragma: no cover - the relay handler replaced SIGINT's default
                relay(signal.SIGINT, None)
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
    if code >= 0:
        return code
    # the recording process was killed (out of memory, SIGKILL): save what its journal holds
    what = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else f"signal {-code}"
    print(f"steadyhand: warning: the recording process was killed ({what}); saving what its journal holds",
          file=sys.stderr, flush=True)
    return _recover(args, session=child.pid)


#: How long the processes a killed recording left behind get to die, in seconds.
REAP_TIMEOUT_S = 10.0


def _reap_leftovers(session: int, folder: Path) -> None:
    """Kill what a killed recording process left running, and wait (bounded) until it is gone.

    Playwright's driver runs in the dead child's session; Chromium, launched
    detached, runs in a session of its own, with its profile inside the journal
    folder (``--user-data-dir=<project>/.steadyhand/recordings/...``).  Left alone
    they keep writing into the journal while it is being removed.  Only processes
    of that session or naming that journal ``folder`` are killed (another
    recording's browser is left alone).  Linux only
    (``/proc``); elsewhere nothing is done.  Waits at most ``REAP_TIMEOUT_S``;
    never raises.
    """
    import time

    proc = Path("/proc")
    if not proc.is_dir():
        return
    marker = os.fsencode(str(folder.resolve()))
    me = os.getpid()

    def leftovers() -> list[int]:
        found = []
        for entry in proc.iterdir():
            if not entry.name.isdigit() or int(entry.name) == me:
                continue
            pid = int(entry.name)
            try:
                if os.getsid(pid) == session or marker in (entry / "cmdline").read_bytes():
                    found.append(pid)
            except (OSError, ProcessLookupError):
                continue
        return found

    deadline = time.monotonic() + REAP_TIMEOUT_S
    while time.monotonic() < deadline:
        pids = leftovers()
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.1)


def _remove_journal(folder: Path) -> None:
    """Remove a journal folder; retried a few times (a dying browser may still be writing in it); never raises."""
    import time

    for _ in range(20):
        shutil.rmtree(folder, ignore_errors=True)
        if not folder.exists():
            return
        time.sleep(0.1)


def _recover(args: argparse.Namespace, *, session: int | None = None) -> int:
    """Save the newest journal of ``args.flow`` left in the project by a killed recording.

    ``session`` is the killed process's session id: what it left running is
    killed first (``_reap_leftovers``).
    """
    from core.project import ProjectError, load_project

    from .recorder import recover_journal

    try:
        project = load_project(args.project, skip_invalid=True)
    except ProjectError as exc:
        _err(str(exc))
        return EXIT_ENVIRONMENT
    folders = sorted((project.data_dir / "recordings").glob(f"{args.flow}-*"), key=lambda p: p.stat().st_mtime)
    if not folders:
        _err("no journal of it was found; nothing could be saved")
        return EXIT_ENVIRONMENT
    if session is not None:
        _reap_leftovers(session, folders[-1])
    try:
        got = recover_journal(folders[-1])
    except ProjectError as exc:
        _err(f"its journal cannot be read ({exc}); it is kept in {folders[-1]}")
        return EXIT_ENVIRONMENT
    if got is None:
        _err("nothing had been recorded yet; no flow was saved")
        _remove_journal(folders[-1])
        return EXIT_ENVIRONMENT
    flow, crops, files = got
    try:
        path = save_recording(project.root, flow, crops, files)
    except RecordingNotSaved as exc:
        _err(str(exc))
        return EXIT_INPUT
    _remove_journal(folders[-1])
    n = len(flow.steps)
    print(f"Recovered {n} step{'s' if n != 1 else ''} from its journal into {path.relative_to(project.root)}",
          flush=True)
    review = format_review(review_flags(flow.steps), str(path.relative_to(project.root)))
    if review:
        print(review, flush=True)
    return EXIT_OK


def record_command(args: argparse.Namespace) -> int:
    """Run ``steadyhand record``; returns the exit code (0 saved, 2 bad input, 4 broken environment)."""
    if os.name == "posix" and not os.environ.get(CHILD_ENV) and getattr(args, "argv", None) is not None:
        return _run_in_own_session(list(args.argv), args)
    parent = os.getppid()
    from core.sites.adapters import SiteAdapter, open_site
    from core.perception.browser import BrowserLaunchError
    from core.perception.driver import NavigationError
    from core.project import ProjectError, load_project
    from core.project.params import placeholder_name

    from .recorder import CdpPortInUse, Recorder, free_cdp_port, run_until_stopped
    from .runner import project_secrets, spool_dir_for

    try:
        project = load_project(args.project, skip_invalid=True)  # a broken flow file never stops a new recording
    except ProjectError as exc:
        _err(str(exc))
        return EXIT_INPUT
    if not valid_flow_name(args.flow):
        _err(f"--flow {args.flow!r}: expected a file stem (letters, digits, '_' and '-'; at most 80 characters)")
        return EXIT_INPUT
    from core.project.paths import flow_file

    try:
        target = flow_file(project.root, args.flow)  # not out of the project through a symbolic link either
    except ProjectError as exc:
        _err(str(exc))
        return EXIT_INPUT
    if (target.exists() or args.flow in project.flows) and not args.force:
        _err(f"{target}: a flow named {args.flow!r} exists; pass --force to overwrite it or choose another --flow")
        return EXIT_INPUT
    if args.cdp_port is not None and not 1 <= args.cdp_port <= 65535:
        _err(f"--cdp-port must be between 1 and 65535, got {args.cdp_port}")
        return EXIT_INPUT
    headless = bool(args.headless) or not _has_display()
    cdp_port = args.cdp_port or (free_cdp_port() if headless else None)

    stop = {"signal": ""}

    def on_signal(signum: int, _frame: Any) -> None:
        stop["signal"] = signal.Signals(signum).name

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    site: SiteAdapter | None = None
    recorder: Recorder | None = None
    try:
        try:
            site = open_site(project)
        except Exception as exc:
            _err(f"cannot serve the project's site: {exc}")
            return EXIT_ENVIRONMENT
        if project.settings.site == "demo" and hasattr(site, "site"):
            site.site.reset()  # type: ignore[attr-defined]
        start = args.url or "/"
        printer = _Printer(args.quiet)
        recorder = Recorder(flow_name=args.flow, settings=project.engine_settings.browser, base_url=site.base_url,
                            start_url=start, spool_dir=spool_dir_for(project, args.flow), on_event=printer,
                            headless=headless, cdp_port=cdp_port, secrets=project_secrets(project), auto_assert=True,
                            params=project.settings.params, waits=project.engine_settings.waits)
        try:
            recorder.start()
        except CdpPortInUse as exc:
            _err(str(exc))
            recorder.driver.close()
            recorder.discard_spool()
            return EXIT_INPUT
        except (BrowserLaunchError, NavigationError) as exc:
            _err(str(exc))
            recorder.driver.close()
            recorder.discard_spool()
            return EXIT_ENVIRONMENT
        page_url = recorder.driver.page.url
        print(f"Recording flow {args.flow!r} at {page_url}", flush=True)
        if page_url != recorder.driver.absolute(start):
            print(f"  (the site redirected {recorder.saved_start_url}; the flow starts there as asked, so a replay "
                  "meets the same redirect)", flush=True)
        if recorder.driver.cdp_endpoint:  # the endpoint Chromium really bound, checked to be this browser's
            print(f"CDP endpoint: {recorder.driver.cdp_endpoint}  (playwright: chromium.connect_over_cdp)", flush=True)
        if not headless:
            print("Act in the Chromium window. Alt+Shift+A toggles assert mode (click an element or select "
                  "text to add a check).", flush=True)
        print("Close the page or press Ctrl-C to stop and save.", flush=True)
        def orphaned() -> bool:
            if os.environ.get(CHILD_ENV) and os.getppid() != parent:
                stop["signal"] = "ORPHANED"
                return True
            return False

        try:
            result = run_until_stopped(recorder, lambda: bool(stop["signal"]) or orphaned())
        except ProjectError as exc:  # the journal does not read back as a flow: kept, never written to flows/
            try:
                recorder.driver.close()
            except Exception:  # noqa: BLE001 - the browser may be gone already
                pass
            _err(f"the recording does not read back as a flow ({exc}); nothing was written to flows/, its journal "
                 f"is kept in {recorder.spool.folder}")
            return EXIT_ENVIRONMENT
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
        if site is not None:
            try:
                site.close()
            except Exception:
                pass
    flow = result.flow
    if not flow.steps:
        recorder.discard_spool()
        print("Stopped. Nothing was recorded, so no flow was saved.", flush=True)
        return EXIT_OK
    try:
        path = save_recording(project.root, flow, result.crops, result.files)
    except RecordingNotSaved as exc:  # the loader would refuse it: kept aside, never written to flows/
        recorder.discard_spool()
        _err(str(exc))
        return EXIT_INPUT
    except OSError as exc:
        _err(f"could not save {target}: {exc}; the recorded steps are kept in {recorder.spool.folder}")
        return EXIT_ENVIRONMENT
    recorder.discard_spool()
    got = {"SIGINT": "Ctrl-C received", "ORPHANED": "the steadyhand command that started it is gone"}.get(
        stop["signal"], f"{stop['signal'] or 'a signal'} received")
    why = {"page closed": "the page was closed", "signal": got}.get(
        result.reason, result.reason)
    rel = path.relative_to(project.root)
    n = len(flow.steps)
    print(f"Stopped ({why}). Saved {n} step{'s' if n != 1 else ''} to {rel}"
          + (f" (element crops in {rel.parent / (flow.name + '.crops')})" if result.crops else ""), flush=True)
    review = format_review(review_flags(flow.steps, printer.same_named), str(rel))
    if review:
        print(review, flush=True)
    declared = set(flow.secrets) | set(project.settings.secrets)
    secret = sorted({name for s in flow.steps if (name := placeholder_name(s.action.value)) in declared})
    defaults = {n for n, spec in project.settings.secrets.items() if spec.default is not None}
    secret = [n for n in secret if n not in defaults]
    if secret:
        print(f"Secret parameters (values not saved): {', '.join(secret)}; set STEADYHAND_SECRET_<NAME> or the "
              "keyring before replaying.", flush=True)
    print(f"Replay: steadyhand run {args.project} --flow {flow.name} --headless", flush=True)
    return EXIT_OK
