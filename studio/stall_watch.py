"""Why the GUI thread stalls: a watchdog that samples the GUI thread while its heartbeat is late.

``steadyhand bench studio --why`` uses it.  The GUI thread calls
:meth:`StallWatch.beat` from a heartbeat timer (every few ms).  A watchdog
thread wakes every :data:`SAMPLE_MS` ms; while the last beat is older than
``threshold_ms`` it takes the GUI thread's Python stack
(``sys._current_frames()``) and reads, from Linux's ``/proc/self/task/<tid>/schedstat``,
how long the GUI thread ran on a core and how long it waited for one.  When
the next beat comes, the stall is closed as a :class:`Stall`: its length,
the GUI thread's CPU and run-queue wait during it, the garbage collections
that ran in it (``gc.callbacks``), the CPU every other thread of the process
used in it (which of them held the GIL or the cores), and the stack samples
counted by their innermost frames.

A stall with little CPU and little run-queue wait of the GUI thread is the
GUI thread waiting for the GIL (or a lock); much run-queue wait is the
machine's load; much CPU is the GUI thread's own work, which the samples
name.  Python frames only: a sample whose innermost Python frame is the
event loop's ``exec`` is C++ work of Qt (painting, layout) or GIL waiting.
"""
from __future__ import annotations

import gc
import os
import sys
import threading
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from core.progress import counted

__all__ = ["SAMPLE_MS", "Stall", "StallWatch", "format_stalls"]

#: How often (ms) the watchdog looks at the heartbeat (and samples the GUI thread during a stall).
SAMPLE_MS = 5.0
#: Frames of a stack kept in one sample (innermost last).
STACK_DEPTH = 12


@dataclass
class Stall:
    """One stall: ``at_s`` (s since the watch started) of the beat before it, ``ms`` from that beat to the beat after it; ``cpu_ms``/``queue_ms`` the GUI thread's
    time on a core / waiting for a core in it (None where schedstat is not readable); ``gc_ms`` the garbage
    collections in it; ``threads`` CPU ms of the other threads (name -> ms); ``samples`` the stacks seen."""

    at_s: float
    ms: float
    cpu_ms: float | None = None
    queue_ms: float | None = None
    gc_ms: float = 0.0
    threads: dict[str, float] = field(default_factory=dict)
    waiting: dict[str, float] = field(default_factory=dict)
    samples: Counter[tuple[str, ...]] = field(default_factory=Counter)


def _schedstat(tid: int) -> tuple[float, float] | None:
    """(ms on a core, ms waiting for one) of thread ``tid`` of this process, or None (not Linux, gone)."""
    try:
        with open(f"/proc/self/task/{tid}/schedstat", encoding="ascii") as f:
            run, wait, _n = f.read().split()
        return int(run) / 1e6, int(wait) / 1e6
    except (OSError, ValueError):
        return None


class StallWatch:
    """Samples the GUI thread while it does not beat; see the module docstring.

    Build and :meth:`start` it on the GUI thread (its thread is the one
    watched); call :meth:`beat` from the heartbeat; :meth:`stop` joins the
    watchdog (up to 1 s).  :attr:`stalls` lists the stalls longer than
    ``threshold_ms`` (ms; 40 by default: below the 50 ms bar of issue 20).
    """

    def __init__(self, threshold_ms: float = 40.0) -> None:
        self.threshold_ms = threshold_ms
        self.gui_ident = threading.get_ident()
        self.gui_tid = threading.get_native_id()
        self.stalls: list[Stall] = []
        self._last = time.monotonic()
        self._t0 = self._last
        self._gc_start: float | None = None
        self._gc_ms = 0.0
        self._open: Stall | None = None
        self._open_base: tuple[tuple[float, float] | None, dict[int, tuple[float, float]], float] | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._main, name="stall-watch", daemon=True)

    def start(self) -> None:
        gc.callbacks.append(self._on_gc)
        self._last = time.monotonic()
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(1.0)
        if self._on_gc in gc.callbacks:
            gc.callbacks.remove(self._on_gc)

    def beat(self) -> None:
        """The GUI thread is running (call from its heartbeat)."""
        now = time.monotonic()
        with self._lock:
            self._last = now
            stall, base = self._open, self._open_base
            self._open = self._open_base = None
        if stall is None or base is None:
            return
        sched0, cpu0, gc0 = base
        stall.ms = (now - self._t0 - stall.at_s) * 1000.0
        sched1 = _schedstat(self.gui_tid)
        if sched0 is not None and sched1 is not None:
            stall.cpu_ms, stall.queue_ms = sched1[0] - sched0[0], sched1[1] - sched0[1]
        stall.gc_ms = self._gc_ms - gc0
        names = {t.native_id: t.name for t in threading.enumerate()}
        for tid, (ms, queued) in _threads_cpu().items():
            used, waited = ms - cpu0.get(tid, (0.0, 0.0))[0], queued - cpu0.get(tid, (0.0, 0.0))[1]
            name = names.get(tid, f"thread {tid}")
            if tid != self.gui_tid and used >= 1.0:
                stall.threads[name] = round(used, 1)
            if tid != self.gui_tid and waited >= 5.0:
                stall.waiting[name] = round(waited, 1)
        self.stalls.append(stall)

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_start = time.perf_counter()
        elif self._gc_start is not None:
            self._gc_ms += (time.perf_counter() - self._gc_start) * 1000.0
            self._gc_start = None

    def _main(self) -> None:
        while not self._stop.wait(SAMPLE_MS / 1000.0):
            now = time.monotonic()
            with self._lock:
                late = (now - self._last) * 1000.0
                if late < self.threshold_ms:
                    continue
                if self._open is None:
                    self._open = Stall(at_s=self._last - self._t0, ms=late)
                    self._open_base = (_schedstat(self.gui_tid), _threads_cpu(), self._gc_ms)
                stall = self._open
            frame = sys._current_frames().get(self.gui_ident)  # noqa: SLF001 - a diagnostic, on purpose
            if frame is None:
                continue
            stack = tuple(f"{os.path.basename(fs.filename)}:{fs.lineno} {fs.name}"
                          for fs in traceback.extract_stack(frame)[-STACK_DEPTH:])
            stall.samples[stack] += 1


def _threads_cpu() -> dict[int, tuple[float, float]]:
    """(ms on a core, ms waiting for one) of every thread of this process (native id ->), from schedstat."""
    out: dict[int, tuple[float, float]] = {}
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return out
    for t in tids:
        s = _schedstat(int(t))
        if s is not None:
            out[int(t)] = s
    return out


def format_stalls(stalls: list[Stall], top: int = 8) -> str:
    """The ``top`` longest stalls, each with its GUI-thread CPU, run-queue wait, GC, busy threads and stacks."""
    if not stalls:
        return "no stall longer than the threshold"
    lines = []
    for s in sorted(stalls, key=lambda s: -s.ms)[:top]:
        cpu = f"{s.cpu_ms:.0f}" if s.cpu_ms is not None else "?"
        queue = f"{s.queue_ms:.0f}" if s.queue_ms is not None else "?"
        waits = ", ".join(f"{k} {v:.0f}" for k, v in sorted(s.waiting.items(), key=lambda kv: -kv[1])[:6])
        busy = ", ".join(f"{k} {v:.0f}" for k, v in sorted(s.threads.items(), key=lambda kv: -kv[1])[:6])
        lines.append(f"stall of {s.ms:.0f} ms at {s.at_s:.1f} s: GUI thread on a core {cpu} ms, waiting for a "
                     f"core {queue} ms, garbage collection {s.gc_ms:.0f} ms; other threads' CPU ms: {busy or 'none'}; "
                     f"their ms waiting for a core: {waits or 'none'} (one preempted while it held the GIL holds "
                     f"up every thread of the process)")
        for stack, n in s.samples.most_common(3):
            lines.append(f"  {counted(n, 'sample')}:")
            lines.extend(f"    {f}" for f in stack[-8:])
    return "\n".join(lines)
