"""Typed engine events and commands (architecture rule 1).

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

from core.engine.breakpoints import Breakpoints
from core.domain import Candidate, Escalation, Observation, Resolution, RunResult, StepStatus, Verdict
from core.domain.change import BaselineAlert, ChangeReport
from core.domain.flow import ActionKind
from core.recover.breaker import BreakerState

__all__ = [
    "RunStarted", "FlowStarted", "StepStarted", "PhaseChanged", "ObservationMade",
    "TargetResolved", "ActionPerformed", "VerdictReached", "StepFinished",
    "BreakerChanged", "EscalationRaised", "FlowFinished", "RunFinished", "EngineError",
    "Paused", "Resumed", "TakeoverStarted", "HandedBack", "ScreenChanged", "BaselineAlertRaised", "Recovered",
    "EngineEvent", "Phase", "PHASES",
    "Start", "Pause", "Resume", "StepOnce", "Stop", "Retry", "Skip", "TakeOver", "HandBack", "Compensate", "Command",
    "SetBreakpoints",
]

#: The phases of one step, in order (architecture rule 2; :mod:`core.engine.pipeline`).
Phase = Literal["observe", "fingerprint", "decide", "resolve", "precheck", "checkpoint", "act", "settle",
                "verify", "record"]
PHASES: tuple[str, ...] = Phase.__args__  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class RunStarted:
    """A batch of flows started (``flows`` in order)."""

    run_id: str
    project: str
    flows: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FlowStarted:
    """One flow (an independent job with its own ``run_id``) started; ``step_titles`` in order."""

    run_id: str
    flow: str
    step_titles: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class StepStarted:
    """Attempt ``attempt`` (1-based) of step ``index`` (0-based) started."""

    run_id: str
    flow: str
    index: int
    title: str
    attempt: int


@dataclass(frozen=True, slots=True)
class PhaseChanged:
    """Step ``index`` entered ``phase`` (:data:`PHASES`)."""

    run_id: str
    flow: str
    index: int
    phase: Phase


@dataclass(frozen=True, slots=True)
class ObservationMade:
    """An observation; ``when`` is ``"before"`` or ``"after"`` the action.

    ``reused``: this step's before is the previous step's after-observation,
    taken over because nothing happened on the page in between (R1 fast path).
    """

    run_id: str
    flow: str
    index: int
    when: Literal["before", "after"]
    observation: Observation
    reused: bool = False


@dataclass(frozen=True, slots=True)
class TargetResolved:
    """The locator chain resolved (or abstained on) the step's target; ``candidate`` is the pick."""

    run_id: str
    flow: str
    index: int
    resolution: Resolution
    candidate: Candidate | None


@dataclass(frozen=True, slots=True)
class ActionPerformed:
    """The action of step ``index`` was performed (``ok``) or raised (``error``, secrets masked)."""

    run_id: str
    flow: str
    index: int
    kind: ActionKind
    ok: bool
    error: str = ""


@dataclass(frozen=True, slots=True)
class Recovered:
    """Recovery acted on step ``index`` (R3): ``how`` is ``rollback`` (back to the checkpoint),
    ``dismiss`` (a popup closed by its close / cancel control or Escape) or ``compensate`` (compensations
    a person approved); ``ok`` whether it worked; ``detail`` what was done (secrets masked)."""

    run_id: str
    flow: str
    index: int
    how: Literal["rollback", "dismiss", "compensate"]
    ok: bool
    detail: str = ""


@dataclass(frozen=True, slots=True)
class VerdictReached:
    """Post-verification of step ``index`` (S5)."""

    run_id: str
    flow: str
    index: int
    verdict: Verdict


@dataclass(frozen=True, slots=True)
class StepFinished:
    """Step ``index`` ended with ``status`` (see :class:`core.domain.StepOutcome`), always emitted.

    ``ms`` is its duration (time paused or waiting for a human left out); ``phase_ms`` the time per phase of its last
    attempt (ms, in phase order); ``source`` the decider that chose it.
    """

    run_id: str
    flow: str
    index: int
    status: StepStatus
    healed: bool
    ms: float
    error: str = ""
    phase_ms: tuple[tuple[str, float], ...] = ()
    source: Literal["skill", "flow", "model", "human"] = "flow"


@dataclass(frozen=True, slots=True)
class BreakerChanged:
    """Circuit breaker state (R4): ``closed`` / ``open`` / ``half_open``.

    ``half_open_in_s``: seconds until an open breaker half-opens by itself
    (None when not open); ``failed_probes``: half-open probes that failed in a row.
    """

    run_id: str
    state: BreakerState
    consecutive_failures: int
    threshold: int
    half_open_in_s: float | None = None
    failed_probes: int = 0


@dataclass(frozen=True, slots=True)
class EscalationRaised(Escalation):
    """The engine needs a human (R4): the :class:`core.domain.Escalation` as an event.

    The run waits for one of ``answers``: :class:`Retry`, :class:`Skip`,
    :class:`Stop` or :class:`TakeOver` (headless runs answer stop).
    """


@dataclass(frozen=True, slots=True)
class FlowFinished:
    """One flow ended; ``result`` says how."""

    run_id: str
    result: RunResult


@dataclass(frozen=True, slots=True)
class RunFinished:
    """The batch ended; one result per flow that ran."""

    run_id: str
    results: tuple[RunResult, ...]


@dataclass(frozen=True, slots=True)
class EngineError:
    """The engine could not run the batch at all (unknown flow, browser would not start)."""

    run_id: str
    message: str


@dataclass(frozen=True, slots=True)
class Paused:
    """The run waits between two phases of step ``index``; ``reason`` says why (paused, escalated...)."""

    run_id: str
    flow: str
    index: int
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Resumed:
    """The run goes on after a pause."""

    run_id: str


@dataclass(frozen=True, slots=True)
class TakeoverStarted:
    """A human has the page from step ``index`` on; the engine does nothing until :class:`HandBack`.

    ``acted`` is True when the engine had already performed this step's
    action: handing back then goes on with the next step by default (an
    irreversible step is never done again, S6).
    """

    run_id: str
    flow: str
    index: int
    acted: bool = False


@dataclass(frozen=True, slots=True)
class HandedBack:
    """The human handed control back; the engine continues from step ``continue_from`` (0-based)."""

    run_id: str
    flow: str
    continue_from: int


@dataclass(frozen=True, slots=True)
class ScreenChanged:
    """The screen before step ``index`` differs from its R1 baseline; ``report`` says how, per element.

    The step then takes the full locator chain (R1, R2).
    """

    run_id: str
    flow: str
    index: int
    report: ChangeReport


@dataclass(frozen=True, slots=True)
class BaselineAlertRaised:
    """At the end of a flow: a screen changed beyond the R1 threshold, so its baseline was kept, not refreshed."""

    run_id: str
    alert: BaselineAlert


EngineEvent = Union[
    RunStarted, FlowStarted, StepStarted, PhaseChanged, ObservationMade, TargetResolved,
    ActionPerformed, VerdictReached, StepFinished, BreakerChanged, EscalationRaised,
    FlowFinished, RunFinished, EngineError, Paused, Resumed, TakeoverStarted, HandedBack, ScreenChanged,
    BaselineAlertRaised, Recovered,
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
    """Pause at the next point between two phases."""

    


@dataclass(frozen=True, slots=True)
class Resume:
    """Go on after a pause; answering an escalation it means :class:`Retry`."""



@dataclass(frozen=True, slots=True)
class StepOnce:
    """Run exactly one more step, then pause again."""


@dataclass(frozen=True, slots=True)
class Stop:
    """Stop the run at the next point between two phases (or answer an escalation with stop)."""



@dataclass(frozen=True, slots=True)
class Retry:
    """Answer to an escalation: try the step again (the breaker half-opens, R4)."""


@dataclass(frozen=True, slots=True)
class Skip:
    """Answer to an escalation: leave this step as skipped and go on with the next one."""


@dataclass(frozen=True, slots=True)
class TakeOver:
    """Put a human on the page: answers an escalation, or takes over at the next pause point."""


@dataclass(frozen=True, slots=True)
class HandBack:
    """End a takeover: the engine re-observes the page and continues from step ``continue_from``.

    ``continue_from`` is the 0-based step index (the studio shows it 1-based);
    None continues with the step the takeover began at.
    """

    continue_from: int | None = None


@dataclass(frozen=True, slots=True)
class Compensate:
    """Answer to an escalation of an irreversible step that declares compensations: run them (R3)."""


Command = Union[Start, Pause, Resume, StepOnce, Stop, Retry, Skip, TakeOver, HandBack, Compensate]


@dataclass(frozen=True, slots=True)
class SetBreakpoints:
    """Replace the engine's breakpoints (:mod:`core.engine.breakpoints`); takes effect at the next pause point.

    Accepted while idle and during a run; a breakpoint that fires emits
    :class:`Paused` with ``reason`` ``"breakpoint: ..."``.
    """

    breakpoints: Breakpoints = field(default_factory=Breakpoints)
