"""Takeover without the studio: ``steadyhand run --on-escalation wait`` and ``steadyhand handback``.

:class:`WaitControl` is the run control of a command-line run that waits for
a person (or a script) instead of stopping at an escalation: it answers
every escalation that offers it with "take over", keeps the browser open and
announces on stderr::

    takeover: export_report step 4 'Export report' is yours; CDP http://127.0.0.1:PORT (run RUN_ID)
    takeover: hand back with: steadyhand handback PROJECT --as replace|insert|done

The browser's remote-debugging endpoint is bound to 127.0.0.1 (architecture
rule 11).  While it waits, whatever is done on that page - by a script over
CDP (``connect_over_cdp``) or, in a headed run, by hand in the Chromium
window - is recorded as the correction (:mod:`core.engine.takeover`).

``steadyhand handback PROJECT --roll-back`` asks the waiting run to put the
page back as it was before the step (the takeover hands the page over as
the escalation left it and never rolls back by itself); the run says on
stderr what it rolled back, drops the actions recorded until then, and
keeps waiting for the hand-back.

The hand-back is a control file: the waiting run writes
``<project>/.steadyhand/takeover.json`` (run id, flow, step, CDP endpoint,
pid) and polls ``handback.json`` in the same folder, which
:func:`write_handback` (the ``handback`` command) writes atomically.  The
wait is bounded (``--takeover-timeout``, :data:`DEFAULT_TIMEOUT_S`); at the
bound the step ends escalated with the reason "no hand-back within N s".
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable, Mapping

from core.domain import Escalation
from core.engine.control import Answer

__all__ = ["WaitControl", "write_handback", "read_takeover", "HandbackError", "TAKEOVER_FILE", "HANDBACK_FILE",
           "DEFAULT_TIMEOUT_S", "POLL_MS", "add_handback_parser", "handback_command"]

#: Written by the waiting run while a takeover lasts (in the project's run-data folder).
TAKEOVER_FILE = "takeover.json"
#: Written by ``steadyhand handback``; read (and removed) by the waiting run.
HANDBACK_FILE = "handback.json"
#: How long a run waits for a hand-back, s (every wait has a limit).
DEFAULT_TIMEOUT_S = 600.0
#: How often the control file is looked at, ms (the page's events are pumped in between).
POLL_MS = 100
MEANINGS = ("replace", "insert", "done")


class HandbackError(RuntimeError):
    """No run waits for a hand-back (or not the one named); the message says so."""


def _write_json(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=2), encoding="utf-8")
    os.replace(tmp, path)


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


class WaitControl:
    """Run control of ``run --on-escalation wait``: escalations become takeovers that wait for a hand-back.

    Parameters
    ----------
    data_dir : Path
        The project's run-data folder (``.steadyhand/``), where the control files live.
    cdp_endpoint : str
        ``"http://127.0.0.1:<port>"`` of the engine's browser (announced).
    project : str
        The project folder as the user named it (for the hand-back hint).
    timeout_s : float
        Longest wait for a hand-back, s.
    announce : Callable[[str], None]
        Where the lines for the person go (stderr by default).
    """

    def __init__(self, data_dir: Path, *, cdp_endpoint: str, project: str = ".", timeout_s: float = DEFAULT_TIMEOUT_S,
                 announce: Callable[[str], None] | None = None) -> None:
        self.data_dir = Path(data_dir)
        self.cdp_endpoint = cdp_endpoint
        self.project = project
        self.timeout_s = float(timeout_s)
        self.announce = announce or (lambda line: print(line, file=sys.stderr, flush=True))
        self.takeover: Any = None

    def attach_takeover(self, recording: Any) -> None:
        """The recording of the human's actions while the takeover lasts (pumped while waiting)."""
        self.takeover = recording

    def pause_point(self, run_id: str, flow: str, index: int, phase: str) -> None:
        return None

    def escalate(self, escalation: Escalation) -> Answer:
        if "take_over" not in escalation.answers:
            return Answer("stop")
        self.announce(f"takeover: escalated at {escalation.flow} step {escalation.index + 1} "
                      f"'{escalation.step_title}': {escalation.reason}")
        return Answer("take_over")

    def take_over(self, run_id: str, flow: str, index: int) -> Answer:
        """Announce, write the takeover file, and poll for the hand-back up to :attr:`timeout_s`."""
        takeover, handback = self.data_dir / TAKEOVER_FILE, self.data_dir / HANDBACK_FILE
        handback.unlink(missing_ok=True)  # a hand-back written before this takeover is not its answer
        _write_json(takeover, {"run_id": run_id, "flow": flow, "step": index + 1, "cdp": self.cdp_endpoint,
                               "pid": os.getpid()})
        self.announce(f"takeover: {flow} step {index + 1} is yours; CDP {self.cdp_endpoint} (run {run_id})")
        self.announce(f"takeover: hand back with: steadyhand handback {self.project} --as replace|insert|done "
                      "(the page is as the escalation left it; --roll-back puts it back as before the step)")
        deadline = time.monotonic() + self.timeout_s
        try:
            while time.monotonic() < deadline:
                data = _read_json(handback)
                if data is not None and data.get("run_id") == run_id and data.get("roll_back"):
                    handback.unlink(missing_ok=True)  # a request, not the hand-back: the wait goes on
                    roll_back = getattr(self.takeover, "roll_back", None)
                    said = roll_back() if roll_back is not None else None
                    detail = getattr(said, "detail", "") or "nothing was rolled back: the page is not recorded"
                    self.announce(f"takeover: {detail}")
                    continue
                if data is not None and data.get("run_id") == run_id:
                    handback.unlink(missing_ok=True)
                    meaning = data.get("meaning") if data.get("meaning") in MEANINGS else None
                    cont = data.get("continue_from")
                    cont = int(cont) - 1 if isinstance(cont, int) and cont >= 1 else None
                    self.announce(f"takeover: handed back ({meaning or 'no meaning given'})")
                    return Answer("take_over", continue_from=cont, meaning=meaning)
                if self.takeover is not None:
                    self.takeover.pump(POLL_MS)
                else:
                    time.sleep(POLL_MS / 1000.0)
            self.announce(f"takeover: no hand-back within {self.timeout_s:.0f} s; the step ends escalated")
            return Answer("stop", reason=f"no hand-back within {self.timeout_s:.0f} s")
        finally:
            takeover.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    """True when process ``pid`` exists (signal 0); a process of another user counts as alive."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_takeover(data_dir: Path) -> dict[str, Any] | None:
    """The waiting run's takeover file, None when no run waits."""
    return _read_json(Path(data_dir) / TAKEOVER_FILE)


def write_handback(data_dir: Path, meaning: str | None, *, run_id: str | None = None,
                   continue_from: int | None = None, flow_steps: Mapping[str, int] | None = None,
                   roll_back: bool = False) -> dict[str, Any]:
    """Hand back to the run waiting in ``data_dir``; returns its takeover record.

    ``continue_from`` is 1-based (as shown); None lets ``meaning`` decide.
    ``flow_steps`` (flow name -> number of steps) bounds it: 1..N, or N + 1
    to end the flow.  A takeover file left by a process that has ended is
    refused, not answered.  ``roll_back`` writes the request to roll the page
    back to before the step instead (``meaning`` is then not needed); the run
    goes on waiting for its hand-back.

    Raises
    ------
    HandbackError
        No run waits, or ``run_id`` names another one.
    ValueError
        ``meaning`` is not one of replace / insert / done.
    """
    if meaning not in MEANINGS and not roll_back:
        raise ValueError(f"--as must be one of {', '.join(MEANINGS)}, not {meaning!r}")
    waiting = read_takeover(data_dir)
    if waiting is None:
        raise HandbackError(f"{Path(data_dir) / TAKEOVER_FILE}: no run is waiting for a hand-back")
    pid = waiting.get("pid")
    if isinstance(pid, int) and not _alive(pid):
        raise HandbackError(f"{Path(data_dir) / TAKEOVER_FILE}: run {waiting.get('run_id')} is not waiting any more "
                            f"(its process {pid} has ended); nothing was handed back")
    if run_id and waiting.get("run_id") != run_id:
        raise HandbackError(f"run {run_id} is not waiting for a hand-back (run {waiting.get('run_id')} is)")
    steps = (flow_steps or {}).get(str(waiting.get("flow")))
    if continue_from is not None and isinstance(steps, int) and not 1 <= continue_from <= steps + 1:
        raise HandbackError(f"--continue-from {continue_from}: the flow {waiting.get('flow')} has {steps} steps "
                            f"(1..{steps}, or {steps + 1} to end it)")
    if roll_back:
        _write_json(Path(data_dir) / HANDBACK_FILE, {"run_id": waiting.get("run_id"), "roll_back": True})
        return waiting
    data: dict[str, Any] = {"run_id": waiting.get("run_id"), "meaning": meaning}
    if continue_from is not None:
        data["continue_from"] = int(continue_from)
    _write_json(Path(data_dir) / HANDBACK_FILE, data)
    return waiting


def add_handback_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``steadyhand handback PROJECT --as replace|insert|done [--run ID] [--continue-from N]`` and
    ``steadyhand handback PROJECT --roll-back [--run ID]``."""
    h = sub.add_parser("handback", help="hand a waiting run (run --on-escalation wait) back to the engine",
                       description="Say what the manual actions were for; the waiting run re-observes the page, "
                                   "stores them as a correction and continues.")
    h.add_argument("project", help="project folder")
    h.add_argument("--as", dest="meaning", choices=MEANINGS,
                   help="replace the step / insert the actions before it / the step is done (required unless "
                        "--roll-back)")
    h.add_argument("--roll-back", action="store_true",
                   help="put the page back as it was before the step (what you did until then is dropped); the "
                        "run keeps waiting for your hand-back")
    h.add_argument("--run", help="the waiting run's id (default: the one waiting)")
    h.add_argument("--continue-from", type=int, metavar="N", help="continue from step N (1-based)")
    return h


def handback_command(args: argparse.Namespace) -> int:
    """The ``handback`` command; exit 0 when written, 2 when no run waits or the input is bad."""
    from core.exitcodes import EXIT_INPUT, EXIT_OK
    from core.project import ProjectError, load_project

    try:
        project = load_project(args.project, skip_invalid=True)
    except ProjectError as exc:
        print(f"steadyhand: error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    roll_back = bool(getattr(args, "roll_back", False))
    if not roll_back and args.meaning is None:
        print("steadyhand: error: say what your actions were for with --as replace|insert|done "
              "(or ask for --roll-back)", file=sys.stderr)
        return EXIT_INPUT
    if args.continue_from is not None and args.continue_from < 1:
        print(f"steadyhand: error: --continue-from is 1-based, got {args.continue_from}", file=sys.stderr)
        return EXIT_INPUT
    try:
        waiting = write_handback(project.data_dir, args.meaning, run_id=args.run, continue_from=args.continue_from,
                                 flow_steps={name: len(f.steps) for name, f in project.flows.items()},
                                 roll_back=roll_back)
    except (HandbackError, ValueError) as exc:
        print(f"steadyhand: error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    if roll_back:
        print(f"asked run {waiting.get('run_id')} to roll {waiting.get('flow')} step {waiting.get('step')} back; "
              "it says what it did on its error output and keeps waiting for your hand-back")
        return EXIT_OK
    print(f"handed back run {waiting.get('run_id')} ({waiting.get('flow')} step {waiting.get('step')}) "
          f"as {args.meaning}")
    return EXIT_OK
