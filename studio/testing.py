"""Fake engines for developing and testing the studio without a browser.

- :class:`FakeEngine` has the shape of ``core.engine.runner.EngineRunner``:
  it runs a scripted, realistic sequence of events on its own thread, with
  screenshots rendered by :mod:`studio.samples`, and obeys Start / Pause /
  Resume / StepOnce / Stop and the answers Retry / Skip / TakeOver /
  HandBack like the real one (pauses between steps; an abstaining step
  escalates with structured candidates and waits for an answer).
- :class:`RecordingEngine` does nothing by itself: it records commands, and
  the test emits the events it wants with :meth:`RecordingEngine.emit`.
- :class:`FakeRecorder` has the shape of ``core.record.runner.RecorderRunner``:
  it announces the recording, records every command, emits the steps a test
  (or the sample script) gives it from a helper thread, answers
  ``AddAssertion`` with an assert step and ``StopRecording`` with
  ``RecordingStopped``.

Both ship in the package so that tests and previews share them (the
``mitmproxy.test`` habit).
"""
from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass
from typing import Mapping, Sequence

from core.act.space import needs_target
from core.domain import (
    Action, Assertion, Candidate, ElementDescriptor, ErrorKind, EscalationAnswerKind, EscalationCandidate,
    EscalationKind, Flow, Resolution, RunResult, ScoredCandidate, Step, StepOutcome, Verdict,
)
from core.domain.observation import VerdictKind
from core.engine.events import (
    ActionPerformed, BreakerChanged, Command, EngineError, EngineEvent, EscalationRaised, FlowFinished,
    FlowStarted, HandBack, HandedBack, ObservationMade, Pause, Paused, PhaseChanged, Resume, Resumed, Retry,
    RunFinished, RunStarted, Skip, Start, StepFinished, StepOnce, StepStarted, Stop, TakeOver, TakeoverStarted,
    StateNoted, TargetResolved, VerdictReached,
)
from core.domain.observation import Observation
from core.record.events import (
    AddAssertion, ElementPicked, LiveFrame, RecorderCommand, RecorderEvent, RecordingStarted, RecordingStopped,
    StepRecorded, StepRemoved, StopRecording,
)

from core.state.awareness import ActionNote, StateAwareness

from .bridge import EngineFactory, OnEvent, ProjectLike
from .recorder_bridge import OnRecorderEvent, RecorderFactory
from .samples import (
    SAMPLE_DPR, find_candidate, offered_candidates, page_candidates, render_page, sample_observation, sample_page,
    sample_recording,
)

__all__ = [
    "ScriptedStep", "SAMPLE_SCRIPTS", "FakeEngine", "RecordingEngine", "BREAKER_THRESHOLD",
    "sample_run_events", "FakeRecorder", "FAKE_RECORDER_URL",
]

#: Consecutive failures that open the fake breaker (default 3, R4).
BREAKER_THRESHOLD = 3


@dataclass(frozen=True, slots=True)
class ScriptedStep:
    """How the fake engine plays one step.

    Attributes
    ----------
    page_before, page_after : str
        Sample page keys (:func:`studio.samples.sample_page`) seen before and
        after the action.
    target : tuple[str, str] | None
        ``(accessible name, role)`` of the target on ``page_before``; None
        for targetless actions.
    strategy : str
        Winning locator strategy (ignored when ``abstain``).
    score, margin : float
        Score of the winner and its margin over the runner-up, 0..1.
    reason : str
        Resolution reason.
    top : tuple[tuple[str, str, float], ...]
        ``(name, role, score)`` of the best candidates; a repeated
        ``(name, role)`` takes the next such candidate.
    abstain : str
        Non-empty: the chain abstains with this reason on the first
        ``abstain_attempts`` attempts (later ones resolve ``target``); the
        step escalates with ``kind`` and the run waits for an answer.
    abstain_attempts : int
        How many attempts abstain (a Retry after them resolves).
    kind : EscalationKind
        Kind of the abstaining step's escalation.
    answers : tuple[EscalationAnswerKind, ...]
        Answers its escalations accept; empty: all four, or no retry after an
        irreversible step acted (S6).
    verdict, expected, observed, verdict_reason
        Post-verification (S5); a verdict other than ``as_expected``
        escalates (kind ``failed``, ``irreversible`` or ``assertion``).
    ms : float
        Reported step time, ms (split over its phases in ``StepFinished.phase_ms``).
    """

    page_before: str
    page_after: str
    target: tuple[str, str] | None = None
    strategy: str = "exact"
    score: float = 1.0
    margin: float = 1.0
    reason: str = ""
    top: tuple[tuple[str, str, float], ...] = ()
    abstain: str = ""
    abstain_attempts: int = 1
    kind: EscalationKind = "abstained"
    answers: tuple[EscalationAnswerKind, ...] = ()
    verdict: VerdictKind = "as_expected"
    expected: str = "value"
    observed: tuple[str, ...] = ()
    verdict_reason: str = ""
    ms: float = 150.0


#: Scripts of the two sample flows of :func:`studio.samples.sample_project`.
SAMPLE_SCRIPTS: Mapping[str, tuple[ScriptedStep, ...]] = {
    "login_lockout": (
        ScriptedStep("login", "login", None, "", expected="navigation", observed=("url",),
                     verdict_reason="The URL is /login, as expected after navigating.", ms=420),
        ScriptedStep("login", "login_user", ("User name", "textbox"),
                     reason="EXACT: selector #username matched one visible textbox.",
                     top=(("User name", "textbox", 1.0), ("Password", "textbox", 0.31)),
                     observed=("value",), verdict_reason="The field's value changed to 'alice'.", ms=160),
        ScriptedStep("login_user", "login_filled", ("Password", "textbox"),
                     reason="EXACT: selector #password matched one visible textbox.",
                     top=(("Password", "textbox", 1.0), ("User name", "textbox", 0.29)),
                     observed=("value",), verdict_reason="The field's value changed (masked secret).", ms=150),
        ScriptedStep("login_filled", "login_error", ("Log in", "button"), "semantic", 0.84, 0.41,
                     reason="EXACT: no button named 'Sign in'. FUZZY_TEXT: best 'Log in' 0.55 < 0.80. "
                            "SEMANTIC: the submit button of the form 'Sign in to your account' -> 'Log in'.",
                     top=(("Log in", "button", 0.84), ("Sign up", "button", 0.43),
                          ("Forgot password?", "link", 0.21)),
                     expected="content", observed=("content", "error_count"),
                     verdict_reason="An error message appeared, as expected after a wrong password.", ms=610),
        ScriptedStep("login_error", "login_locked", ("Log in", "button"), "semantic", 0.86, 0.44,
                     reason="SEMANTIC: same submit button as step 4 ('Log in'), form unchanged.",
                     top=(("Log in", "button", 0.86), ("Sign up", "button", 0.42)),
                     expected="content", observed=("content", "enabled"),
                     verdict_reason="The page now says 'Account locked'; the form is disabled.", ms=1240),
        ScriptedStep("login_locked", "login_locked", ("Unlock account", "link"),
                     top=(("Unlock account", "link", 0.78), ("Unlock account", "button", 0.76),
                          ("Forgot password?", "link", 0.31)),
                     abstain="Two elements named 'Unlock account' (a link in the form, a button in the "
                             "footer) score 0.78 and 0.76: the margin 0.02 is below 0.10, so the locator "
                             "abstained.", ms=380),
        ScriptedStep("login_locked", "login_locked", None, "", expected="text_appears",
                     observed=("text: Account locked",), verdict_reason="'Account locked' is visible.", ms=90),
    ),
    "export_report": (
        ScriptedStep("reports", "reports", None, "", expected="navigation", observed=("url",),
                     verdict_reason="The URL is /reports, as expected after navigating.", ms=380),
        ScriptedStep("reports", "reports_csv", ("Format", "combobox"), "fuzzy_text", 0.91, 0.52,
                     reason="EXACT: no select named 'Report format'. FUZZY_TEXT: 'Format' ~ 'Report format' 0.91.",
                     top=(("Format", "combobox", 0.91), ("Export", "button", 0.39)),
                     observed=("value",), verdict_reason="The select now shows CSV.", ms=240),
        ScriptedStep("reports_csv", "reports_exported", ("Export", "button"),
                     reason="EXACT: button 'Export' within 5 px of its remembered box.",
                     top=(("Export", "button", 1.0), ("Download", "button", 0.35)),
                     expected="content", observed=("content", "enabled"),
                     verdict_reason="'Export ready' appeared and Download became enabled.", ms=870),
        ScriptedStep("reports_exported", "reports_exported", ("Download", "button"),
                     reason="EXACT: button 'Download' within 5 px of its remembered box.",
                     top=(("Download", "button", 1.0), ("Export", "button", 0.35)),
                     expected="download", observed=("download",),
                     verdict_reason="A download of q3-report.csv started.", ms=330),
    ),
}


class _Stopped(Exception):
    """Stop command received during a run; ``args[0]`` is the stopped step's outcome or the flow's result."""


class _Closed(Exception):
    """close() called during a run."""


class _TakeoverRequested(Exception):
    """A TakeOver command arrived while running (or paused between steps)."""


class _Escalation(Exception):
    """The step cannot go on alone: ask the human."""

    def __init__(self, kind: EscalationKind, reason: str, resolution: Resolution | None,
                 candidates: tuple[EscalationCandidate, ...], answers: tuple[EscalationAnswerKind, ...],
                 verdict: Verdict | None = None) -> None:
        super().__init__(reason)
        self.kind, self.reason, self.resolution, self.verdict = kind, reason, resolution, verdict
        self.candidates, self.answers = candidates, answers


_CLOSE = object()

#: Relative weight of each phase in a scripted step's time (for ``StepFinished.phase_ms``).
_PHASE_WEIGHTS = {"observe": 18, "fingerprint": 4, "decide": 1, "resolve": 12, "precheck": 3, "checkpoint": 2,
                  "act": 20, "settle": 25, "verify": 15}
_ALL_ANSWERS: tuple[EscalationAnswerKind, ...] = ("retry", "skip", "stop", "take_over")


class FakeEngine:
    """A scripted engine thread with the ``EngineRunner`` API.

    It plays the phases of ``core.engine.events.PHASES`` and answers commands
    like the real runner: Pause / StepOnce pause between steps; an escalation
    (a step whose locator abstains, or whose verdict is not as expected)
    waits for Retry (or Resume / StepOnce), Skip, Stop (the flow ends
    escalated, the run goes on with the next flow) or TakeOver; TakeOver also
    takes the page at the next phase boundary while running, or at once when
    paused.  A takeover waits for HandBack (``continue_from``: 0-based, None =
    the same step) or Resume (the same step); a later step marks the taken
    one ``manual``, the same step runs again.  Stop during a takeover stops
    the run.

    Parameters
    ----------
    project : ProjectLike
        Its ``flows`` give the step titles and, for flows without a script,
        the steps to play (each passes exactly).
    on_event : callable
        Called with each event ON THE ENGINE THREAD.
    headless : bool
        Accepted for API compatibility; ignored.
    scripts : Mapping[str, Sequence[ScriptedStep]] | None
        Scripts by flow name; default :data:`SAMPLE_SCRIPTS`.
    phase_delay_s : float
        Sleep between phases, s (0 in tests; about 0.1 for a watchable preview).
    """

    def __init__(self, project: ProjectLike, on_event: OnEvent, *, headless: bool = True,
                 scripts: Mapping[str, Sequence[ScriptedStep]] | None = None,
                 phase_delay_s: float = 0.0) -> None:
        self.project = project
        self.headless = headless
        self._on_event = on_event
        self._scripts = dict(SAMPLE_SCRIPTS if scripts is None else scripts)
        self._delay = phase_delay_s
        self._queue: queue.Queue[object] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._commands: list[Command] = []
        self._runs = 0
        self._pause_reason = ""
        self._step_mode = False
        self._takeover_wanted = False
        self._failures = 0
        self.closed = False

    @classmethod
    def factory(cls, **options: object) -> EngineFactory:
        """An engine factory for :class:`studio.main_window.MainWindow` with these options."""
        def make(project: ProjectLike, on_event: OnEvent) -> FakeEngine:
            return cls(project, on_event, **options)  # type: ignore[arg-type]
        return make

    # --- EngineRunner API -----------------------------------------------------------------

    def start(self) -> None:
        """Start the engine thread; it idles until a ``Start`` command."""
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._serve, name="fake-engine", daemon=True)
        self._thread.start()

    def send(self, command: Command) -> None:
        """Queue a command (any thread)."""
        with self._lock:
            self._commands.append(command)
        self._queue.put(command)

    def close(self, timeout: float = 10.0) -> None:
        """Stop any run and join the thread."""
        self._queue.put(_CLOSE)
        if self._thread is not None:
            self._thread.join(timeout)
        self.closed = True

    @property
    def commands(self) -> list[Command]:
        """Commands received so far, in order."""
        with self._lock:
            return list(self._commands)

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # --- engine thread --------------------------------------------------------------------

    def _emit(self, event: EngineEvent) -> None:
        self._on_event(event)

    def _serve(self) -> None:
        while True:
            cmd = self._queue.get()
            if cmd is _CLOSE:
                return
            if isinstance(cmd, Start):
                try:
                    self._run(cmd)
                except _Closed:
                    return

    def _run(self, cmd: Start) -> None:
        self._runs += 1
        run_id = f"fake-{self._runs}"
        names = cmd.flows or tuple(self.project.flows)
        self._pause_reason = "started paused" if cmd.paused else ""
        self._step_mode = self._takeover_wanted = False
        self._failures = 0
        self._emit(RunStarted(run_id, self.project.name, tuple(names)))
        self._emit(BreakerChanged(run_id, "closed", 0, BREAKER_THRESHOLD))
        results: list[RunResult] = []
        try:
            for name in names:
                if name not in self.project.flows:
                    self._emit(EngineError(run_id, f"unknown flow {name!r}"))
                    continue
                results.append(self._run_flow(run_id, name))
        except _Stopped as stopped:
            result = stopped.args[0]
            results.append(result)
            self._emit(FlowFinished(run_id, result))
        self._emit(RunFinished(run_id, tuple(results)))

    def _script_for(self, name: str) -> tuple[ScriptedStep, ...]:
        flow = self.project.flows[name]
        script = tuple(self._scripts.get(name, ()))
        if len(script) >= len(flow.steps):
            return script[: len(flow.steps)]
        generic = []
        for step in flow.steps[len(script):]:
            if needs_target(step):
                generic.append(ScriptedStep("login", "login", ("Log in", "button"),
                                            reason="EXACT: remembered element found.", expected="content",
                                            observed=("content",), verdict_reason="The page changed as expected."))
            else:
                generic.append(ScriptedStep("login", "login", None, "", expected="none",
                                            verdict_reason="Nothing to verify."))
        return script + tuple(generic)

    def _run_flow(self, run_id: str, name: str) -> RunResult:
        flow = self.project.flows[name]
        script = self._script_for(name)
        titles = tuple(s.title for s in flow.steps)
        started = time.monotonic()
        outcomes: list[StepOutcome] = []
        side_effects: list[str] = []
        self._emit(FlowStarted(run_id, name, titles))
        status = "passed"
        i = 0
        while 0 <= i < len(flow.steps):
            step = flow.steps[i]
            try:
                takeover = self._boundary(run_id, name, i)
                outcome, i = self._play_step(run_id, name, i, script[i], side_effects, takeover=takeover)
            except _Stopped as stopped:
                if stopped.args and isinstance(stopped.args[0], StepOutcome):
                    outcomes.append(stopped.args[0])
                raise _Stopped(self._result(run_id, name, "stopped", outcomes, started)) from None
            outcomes.append(outcome)
            if outcome.status == "passed" and not step.reversible:
                side_effects.append(f"step {outcome.index + 1}: {step.title} (irreversible, done)")
            if outcome.status in ("escalated", "failed"):
                status = outcome.status
                break
        result = self._result(run_id, name, status, outcomes, started)
        self._emit(FlowFinished(run_id, result))
        return result

    def _result(self, run_id: str, name: str, status: str, outcomes: list[StepOutcome],
                started: float) -> RunResult:
        heals = sum(1 for o in outcomes if o.resolution is not None and o.resolution.healed)
        invalid = sum(1 for o in outcomes if o.verdict is not None and o.verdict.invalid)
        kind: ErrorKind = {"escalated": "escalated", "stopped": "stopped", "failed": "assertion"}.get(
            status, "")  # type: ignore[assignment]
        return RunResult(run_id=run_id, flow=name, status=status, steps=tuple(outcomes), heals=heals,
                         invalid_actions=invalid, seconds=time.monotonic() - started, error_kind=kind)

    def _play_step(self, run_id: str, flow: str, i: int, play: ScriptedStep, side_effects: list[str], *,
                   takeover: bool) -> tuple[StepOutcome, int]:
        """Attempts of step ``i`` until it ends; returns its outcome and the next step's index (-1: flow ends)."""
        title = self.project.flows[flow].steps[i].title
        attempt = 0
        resolution: Resolution | None = None
        verdict: Verdict | None = None
        phases: list[str] = []

        def finish(status: str, error: str = "") -> StepOutcome:
            return self._finish(run_id, flow, i, title, status, resolution, verdict, attempt, play, phases, error)

        try:
            while True:
                attempt += 1
                phases = []
                self._emit(StepStarted(run_id, flow, i, title, attempt))
                try:
                    if takeover:
                        takeover = False
                        raise _TakeoverRequested
                    resolution, verdict = self._attempt(run_id, flow, i, play, attempt, phases)
                except _TakeoverRequested:
                    answer: str = "take_over"
                    reason = ""
                except _Escalation as esc:
                    resolution, verdict, reason = esc.resolution, esc.verdict, esc.reason
                    answer = self._ask(run_id, flow, i, title, esc, side_effects)
                else:
                    return finish("passed"), i + 1
                if answer == "retry":
                    self._emit(BreakerChanged(run_id, "half_open", self._failures, BREAKER_THRESHOLD))
                    continue
                if answer == "skip":
                    return finish("skipped", f"skipped by the user: {reason}"), i + 1
                if answer == "stop":
                    failed = verdict is not None and verdict.kind != "as_expected" and \
                        self.project.flows[flow].steps[i].action.kind == "assert"
                    return finish("failed" if failed else "escalated", reason), -1
                target = self._take_over(run_id, flow, i)
                if target != i:
                    return finish("manual", f"done by hand; continued from step {target + 1}"), target
        except _Stopped:
            raise _Stopped(finish("stopped", "stopped by the user")) from None

    def _note_state(self, run_id: str, flow: str, i: int, obs: Observation, moment: str,
                    action: ActionNote | None = None) -> None:
        """The state module's note of a sample page (the belief derived by :mod:`core.state.awareness`)."""
        aw = self.__dict__.setdefault("_awareness", {}).setdefault(run_id, StateAwareness())
        e = aw.note(obs, index=i, moment=moment, action=action)
        self._emit(StateNoted(run_id, flow, i, moment, e.belief, e.key_point, e.digest,
                              tuple(x.line for x in aw.recent())))

    def _attempt(self, run_id: str, flow: str, i: int, play: ScriptedStep, attempt: int,
                 phases: list[str]) -> tuple[Resolution | None, Verdict]:
        """One attempt through the phases; raises _Escalation, _TakeoverRequested or _Stopped."""
        step = self.project.flows[flow].steps[i]
        self._phase(run_id, flow, i, "observe", phases)
        before = sample_observation(play.page_before, timestamp_ms=time.time() * 1000)
        self._emit(ObservationMade(run_id, flow, i, "before", before))
        self._phase(run_id, flow, i, "fingerprint", phases)
        self._note_state(run_id, flow, i, before, "before")
        self._phase(run_id, flow, i, "decide", phases)
        resolution: Resolution | None = None
        if play.target is not None:
            self._phase(run_id, flow, i, "resolve", phases)
            resolution, candidate = self._resolve(before.candidates, play, abstain=attempt <= play.abstain_attempts)
            self._emit(TargetResolved(run_id, flow, i, resolution, candidate))
            if resolution.abstained:
                raise _Escalation(play.kind, play.abstain, resolution, _offered(resolution, before.candidates),
                                  play.answers or _ALL_ANSWERS)
        self._phase(run_id, flow, i, "precheck", phases)
        self._phase(run_id, flow, i, "checkpoint", phases)
        self._phase(run_id, flow, i, "act", phases)
        self._emit(ActionPerformed(run_id, flow, i, step.action.kind, True))
        self._phase(run_id, flow, i, "settle", phases)
        self._phase(run_id, flow, i, "verify", phases)
        after = sample_observation(play.page_after, timestamp_ms=time.time() * 1000)
        self._emit(ObservationMade(run_id, flow, i, "after", after))
        self._note_state(run_id, flow, i, after, "after", ActionNote(step.action.kind, step.title[:60]))
        verdict = Verdict(play.verdict, play.expected, play.observed, play.verdict_reason)
        self._emit(VerdictReached(run_id, flow, i, verdict))
        if play.verdict != "as_expected":
            answers = play.answers or (_ALL_ANSWERS if step.reversible else ("skip", "stop", "take_over"))
            kind: EscalationKind = "assertion" if step.action.kind == "assert" else \
                ("failed" if step.reversible else "irreversible")
            raise _Escalation(kind, play.verdict_reason or f"the page {play.verdict.replace('_', ' ')}",
                              resolution, _offered(resolution, before.candidates), answers, verdict)
        return resolution, verdict

    def _finish(self, run_id: str, flow: str, i: int, title: str, status: str, resolution: Resolution | None,
                verdict: Verdict | None, attempts: int, play: ScriptedStep, phases: list[str],
                error: str = "") -> StepOutcome:
        self._emit(PhaseChanged(run_id, flow, i, "record"))
        if status == "passed":
            self._breaker(run_id, ok=True)
        weights = sum(_PHASE_WEIGHTS.get(p, 1) for p in phases) or 1
        phase_ms = tuple((p, round(play.ms * _PHASE_WEIGHTS.get(p, 1) / weights, 1)) for p in phases)
        healed = bool(resolution is not None and resolution.healed and status == "passed")
        self._emit(StepFinished(run_id, flow, i, status, healed, play.ms, error, phase_ms))
        return StepOutcome(i, f"s{i + 1}", title, status, resolution, verdict, attempts, play.ms,  # type: ignore[arg-type]
                           error, "flow", phase_ms)

    def _resolve(self, candidates: tuple[Candidate, ...], play: ScriptedStep, *,
                 abstain: bool) -> tuple[Resolution, Candidate | None]:
        used: dict[tuple[str, str], int] = {}
        top: list[ScoredCandidate] = []
        for name, role, score in play.top:
            matches = [c for c in candidates if c.descriptor.name == name and (not role or c.descriptor.role == role)]
            n = used.get((name, role), 0)
            used[(name, role)] = n + 1
            ref = matches[n].ref if n < len(matches) else "?"
            top.append(ScoredCandidate(ref, score, f"{role} \u201c{name}\u201d"))
        if play.abstain and abstain:
            best = play.top[0][2] if play.top else 0.0
            second = play.top[1][2] if len(play.top) > 1 else 0.0
            margin = round(best - second, 4)
            return Resolution("", None, best, margin, play.ms * 0.6, True, play.abstain, tuple(top)), None
        assert play.target is not None
        cand = find_candidate(candidates, *play.target)
        reason = play.reason or f"{play.strategy.upper()}: {play.target[1]} \u201c{play.target[0]}\u201d."
        return Resolution(play.strategy, cand.ref, play.score, play.margin, play.ms * 0.2, False,
                          reason, tuple(top)), cand

    def _ask(self, run_id: str, flow: str, i: int, title: str, esc: _Escalation, side_effects: list[str]) -> str:
        """Raise the escalation and wait for one of its answers (Stop is always one)."""
        self._breaker(run_id, ok=False)
        self._emit(EscalationRaised(run_id, flow, i, title, esc.reason, esc.candidates, tuple(side_effects),
                                    esc.kind, esc.answers))
        self._emit(Paused(run_id, flow, i, f"escalated: {esc.reason}"))
        while True:
            cmd = self._queue.get()
            answer = _answer_of(cmd)
            if answer == "stop" or answer in esc.answers:
                break
            if answer is None:
                self._handle_waiting(run_id, cmd)
        self._step_mode = isinstance(cmd, StepOnce)
        self._pause_reason, self._takeover_wanted = "", False
        self._emit(Resumed(run_id))
        return answer  # type: ignore[return-value]

    def _take_over(self, run_id: str, flow: str, i: int) -> int:
        """A human has the page: wait for HandBack (or Resume: the same step); returns the step to go on with."""
        self._emit(TakeoverStarted(run_id, flow, i))
        self._emit(Paused(run_id, flow, i, "taken over by hand"))
        while True:
            cmd = self._queue.get()
            if isinstance(cmd, HandBack):
                target = i if cmd.continue_from is None else cmd.continue_from
                break
            if isinstance(cmd, (Resume, Retry)):
                target = i
                break
            if isinstance(cmd, Stop):
                raise _Stopped(None)
            self._handle_waiting(run_id, cmd)
        self._pause_reason, self._takeover_wanted = "", False
        self._emit(Resumed(run_id))
        if not 0 <= target <= len(self.project.flows[flow].steps):
            target = i
        self._emit(HandedBack(run_id, flow, target))
        self._breaker(run_id, ok=True)  # the human left the page in a working state
        return target

    def _breaker(self, run_id: str, *, ok: bool) -> None:
        before = self._failures
        self._failures = 0 if ok else self._failures + 1
        if self._failures != before:
            state = "open" if self._failures >= BREAKER_THRESHOLD else "closed"
            self._emit(BreakerChanged(run_id, state, self._failures, BREAKER_THRESHOLD))

    def _phase(self, run_id: str, flow: str, i: int, phase: str, phases: list[str]) -> None:
        """The pause point before ``phase`` (commands; a wanted takeover), then ``PhaseChanged``."""
        self._poll(run_id)
        if self._takeover_wanted:
            self._takeover_wanted = False
            raise _TakeoverRequested
        self._emit(PhaseChanged(run_id, flow, i, phase))  # type: ignore[arg-type]
        phases.append(phase)
        if self._delay:
            time.sleep(self._delay)

    def _poll(self, run_id: str) -> None:
        """Handle commands that arrived while running (between phases)."""
        while True:
            try:
                cmd = self._queue.get_nowait()
            except queue.Empty:
                return
            self._handle_running(run_id, cmd)

    def _handle_running(self, run_id: str, cmd: object) -> None:
        if isinstance(cmd, Stop):
            raise _Stopped(None)
        if isinstance(cmd, Pause):
            self._pause_reason = self._pause_reason or "paused by the user"
        elif isinstance(cmd, TakeOver):
            self._takeover_wanted = True
        else:
            self._handle_waiting(run_id, cmd)

    def _handle_waiting(self, run_id: str, cmd: object) -> None:
        """Commands that answer nothing here: close, a second Start; the rest is ignored."""
        if cmd is _CLOSE:
            raise _Closed
        if isinstance(cmd, Start):
            self._emit(EngineError(run_id, "a run is already in progress"))

    def _boundary(self, run_id: str, flow: str, i: int) -> bool:
        """Between steps: pause when asked (or after a single step), wait for the user.

        Returns True when the user took the page (TakeOver while running or paused).
        """
        self._poll(run_id)
        if self._step_mode and not self._pause_reason:
            self._pause_reason = "stepped one step"
        if self._pause_reason:
            self._emit(Paused(run_id, flow, i, self._pause_reason))
            while True:
                cmd = self._queue.get()
                if isinstance(cmd, (Resume, Retry, StepOnce, TakeOver)):
                    self._pause_reason, self._step_mode = "", isinstance(cmd, StepOnce)
                    self._takeover_wanted = self._takeover_wanted or isinstance(cmd, TakeOver)
                    self._emit(Resumed(run_id))
                    break
                self._handle_running(run_id, cmd)
        wanted, self._takeover_wanted = self._takeover_wanted, False
        return wanted


def _answer_of(cmd: object) -> str | None:
    """The escalation answer a command gives (as the runner maps them), or None."""
    if isinstance(cmd, (Resume, Retry, StepOnce)):
        return "retry"
    if isinstance(cmd, Skip):
        return "skip"
    if isinstance(cmd, TakeOver):
        return "take_over"
    if isinstance(cmd, Stop):
        return "stop"
    return None


def _offered(resolution: Resolution | None, candidates: tuple[Candidate, ...]) -> tuple[EscalationCandidate, ...]:
    """The resolution's top candidates as offered to the human, with their boxes (:func:`offered_candidates`)."""
    return offered_candidates(resolution.top if resolution else (), candidates)


class RecordingEngine:
    """An engine that records commands and emits only what the test tells it to.

    ``emit`` calls ``on_event`` on the caller's thread (or from a helper
    thread with ``emit_from_thread``), so a test controls every event.
    """

    def __init__(self, project: ProjectLike, on_event: OnEvent, *, headless: bool = True) -> None:
        self.project = project
        self.headless = headless
        self.on_event = on_event
        self.commands: list[Command] = []
        self.started = False
        self.closed = False

    @classmethod
    def factory(cls, created: list["RecordingEngine"] | None = None) -> EngineFactory:
        """Factory that also appends each engine it makes to ``created``."""
        def make(project: ProjectLike, on_event: OnEvent) -> RecordingEngine:
            engine = cls(project, on_event)
            if created is not None:
                created.append(engine)
            return engine
        return make

    def start(self) -> None:
        self.started = True

    def send(self, command: Command) -> None:
        self.commands.append(command)

    def close(self, timeout: float = 10.0) -> None:
        self.closed = True

    def emit(self, *events: EngineEvent) -> None:
        """Deliver ``events`` through ``on_event`` from this thread."""
        for e in events:
            self.on_event(e)

    def emit_from_thread(self, *events: EngineEvent) -> None:
        """Deliver ``events`` from a fresh thread (like the real engine) and wait for it."""
        t = threading.Thread(target=self.emit, args=events)
        t.start()
        t.join()


def sample_run_events(project: ProjectLike | None = None, *, flow: str = "login_lockout",
                      until_escalation: bool = True) -> list[EngineEvent]:
    """Events of a fake run of ``flow``, collected synchronously (for previews and tests).

    With ``until_escalation`` the list ends at the first ``Paused`` after an
    escalation (the state the studio shows when it waits for the user);
    otherwise the run is resumed to its end.
    """
    from .samples import sample_project  # noqa: PLC0415

    events: list[EngineEvent] = []
    done = threading.Event()

    def collect(event: EngineEvent) -> None:
        events.append(event)
        if isinstance(event, Paused) and until_escalation:
            done.set()
        elif isinstance(event, Paused):
            engine.send(Resume())
        if isinstance(event, RunFinished):
            done.set()

    engine = FakeEngine(project or sample_project(), collect)
    engine.start()
    engine.send(Start(flows=(flow,)))
    done.wait(30.0)
    engine.close(timeout=5.0)
    return events


#: Where the fake recorder says it started when no URL was given (the sample login page).
FAKE_RECORDER_URL = "http://127.0.0.1:8765/login"


class FakeRecorder:
    """A recorder with the ``RecorderRunner`` API: scripted events, recorded commands.

    ``start`` announces ``RecordingStarted`` (and a live frame of the sample
    login page) from a helper thread; the test then plays the user with
    :meth:`record`, :meth:`remove`, :meth:`pick`, :meth:`frame` or any
    event through :meth:`emit_from_thread` - each call delivers its events
    from a fresh thread, like the real recorder, and returns when they are
    posted.  ``send`` records every command; ``AddAssertion`` of a known pick
    records an assert step, ``StopRecording`` answers with
    ``RecordingStopped`` (the steps so far, their crops).

    Parameters
    ----------
    project, flow_name, url, on_event, headless
        As for ``RecorderRunner`` (``on_event`` is called on a non-GUI thread).
    start_url : str
        ``start_url`` of the flow it reports when stopped.
    announce : bool
        Emit ``RecordingStarted`` on ``start`` (False: the test does it).
    """

    def __init__(self, project: ProjectLike, flow_name: str, url: str | None, on_event: OnRecorderEvent,
                 headless: bool = True, *, start_url: str = "/login", announce: bool = True) -> None:
        self.project = project
        self.flow_name = flow_name
        self.url = url
        self.headless = headless
        self.on_event = on_event
        self.start_url = start_url
        self._announce = announce
        self._lock = threading.Lock()
        self._commands: list[RecorderCommand] = []
        self._steps: list[Step] = []
        self._crops: dict[str, bytes] = {}
        self._picks: dict[int, ElementPicked] = {}
        self._next_id = 1
        self.started = False
        self.closed = False
        self.stopped = False

    @classmethod
    def factory(cls, created: list["FakeRecorder"] | None = None, **options: object) -> RecorderFactory:
        """Recorder factory (``RecorderDock`` / ``MainWindow``) appending each recorder it makes to ``created``."""
        def make(project: ProjectLike, flow_name: str, url: str | None, on_event: OnRecorderEvent,
                 headless: bool) -> FakeRecorder:
            rec = cls(project, flow_name, url, on_event, headless, **options)  # type: ignore[arg-type]
            if created is not None:
                created.append(rec)
            return rec
        return make

    # --- RecorderRunner API ---------------------------------------------------------------

    def start(self) -> None:
        self.started = True
        if self._announce:
            self.emit_from_thread(RecordingStarted(self.flow_name, self.url or FAKE_RECORDER_URL,
                                                   headless=self.headless), self._frame_event("login"))

    def send(self, command: RecorderCommand) -> None:
        """Record ``command`` (any thread) and answer it like the recorder would."""
        with self._lock:
            self._commands.append(command)
            pick = self._picks.get(command.pick_id) if isinstance(command, AddAssertion) else None
        if isinstance(command, StopRecording):
            with self._lock:
                if self.stopped:
                    return
                self.stopped = True
                flow = Flow(self.flow_name, self.start_url, tuple(self._steps))
                crops = dict(self._crops)
            self.emit_from_thread(RecordingStopped(flow, crops, "stopped"))
        elif isinstance(command, AddAssertion) and pick is not None:
            kind = command.kind
            step = Step(self._new_id(), Action("assert"), name=f"Check {kind} of {pick.descriptor.label_text}",
                        target=pick.descriptor, assertions=(Assertion(kind, command.expected),))  # type: ignore[arg-type]
            self.record(step)

    def close(self, timeout: float = 10.0) -> None:
        self.closed = True

    # --- test side ------------------------------------------------------------------------

    @property
    def commands(self) -> list[RecorderCommand]:
        """Commands received so far, in order."""
        with self._lock:
            return list(self._commands)

    @property
    def steps(self) -> list[Step]:
        """The steps as the recorder holds them."""
        with self._lock:
            return list(self._steps)

    def emit(self, *events: RecorderEvent) -> None:
        """Deliver ``events`` through ``on_event`` from this thread."""
        for e in events:
            self.on_event(e)

    def emit_from_thread(self, *events: RecorderEvent) -> None:
        """Deliver ``events`` from a fresh thread (like the real recorder) and wait for it."""
        t = threading.Thread(target=self.emit, args=events, name="fake-recorder")
        t.start()
        t.join()

    def record(self, step: Step, crop_png: bytes = b"", *, index: int | None = None) -> StepRecorded:
        """Record ``step`` at ``index`` (default: appended; an existing index replaces that step)."""
        with self._lock:
            i = len(self._steps) if index is None else index
            if i < len(self._steps):
                self._steps[i] = step
            else:
                self._steps.append(step)
            if crop_png:
                self._crops[step.id] = crop_png
        event = StepRecorded(i, step, crop_png)
        self.emit_from_thread(event)
        return event

    def remove(self, index: int) -> StepRemoved:
        """Withdraw the step at ``index``."""
        with self._lock:
            step = self._steps.pop(index)
            self._crops.pop(step.id, None)
        event = StepRemoved(index)
        self.emit_from_thread(event)
        return event

    def pick(self, descriptor: ElementDescriptor, **fields: object) -> ElementPicked:
        """The user picked ``descriptor`` in inspect mode (fields as for ``ElementPicked``)."""
        with self._lock:
            pick_id = len(self._picks) + 1
            event = ElementPicked(pick_id, descriptor, **fields)  # type: ignore[arg-type]
            self._picks[pick_id] = event
        self.emit_from_thread(event)
        return event

    def frame(self, page_key: str = "login", *, dpr: float = SAMPLE_DPR) -> LiveFrame:
        """Emit a live frame of the sample page ``page_key``."""
        event = self._frame_event(page_key, dpr=dpr)
        self.emit_from_thread(event)
        return event

    def play_sample(self, count: int | None = None) -> list[StepRecorded]:
        """Record the first ``count`` steps of :func:`studio.samples.sample_recording` (all by default)."""
        out = []
        for sample in sample_recording()[:count]:
            out.append(self.record(sample.step, sample.crop_png))
            self.frame(sample.page_after)
        return out

    def _frame_event(self, page_key: str, *, dpr: float = SAMPLE_DPR) -> LiveFrame:
        page = sample_page(page_key)
        return LiveFrame(render_page(page, dpr=dpr), dpr, page.url, page_candidates(page, dpr=dpr))

    def _new_id(self) -> str:
        with self._lock:
            ids = {s.id for s in self._steps}
            while f"a{self._next_id}" in ids:
                self._next_id += 1
            sid = f"a{self._next_id}"
            self._next_id += 1
            return sid
