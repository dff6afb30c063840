"""``steadyhand bench studio``: the studio replays a project offscreen; how long did the GUI thread stall?

Builds the real :class:`~studio.main_window.MainWindow` (real engine thread,
Playwright, Chromium) over a temporary copy of the project (its store and
baselines stay untouched), starts every flow (or ``--flows``), and measures
until the run ends:

``stall_ms``
    the longest stall of the GUI event loop: a heartbeat ``QTimer`` fires
    every :data:`HEARTBEAT_MS` (10 ms); the longest gap between two beats,
    minus that interval, is how long the loop could not run (goal <= 50 ms);
``fps``
    live-view frames per second: screenshots the live view was given to
    show (the bridge's ``observation_made`` with a decoded image) per second
    of the run (goal >= 5);
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

__all__ = ["HEARTBEAT_MS", "StudioBenchReport", "run_studio_bench", "format_report", "main"]

#: Interval of the heartbeat timer, ms: a gap longer than this is a stall of the event loop.
HEARTBEAT_MS = 10
#: Goals of the engine bridge: the longest stall (ms) and the live view's frames per second.
GOAL_STALL_MS, GOAL_FPS = 50.0, 5.0


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

    def to_json_dict(self) -> dict[str, object]:
        d = asdict(self)
        d["stall_ms"], d["fps"], d["seconds"] = round(self.stall_ms, 1), round(self.fps, 2), round(self.seconds, 2)
        d["handler_cpu_ms"], d["load_average"] = round(self.handler_cpu_ms, 1), round(self.load_average, 2)
        d["stall_cpu_ms"] = round(self.stall_cpu_ms, 1)
        return d


def run_studio_bench(project: Path, *, flows: list[str] | None = None, timeout_s: float = 600.0,
                     size: tuple[int, int] = (1400, 900)) -> StudioBenchReport:
    """Replay ``project`` in the studio (offscreen unless a platform is set) and measure.

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

    project = Path(project)
    if not (project / "steadyhand.yaml").is_file():
        raise FileNotFoundError(f"{project}: no steadyhand.yaml (not a project folder)")
    tmp = Path(tempfile.mkdtemp(prefix="steadyhand-bench-studio-"))
    try:
        copy = tmp / project.resolve().name
        shutil.copytree(project, copy, ignore=shutil.ignore_patterns(".steadyhand"))
        create_app()
        previous = qInstallMessageHandler(_quiet)
        window = MainWindow(copy, close_timeout=20.0)
        names = list(flows or window.flow_names())
        unknown = [n for n in names if n not in window.flow_names()]
        if unknown:
            window.shutdown()
            raise ValueError(f"--flows: unknown flow(s) {', '.join(unknown)} (the project has "
                             f"{', '.join(window.flow_names()) or 'none'})")
        window.resize(*size)
        window.show()
        frames, steps, results = [0], [0], {}
        window.bridge.observation_made.connect(lambda _e, img: frames.__setitem__(0, frames[0] + (not img.isNull())))
        window.bridge.step_finished.connect(lambda _e: steps.__setitem__(0, steps[0] + 1))
        window.bridge.flow_finished.connect(lambda e: results.__setitem__(e.result.flow, e.result.status))
        bridge, cpu = window.bridge, [0.0]

        def timed(event: object) -> None:  # the bridge's own dispatch, with the GUI thread's CPU time taken
            t = time.thread_time()
            bridge._dispatch(event)  # type: ignore[arg-type]
            cpu[0] = max(cpu[0], (time.thread_time() - t) * 1000.0)

        bridge._incoming.disconnect(bridge._dispatch)
        bridge._incoming.connect(timed, Qt.ConnectionType.QueuedConnection)

        clock = QElapsedTimer()
        longest, beats, last, busy = [0.0], [0], [0.0, 0.0], [0.0]

        def beat() -> None:
            now, cpu_now = clock.nsecsElapsed() / 1e6, time.thread_time() * 1000.0
            if beats[0] and now - last[0] > longest[0]:
                longest[0], busy[0] = now - last[0], cpu_now - last[1]
            last[0], last[1] = now, cpu_now
            beats[0] += 1

        heart = QTimer()
        heart.setInterval(HEARTBEAT_MS)
        heart.timeout.connect(beat)
        for _ in range(20):  # let the window lay out before measuring
            QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
        clock.start()
        heart.start()
        t0 = time.monotonic()
        if not window.start_run(tuple(names)):
            window.shutdown()
            raise RuntimeError("the studio could not start the run (see the status bar message)")
        loop = QEventLoop()  # the studio's own event loop, as in app.exec()
        window.run_state_changed.connect(lambda state: loop.quit() if state == RunState.FINISHED.value else None)
        QTimer.singleShot(int(timeout_s * 1000), loop.quit)
        if window.state is not RunState.FINISHED:
            loop.exec()
        seconds = time.monotonic() - t0
        if window.state is not RunState.FINISHED:
            window.shutdown()
            raise TimeoutError(f"the run did not end within {timeout_s:.0f} s")
        heart.stop()
        window.shutdown()
        window.deleteLater()
        stall = max(0.0, longest[0] - HEARTBEAT_MS)
        qInstallMessageHandler(previous)
        return StudioBenchReport(stall, frames[0] / seconds if seconds > 0 else 0.0, steps[0], frames[0], seconds,
                                 names, results, beats[0], cpu[0], busy[0], os.getloadavg()[0])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _quiet(mode: object, context: object, message: str) -> None:
    """Qt messages, minus the offscreen platform's notice that it cannot propagate size hints."""
    if "propagateSizeHints" not in message:
        print(message, file=sys.stderr)


def format_report(r: StudioBenchReport) -> str:
    """The figures as a few lines of text, with the goals."""
    ok = lambda good: "ok" if good else "MISSED"  # noqa: E731
    lines = [
        f"studio replay of {', '.join(r.flows)}: {r.steps} steps in {r.seconds:.1f} s "
        f"({', '.join(f'{k} {v}' for k, v in r.results.items())})",
        f"  longest GUI event-loop stall  {r.stall_ms:7.1f} ms   (goal <= {GOAL_STALL_MS:.0f} ms: "
        f"{ok(r.stall_ms <= GOAL_STALL_MS)}; {r.beats} heartbeats of {HEARTBEAT_MS} ms)",
        f"  live view frames per second   {r.fps:7.2f}      (goal >= {GOAL_FPS:.0f}: {ok(r.fps >= GOAL_FPS)}; "
        f"{r.frames} frames)",
        f"  context: the GUI thread ran {r.stall_cpu_ms:.1f} ms of CPU during that stall (the rest it waited for "
        f"a core or the GIL); most GUI-thread CPU time on one engine event {r.handler_cpu_ms:.1f} ms; "
        f"load average {r.load_average:.1f} on {os.cpu_count()} cores",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="steadyhand bench studio", description=__doc__.splitlines()[0])
    p.add_argument("--project", default="projects/demo", help="project to replay (default projects/demo)")
    p.add_argument("--flows", nargs="+", metavar="FLOW", help="flows to replay (default: all)")
    p.add_argument("--timeout-s", type=float, default=600.0, help="give up after this many seconds (default 600)")
    p.add_argument("--json", metavar="PATH", help='write {"stall_ms", "fps", "steps", ...} here')
    ns = p.parse_args(argv)
    try:
        report = run_studio_bench(Path(ns.project), flows=ns.flows, timeout_s=ns.timeout_s)
    except (FileNotFoundError, ValueError) as exc:
        print(f"steadyhand: error: {exc}", file=sys.stderr)
        return 2
    except TimeoutError as exc:
        print(f"steadyhand: error: {exc}", file=sys.stderr)
        return 3
    print(format_report(report))
    if ns.json:
        Path(ns.json).write_text(json.dumps(report.to_json_dict(), indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
