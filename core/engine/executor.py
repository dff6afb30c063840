"""The step loop: one flow, step by step, in explicit phases (ARCHITECTURE rule 2).

Phases of a step: observe -> signature -> resolve -> precheck -> act -> wait
-> verify -> record, with one error path, and pause / stop checks between
phases.  The executor is used by the engine thread (studio) and directly by
the headless command line; it never touches Qt.
"""
from __future__ import annotations

import re
import time
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Literal, Mapping, Protocol

from core.act.expect import expected_delta, judge, observed_deltas
from core.domain import (
    Candidate, ErrorKind, Flow, Observation, Resolution, RunResult, ScoredCandidate, Step, StepOutcome, Verdict,
)
from core.engine.events import (
    ActionPerformed, BreakerChanged, EngineEvent, EscalationRaised, FlowFinished, FlowStarted,
    ObservationMade, PhaseChanged, StepFinished, StepStarted, TargetResolved, VerdictReached,
)
from core.locate import LocatorConfig, resolve
from core.perception.driver import ActionError, Driver, NavigationError
from core.recover.breaker import CircuitBreaker

__all__ = [
    "StopRequested", "RunControl", "HeadlessControl", "ExecutorConfig", "FlowExecutor", "bind_params",
    "ParameterError",
]

#: P6: "2 retries 300 ms apart".
RETRIES = 2
RETRY_DELAY_S = 0.3
_PARAM = re.compile(r"\{(\w+)\}")


class StopRequested(Exception):
    """The user asked the run to stop."""


class ParameterError(ValueError):
    """A step value names a parameter that has no value."""


def bind_params(text: str, params: Mapping[str, str], *, where: str = "") -> str:
    """Replace ``{name}`` placeholders by parameter values.

    Raises
    ------
    ParameterError
        When a placeholder has no value (names the step via ``where``).
    """
    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in params:
            raise ParameterError(f"{where}: parameter {{{name}}} has no value (known: {', '.join(sorted(params)) or 'none'})")
        return str(params[name])

    return _PARAM.sub(sub, text)


class RunControl(Protocol):
    """How the executor talks to whoever drives the run (studio or CLI)."""

    def checkpoint(self, run_id: str, flow: str, index: int) -> None:
        """Called between phases; blocks while paused; raises StopRequested."""

    def escalate(self, event: EscalationRaised) -> Literal["retry", "stop"]:
        """A human is needed: headless answers "stop"; the studio pauses and waits."""


class HeadlessControl:
    """Run control of the command line: never pauses, escalations end the flow."""

    def checkpoint(self, run_id: str, flow: str, index: int) -> None:
        return None

    def escalate(self, event: EscalationRaised) -> Literal["retry", "stop"]:
        return "stop"


@dataclass(frozen=True)
class ExecutorConfig:
    """Knobs of the step loop.

    Attributes
    ----------
    locator : LocatorConfig
        Locator chain settings.
    breaker_threshold, read_only_threshold : int
        Circuit breaker thresholds (3 and 5, seed 000 R4).
    retries : int
        Extra attempts of a failed reversible step (2, seed 002 P6).
    screenshots : bool
        Take screenshots at each observation (the studio and the store use them).
    store_back : bool
        Save the captured descriptor of a selector-only step into its flow file.
    """

    locator: LocatorConfig = field(default_factory=LocatorConfig)
    breaker_threshold: int = 3
    read_only_threshold: int = 5
    recovery_timeout_s: float = 300.0
    retries: int = RETRIES
    screenshots: bool = True
    store_back: bool = True


class _StepFailure(Exception):
    def __init__(self, reason: str, *, escalate: bool = False, acted: bool = False,
                 verdict: Verdict | None = None, assertion: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.assertion = assertion
        self.escalate = escalate
        self.acted = acted
        self.verdict = verdict


class FlowExecutor:
    """Runs flows on one driver.

    Parameters
    ----------
    driver : Driver
        An open browser driver (owned by the calling thread).
    emit : Callable[[EngineEvent], None]
        Receives every event (on the calling thread).
    control : RunControl
        Pause / stop / escalation policy.
    store : object | None
        A :class:`core.store.Store` (or None): runs, steps, observations,
        resolutions, verdicts and escalations are recorded there.
    config : ExecutorConfig
        Knobs.
    on_descriptor_captured : Callable[[Flow, Step, Candidate], None] | None
        Called when a selector-only step's descriptor is captured, so the
        caller can save it back to the flow file.
    """

    def __init__(self, driver: Driver, *, emit: Callable[[EngineEvent], None], control: RunControl | None = None,
                 store: Any = None, config: ExecutorConfig | None = None, project_name: str = "",
                 on_descriptor_captured: Callable[[Flow, Step, Candidate], None] | None = None) -> None:
        self.driver = driver
        self.emit = emit
        self.control = control or HeadlessControl()
        self.store = store
        self.config = config or ExecutorConfig()
        self.project_name = project_name
        self.on_descriptor_captured = on_descriptor_captured
        self.breaker = CircuitBreaker(self.config.breaker_threshold, self.config.read_only_threshold,
                                      self.config.recovery_timeout_s)
        self._invalid_count: dict[str, int] = {}
        self.store_errors: list[str] = []

    # --- store helpers (the store must never break a run) -----------------------------
    def _store(self, method: str, *args: Any) -> Any:
        if self.store is None:
            return None
        try:
            return getattr(self.store, method)(*args)
        except Exception as exc:  # noqa: BLE001 - recording is best effort, the run goes on
            self.store_errors.append(f"store.{method} failed: {exc}")
            return None

    def _emit_breaker(self, run_id: str) -> None:
        self.emit(BreakerChanged(run_id, self.breaker.state, self.breaker.failures, self.breaker.threshold))

    # --- the flow -------------------------------------------------------------------
    def run_flow(self, flow: Flow, *, params: Mapping[str, str], run_id: str | None = None,
                 setup: Callable[[], Mapping[str, str]] | None = None) -> RunResult:
        """Run one flow from its start URL and return its result.

        Parameters
        ----------
        flow : Flow
            The flow.
        params : Mapping[str, str]
            Bound parameter values (secrets included; they never leave in clear).
        setup : Callable[[], Mapping[str, str]] | None
            Called after the start URL is loaded (e.g. to start a MiniWoB++
            episode); returns extra parameters (e.g. bound from the utterance).

        Never raises: errors end the flow with status ``error``; a stop
        request ends it with status ``stopped``.
        """
        run_id = self._store("begin_run", self.project_name, flow.name) or run_id or uuid.uuid4().hex
        t0 = time.monotonic()
        self.breaker = CircuitBreaker(self.config.breaker_threshold, self.config.read_only_threshold,
                                      self.config.recovery_timeout_s)
        self.emit(FlowStarted(run_id, flow.name, tuple(s.title for s in flow.steps)))
        self._emit_breaker(run_id)
        outcomes: list[StepOutcome] = []
        status, error = "passed", ""
        kind: ErrorKind = ""
        loaded = False
        side_effects: list[str] = []
        try:
            self.control.checkpoint(run_id, flow.name, -1)
            self.driver.goto(bind_params(flow.start_url, params, where=f"{flow.name} start_url"))
            loaded = True
            if setup is not None:
                params = {**params, **setup()}
            for index, step in enumerate(flow.steps):
                outcome = self._run_step(run_id, flow, index, step, params, side_effects)
                outcomes.append(outcome)
                if outcome.status in ("failed", "escalated"):
                    status, error = outcome.status, outcome.error
                    kind = "assertion" if outcome.status == "failed" else "escalated"
                    break
                if not step.reversible and outcome.status == "passed":
                    side_effects.append(f"step {index + 1} '{step.title}' wrote data")
        except StopRequested:
            status, error, kind = "stopped", "stopped by the user", "stopped"
        except (NavigationError, ParameterError) as exc:
            status, error = "error", str(exc)
            kind = ("parameter" if isinstance(exc, ParameterError)
                    else "unreachable" if not loaded and str(exc).startswith("cannot load") else "navigation")
        except Exception as exc:  # noqa: BLE001 - a crashed browser must end the run cleanly
            status, error = "error", f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            browser = isinstance(exc, ActionError) or type(exc).__module__.startswith("playwright")
            kind = "browser" if browser else "internal"
        heals_by: dict[str, int] = {}
        for o in outcomes:
            if o.resolution is not None and o.resolution.healed and o.status == "passed":
                heals_by[o.resolution.strategy] = heals_by.get(o.resolution.strategy, 0) + 1
        result = RunResult(
            run_id=run_id, flow=flow.name, status=status, steps=tuple(outcomes),
            heals=sum(heals_by.values()), invalid_actions=self._invalid_count.get(run_id, 0),
            seconds=time.monotonic() - t0, error=error, heals_by_strategy=heals_by, error_kind=kind,
        )
        return result

    def finish(self, result: RunResult) -> None:
        """Record and announce a finished flow (after any site hook set the reward)."""
        self._store("finish_run", result.run_id, result)
        self.emit(FlowFinished(result.run_id, result))

    # --- one step ---------------------------------------------------------------------
    def _observe(self, run_id: str, flow: Flow, index: int, when: Literal["before", "after"]) -> Observation:
        self.emit(PhaseChanged(run_id, flow.name, index, "observe"))
        obs = self.driver.observe(screenshot=self.config.screenshots)
        self._store("record_observation", run_id, index, when, obs)
        self.emit(ObservationMade(run_id, flow.name, index, when, obs))
        return obs

    def _resolve(self, step: Step, obs: Observation) -> tuple[Resolution, Candidate | None]:
        t0 = time.perf_counter()
        by_ref = {c.ref: c for c in obs.candidates}
        if step.selector:
            matches = self.driver.refs_for_selector(step.selector)
            ms = (time.perf_counter() - t0) * 1000.0
            if len(matches) == 1:
                c = matches[0]
                return Resolution("exact", c.ref, 1.0, 1.0, ms, reason=f"selector {step.selector!r} matched one element",
                                  top=(ScoredCandidate(c.ref, 1.0, c.descriptor.label_text),)), c
            if step.target.is_empty:
                why = "matched nothing" if not matches else f"matched {len(matches)} elements"
                return Resolution("", None, 0.0, 0.0, ms, abstained=True,
                                  reason=f"selector {step.selector!r} {why} and the step has no descriptor yet",
                                  top=tuple(ScoredCandidate(c.ref, 0.5, c.descriptor.label_text) for c in matches[:5])), None
        res = resolve(step.target, obs.candidates, config=self.config.locator)
        res = replace(res, ms=(time.perf_counter() - t0) * 1000.0)
        return res, (by_ref.get(res.ref) if res.ref else None)

    @staticmethod
    def _precheck(step: Step, cand: Candidate | None) -> str:
        """S4 pre-check; returns "" when fine, else why the precondition is not met."""
        if cand is None:
            return ""
        kind = step.action.kind
        if not cand.visible:
            return "target is not visible"
        if kind in ("click", "dblclick", "input", "select", "check", "uncheck", "upload") and not cand.enabled:
            return "target is disabled"
        if kind == "input" and not cand.editable and cand.descriptor.role not in ("textbox", "combobox", "searchbox", "spinbutton"):
            return "target is not an editable field"
        return ""

    def _run_step(self, run_id: str, flow: Flow, index: int, step: Step, params: Mapping[str, str],
                  side_effects: list[str]) -> StepOutcome:
        t0 = time.monotonic()
        where = f"{flow.name} step {step.id!r}"
        value = bind_params(step.action.value, params, where=where)
        if step.action.kind == "upload" and value and flow.source and not Path(value).is_absolute():
            beside = Path(flow.source).parent / value  # recorded uploads live next to the flow file
            if beside.is_file():
                value = str(beside)
        max_attempts = 1 + (self.config.retries if step.reversible else 0)
        attempt = 0
        resolution: Resolution | None = None
        verdict: Verdict | None = None
        last_error = ""
        while True:
            attempt += 1
            self.emit(StepStarted(run_id, flow.name, index, step.title, attempt))
            acted = False
            try:
                self.control.checkpoint(run_id, flow.name, index)
                if not self.breaker.allow():
                    raise _StepFailure("circuit breaker is open", escalate=True)
                before = self._observe(run_id, flow, index, "before")
                self.emit(PhaseChanged(run_id, flow.name, index, "signature"))
                cand: Candidate | None = None
                if step.needs_target:
                    self.control.checkpoint(run_id, flow.name, index)
                    self.emit(PhaseChanged(run_id, flow.name, index, "resolve"))
                    resolution, cand = self._resolve(step, before)
                    self._store("record_resolution", run_id, index, resolution)
                    self.emit(TargetResolved(run_id, flow.name, index, resolution, cand))
                    if resolution.abstained or cand is None:
                        if step.optional:
                            return self._finish_step(run_id, flow, index, step, "skipped", resolution, None, attempt,
                                                     t0, "target not found; optional step skipped")
                        raise _StepFailure(f"locator abstained: {resolution.reason}", escalate=True)
                self.control.checkpoint(run_id, flow.name, index)
                self.emit(PhaseChanged(run_id, flow.name, index, "precheck"))
                why = self._precheck(step, cand)
                if why:
                    raise _StepFailure(f"precondition not met: {why}")
                already = cand is not None and (
                    (step.action.kind in ("input", "select") and cand.value == value and value != ""
                     and not cand.extra.get("is_password"))
                    or (step.action.kind == "check" and cand.checked is True)
                    or (step.action.kind == "uncheck" and cand.checked is False))
                # element assertions are checked after the action, on this very element: pin it, since
                # the next observation renumbers the page's elements
                held = cand.ref if cand else None
                hold = getattr(self.driver, "hold", None)
                if cand is not None and hold is not None and any(not a.selector for a in step.assertions):
                    try:
                        held = hold(cand.ref)
                    except ActionError:
                        held = cand.ref
                self.control.checkpoint(run_id, flow.name, index)
                self.emit(PhaseChanged(run_id, flow.name, index, "act"))
                start_probe = getattr(self.driver, "probe", lambda: None)() or {}
                if already:
                    self.emit(ActionPerformed(run_id, flow.name, index, step.action.kind, True, "already in the wanted state"))
                else:
                    try:
                        self.driver.perform(step.action, cand.ref if cand else None, value)
                        acted = True
                    except ActionError as exc:
                        self.emit(ActionPerformed(run_id, flow.name, index, step.action.kind, False, str(exc)))
                        raise _StepFailure(str(exc)) from None
                    self.emit(ActionPerformed(run_id, flow.name, index, step.action.kind, True))
                self.emit(PhaseChanged(run_id, flow.name, index, "wait"))
                self.driver.wait_settled(long=not step.reversible, start=start_probe)
                self.control.checkpoint(run_id, flow.name, index)
                after = self._observe(run_id, flow, index, "after")
                self.emit(PhaseChanged(run_id, flow.name, index, "verify"))
                expected = expected_delta(step)
                if already:
                    verdict = Verdict("as_expected", expected, (), "the element was already in the wanted state")
                else:
                    verdict = judge(expected, observed_deltas(before, after))
                    if (verdict.kind == "unchanged" and cand is not None
                            and step.action.kind in ("input", "select") and cand.value == value):
                        verdict = Verdict("as_expected", expected, verdict.observed, "the field already held the value")
                failed_assertions = []
                for a in step.assertions:
                    ok, why_a = self.driver.check_assertion(a, held,
                                                            bind_params(a.expected, params, where=where))
                    if not ok:
                        failed_assertions.append(f"{a.kind} {a.expected!r}: {why_a}")
                if failed_assertions:
                    acted_ok = verdict.kind == "as_expected" and acted
                    verdict = Verdict("failed", verdict.expected, verdict.observed,
                                      "assertion failed: " + "; ".join(failed_assertions))
                    if acted_ok:
                        # the action had its expected effect: doing it again would act twice
                        self._store("record_verdict", run_id, index, verdict)
                        self.emit(VerdictReached(run_id, flow.name, index, verdict))
                        raise _StepFailure(verdict.reason, escalate=True, acted=True, verdict=verdict, assertion=True)
                elif step.assertions and verdict.kind == "unchanged" and step.action.kind in ("assert", "wait"):
                    verdict = Verdict("as_expected", verdict.expected, verdict.observed, "assertions hold")
                self._store("record_verdict", run_id, index, verdict)
                self.emit(VerdictReached(run_id, flow.name, index, verdict))
                if verdict.invalid:
                    self._invalid_count[run_id] = self._invalid_count.get(run_id, 0) + 1
                if verdict.kind != "as_expected":
                    raise _StepFailure(verdict.reason, acted=acted, verdict=verdict)
                # success
                self.breaker.record_success()
                self._emit_breaker(run_id)
                if cand is not None and step.target.is_empty and self.on_descriptor_captured:
                    self.on_descriptor_captured(flow, step, cand)
                return self._finish_step(run_id, flow, index, step, "passed", resolution, verdict, attempt, t0)
            except _StepFailure as failure:
                last_error = failure.reason
                if failure.verdict is None and not failure.escalate:
                    verdict = Verdict("failed", expected_delta(step), (), failure.reason)
                self.breaker.record_failure(failure.reason, read_only=step.read_only)
                self._emit_breaker(run_id)
                must_escalate = failure.escalate or self.breaker.state == "open"
                irreversible = failure.acted and not step.reversible
                if irreversible:
                    must_escalate = True
                    last_error = f"aborted abnormally: irreversible step failed verification ({failure.reason})"
                if not must_escalate and attempt < max_attempts:
                    time.sleep(RETRY_DELAY_S)
                    continue
                if not must_escalate:
                    must_escalate = True
                    last_error = f"failed after {attempt} attempt(s): {failure.reason}"
                top = tuple(f"{c.label or '?'} [{c.ref}] ({c.score:.2f})" for c in (resolution.top if resolution else ()))
                event = EscalationRaised(run_id, flow.name, index, step.title, last_error, top, tuple(side_effects))
                self._store("record_escalation", run_id, event)
                self.emit(event)
                decision = self.control.escalate(event)
                if decision == "retry" and not irreversible:
                    self.breaker.half_open()
                    self._emit_breaker(run_id)
                    continue
                # an assertion that does not hold is a failed flow (the app misbehaved); anything
                # else the engine could not do on its own is an escalation
                status = "failed" if failure.assertion else "escalated"
                return self._finish_step(run_id, flow, index, step, status, resolution, verdict, attempt, t0,
                                         last_error)

    def _finish_step(self, run_id: str, flow: Flow, index: int, step: Step, status: str,
                     resolution: Resolution | None, verdict: Verdict | None, attempts: int, t0: float,
                     error: str = "") -> StepOutcome:
        ms = (time.monotonic() - t0) * 1000.0
        self.emit(PhaseChanged(run_id, flow.name, index, "record"))
        outcome = StepOutcome(index, step.id, step.title, status, resolution, verdict, attempts, ms, error)  # type: ignore[arg-type]
        self._store("record_step", run_id, outcome)
        self.emit(StepFinished(run_id, flow.name, index, status, bool(resolution and resolution.healed), ms, error))
        return outcome
