"""Goal steps in the flow loop: a goal step repeats at its index while the model acts toward it (P3, P6).

The model decider (:mod:`core.plan.agent`) decides one action per round;
the step's own ``assert`` (decided when its assertions hold, or the judge
says the goal is reached) ends it.  The budget (30 actions, P6) and every
refusal are the decider's: it escalates.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from core.plan.agent import is_goal_action
from core.skills.runtime import is_skill_step

if TYPE_CHECKING:
    from core.engine.step import StepContext

__all__ = ["next_index"]


def next_index(ctx: "StepContext") -> int:
    """Where the run goes after ``ctx``: the same index after a passed action toward a goal or after a skill's
    action (the flow step is not consumed by it, K6), else ``ctx.next_index``."""
    if ctx.status == "passed" and is_goal_action(ctx.decided):
        return ctx.index
    if ctx.source == "skill" and ctx.status in ("passed", "skipped") and is_skill_step(ctx.decided):
        return ctx.index  # a skill's action (passed, or given up for the chain) runs before the flow step (K6)
    return ctx.next_index
