"""One step as a pipeline of phases over a :class:`StepContext` (architecture rule 2, R5).

Phases, in order (:data:`core.engine.events.PHASES`):

``observe``
    breaker check (R4), then the page before the action (DOM, boxes, screenshot).
``fingerprint``
    the state signature of that page (S2); change detection (R1) plugs in here.
``decide``
    the next action from the decide chain (skill > flow step > model > human).
``resolve``
    the target through the locator chain, which may abstain (R2); skipped
    for actions without a target.
``precheck``
    visible, enabled, editable (S4); the target is pinned for its assertions.
``checkpoint``
    the state before acting is kept (R3) - where a rollback returns to.
``act``
    the action, unless the target already is in the wanted state.
``settle``
    the adaptive wait until the page is quiet (P6, S7).
``verify``
    the page after, the expected delta (S5) and the step's assertions (P7).
``record``
    always: the outcome is stored and ``StepFinished`` emitted.

:func:`run_step` runs the phases with the run control's pause point before
each, one error path (any exception of a phase becomes a
:class:`~core.recover.policy.Failure` judged by the recovery policy) and a
``finally`` that records the step - also when the browser crashes mid-step
or the user stops the run.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from core.act.expect import expected_delta, judge, observed_deltas
from core.act.precheck import precheck as precheck_target
from core.act.space import already_satisfied, needs_target, spec
from core.domain import (
    Candidate, Checkpoint, EscalationAnswerKind, EscalationCandidate, EscalationKind, ErrorKind, Flow,
    Observation, Resolution, ScoredCandidate, Step, StepOutcome, Verdict,
)
from core.engine.control import Answer, StopRequested, TakeoverRequested
from core.engine.events import (
    ActionPerformed, EscalationRaised, HandedBack, PhaseChanged, StepFinished,
    StepStarted, TakeoverStarted, TargetResolved, VerdictReached,
)
from core.locate import resolve
from core.perception.driver import ActionError, BrowserClosedError, NavigationError, PageError, PageLoadingError
from core.plan import DecideContext, NeedsHuman
from core.project.params import ParameterError, bind_step, placeholders
from core.recover.policy import Failure, decide_recovery, human_answers

if TYPE_CHECKING:
    from core.engine.executor import FlowExecutor

__all__ = ["RunState", "StepContext", "StepFailure", "PHASE_FUNCTIONS", "run_step", "fatal_kind"]


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
        Irreversible steps that passed ("step 3 'Submit' wrote data").
    checkpoints : list[Checkpoint]
        One per step that reached the checkpoint phase (R3).
    rounds : int
        Steps started (retries not counted); capped by ``max_steps`` (P6).
    captures : list[tuple[Step, Candidate]]
        Selector-only steps that passed, with the element they acted on: their
        descriptors may be written back once the whole run has passed.
    invalid_actions : int
        Verdicts that were unchanged or changed unexpectedly (S8's measure).
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


@dataclass
class StepContext:
    """Everything one step's phases read and write; one per step, reset per attempt.

    ``decided`` is the step as the decide chain gave it; ``step`` the same with
    its parameters bound (what the later phases act on; never shown, since a
    bound value may be a secret).

    ``index`` is the 0-based position in the flow; ``next_index`` where the run
    goes on (``index + 1`` unless a hand-back says otherwise).  Observations are
    in CSS px; ``phase_ms`` holds ms per phase of the current attempt.
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
    state: str = ""
    resolution: Resolution | None = None
    candidate: Candidate | None = None
    held: str | None = None
    already: bool = False
    acted: bool = False
    probe: Mapping[str, Any] = field(default_factory=dict)
    after: Observation | None = None
    verdict: Verdict | None = None
    phase_ms: dict[str, float] = field(default_factory=dict)
    status: str = ""
    error: str = ""
    error_kind: ErrorKind = ""
    next_index: int = -1

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
        self.phase_ms = {}


class StepFailure(Exception):
    """A phase found that the attempt cannot pass; carries the policy's :class:`Failure`."""

    def __init__(self, failure: Failure, *, escalation: EscalationKind = "failed",
                 verdict: Verdict | None = None) -> None:
        super().__init__(failure.reason)
        self.failure = failure
        self.escalation = escalation
        self.verdict = verdict


# --- phases ---------------------------------------------------------------------------------


def observe(ex: "FlowExecutor", ctx: StepContext) -> None:
    """Breaker check (R4), then the page before the action."""
    if not ex.breaker.allow():
        raise StepFailure(Failure("breaker_open", "circuit breaker is open"), escalation="breaker_open")
    ctx.before = ex.observe(ctx.run.run_id, ctx.run.flow, ctx.index, "before")
    _wait_while_loading(ex, ctx)


def _wait_while_loading(ex: "FlowExecutor", ctx: StepContext) -> None:
    """A page still loading (spinner, skeleton rows, ``aria-busy``): wait for it, up to ``waits.loading_max_ms``
    (S7), and observe again; never resolve against placeholders (failure kind 4).

    Raises
    ------
    PageLoadingError
        ``"still loading after N ms: <evidence>"`` when the bound is reached.
    """
    wait = getattr(ex.driver, "wait_loaded", None)
    limit = float(ex.settings.waits.loading_max_ms)
    t0 = time.monotonic()
    while ctx.before is not None and ctx.before.loading and wait is not None:
        if (time.monotonic() - t0) * 1000.0 >= limit:
            raise PageLoadingError(f"still loading after {limit:.0f} ms: {'; '.join(ctx.before.loading)}")
        wait(limit, started=t0)
        ctx.before = ex.observe(ctx.run.run_id, ctx.run.flow, ctx.index, "before")


def fingerprint(ex: "FlowExecutor", ctx: StepContext) -> None:
    """The light state signature of the page before the action (S2)."""
    assert ctx.before is not None
    ctx.state = ctx.before.signature.digest


def decide(ex: "FlowExecutor", ctx: StepContext) -> None:
    """The next action from the decide chain; binds its parameters."""
    assert ctx.before is not None
    run = ctx.run
    if ctx.attempt == 1 and run.rounds > ex.settings.max_steps:
        raise StepFailure(Failure("budget", f"the run took {run.rounds - 1} steps, its limit (max_steps "
                                            f"{ex.settings.max_steps}, P6)"), escalation="budget")
    try:
        decision = ex.chain.decide(DecideContext(run.flow, ctx.index, ctx.before, tuple(run.outcomes), run.params))
    except NeedsHuman as exc:
        raise StepFailure(Failure("no_decision", exc.reason), escalation="no_decision") from None
    ctx.decided, ctx.source = decision.step, decision.source
    ctx.step = bind_step(decision.step, run.params, where=ctx.where)
    value = ctx.step.action.value
    if decision.step.action.kind == "upload" and value and run.flow.source and not Path(value).is_absolute():
        beside = Path(run.flow.source).parent / value  # recorded uploads live next to the flow file
        if beside.is_file():
            value = str(beside)
    ctx.value = value


def resolve_target(ex: "FlowExecutor", ctx: StepContext) -> None:
    """The target through the selector (when given) and the locator chain (R2)."""
    assert ctx.step is not None and ctx.before is not None
    t0 = time.perf_counter()
    resolution, cand = _by_selector(ex, ctx.step)
    if resolution is None:
        resolution = resolve(ctx.step.target, ctx.before.candidates, config=ex.settings.locator)
        cand = next((c for c in ctx.before.candidates if c.ref == resolution.ref), None) if resolution.ref else None
    ctx.resolution = replace(resolution, ms=(time.perf_counter() - t0) * 1000.0)
    ctx.candidate = cand
    ex.store_call("record_resolution", ctx.run.run_id, ctx.index, ctx.resolution)
    ex.emit(TargetResolved(ctx.run.run_id, ctx.run.flow.name, ctx.index, ctx.resolution, cand))
    if ctx.resolution.abstained or cand is None:
        if ctx.step.optional:
            ctx.status, ctx.error = "skipped", "target not found; optional step skipped"
            return
        raise StepFailure(Failure("abstained", f"locator abstained: {ctx.resolution.reason}"), escalation="abstained")


def _by_selector(ex: "FlowExecutor", step: Step) -> tuple[Resolution | None, Candidate | None]:
    """EXACT by the author's selector: one match wins; without a descriptor, anything else abstains."""
    if not step.selector:
        return None, None
    matches = ex.driver.refs_for_selector(step.selector)
    if len(matches) == 1:
        c = matches[0]
        return Resolution("exact", c.ref, 1.0, 1.0, 0.0, reason=f"selector {step.selector!r} matched one element",
                          top=(ScoredCandidate(c.ref, 1.0, c.descriptor.label_text),)), c
    if not step.target.is_empty:
        return None, None
    why = "matched nothing" if not matches else f"matched {len(matches)} elements"
    return Resolution("", None, 0.0, 0.0, 0.0, abstained=True,
                      reason=f"selector {step.selector!r} {why} and the step has no descriptor yet",
                      top=tuple(ScoredCandidate(c.ref, 0.5, c.descriptor.label_text) for c in matches[:5])), None


def precheck(ex: "FlowExecutor", ctx: StepContext) -> None:
    """S4 pre-check; pins the target when the step asserts on it (the next observation renumbers refs)."""
    assert ctx.step is not None
    why = precheck_target(ctx.step.action.kind, ctx.candidate)
    if why:
        raise StepFailure(Failure("precondition", f"precondition not met: {why}"), escalation="precondition")
    ctx.already = already_satisfied(ctx.step.action.kind, ctx.candidate, ctx.value)
    cand = ctx.candidate
    ctx.held = cand.ref if cand else None
    hold = getattr(ex.driver, "hold", None)
    if cand is not None and hold is not None and any(not a.selector for a in ctx.step.assertions):
        try:
            ctx.held = hold(cand.ref)
        except ActionError:
            ctx.held = cand.ref


def checkpoint(ex: "FlowExecutor", ctx: StepContext) -> None:
    """Keep the state before acting (R3): step, URL, signature, reversibility, side effects so far."""
    assert ctx.step is not None and ctx.before is not None
    run = ctx.run
    cp = Checkpoint(run.run_id, run.flow.name, ctx.index, ctx.step.id, ctx.before.url, ctx.state,
                    ctx.step.reversible, tuple(run.side_effects))
    if run.checkpoints and run.checkpoints[-1].index == ctx.index:
        run.checkpoints[-1] = cp  # a retry replaces its step's checkpoint
    else:
        run.checkpoints.append(cp)


def act(ex: "FlowExecutor", ctx: StepContext) -> None:
    """Perform the action, unless the target already is in the wanted state."""
    assert ctx.step is not None
    run_id, flow, kind = ctx.run.run_id, ctx.run.flow.name, ctx.step.action.kind
    ctx.probe = getattr(ex.driver, "probe", lambda: None)() or {}
    if ctx.already:
        ex.emit(ActionPerformed(run_id, flow, ctx.index, kind, True, "already in the wanted state"))
        return
    try:
        ex.driver.perform(ctx.step.action, ctx.candidate.ref if ctx.candidate else None, ctx.value)
    except ActionError as exc:
        ex.emit(ActionPerformed(run_id, flow, ctx.index, kind, False, str(exc)))
        raise StepFailure(Failure("action_error", str(exc))) from None
    ctx.acted = True
    ex.emit(ActionPerformed(run_id, flow, ctx.index, kind, True))


def settle(ex: "FlowExecutor", ctx: StepContext) -> None:
    """Adaptive wait until the page is quiet (P6); submits (irreversible steps) may wait longer (S7)."""
    assert ctx.step is not None
    ex.driver.wait_settled(long=not ctx.step.reversible, start=dict(ctx.probe))


def verify(ex: "FlowExecutor", ctx: StepContext) -> None:
    """The page after; expected delta (S5) and assertions (P7) give the verdict."""
    assert ctx.step is not None and ctx.before is not None
    run, step = ctx.run, ctx.step
    ctx.after = ex.observe(run.run_id, run.flow, ctx.index, "after")
    verdict = _effect_verdict(ctx)
    failed = [f"{a.kind} {ex.redact(repr(a.expected))}: {why}" for a in step.assertions
              for ok, why in [ex.driver.check_assertion(a, ctx.held, a.expected)] if not ok]
    if failed:
        effect_ok = verdict.kind == "as_expected" and ctx.acted
        verdict = Verdict("failed", verdict.expected, verdict.observed, "assertion failed: " + "; ".join(failed))
        if effect_ok:  # the action had its effect: doing it again would act twice
            _record_verdict(ex, ctx, verdict)
            raise StepFailure(Failure("assertion", verdict.reason, acted=True), escalation="assertion",
                              verdict=verdict)
    elif step.assertions and verdict.kind == "unchanged" and step.action.kind in ("assert", "wait"):
        verdict = Verdict("as_expected", verdict.expected, verdict.observed, "assertions hold")
    _record_verdict(ex, ctx, verdict)
    if verdict.invalid:
        run.invalid_actions += 1
    if verdict.kind != "as_expected":
        kind = "changed_unexpectedly" if verdict.kind == "changed_unexpectedly" else "unchanged"
        raise StepFailure(Failure(kind if verdict.kind != "failed" else "assertion", verdict.reason,
                                  acted=ctx.acted), verdict=verdict)
    _passed(ex, ctx)


def _effect_verdict(ctx: StepContext) -> Verdict:
    assert ctx.step is not None and ctx.before is not None and ctx.after is not None
    expected = expected_delta(ctx.step)
    if ctx.already:
        return Verdict("as_expected", expected, (), "the element was already in the wanted state")
    verdict = judge(expected, observed_deltas(ctx.before, ctx.after))
    cand = ctx.candidate
    row = spec(ctx.step.action.kind)
    if (verdict.kind == "unchanged" and cand is not None and row.satisfiable and row.value != "none"
            and cand.value == ctx.value):  # a value field (input, select) that held the value already
        verdict = Verdict("as_expected", expected, verdict.observed, "the field already held the value")
    return verdict


def _record_verdict(ex: "FlowExecutor", ctx: StepContext, verdict: Verdict) -> None:
    ctx.verdict = verdict
    ex.store_call("record_verdict", ctx.run.run_id, ctx.index, verdict)
    ex.emit(VerdictReached(ctx.run.run_id, ctx.run.flow.name, ctx.index, verdict))


def _passed(ex: "FlowExecutor", ctx: StepContext) -> None:
    assert ctx.decided is not None
    ctx.status = "passed"
    ex.breaker.record_success()
    ex.emit_breaker(ctx.run.run_id)
    decided = ctx.decided
    if ctx.candidate is not None and decided.target.is_empty and not placeholders(decided.selector):
        # a parametrised selector names another element each run: its descriptor is not this one
        ctx.run.captures.append((decided, ctx.candidate))


#: The phases before ``record``, in order: (name, function).
PHASE_FUNCTIONS: tuple[tuple[str, Callable[["FlowExecutor", StepContext], None]], ...] = (
    ("observe", observe), ("fingerprint", fingerprint), ("decide", decide), ("resolve", resolve_target),
    ("precheck", precheck), ("checkpoint", checkpoint), ("act", act), ("settle", settle), ("verify", verify),
)


# --- the loop -------------------------------------------------------------------------------


def run_step(ex: "FlowExecutor", run: RunState, index: int) -> StepContext:
    """Run flow step ``index`` to its end: attempts, recovery, escalation, takeover.

    Returns the context with ``status`` (see :class:`core.domain.StepOutcome`),
    ``error``, ``error_kind`` and ``next_index``.  Raises
    :class:`~core.engine.control.StopRequested` after recording the step
    when the user stops the run.
    """
    ctx = StepContext(run, index)
    run.rounds += 1
    try:
        while not ctx.status:
            ctx.new_attempt()
            ex.emit(StepStarted(run.run_id, run.flow.name, index, ctx.title, ctx.attempt))
            try:
                _run_phases(ex, ctx)
            except TakeoverRequested:
                _take_over(ex, ctx)
            except Exception as exc:  # noqa: BLE001 - the one error path: the policy judges it
                _on_failure(ex, ctx, exc)
    except (StopRequested, KeyboardInterrupt):
        ctx.status, ctx.error, ctx.error_kind = "stopped", "stopped by the user", "stopped"
        raise
    finally:
        record(ex, ctx)
    return ctx


def _run_phases(ex: "FlowExecutor", ctx: StepContext) -> None:
    run = ctx.run
    for name, fn in PHASE_FUNCTIONS:
        if ctx.status:
            return  # finished early (an optional step whose target is absent)
        if name == "resolve" and not needs_target(ctx.step):  # type: ignore[arg-type]
            continue
        ex.control.pause_point(run.run_id, run.flow.name, ctx.index, name)
        ex.emit(PhaseChanged(run.run_id, run.flow.name, ctx.index, name))  # type: ignore[arg-type]
        t0 = time.perf_counter()
        try:
            fn(ex, ctx)
        finally:
            ctx.phase_ms[name] = (time.perf_counter() - t0) * 1000.0


def _on_failure(ex: "FlowExecutor", ctx: StepContext, exc: Exception) -> None:
    """Judge a failed attempt: retry, escalate (and act on the answer) or abort."""
    if isinstance(exc, PageError):  # a broken, stuck or still-loading page: a human decides (never a hang)
        exc = StepFailure(Failure("page", str(exc), acted=ctx.acted), escalation="page")
    if not isinstance(exc, StepFailure):
        ctx.status, ctx.error_kind, ctx.error = "error", *fatal_kind(exc)
        return
    f, step = exc.failure, ctx.step
    if ctx.verdict is None and exc.verdict is None and f.kind not in ("abstained", "breaker_open", "no_decision",
                                                                        "budget"):
        ctx.verdict = Verdict("failed", expected_delta(step) if step else "any", (), f.reason)
    reversible = step.reversible if step is not None else True
    ex.breaker.record_failure(f.reason, read_only=bool(step and step.read_only))
    ex.emit_breaker(ctx.run.run_id)
    max_attempts = 1 + (ex.settings.waits.retries if reversible else 0)
    rec = decide_recovery(f, reversible=reversible, attempts=ctx.attempt, max_attempts=max_attempts,
                          breaker_state=ex.breaker.state)
    if rec.kind == "retry":
        time.sleep(ex.settings.waits.retry_delay_ms / 1000.0)
        return
    kind: EscalationKind = "irreversible" if f.acted and not reversible else exc.escalation
    answer = _escalate(ex, ctx, rec.reason, kind, human_answers(f, reversible=reversible))
    _apply_answer(ex, ctx, answer, rec.reason, failed=f.kind == "assertion",
                  budget=f.kind == "budget")


def fatal_kind(exc: BaseException) -> tuple[ErrorKind, str]:
    """Error kind and message of an exception that ends the run.

    ``parameter`` (a ``{name}`` without value), ``navigation`` (a page would
    not load), ``browser`` (the browser or page died, or Playwright failed),
    else ``internal`` (a defect of Steadyhand).
    """
    if isinstance(exc, ParameterError):
        return "parameter", str(exc)
    if isinstance(exc, NavigationError):
        return "navigation", str(exc)
    first = str(exc).splitlines()[0] if str(exc) else ""
    driver_error = (isinstance(exc, (ActionError, BrowserClosedError, PageError))
                    or type(exc).__module__.startswith("playwright"))
    return ("browser" if driver_error else "internal"), f"{type(exc).__name__}: {first}"


def _escalate(ex: "FlowExecutor", ctx: StepContext, reason: str, kind: EscalationKind,
              answers: tuple[EscalationAnswerKind, ...]) -> Answer:
    run = ctx.run
    by_ref = {c.ref: c for c in (ctx.before.candidates if ctx.before else ())}
    top = tuple(EscalationCandidate(c.ref, c.label, c.score, by_ref[c.ref].descriptor.bbox if c.ref in by_ref else None)
                for c in (ctx.resolution.top if ctx.resolution else ()))
    event = EscalationRaised(run.run_id, run.flow.name, ctx.index, ctx.title, reason, top, tuple(run.side_effects),
                             kind, answers)
    ex.store_call("record_escalation", run.run_id, event)
    ex.emit(event)
    answer = ex.ask_human(event)
    return answer if answer.kind in answers else Answer("stop")


def _apply_answer(ex: "FlowExecutor", ctx: StepContext, answer: Answer, reason: str, *, failed: bool,
                  budget: bool = False) -> None:
    if answer.kind == "retry":
        ex.breaker.half_open()
        ex.emit_breaker(ctx.run.run_id)
        return
    if answer.kind == "skip":
        ctx.status, ctx.error = "skipped", f"skipped by the user: {reason}"
        return
    if answer.kind == "take_over":
        _take_over(ex, ctx)
        return
    # an assertion that does not hold is a failed flow (the app misbehaved); anything else the
    # engine could not do on its own is an escalation
    ctx.status, ctx.error = ("failed" if failed else "escalated"), reason
    ctx.error_kind = "assertion" if failed else ("budget" if budget else "escalated")


def _take_over(ex: "FlowExecutor", ctx: StepContext) -> None:
    """A human has the page: wait for the hand-back, then go on from the step they name.

    When this step's action was already performed and the step is
    irreversible, "the same step again" goes on with the next step instead:
    it may have written data, and is never done twice (S6).
    """
    run = ctx.run
    ex.emit(TakeoverStarted(run.run_id, run.flow.name, ctx.index, ctx.acted))
    back = ex.control.take_over(run.run_id, run.flow.name, ctx.index)
    if back.kind == "stop":
        ctx.status, ctx.error, ctx.error_kind = "escalated", "the takeover ended without a hand-back", "escalated"
        return
    target = ctx.index if back.continue_from is None else back.continue_from
    if not 0 <= target <= len(run.flow.steps):
        target = ctx.index
    done_already = ctx.acted and ctx.step is not None and not ctx.step.reversible
    if target == ctx.index and done_already:
        target = ctx.index + 1
    ex.emit(HandedBack(run.run_id, run.flow.name, target))
    ex.breaker.record_success()  # the human left the page in a working state
    ex.emit_breaker(run.run_id)
    if target == ctx.index:
        return  # the same step again, on the page as the human left it
    why = "; its action had been performed and is not done again" if done_already else ""
    ctx.status, ctx.error, ctx.next_index = "manual", f"done by hand; continued from step {target + 1}{why}", target


def record(ex: "FlowExecutor", ctx: StepContext) -> None:
    """Always: store the outcome and emit ``StepFinished`` (also after a crash or a stop)."""
    run = ctx.run
    ex.emit(PhaseChanged(run.run_id, run.flow.name, ctx.index, "record"))
    if not ctx.status:
        ctx.status, ctx.error_kind = "error", ctx.error_kind or "internal"
        ctx.error = ctx.error or "the step ended without a result"
    ms = (time.monotonic() - ctx.t0) * 1000.0
    step_id = ctx.decided.id if ctx.decided else (run.flow.steps[ctx.index].id if ctx.index < len(run.flow.steps) else "")
    outcome = StepOutcome(ctx.index, step_id, ctx.title, ctx.status, ctx.resolution, ctx.verdict,  # type: ignore[arg-type]
                          ctx.attempt, ms, ex.redact(ctx.error), ctx.source, tuple(ctx.phase_ms.items()))
    run.outcomes.append(outcome)
    if ctx.status == "passed" and ctx.step is not None and not ctx.step.reversible:
        run.side_effects.append(f"step {ctx.index + 1} '{ctx.title}' wrote data")
    ex.store_call("record_step", run.run_id, outcome)
    ex.emit(StepFinished(run.run_id, run.flow.name, ctx.index, ctx.status,
                         bool(ctx.resolution and ctx.resolution.healed), ms, outcome.error, outcome.phase_ms,
                         ctx.source))
