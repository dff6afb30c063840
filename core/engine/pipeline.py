"""One step as a pipeline of phases over a :class:`StepContext` (architecture rule 2, R5).

Phases, in order (:data:`core.engine.events.PHASES`):

``observe``
    breaker check (R4), then the page before the action (DOM, boxes, screenshot).
``fingerprint``
    the state signature of that page (S2) and change detection against the
    screen's baseline (R1, :mod:`core.engine.screen`); an unchanged screen
    takes the fast path (the previous after-observation reused, exact only).
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
from pathlib import Path
from dataclasses import replace
from typing import Any, Callable

from core.act.after import appeared_fields, changed_fields, control_key, fill_undone, observed_after, same_text
from core.act.landing import base_path, constant_title, judge_landing, origin_of
from core.act.expect import change_words, expected_delta, judge, observed_deltas
from core.act.writes import is_beacon, server_writes
from core.act.precheck import precheck as precheck_target
from core.engine.acting import act_read, note_acting, read_before_acting, writes_said
from core.engine.motion import look_when_still
from core.engine.norepeat import list_counts, mark_effects, no_repeat, page_regions
from core.act.space import already_satisfied, needs_target, spec
from core.domain import (
    BreakerContext, Candidate, Checkpoint, EscalationAnswerKind, EscalationCandidate, EscalationKind, ErrorKind,
    Observation, Resolution, ScoredCandidate, Step, StepOutcome, Verdict,
)
from core.engine.control import Answer, StopRequested, TakeoverRequested, continue_target
from core.domain.evidence import AssertionCheck
from core.domain.flow import PAGE_ASSERTIONS
from core.engine.events import (
    ActionPerformed, EscalationRaised, HandedBack, PhaseChanged, Recovered, StepFinished,
    StepStarted, TakeoverStarted, TargetResolved, VerdictReached,
)
from core.engine import ahead, fastpath
from core.heal.book import with_fresh_anchor
from core.locate import load_crop, resolve, selector_contradicts
from core.perception.driver import ActionError, BrowserClosedError, NavigationError, PageError, PageLoadingError
from core.perception.netwatch import NetworkWatch
from core.perception.pagefacts import main_heading, overlays
from core.plan import DecideContext, NeedsApproval, NeedsHuman
from core.project.params import ParameterError, bind_step, placeholders
from core.project.paths import upload_path
from core.recover.breaker import describe_open, risk_of
from core.recover.loops import action_key
from core.recover.policy import Failure, decide_recovery, human_answers
from core.recover.waits import bound_reason
from core.recover.rollback import (
    NOT_CLOSED, dismiss_popups, popup_problem, roll_back, run_compensations, take_checkpoint,
)

from core.engine.hooks import (
    AttemptFailed, BeforeAction, BreakpointHit, ClearPopup, CompareScreen, CurrentBelief, Decided, Engine, EscalationAnswered,
    EscalationOffer, FailureSeen, HealProposal, HoldTarget, PageHeading, RefuseAction, ResolveFirst, SkipResolve, StateAfter,
    StateBefore, StepRecorded, TakeoverBegins, TakeoverEnds, TakeoverHandedBack, flush_store,
)
from core.engine.step import RunState, StepContext, StepFailure

__all__ = ["RunState", "StepContext", "StepFailure", "PHASE_FUNCTIONS", "run_step", "fatal_kind", "IDLE_PROBE_MS"]

#: How long (ms) a failed step whose undeclared action seemed to write is watched, with no action, before
#: its retries are refused: polling and telemetry timers recur on their own, the user's write does not
#: (S6).  1000 ms sees a poller of up to 1 s period once; slower ones are learnt between steps.
IDLE_PROBE_MS = 1000


# --- phases ---------------------------------------------------------------------------------


def observe(ex: Engine, ctx: StepContext) -> None:
    """Breaker check (R4; in half-open only the one probe passes), then the page before the action.

    The page is the previous step's after-observation when nothing happened since (R1 reuse).
    """
    if not ex.breaker.allow():
        raise StepFailure(Failure("breaker_open", "circuit breaker is open"), escalation="breaker_open")
    ctx.before = ex.observe(ctx.run.run_id, ctx.run.flow, ctx.index, "before", ctx=ctx)
    ctx.reused = ex.last_reused
    if ctx.prior is not None:  # a retry: did the last attempt's page change after its verification looked?
        after, budget, t0 = ctx.prior
        ctx.prior = None
        if ctx.before.signature.digest != after:  # a late change (S7): learn it, the next wait is longer
            ex.wait_learner.learn(budget, {"changed": False}, late_change_ms=(time.monotonic() - t0) * 1000.0)
    _wait_while_loading(ex, ctx)


def _wait_while_loading(ex: Engine, ctx: StepContext) -> None:
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
        ctx.before = ex.observe(ctx.run.run_id, ctx.run.flow, ctx.index, "before", ctx=ctx)
        ctx.reused = ex.last_reused


def fingerprint(ex: Engine, ctx: StepContext) -> None:
    """The light state signature of the page before the action (S2) and its change report (R1)."""
    assert ctx.before is not None
    ctx.state = ctx.before.signature.digest
    ctx.change = ex.plugins.decide(CompareScreen(ctx))
    ex.plugins.notify(StateBefore(ctx))


def decide(ex: Engine, ctx: StepContext) -> None:
    """The next action from the decide chain; binds its parameters."""
    assert ctx.before is not None
    run = ctx.run
    budget = ex.settings.run_budget(len(run.flow.steps))
    if ctx.attempt == 1 and run.rounds > budget:
        raise StepFailure(Failure("budget", f"the run took {run.rounds - 1} steps, its limit ({len(run.flow.steps)} "
                                            f"of the flow and max_steps {ex.settings.max_steps} more)"),
                          escalation="budget")
    try:
        decision = ex.chain.decide(DecideContext(run.flow, ctx.index, ctx.before, tuple(run.outcomes), run.params,
                                                 attempt=ctx.attempt, run_id=run.run_id))
    except NeedsApproval as exc:  # the element is shown boxed; "retry" approves the very next decision
        ctx.candidate = exc.candidate
        raise StepFailure(Failure("no_decision", exc.reason), escalation="approval") from None
    except NeedsHuman as exc:
        raise StepFailure(Failure("no_decision", exc.reason), escalation="no_decision") from None
    ctx.decided, ctx.source = decision.step, decision.source
    ex.plugins.notify(Decided(ctx))  # e.g. a skill's screen is not the flow step's (R1, K6)
    ctx.step = bind_step(decision.step, run.params, where=ctx.where)
    value = ctx.step.action.value
    if decision.step.action.kind == "upload" and value and run.flow.source:
        value = upload_path(run.flow.source, value, where=ctx.where)  # beside the flow file, never out of the project
    ctx.value = value


def resolve_target(ex: Engine, ctx: StepContext) -> None:
    """The target through the selector (when given) and the locator chain (R2)."""
    assert ctx.step is not None and ctx.before is not None
    t0 = time.perf_counter()
    deadline = time.monotonic() + min(RENDER_WAIT_MS, float(ex.settings.waits.loading_max_ms)) / 1000.0
    while True:
        resolution, cand, chosen = _find(ex, ctx)
        if not chosen:  # a person's use-once choice stands as chosen
            # fastpath (issue 20): the recorded locator must find the same element, or the full look decides
            resolution, cand = fastpath.confirm_target(ex, ctx, resolution, cand, lambda: _find(ex, ctx)[:2])
        if chosen or not (resolution.abstained or cand is None) or not _rendered_more(ex, ctx, deadline):
            break
    held: StepFailure | None = None
    hold = ex.plugins.decide(HoldTarget(ctx, resolution, cand))  # deny rules, a skill's safety (K6)
    if hold is not None:  # recorded as an abstention, then raised: never acted on
        resolution, cand, held = hold.resolution, None, hold.failure
    ctx.resolution = replace(resolution, ms=(time.perf_counter() - t0) * 1000.0)
    ctx.candidate = cand
    ex.store_call("record_resolution", ctx.run.run_id, ctx.index, ctx.resolution)
    ex.emit(TargetResolved(ctx.run.run_id, ctx.run.flow.name, ctx.index, ctx.resolution, cand))
    if held is not None:
        raise held  # held back by a deny rule or a skill's safety bar: never acted on
    if ctx.resolution.abstained or cand is None:
        ctx.run.abstentions += 1
        if ctx.step.optional:
            ctx.status, ctx.error = "skipped", "target not found; optional step skipped"
            return
        raise StepFailure(Failure("abstained", f"locator abstained: {ctx.resolution.reason}"), escalation="abstained")


#: How long a step whose target is not (yet) on the page waits for the page to render more before the
#: locator's answer stands, ms: Playwright's default ``expect`` timeout (5,000 ms), so that a page that
#: renders late is waited for as the script's auto-waiting locator waits for it.  Bounded further by
#: ``waits.loading_max_ms``.
RENDER_WAIT_MS = 5000.0


def _rendered_more(ex: Engine, ctx: StepContext, deadline: float) -> bool:
    """On the first attempt of a step that is not optional, before any action: wait (until ``deadline``,
    ``time.monotonic()`` s) for the page to change, then look again; True when the new look differs from the
    last one (resolve again).

    A page that does not change within the time left is what the locator judged: False after the wait.  An
    optional step never waits (its target is often absent by design, as a script's ``is_visible()`` check
    does not wait).  Only the before-observation is replaced (``ctx.before``, ``ctx.state``): nothing was
    done yet.
    """
    wait, probe = getattr(ex.driver, "wait_settled", None), getattr(ex.driver, "probe", None)
    if (ctx.attempt != 1 or ctx.acted or ctx.before is None or wait is None or probe is None or ctx.step is None
            or ctx.step.optional):
        return False
    seen = ctx.before.signature.digest
    while (left := (deadline - time.monotonic()) * 1000.0) > 0:
        now = probe()  # the page's mutation count and URL: a change from here on is waited for
        start = {"mutations": now["mutations"], "url": now["url"]} if now else None
        if not wait(start=start, idle_ms=left, limit_ms=left).get("changed"):
            return False  # nothing rendered in the time a script waits: the page is as the locator saw it
        ctx.before = ex.observe(ctx.run.run_id, ctx.run.flow, ctx.index, "before", ctx=ctx)
        ctx.reused = ex.last_reused
        ctx.state = ctx.before.signature.digest
        if ctx.state != seen:
            return True
    return False


def _find(ex: Engine, ctx: StepContext) -> tuple[Resolution, Candidate | None, bool]:
    """(resolution, candidate, chosen by a person) on ``ctx.before``: a plugin's target first, then the
    author's selector, a pending heal, the locator chain."""
    assert ctx.step is not None and ctx.before is not None
    resolution: Resolution | None = None
    cand: Candidate | None = None
    # a plugin's target first: a person's use-once choice, the unchanged screen's fast path (R1, exact alone)
    first = ex.plugins.decide(ResolveFirst(ctx))
    if first is not None:
        resolution, cand = first.resolution, first.candidate
        ctx.source = first.source or ctx.source
    if resolution is None:
        resolution, cand = _by_selector(ex, ctx.step)
    if resolution is None and ex.pending_heals is not None and ctx.source == "flow" and ctx.decided is not None:
        # a pending heal of this step is tried first (exact on its new descriptor; core.heal, kind 9)
        resolution, cand = ex.pending_heals.reuse(ctx.run.run_id, ctx.run.flow, ctx.index, ctx.decided,
                                                  ctx.before.candidates, ex.settings.locator)
    if resolution is None:
        # fastpath (issue 20): past the exact level the chain runs again on the page looked at in full
        resolution, cand = _by_chain(ex, ctx, looking=True)
    return resolution, cand, first is not None and first.source == "chosen"


def _by_chain(ex: Engine, ctx: StepContext, *, looking: bool = False) -> tuple[Resolution, Candidate | None]:
    """The locator chain on ``ctx.before`` (R2); with ``looking``, again on a full look when it is not exact
    (:func:`core.engine.fastpath.resolve_looking`).  A heal a person refused abstains."""
    assert ctx.step is not None and ctx.before is not None

    def run(ask: bool = True) -> Resolution:
        assert ctx.step is not None and ctx.before is not None
        return resolve(ctx.step.target, ctx.before.candidates, config=ex.settings.locator,
                       irreversible=not ctx.step.reversible, screenshot=ctx.before.screenshot_png or None,
                       screenshot_dpr=ctx.before.device_pixel_ratio,
                       crop=load_crop(ctx.run.flow.source, ctx.step.target.crop),
                       anchors=ctx.before.anchors,
                       tie_breaker=getattr(ex, "tie_breaker", None) if ask else None)

    resolution = fastpath.resolve_looking(ex, ctx, run) if looking else run()
    cand = next((c for c in ctx.before.candidates if c.ref == resolution.ref), None) if resolution.ref else None
    if (cand is not None and resolution.strategy != "exact" and ex.pending_heals is not None
            and ctx.source == "flow" and ctx.decided is not None):
        refused = ex.pending_heals.rejected(ctx.run.run_id, ctx.run.flow, ctx.decided, cand)
        if refused:  # a person said this heal goes to the wrong control: never act on it again
            resolution = replace(resolution, ref=None, abstained=True, reason=f"{resolution.reason}; {refused}")
            cand = None
    return resolution, cand


def _by_selector(ex: Engine, step: Step) -> tuple[Resolution | None, Candidate | None]:
    """EXACT by the author's selector: one match wins; without a descriptor, anything else abstains."""
    if not step.selector:
        return None, None
    matches = ex.driver.refs_for_selector(step.selector)
    if len(matches) == 1 and not selector_contradicts(step.target, matches[0].descriptor):
        c = matches[0]
        return Resolution("exact", c.ref, 1.0, 1.0, 0.0, reason=f"selector {step.selector!r} matched one element",
                          top=(ScoredCandidate(c.ref, 1.0, c.descriptor.label_text),)), c
    if not step.target.is_empty:
        return None, None  # the recorded element decides (a selector matching another control is no answer)
    why = "matched nothing" if not matches else f"matched {len(matches)} elements"
    return Resolution("", None, 0.0, 0.0, 0.0, abstained=True,
                      reason=f"selector {step.selector!r} {why} and the step has no descriptor yet",
                      top=tuple(ScoredCandidate(c.ref, 0.5, c.descriptor.label_text) for c in matches[:5])), None


def precheck(ex: Engine, ctx: StepContext) -> None:
    """S4 pre-check; pins the target when the step asserts on it (the next observation renumbers refs)."""
    assert ctx.step is not None
    why = precheck_target(ctx.step.action.kind, ctx.candidate, ex.plugins.decide(CurrentBelief()))
    ex.plugins.notify(BeforeAction(ctx))
    if why:
        raise StepFailure(Failure("precondition", f"precondition not met: {why}"), escalation="precondition")
    ctx.already = already_satisfied(ctx.step.action.kind, ctx.candidate, ctx.value)
    cand = ctx.candidate
    ctx.held = cand.ref if cand else None
    hold = getattr(ex.driver, "hold", None)
    # pinned for an assertion on the target (one without a selector, of a kind that reads an element)
    if cand is not None and hold is not None and any(not a.selector and a.kind not in PAGE_ASSERTIONS
                                                     for a in ctx.step.assertions):
        try:
            ctx.held = hold(cand.ref)
        except ActionError:
            ctx.held = cand.ref


def checkpoint(ex: Engine, ctx: StepContext) -> None:
    """Keep the state before acting (R3): signature, URL, dialogs, screenshot path, form values
    (secrets by digest), reversibility and side effects so far; learn the page's background requests (S6).

    Raises a pre-check failure (failure kind 14) when the target found lies in a dialog the step was not
    recorded in: a popup's own same-named button is never pressed in place of the page's.
    """
    assert ctx.step is not None and ctx.before is not None
    run, step = ctx.run, ctx.step
    _guard_popup(ex, ctx)
    watch = NetworkWatch.of(ex.driver)
    ctx.watched = watch is not None
    if watch is not None and run.idle_from:
        run.background.idle(watch.between(run.idle_from))  # nothing acted since the last step ended
        run.refresh_side_effects()
    shot = ""
    written = getattr(ex, "last_screenshot", None)  # the before-screenshot as written: never a path to no file
    if ex.store is not None and ctx.before.screenshot_png and written is not None:
        try:
            shot = Path(written).resolve().relative_to(Path(ex.store.media_root).resolve()).as_posix()
        except ValueError:
            shot = ""
    # the earlier steps' records are committed before this step acts (a kill loses at most this step's, and a
    # resume sees every step before it as it ended); this checkpoint itself is committed before an action
    # that may write by the synchronous "under way" row (:func:`core.engine.acting.note_acting`)
    flush_store(ex.store, ex.store_errors)
    # the form values, the probe and the kept state the act phase needs, in one round trip (issue 20)
    values = read_before_acting(ex, ctx)
    cp = take_checkpoint(ex.driver, run_id=run.run_id, flow=run.flow.name, index=ctx.index, step=step,
                         before=ctx.before, reversible=step.reversible, side_effects=tuple(run.side_effects),
                         secrets=_secret_values(ex, run), screenshot=shot, values=values)
    if run.checkpoints and run.checkpoints[-1].index == ctx.index:
        run.checkpoints[-1] = cp  # a retry replaces its step's checkpoint
    else:
        run.checkpoints.append(cp)
    ctx.cp = cp
    ex.store_call("record_checkpoint", run.run_id, cp)
    ctx.t_act = time.monotonic()


def _secret_values(ex: Engine, run: RunState) -> tuple[str, ...]:
    """Values that a checkpoint keeps by digest only: the driver's known secrets and the flow's secret params."""
    known = list(getattr(ex.driver, "secret_values", ()) or ())
    known += [run.params[n] for n in run.flow.secrets if run.params.get(n)]
    return tuple(v for v in dict.fromkeys(known) if v)


def _guard_popup(ex: Engine, ctx: StepContext) -> None:
    """A popup is in the way (failure kind 14): the target is covered by an overlay (a cookie banner, a
    focus-stealing popup), or it lies in an open dialog that the step was not recorded in."""
    cand, step, before = ctx.candidate, ctx.step, ctx.before
    if cand is None or step is None or before is None:
        return
    from core.act.after import same_text

    box = cand.descriptor.bbox
    if cand.covered and box is not None:
        found = overlays(ex.driver, (box.x + box.width / 2, box.y + box.height / 2)) or []
        if found and len(found) > _dialogs_expected(ctx):
            name = found[-1].get("name") or "a popup"
            ctx.popup = True
            raise StepFailure(Failure("precondition", f"precondition not met: the target is covered by {name!r}"),
                              escalation="precondition")
    if not before.modal_titles:
        return

    box = cand.descriptor.container
    inside = [t for t in before.modal_titles if box and t and same_text(t, box)]
    recorded = step.target.container
    if inside and recorded and not same_text(recorded, box) and not _nested_in_recorded(before, cand, recorded):
        ctx.popup = True
        raise StepFailure(Failure("precondition", f"precondition not met: the element found is in the dialog "
                                                  f"{inside[-1]!r}, not in {recorded!r} where it was recorded"),
                          escalation="precondition")


def _nested_in_recorded(before: Observation, cand: Candidate, recorded: str) -> bool:
    """The recorded dialog is still open and the element sits in a dialog stacked over it, with no control of
    the same name left in the recorded one: the dialog became two nested dialogs (an R tweak), not a popup
    in front of the recorded control."""
    from core.act.after import same_text

    titles = list(before.modal_titles)
    at = next((i for i, t in enumerate(titles) if t and same_text(recorded, t)), None)
    if at is None or not any(same_text(t, cand.descriptor.container) for t in titles[at + 1:] if t):
        return False
    label = cand.descriptor.label_text
    return not any(same_text(c.descriptor.container, recorded) and same_text(c.descriptor.label_text, label)
                   for c in before.candidates if c.descriptor.container and c.descriptor.label_text)


def act(ex: Engine, ctx: StepContext) -> None:
    """Perform the action, unless the target already is in the wanted state."""
    assert ctx.step is not None
    run_id, flow, kind = ctx.run.run_id, ctx.run.flow.name, ctx.step.action.kind
    act_read(ex, ctx)  # the probe and the kept state: the checkpoint's read, or one round trip now
    # P8: the same action on the same state again is refused before it is done; read-only kinds (assert,
    # wait, hover, scroll, screenshot) change no data and a repeated scroll moves a page the digest does not see
    key = "" if spec(kind).read_only else action_key(ctx.step, ctx.candidate.descriptor if ctx.candidate else None,
                                                     ctx.value)
    if ctx.already:
        if key and ctx.source == "model":  # a model choosing, again and again, what is already done: a loop too
            looping = ex.loops.check(key, ctx.state, title=ctx.title)
            if looping:
                raise StepFailure(Failure("loop", looping), escalation="loop")
            ex.loops.record(key, ctx.state)
        ex.emit(ActionPerformed(run_id, flow, ctx.index, kind, True, "already in the wanted state"))
        return
    looping = ex.loops.check(key, ctx.state, title=ctx.title) if key else ""
    if looping:
        raise StepFailure(Failure("loop", looping), escalation="loop")
    stuck = ex.stagnation.blocks(key)  # K2 found by the last round, whose own step passed
    if stuck:
        raise StepFailure(Failure("stagnation", f"{stuck}; not doing it again"), escalation="stagnation")
    refused = ex.plugins.decide(RefuseAction(ctx))  # e.g. a skill's element read live: the guard again (K6)
    if refused is not None:
        raise refused
    try:
        mark_effects(ex, ctx)  # what the page keeps, right before acting: an effect seen is never repeated
        note_acting(ex, ctx)  # committed before the action: a resume never repeats a write blindly
        ref = ctx.candidate.ref if ctx.candidate else None
        if ctx.locator:  # fastpath (issue 20): through the recorded locator, with Playwright's auto-waiting
            ex.driver.perform(ctx.step.action, ref, ctx.value, locator=ctx.locator)
        else:
            ex.driver.perform(ctx.step.action, ref, ctx.value)
    except ActionError as exc:
        ex.emit(ActionPerformed(run_id, flow, ctx.index, kind, False, str(exc)))
        raise StepFailure(Failure("action_error", str(exc))) from None
    ctx.acted = True
    if key:
        ex.loops.record(key, ctx.state)
    ex.emit(ActionPerformed(run_id, flow, ctx.index, kind, True))


#: Actions that do nothing to the page (a step of assertions only, a screenshot): their settle wait is skipped -
#: it could only wait its idle bound (500 ms) for a change nothing set off; the assertions poll on their own
#: (``waits.assertion_timeout_ms``).
QUIET_ACTIONS = frozenset({"assert", "screenshot"})
#: Assertions judged on the page's text (``PlaywrightDriver.check_now``: the text a fast settle wait read).
TEXT_ASSERTIONS = frozenset({"text_appears", "text_absent"})


def settle(ex: Engine, ctx: StepContext) -> None:
    """Adaptive wait until the page is quiet, within the learnt budget (P6, S7; :mod:`core.recover.waits`)."""
    assert ctx.step is not None
    ctx.settle_t0 = time.monotonic()
    if ctx.step.action.kind in QUIET_ACTIONS:  # nothing was done to the page: nothing to wait for (its
        ctx.settled = {"ms": 0.0, "changed": False, "timed_out": False}  # assertions poll on their own)
        return
    long = not ctx.step.reversible  # submits wait longer (S7)
    ctx.wait = ex.wait_learner.budget(ctx.before.url if ctx.before else "", ctx.step.action.kind, long=long,
                                      belief=ex.plugins.decide(CurrentBelief()))
    if ctx.wait.samples == 0 and not long and expected_delta(ctx.step) == "value":
        # a fill, choice or check mutates no DOM the wait could see: waiting the whole idle bound (500 ms) for
        # nothing is most of a replay's time; twice the quiet time lets a reaction (validation, suggestions)
        # start, and a later one is learnt (S7) and seen by the fill read-back and the next observation
        ctx.wait = replace(ctx.wait, idle_ms=min(ctx.wait.idle_ms, 2.0 * ex.settings.waits.quiet_ms))
    # the fast path (issue 20): the wait ends on the page's own signals with a short quiet time; an action that
    # changed nothing (a fill mutates no DOM) waits its idle bound only while a reaction it set off is pending
    # (a validator's timeout that clears the field 100 ms on is waited for and seen; a poller's timer is not one)
    ctx.fast = fastpath.fast_step(ex, ctx)
    kwargs = fastpath.settle_kwargs(ex.driver, fast=ctx.fast, probe=ctx.probe)
    then = ahead.next_reads(ex, ctx) if kwargs.get("look") else None
    if then is not None:  # the next step's reads before acting, in the same round trip as this step's look
        kwargs["then"] = then
    if kwargs.get("look") and any(a.kind in TEXT_ASSERTIONS for a in ctx.step.assertions):
        kwargs["text"] = True  # and the page's text its text assertions are checked on, in that round trip too
    ctx.settled = ex.driver.wait_settled(long=long, start=dict(ctx.probe), idle_ms=ctx.wait.idle_ms,
                                         limit_ms=ctx.wait.limit_ms, **kwargs) or {}




def verify(ex: Engine, ctx: StepContext) -> None:
    """The page after; expected delta (S5), the recorded after-state, a fill that stayed (failure kind 13)
    and the assertions (P7) give the verdict.  The writes the action caused are read first: they make an
    undeclared step irreversible (S6) before anything can fail."""
    assert ctx.step is not None and ctx.before is not None
    run, step = ctx.run, ctx.step
    ctx.after = ex.observe(run.run_id, run.flow, ctx.index, "after", ctx=ctx)
    if ctx.fast:  # the light look after a short wait: when it disagrees, the full wait and another look
        why = _cheap_disagrees(ex, ctx)
        if why:
            fastpath.look_again(ex, ctx, why)
    look_when_still(ex, ctx)  # issue 19: a dialog still fading in is judged once the page stops moving
    ex.plugins.notify(StateAfter(ctx))
    _infer_writes(ex, ctx)
    verdict = _after_wait(ex, ctx, _effect_verdict(ctx))
    if ctx.acted and (verdict.kind == "as_expected" or step.action.kind == "input"):
        verdict = _landing_verdict(ex, ctx, verdict)
    # the cheap look's checks of this very observation, when they held; else each checked (polling) now
    results = _memo(ctx, "assertions", lambda: None) or [
        (a, *ex.driver.check_assertion(a, ctx.held, a.expected)) for a in step.assertions]
    if ctx.acted and any(not ok for _, ok, _ in results):
        results = _assertions_in_time(ex, ctx, results)
    ctx.checks = [AssertionCheck(a.kind, _assert_target(a, ctx), ex.redact(a.expected), ex.redact(why), ok)
                  for a, ok, why in results]
    failed = [f"{a.kind} {ex.redact(repr(a.expected))}: {why}" for a, ok, why in results if not ok]
    if failed:
        effect_ok = verdict.kind == "as_expected" and ctx.acted
        verdict = Verdict("failed", verdict.expected, verdict.observed, "assertion failed: " + "; ".join(failed))
        if effect_ok:  # the action had its effect: doing it again would act twice
            _record_verdict(ex, ctx, verdict)
            raise StepFailure(Failure("assertion", verdict.reason, acted=True), escalation="assertion",
                              verdict=verdict)
    elif step.assertions and verdict.kind == "unchanged" and step.action.kind in ("assert", "wait"):
        verdict = Verdict("as_expected", verdict.expected, verdict.observed, "assertions hold: " + _checked(ctx))
    elif ctx.checks and verdict.kind == "as_expected":
        verdict = replace(verdict, reason=f"{verdict.reason}; checked: {_checked(ctx)}")
    if ctx.looked_again and verdict.kind == "as_expected":  # a failure's reason is the failure alone
        verdict = replace(verdict, reason=f"{verdict.reason}; looked again after the page settled "
                                          f"(the first look found {ctx.looked_again})")
    _record_verdict(ex, ctx, verdict)
    if verdict.invalid and not ctx.invalid_counted:  # one action, one count: a second look acts no more
        ctx.invalid_counted = True
        run.invalid_actions += 1
    elif verdict.kind == "as_expected" and ctx.invalid_counted:  # a second look found its effect, only late:
        ctx.invalid_counted = False  # the action was not an invalid one after all
        run.invalid_actions -= 1
    _stagnation(ex, ctx, verdict)
    if verdict.kind != "as_expected":
        kind = "changed_unexpectedly" if verdict.kind == "changed_unexpectedly" else "unchanged"
        raise StepFailure(Failure(kind if verdict.kind != "failed" else "assertion", verdict.reason,
                                  acted=ctx.acted), verdict=verdict)
    _passed(ex, ctx)


def _cheap_disagrees(ex: Engine, ctx: StepContext) -> str:
    """What the light look after the fast wait finds amiss, in plain words; "" when it agrees with the step.

    The same judges as :func:`verify` - the expected effect, where the step
    landed (without dismissing anything), each assertion checked once - with
    no side effect: nothing is recorded, acted on or learnt.
    """
    assert ctx.step is not None
    verdict = _effect_verdict(ctx)
    if verdict.kind == "unchanged" and ctx.step.assertions and ctx.step.action.kind in ("assert", "wait"):
        verdict = replace(verdict, kind="as_expected")  # its assertions decide (as in verify)
    if verdict.kind != "as_expected" and ctx.step.action.kind != "input":
        if verdict.kind != "unchanged":
            return "an unexpected change"
        return ("no change yet" if verdict.expected in ("any", "content")
                else f"no sign yet of {change_words(verdict.expected)}")
    verdict = _landing_verdict(ex, ctx, verdict, dismiss=False)
    if verdict.kind != "as_expected":
        return "the page not yet where the step lands"
    check = getattr(ex.driver, "check_now", None)
    results = []
    for a in ctx.step.assertions:
        try:
            ok, why = check(a, ctx.held, a.expected) if check is not None else (False, "")
        except Exception:  # noqa: BLE001 - a check that cannot run now is judged by the full look
            ok, why = False, ""
        if not ok:
            return "an assertion not holding yet"
        results.append((a, ok, ex.redact(why)))
    _memo(ctx, "assertions", lambda: results)  # they hold: verify reads them (the same observation)
    return ""


def _memo(ctx: StepContext, key: str, read: Callable[[], Any]) -> Any:
    """``read()``, once per after-observation of the step: the cheap look and the verification share it."""
    if ctx.memo.get("") is not ctx.after:  # another look: what was read belongs to the last one
        ctx.memo.clear()
        ctx.memo[""] = ctx.after
    if key not in ctx.memo:
        ctx.memo[key] = read()
    return ctx.memo[key]


#: Pause (s) between two checks of assertions that do not hold yet after an action that had its effect.
ASSERT_POLL_S = 0.25


def _assertions_in_time(ex: Engine, ctx: StepContext, results: list) -> list:
    """Check failing assertions again, without acting, until the action timeout has passed since the action.

    A confirmation may show seconds after the effect that causes it (a slow server answer, an animation):
    a plain Playwright script's auto-waiting ``expect`` waits ``browser.action_timeout_ms`` (5000 ms) for
    it, and so does the step - the action had its effect, so acting again is never the way to find out.
    Returns the last results, in the order of ``ctx.step.assertions``; bounded by the timeout and by
    ``action_timeout_ms / ASSERT_POLL_S`` rounds.
    """
    assert ctx.step is not None
    timeout_s = ex.settings.browser.action_timeout_ms / 1000
    deadline = (ctx.t_act or time.monotonic()) + timeout_s
    for _ in range(int(timeout_s / ASSERT_POLL_S) + 1):
        if all(ok for _, ok, _ in results) or time.monotonic() + ASSERT_POLL_S > deadline:
            break
        time.sleep(ASSERT_POLL_S)
        results = [(a, *ex.driver.check_assertion(a, ctx.held, a.expected)) for a in ctx.step.assertions]
    return results


def _assert_target(a: Any, ctx: StepContext) -> str:
    """What an assertion was checked on: its selector, the step's target, or the page."""
    if a.kind in PAGE_ASSERTIONS:
        return "page"
    if a.selector:
        return a.selector
    cand = ctx.candidate
    return (cand.descriptor.label_text if cand is not None else "") or "the step's target"


def _checked(ctx: StepContext) -> str:
    """``"text_appears 'Saved' on page: text 'Saved' appears"`` for each passed assertion (secrets masked)."""
    return "; ".join(f"{c.kind}{f' {c.expected!r}' if c.expected else ''} on {c.target}: {c.observed}"
                     for c in ctx.checks if c.ok)


#: Deltas the settle wait itself notices (DOM mutations and URL changes); others (values, focus, scroll) it cannot.
_WAIT_VISIBLE = frozenset({"navigation", "overlay_open", "overlay_close", "elements", "content"})


def _after_wait(ex: Engine, ctx: StepContext, verdict: Verdict) -> Verdict:
    """Learn this page's settle time (S7); a wait that hit its bound becomes part of the verdict's reason."""
    if ctx.wait is None or not ctx.acted:
        return verdict
    late = None
    # only a change the wait could have seen (DOM mutations, URL) is late: a typed value mutates no DOM, and
    # learning from it would teach every input to wait the longest (each wait then "misses" it again)
    if not ctx.settled.get("changed") and any(d in _WAIT_VISIBLE for d in verdict.observed):
        late = (time.monotonic() - ctx.settle_t0) * 1000.0  # from the start of the wait to the observation
    # a fast wait that saw the change ended after a short quiet time: its length says nothing of the page's
    # settle time (a change it missed does: the page reacted later than its idle bound) - unless the change
    # came later than the default bound (waits.settle_max_ms): a page that answers late teaches the next wait
    fast_seen = ctx.fast and not ctx.looked_again and ctx.settled.get("changed")
    if not fast_seen or float(ctx.settled.get("ms", 0.0)) > ex.wait_learner.settings.settle_max_ms:
        ex.wait_learner.learn(ctx.wait, ctx.settled, late_change_ms=late)
    if ctx.after is not None and not ctx.settled.get("changed") and late is None:
        ctx.prior = (ctx.after.signature.digest, ctx.wait, ctx.settle_t0)
    bound = bound_reason(ctx.wait, ctx.settled)
    return replace(verdict, reason=f"{verdict.reason}; {bound}") if bound else verdict


def _stagnation(ex: Engine, ctx: StepContext, verdict: Verdict) -> None:
    """K2: count this round; rounds in a row without a real state change stop the step when its verdict failed
    (else :meth:`~core.recover.loops.Stagnation.blocks` refuses the next repeat in the act phase)."""
    if not ctx.acted or ctx.before is None or ctx.after is None or ctx.step is None:
        return
    key = "" if spec(ctx.step.action.kind).read_only else action_key(
        ctx.step, ctx.candidate.descriptor if ctx.candidate else None, ctx.value)
    why = ex.stagnation.observe(ctx.before.signature.digest, ctx.after.signature.digest, verdict=verdict.kind,
                                expected=expected_delta(ctx.step), key=key,
                                where=f"step {ctx.index + 1} '{ctx.title}' attempt {ctx.attempt}")
    if why and verdict.kind != "as_expected":  # this round failed too: stop now; else the next repeat is refused
        raise StepFailure(Failure("stagnation", f"{why} (last verdict: {verdict.reason})", acted=True),
                          escalation="stagnation", verdict=verdict)


def _infer_writes(ex: Engine, ctx: StepContext) -> None:
    """The server writes the action caused (S6): an undeclared step that wrote becomes irreversible.

    Beacons, keepalive fetches and background endpoints are not writes
    (:func:`core.act.writes.server_writes`).  The requests seen around a
    read-only action (hover, scroll, wait: it cannot write) are the page's
    own.  Idempotent per attempt; :func:`_confirm_writes` looks closer
    before a retry is refused.
    """
    if ctx.inferred or not ctx.acted or ctx.step is None or ctx.before is None:
        return
    ctx.inferred = True
    watch = NetworkWatch.of(ex.driver)
    if watch is None:
        return
    ctx.watched = True
    from urllib.parse import urlsplit

    u = urlsplit(ctx.before.url)
    window = watch.between(ctx.t_act)
    step = ctx.step
    if spec(step.action.kind).read_only:
        ctx.run.background.idle(window)
    ctx.writes = server_writes(window, origin=f"{u.scheme}://{u.netloc}", background=ctx.run.background)
    if ctx.writes and not step.reversible_declared:
        ctx.reversible = False


def _confirm_writes(ex: Engine, ctx: StepContext) -> None:
    """Before a failed undeclared step is refused its retries: do its "writes" recur on their own?

    The page is watched :data:`IDLE_PROBE_MS` with no action; an endpoint
    of a script request (fetch, XHR - a form or document POST is never a
    poller) that is sent again meanwhile is polling, not the user's data.
    """
    step, watch = ctx.step, NetworkWatch.of(ex.driver)
    if (watch is None or step is None or step.reversible_declared or not step.reversible
            or not any(w.resource_type in ("fetch", "xhr") for w in ctx.writes)):
        return
    t = time.monotonic()
    try:
        watch.page.wait_for_timeout(IDLE_PROBE_MS)
    except Exception:  # noqa: BLE001 - a page that closed: no probe
        return
    keys = {(w.method, w.url.split("?")[0]) for w in ctx.writes}
    ctx.run.background.idle(r for r in watch.between(t)
                            if not is_beacon(r) and (r.method, r.url.split("?")[0]) in keys)
    ctx.writes = [w for w in ctx.writes if w not in ctx.run.background]
    if not ctx.writes:
        ctx.reversible = None  # back to the action's default: reversible


def _landing_verdict(ex: Engine, ctx: StepContext, verdict: Verdict, *, dismiss: bool = True) -> Verdict:
    """Where the step landed: a fill the page undid (failure kind 13) and the recorded after-state (S5).

    A dialog that opened although the recorded after-state had none is
    dismissed by its close / cancel control or Escape (failure kind 14) and
    the page judged again (unless ``dismiss`` is False: the fast path's look,
    which never acts); anything else that does not hold is
    ``changed_unexpectedly`` with the plain reason.
    """
    assert ctx.step is not None and ctx.before is not None and ctx.after is not None
    step, before = ctx.step, ctx.before
    if step.action.kind == "input" and ctx.candidate is not None:
        key = control_key(ctx.candidate)
        after_c = next((c for c in ctx.after.candidates if control_key(c) == key), None)
        why = fill_undone(ex.redact(ctx.value), ctx.candidate, after_c)
        if why:
            return Verdict("changed_unexpectedly", verdict.expected, verdict.observed, why)
    recorded = step.recorded.after if step.recorded is not None else None
    if recorded is None or recorded.is_empty or verdict.kind != "as_expected":
        return verdict
    for attempt in range(2):
        after = ctx.after
        heading = _memo(ctx, "heading", lambda: _heading(ex, ctx)) if recorded.heading else ""
        public = {k: v for k, v in ctx.run.params.items() if k not in ctx.run.flow.secrets}
        actual = observed_after(before, after, heading=heading or "", params=public, target=ctx.candidate)
        changed = changed_fields(before, after)
        if step.action.kind in ("input", "select") and ctx.candidate is not None:
            changed.append(ctx.candidate.descriptor.label_text)  # its fill was verified above
            named = [t for t in (step.target.label, step.target.name) if t]
            if recorded.field_changed and any(same_text(recorded.field_changed, t) for t in named):
                # the field the recording names is the one this step filled, whatever its label says now (a
                # renamed label the locator healed): its change was verified above
                changed.append(recorded.field_changed)
        watch, run_base = NetworkWatch.of(ex.driver), base_path(getattr(ex.driver, "base_url", ""))
        items_before, items_after = list_counts(ex, ctx)
        regions = _memo(ctx, "regions", lambda: page_regions(ex, ctx))  # landmark, region changed (issue 19)
        mism, drift = judge_landing(  # signals weighed, paths relative to each base URL (issue 19)
            recorded, actual, changed=changed, appeared=appeared_fields(before, after),
            modal_titles=after.modal_titles, heading_known=heading is not None, params=public,
            recorded_base=ctx.run.flow.base_path or run_base, run_base=run_base, before=before, after=after,
            requests=_memo(ctx, "requests", lambda w=watch: w.between(ctx.t_act)) if watch is not None else (),
            origin=origin_of(before.url), items_before=items_before, items_after=items_after,
            regions_before=regions[0], regions_after=regions[1], irreversible=not ctx.effective_reversible,
            title_constant=_memo(ctx, "title_constant", lambda: constant_title(
                s.recorded.after if s.recorded is not None else None for s in ctx.run.flow.steps)))
        if not mism:
            return replace(verdict, reason=f"{verdict.reason}; {drift}") if drift else verdict
        if dismiss and attempt == 0 and all(m.code == "dialog_unexpected" for m in mism):
            # an approved skill answers the popup first; the step's action is not repeated (issue 25 item 1)
            cleared = ex.plugins.decide(ClearPopup(ctx, "after_action", None, _dialogs_expected(ctx)))
            if cleared is not None and cleared.ok:
                ctx.after = ex.observe(ctx.run.run_id, ctx.run.flow, ctx.index, "after", ctx=ctx)
                continue
            done = dismiss_popups(ex.driver, keep=len(before.modal_titles),
                                  observe=lambda: ex.driver.observe(screenshot=False))
            ex.emit(Recovered(ctx.run.run_id, ctx.run.flow.name, ctx.index, "dismiss", bool(done),
                              ex.redact("; ".join(done) or "no popup to dismiss")))
            if done:
                ctx.after = ex.observe(ctx.run.run_id, ctx.run.flow, ctx.index, "after", ctx=ctx)
                continue
        break
    return Verdict("changed_unexpectedly", verdict.expected, verdict.observed,
                   "; ".join(m.reason for m in mism))


def _heading(ex: Engine, ctx: StepContext) -> str | None:
    """The page's main heading for the landing check: as read with ``ctx.after`` in its own round trip (the
    screen plugin's page facts), else read now (:func:`core.perception.pagefacts.main_heading`)."""
    seen = ex.plugins.decide(PageHeading(ctx.after)) if ctx.after is not None else None
    return seen if isinstance(seen, str) else main_heading(ex.driver)


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


def _record_verdict(ex: Engine, ctx: StepContext, verdict: Verdict) -> None:
    ctx.verdict = verdict
    ex.store_call("record_verdict", ctx.run.run_id, ctx.index, verdict)
    ex.emit(VerdictReached(ctx.run.run_id, ctx.run.flow.name, ctx.index, verdict))


def _passed(ex: Engine, ctx: StepContext) -> None:
    assert ctx.decided is not None
    ctx.status = "passed"
    ex.breaker.record_success()
    ex.emit_breaker(ctx.run.run_id)
    decided = ctx.decided
    # a selector-only step, or imported hints confirmed without a heal: the descriptor is captured (filled in);
    # hints that needed a heal to find anything become a heal proposal instead (reviewed, never written blindly)
    confirmed = decided.target.imported and ctx.resolution is not None and not ctx.resolution.healed
    if (ctx.candidate is not None and (decided.target.is_empty or confirmed)
            and not placeholders(decided.selector)):
        # a parametrised selector names another element each run: its descriptor is not this one
        ctx.run.captures.append((decided, ctx.candidate))
    if ctx.candidate is not None and ctx.resolution is not None and ctx.resolution.healed and ctx.source == "flow":
        anchors = ctx.before.anchors if ctx.before is not None else ()
        ctx.run.healed.append((ctx.index, decided, with_fresh_anchor(ctx.candidate, decided.target, anchors),
                               ctx.resolution))


#: The phases before ``record``, in order: (name, function).
PHASE_FUNCTIONS: tuple[tuple[str, Callable[[Engine, StepContext], None]], ...] = (
    ("observe", observe), ("fingerprint", fingerprint), ("decide", decide), ("resolve", resolve_target),
    ("precheck", precheck), ("checkpoint", checkpoint), ("act", act), ("settle", settle), ("verify", verify),
)


# --- the loop -------------------------------------------------------------------------------


def run_step(ex: Engine, run: RunState, index: int) -> StepContext:
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
            fastpath.begin_attempt(ex, ctx)  # fastpath (issue 20): a retried step is looked at in full
            ex.emit(StepStarted(run.run_id, run.flow.name, index, ctx.title, ctx.attempt))
            try:
                _run_phases(ex, ctx)
            except TakeoverRequested:
                _take_over(ex, ctx)
            except Exception as exc:  # noqa: BLE001 - the one error path: the policy judges it
                t = time.monotonic()
                try:
                    _break_here(ex, ctx, "failed")
                finally:
                    ctx.waited += time.monotonic() - t  # time paused at a breakpoint is not the step's
                fastpath.failed_attempt(ex, ctx, exc)  # fastpath (issue 20): a failure gets its full evidence
                _on_failure(ex, ctx, exc)
    except (StopRequested, KeyboardInterrupt):
        ctx.status, ctx.error, ctx.error_kind = "stopped", "stopped by the user", "stopped"
        raise
    finally:
        record(ex, ctx)
    return ctx


def _run_phases(ex: Engine, ctx: StepContext) -> None:
    run = ctx.run
    for name, fn in PHASE_FUNCTIONS:
        if ctx.status:
            return  # finished early (an optional step whose target is absent)
        if name == "resolve" and (not needs_target(ctx.step)  # type: ignore[arg-type]
                                  or ex.plugins.decide(SkipResolve(ctx))):  # e.g. a skill's bare key (K6)
            continue
        t = time.monotonic()
        try:
            _break_here(ex, ctx, name)  # a breakpoint pauses here too
            ex.control.pause_point(run.run_id, run.flow.name, ctx.index, name)
        finally:
            ctx.waited += time.monotonic() - t  # time paused is not the step's time
        ex.emit(PhaseChanged(run.run_id, run.flow.name, ctx.index, name))  # type: ignore[arg-type]
        t0 = time.perf_counter()
        try:
            fn(ex, ctx)
        finally:
            ctx.phase_ms[name] = (time.perf_counter() - t0) * 1000.0


def _break_here(ex: Engine, ctx: StepContext, phase: str) -> None:
    """Pause through the run control's ``break_here`` when a plugin says a breakpoint fires before ``phase``
    (or ``"failed"``); ``break_here`` blocks like a pause and may raise ``StopRequested`` / ``TakeoverRequested``."""
    pause = getattr(ex.control, "break_here", None)
    if pause is None:
        return
    reason = ex.plugins.decide(BreakpointHit(ctx, phase))
    if reason:
        pause(ctx.run.run_id, ctx.run.flow.name, ctx.index, "breakpoint: " + reason)


def _on_failure(ex: Engine, ctx: StepContext, exc: Exception) -> None:
    """Judge a failed attempt: roll back and retry, retry, escalate (and act on the answer) or abort.

    The step's reversibility is the one known now (declared, or inferred
    from the writes its action caused, S6).  A reversible step with a
    checkpoint is rolled back before it is retried (R3); a popup over the
    page is dismissed first (failure kind 14).  Where the policy would
    escalate a failed assertion, the step is recorded ``failed`` instead and
    the flow ends without asking anyone: the app misbehaved, and a batch goes
    on with its next flow in the studio as on the command line.
    """
    if isinstance(exc, PageError):  # a broken, stuck or still-loading page: a human decides (never a hang)
        exc = StepFailure(Failure("page", str(exc), acted=ctx.acted), escalation="page")
    handled = ex.plugins.decide(AttemptFailed(ctx, exc))  # e.g. a skill's action did not pass: decide again (K6)
    if handled is not None:
        ctx.status, ctx.error = handled.status, handled.error
        return
    if not isinstance(exc, StepFailure):
        ctx.status, ctx.error_kind, ctx.error = "error", *fatal_kind(exc)
        return
    ex.plugins.notify(FailureSeen(ctx, exc))  # e.g. K2: one failure record per failed step (best effort)
    f, step = exc.failure, ctx.step
    if ctx.verdict is None and exc.verdict is None and f.kind not in ("abstained", "breaker_open", "no_decision",
                                                                        "budget"):
        ctx.verdict = Verdict("failed", expected_delta(step) if step else "any", (), f.reason)
    if f.acted:
        _infer_writes(ex, ctx)
        _confirm_writes(ex, ctx)
    reversible = ctx.effective_reversible if step is not None else True
    if f.kind != "breaker_open":  # an attempt the open breaker refused is not a failure of the page (R4)
        ex.breaker.record_failure(f.reason, risk=risk_of(replace(step, reversible=reversible) if step else _flow_step(ctx)), index=ctx.index,
                                  step_title=ctx.title, attempt=ctx.attempt)
        ex.emit_breaker(ctx.run.run_id)
    # an attempt that did not act wrote nothing: even an irreversible step may try again (S6 forbids only
    # doing a write twice)
    max_attempts = 1 + (ex.settings.waits.retries if reversible or not f.acted else 0)
    cp = ctx.cp  # this attempt's: a failure before the checkpoint phase has none
    # an abstention counts only dialogs the step does not expect (its target may be behind one, kind 14)
    popup = _popup_open(ctx) if f.kind != "abstained" else (
        ctx.before is not None and len(ctx.before.modal_titles) > _dialogs_expected(ctx))
    rec = decide_recovery(f, reversible=reversible, attempts=ctx.attempt, max_attempts=max_attempts,
                          breaker_state=ex.breaker.state, can_roll_back=cp is not None or popup, popup=popup)
    rec = no_repeat(ex, ctx, rec, reverify=lambda: verify(ex, ctx), roll_back=lambda: (  # issue 19
        _roll_back(ex, ctx, cp, popup=popup), ctx.run.checkpoints[-1].step_state == "rolled_back"))
    if ctx.status:
        return  # verified again as the page stands, without acting: done with the effect it had
    reversible = ctx.effective_reversible
    if rec.kind == "escalate" and f.acted and not reversible:
        rec = replace(rec, reason=rec.reason + writes_said(ctx))  # what the server said to its write (S6)
    if rec.kind == "roll_back":
        why = _roll_back(ex, ctx, cp, popup=popup)
        if why:  # a popup that would not close: a retry would meet it again
            rec = replace(rec, kind="escalate", reason=f"{f.reason}; {why}")
        else:
            time.sleep(ex.settings.waits.retry_delay_ms / 1000.0)
            return
    if rec.kind == "retry":
        time.sleep(ex.settings.waits.retry_delay_ms / 1000.0)
        return
    if f.kind == "assertion" or ctx.refused:  # the app misbehaved or said no (4xx, nothing kept): the flow fails
        ctx.status, ctx.error, ctx.error_kind = "failed", rec.reason, "refused" if ctx.refused else "assertion"
        return
    kind: EscalationKind = "irreversible" if f.acted and not reversible else exc.escalation
    reason, answers, breaker = rec.reason, human_answers(
        f, reversible=reversible, compensations=bool(step and step.compensations)), None
    if ex.breaker.state == "open":  # R4: say which failures opened it, what was done, when it half-opens
        breaker = ex.breaker.context()
        opened = describe_open(breaker, tuple(ctx.run.side_effects))
        # the failures it lists include this one; an irreversible step's abort is said first (S6)
        reason = f"{rec.reason}; {opened}" if f.acted and not reversible else opened
        kind = "irreversible" if kind == "irreversible" else "breaker_open"
        if breaker.failed_probes >= ex.settings.breaker.max_failed_probes:  # every loop has a limit
            answers = tuple(a for a in answers if a != "retry")
    answer = _escalate(ex, ctx, reason, kind, answers, breaker)
    _apply_answer(ex, ctx, answer, reason, failed=f.kind == "assertion",
                  budget=f.kind == "budget")


def _flow_step(ctx: StepContext) -> Step | None:
    steps = ctx.run.flow.steps
    return steps[ctx.index] if 0 <= ctx.index < len(steps) else None


def _popup_open(ctx: StepContext) -> bool:
    """A dialog is open now that was not before the step (or, before acting, one covers the page)."""
    obs = ctx.after or ctx.before
    if obs is None:
        return False
    if ctx.after is not None and ctx.before is not None:
        return len(ctx.after.modal_titles) > len(ctx.before.modal_titles)
    cand = ctx.candidate
    if cand is not None and cand.covered:
        return True
    return ctx.popup or (bool(obs.modal_titles) and (cand is None or not cand.enabled))


def _roll_back(ex: Engine, ctx: StepContext, cp: Checkpoint | None, *, popup: bool) -> str:
    """Roll back to the checkpoint (R3), or only dismiss the popup when there is none; "" when done."""
    run, step = ctx.run, ctx.step
    assert step is not None

    def look() -> Observation:
        return ex.driver.observe(screenshot=False)

    def bind(s: Step) -> Step:
        return bind_step(s, run.params, where=ctx.where)

    box = ctx.candidate.descriptor.bbox if ctx.candidate is not None else None
    point = (box.x + box.width / 2, box.y + box.height / 2) if box is not None else None
    if cp is None or popup:
        # an approved skill answers the popup in the way first (issue 25 item 1), whenever it came: before the
        # step's look, during its action (a banner on a timer) or as its effect; the checkpoint's rollback
        # then meets a page without it
        cleared = ex.plugins.decide(ClearPopup(ctx, "after_action" if ctx.acted else "covered", point,
                                               _dialogs_expected(ctx)))
        if cleared is not None and cleared.ok and cp is None:
            return ""  # the step again
    if cp is None:
        done = dismiss_popups(ex.driver, keep=_dialogs_expected(ctx), point=point, observe=look)
        if not done:
            return ""  # nothing in the way after all: a plain retry
        why = popup_problem(done)  # the choice a popup asks for, or "could not be dismissed"; "" when cleared
        ex.emit(Recovered(run.run_id, run.flow.name, ctx.index, "dismiss", not why, ex.redact("; ".join(done))))
        return why
    cp_obs = ctx.before
    result = roll_back(ex.driver, cp, step, cp_obs=cp_obs, params=run.params, observe=look, bind=bind)
    run.checkpoints[-1] = replace(cp, step_state="rolled_back" if result.ok else "failed")
    ex.emit(Recovered(run.run_id, run.flow.name, ctx.index, "rollback", result.ok,
                      ex.redact("; ".join(result.done + [result.reason]))))
    # a reversible step is retried even when the page could not be brought all the way back (it wrote
    # nothing; the locator finds its target by meaning again) - unless a popup would not close
    return popup_problem(result.done) if NOT_CLOSED in result.done else ""


def _dialogs_expected(ctx: StepContext) -> int:
    """How many of the open dialogs the step expects (the one its target was recorded in, and its parents)."""
    from core.act.after import same_text

    obs, step = ctx.before, ctx.step
    if obs is None or step is None:
        return 0
    box = step.target.container
    for i in range(len(obs.modal_titles) - 1, -1, -1):
        if box and same_text(box, obs.modal_titles[i]):
            return i + 1
    prev = ctx.run.flow.steps[ctx.index - 1] if 0 < ctx.index <= len(ctx.run.flow.steps) else None
    after = prev.recorded.after if prev is not None and prev.recorded is not None else None
    if after is not None and after.dialog:
        return min(1, len(obs.modal_titles))
    return 0


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


def _escalate(ex: Engine, ctx: StepContext, reason: str, kind: EscalationKind,
              answers: tuple[EscalationAnswerKind, ...], breaker: BreakerContext | None = None) -> Answer:
    run = ctx.run
    run.refresh_side_effects()
    offer = ex.plugins.decide(EscalationOffer(ctx, reason, kind, answers, breaker))
    if offer is not None:  # candidates with role and confirm, a plain sentence (core.engine.chosen)
        top, answers, plain = offer.candidates, offer.answers, offer.plain
    else:
        top = tuple(EscalationCandidate(s.ref, s.label, s.score, None) for s in
                    (ctx.resolution.top if ctx.resolution else ()))
        plain = ex.redact(reason)
    event = EscalationRaised(run.run_id, run.flow.name, ctx.index, ctx.title, reason, top, tuple(run.side_effects),
                             kind, answers, breaker, plain)
    ctx.escalation_kind = kind
    ex.store_call("record_escalation", run.run_id, event)
    ex.emit(event)
    proposing = hasattr(ex.control, "on_propose")  # ProposeHeal commands while it waits (a plugin answers)
    if proposing:
        ex.control.on_propose = lambda cmd: ex.plugins.decide(HealProposal(ctx, cmd))  # type: ignore[attr-defined]
    t = time.monotonic()
    try:
        answer = ex.ask_human(event)
    finally:
        ctx.waited += time.monotonic() - t  # waiting for a human is not the step's time
        if proposing:
            ex.control.on_propose = None  # type: ignore[attr-defined]
    if answer.kind == "use_candidate" and ex.plugins.decide(EscalationAnswered(ctx, event, answer)) is not True:
        return Answer("stop")  # never act on a choice that is unknown or needed a confirmation it did not get
    return answer if answer.kind in answers else Answer("stop")


def _apply_answer(ex: Engine, ctx: StepContext, answer: Answer, reason: str, *, failed: bool,
                  budget: bool = False) -> None:
    if answer.kind == "compensate":
        _compensate(ex, ctx, reason)
        return
    if answer.kind in ("retry", "use_candidate"):  # a human's retry (or chosen target): the open breaker's one probe (R4), one more try past P8
        ex.breaker.half_open()
        ex.loops.grant_once()
        ex.stagnation.grant_once()
        ex.emit_breaker(ctx.run.run_id)
        return
    if answer.kind == "skip":
        ctx.status, ctx.error = "skipped", f"skipped by the user: {reason}"
        return
    if answer.kind == "take_over":
        _take_over(ex, ctx, reason)
        return
    # an assertion that does not hold is a failed flow (the app misbehaved); anything else the
    # engine could not do on its own is an escalation
    ctx.status, ctx.error = ("failed" if failed else "escalated"), reason
    ctx.error_kind = "assertion" if failed else ("budget" if budget else "escalated")


def _compensate(ex: Engine, ctx: StepContext, reason: str) -> None:
    """A person approved running an irreversible step's compensations (R3): run them, end the flow.

    The step is recorded ``escalated`` either way - the run does not go on
    by itself after a write was undone - with what the compensations did.
    """
    run, step = ctx.run, ctx.step
    assert step is not None
    try:
        done = run_compensations(ex.driver, step, params=run.params, observe=lambda: ex.driver.observe(screenshot=False),
                                 bind=lambda s: bind_step(s, run.params, where=ctx.where))
        what = "compensated by approval: " + "; ".join(done)
    except ActionError as exc:
        what = f"compensation failed: {exc}"
    ex.emit(Recovered(run.run_id, run.flow.name, ctx.index, "compensate", what.startswith("compensated"),
                      ex.redact(what)))
    if run.checkpoints and run.checkpoints[-1].index == ctx.index:
        run.checkpoints[-1] = replace(run.checkpoints[-1], step_state="rolled_back" if what.startswith(
            "compensated") else "failed")
    ctx.status, ctx.error, ctx.error_kind = "escalated", f"{reason}; {what}", "escalated"


def _take_over(ex: Engine, ctx: StepContext, reason: str = "") -> None:
    """A human has the page: wait for the hand-back, then go on from the step they name.

    When this step's action was already performed and the step is
    irreversible, "the same step again" goes on with the next step instead:
    it may have written data, and is never done twice (S6).
    """
    run = ctx.run
    ex.emit(TakeoverStarted(run.run_id, run.flow.name, ctx.index, ctx.acted))
    ex.plugins.notify(TakeoverBegins(ctx))  # e.g. the human's actions on this page, recorded as steps
    t = time.monotonic()
    try:
        back = ex.control.take_over(run.run_id, run.flow.name, ctx.index)
    finally:
        ctx.waited += time.monotonic() - t  # the human's time on the page is not the engine's
        manual = ex.plugins.decide(TakeoverEnds(ctx))  # what the person did (``steps``), None: nothing known
    if back.kind == "stop":
        ctx.status, ctx.error_kind = "escalated", "escalated"
        ctx.error = "the takeover ended without a hand-back" + (f": {back.reason}" if back.reason else "")
        return
    target = continue_target(back.meaning, ctx.index, back.continue_from)
    if not 0 <= target <= len(run.flow.steps):
        target = ctx.index
    nothing_done = (manual is None or not getattr(manual, "steps", ())) and _page_unchanged(ex, ctx)
    nothing_done = nothing_done and target > ctx.index and not (
        ctx.acted and ctx.step is not None and ctx.step.reversible is False)
    if nothing_done and back.continue_from is not None:
        # the person chose where to go on, having done nothing: the step is skipped by hand, and said so
        ex.emit(HandedBack(run.run_id, run.flow.name, target, back.meaning or ""))
        ex.plugins.notify(TakeoverHandedBack(ctx, back.meaning, target, reason))  # e.g. kept as a correction
        run.by_hand.append(ctx.index)  # the person decided the step is not needed: a person acted
        ex.breaker.record_success()
        ex.loops.reset()
        ex.stagnation.reset()
        ex.emit_breaker(run.run_id)
        ctx.status, ctx.next_index = "skipped", target
        ctx.error = f"skipped by hand (nothing was done on the page); continued from step {target + 1}"
        return
    if nothing_done:
        # "done" / "replace" with no action on the page: nothing shows the step's work was done - never passed
        ex.emit(HandedBack(run.run_id, run.flow.name, ctx.index, back.meaning or ""))
        ex.plugins.notify(TakeoverHandedBack(ctx, back.meaning, ctx.index, reason))
        ctx.status, ctx.error_kind = "escalated", "escalated"
        ctx.error = (f"handed back as {back.meaning or 'done'} at step {ctx.index + 1}, but no action was recorded "
                     f"on the page: nothing shows the step's work was done (skip the step to go on without it)")
        return
    done_already = ctx.acted and ctx.step is not None and not ctx.step.reversible
    if target == ctx.index and done_already:
        target = ctx.index + 1
    ex.emit(HandedBack(run.run_id, run.flow.name, target, back.meaning or ""))
    ex.plugins.notify(TakeoverHandedBack(ctx, back.meaning, target, reason))
    run.by_hand.append(ctx.index)  # the run goes on from what a person did: it passes "with help" at best
    ex.breaker.record_success()  # the human left the page in a working state
    ex.loops.reset()
    ex.stagnation.reset()
    ex.emit_breaker(run.run_id)
    if target == ctx.index:
        return  # the same step again, on the page as the human left it
    why = "; its action had been performed and is not done again" if done_already else ""
    ctx.status, ctx.error, ctx.next_index = "manual", f"done by hand; continued from step {target + 1}{why}", target
    _keep_page_as_left(ex, ctx)


def _keep_page_as_left(ex: Engine, ctx: StepContext) -> None:
    """Store the page as the person left it as the step's after-observation (with its screenshot when the run
    keeps screenshots): a step done by hand has an after picture like any other.  Nothing when it cannot be seen."""
    try:
        obs = ex.driver.observe(screenshot=bool(getattr(ex, "screenshots", True)))
    except Exception:  # noqa: BLE001 - a page that cannot be observed: the step has no after picture, said nowhere
        return
    ex.store_call("record_observation", ctx.run.run_id, ctx.index, "after", obs)


def _page_unchanged(ex: Engine, ctx: StepContext) -> bool:
    """True when the page is in the same light state (S2 digest: URL, texts, elements, values) as when the step
    was observed before the takeover: nobody did anything on it.  False when it cannot be told."""
    seen = ctx.after or ctx.before
    if seen is None or seen.signature is None:
        return False
    try:
        now = ex.driver.observe(screenshot=False)
    except Exception:  # noqa: BLE001 - a page that cannot be observed: the hand-back decides
        return False
    return now.signature is not None and now.signature.digest == seen.signature.digest


def _side_effect(ctx: StepContext) -> bool:
    """True when the step wrote data the run must list (issue 9 item 3: the list is true).

    Only an irreversible step that acted and passed verification; when its
    write requests were watched, at least one must have succeeded (a
    watched step that sent no write wrote nothing).
    """
    if ctx.status != "passed" or ctx.step is None or not ctx.acted or ctx.effective_reversible:
        return False
    return not ctx.watched or any(w.succeeded is not False for w in ctx.writes)


def record(ex: Engine, ctx: StepContext) -> None:
    """Always: store the outcome and emit ``StepFinished`` (also after a crash or a stop)."""
    run = ctx.run
    ex.emit(PhaseChanged(run.run_id, run.flow.name, ctx.index, "record"))
    if not ctx.status:
        ctx.status, ctx.error_kind = "error", ctx.error_kind or "internal"
        ctx.error = ctx.error or "the step ended without a result"
    wall_ms = (time.monotonic() - ctx.t0) * 1000.0
    ms = max(0.0, wall_ms - ctx.waited * 1000.0)  # active time: paused and waiting for a human left out
    step_id = ctx.decided.id if ctx.decided else (run.flow.steps[ctx.index].id if ctx.index < len(run.flow.steps) else "")
    outcome = StepOutcome(ctx.index, step_id, ctx.title, ctx.status, ctx.resolution, ctx.verdict,  # type: ignore[arg-type]
                          ctx.attempt, ms, ex.redact(ctx.error), ctx.source, tuple(ctx.phase_ms.items()))
    run.outcomes.append(outcome)
    if ctx.status in ("failed", "escalated", "error", "stopped"):
        run.stop_kind = ctx.escalation_kind if ctx.status == "escalated" and ctx.escalation_kind else ctx.error_kind
    if _side_effect(ctx):
        run.effects.append((f"step {ctx.index + 1} '{ctx.title}' wrote data", list(ctx.writes), ctx.watched))
        run.refresh_side_effects()
    if run.checkpoints and run.checkpoints[-1].index == ctx.index:
        state = {"passed": "success", "manual": "success"}.get(ctx.status, "failed")
        # as the step ended: its reversibility as found (S6) and the data written so far, its own included
        # (what a resume reads: a step that wrote is never done again, core.engine.resume)
        run.checkpoints[-1] = replace(run.checkpoints[-1], step_state=state, side_effects=tuple(run.side_effects),
                                      reversible=ctx.effective_reversible if ctx.step is not None
                                      else run.checkpoints[-1].reversible)
        ex.store_call("record_checkpoint", run.run_id, run.checkpoints[-1])
    run.idle_from = time.monotonic()
    ex.store_call("record_step", run.run_id, outcome)
    # the state graph, evidence, failure capture's end of step (K2) (:mod:`core.engine.plugins`)
    ex.plugins.notify(StepRecorded(ctx, ms, wall_ms))
    # a heal is a passed step found by a level other than exact: never a step done by hand (the engine did not
    # act on what its locator proposed there)
    ex.emit(StepFinished(run.run_id, run.flow.name, ctx.index, ctx.status,
                         bool(ctx.resolution and ctx.resolution.healed and ctx.status == "passed"), ms, outcome.error,
                         outcome.phase_ms,
                         ctx.source))
