"""The human decider: the end of the chain; it asks the person driving the run.

In the decide phase it is reached only when every other decider passed: it
never guesses an action, it raises :class:`NeedsHuman` so the run escalates.
Failures escalate through :meth:`HumanDecider.ask`, which hands the
:class:`core.domain.Escalation` to the run control and returns the answer.
"""
from __future__ import annotations

from typing import Callable

from core.domain import Escalation
from core.plan.decider import DecideContext, Decision, NeedsHuman

__all__ = ["HumanDecider"]


class HumanDecider:
    """Asks a human through ``ask`` (the run control's ``escalate``).

    Parameters
    ----------
    ask : Callable[[Escalation], object]
        Returns the human's answer (:class:`core.engine.control.Answer`);
        blocks until answered.
    """

    name = "human"

    def __init__(self, ask: Callable[[Escalation], object]) -> None:
        self._ask = ask

    def decide(self, ctx: DecideContext) -> Decision | None:
        step = ctx.flow_step
        what = f"step {ctx.index + 1} '{step.title}'" if step is not None else f"step {ctx.index + 1}"
        if step is not None and step.goal:
            raise NeedsHuman(f"{what} is a goal step and no model is configured (add a 'model:' section to the "
                             "project, or record the step)")
        raise NeedsHuman(f"no decider chose an action for {what}")

    def ask(self, escalation: Escalation) -> object:
        """Hand ``escalation`` to the human; returns their answer."""
        return self._ask(escalation)
