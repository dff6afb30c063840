"""Skills in the step pipeline (K6): the skill decider's events, its hooks in the phases, its CLI line.

:class:`~core.skills.runtime.SkillDecider` decides; this module joins it to
the engine:

* :func:`skill_decider` builds it for a project whose store holds approved
  skills, its ``notify`` turned into :class:`SkillConsidered` /
  :class:`SkillFired` / :class:`SkillFinished` events (texts redacted);
* :func:`after_resolve` (the resolve phase, any decider): a target a deny
  rule forbids is not acted on - the attempt abstains with the rule's
  reason; a skill action's target must pass the skill's live safety check
  (:meth:`~core.skills.runtime.SkillDecider.check_resolved`);
* :func:`forget_screen` (the decide phase): the screen checked before a
  skill acted is not the flow step's baseline (R1);
* :func:`fell_back` (the failure path): a skill action that did not pass
  ends the skill and the step is recorded ``skipped`` with its reason; the
  run stays at the same index, where the flow step (then the model, then a
  person) decides - a skill's failure never escalates by itself;
* :func:`skill_line`: the one line the command line prints per use.
"""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable

from core.domain import Candidate, Resolution
from core.engine.events import EngineEvent, SkillConsidered, SkillFinished, SkillFired
from core.recover.policy import Failure
from core.skills.runtime import SkillDecider, is_skill_step

if TYPE_CHECKING:
    from core.engine.executor import FlowExecutor
    from core.engine.pipeline import StepContext

__all__ = ["skill_decider", "after_resolve", "forget_screen", "fell_back", "skill_line"]


def skill_decider(store: Any, product: str, emit: Callable[[EngineEvent], None], *,
                  redact: Callable[[str], str] = lambda t: t, settings: Any = None) -> SkillDecider | None:
    """The skill decider of ``product`` when its store holds approved skills, else None.

    ``emit`` receives the use events (reasons passed through ``redact``).
    A store that cannot be read gives None (the run goes on without skills).
    """
    if store is None:
        return None
    from core.store.skills import SkillTable

    table = SkillTable(store)
    try:
        if not table.list(product=product, state="approved"):
            return None
    except Exception:  # noqa: BLE001 - an unreadable library: no skills this run
        return None

    def notify(kind: str, **f: Any) -> None:
        if kind == "considered":
            emit(SkillConsidered(f["run_id"], f["flow"], f["index"], f["skill_id"], f["holds"], f["half"],
                                 redact(f["reason"])))
        elif kind == "fired":
            emit(SkillFired(f["run_id"], f["flow"], f["index"], f["skill_id"], redact(f["description"]),
                            f["action_index"], f["actions"]))
        elif kind == "finished":
            emit(SkillFinished(f["run_id"], f["flow"], f["index"], f["skill_id"], f["outcome"], redact(f["reason"]),
                               f["ms"]))

    return SkillDecider(table, product, settings, notify=notify)


def _decider(ex: "FlowExecutor") -> SkillDecider | None:
    d = ex.chain.get("skill")
    return d if isinstance(d, SkillDecider) else None


def after_resolve(ex: "FlowExecutor", ctx: "StepContext", resolution: Resolution, cand: Candidate | None
                  ) -> tuple[Resolution, Candidate | None, Exception | None]:
    """After the locator found ``cand``: deny rules (whatever decided), then a skill action's live safety check.

    Returns the resolution and candidate to record, and the failure the
    pipeline raises once they are recorded (None: go on).  A held-back
    element leaves the resolution abstained (``ref`` None, the reason
    appended) and no candidate; the failure is ``abstained`` (a retry would
    meet the same rule: a person is asked at once) escalated as
    ``precondition`` ("found but cannot be used now: denied by skill ..."),
    so no use-once choice of that element is offered.  For a skill action
    the skill gives up instead and the chain decides again
    (:func:`fell_back`).
    """
    from core.engine.pipeline import StepFailure

    dec, obs, step = _decider(ex), ctx.before, ctx.step
    if dec is None or cand is None or obs is None or step is None or resolution.abstained:
        return resolution, cand, None
    run = ctx.run
    flow_step = run.flow.steps[ctx.index] if 0 <= ctx.index < len(run.flow.steps) else None
    denied = dec.denied(cand, obs, index=ctx.index, flow_step=flow_step, params=run.params,
                        step_id=ctx.decided.id if ctx.decided is not None else "")
    reason = denied[1] if denied is not None else ""
    if not reason and ctx.source == "skill" and ctx.decided is not None and is_skill_step(ctx.decided):
        reason = dec.check_resolved(ctx.decided.id, step.action.kind, cand, step.target, obs, run.params)[1]
    if not reason:
        return resolution, cand, None
    reason = ex.redact(reason)
    held = replace(resolution, ref=None, abstained=True, reason=f"{resolution.reason}; {reason}")
    return held, None, StepFailure(Failure("abstained", reason), escalation="precondition")


def forget_screen(ex: "FlowExecutor", ctx: "StepContext") -> None:
    """A skill acts before the flow step: the screen just checked (R1) is not the flow step's.

    Its comparison is dropped, and a baseline it created in this run is
    forgotten, so the flow step's own check - on the page the skill leaves -
    makes and refreshes the step's baseline (a store baseline is an upsert).
    A change it reported stays reported: the page did differ.
    """
    steps = ctx.run.flow.steps
    if not 0 <= ctx.index < len(steps):
        return
    step_id = steps[ctx.index].id
    seen = ex.screens.seen.get(step_id)
    if seen is None or seen.index != ctx.index:
        return
    del ex.screens.seen[step_id]
    if seen.report.status == "new":
        ex.screens.baselines.pop(step_id, None)


def fell_back(ex: "FlowExecutor", ctx: "StepContext", exc: Exception) -> bool:
    """A failed skill action: end the skill (its use recorded), mark the attempt ``skipped``; True when handled.

    The run stays at the step's index (:func:`core.engine.goal.next_index`)
    and the chain decides again without that skill (it fires once a step).
    """
    from core.engine.pipeline import StepFailure

    dec = _decider(ex)
    if dec is None or ctx.source != "skill" or not is_skill_step(ctx.decided) or not isinstance(exc, StepFailure):
        return False
    assert ctx.decided is not None
    ended = dec.action_failed(ctx.decided.id, exc.failure.kind, exc.failure.reason)
    reason = ended[1] if ended is not None else exc.failure.reason
    ctx.status = "skipped"
    ctx.error = ex.redact(f"the skill gave up ({reason}); the step is decided without it")
    return True


def skill_line(event: object) -> str | None:
    """The command line's line for a finished skill use, else None.

    ``  leave_request step 2: skill sk-1a2b3c4d5e6f passed: 1 action(s) done (412 ms)``
    """
    if isinstance(event, SkillFinished):
        why = f": {event.reason}" if event.reason else ""
        return f"  {event.flow} step {event.index + 1}: skill {event.skill_id} {event.outcome}{why} ({event.ms:.0f} ms)"
    return None
