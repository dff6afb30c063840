"""The decide seam: a :class:`Decider` protocol and the chain that asks deciders in a fixed order.

The order is fixed by the design, not by who registers first: skill (a
reviewed skill whose trigger matches, K6) > flow step (what was recorded) >
model (an optional OpenAI-compatible model, P1-P3) > human (escalation).
A decider returns a :class:`Decision` or None to pass to the next one.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Mapping, Protocol, Sequence

from core.domain import Candidate, Flow, Observation, Step, StepOutcome

__all__ = ["DeciderName", "RANK", "DecideContext", "Decision", "Decider", "NeedsHuman", "NeedsApproval", "DecideChain"]

DeciderName = Literal["skill", "flow", "model", "human"]
#: Position of each decider in the chain; lower asks first.
RANK: Mapping[str, int] = {"skill": 0, "flow": 1, "model": 2, "human": 3}


@dataclass(frozen=True, slots=True)
class DecideContext:
    """What a decider may look at.

    Attributes
    ----------
    flow : Flow
        The flow being run.
    index : int
        0-based index of the flow step the run is at.
    observation : Observation
        The page before the action (CSS px boxes, screenshot when taken).
    history : tuple[StepOutcome, ...]
        Steps finished so far in this run, in order.
    params : Mapping[str, str]
        Bound parameters (secrets included: a decider never logs them).
    attempt : int
        1 for the first attempt at this step, 2.. for its retries (after a
        failed attempt, or a person's "retry").
    run_id : str
        The run's id ("" outside a run): a decider keeping state per run (the
        skill decider, K6) starts afresh when it changes.
    """

    flow: Flow
    index: int
    observation: Observation
    history: tuple[StepOutcome, ...] = ()
    params: Mapping[str, str] = field(default_factory=dict)
    attempt: int = 1
    run_id: str = ""

    @property
    def flow_step(self) -> Step | None:
        """The recorded step at ``index``, or None past the end of the flow."""
        return self.flow.steps[self.index] if 0 <= self.index < len(self.flow.steps) else None


@dataclass(frozen=True, slots=True)
class Decision:
    """The next action and its target, and who chose it.

    Attributes
    ----------
    step : Step
        What to do: action, target descriptor (or selector), assertions,
        reversibility; the rest of the loop treats it like a recorded step.
    source : DeciderName
        Which decider chose it.
    reason : str
        Why, in one sentence (shown in the studio and the report).
    confidence : float
        0..1; 1.0 for a recorded step.
    """

    step: Step
    source: DeciderName
    reason: str = ""
    confidence: float = 1.0


class NeedsHuman(Exception):
    """No decider could choose an action; the run escalates with ``reason``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class NeedsApproval(NeedsHuman):
    """A decider chose an action that may write data and waits for a person's approval.

    ``candidate`` is the element it would act on (its box is shown), ``action``
    the action kind; answering ``retry`` approves the very next decision.
    """

    def __init__(self, reason: str, candidate: Candidate, action: str) -> None:
        super().__init__(reason)
        self.candidate = candidate
        self.action = action


class Decider(Protocol):
    """One source of the next action."""

    #: Which link of the chain this is (decides its place, :data:`RANK`).
    name: DeciderName

    def decide(self, ctx: DecideContext) -> Decision | None:
        """Return the next action, or None to pass to the next decider.

        May raise :class:`NeedsHuman` (only the human decider does).
        """


class DecideChain:
    """Asks deciders in :data:`RANK` order; the first decision wins.

    Parameters
    ----------
    deciders : Sequence[Decider]
        Any order; at most one per name (a second one replaces the first).

    Raises
    ------
    ValueError
        When a decider has a name outside :data:`RANK`.
    """

    def __init__(self, deciders: Sequence[Decider]) -> None:
        by_name: dict[str, Decider] = {}
        for d in deciders:
            if d.name not in RANK:
                raise ValueError(f"unknown decider {d.name!r}; expected one of {', '.join(RANK)}")
            by_name[d.name] = d
        self.deciders: tuple[Decider, ...] = tuple(sorted(by_name.values(), key=lambda d: RANK[d.name]))

    def with_decider(self, decider: Decider) -> "DecideChain":
        """A chain with ``decider`` added (or replacing the one of the same name)."""
        return DecideChain([*self.deciders, decider])

    def get(self, name: str) -> Decider | None:
        """The decider called ``name``, if the chain has one."""
        return next((d for d in self.deciders if d.name == name), None)

    @property
    def names(self) -> tuple[str, ...]:
        """Decider names in asking order."""
        return tuple(d.name for d in self.deciders)

    def decide(self, ctx: DecideContext) -> Decision:
        """The first decision of the chain.

        Raises
        ------
        NeedsHuman
            When every decider passed (or the human decider says so).
        """
        for d in self.deciders:
            decision = d.decide(ctx)
            if decision is not None:
                return decision
        raise NeedsHuman(f"no decider chose an action at step {ctx.index + 1} (asked: {', '.join(self.names)})")
