"""A runner (the engine's or the recorder's) in a child process of a front end: ``python -m core.engine.child``.

The studio starts ``python -m core.engine.child --fd N`` with one end of a
socket pair as file descriptor ``N`` (``studio.engine_process``).  Over it
go pickled Python objects (``multiprocessing.connection.Connection``
framing): first ``(kind, args)`` - ``("engine", (project, headless))`` or
``("recorder", (project, flow_name, url, headless))`` - then the typed
commands of ``core.engine.events`` / ``core.record.events``, each put on the
runner's queue as ``runner.send`` would; the runner's events go back the
same way, from whatever thread emits them.  The string ``"close"`` (or the
front end going away) closes the runner and ends the process.

No Qt here: the child is a plain interpreter; the front end's GUI thread
never shares a GIL with the run.  Exit 0 when closed, 2 for bad arguments.
"""
from __future__ import annotations

import argparse
import sys
import threading
from typing import Any, Callable

from core.engine.events import EngineError
from core.engine.heap import freeze_startup

__all__ = ["CLOSE", "build_runner", "serve", "main"]

#: The close request (a string: no command of the engine or the recorder is one).
CLOSE = "close"
#: Seconds the runner gets to close (its run stopped, its browser closed) once the front end asked.
CLOSE_TIMEOUT_S = 30.0


def build_runner(kind: str, args: tuple[Any, ...], on_event: Callable[[Any], None]) -> Any:
    """``EngineRunner(project, on_event=..., headless=...)`` for ``"engine"``, ``RecorderRunner(project,
    flow_name=..., url=..., on_event=..., headless=...)`` for ``"recorder"``.

    Raises
    ------
    ValueError
        Another ``kind``.
    """
    if kind == "engine":
        from core.engine.runner import EngineRunner  # noqa: PLC0415

        project, headless = args
        return EngineRunner(project, on_event=on_event, headless=headless)
    if kind == "recorder":
        from core.record.runner import RecorderRunner  # noqa: PLC0415

        project, flow_name, url, headless = args
        return RecorderRunner(project, flow_name=flow_name, url=url, on_event=on_event, headless=headless)
    raise ValueError(f"unknown runner kind {kind!r}")


def serve(conn: Any) -> None:
    """Read ``(kind, args)`` from ``conn``, run that runner, pass commands in and events out until closed."""
    kind, args = conn.recv()
    lock = threading.Lock()

    def emit(event: Any) -> None:  # the runner's thread and its helpers
        try:
            with lock:
                conn.send(event)
        except (OSError, ValueError):
            pass  # the front end is gone
        except Exception as exc:  # noqa: BLE001 - an event that does not pickle: say so instead of losing it
            with lock:
                conn.send(EngineError(getattr(event, "run_id", "") or "",
                                      f"an event ({type(event).__name__}) could not reach the studio: {exc}"))

    runner = build_runner(kind, args, emit)
    freeze_startup()  # the process is ours: the runner's modules are not walked by every full collection
    runner.start()
    try:
        while True:
            try:
                command = conn.recv()
            except (EOFError, OSError):
                break
            if isinstance(command, str) and command == CLOSE:
                break
            runner.send(command)
    finally:
        runner.close(timeout=CLOSE_TIMEOUT_S)
        conn.close()


def main(argv: list[str] | None = None) -> int:
    from multiprocessing.connection import Connection  # noqa: PLC0415

    p = argparse.ArgumentParser(prog="python -m core.engine.child", description=__doc__.splitlines()[0])
    p.add_argument("--fd", type=int, required=True, help="file descriptor of the front end's socket")
    ns = p.parse_args(argv)
    serve(Connection(ns.fd))
    return 0


if __name__ == "__main__":
    sys.exit(main())
