"""The run process of a ``bench faults`` case: ``python -m core.bench.faults_child run PROJECT ...`` runs
``steadyhand run ...`` in this process, with the faults its environment asks for.

Environment (read once at start; absent: the command runs as it is):

``STEADYHAND_FAULT_KILL=<flow>:<step>:<phase>``
    kill -9 of this process, its browser and every process below it when the
    engine enters ``phase`` (one of :data:`KILL_PHASES`) of step ``step``
    (0-based) of ``flow`` - or of the first later step that reaches that phase
    (a resume replays earlier steps: those never trigger it).  The point is the
    kernel's own announcement of the phase (:class:`core.engine.events.PhaseChanged`,
    emitted right before the phase runs; ``record`` is announced before the
    outcome is stored), seen by wrapping the executor's event sink: no kernel
    code knows about it.
``STEADYHAND_FAULT_BREAK=no-in-flight-marker``
    a deliberately broken engine, to show the bench can fail: the ``act``
    phase no longer commits that an action is under way
    (:func:`core.engine.acting.note_acting` does nothing), so a resume cannot
    tell a step killed after its action from one killed before it.

Nothing else is patched: the store, the browser, the disk are the real ones
(a full disk is a real small filesystem the bench mounts, :mod:`core.bench.faults`).
"""
from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

__all__ = ["KILL_ENV", "BREAK_ENV", "KILL_PHASES", "BREAKS", "parse_kill", "main"]

#: The environment variable naming the kill point.
KILL_ENV = "STEADYHAND_FAULT_KILL"
#: The environment variable naming a deliberate engine defect.
BREAK_ENV = "STEADYHAND_FAULT_BREAK"
#: The phases a kill point may name (the kernel's, :data:`core.engine.events.PHASES`, that every step with a
#: target goes through; ``resolve`` is skipped by a step without one).
KILL_PHASES = ("observe", "resolve", "act", "settle", "verify", "record")
#: The engine defects :data:`BREAK_ENV` may name.
BREAKS = ("no-in-flight-marker",)


def parse_kill(text: str) -> tuple[str, int, str]:
    """``"leave_request:10:settle"`` -> ``("leave_request", 10, "settle")``.

    Raises
    ------
    ValueError
        Not three parts, a step that is not a non-negative integer, or a phase not in :data:`KILL_PHASES`.
    """
    parts = text.rsplit(":", 2)
    if len(parts) != 3 or not parts[1].isdigit() or parts[2] not in KILL_PHASES:
        raise ValueError(f"{KILL_ENV}={text!r}: expected FLOW:STEP:PHASE, PHASE one of {', '.join(KILL_PHASES)}")
    return parts[0], int(parts[1]), parts[2]


def _descendants(pid: int) -> list[int]:
    """Process ids below ``pid`` (from /proc)."""
    children: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(d.name))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def _die() -> None:
    """kill -9 of everything below this process, then of this process (no ``finally``, no ``atexit`` runs)."""
    for p in _descendants(os.getpid()):
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass
    os.kill(os.getpid(), signal.SIGKILL)


def _install_kill(flow: str, step: int, phase: str) -> None:
    from core.engine import executor
    from core.engine.events import PhaseChanged

    init = executor.FlowExecutor.__init__

    def wrapped(self: Any, *args: Any, emit: Any, **kwargs: Any) -> None:
        def emit_or_die(event: Any) -> None:
            if (isinstance(event, PhaseChanged) and event.flow == flow and event.index >= step
                    and event.phase == phase):
                _die()
            emit(event)

        init(self, *args, emit=emit_or_die, **kwargs)

    executor.FlowExecutor.__init__ = wrapped  # type: ignore[method-assign]


def _install_break(name: str) -> None:
    if name == "no-in-flight-marker":
        from core.engine import pipeline

        pipeline.note_acting = lambda ex, ctx: None  # type: ignore[assignment]


def main(argv: list[str]) -> int:
    """``<steadyhand arguments...>`` (e.g. ``run PROJECT --flow F``); returns the command's exit code."""
    if not argv:
        print("usage: python -m core.bench.faults_child run PROJECT ...", file=sys.stderr)
        return 2
    kill, broken = os.environ.get(KILL_ENV, ""), os.environ.get(BREAK_ENV, "")
    if broken and broken not in BREAKS:
        print(f"{BREAK_ENV}={broken!r}: expected one of {', '.join(BREAKS)}", file=sys.stderr)
        return 2
    try:
        point = parse_kill(kill) if kill else None
    except ValueError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    if point is not None:
        _install_kill(*point)
    if broken:
        _install_break(broken)
    import runpy

    from core.domain.resources import module_name

    sys.argv = ["steadyhand", *argv]
    try:
        runpy.run_module(module_name("core.cli"), run_name="__main__")  # the command line as it is, in this process
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
