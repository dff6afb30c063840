"""The flow-step decider: the recorded step at the run's index (the replay of a recording)."""
from __future__ import annotations

from core.plan.decider import DecideContext, Decision

__all__ = ["FlowStepDecider"]


class FlowStepDecider:
    """Decides the recorded step at ``ctx.index``; passes past the end of the flow and on goal steps
    (the model chooses their actions)."""

    name = "flow"

    def decide(self, ctx: DecideContext) -> Decision | None:
        step = ctx.flow_step
        if step is None or step.goal:
            return None
        return Decision(step, "flow", f"recorded step {step.id!r}", 1.0)
