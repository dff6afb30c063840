"""``steadyhand bench studio``: the studio replays a project offscreen while a recording goes; does it keep up?

Builds the real :class:`~studio.main_window.MainWindow` (real engine thread,
Playwright, Chromium) over a temporary copy of the project (its store and
baselines stay untouched), starts every flow (or ``--flows``) and, at the
same time, a recording in the Recorder's bridge (a second Chromium on the
project's site, fed a keystroke every :data:`RECORDING_INPUT_MS`; its live
frames reach the GUI thread as in the studio; ``--no-recording`` leaves it
out), and measures until the run ends:

``stall_ms``
    the longest stall of the GUI event loop: a heartbeat ``QTimer`` fires
    every :data:`HEARTBEAT_MS` (10 ms); the longest gap between two beats,
    minus that interval, is how long the loop could not run (goal <= 50 ms);
``fps_received``
    live frames of the engine's page (CDP screencast frames) that reached
    the studio, per second of the run;
``fps``
    live frames painted by the live view (each counted at its first paint)
    per second of the run (goal >= 10).  Chromium sends a frame only when
    the page repaints: on a page that stays still between steps (the demo
    app) both rates fall with the stillness, not with the studio; ``--moving``
    replays instead a flow on a page that repaints all the time (a spinner,
    :mod:`studio.moving_page`), where the rate is what the studio can show;
``latency_ms``
    median and longest time from the engine posting a frame to the GUI
    thread having it decoded (the decoding runs off the GUI thread);
``frame_handover_ms``, ``frame_paint_ms``
    median and longest CPU time the GUI thread itself spent on one live
    frame: taking it from the decoder and giving it to the live view, and
    painting it (what a frame costs the GUI thread whatever the machine's
    load; goal <= 50 ms each);
``steps``
    steps finished (``StepFinished`` events).

Context printed with them: ``stall_cpu_ms``, the CPU time the GUI thread
itself ran during the longest stall (the rest of it the thread waited for a
core or for the GIL held by the engine thread); ``handler_cpu_ms``, the most
CPU time the GUI thread spent on one engine event (what the studio's own
code costs); and the machine's 1-minute load average.

Run it through the command line (``steadyhand bench studio [--json PATH]``),
which starts this module in its own process, so that the engine's layers
never import Qt.  Exit 0 with the figures (they are the output), 2 for bad
input, 3 when the run did not end within ``--timeout-s``.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

__all__ = ["HEARTBEAT_MS", "RECORDING_INPUT_MS", "StudioBenchReport", "run_studio_bench", "format_report", "main"]

#: Interval of the heartbeat timer, ms: a gap longer than this is a stall of the event loop.
HEARTBEAT_MS = 10
#: Goals (issue 20, item 4): the longest stall (ms) and the live view's frames per second at 1280x800.
GOAL_STALL_MS, GOAL_FPS = 50.0, 10.0
#: The bench's recording gets a keystroke this often (ms): a person typing slowly, so that it records steps.
RECORDING_INPUT_MS = 500
#: Seconds the bench waits for its recording to start (its Chromium and site) before it starts the run.
RECORDING_START_S = 60.0
#: Live frames painted and steps finished before the window is grabbed (``--grab``): the run is well under way.
GRAB_AFTER_FRAMES, GRAB_AFTER_STEPS = 20, 3


@dataclass
class StudioBenchReport:
    """Figures of one replay in the studio (see the module docstring); ``seconds`` from Start to the run's end."""

    stall_ms: float
    fps: float
    steps: int
    frames: int = 0
    seconds: float = 0.0
    flows: list[str] = field(default_factory=list)
    results: dict[str, str] = field(default_factory=dict)
    beats: int = 0
    handler_cpu_ms: float = 0.0
    stall_cpu_ms: float = 0.0
    load_average: float = 0.0
    fps_received: float = 0.0
    frames_received: int = 0
    latency_ms: tuple[float, float] = (0.0, 0.0)
    page: str = "project"
    recording: bool = False
    recording_frames: int = 0
    recording_steps: int = 0
    handler_event: str = ""
    frame_handover_ms: tuple[float, float] = (0.0, 0.0)
    frame_paint_ms: tuple[float, float] = (0.0, 0.0)
    lateness_p99_ms: float = 0.0
    gui_cpu_percent: float = 0.0
    floor_stall_ms: float | None = None
    floor_p99_ms: float | None = None
    handler_cpu_by_event: dict[str, float] = field(default_factory=dict)
    why: str = ""

    def to_json_dict(self) -> dict[str, object]:
        d = asdict(self)
        d["stall_ms"], d["fps"], d["seconds"] = round(self.stall_ms, 1), round(self.fps, 2), round(self.seconds, 2)
        d["fps_received"] = round(self.fps_received, 2)
        for key in ("latency_ms", "frame_handover_ms", "frame_paint_ms"):
            d[key] = [round(v, 2) for v in getattr(self, key)]
        d["handler_cpu_ms"], d["load_average"] = round(self.handler_cpu_ms, 1), round(self.load_average, 2)
        d["stall_cpu_ms"], d["lateness_p99_ms"] = round(self.stall_cpu_ms, 1), round(self.lateness_p99_ms, 1)
        d.pop("why")
        d["gui_cpu_percent"] = round(self.gui_cpu_percent, 1)
        d["handler_cpu_by_event"] = {k: round(v, 1) for k, v in self.handler_cpu_by_event.items()}
        return d


def run_studio_bench(project: Path, *, flows: list[str] | None = None, timeout_s: float = 600.0,
                     size: tuple[int, int] = (1400, 900), recording: bool = True, moving: bool = False,
                     grab: Path | None = None, why: bool = False) -> StudioBenchReport:
    """Replay ``project`` in the studio (offscreen unless a platform is set) and measure.

    ``recording``: a recording goes at the same time (see the module doc);
    ``moving``: replay the moving page's flow (:mod:`studio.moving_page`,
    served on 127.0.0.1) instead of ``project``; ``grab``: save a PNG of the
    window there once the live view painted :data:`GRAB_AFTER_FRAMES` frames
    and :data:`GRAB_AFTER_STEPS` steps finished (or when the run ends); ``why``: a
    :class:`~studio.stall_watch.StallWatch` samples the GUI thread during each
    stall and the report's ``why`` names the longest stalls' causes.

    Raises
    ------
    FileNotFoundError
        No ``steadyhand.yaml`` in ``project``.
    ValueError
        An unknown flow in ``flows``.
    TimeoutError
        The run did not end within ``timeout_s`` seconds.
    """
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import (  # noqa: PLC0415
        QCoreApplication, QElapsedTimer, QEventLoop, Qt, QTimer, qInstallMessageHandler,
    )

    from .app import create_app  # noqa: PLC0415
    from .main_window import MainWindow  # noqa: PLC0415
    from .run_state import RunState  # noqa: PLC0415
    from .warmup import start_warmup  # noqa: PLC0415

    from core.record.events import ForwardKey, ForwardType  # noqa: PLC0415

    from .moving_page import moving_project, serve_moving_page  # noqa: PLC0415
    from .recorder_bridge import default_recorder_factory  # noqa: PLC0415

    project = Path(project)
    if not moving and not (project / "steadyhand.yaml").is_file():
        raise FileNotFoundError(f"{project}: no steadyhand.yaml (not a project folder)")
    tmp = Path(tempfile.mkdtemp(prefix="steadyhand-bench-studio-"))
    server = serve_moving_page() if moving else None
    try:
        if server is not None:
            base = server.__enter__()
            copy = moving_project(tmp / "moving", base, rounds=6)
        else:
            base = None
            copy = tmp / project.resolve().name
            shutil.copytree(project, copy, ignore=shutil.ignore_patterns(".steadyhand"))
        create_app()
        previous = qInstallMessageHandler(_quiet)
        window = MainWindow(copy, close_timeout=20.0)
        names = list(flows or window.flow_names())
        unknown = [n for n in names if n not in window.flow_names()]
        if unknown:
            window.shutdown()
            raise ValueError(f"--flows: unknown {'flow' if len(unknown) == 1 else 'flows'} {', '.join(unknown)} (the project has "
                             f"{', '.join(window.flow_names()) or 'none'})")
        window.fit_screen = False  # measured at the size asked for, not the offscreen screen's 800 x 800
        window.resize(*size)
        window.show()
        steps, results, latencies = [0], {}, []
        live = window.live_view
        painted0, received0 = live.frames_painted, window.bridge.frames_received
        grabbed = [grab is None]

        def on_frame(frame: object) -> None:
            latencies.append((time.monotonic() - frame.received) * 1000.0)  # type: ignore[attr-defined]
            if not grabbed[0] and live.frames_painted - painted0 >= GRAB_AFTER_FRAMES and steps[0] >= GRAB_AFTER_STEPS:
                grabbed[0] = True
                QTimer.singleShot(0, grab_now)

        def grab_now() -> None:  # the bench's own picture: its time is no stall of the studio's
            window.grab().save(str(grab))
            last[0], last[1] = clock.nsecsElapsed() / 1e6, time.thread_time() * 1000.0

        window.bridge.screencast_frame.connect(on_frame)
        window.bridge.step_finished.connect(lambda _e: steps.__setitem__(0, steps[0] + 1))
        window.bridge.flow_finished.connect(lambda e: results.__setitem__(e.result.flow, e.result.status))
        bridge, cpu = window.bridge, [0.0]

        costliest = [""]

        by_event: dict[str, float] = {}

        def timed(event: object) -> None:  # the bridge's own dispatch, with the GUI thread's CPU time taken
            t = time.thread_time()
            dispatch(event)  # type: ignore[arg-type]
            ms = (time.thread_time() - t) * 1000.0
            name = type(event).__name__
            by_event[name] = max(by_event.get(name, 0.0), ms)
            if ms > cpu[0]:
                cpu[0], costliest[0] = ms, name

        def timed_frame() -> None:  # the same for a decoded live frame handed to the live view
            t = time.thread_time()
            bridge._deliver_frame()
            ms = (time.thread_time() - t) * 1000.0
            handover.append(ms)
            if ms > cpu[0]:
                cpu[0], costliest[0] = ms, "a live frame"

        handover: list[float] = []
        paints: list[float] = []
        paint = live.paintEvent

        def timed_paint(event: object) -> None:  # the live view's paint of a new frame, GUI-thread CPU
            before, t = live.frames_painted, time.thread_time()
            paint(event)  # type: ignore[arg-type]
            if live.frames_painted != before:
                paints.append((time.thread_time() - t) * 1000.0)

        live.paintEvent = timed_paint  # type: ignore[method-assign]

        dispatch = bridge._dispatch
        bridge._dispatch = timed  # type: ignore[method-assign]  # the bridge's batches call it per event
        bridge._frame_ready.disconnect(bridge._deliver_frame)
        bridge._frame_ready.connect(timed_frame, Qt.ConnectionType.QueuedConnection)
        recorder = window.recorder_dock.bridge
        rec_frames, rec_steps = [0], [0]
        recorder.live_frame.connect(lambda _e, _img: rec_frames.__setitem__(0, rec_frames[0] + 1))
        recorder.step_recorded.connect(lambda _e, _img: rec_steps.__setitem__(0, rec_steps[0] + 1))
        keys = QTimer()
        keys.setInterval(RECORDING_INPUT_MS)
        typed = [0]

        def keystroke() -> None:  # Tab to the page's first field, then type into it, slowly
            recorder.send(ForwardKey("Tab") if typed[0] == 0 else ForwardType("abcdefghij"[typed[0] % 10]))
            typed[0] += 1

        keys.timeout.connect(keystroke)

        clock = QElapsedTimer()
        longest, beats, last, busy = [0.0], [0], [0.0, 0.0], [0.0]
        gaps: list[float] = []
        watch = None
        if why:
            from .stall_watch import StallWatch  # noqa: PLC0415

            watch = StallWatch()

        def beat() -> None:
            now, cpu_now = clock.nsecsElapsed() / 1e6, time.thread_time() * 1000.0
            if watch is not None:
                watch.beat()
            if beats[0]:
                gaps.append(now - last[0])
                if now - last[0] > longest[0]:
                    longest[0], busy[0] = now - last[0], cpu_now - last[1]
            last[0], last[1] = now, cpu_now
            beats[0] += 1

        heart = QTimer()
        heart.setInterval(HEARTBEAT_MS)
        heart.timeout.connect(beat)
        for _ in range(20):  # let the window lay out before measuring
            QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
        # as the studio does once its window shows (studio.app.main); joined here: a person does not start a
        # run in the second after the window opened, and the bench measures the run, not the start-up
        start_warmup().join(120.0)
        floor = _start_floor()
        clock.start()
        heart.start()
        if watch is not None:
            watch.start()
        modules0 = set(sys.modules)
        if recording:  # as the Recorder does, without its dock (one browser at a time in the live view)
            recorder.open(window.project, "bench_recording", base, default_recorder_factory, headless=True)
            started = QEventLoop()  # the recording goes before the run starts: both go at once all the run
            recorder.recording_started.connect(started.quit)
            recorder.recorder_error.connect(started.quit)
            QTimer.singleShot(int(RECORDING_START_S * 1000), started.quit)
            started.exec()
            keys.start()
        t0, gui_cpu0 = time.monotonic(), time.thread_time()
        if not window.start_run(tuple(names)):
            window.shutdown()
            raise RuntimeError("the studio could not start the run (see the status bar message)")
        loop = QEventLoop()  # the studio's own event loop, as in app.exec()
        window.run_state_changed.connect(lambda state: loop.quit() if state == RunState.FINISHED.value else None)
        QTimer.singleShot(int(timeout_s * 1000), loop.quit)
        if window.state is not RunState.FINISHED:
            loop.exec()
        seconds = time.monotonic() - t0
        gui_cpu = (time.thread_time() - gui_cpu0) / seconds * 100.0 if seconds > 0 else 0.0
        if window.state is not RunState.FINISHED:
            window.shutdown()
            raise TimeoutError(f"the run did not end within {timeout_s:.0f} s")
        heart.stop()
        floor_figures = _stop_floor(floor)
        keys.stop()
        if watch is not None:
            watch.stop()
        painted, received = live.frames_painted - painted0, window.bridge.frames_received - received0
        if not grabbed[0]:
            window.grab().save(str(grab))
        window.shutdown()
        window.deleteLater()
        stall = max(0.0, longest[0] - HEARTBEAT_MS)
        late = sorted(max(0.0, g - HEARTBEAT_MS) for g in gaps)
        p99 = late[min(len(late) - 1, int(len(late) * 0.99))] if late else 0.0
        qInstallMessageHandler(previous)
        lat = sorted(latencies)
        latency = (lat[len(lat) // 2], lat[-1]) if lat else (0.0, 0.0)
        med_max = lambda xs: (sorted(xs)[len(xs) // 2], max(xs)) if xs else (0.0, 0.0)  # noqa: E731
        per_s = (lambda n: n / seconds) if seconds > 0 else (lambda n: 0.0)
        return StudioBenchReport(stall, per_s(painted), steps[0], painted, seconds, names, results, beats[0], cpu[0],
                                 busy[0], os.getloadavg()[0], per_s(received), received, latency,
                                 "moving" if moving else "project", recording, rec_frames[0], rec_steps[0],
                                 costliest[0], med_max(handover), med_max(paints), lateness_p99_ms=p99,
                                 handler_cpu_by_event=dict(sorted(by_event.items(), key=lambda kv: -kv[1])),
                                 why=_why(watch, sorted(set(sys.modules) - modules0)) if watch is not None else "",
                                 floor_stall_ms=floor_figures[0], floor_p99_ms=floor_figures[1],
                                 gui_cpu_percent=gui_cpu)
    finally:
        if server is not None:
            server.__exit__(None, None, None)
        shutil.rmtree(tmp, ignore_errors=True)


def _start_floor() -> object:
    """The floor probe (:mod:`studio.stall_floor`) started in its own process, or None when it cannot start."""
    import subprocess  # noqa: PLC0415

    from core.domain.resources import module_name  # noqa: PLC0415

    try:
        return subprocess.Popen([sys.executable, "-m", module_name("studio.stall_floor")], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True, env=dict(os.environ))
    except OSError:
        return None


def _stop_floor(proc: object) -> tuple[float | None, float | None]:
    """Close the probe's input and read its figures: (longest stall ms, p99 lateness ms), or (None, None)."""
    import subprocess  # noqa: PLC0415

    if not isinstance(proc, subprocess.Popen):
        return (None, None)
    try:
        out, _ = proc.communicate("", timeout=30)
        doc = json.loads(out.strip().splitlines()[-1])
        return (float(doc["stall_ms"]), float(doc["p99_ms"]))
    except (subprocess.TimeoutExpired, ValueError, IndexError, KeyError):
        proc.kill()
        return (None, None)


def _why(watch: object, imported: list[str]) -> str:
    from .stall_watch import format_stalls  # noqa: PLC0415

    # a module imported while the run goes costs the importing thread (and the GIL) its loading, and
    # PySide's import hook reads its source (inspect.getsource) to look for PySide use
    head = f"modules imported while the run went: {len(imported)}" + (
        f" ({', '.join(imported[:40])}{', ...' if len(imported) > 40 else ''})" if imported else "")
    return head + "\n" + format_stalls(watch.stalls)  # type: ignore[attr-defined]


def _quiet(mode: object, context: object, message: str) -> None:
    """Qt messages, minus the offscreen platform's notice that it cannot propagate size hints."""
    if "propagateSizeHints" not in message:
        print(message, file=sys.stderr)


def format_report(r: StudioBenchReport) -> str:
    """The figures as a few lines of text, with the goals."""
    ok = lambda good: "ok" if good else "MISSED"  # noqa: E731
    page = "the moving page" if r.page == "moving" else "the project's pages"
    rec = (f"; a recording went at the same time ({r.recording_frames} live frames, {r.recording_steps} steps "
           f"recorded)" if r.recording else "; no recording")
    lines = [
        f"studio replay of {', '.join(r.flows)} on {page}: {r.steps} steps in {r.seconds:.1f} s "
        f"({', '.join(f'{k} {v}' for k, v in r.results.items())}){rec}",
        f"  longest GUI event-loop stall  {r.stall_ms:7.1f} ms   (goal <= {GOAL_STALL_MS:.0f} ms: "
        f"{ok(r.stall_ms <= GOAL_STALL_MS)}; {r.beats} heartbeats of {HEARTBEAT_MS} ms)",
        f"  heartbeat lateness, p99       {r.lateness_p99_ms:7.1f} ms   (the GUI thread was busy {r.gui_cpu_percent:.0f}% "
        f"of the run: CPU time over wall time)",
        (f"  floor: an empty event loop    {r.floor_stall_ms:7.1f} ms longest, {r.floor_p99_ms:.1f} ms p99 (its own "
         f"process, the same heartbeat at the same time: what the machine's load alone costs)"
         if r.floor_stall_ms is not None else "  floor: the empty event loop's probe did not report"),
        f"  live frames received per s    {r.fps_received:7.2f}      ({r.frames_received} screencast frames of "
        f"1280x800 from Chromium, which sends one when the page repaints)",
        f"  live view frames per second   {r.fps:7.2f}      (goal >= {GOAL_FPS:.0f}: {ok(r.fps >= GOAL_FPS)}; "
        f"{r.frames} frames painted)",
        f"  frame latency, engine to GUI  {r.latency_ms[0]:7.1f} ms median, {r.latency_ms[1]:.1f} ms longest "
        f"(decoded off the GUI thread)",
        f"  GUI-thread CPU per live frame {r.frame_handover_ms[0] + r.frame_paint_ms[0]:7.1f} ms median "
        f"(hand-over {r.frame_handover_ms[0]:.1f}, paint {r.frame_paint_ms[0]:.1f}; longest {r.frame_handover_ms[1]:.1f} "
        f"and {r.frame_paint_ms[1]:.1f} ms; goal <= {GOAL_STALL_MS:.0f} ms: "
        f"{ok(r.frame_handover_ms[1] <= GOAL_STALL_MS and r.frame_paint_ms[1] <= GOAL_STALL_MS)})",
        f"  context: the GUI thread ran {r.stall_cpu_ms:.1f} ms of CPU during that stall (the rest it waited for "
        f"a core or the GIL); most GUI-thread CPU time on one engine event {r.handler_cpu_ms:.1f} ms "
        f"({r.handler_event or 'none'}); "
        f"load average {r.load_average:.1f} on {os.cpu_count()} cores",
    ]
    if r.why:
        costly = ", ".join(f"{k} {v:.1f}" for k, v in list(r.handler_cpu_by_event.items())[:6])
        lines += [f"  most GUI-thread CPU ms on one event, by event: {costly or 'none'}",
                  "why (the longest stalls, sampled):", r.why]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="steadyhand bench studio", description=__doc__.splitlines()[0])
    p.add_argument("--project", default="projects/demo", help="project to replay (default projects/demo)")
    p.add_argument("--flows", nargs="+", metavar="FLOW", help="flows to replay (default: all)")
    p.add_argument("--timeout-s", type=float, default=600.0, help="give up after this many seconds (default 600)")
    p.add_argument("--json", metavar="PATH", help='write {"stall_ms", "fps", "fps_received", "steps", ...} here')
    p.add_argument("--moving", action="store_true",
                   help="replay a flow on a page that repaints all the time (served on 127.0.0.1) instead of --project")
    p.add_argument("--no-recording", action="store_true", help="no recording at the same time as the run")
    p.add_argument("--grab", metavar="PNG", help="save a picture of the studio during the run here")
    p.add_argument("--why", action="store_true",
                   help="sample the GUI thread's stack during each stall and print what it was doing")
    ns = p.parse_args(argv)
    try:
        report = run_studio_bench(Path(ns.project), flows=ns.flows, timeout_s=ns.timeout_s,
                                  recording=not ns.no_recording, moving=ns.moving,
                                  grab=Path(ns.grab) if ns.grab else None, why=ns.why)
    except (FileNotFoundError, ValueError) as exc:
        print(f"steadyhand: error: {exc}", file=sys.stderr)
        return 2
    except TimeoutError as exc:
        print(f"steadyhand: error: {exc}", file=sys.stderr)
        return 3
    print(format_report(report), file=sys.stderr if ns.json == "-" else sys.stdout)
    if ns.json:
        from core.cliopts import write_json

        write_json(ns.json, report.to_json_dict())  # '-': standard output holds the JSON alone
    return 0


if __name__ == "__main__":
    sys.exit(main())
