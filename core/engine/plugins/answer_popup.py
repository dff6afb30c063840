"""Skills consulted where failures happen (issue 25 item 1): a popup in the step's way is answered by an approved skill.

Before this, a skill was asked only before a step (the decide chain, :mod:`core.engine.skilled`).  A popup that
the step's own action opens - a field whose focus asks "Use your last entry?", a button whose click shows a
cookie notice, a form whose submit asks "Are you sure?" - was met only by the step's verification, which the
engine's close-only dismissal (:func:`core.recover.rollback.dismiss_popups`) could not clear when the popup
asks for a choice: the step escalated at every run, with the skill the person approved for that very popup.

:class:`AnswerPopupPlugin` answers hook :class:`~core.engine.hooks.ClearPopup`, which the kernel asks

* ``"after_action"``: the step's verification saw a dialog the recording did not show; the step's action is
  done and is never repeated - once the skill has answered, the verification looks at the page again;
* ``"covered"``: the pre-check found the step's target covered by a popup (or the locator did not find the
  target behind one); once answered the step is tried again (it has not acted).  A popup that opened after
  the flow's previous step acted (:func:`opened_by_previous_step`: that step's effect, seen late - its
  verification looked while the popup was still invisible) is answered as that step's verification would
  have answered it, even before an irreversible step: answering it is not acting in the step's place.  Any
  other popup over an irreversible step's target is answered only by a skill approved for exactly that step.

A popup still fading in (:func:`core.recover.motion.dialog_arriving`) is waited for first, within a bound, so
that the skill's trigger is judged on the popup as shown, not on a frame of its show animation.

Two kinds of approved skill may answer, in this order:

1. a skill of elements (its trigger names the popup's controls; learnt from a takeover): the skill decider
   (:class:`~core.skills.runtime.SkillDecider`) fires it on the page as it is now (its ``here`` mode: the flow
   step's own target being usable does not hold it back, since the step acted or its target is in the way),
   and each of its actions goes through the same safety as before a step - the locator finds its target, deny
   rules and the skill's live check (:func:`core.engine.skilled.after_resolve`), the live read just before
   acting with the look-alike check (:func:`core.engine.skilled.before_perform`) - then is performed, and what
   its last action cleared is looked at once quiet;
2. a skill of a popup kind (:mod:`core.skills.kinds`: "a consent banner: answer accept"): the popup over the
   page is read (:func:`core.skills.kinds.read_popups`), its kind told from its words and shape, look-alikes
   refused, and the one control whose meaning is the person's choice pressed; where the page does not say
   which control that is, the skill abstains and the person is asked.

Every use is recorded in the skill library (``record_use``) and announced (``SkillFired`` / ``SkillFinished``).
A skill that abstains or fails leaves the popup to the engine's close-only dismissal and, for a choice, to a
person.  Every loop has a limit: :data:`MAX_SKILL_ACTIONS` actions, :data:`MAX_POPUPS` popups, :data:`MAX_PRESSES` presses
of one control (a second only when the first showed no effect at all).
"""
from __future__ import annotations

import time
from typing import Any

from core.domain import Action
from core.domain.observation import StepOutcome
from core.engine.events import SkillFinished, SkillFired
from core.engine.hooks import Cleared, ClearPopup, Ports, hookimpl
from core.engine.skilled import after_resolve, before_perform, key_held, quiet_after
from core.engine.step import StepContext, StepFailure
from core.locate import resolve
from core.perception.driver import ActionError
from core.perception.pagefacts import overlays
from core.plan.decider import DecideContext
from core.project.params import ParameterError, bind_step
from core.recover.motion import wait_dialog_arriving
from core.recover.rollback import QUIET_MS, wait_gone
from core.skills import kinds
from core.skills.runtime import SkillDecider, is_skill_step

__all__ = ["AnswerPopupPlugin", "MAX_SKILL_ACTIONS", "MAX_POPUPS", "MAX_PRESSES"]

#: At most this many skill actions are done for one popup in the way (a skill's own ``step_limit`` is smaller).
MAX_SKILL_ACTIONS = 8
#: At most this many stacked popups are answered by kind skills at one point of a step.
MAX_POPUPS = 3
#: At most this many presses of a popup's control by a kind skill: a second only when the first showed no effect
#: at all (no request, the popup unchanged) - tarteaucitronjs 1.34 wires its buttons ~200-400 ms after showing them.
MAX_PRESSES = 2


def _decider(ports: Ports) -> SkillDecider | None:
    d = ports.decider("skill")
    return d if isinstance(d, SkillDecider) else None


def _look(ports: Ports) -> Any:
    return ports.driver.observe(screenshot=False)


def element_skill(ports: Ports, ctx: StepContext, where: str) -> Cleared | None:
    """An approved skill of elements answers the popup in the step's way (see the module doc); None when none
    fires.  ``Cleared.ok`` is True when the skill passed (its actions done, its verify rules holding)."""
    dec = _decider(ports)
    run = ctx.run
    if dec is None or not 0 <= ctx.index < len(run.flow.steps):
        return None
    obs = _look(ports)
    history = tuple(run.outcomes)
    skill_id = ""
    dec.here = "after_previous" if where == "covered" and opened_by_previous_step(ctx, obs) else where
    try:
        decision = dec.decide(DecideContext(run.flow, ctx.index, obs, history, run.params, attempt=ctx.attempt,
                                            run_id=run.run_id))
        for _ in range(MAX_SKILL_ACTIONS):
            if decision is None or decision.source != "skill" or not is_skill_step(decision.step):
                break
            skill_id = skill_id or decision.step.id.rsplit("+", 1)[-1].rsplit(".", 1)[0]
            failed, why = _do(ports, ctx, decision.step, obs)
            outcome = StepOutcome(ctx.index, decision.step.id, decision.step.title, "skipped" if failed else "passed",
                                  None, None, 1, 0.0, why, "skill", ())
            if failed:  # the skill's recovery rule may retry (it did not act) or skip; else the skill ends
                ended = dec.action_failed(decision.step.id, failed, why, acted=False)  # _do fails before acting
                if ended is None or ended[0] not in ("retry", "skip"):
                    break
            obs = _look(ports)
            history = history + (outcome,)
            decision = dec.decide(DecideContext(run.flow, ctx.index, obs, history, run.params,
                                                attempt=ctx.attempt, run_id=run.run_id))
    finally:
        dec.here = ""
    if not skill_id:
        return None
    ended = dec.outcome_at(ctx.index, skill_id) or "failed"
    where_said = "after the step's action" if where == "after_action" else "over the step's target"
    return Cleared(ended == "passed", ports.redact(f"skill {skill_id} answered the popup {where_said}: {ended}"))


def opened_by_previous_step(ctx: StepContext, obs: Any) -> bool:
    """Whether a dialog open now (``obs.modal_titles``) was not open before the flow's previous step acted: the
    step just before this one (index - 1) passed, and the dialogs of its checkpoint (taken right before its
    action) lack one of those open now (compared by title, each counted once).  Such a popup is that step's effect seen late (its verification looked while it was not
    shown yet, or had no after-state to compare) - or something that came after it, which its verification
    would have met just the same."""
    run = ctx.run
    prev = next((cp for cp in reversed(run.checkpoints) if cp.index < ctx.index), None)
    if prev is None or prev.index != ctx.index - 1:
        return False
    done = next((o for o in reversed(run.outcomes) if o.index == prev.index and o.step_id == prev.step_id), None)
    if done is None or done.status != "passed":
        return False
    left = list(prev.modal_titles)
    for title in getattr(obs, "modal_titles", ()) or ():
        if title in left:
            left.remove(title)
        else:
            return True
    return False


def _do(ports: Ports, ctx: StepContext, decided: Any, obs: Any) -> tuple[str, str]:
    """One skill action on the page as it is: ``("", "")`` when done, else (the engine's failure kind -
    ``abstained`` not found, ``precondition`` / ``failed`` refused, ``action_error`` -, why).  The same checks as
    the action run as a step: target found by the locator, deny rules and the skill's live check, the live read
    and look-alike check just before acting."""
    run = ctx.run
    try:
        step = bind_step(decided, run.params, where=ctx.where)
    except ParameterError as exc:
        return "precondition", str(exc)
    sub = StepContext(run, ctx.index, attempt=ctx.attempt, decided=decided, step=step, source="skill",
                      value=step.action.value, before=obs)
    dec = _decider(ports)
    assert dec is not None
    cand = None
    if not step.target.is_empty:
        res = resolve(step.target, obs.candidates, config=dec.locator, irreversible=not step.reversible,
                      anchors=obs.anchors)
        cand = next((c for c in obs.candidates if c.ref == res.ref), None) if res.ref and not res.abstained else None
        if cand is None:
            return "abstained", f"its target was not found ({res.reason})"
        _res, cand, held = after_resolve(ports, sub, res, cand)
        if held is not None:
            return ("precondition" if isinstance(held, StepFailure) and held.failure.kind == "precondition"
                    else "failed"), str(getattr(getattr(held, "failure", None), "reason", held))
        sub.candidate = cand
    elif step.action.kind != "press":
        return "failed", "a skill action without a target that is not a key"
    try:
        armed = before_perform(ports, sub)
    except StepFailure as failure:
        return ("precondition" if failure.failure.kind == "precondition" else "failed"), failure.failure.reason
    last = dec.last_action(decided.id)
    count = len(overlays(ports.driver) or ()) if last else 0
    try:
        ports.driver.perform(step.action, cand.ref if cand is not None else None, step.action.value)
    except ActionError as exc:
        if armed:
            try:
                key_held(ports, sub)  # disarm the page's key guard
            except StepFailure:
                pass  # held back: the action failed all the same
        return "action_error", f"the action failed: {exc}"
    if armed:
        try:
            key_held(ports, sub)  # the key guard held the key back as it arrived: focus had moved
        except StepFailure as failure:
            return "precondition", failure.failure.reason
    ports.driver.wait_settled()
    if count:
        quiet_after(ports, (count, decided.id))
    return "", ""


def kind_skill(ports: Ports, ctx: StepContext, where: str, point: tuple[float, float] | None, keep: int
               ) -> Cleared | None:
    """An approved skill of a popup kind answers the popups in the step's way, topmost first (at most
    :data:`MAX_POPUPS`); None when no such skill applies (no popup of a kind a skill knows)."""
    skills = kinds.approved_kind_skills(ports.store, ports.project_name)
    if not skills:
        return None
    run = ctx.run
    done: list[str] = []
    for _ in range(MAX_POPUPS):
        popups = kinds.read_popups(ports.driver, point)
        if popups is None or len(popups) <= keep:
            break
        top = popups[-1]
        pick = kinds.answer(skills, top)
        if pick is None:
            break  # a popup of no kind an approved skill knows: the engine's close-only rule
        skill, control, reason = pick
        t0 = time.monotonic()
        if control is None:  # the skill applies but abstains: which button is the person's choice is not said
            _used(ports, ctx, skill, "precondition", reason, t0)
            return Cleared(False, ports.redact(f"skill {skill.id} did not answer: {reason}")) if not done else \
                Cleared(False, ports.redact("; ".join(done + [reason])))
        ports.emit(SkillFired(run.run_id, run.flow.name, ctx.index, skill.id, ports.redact(skill.description), 0, 1))
        failed, again = "", ""
        for press in range(MAX_PRESSES):
            matches = ports.driver.refs_for_selector(f'[{kinds.KEY_ATTR}="{control["key"]}"]')
            if len(matches) != 1:
                failed = "the control was not found again"
                break
            t_click = time.monotonic()
            try:
                ports.driver.perform(Action("click"), matches[0].ref, "")
            except ActionError as exc:
                failed = f"the click failed: {exc}"
                break
            ports.driver.wait_settled()
            after = wait_gone(ports.driver, point, len(popups), limit_ms=QUIET_MS)
            if after is None or len(after) < len(popups):
                failed = ""
                break
            failed = f"{reason}; the popup did not close"
            if press + 1 < MAX_PRESSES and not _press_had_effect(ports, t_click, top, point):
                # the popup is exactly as before and the page sent nothing: the press did nothing (a library
                # that wires its buttons a few hundred ms after showing them) - pressing again repeats nothing
                again = "; pressed again: the first press had no effect"
                continue
            break
        if failed:
            _used(ports, ctx, skill, "failed", failed + again, t0)
            break
        reason += again
        _used(ports, ctx, skill, "passed", reason, t0)
        done.append(f"skill {skill.id}: {reason}")
    if not done:
        return None
    _look(ports)  # refresh the driver's refs for what follows
    return Cleared(True, ports.redact("; ".join(done)))


def _press_had_effect(ports: Ports, since: float, top: dict[str, Any], point: tuple[float, float] | None) -> bool:
    """Whether a press on a popup's control showed any effect (an effect seen is an effect done): a request the
    page sent since ``since`` (``time.monotonic`` s; beacons aside), or the topmost popup no longer the same
    (its name or its controls changed, or it cannot be read).  True when unsure."""
    from core.act.writes import is_beacon
    from core.perception.netwatch import NetworkWatch

    watch = NetworkWatch.of(ports.driver)
    if watch is None:
        return True
    try:
        if any(not is_beacon(r) for r in watch.between(since)):
            return True
    except Exception:  # noqa: BLE001 - a page that does not answer: unsure
        return True
    now = kinds.read_popups(ports.driver, point)
    if not now:
        return True

    def shape(p: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
        return str(p.get("name") or ""), tuple(str(c.get("name") or "") for c in p.get("controls") or ())

    return shape(now[-1]) != shape(top)


def _used(ports: Ports, ctx: StepContext, skill: Any, outcome: str, reason: str, t0: float) -> None:
    """Record one use of a kind skill (quality moves as for any skill, K7) and announce its end."""
    run = ctx.run
    ms = (time.monotonic() - t0) * 1000.0
    kinds.record_use(ports.store, skill, run_id=run.run_id, flow=run.flow.name, index=ctx.index,
                     step_id=run.flow.steps[ctx.index].id if 0 <= ctx.index < len(run.flow.steps) else "",
                     outcome=outcome, reason=reason, ms=ms, errors=ports.store_errors)
    ports.emit(SkillFinished(run.run_id, run.flow.name, ctx.index, skill.id, outcome, ports.redact(reason),
                             round(ms, 1)))


class AnswerPopupPlugin:
    """Answers :class:`~core.engine.hooks.ClearPopup` with an approved skill (see the module doc).

    Parameters
    ----------
    ports : Ports
        Uses ``driver``, ``store``, ``project_name``, ``decider("skill")``, ``emit`` and ``redact``.
    """

    def __init__(self, ports: Ports) -> None:
        self.ports = ports

    @hookimpl
    def clear_popup(self, p: ClearPopup) -> Cleared | None:
        if p.step.source == "skill":
            return None  # a skill's own action met a popup: the skill ends, the chain decides again
        # a popup still fading in is answered once it is shown (bounded: core.recover.motion), not on a frame
        # of its animation where its buttons are not there yet for the skill's trigger
        wait_dialog_arriving(self.ports.driver)
        found = element_skill(self.ports, p.step, p.where)
        if found is not None and found.ok:
            return found
        kind = kind_skill(self.ports, p.step, p.where, p.point, p.keep)
        return kind if kind is not None else found


