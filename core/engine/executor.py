"""The flow loop: one flow, step by step, each step through the phase pipeline.

:class:`FlowExecutor` owns what lives for a whole run - the driver, the
circuit breaker (R4), the decide chain, the store and the event sink - and
runs :func:`core.engine.pipeline.run_step` for each step until the flow ends,
a step does not pass, or the user stops.  Used by the engine thread (studio)
and directly by the headless command line; it never touches Qt.
"""
from __future__ import annotations

import time
import uuid
from typing import Any, Callable, Mapping, Sequence

from core.domain import Candidate, EngineSettings, Escalation, Flow, Observation, Resolution, RunResult, Step
from core.engine.control import Answer, HeadlessControl, RunControl, StopRequested
from core.engine import fastpath
from core.engine.events import BreakerChanged, EngineEvent, FlowFinished, FlowStarted, ObservationMade
from core.engine.goal import next_index
from core.engine.hooks import (
    FlowBegins, FlowEnds, ObservationStored, PluginHost, Ports, ReuseObservation, TakeObservation, call_store,
    flush_store,
)
from core.engine.pipeline import fatal_kind, run_step
from core.engine.plugins import default_plugins
from core.engine.step import RunState, StepContext
from core.perception.driver import Driver, NavigationError
from core.plan import DecideChain, Decider, FlowStepDecider, HumanDecider
from core.project.params import ParameterError, bind
from core.recover.breaker import CircuitBreaker
from core.recover.loops import LoopGuard, Stagnation
from core.recover.waits import WaitLearner

__all__ = ["FlowExecutor"]


class FlowExecutor:
    """Runs flows on one driver.

    Parameters
    ----------
    driver : Driver
        An open browser driver (owned by the calling thread).
    emit : Callable[[EngineEvent], None]
        Receives every event (on the calling thread).
    control : RunControl | None
        Pause points, escalation answers and takeover; headless by default.
    store : object | None
        A :class:`core.store.Store` (or None): runs, steps, observations,
        resolutions, verdicts and escalations are recorded there.
    settings : EngineSettings | None
        The project's run settings (locator, breaker, waits, max_steps).
    screenshots : bool
        Take a screenshot with each observation (the studio and the store use them).
    deciders : Sequence[Decider]
        Extra deciders (skill, model); the chain always has the flow-step and
        human deciders and asks in the fixed order skill > flow > model > human.
    on_descriptor_captured : Callable[[Flow, Step, Candidate], None] | None
        Called at the end of a run that passed, once per selector-only step
        that passed (with the element it acted on), so the caller can save
        the descriptor back to the flow file; never after a run that did not
        pass.
    on_step_healed : Callable[[Flow, int, Step, Candidate, Resolution], None] | None
        Called at the end of every run (passed or not), once per step that
        passed with a heal (index, step as decided, element acted on,
        resolution), so the caller can make heal proposals (:mod:`core.heal`).
    pending_heals : object | None
        Tried before the locator chain for a flow step (a
        :class:`core.heal.HealBook`): ``reuse(run_id, flow, index, step,
        candidates, locator_config) -> (Resolution | None, Candidate | None)``.
    wait_learner : WaitLearner | None
        Settle times learnt from the pages (S7); pass one to share it across
        the flows of a session, else each executor learns on its own.
    plugins : Sequence[object] | None
        The features, as plugins of the step kernel (:mod:`core.engine.hooks`);
        None: :func:`core.engine.plugins.default_plugins` of this executor's
        ports.  ``extra_plugins`` are registered after them.
    evidence : str | None
        ``"full"``, ``"failures"`` or ``"off"`` (:mod:`core.engine.fastpath`);
        None: ``"full"`` when ``screenshots``, else ``"off"``.
    """

    def __init__(self, driver: Driver, *, emit: Callable[[EngineEvent], None], control: RunControl | None = None,
                 store: Any = None, settings: EngineSettings | None = None, screenshots: bool = True,
                 project_name: str = "", deciders: Sequence[Decider] = (),
                 on_descriptor_captured: Callable[[Flow, Step, Candidate], None] | None = None,
                 on_step_healed: Callable[[Flow, int, Step, Candidate, Resolution], None] | None = None,
                 pending_heals: Any = None,
                 wait_learner: WaitLearner | None = None, plugins: Sequence[object] | None = None,
                 extra_plugins: Sequence[object] = (), evidence: str | None = None) -> None:
        self.driver = driver
        self.emit = emit
        self.control = control or HeadlessControl()
        self.store = store
        self.settings = settings or EngineSettings()
        self.screenshots = screenshots
        #: The evidence level (core.engine.fastpath): None keeps "full" with screenshots; ``full_look`` is set
        #: while a step is looked at in full at level "failures".
        self.evidence = evidence
        self.full_look = False
        #: Which recent observations read Chromium's accessibility tree (the light look does not).
        self.looks = fastpath.LookBook()
        self.project_name = project_name
        self.on_descriptor_captured = on_descriptor_captured
        self.on_step_healed = on_step_healed
        self.pending_heals = pending_heals
        self.chain = DecideChain([FlowStepDecider(), HumanDecider(self.control.escalate), *deciders])
        self.breaker = self._new_breaker()
        self.loops, self.stagnation = self._new_loop_guards()
        self.wait_learner = wait_learner or WaitLearner(self.settings.waits)
        self.store_errors: list[str] = []
        #: What the plugins may use (driver, store, event sink, control, settings) - never this executor.
        self.ports = Ports(driver, emit, self.control, store, self.settings, project_name, self.store_errors,
                           decider=lambda name: self.chain.get(name), heals=pending_heals)
        #: The features, as plugins called by the step kernel at its hooks (:mod:`core.engine.hooks`).
        self.plugins = PluginHost(self.ports)
        for plugin in (default_plugins(self.ports) if plugins is None else plugins):
            self.plugins.register(plugin)
        for plugin in extra_plugins:
            self.plugins.register(plugin)
        #: Whether the latest ``observe(..., "before")`` reused the previous after-observation.
        self.last_reused = False
        #: SEMANTIC's tie-breaker among tied candidates (the model's, R2), or None.
        self.tie_breaker: Callable[..., Any] | None = None

    def _new_breaker(self) -> CircuitBreaker:
        return CircuitBreaker.from_settings(self.settings.breaker)

    def _new_loop_guards(self) -> tuple[LoopGuard, Stagnation]:
        b = self.settings.breaker
        return LoopGuard(b.loop_repeats, b.loop_window), Stagnation(b.stagnation_rounds)

    # --- services the phases use ------------------------------------------------------
    def store_call(self, method: str, *args: Any) -> Any:
        """Call ``store.<method>(*args)``; the store never breaks a run (failures are kept in ``store_errors``).

        The writes of :data:`~core.engine.hooks.DEFERRED_WRITES` go to the store's writer thread
        (:func:`~core.engine.hooks.call_store`) and return None; the run's end waits for them (:meth:`finish`).
        """
        return call_store(self.store, self.store_errors, method, *args)

    def emit_breaker(self, run_id: str) -> None:
        """Announce the breaker's state (R4)."""
        b = self.breaker
        self.emit(BreakerChanged(run_id, b.state, b.failures, b.current_limit, b.seconds_to_half_open(), b.failed_probes))

    def observe(self, run_id: str, flow: Flow, index: int, when: str, *, ctx: StepContext | None = None) -> Observation:
        """Observe the page (``when``: ``"before"`` / ``"after"`` the action), store and announce it.

        With ``ctx`` (the before-observation of a step), the previous step's
        after-observation is taken instead when nothing happened on the page
        since (:meth:`ScreenTracker.reusable_before`); ``last_reused`` says so.
        It is stored and announced as this step's before all the same.  Below
        the evidence level ``full`` the look is light unless the step is looked
        at in full (:mod:`core.engine.fastpath`); an after-observation (with
        ``ctx``) is taken the way the step's before was.
        """
        reused = (self.plugins.decide(ReuseObservation(ctx, not fastpath.full_wanted(self)))
                  if ctx is not None and when == "before" else None)
        self.last_reused = reused is not None
        # the evidence level (issue 20): the full look only where needed - and always on a goal step, whose
        # model reads the page's image (grid grounding)
        goal = 0 <= index < len(flow.steps) and bool(flow.steps[index].goal)
        shot = fastpath.screenshot_wanted(self) or (goal and self.screenshots)
        # the tree is read in a full look; a step's after-observation is taken the way its before was (light
        # or full), so that the two compare name for name
        ax = (self.looks.had_ax(ctx.before) if when == "after" and ctx is not None and ctx.before is not None
              else fastpath.full_wanted(self) or goal)
        if reused is not None and ((shot and not reused.screenshot_png) or (ax and not self.looks.had_ax(reused))):
            reused, self.last_reused = None, False  # reused without its image or its tree: look again, in full
        obs = reused or self.plugins.decide(TakeObservation(run_id, index, when, shot, ax)) \
            or fastpath.driver_observe(self.driver, screenshot=shot, ax=ax)
        if reused is None:
            self.looks.note(obs, ax)
        written = self.store_call("record_observation", run_id, index, when, obs)
        self.last_screenshot = written  # the PNG written (a Path), None when none was (no store, a full disk)
        self.plugins.notify(ObservationStored(run_id, index, when, written))
        self.emit(ObservationMade(run_id, flow.name, index, when, obs, self.last_reused))  # type: ignore[arg-type]
        return obs

    def ask_human(self, escalation: Escalation) -> Answer:
        """Hand an escalation to the chain's human decider; returns the answer."""
        human = self.chain.get("human")
        answer = human.ask(escalation) if isinstance(human, HumanDecider) else Answer("stop")
        return answer if isinstance(answer, Answer) else Answer("stop")

    def redact(self, text: str) -> str:
        """``text`` with the driver's known secret values masked."""
        redactor = getattr(self.driver, "redactor", None)
        return redactor.text(text) if redactor is not None else text

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

        Never raises: errors end the flow with status ``error`` and an error
        kind; a stop request ends it with status ``stopped``.
        """
        run_id = self.store_call("begin_run", self.project_name, flow.name) or run_id or uuid.uuid4().hex
        t0 = time.monotonic()
        self.breaker = self._new_breaker()
        self.loops, self.stagnation = self._new_loop_guards()
        self.emit(FlowStarted(run_id, flow.name, tuple(s.title for s in flow.steps)))
        self.emit_breaker(run_id)
        run = RunState(run_id, flow, dict(params))
        self.plugins.where = (run_id, flow.name)
        self.plugins.notify(FlowBegins(run))
        status, error, kind = self._run_steps(run, setup)
        self.plugins.notify(FlowEnds(run, status == "passed"))
        flush_store(self.store, self.store_errors)  # the run's records are committed before its result returns
        if status == "passed" and self.on_descriptor_captured is not None:
            for step, cand in run.captures:
                self.on_descriptor_captured(flow, step, cand)
        if self.on_step_healed is not None:
            for index, step, cand, res in run.healed:
                self.on_step_healed(flow, index, step, cand, res)
        heals_by: dict[str, int] = {}
        for o in run.outcomes:
            if o.resolution is not None and o.resolution.healed and o.status == "passed":
                heals_by[o.resolution.strategy] = heals_by.get(o.resolution.strategy, 0) + 1
        return RunResult(
            run_id=run_id, flow=flow.name, status=status, steps=tuple(run.outcomes), heals=sum(heals_by.values()),
            invalid_actions=run.invalid_actions, seconds=time.monotonic() - t0, error=self.redact(error),
            heals_by_strategy=heals_by, error_kind=kind,  # type: ignore[arg-type]
            total_steps=len(flow.steps), abstentions=run.abstentions, by_hand=len(run.by_hand),
            stop_kind=(run.stop_kind or kind) if status != "passed" else "",
            stopped_at=next((o.index for o in reversed(run.outcomes)
                             if o.status in ("failed", "escalated", "error", "stopped")), None)
            if status != "passed" else None,
        )

    def _run_steps(self, run: RunState, setup: Callable[[], Mapping[str, str]] | None) -> tuple[str, str, str]:
        """Start URL, setup, then the steps; returns (status, error, error kind)."""
        flow, loaded = run.flow, False
        try:
            self.control.pause_point(run.run_id, flow.name, -1, "start")
            self.driver.goto(bind(flow.start_url, run.params, where=f"{flow.name} start_url"),
                             **fastpath.goto_kwargs(self, run))
            loaded = True
            if setup is not None:
                run.params.update(setup())
            index = 0
            while 0 <= index < len(flow.steps):
                ctx: StepContext = run_step(self, run, index)
                if ctx.status in ("failed", "escalated", "error"):
                    return ("error" if ctx.status == "error" else ctx.status), ctx.error, ctx.error_kind
                index = next_index(ctx)  # a goal step repeats while the model acts toward it
        except StopRequested:
            return "stopped", "stopped by the user", "stopped"
        except ParameterError as exc:
            return "error", str(exc), "parameter"
        except NavigationError as exc:
            return "error", str(exc), ("navigation" if loaded else "unreachable")
        except Exception as exc:  # noqa: BLE001 - a crashed browser must end the run cleanly
            kind, message = fatal_kind(exc)
            return "error", message, kind
        return "passed", "", ""

    def finish(self, result: RunResult) -> None:
        """Record and announce a finished flow (after any site hook set the reward)."""
        self.store_call("finish_run", result.run_id, result)
        self.emit(FlowFinished(result.run_id, result))
