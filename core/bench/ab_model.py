"""The model as the A/B benchmark's policy (S8): the project's configured model chooses among the offered actions.

The model is asked with the three-layer planner (:class:`core.plan.strategy.Planner`, P3): the task's goal
(the MiniWoB++ instruction, or the demo goal text), the offered actions as the untried options, the page as
data.  A model that cannot be reached or answers nonsense ends the episode (the choice is never guessed).
"""
from __future__ import annotations

import random
from pathlib import Path
from typing import Any, Callable, Sequence

from core.plan.decider import NeedsHuman
from core.plan.strategy import Planner, PlanOption
from core.project import load_project
from core.state.graph import target_summary

__all__ = ["model_policy", "NoChoice"]


class NoChoice(RuntimeError):
    """The model gave no usable choice; the episode stops there."""


def model_policy(project_root: Path) -> tuple[Callable[..., int], str]:
    """``(policy, name)`` for :func:`core.bench.ab.run_ab` from the project's ``model:`` section.

    Raises
    ------
    RuntimeError
        When the project has no model configured or its key cannot be found.
    """
    from core.plan.config import model_setup

    project = load_project(project_root)
    try:
        setup = model_setup(project)
    except ValueError as exc:
        raise RuntimeError(str(exc)) from None
    if setup is None:
        raise RuntimeError(f"{project.root / 'steadyhand.yaml'}: no model section; --model needs one")
    client = setup.primary

    def policy(choices: Sequence[Any], obs: Any, rng: random.Random, goal: str = "") -> int:
        planner = Planner(client, goal or obs.title or "complete the task on the page")
        opts = [PlanOption(c.kind, target_summary(c.cand.descriptor.role, c.cand.descriptor.label_text,
                                                  tag=c.cand.descriptor.tag) + (f" <- {c.value!r}" if c.value else ""))
                for c in choices]
        try:
            return planner.choose(obs, opts)
        except NeedsHuman as exc:
            raise NoChoice(exc.reason) from None

    return policy, f"model {client.config.model}"
