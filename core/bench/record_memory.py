"""Recorder memory benchmark: record the demo app for minutes of scripted user activity and watch memory.

``steadyhand bench record`` runs a :class:`~core.record.recorder.Recorder` on a
thread of its own (as the studio does) with a CDP endpoint on 127.0.0.1, and
drives the recorded page from the calling thread over
``connect_over_cdp`` (as a user's script does).  The driver plays a fixed
script of page states of the bundled demo app (LeaveDesk) in a loop: sign in
by typing, sort the requests table, open and cancel dialogs, hover, scroll
with the wheel, press Tab and Escape, open the date pickers, type dates and a
reason, choose a leave type, toggle a check box, cancel back, sign out.
Every action goes through real input on the recorded page (Playwright mouse,
keyboard and locator actions), so that the in-page listener records it for
real; one keystroke, click, wheel turn, key press, hover or choice is one
event, spaced to the requested rate.  The script cannot drift into a state
where nothing happens: before each action the page must be where the script
expects it, else the demo app is reset (signed out) and the loop starts over
at the sign-in page.  Nothing is written: the app's data is reset at each
loop (it never grows), no request is submitted, approved, deleted, exported
or saved.

Samples are taken at one fixed point of the loop (the requests page just
loaded after signing in), the first one when it is first reached and then
whenever ``sample_s`` seconds have passed, so that every sample sees the same
page state; the run ends at that point too, after ``minutes``.  Each sample
reads:

* this process: RSS (``/proc/self/status`` VmRSS) and the number of objects
  the garbage collector tracks (the process also holds the driving script's
  Playwright client and the demo app's server, both bounded: the report
  names the object types that grew most);
* the recorder's Playwright driver (the ``node`` process that launched the
  recorder's Chromium): RSS;
* the recorder's Chromium: summed RSS of its ``--type=renderer`` processes,
  and, after ``HeapProfiler.collectGarbage``, the recorded page's
  ``Performance.getMetrics`` ``JSHeapUsedSize``, ``Nodes`` and
  ``JSEventListeners`` (a leaking listener shows growing nodes or listeners);
* the recorder: steps recorded so far, events still queued, spool size.

The project is copied to a temporary folder first (its demo database and the
recorder's spool live there) and removed at the end: nothing is saved into
the project.
"""
from __future__ import annotations

import gc
import os
import re
import shutil
import tempfile
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable
from core.progress import counted

__all__ = [
    "Sample", "Figure", "Report", "BenchSetupError", "run_record_memory_benchmark", "format_report",
    "FLAT_PCT", "FLAT_MB", "SAMPLE_PATH",
]

#: "Flat": the end-start growth of each memory figure is at most max(FLAT_PCT of start, FLAT_MB).
FLAT_PCT = 10.0
FLAT_MB = 5.0
#: The point of the script where samples are taken (just signed in, the table loaded).
SAMPLE_PATH = "/requests"
#: Driver actions give up after this long (ms): a missing element means the script drifted.
ACTION_TIMEOUT_MS = 5000
#: The figures of the table: (key, label, unit, judged by the verdict).  The recorder's Playwright driver (a
#: node process) is shown but not judged: its RSS follows its own garbage collector's sawtooth and grows
#: with the page's network requests whatever the recorder subscribes to (Playwright's, not ours).
FIGURES: tuple[tuple[str, str, str, bool], ...] = (
    ("python_rss_mb", "Python RSS", "MB", True),
    ("python_objects", "Python objects (gc)", "", False),
    ("driver_rss_mb", "recorder's Playwright driver RSS", "MB", False),
    ("renderer_rss_mb", "renderer RSS", "MB", True),
    ("js_heap_mb", "JS heap (after GC)", "MB", True),
    ("dom_nodes", "DOM nodes", "", False),
    ("js_listeners", "JS event listeners", "", False),
)


class BenchSetupError(RuntimeError):
    """The benchmark cannot run: ``kind`` is ``"input"`` (bad project or arguments) or ``"environment"``."""

    def __init__(self, message: str, kind: str = "input") -> None:
        super().__init__(message)
        self.kind = kind


@dataclass
class Sample:
    """One measurement (see the module docstring); ``t_s`` is seconds since the driving started."""

    t_s: float
    python_rss_mb: float
    python_objects: int
    driver_rss_mb: float
    renderer_rss_mb: float
    renderers: int
    js_heap_mb: float
    dom_nodes: int
    js_listeners: int
    documents: int
    steps: int
    backlog: int
    spool_mb: float
    events: int


@dataclass
class Figure:
    """Start, end, peak and end-start of one figure over the samples."""

    start: float
    end: float
    peak: float

    @property
    def growth(self) -> float:
        return self.end - self.start


@dataclass
class Report:
    """What :func:`run_record_memory_benchmark` measured."""

    project: str
    minutes: float
    rate: float
    sample_s: float
    duration_s: float = 0.0
    events_sent: int = 0
    events_by_kind: dict[str, int] = field(default_factory=dict)
    failed_actions: int = 0
    failure_examples: list[str] = field(default_factory=list)
    resyncs: int = 0
    loops: int = 0
    steps_recorded: int = 0
    step_events: int = 0
    steps_removed: int = 0
    recorder_errors: int = 0
    recorder_error_examples: list[str] = field(default_factory=list)
    spool_bytes: int = 0
    spool_files: int = 0
    stop_seconds: float = 0.0
    samples: list[Sample] = field(default_factory=list)
    #: Python object types whose count grew most between the first and the last sample: (type, growth).
    object_growth: list[tuple[str, int]] = field(default_factory=list)

    # --- derived ------------------------------------------------------------------
    def figure(self, key: str) -> Figure | None:
        """Start / end / peak of ``key`` (a :class:`Sample` field); None without samples."""
        if not self.samples:
            return None
        values = [float(getattr(s, key)) for s in self.samples]
        return Figure(values[0], values[-1], max(values))

    @property
    def achieved_rate(self) -> float:
        return self.events_sent / self.duration_s if self.duration_s > 0 else 0.0

    @staticmethod
    def allowance(start: float) -> float:
        """Growth allowed for a memory figure starting at ``start`` MB."""
        return max(FLAT_PCT / 100.0 * start, FLAT_MB)

    def grown(self) -> list[str]:
        """Labels of the memory figures whose end-start growth exceeds the allowance."""
        out = []
        for key, label, _unit, memory in FIGURES:
            f = self.figure(key)
            if memory and f is not None and f.growth > self.allowance(f.start):
                out.append(label)
        return out

    @property
    def flat(self) -> bool:
        return len(self.samples) >= 2 and not self.grown()

    def to_json_dict(self) -> dict[str, Any]:
        figures = {}
        for key, _label, _unit, memory in FIGURES:
            f = self.figure(key)
            if f is not None:
                figures[key] = {"start": f.start, "end": f.end, "peak": f.peak, "growth": round(f.growth, 3),
                                "memory": memory}
                if memory:
                    figures[key]["allowed_growth"] = round(self.allowance(f.start), 3)
        return {
            "config": {"project": self.project, "minutes": self.minutes, "rate": self.rate, "sample_s": self.sample_s},
            "duration_s": round(self.duration_s, 3),
            "events_sent": self.events_sent,
            "achieved_rate": round(self.achieved_rate, 3),
            "events_by_kind": dict(sorted(self.events_by_kind.items())),
            "failed_actions": self.failed_actions,
            "failure_examples": self.failure_examples,
            "resyncs": self.resyncs,
            "loops": self.loops,
            "steps_recorded": self.steps_recorded,
            "step_events": self.step_events,
            "steps_removed": self.steps_removed,
            "recorder_errors": self.recorder_errors,
            "spool_bytes": self.spool_bytes,
            "spool_files": self.spool_files,
            "stop_seconds": round(self.stop_seconds, 3),
            "figures": figures,
            "samples": [asdict(s) for s in self.samples],
            "python_object_growth": dict(self.object_growth),
            "verdict": {"flat": self.flat, "grown": self.grown(),
                        "criterion": _criterion()},
        }


def _criterion() -> str:
    judged = ", ".join(label for _key, label, _unit, memory in FIGURES if memory)
    return f"end-start <= max({FLAT_PCT:g}% of start, {FLAT_MB:g} MB) for {judged}"


# --- /proc ---------------------------------------------------------------------------
def _status_kb(pid: int | str, key: str) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _processes() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, command line) of every readable process."""
    out: dict[int, tuple[int, str]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="utf-8", errors="replace") as fh:
                stat = fh.read()
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                cmd = fh.read().replace(b"\0", b" ").decode("utf-8", "replace")
        except (OSError, ValueError, IndexError):
            continue
        out[int(name)] = (ppid, cmd)
    return out


def chromium_processes(cdp_port: int) -> tuple[int | None, int | None, list[int]]:
    """(browser pid, pid of the process that launched it, renderer pids) of the Chromium listening on ``cdp_port``."""
    procs = _processes()
    flag = f"--remote-debugging-port={int(cdp_port)}"
    browser = next((pid for pid, (_pp, cmd) in procs.items() if flag in cmd and "--type=" not in cmd), None)
    if browser is None:
        return None, None, []
    children: dict[int, list[int]] = {}
    for pid, (ppid, _cmd) in procs.items():
        children.setdefault(ppid, []).append(pid)
    renderers, stack = [], [browser]
    while stack:
        for c in children.get(stack.pop(), []):
            stack.append(c)
            if "--type=renderer" in procs[c][1]:
                renderers.append(c)
    return browser, procs[browser][0], sorted(renderers)


def _mb(kb: int) -> float:
    return round(kb / 1024.0, 1)


def _dir_size(folder: Path) -> tuple[int, int]:
    total = files = 0
    for p in folder.rglob("*") if folder.is_dir() else []:
        try:
            if p.is_file():
                total += p.stat().st_size
                files += 1
        except OSError:
            pass
    return total, files


# --- the recorder on its own thread ----------------------------------------------------
class _RecorderThread:
    """Runs the recorder (it owns its Playwright) and counts what it reports."""

    def __init__(self, make_recorder: Callable[[Callable[[Any], None]], Any]) -> None:
        self._make = make_recorder
        self.recorder: Any = None
        self.started = threading.Event()
        self.stop_flag = threading.Event()
        self.error = ""
        self.steps = 0
        self.step_events = 0
        self.removed = 0
        self.errors = 0
        self.error_examples: list[str] = []
        self.stop_seconds = 0.0
        self._thread = threading.Thread(target=self._main, name="steadyhand-bench-recorder", daemon=True)

    def _on_event(self, event: Any) -> None:
        from core.record.events import RecorderError, RecordingStarted, StepRecorded, StepRemoved

        if isinstance(event, StepRecorded):
            self.step_events += 1
            self.steps = event.index + 1
        elif isinstance(event, StepRemoved):
            self.removed += 1
            self.steps = max(0, self.steps - 1)
        elif isinstance(event, RecorderError):
            self.errors += 1
            if len(self.error_examples) < 5:
                self.error_examples.append(event.message)
        elif isinstance(event, RecordingStarted):
            self.started.set()

    def start(self) -> None:
        self._thread.start()

    def _main(self) -> None:
        from core.record.recorder import run_until_stopped

        try:
            self.recorder = self._make(self._on_event)
            self.recorder.start()
        except Exception as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            self.error = first
            if self.recorder is not None:
                try:
                    self.recorder.driver.close()
                except Exception:
                    pass
            self.started.set()
            return
        try:
            run_until_stopped(self.recorder, self.stop_flag.is_set)
        except Exception as exc:
            self.error = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            try:
                self.recorder.stop(f"error: {self.error}")
            except Exception:
                pass

    @property
    def backlog(self) -> int:
        rec = self.recorder
        return rec.backlog if rec is not None else 0

    def stop(self, timeout: float = 120.0) -> None:
        t0 = time.monotonic()
        self.stop_flag.set()
        self._thread.join(timeout)
        self.stop_seconds = time.monotonic() - t0

    def alive(self) -> bool:
        return self._thread.is_alive()


# --- the driver's script ----------------------------------------------------------------
class _Drift(Exception):
    """The page is not where the script expects it."""


class _Driver:
    """Plays the script on the recorded page at ``rate`` events per second."""

    LEAVE_TYPES = ("Annual leave", "Sick leave", "Training", "Unpaid leave", "Parental leave")
    SORTS = ("Employee", "Type", "Days", "Status", "Start", "End", "Ref")

    def __init__(self, page: Any, base_url: str, rate: float, user: str, password: str,
                 reset_site: Callable[[], None]) -> None:
        self.page = page
        self.base_url = base_url.rstrip("/")
        self.interval = 1.0 / rate
        self.user = user
        self.password = password
        self.reset_site = reset_site
        self.events = 0
        self.by_kind: dict[str, int] = {}
        self.failed = 0
        self.resyncs = 0
        self.last_action = ""
        self.loops = 0
        self._next = time.monotonic()

    # pacing: one event per slot; a slow action delays the next slot, it is not made up for in a burst
    def _event(self, kind: str, fn: Callable[[], Any]) -> None:
        now = time.monotonic()
        if now < self._next:
            time.sleep(self._next - now)
        self._next = max(self._next + self.interval, time.monotonic())
        self.last_action = f"{kind} #{self.events + 1}"
        fn()
        self.events += 1
        self.by_kind[kind] = self.by_kind.get(kind, 0) + 1

    def _path(self) -> str:
        url = self.page.url
        rest = url[len(self.base_url):] if url.startswith(self.base_url) else url
        return rest.split("?", 1)[0].split("#", 1)[0] or "/"

    def expect_path(self, path: str) -> None:
        try:
            self.page.wait_for_url(re.compile(re.escape(self.base_url + path) + r"([?#].*)?$"),
                                   timeout=ACTION_TIMEOUT_MS, wait_until="domcontentloaded")
        except Exception:
            raise _Drift(f"expected {path}, at {self._path()}") from None

    def resync(self) -> None:
        """Back to the start of the loop: the app reset (signed out) and the sign-in page loaded."""
        self.resyncs += 1
        for attempt in range(3):
            self.reset_site()
            try:
                self.page.goto(self.base_url + "/login", wait_until="domcontentloaded")
                self.page.get_by_label("User name").wait_for(timeout=ACTION_TIMEOUT_MS)
                return
            except Exception:
                if attempt == 2:
                    raise
                time.sleep(0.5)

    # the pieces of the script
    def click(self, locator: Any) -> None:
        self._event("click", lambda: locator.click())

    def hover(self, locator: Any) -> None:
        self._event("hover", lambda: locator.hover())

    def key(self, name: str) -> None:
        self._event("press", lambda: self.page.keyboard.press(name))

    def type_text(self, text: str) -> None:
        for ch in text:
            self._event("keystroke", lambda ch=ch: self.page.keyboard.type(ch))

    def wheel(self, dy: float) -> None:
        self._event("scroll", lambda: self.page.mouse.wheel(0, dy))

    def select(self, locator: Any, label: str) -> None:
        self._event("select", lambda: locator.select_option(label=label))

    def check(self, locator: Any) -> None:
        self._event("check", lambda: locator.click())

    def sign_in(self) -> None:
        p = self.page
        self.expect_path("/login")
        self.click(p.get_by_label("User name"))
        self.type_text(self.user)
        self.key("Tab")
        self.type_text(self.password)
        self.key("Enter")
        self.expect_path(SAMPLE_PATH)
        p.locator("table tbody tr").first.wait_for(timeout=ACTION_TIMEOUT_MS)

    def requests_page(self) -> None:
        p = self.page
        n = self.loops
        self.hover(p.get_by_role("button", name="Export report"))
        for i in range(4):
            self.click(p.get_by_role("button", name=self.SORTS[(n + i) % len(self.SORTS)], exact=True))
        self.hover(p.locator("table tbody tr").nth(n % 3))
        self.wheel(240)
        self.wheel(-240)
        self.click(p.get_by_role("button", name="Export report"))
        self.click(p.get_by_role("dialog").get_by_role("button", name="Cancel"))
        self.click(p.get_by_role("button", name="Delete").nth(n % 3))
        p.get_by_role("dialog").wait_for(timeout=ACTION_TIMEOUT_MS)
        self.key("Escape")
        for _ in range(3):
            self.key("Tab")
        self.hover(p.get_by_role("link", name="New request"))
        self.click(p.get_by_role("link", name="New request"))

    def new_request_page(self) -> None:
        p = self.page
        n = self.loops
        self.expect_path("/requests/new")
        self.select(p.get_by_label("Leave type"), self.LEAVE_TYPES[n % len(self.LEAVE_TYPES)])
        self.click(p.get_by_role("button", name="Choose start date"))
        self.click(p.get_by_role("button", name="Next month"))
        self.click(p.get_by_role("button", name="Previous month"))
        self.key("Escape")
        self.click(p.get_by_label("Start date", exact=True))
        self.type_text(f"2026-03-{9 + n % 3:02d}")
        self.key("Tab")
        self.click(p.get_by_role("button", name="Choose end date"))
        self.click(p.get_by_role("button", name=f"March {13 + n % 3}, 2026"))
        self.click(p.get_by_label("Reason", exact=True))
        self.type_text("Family trip")
        self.check(p.get_by_label("Notify my manager by email"))
        self.check(p.get_by_label("Notify my manager by email"))
        self.hover(p.get_by_role("button", name="Submit"))
        self.wheel(300)
        self.wheel(-300)
        self.click(p.get_by_role("link", name="Cancel"))

    def back_on_requests(self) -> None:
        p = self.page
        self.expect_path(SAMPLE_PATH)
        p.locator("table tbody tr").first.wait_for(timeout=ACTION_TIMEOUT_MS)
        self.click(p.get_by_role("button", name=self.SORTS[(self.loops + 4) % len(self.SORTS)], exact=True))
        self.hover(p.get_by_role("button", name="Save report"))
        self.click(p.get_by_role("button", name="Sign out"))
        self.expect_path("/login")
        p.get_by_label("User name").wait_for(timeout=ACTION_TIMEOUT_MS)

    def loop(self, at_sample_point: Callable[[], bool]) -> bool:
        """One pass of the script, from the sign-in page back to it; returns False when ``at_sample_point`` says stop.

        Raises
        ------
        _Drift
            When the page is not where the script expects it (the caller resyncs).
        """
        self.sign_in()
        if not at_sample_point():
            return False
        self.requests_page()
        self.new_request_page()
        self.back_on_requests()
        self.loops += 1
        self.reset_site()  # signed out: the app's data and logs back to the known state, so they never grow
        return True


# --- the benchmark ------------------------------------------------------------------------
def _page_metrics(cdp: Any) -> dict[str, float]:
    cdp.send("HeapProfiler.collectGarbage")
    cdp.send("Performance.enable")
    return {m["name"]: float(m["value"]) for m in cdp.send("Performance.getMetrics")["metrics"]}


def run_record_memory_benchmark(project_path: Path | str, minutes: float = 10.0, rate: float = 5.0,
                                sample_s: float = 10.0, *,
                                progress: Callable[[str], None] | None = None) -> Report:
    """Record the bundled demo app under scripted activity and sample memory (see the module docstring).

    Parameters
    ----------
    project_path : Path | str
        A project whose site is the bundled demo app (``site: demo``).
    minutes : float
        How long to drive; the run ends at the next sample point after that.
    rate : float
        Events per second the driver aims at (slower when actions take longer).
    sample_s : float
        Seconds between samples (taken at the next sample point once due).
    progress : Callable[[str], None] | None
        Receives a line per sample.

    Raises
    ------
    BenchSetupError
        Bad project or arguments (``kind="input"``), or Chromium / the
        recorder could not start (``kind="environment"``).
    """
    from core.project import ProjectError, load_project

    if not minutes > 0 or not rate > 0 or not sample_s > 0:
        raise BenchSetupError(f"--minutes, --rate and --sample-s must be positive (got {minutes}, {rate}, {sample_s})")
    try:
        original = load_project(project_path)
    except ProjectError as exc:
        raise BenchSetupError(str(exc)) from None
    if original.settings.site != "demo":
        raise BenchSetupError(f"{original.root}: the benchmark drives the bundled demo app; the project's site must "
                              f"be 'demo' (use projects/demo)")
    tmp = Path(tempfile.mkdtemp(prefix="steadyhand-bench-record-"))
    try:
        shutil.copytree(original.root, tmp / "project", ignore=shutil.ignore_patterns(".steadyhand"))
        project = load_project(tmp / "project")
        return _run(project, str(project_path), minutes, rate, sample_s, progress or (lambda s: None))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _run(project: Any, label: str, minutes: float, rate: float, sample_s: float,
         progress: Callable[[str], None]) -> Report:
    from playwright.sync_api import sync_playwright

    from core.sites.adapters import open_site
    from core.record.recorder import Recorder, free_cdp_port
    from core.record.runner import project_secrets, spool_dir_for
    from core.sites.demo import DEMO_PASSWORD, DEMO_USERS

    report = Report(project=label, minutes=minutes, rate=rate, sample_s=sample_s)
    try:
        site = open_site(project)
    except Exception as exc:
        raise BenchSetupError(f"cannot serve the project's site: {exc}", "environment") from None
    demo = site.site  # type: ignore[attr-defined]
    demo.reset(variant="baseline")  # the script knows the baseline page
    secrets = project_secrets(project)
    password = secrets.get("password") or DEMO_PASSWORD
    user = project.settings.params.get("user", "")
    user = user if user in DEMO_USERS else "alice"
    spool = spool_dir_for(project, "bench_record")
    port = free_cdp_port()

    def make(on_event: Callable[[Any], None]) -> Recorder:
        return Recorder(flow_name="bench_record", settings=project.engine_settings.browser, base_url=site.base_url,
                        start_url="/login", spool_dir=spool, on_event=on_event, headless=True, cdp_port=port,
                        secrets=secrets, waits=project.engine_settings.waits)

    rec = _RecorderThread(make)
    rec.start()
    try:
        if not rec.started.wait(120) or rec.error:
            raise BenchSetupError(f"the recorder did not start: {rec.error or 'no answer within 120 s'}",
                                  "environment")
        with sync_playwright() as pw:
            browser = pw.chromium.connect_over_cdp(f"http://127.0.0.1:{port}")
            try:
                page = browser.contexts[0].pages[0]
                page.set_default_timeout(ACTION_TIMEOUT_MS)
                cdp = page.context.new_cdp_session(page)
                driver = _Driver(page, site.base_url, rate, user, password, demo.reset)
                t0 = time.monotonic()
                end = t0 + minutes * 60.0
                state = {"next_sample": t0}
                first_types: Counter[str] = Counter()
                last_types: Counter[str] = Counter()

                def at_sample_point() -> bool:
                    now = time.monotonic()
                    done = now >= end
                    if done or now >= state["next_sample"]:
                        report.samples.append(_sample(now - t0, cdp, port, rec, driver, spool, last_types))
                        if len(report.samples) == 1:
                            first_types.update(last_types)
                        state["next_sample"] = now + sample_s
                        s = report.samples[-1]
                        progress(f"  t={s.t_s:6.0f}s  events={s.events:5d}  steps={s.steps:5d}  "
                                 f"python={s.python_rss_mb:.0f}MB  renderer={s.renderer_rss_mb:.0f}MB  "
                                 f"js heap={s.js_heap_mb:.1f}MB  nodes={s.dom_nodes}  listeners={s.js_listeners}  "
                                 f"backlog={s.backlog}")
                    return not done

                while True:
                    if not rec.alive():
                        raise BenchSetupError(f"the recorder stopped during the run: {rec.error or 'page closed'}",
                                              "environment")
                    try:
                        if not driver.loop(at_sample_point):
                            break
                    except Exception as exc:
                        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                        if not rec.alive():
                            raise BenchSetupError(f"the recorder stopped during the run: {rec.error or first}",
                                                  "environment") from None
                        driver.failed += 1
                        if len(report.failure_examples) < 5:
                            report.failure_examples.append(f"{driver.last_action}: {first}")
                        driver.resync()
                report.duration_s = time.monotonic() - t0
                report.events_sent = driver.events
                report.events_by_kind = dict(driver.by_kind)
                report.failed_actions = driver.failed
                report.resyncs = driver.resyncs
                report.loops = driver.loops
                grown = last_types.copy()
                grown.subtract(first_types)
                report.object_growth = [(k, v) for k, v in grown.most_common(6) if v > 0]
                try:
                    cdp.detach()
                except Exception:
                    pass
            finally:
                browser.close()  # over CDP: disconnects this script only
    finally:
        rec.stop()
        report.spool_bytes, report.spool_files = _dir_size(spool)
        report.steps_recorded = rec.steps
        report.step_events = rec.step_events
        report.steps_removed = rec.removed
        report.recorder_errors = rec.errors
        report.recorder_error_examples = list(rec.error_examples)
        report.stop_seconds = rec.stop_seconds
        if rec.recorder is not None:
            rec.recorder.discard_spool()
        shutil.rmtree(spool, ignore_errors=True)
        try:
            site.close()
        except Exception:
            pass
    return report


def _object_types() -> Counter[str]:
    return Counter(type(o).__qualname__ for o in gc.get_objects())


def _sample(t: float, cdp: Any, port: int, rec: _RecorderThread, driver: _Driver, spool: Path,
            types: Counter[str]) -> Sample:
    metrics = _page_metrics(cdp)
    types.clear()
    types.update(_object_types())
    _browser, launcher, renderers = chromium_processes(port)
    spool_bytes, _ = _dir_size(spool)
    return Sample(
        t_s=round(t, 1),
        python_rss_mb=_mb(_status_kb("self", "VmRSS")),
        python_objects=sum(types.values()),
        driver_rss_mb=_mb(_status_kb(launcher, "VmRSS")) if launcher else 0.0,
        renderer_rss_mb=_mb(sum(_status_kb(r, "VmRSS") for r in renderers)),
        renderers=len(renderers),
        js_heap_mb=round(metrics.get("JSHeapUsedSize", 0.0) / 1048576.0, 2),
        dom_nodes=int(metrics.get("Nodes", 0)),
        js_listeners=int(metrics.get("JSEventListeners", 0)),
        documents=int(metrics.get("Documents", 0)),
        steps=rec.steps,
        backlog=rec.backlog,
        spool_mb=round(spool_bytes / 1048576.0, 2),
        events=driver.events,
    )


# --- the report ---------------------------------------------------------------------------
def _fmt(v: float, unit: str, *, sign: bool = False) -> str:
    if unit == "MB":
        return f"{v:+.1f}" if sign else f"{v:.1f}"
    return f"{v:+.0f}" if sign else f"{v:.0f}"


def format_report(report: Report) -> str:
    """The human-readable report: configuration, activity, the figures table and the verdict."""
    lines = [
        "Recorder memory benchmark",
        f"  project {report.project}; {report.minutes:g} min at {report.rate:g} events/s, a sample every "
        f"{report.sample_s:g} s (at {SAMPLE_PATH} just after signing in)",
        f"  driven {report.duration_s:.0f} s: {report.events_sent} events sent ({report.achieved_rate:.2f}/s; "
        + ", ".join(f"{k} {v}" for k, v in sorted(report.events_by_kind.items())) + ")",
        f"  {report.loops} loops of the script, {report.failed_actions} failed actions, {report.resyncs} resyncs",
        f"  steps recorded: {report.steps_recorded} ({report.step_events} recorded, {report.steps_removed} merged "
        f"away); recorder errors: {report.recorder_errors}; stopping took {report.stop_seconds:.1f} s",
    ]
    for e in report.failure_examples[:3]:
        lines.append(f"    failed action: {e}")
    for e in report.recorder_error_examples[:3]:
        lines.append(f"    recorder error: {e}")
    lines.append(f"  spool on disk at the end: {report.spool_bytes / 1048576.0:.2f} MB in {report.spool_files} files "
                 "(deleted)")
    if not report.samples:
        lines.append("  no samples taken")
        return "\n".join(lines)
    last = report.samples[-1]
    lines.append(f"  {len(report.samples)} samples; {counted(last.renderers, 'renderer process', 'renderer processes')}; recorder backlog at the "
                 f"end: {last.backlog} events, peak {max(s.backlog for s in report.samples)}")
    lines.append("")
    rows = []
    for key, label, unit, _memory in FIGURES:
        f = report.figure(key)
        assert f is not None
        name = f"{label} ({unit})" if unit else label
        rows.append([name, _fmt(f.start, unit), _fmt(f.end, unit), _fmt(f.peak, unit), _fmt(f.growth, unit, sign=True)])
    header = ["figure", "start", "end", "peak", "end-start"]
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]
    fmt = "  ".join(["{:<%d}" % widths[0]] + ["{:>%d}" % w for w in widths[1:]])
    lines.append(fmt.format(*header))
    lines.append(fmt.format(*["-" * w for w in widths]))
    lines += [fmt.format(*r) for r in rows]
    if report.object_growth:
        lines.append("Python object types that grew most: " + ", ".join(f"{k} {v:+d}" for k, v in report.object_growth))
    lines.append("")
    criterion = _criterion()
    if len(report.samples) < 2:
        lines.append(f"verdict: not enough samples ({criterion})")
    elif report.flat:
        lines.append(f"verdict: flat ({criterion})")
    else:
        lines.append(f"verdict: grew: {', '.join(report.grown())} ({criterion})")
    return "\n".join(lines)
