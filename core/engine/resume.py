"""Resume a run that was killed or ended in error from its last checkpoint (``steadyhand run --resume``).

What the earlier run left in the store (:class:`core.store.resumes.RunState`)
gives the :class:`ResumePlan` (:func:`plan_resume`, pure):

* the steps recorded ``passed`` / ``manual`` / ``skipped`` before the first
  one that was not are **done**: none is done again as such; so is a step
  with no recorded outcome whose latest verdict is ``as_expected`` (the run
  died in its ``record`` phase, after a passing verification) - replayed
  only when it cannot write, since what it wrote was never recorded;
* of those, a step that wrote nothing is **replayed** in the new run to bring
  the page back to where the next step expects it (a fill, a read-only click,
  opening a dialog); a step that wrote - declared ``reversible: false``, or
  found to write by its requests (S6: its checkpoint says not reversible, or
  the run's "data already written" lines name it) - is never replayed, with
  one exception: a sign-in (a click right after a secret was typed, not
  declared irreversible) is replayed as a re-login, since a new session is
  no user data;
* the first step not done is run again from there on - unless it was **in
  flight**: its checkpoint was taken (the checkpoint phase comes right before
  the action) and its action was about to be performed (``step_acts``,
  committed before the browser is told to act: :func:`note_acting`), but no
  verdict settled that attempt, and it may write.  Then the page,
  brought back, is looked at: when the step has assertions and all of them
  hold, its effect is there and it counts as done; otherwise the engine is
  unsure and escalates instead of doing it a second time (S6).

The new run is an ordinary run row; ``run_resumes`` links it to the run it
resumed, with the plan.  A run that passed, or that is still running, is
never resumed (:class:`ResumeError`).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping

from core.domain import Flow, StepOutcome
from core.engine.events import EscalationRaised, StepFinished, StepStarted
from core.engine.executor import FlowExecutor
from core.engine.goal import next_index
from core.engine.pipeline import fatal_kind, run_step
from core.engine.step import RunState, StepContext
from core.engine.acting import WRITING_KINDS
from core.engine.control import StopRequested
from core.perception.driver import NavigationError
from core.project.params import ParameterError, bind

__all__ = ["DONE_STATUSES", "ResumeError", "ResumePlan", "plan_resume", "ResumeExecutor", "WRITING_KINDS"]

#: Step statuses that count as done: the step is not done again.
DONE_STATUSES = ("passed", "manual", "skipped")


class ResumeError(ValueError):
    """The run cannot be resumed; the message says why (one line, names the run)."""


@dataclass(frozen=True)
class ResumePlan:
    """How a run resumes another (step indexes 0-based).

    Attributes
    ----------
    resumed_from : str
        The earlier run's id.
    start : int
        The first step run again (``len(flow.steps)`` when all were done).
    done : tuple[int, ...]
        Steps done in the earlier run(s): not done again.
    replay : tuple[int, ...]
        The done steps that wrote nothing, replayed to bring the page back.
    in_flight : int | None
        The step that was between its checkpoint and its verdict when the
        earlier run ended, when it may have written; None otherwise.
    notes : tuple[str, ...]
        What was decided and why, one line per step that is not simply run.
    """

    resumed_from: str
    start: int
    done: tuple[int, ...] = ()
    replay: tuple[int, ...] = ()
    in_flight: int | None = None
    notes: tuple[str, ...] = ()

    def to_mapping(self) -> dict[str, Any]:
        """The plan as JSON-ready data (the ``run_resumes.plan`` column)."""
        return {"resumed_from": self.resumed_from, "start": self.start, "done": list(self.done),
                "replay": list(self.replay), "in_flight": self.in_flight, "notes": list(self.notes)}


def _wrote(i: int, flow: Flow, state: Any) -> bool:
    """Step ``i`` (done) wrote data: declared irreversible, found not reversible, or named in the written lines."""
    step = flow.steps[i]
    if not step.reversible:
        return True
    cp = state.checkpoints.get(i)
    if cp is not None and not cp.get("reversible", True):
        return True
    prefix = f"step {i + 1} '"
    return any(str(line).startswith(prefix) for c in state.checkpoints.values() for line in c.get("side_effects", ()))


def _is_sign_in(i: int, flow: Flow, secrets: tuple[str, ...] = ()) -> bool:
    """A click right after a step that typed a secret parameter (or into a password field), not declared
    irreversible: a sign-in."""
    if i == 0:
        return False
    step, prev = flow.steps[i], flow.steps[i - 1]
    if step.action.kind != "click" or step.reversible_declared or prev.action.kind != "input":
        return False
    value = prev.action.value or ""
    names = tuple(flow.secrets) + tuple(secrets)
    return any("{" + name + "}" in value for name in names) or (prev.target.type or "").lower() == "password"


def _may_write(i: int, flow: Flow, state: Any) -> bool:
    """Step ``i``, not settled, may have written: declared irreversible, found writing, or an undeclared
    action of a kind that can write (:data:`WRITING_KINDS`)."""
    step = flow.steps[i]
    if not step.reversible:
        return True
    cp = state.checkpoints.get(i)
    if cp is not None and cp.get("step_state") != "pending" and not cp.get("reversible", True):
        return True
    return not step.reversible_declared and step.action.kind in WRITING_KINDS


def _verified(i: int, state: Any) -> bool:
    """Step ``i`` has no recorded outcome but its latest verdict is ``as_expected``: it passed, and the run
    died in its ``record`` phase (nothing after a passing verification can make a step act again)."""
    return (getattr(state, "last_verdicts", {}) or {}).get(i) == "as_expected"


def _field_key(step: Any) -> str:
    """What names an input step's field: its selector, else the recorded id or name attribute ("" unknown)."""
    return step.selector or (f"#{step.target.id}" if step.target.id else "") or (
        f"[name={step.target.name_attr}]" if step.target.name_attr else "")


def _drop_refilled(flow: Flow, replay: list[int], start: int) -> list[int]:
    """Replayed fills that the next step to run (replayed or the first step run again) fills again are left out:
    the page is fresh, the earlier value is overwritten anyway, and a password field is refilled with the value
    it already holds - a fill that changes nothing, which its verification rightly refuses."""
    seq = list(replay) + ([start] if start < len(flow.steps) else [])
    kept = []
    for pos, i in enumerate(replay):
        step, nxt = flow.steps[i], flow.steps[seq[pos + 1]] if pos + 1 < len(seq) else None
        if (nxt is not None and step.action.kind == "input" and nxt.action.kind == "input"
                and _field_key(step) and _field_key(step) == _field_key(nxt)):
            continue
        kept.append(i)
    return kept


def plan_resume(flow: Flow, state: Any, *, secrets: tuple[str, ...] = (),
                carried_in_flight: int | None = None) -> ResumePlan:
    """The plan to resume run ``state`` (a :class:`core.store.resumes.RunState`) of ``flow``.

    ``secrets`` are the project's declared secret names (a flow's own are in ``flow.secrets``).
    ``carried_in_flight``: the step a resumed run (``state`` is itself a resume) found in flight - it stays
    in flight, whatever that run did with it, until a run counts it done (issue 21 item 1).

    Raises
    ------
    ResumeError
        The run passed, is still running, belongs to another flow, or is an episode (MiniWoB++).
    """
    rid = state.run_id
    if state.flow != flow.name:
        raise ResumeError(f"run {rid} is of flow {state.flow!r}, not {flow.name!r}")
    if state.status == "passed":
        raise ResumeError(f"run {rid} passed: there is nothing to resume")
    if state.status == "running":
        raise ResumeError(f"run {rid} is still running (its process is alive): stop it before resuming it")
    if flow.episode is not None:
        raise ResumeError(f"run {rid} is an episode of {flow.name!r}: each run is a new episode, run it again instead")
    n = len(flow.steps)
    status = {i: state.steps.get(i) or ("passed" if _verified(i, state) else None) for i in range(n)}
    start = next((i for i in range(n) if status[i] not in DONE_STATUSES), n)
    done = tuple(range(start))
    replay, notes = [], []
    for i in done:
        title = flow.steps[i].title
        unrecorded = state.steps.get(i) is None  # verified, then the run died: what it wrote was not kept
        if unrecorded:
            notes.append(f"step {i + 1} '{title}' was verified in run {rid}, which ended before recording it: "
                         f"counted done")
        if status[i] != "passed":
            notes.append(f"step {i + 1} '{title}' was {state.steps.get(i)} in run {rid}: not done again")
        elif not (_may_write(i, flow, state) if unrecorded else _wrote(i, flow, state)):
            replay.append(i)
        elif _is_sign_in(i, flow, secrets):
            replay.append(i)
            notes.append(f"step {i + 1} '{title}' signs in: replayed as a re-login")
        else:
            notes.append(f"step {i + 1} '{title}' wrote data in run {rid}: not done again")
    replay = _drop_refilled(flow, replay, start)
    in_flight = None
    acts = getattr(state, "acts", {}) or {}
    judged = (getattr(state, "verdict_counts", {}) or {}).get(start, 0)
    carried = carried_in_flight is not None and start == carried_in_flight
    cp = state.checkpoints.get(start) if start < n else None
    # an attempt that acted, was found to have an effect (a write, a storage change: its checkpoint turned
    # irreversible) and failed its verification: its effect may be there although no verdict says so
    unverified = (cp is not None and cp.get("step_state") == "failed" and not cp.get("reversible", True)
                  and (acts.get(start, 0) > 0 or flow.steps[start].reversible))
    if start < n and (carried or unverified or (acts.get(start, 0) > judged and _may_write(start, flow, state))):
        in_flight = start
        why = ("had an effect that was not verified" if unverified and not carried
               else "was in flight when run {rid} ended and may have written".format(rid=rid))
        notes.append(f"step {start + 1} '{flow.steps[start].title}' {why}" + (f" in run {rid}" if unverified
                                                                              and not carried else ""))
    return ResumePlan(rid, start, done, tuple(replay), in_flight, tuple(notes))


class ResumeExecutor(FlowExecutor):
    """A :class:`FlowExecutor` that runs one flow from a :class:`ResumePlan` (set :attr:`plan` first)."""

    plan: ResumePlan | None = None

    def _run_steps(self, run: RunState, setup: Callable[[], Mapping[str, str]] | None) -> tuple[str, str, str]:
        plan, flow, loaded = self.plan, run.flow, False
        assert plan is not None, "ResumeExecutor.plan is not set"
        if self.store is not None:
            from core.store.resumes import ResumeTable

            self.store_call_on(ResumeTable(self.store), "record", run.run_id, plan.resumed_from, plan.to_mapping())
        try:
            self.control.pause_point(run.run_id, flow.name, -1, "start")
            if plan.start < len(flow.steps):
                self.driver.goto(bind(flow.start_url, run.params, where=f"{flow.name} start_url"))
            loaded = True
            if setup is not None:
                run.params.update(setup())
            rest = plan.start < len(flow.steps)  # nothing left to run: no page to bring back, nothing replayed
            for i in range(plan.start):
                if i in plan.replay and rest:
                    ctx: StepContext = run_step(self, run, i)
                    if ctx.status in ("failed", "escalated", "error"):
                        return ("error" if ctx.status == "error" else ctx.status), (
                            f"resuming run {plan.resumed_from}: replaying step {i + 1} to bring the page back: "
                            f"{ctx.error}"), ctx.error_kind
                else:
                    self._done(run, i, f"done in run {plan.resumed_from}; not done again (resumed)")
            index = plan.start
            if plan.in_flight is not None and index == plan.in_flight:
                verdict = self._judge_in_flight(run, index)
                if verdict:
                    return "escalated", verdict, "escalated"
                index += 1
            while 0 <= index < len(flow.steps):
                ctx = run_step(self, run, index)
                if ctx.status in ("failed", "escalated", "error"):
                    return ("error" if ctx.status == "error" else ctx.status), ctx.error, ctx.error_kind
                index = next_index(ctx)
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

    def store_call_on(self, obj: Any, method: str, *args: Any) -> Any:
        """``obj.<method>(*args)`` with the store's rule: a failure is kept in ``store_errors``, never raised."""
        try:
            return getattr(obj, method)(*args)
        except Exception as exc:  # noqa: BLE001 - recording is best effort
            self.store_errors.append(f"{type(obj).__name__}.{method} failed: {exc}")
            return None

    def _done(self, run: RunState, i: int, why: str, status: str = "skipped") -> None:
        """Record step ``i`` as not run here (``why`` says where it was done)."""
        step = run.flow.steps[i]
        self.emit(StepStarted(run.run_id, run.flow.name, i, step.title, 0))
        outcome = StepOutcome(i, step.id, step.title, status, None, None, 0, 0.0, self.redact(why),  # type: ignore[arg-type]
                              "resume", ())
        run.outcomes.append(outcome)
        self.store_call("record_step", run.run_id, outcome)
        self.emit(StepFinished(run.run_id, run.flow.name, i, status, False, 0.0, outcome.error, (), "resume"))

    def _judge_in_flight(self, run: RunState, i: int) -> str:
        """The in-flight step ``i``: "" when the page shows its effect (recorded done), else the escalation's
        reason (the run ends escalated; the step is not done again)."""
        plan = self.plan
        assert plan is not None
        step = run.flow.steps[i]
        checks = []
        for a in step.assertions:
            try:
                ok, why = self.driver.check_assertion(a, None, bind(a.expected, run.params, where=f"{run.flow.name} "
                                                                                                   f"step {step.id!r}"))
            except Exception as exc:  # noqa: BLE001 - an assertion that cannot be checked is not a proof
                ok, why = False, f"{type(exc).__name__}: {exc}"
            checks.append((ok, why))
        if checks and all(ok for ok, _ in checks):
            self._done(run, i, f"in flight when run {plan.resumed_from} ended; its assertions hold on the page: "
                               f"counted done, not done again")
            return ""
        reason = (f"step {i + 1} '{step.title}' was in flight when run {plan.resumed_from} ended and may have "
                  f"written data; " + ("its assertions do not all hold on the page" if checks else
                                       "it has no assertion to show its effect on the page")
                  + ": it is not done again - check the app, then run the rest by hand or skip the step")
        event = EscalationRaised(run.run_id, run.flow.name, i, step.title, self.redact(reason), (),
                                 tuple(run.side_effects), "irreversible", ("skip", "stop"))
        self.store_call("record_escalation", run.run_id, event)
        self.emit(event)
        answer = self.ask_human(event)
        if answer.kind == "skip":
            self._done(run, i, f"skipped by the user: {reason}")
            return ""
        outcome = StepOutcome(i, step.id, step.title, "escalated", None, None, 0, 0.0, self.redact(reason),
                              "resume", ())
        run.outcomes.append(outcome)
        run.stop_kind = "irreversible"
        self.store_call("record_step", run.run_id, outcome)
        self.emit(StepFinished(run.run_id, run.flow.name, i, "escalated", False, 0.0, outcome.error, (), "resume"))
        return self.redact(reason)


def resume_target(project: Any, run_id: str) -> tuple[str, ResumePlan]:
    """The flow name and plan to resume run ``run_id`` of ``project`` (opens its store; runs left ``running``
    by a dead process are marked ``interrupted`` first).

    Raises
    ------
    ResumeError
        No store, no such run, the flow is gone or changed (a step id differs), or :func:`plan_resume` refuses.
    """
    from core.store import RunIdError, Store, StoreError, store_present
    from core.store.resumes import ResumeTable

    path = project.data_dir / "store.sqlite"
    if not store_present(path):  # the project's file, or the shared store (STEADYHAND_STORE_URL)
        raise ResumeError(f"{project.root}: no store yet (.steadyhand/store.sqlite): no run {run_id} to resume")
    try:
        store = Store.open(path)
    except StoreError as exc:
        raise ResumeError(str(exc)) from None
    try:
        try:
            run_id = store.resolve_run_id(run_id)  # a full id or any unique prefix, as `history list` shows
        except RunIdError as exc:
            raise ResumeError(str(exc)) from None
        table = ResumeTable(store)
        if table.state(run_id) is None:
            raise ResumeError(f"{path}: no run {run_id!r} (see the runs with `steadyhand report` or the studio)")
        chain = resume_chain(table, run_id)
        states = [table.state(r) for r in chain]
        link = table.of(chain[-1])
        ids = store.run_detail(chain[0])
    finally:
        store.close()
    state = merge_chain([s for s in states if s is not None])
    carried = (link or {}).get("plan", {}).get("in_flight")
    flow = project.flows.get(state.flow)
    if flow is None:
        raise ResumeError(f"run {run_id} is of flow {state.flow!r}, which {project.root} no longer has")
    for rec in (ids.steps if ids is not None else ()):
        idx, sid = rec.index, getattr(rec, "step_id", "")
        if sid and (idx >= len(flow.steps) or flow.steps[idx].id != sid):
            now = flow.steps[idx].id if idx < len(flow.steps) else "none"
            raise ResumeError(f"{flow.source or flow.name}: step {idx + 1} was {sid!r} in run {run_id} and is {now!r} "
                              f"now: the flow changed, the run cannot be resumed")
    try:
        plan = plan_resume(flow, state, secrets=tuple(project.settings.secrets),
                           carried_in_flight=carried if isinstance(carried, int) else None)
    except ResumeError as exc:
        if len(chain) == 1:
            raise
        raise ResumeError(f"run {run_id} was already resumed by {chain[-1]}; {exc}") from None
    if len(chain) > 1:
        plan = replace(plan, notes=(f"run {run_id} was already resumed (by {', '.join(chain[1:])}): continuing "
                                    f"the latest, {chain[-1]}",) + plan.notes)
    return flow.name, plan


#: Most links followed from a run to its latest resume (every loop has a limit).
MAX_CHAIN = 100


def resume_chain(table: Any, run_id: str) -> list[str]:
    """``run_id``, the run that resumed it, the run that resumed that one... oldest first (issue 21 item 1).

    Each run is followed by its latest resume; at most :data:`MAX_CHAIN` links (a longer chain is cut there).
    """
    chain = [run_id]
    while len(chain) < MAX_CHAIN:
        later = [r for r in table.resumed_by(chain[-1]) if r not in chain]
        if not later:
            break
        chain.append(later[-1])
    return chain


def merge_chain(states: list[Any]) -> Any:
    """One :class:`core.store.resumes.RunState` for a run and its resumes (oldest first): a step counts as
    done when any run of the chain did it (with the checkpoint of the run that did); the status, the
    in-flight evidence (``acts``, ``verdict_counts``) and the id are the latest run's."""
    from core.store.resumes import RunState as StoredState

    latest = states[-1]
    steps: dict[int, str] = {}
    cps: dict[int, Any] = {}
    for st in states:
        for i, status in st.steps.items():
            if steps.get(i) in DONE_STATUSES:
                continue  # done in an earlier run: a later run's "skipped (done in run ...)" only mirrors it
            steps[i] = status
            if i in st.checkpoints:
                cps[i] = st.checkpoints[i]
        for i, cp in st.checkpoints.items():
            cps.setdefault(i, cp)
    return StoredState(latest.run_id, latest.flow, latest.status, latest.error, steps, cps,
                       frozenset().union(*(st.observed for st in states)), latest.verdicts, latest.acts,
                       latest.verdict_counts, getattr(latest, "last_verdicts", {}))

