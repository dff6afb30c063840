"""Typed engine events and commands (ARCHITECTURE rule 1).

Every event carries a ``run_id`` and, where it concerns a step, the step
``index``; front ends drop events of runs they no longer show.  A batch
(``RunStarted`` ... ``RunFinished``) has its own id; each flow of the batch is
an independent job with its own run id (one row in the store), announced by
``FlowStarted`` and carried by every event of that flow.  Events are emitted on the engine thread: a front end must
marshal them to its own thread (the studio uses queued Qt signals).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Union

from core.domain import Candidate, Observation, Resolution, RunResult, Verdict

__all__ = [
    "RunStarted", "FlowStarted", "StepStarted", "PhaseChanged", "ObservationMade",
    "TargetResolved", "ActionPerformed", "VerdictReached", "StepFinished",
    "BreakerChanged", "EscalationRaised", "FlowFinished", "RunFinished", "EngineError",
    "Paused", "Resumed", "EngineEvent",
    "Start", "Pause", "Resume", "StepOnce", "Stop", "Command",
]

Phase = Literal["observe", "signature", "resolve", "precheck", "act", "wait", "verify", "record"]


@dataclass(frozen=True, slots=True)
class RunStarted:
    run_id: str
    project: str
    flows: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FlowStarted:
    run_id: str
    flow: str
    step_titles: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class StepStarted:
    run_id: str
    flow: str
    index: int
    title: str
    attempt: int


@dataclass(frozen=True, slots=True)
class PhaseChanged:
    run_id: str
    flow: str
    index: int
    phase: Phase


@dataclass(frozen=True, slots=True)
class ObservationMade:
    """A fresh observation; ``when`` is ``"before"`` or ``"after"`` the action."""

    run_id: str
    flow: str
    index: int
    when: Literal["before", "after"]
    observation: Observation


@dataclass(frozen=True, slots=True)
class TargetResolved:
    run_id: str
    flow: str
    index: int
    resolution: Resolution
    candidate: Candidate | None


@dataclass(frozen=True, slots=True)
class ActionPerformed:
    run_id: str
    flow: str
    index: int
    kind: str
    ok: bool
    error: str = ""


@dataclass(frozen=True, slots=True)
class VerdictReached:
    run_id: str
    flow: str
    index: int
    verdict: Verdict


@dataclass(frozen=True, slots=True)
class StepFinished:
    run_id: str
    flow: str
    index: int
    status: str
    healed: bool
    ms: float
    error: str = ""


@dataclass(frozen=True, slots=True)
class BreakerChanged:
    """Circuit breaker state (R4): ``closed`` / ``open`` / ``half_open``."""

    run_id: str
    state: str
    consecutive_failures: int
    threshold: int


@dataclass(frozen=True, slots=True)
class EscalationRaised:
    """The engine needs a human (R4): which step, why, what side effects so far."""

    run_id: str
    flow: str
    index: int
    step_title: str
    reason: str
    candidates: tuple[str, ...] = ()
    side_effects: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class FlowFinished:
    run_id: str
    result: RunResult


@dataclass(frozen=True, slots=True)
class RunFinished:
    run_id: str
    results: tuple[RunResult, ...]


@dataclass(frozen=True, slots=True)
class EngineError:
    run_id: str
    message: str


@dataclass(frozen=True, slots=True)
class Paused:
    run_id: str
    flow: str
    index: int
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Resumed:
    run_id: str


EngineEvent = Union[
    RunStarted, FlowStarted, StepStarted, PhaseChanged, ObservationMade, TargetResolved,
    ActionPerformed, VerdictReached, StepFinished, BreakerChanged, EscalationRaised,
    FlowFinished, RunFinished, EngineError, Paused, Resumed,
]


# --- commands (front end -> engine) -------------------------------------------------


@dataclass(frozen=True, slots=True)
class Start:
    """Run ``flows`` (all when empty) of the loaded project."""

    flows: tuple[str, ...] = ()
    params: dict[str, str] = field(default_factory=dict)
    paused: bool = False


@dataclass(frozen=True, slots=True)
class Pause:
    pass


@dataclass(frozen=True, slots=True)
class Resume:
    pass


@dataclass(frozen=True, slots=True)
class StepOnce:
    """Run exactly one more step, then pause again."""


@dataclass(frozen=True, slots=True)
class Stop:
    pass


Command = Union[Start, Pause, Resume, StepOnce, Stop]
