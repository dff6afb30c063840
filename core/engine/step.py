"""The kernel's types: what a run carries (:class:`RunState`), one step's context (:class:`StepContext`)
and the failure a phase raises (:class:`StepFailure`).

Imported by the kernel (:mod:`core.engine.pipeline`), by the hook protocol
(:mod:`core.engine.hooks`) and by the plugins; it imports no feature module
and no executor (``.importlinter``: "The step kernel knows no feature").
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Mapping

from core.act.writes import Background, RequestSeen
from core.domain import Candidate, Checkpoint, EscalationKind, ErrorKind, Observation, Resolution, Step, StepOutcome, Verdict
from core.domain.change import ChangeReport
from core.domain.evidence import AssertionCheck
from core.domain.flow import Flow
from core.recover.policy import Failure
from core.recover.waits import WaitBudget

__all__ = ["RunState", "StepContext", "StepFailure"]


@dataclass
class RunState:
    """What one flow run carries from step to step.

    Attributes
    ----------
    run_id : str
        The run's id (one row in the store).
    flow : Flow
        The flow.
    params : dict[str, str]
        Bound parameters (secrets included; masked downstream).
    outcomes : list[StepOutcome]
        Finished steps, in the order they ran.
    side_effects : list[str]
        Irreversible steps that acted and whose effect was verified, and - when
        the write requests were seen - at least one of them succeeded ("step 3
        'Submit' wrote data (POST /requests 303)"): the escalation's true list
        of "data already written".
    checkpoints : list[Checkpoint]
        One per step that reached the checkpoint phase (R3).
    rounds : int
        Steps started (retries not counted); capped by ``max_steps`` (P6).
    captures : list[tuple[Step, Candidate]]
        Selector-only steps that passed, with the element they acted on: their
        descriptors may be written back once the whole run has passed.
    healed : list[tuple[int, Step, Candidate, Resolution]]
        Steps that passed with a heal (index, step as decided, element acted
        on, resolution): they become heal proposals (:mod:`core.heal`).
    invalid_actions : int
        Verdicts that were unchanged or changed unexpectedly (S8's measure).
    abstentions : int
        Attempts on which the locator abstained (R2).
    stop_kind : str
        The escalation kind (or error kind) of the step the run stopped at; "" while it goes on.
    by_hand : list[int]
        0-based index of each step at which a person took the page over and handed it back having acted
        (did the step, did something before it, or chose to skip it): one entry per hand-back.
    background : Background
        Endpoints the page calls by itself (polling, telemetry): not writes (S6).
    idle_from : float
        ``time.monotonic()`` when the last step ended: requests from then to
        the next action are background traffic.
    """

    run_id: str
    flow: Flow
    params: dict[str, str]
    outcomes: list[StepOutcome] = field(default_factory=list)
    side_effects: list[str] = field(default_factory=list)
    checkpoints: list[Checkpoint] = field(default_factory=list)
    rounds: int = 0
    invalid_actions: int = 0
    captures: list[tuple[Step, Candidate]] = field(default_factory=list)
    abstentions: int = 0
    stop_kind: str = ""
    healed: list[tuple[int, Step, Candidate, Resolution]] = field(default_factory=list)
    background: Background = field(default_factory=Background)
    idle_from: float = 0.0
    effects: list[tuple[str, list[RequestSeen], bool]] = field(default_factory=list)
    by_hand: list[int] = field(default_factory=list)

    def refresh_side_effects(self) -> None:
        """Rebuild :attr:`side_effects` from the verified irreversible steps, dropping writes since learnt
        to be background traffic (a poll that happened to fire during a step's action)."""
        lines = []
        for line, writes, watched in self.effects:
            ok = [w for w in writes if w.succeeded is not False and w not in self.background]
            if not watched:
                lines.append(line)
            elif ok:
                lines.append(f"{line} ({', '.join(w.shown for w in ok[:3])})")
        self.side_effects[:] = lines


@dataclass
class StepContext:
    """Everything one step's phases read and write; one per step, reset per attempt.

    ``decided`` is the step as the decide chain gave it; ``step`` the same with
    its parameters bound (what the later phases act on; never shown, since a
    bound value may be a secret).

    ``index`` is the 0-based position in the flow; ``next_index`` where the run
    goes on (``index + 1`` unless a hand-back says otherwise).  Observations are
    in CSS px; ``phase_ms`` holds ms per phase of the current attempt.
    ``change`` is the R1 comparison of the screen before the step with its
    baseline (None off the flow); ``reused`` says the before-observation is
    the previous step's after-observation (nothing happened in between).
    ``locator`` is the recorded locator (a Playwright selector) that matched
    exactly the resolved target, the action goes through it ("" when none
    did); ``fast`` says the step settled and verified on the fast path
    (:mod:`core.engine.fastpath`); ``looked_again`` why its light look was
    not enough ("" when it was); ``memo`` keeps page reads of the current
    after-observation (held under the key ``""``) that the cheap look and
    the verification share.
    """

    run: RunState
    index: int
    t0: float = field(default_factory=time.monotonic)
    attempt: int = 0
    decided: Step | None = None
    step: Step | None = None
    source: str = "flow"
    value: str = ""
    before: Observation | None = None
    reused: bool = False
    change: ChangeReport | None = None
    state: str = ""
    resolution: Resolution | None = None
    candidate: Candidate | None = None
    held: str | None = None
    already: bool = False
    acted: bool = False
    probe: Mapping[str, Any] = field(default_factory=dict)
    #: What the page keeps, read in the probe's round trip before a step that may write (effects.SNAPSHOT_JS).
    effects_read: Any = None
    #: The checkpoint phase's read for the act phase (:func:`core.engine.acting.read_before_acting`): ``ctx.waited``
    #: when it was made (a pause since makes the act phase read again); None when it made none.
    preread: float | None = None
    after: Observation | None = None
    verdict: Verdict | None = None
    phase_ms: dict[str, float] = field(default_factory=dict)
    wait: WaitBudget | None = None
    settled: Mapping[str, Any] = field(default_factory=dict)
    settle_t0: float = 0.0
    prior: tuple[str, WaitBudget, float] | None = None
    escalation_kind: str = ""
    status: str = ""
    error: str = ""
    error_kind: ErrorKind = ""
    next_index: int = -1
    reversible: bool | None = None
    writes: list[RequestSeen] = field(default_factory=list)
    watched: bool = False
    #: The server refused the attempt's writes (4xx) and nothing else was kept: the step failed, it is not a
    #: person's matter (``"POST /api/login 401"``; :func:`core.engine.norepeat.no_repeat`).
    refused: str = ""
    t_act: float = 0.0
    inferred: bool = False
    popup: bool = False
    cp: Checkpoint | None = None
    waited: float = 0.0
    checks: list[AssertionCheck] = field(default_factory=list)
    fast: bool = False
    looked_again: str = ""
    #: This attempt's action is counted in ``RunState.invalid_actions`` already (a look again without acting,
    #: :func:`core.engine.norepeat.no_repeat`, verifies the same action once more).
    invalid_counted: bool = False
    locator: str = ""
    memo: dict[str, Any] = field(default_factory=dict)
    #: The reads made ahead with the reuse check (:mod:`core.engine.ahead`): None when none were made.
    ahead: Any = None

    def __post_init__(self) -> None:
        self.next_index = self.index + 1

    @property
    def title(self) -> str:
        """The decided step's title, else the recorded one's (placeholders unbound: no secret in it)."""
        step = self.decided or (self.run.flow.steps[self.index] if self.index < len(self.run.flow.steps) else None)
        return step.title if step is not None else f"step {self.index + 1}"

    @property
    def where(self) -> str:
        """``"<flow> step '<id>'"`` for messages."""
        step = self.decided or self.run.flow.steps[self.index]
        return f"{self.run.flow.name} step {step.id!r}"

    def new_attempt(self) -> None:
        """Forget what the previous attempt saw; keep the decision's source and the attempt count."""
        self.attempt += 1
        self.before = self.after = self.candidate = self.resolution = self.verdict = None
        self.held, self.already, self.acted, self.probe, self.state = None, False, False, {}, ""
        self.effects_read = self.preread = None
        self.phase_ms, self.wait, self.settled, self.settle_t0 = {}, None, {}, 0.0
        self.reused, self.change = False, None
        self.reversible, self.writes, self.watched, self.t_act, self.inferred = None, [], False, 0.0, False
        self.popup, self.cp, self.checks = False, None, []
        self.fast, self.looked_again, self.locator, self.memo = False, "", "", {}
        self.invalid_counted, self.ahead = False, None

    @property
    def effective_reversible(self) -> bool:
        """The step's reversibility as known now: declared, else inferred from its writes (S6)."""
        if self.reversible is not None:
            return self.reversible
        return self.step.reversible if self.step is not None else True


class StepFailure(Exception):
    """A phase found that the attempt cannot pass; carries the policy's :class:`Failure`."""

    def __init__(self, failure: Failure, *, escalation: EscalationKind = "failed",
                 verdict: Verdict | None = None) -> None:
        super().__init__(failure.reason)
        self.failure = failure
        self.escalation = escalation
        self.verdict = verdict
