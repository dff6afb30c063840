"""``bench faults``: a kill -9 at each phase of a step, a second kill during the resume, then a last resume;
judged by the demo app's own log (issue 21 items 1 and 9).

One case (:func:`phase_case`) of flow ``F``, step ``k`` (0-based) and phase ``P``:

1. ``steadyhand run`` (a subprocess, :mod:`core.bench.faults_child`) is killed -9 - with its browser - when
   the engine enters ``P`` of step ``k``;
2. ``run --resume`` of that run is killed the same way when it enters ``P`` of step ``k`` or of the first
   later step that reaches ``P`` (the steps it replays before ``k`` never trigger it); a resume that ends
   before (it escalated at the in-flight step, or it had nothing left to run) simply ends;
3. ``run --resume`` of the first run once more, with no fault: it continues the latest resume.

The verdict (:func:`judge_by_app`) compares what the last run says (its status and one-line reason) with the
demo app's own write log (:meth:`core.sites.demo.DemoSite.ground_truth_report`, never the product's store):
a run that says it passed must show each of the flow's writes exactly once; a run that escalated at step
``s`` must show the writes of the steps before ``s`` once each, the write of ``s`` itself at most once, and
none after it; a write flagged duplicate by the app is never survived.  The store must pass SQLite's
``PRAGMA integrity_check`` and name only whole screenshots after every kill.
"""
from __future__ import annotations

import re
import time
from typing import Any

from core.bench.faults import FaultBench, FaultOutcome, check_store, effects_upto, expected_effects
from core.bench.faults_child import KILL_ENV, KILL_PHASES

__all__ = ["kill_points", "phase_case", "judge_by_app", "escalated_step"]

#: Final statuses a killed run's last resume may end with: done, or stopped by the engine's own doubt.
FINAL_OK = ("passed", "escalated")


def kill_points(flow: Any, steps: Any = None, phases: tuple[str, ...] = KILL_PHASES) -> list[tuple[int, str]]:
    """``(step index, phase)`` for each step of ``flow`` (a :class:`core.domain.Flow`; ``steps``: only those
    0-based indexes) and each of ``phases`` it goes through (``resolve`` only for a step with a target)."""
    from core.act.space import needs_target

    out = []
    for i, step in enumerate(flow.steps):
        if steps is not None and i not in steps:
            continue
        for phase in phases:
            if phase == "resolve" and not needs_target(step):
                continue
            out.append((i, phase))
    return out


def escalated_step(message: str) -> int | None:
    """The 1-based step a run's one-line reason names first (``"step 11 'Submit' was in flight..."``), or None."""
    m = re.search(r"\bstep (\d+) '", message or "")
    return int(m.group(1)) if m else None


def judge_by_app(out: FaultOutcome, *, flow: str, n: int, dup: int, status: str, message: str,
                 corruptions: int) -> FaultOutcome:
    """Fill in ``out``'s counts and verdict from the app's write count ``n`` and flagged duplicates ``dup``
    (rules in the module docstring); ``status`` / ``message`` are what the last run says."""
    full = expected_effects(flow)
    lo, hi = full, full
    if status == "escalated":
        s = escalated_step(message)
        lo, hi = (effects_upto(flow, s - 2), effects_upto(flow, s - 1)) if s is not None else (0, full)
    out.status = status
    out.double_writes = max(0, n - hi) + dup
    out.lost_steps = max(0, lo - n)
    out.store_corruption = corruptions
    line = message.strip().splitlines()[0] if message.strip() else ""
    out.message = line
    one_line = bool(line) and "\n" not in message.strip() and "Traceback" not in message
    out.detail.update({"effects": n, "server_duplicates": dup, "owed": [lo, hi]})
    out.survived = (status in FINAL_OK and out.double_writes == 0 and out.lost_steps == 0 and corruptions == 0
                    and (status == "passed" or one_line))
    return out


def phase_case(b: FaultBench, flow: str, k: int, phase: str, *, second_kill: bool = True) -> FaultOutcome:
    """Kill at ``phase`` of step ``k`` (0-based), resume killed again at the same point, resume once more."""
    out = FaultOutcome(f"kill@{flow}:{k + 1}:{phase}", flow, False)
    out.detail["phase"], out.detail["step"] = phase, k + 1
    t0 = time.monotonic()
    b.site.reset()
    kill = {KILL_ENV: f"{flow}:{k}:{phase}"}
    before = b.runs()
    code, err = b.finish(b.spawn(b.run_args(flow), env=kill))
    first = b.new_run(before)
    out.detail.update({"run_id": first, "exit": code})
    if first is None or code != -9:
        out.message = (f"the kill point was never reached (the run ended by itself, exit {code})" if first else
                       "the run never started: " + (err.strip().splitlines() or [""])[-1][:200])
        out.seconds = time.monotonic() - t0
        return out
    stores = [check_store(b.data_dir)]
    kills = 1
    code2, err2, res = b.resume(first, env=kill if second_kill else None)
    out.resumed = True
    out.detail["resume"] = {"exit": code2, "run_id": res.get("run_id"), "status": res.get("status")}
    last = res
    if code2 == -9:
        kills += 1
        stores.append(check_store(b.data_dir))
    if res.get("run_id") is not None and (code2 == -9 or res.get("status") not in ("passed",)):
        code3, err3, res3 = b.resume(first)  # the first run again: it continues the latest resume
        out.detail["resume_again"] = {"exit": code3, "run_id": res3.get("run_id"), "status": res3.get("status"),
                                      "stderr": err3.strip()[-300:]}
        if res3.get("run_id") is not None:
            last = res3
        elif code2 == -9:
            last = {"status": "", "error": err3}  # the killed resume was not continued: a failure
    stores.append(check_store(b.data_dir))
    out.detail["kills"] = kills
    out.detail["store"] = stores[-1]
    n, dup, _ = b.ground(flow)
    out.seconds = time.monotonic() - t0
    return judge_by_app(out, flow=flow, n=n, dup=dup, status=str(last.get("status") or ""),
                        message=str(last.get("error") or ""), corruptions=sum(s["corruptions"] for s in stores))
