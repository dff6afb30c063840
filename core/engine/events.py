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
from core.domain import BBox, Candidate, Escalation, Observation, Resolution, RunResult, StepStatus, Verdict
from core.domain.belief import Belief
from core.domain.change import BaselineAlert, ChangeReport
from core.domain.evidence import StepEvidence
from core.domain.flow import ActionKind
from core.record.events import ForwardClick, ForwardKey, ForwardMove, ForwardScroll, ForwardType
from core.recover.breaker import BreakerState
from core.state.graph import StateEdge, StateNode

__all__ = [
    "RunStarted", "FlowStarted", "StepStarted", "PhaseChanged", "ObservationMade",
    "TargetResolved", "ActionPerformed", "VerdictReached", "StepFinished",
    "BreakerChanged", "EscalationRaised", "FlowFinished", "RunFinished", "EngineError",
    "Paused", "Resumed", "TakeoverStarted", "HandedBack", "ScreenChanged", "BaselineAlertRaised", "Recovered",
    "StateGraphChanged", "StepEvidenceRecorded", "ModelUsage", "EngineEvent", "Phase", "PHASES",
    "Start", "Pause", "Resume", "StepOnce", "Stop", "Retry", "Skip", "TakeOver", "HandBack", "Compensate", "Command",
    "HealProposed", "UseCandidate", "ProposeHeal",
    "TakeoverFrame", "TakeoverActionRecorded", "CorrectionOffered", "HandBackMeaning", "TakeoverInput",
    "StateNoted",
    "SetBreakpoints", "ScreencastFrame",
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

    ``ms`` is its active time (ms; time paused or waiting for a human left out); ``phase_ms`` the time per phase of its last
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
    """The human handed control back; the engine continues from step ``continue_from`` (0-based).

    ``meaning`` is what the hand-back said the manual actions were for
    (:data:`HandBackMeaning`; "" when it said nothing).
    """

    run_id: str
    flow: str
    continue_from: int
    meaning: str = ""


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


@dataclass(frozen=True, slots=True)
class HealProposed:
    """A person proposed an escalation's candidate as the heal of step ``index`` (:class:`ProposeHeal`).

    ``proposal_id`` is the heal proposal's id in the store (0 when none was made); ``note`` says
    what was done or why nothing was ("proposed as heal #4", "no store: nothing proposed").
    """

    run_id: str
    flow: str
    index: int
    ref: str
    proposal_id: int
    note: str


EngineEvent = Union[
    RunStarted, FlowStarted, StepStarted, PhaseChanged, ObservationMade, TargetResolved,
    ActionPerformed, VerdictReached, StepFinished, BreakerChanged, EscalationRaised,
    FlowFinished, RunFinished, EngineError, Paused, Resumed, TakeoverStarted, HandedBack, ScreenChanged,
    BaselineAlertRaised, Recovered, HealProposed, "ModelUsage",
]


@dataclass(frozen=True, slots=True)
class StepEvidenceRecorded:
    """What step ``index`` left behind (:class:`core.domain.evidence.StepEvidence`: before/after image
    difference in CSS px, console errors, failed requests, assertions checked, active and wall time), emitted
    in its ``record`` phase just before ``StepFinished``; the same record is in the store."""

    run_id: str
    flow: str
    index: int
    evidence: StepEvidence


EngineEvent = Union[EngineEvent, StepEvidenceRecorded]  # type: ignore[misc]


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
    None continues where ``meaning`` says (``replace`` / ``done``: the next
    step; ``insert``: the step the takeover began at), and with no meaning
    with the step the takeover began at.  ``meaning`` (:data:`HandBackMeaning`)
    says what the manual actions were for; the correction stored from them
    carries it (:mod:`core.engine.takeover`).
    """

    continue_from: int | None = None
    meaning: "HandBackMeaning | None" = None


@dataclass(frozen=True, slots=True)
class Compensate:
    """Answer to an escalation of an irreversible step that declares compensations: run them (R3)."""


@dataclass(frozen=True, slots=True)
class UseCandidate:
    """Answer to an escalation that offers ``use_candidate``: act on candidate ``ref`` for this step, once.

    ``ref`` is one of the escalation's candidates.  When that candidate's ``confirm`` is set (an
    irreversible step, a role crossing) the command is ignored unless ``confirmed`` is True: the
    person saw why and confirmed.  The flow file is not changed (see :class:`ProposeHeal`).
    """

    ref: str
    confirmed: bool = False
    #: The escalation it answers: its step index (-1: not said) and the candidate's label as shown ("" not said);
    #: an answer meant for another escalation, or a ref that now names another element, is not taken.
    index: int = -1
    label: str = ""


@dataclass(frozen=True, slots=True)
class ProposeHeal:
    """While an escalation waits: propose candidate ``ref`` as the heal of this step (a heal proposal in the
    store, reviewed like any other); not an answer, the escalation keeps waiting.  Answered by
    :class:`HealProposed`."""

    ref: str


Command = Union[Start, Pause, Resume, StepOnce, Stop, Retry, Skip, TakeOver, HandBack, Compensate, UseCandidate,
                ProposeHeal]


@dataclass(frozen=True, slots=True)
class StateGraphChanged:
    """Step ``index`` added its transition to the flow's state graph ``graph`` (P4).

    ``source`` and ``target`` are the before- and after-states as they are now
    (counts included), ``edge`` the action between them; ``target`` is the
    current state.  ``new_*`` say what the graph did not hold before;
    ``revisit`` that the action led back to a state reached before.
    """

    run_id: str
    flow: str
    index: int
    graph: str
    source: StateNode
    target: StateNode
    edge: StateEdge
    new_source: bool = False
    new_target: bool = False
    new_edge: bool = False
    revisit: bool = False


EngineEvent = Union[EngineEvent, StateGraphChanged]  # type: ignore[misc]


# --- takeover: the human's actions on the engine's page (core/engine/takeover.py) -------------

#: What a takeover's manual actions were for: replace the step, insert before it, or the step is done.
HandBackMeaning = Literal["replace", "insert", "done"]

#: Input forwarded to the engine's page during a takeover (CSS px of the viewport): the recorder's commands.
TakeoverInput = Union[ForwardClick, ForwardMove, ForwardType, ForwardKey, ForwardScroll]


@dataclass(frozen=True, slots=True)
class TakeoverFrame:
    """A fresh screenshot of the engine's page during a takeover of step ``index`` (the live view).

    ``png`` in device px (secrets painted over); ``candidates`` with CSS px boxes.
    """

    run_id: str
    flow: str
    index: int
    png: bytes
    device_pixel_ratio: float
    url: str
    candidates: tuple[Candidate, ...] = ()


@dataclass(frozen=True, slots=True)
class TakeoverActionRecorded:
    """The human's actions so far during the takeover of step ``index``: ``titles`` in order (redacted)."""

    run_id: str
    flow: str
    index: int
    titles: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CorrectionOffered:
    """After a hand-back: the manual segment was stored as correction ``correction_id`` (0: no store).

    ``state`` is ``offered`` (``diff`` is the flow-file edit waiting for
    review: :func:`core.heal.corrections.accept_correction`) or ``kept``
    (nothing to edit; ``note`` says why); ``steps`` the actions' titles.
    """

    run_id: str
    flow: str
    index: int
    correction_id: int
    meaning: str
    state: str
    diff: str
    steps: tuple[str, ...] = ()
    note: str = ""


EngineEvent = Union[EngineEvent, TakeoverFrame, TakeoverActionRecorded, CorrectionOffered]
Command = Union[Command, ForwardClick, ForwardMove, ForwardType, ForwardKey, ForwardScroll]


@dataclass(frozen=True, slots=True)
class ModelUsage:
    """What the model cost in one flow run, emitted before ``FlowFinished`` when a model is configured (P7, P9).

    ``counters``: ``calls``, ``errors``, ``prompt_tokens``, ``completion_tokens``,
    ``latency_ms`` (summed, ms), ``cache_hits``, ``rule_decisions`` (decided
    by rules without a call), ``goals_passed``, ``goals_judged`` (passed by
    the model's judgement), ``cross_checks``, ``cross_disagreements`` - this
    run's share.  ``judged_share`` is the session's share of goals passed by
    judgement (0..1) and ``alarm`` is True above the project's
    ``judge_alarm_share`` (0.3, P7).  ``model`` names the primary model.
    """

    run_id: str
    flow: str
    model: str
    counters: dict = field(default_factory=dict)
    judged_share: float = 0.0
    alarm: bool = False


@dataclass(frozen=True, slots=True)
class StateNoted:
    """The state module noted the page of step ``index`` (S2, S3): ``moment`` before / after its action.

    ``belief`` is what the engine believes the page is doing (state, confidence, evidence);
    ``key_point`` why a heavy signature was taken ("" for a light-only state); ``digest`` the light
    signature; ``recent`` the ring buffer's last states as lines, oldest first (at most 30).
    """

    run_id: str
    flow: str
    index: int
    moment: str
    belief: Belief
    key_point: str = ""
    digest: str = ""
    recent: tuple[str, ...] = ()


EngineEvent = Union[EngineEvent, StateNoted]  # type: ignore[misc]


@dataclass(frozen=True, slots=True)
class ScreencastFrame:
    """One frame of Chromium's screencast of the engine's page (``Page.screencastFrame``), for a live view.

    Emitted only while a front end watches (the studio's engine,
    :class:`core.engine.plugins.screencast.ScreencastPlugin`); ``steadyhand
    run`` never starts the screencast.  ``jpeg`` is the frame (JPEG bytes,
    at most ``width`` x ``height`` CSS px times the device pixel ratio);
    ``width`` and ``height`` are the page's viewport in CSS px (the frame's
    image px per CSS px is ``image width / width``); ``scroll`` is the main
    frame's ``(scrollX, scrollY)`` in CSS px when the frame was drawn;
    ``timestamp`` is Chromium's, s since the epoch.  ``masks`` are boxes
    (CSS px of this frame's viewport) of password fields and fields holding
    a secret: a front end paints them over before the frame is shown.
    ``index`` is the step running when the frame came (-1 before the first);
    ``url`` the page's URL then (secrets masked): boxes of an observation of
    another URL or scroll position do not belong on this frame.
    """

    run_id: str
    flow: str
    index: int
    jpeg: bytes
    width: float
    height: float
    scroll: tuple[float, float] = (0.0, 0.0)
    timestamp: float = 0.0
    masks: tuple[BBox, ...] = ()
    url: str = ""


EngineEvent = Union[EngineEvent, ScreencastFrame]  # type: ignore[misc]


@dataclass(frozen=True, slots=True)
class SetBreakpoints:
    """Replace the engine's breakpoints (:mod:`core.engine.breakpoints`); takes effect at the next pause point.

    Accepted while idle and during a run; a breakpoint that fires emits
    :class:`Paused` with ``reason`` ``"breakpoint: ..."``.
    """

    breakpoints: Breakpoints = field(default_factory=Breakpoints)

Command = Union[Command, SetBreakpoints]  # type: ignore[misc]


@dataclass(frozen=True, slots=True)
class SkillConsidered:
    """A skill retrieved for step ``index`` (K6) had its trigger checked on the live page.

    ``holds``: the trigger holds; ``half``: it only half holds (never fires);
    ``reason`` what held and what did not, or why a holding skill was not
    fired (irreversible step, refused by the safety bar, fired there already).
    """

    run_id: str
    flow: str
    index: int
    skill_id: str
    holds: bool
    half: bool
    reason: str = ""


@dataclass(frozen=True, slots=True)
class SkillFired:
    """A skill chose action ``action_index`` (0-based) of its ``actions`` before flow step ``index`` (K6)."""

    run_id: str
    flow: str
    index: int
    skill_id: str
    description: str
    action_index: int
    actions: int


@dataclass(frozen=True, slots=True)
class SkillFinished:
    """A use of a skill at step ``index`` ended (K6): ``outcome`` is ``passed`` / ``failed`` / ``precondition`` /
    ``denied`` (a deny rule kept an element from being acted on); ``ms`` the use's time in ms."""

    run_id: str
    flow: str
    index: int
    skill_id: str
    outcome: str
    reason: str = ""
    ms: float = 0.0


EngineEvent = Union[EngineEvent, SkillConsidered, SkillFired, SkillFinished]  # type: ignore[misc]
__all__ += ["SkillConsidered", "SkillFired", "SkillFinished"]


@dataclass(frozen=True, slots=True)
class SkillProposed:
    """A run's failure and its correction became a skill proposal (K4, K5), stored with state ``proposed``.

    ``pass_rate`` is the validation's (0..1, on ``cases`` stored states); the
    review queue shows the proposal (``steadyhand skills show SKILL_ID``).
    """

    run_id: str
    flow: str
    skill_id: str
    description: str
    pass_rate: float
    cases: int = 0


@dataclass(frozen=True, slots=True)
class SkillDropped:
    """A failure of the run (or its candidate skill) did not become a skill; ``reason`` says why in one line
    (it did not reproduce, nothing differed from the flow, below the validation threshold...)."""

    run_id: str
    flow: str
    reason: str
    index: int = -1


EngineEvent = Union[EngineEvent, SkillProposed, SkillDropped]  # type: ignore[misc]
__all__ += ["SkillProposed", "SkillDropped"]


@dataclass(frozen=True, slots=True)
class PluginFailed:
    """A plugin's hook raised (:mod:`core.engine.hooks`): it was skipped and the step went on.

    ``plugin`` and ``hook`` name them; ``error`` is the exception's type and
    first line, secrets masked; ``index`` is the step (-1 off a step).
    """

    run_id: str
    flow: str
    index: int
    plugin: str
    hook: str
    error: str


EngineEvent = Union[EngineEvent, PluginFailed]  # type: ignore[misc]
__all__ += ["PluginFailed"]


# --- takeover: roll back only when the person asks (issue 23 item 4) ------------------------------


@dataclass(frozen=True, slots=True)
class RollBackStep:
    """During a takeover, put the page back as it was before the step (the person asked; never by itself).

    The takeover keeps the page as the escalation showed it; this command is
    the one way to roll it back.  What was recorded of the person's actions
    until then is dropped (the page they acted on is gone) and recording
    starts again.  Refused, with the reason, when the step's action may have
    written data (S6: an irreversible step that acted).
    """


@dataclass(frozen=True, slots=True)
class TakeoverRolledBack:
    """The answer to :class:`RollBackStep` for the takeover of step ``index``.

    ``ok``: the page is back as it was before the step; ``detail`` says what was
    done or why nothing was (plain words, secrets masked); ``dropped`` is how
    many recorded actions were dropped.
    """

    run_id: str
    flow: str
    index: int
    ok: bool
    detail: str
    dropped: int = 0


EngineEvent = Union[EngineEvent, TakeoverRolledBack]  # type: ignore[misc]
Command = Union[Command, RollBackStep]  # type: ignore[misc]
__all__ += ["RollBackStep", "TakeoverRolledBack"]
