"""Skills as a plugin of the step kernel (K6): the skill decider's events, its hooks, its CLI line.

:class:`~core.skills.runtime.SkillDecider` decides; this module joins it to
the engine (:class:`SkillsPlugin`, registered by the executor; the decider is
the chain's ``"skill"``, reached through ``Ports.decider``):

* :func:`skill_decider` builds it for a project whose store holds approved
  skills, its ``notify`` turned into :class:`SkillConsidered` /
  :class:`SkillFired` / :class:`SkillFinished` events (texts redacted);
* :func:`after_resolve` (hook ``hold_target``, any decider): a target a deny
  rule forbids is not acted on - the attempt abstains with the rule's
  reason; a skill action's target must pass the skill's live safety check
  (:meth:`~core.skills.runtime.SkillDecider.check_resolved`);
* :func:`targetless_key` (hook ``skip_resolve``): a skill's key pressed with no
  target (Escape, Tab, an arrow) skips the locator;
* :func:`before_perform` (hook ``refuse_action``, just before the driver acts): the
  element's texts are read live (``aria-description``, the texts it is
  described by, its labels...) and go through the guard again; a key is
  pressed only where it lands on the named target (focused first, then the
  focused element must be the target), and a targetless arrow key never
  where it would change the focused control's value;
* :func:`fell_back` (hook ``attempt_failed``): a skill action that did not pass
  ends the skill and the step is recorded ``skipped`` with its reason; the
  run stays at the same index, where the flow step (then the model, then a
  person) decides - a skill's failure never escalates by itself;
* :func:`skill_line`: the one line the command line prints per use.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Iterable

from core.domain import Candidate, Resolution
from core.engine.events import EngineEvent, SkillConsidered, SkillFinished, SkillFired
from core.engine.hooks import (
    AttemptFailed, Handled, Held, HoldTarget, Ports, RefuseAction, SkipResolve, TakeObservation, hookimpl,
)
from core.engine.step import StepContext, StepFailure
from core.perception.pagefacts import overlays
from core.recover.policy import Failure
from core.recover.rollback import QUIET_MS, wait_gone
from core.skills.runtime import ARROW_CHANGES, SkillDecider, is_skill_step

__all__ = ["SkillsPlugin", "skill_decider", "after_resolve", "fell_back", "skill_line", "targetless_key",
           "before_perform", "key_held", "LIVE_TEXTS", "KEY_HELD", "popups_before", "quiet_after"]

#: Read on the element a skill acts on, just before acting (main frame): its texts the observation does not
#: carry (ARIA label, description and the texts it is labelled / described by, its labels, title, visible text,
#: value - never a password's), the popup around it (its dialog or fixed layer: ``{"text", "payment"}``, at most
#: 1,500 chars, for the look-alike check) and, with ``focus``, where focus is after focusing it.  With ``arm``
#: (``{"key", "tags", "roles", "types"}``), the page library's key guard is armed in this same page task: the
#: key about to be pressed is checked again as it arrives (``armKey`` in ``core/perception/page_lib.js``), on
#: the element (index >= 0) or by the rule of :data:`core.skills.runtime.ARROW_CHANGES` (index -1).
#: ``[index, focus, arm]``; index -1 reads only the focused element.  Returns ``{"texts": {...}, "focused":
#: {...} | null, "region": {...} | null, "armed": bool}`` or null.
LIVE_TEXTS = """([i, focus, arm]) => {
  const lib = window.__steadyhand; const e = i >= 0 && lib ? lib.ref(i) : null;
  if (i >= 0 && !e) return null;
  const clean = (t) => (t || '').replace(/\\s+/g, ' ').trim().slice(0, 200);
  const ids = (a) => clean((e.getAttribute(a) || '').split(/\\s+/).map((id) => {
    const n = id && document.getElementById(id); return n ? n.textContent : ''; }).join(' '));
  let texts = {};
  if (e) {
    const tag = e.tagName.toLowerCase();
    texts = {'aria-label': clean(e.getAttribute('aria-label')), 'labelled by': ids('aria-labelledby'),
      'aria-description': clean(e.getAttribute('aria-description')), 'described by': ids('aria-describedby'),
      'title': clean(e.getAttribute('title')), 'alt': clean(e.getAttribute('alt')),
      'placeholder': clean(e.getAttribute('placeholder')),
      'labels': clean(Array.from(e.labels || []).map((l) => l.textContent).join(' ')),
      'text': tag === 'select' ? '' : clean(e.innerText || e.textContent),
      'value': tag === 'select' ? (e.selectedIndex >= 0 ? clean(e.options[e.selectedIndex].text) : '')
        : (e.type === 'password' || typeof e.value !== 'string') ? '' : clean(e.value)};
  }
  // the popup around the element (a dialog, else its outermost fixed-position layer): a look-alike check reads it
  let region = null;
  if (e) {
    let pop = e.closest('dialog,[role=dialog],[role=alertdialog],[aria-modal=true]');
    if (!pop) for (let n = e.parentElement; n && n !== document.body; n = n.parentElement)
      if (getComputedStyle(n).position === 'fixed') pop = n;
    if (pop) region = {text: (pop.innerText || pop.textContent || '').replace(/\\s+/g, ' ').trim().slice(0, 1500),
      payment: !!pop.querySelector('input[autocomplete^="cc-"],input[name*="card" i],input[id*="card" i],'
        + 'input[name*="cvc" i],input[name*="cvv" i],input[id*="cvc" i],input[id*="cvv" i]')};
  }
  let focused = null;
  if (focus || !e) {
    if (e) e.focus();
    let f = document.activeElement;
    while (f && f.shadowRoot && f.shadowRoot.activeElement) f = f.shadowRoot.activeElement;
    focused = {is_target: !!e && f === e, tag: f ? f.tagName.toLowerCase() : '',
      role: f && f.getAttribute ? (f.getAttribute('role') || '') : '', type: f && f.getAttribute ? (f.getAttribute('type') || '') : ''};
  }
  let armed = false;
  if (arm && lib && typeof lib.armKey === 'function') { lib.armKey(Object.assign({}, arm, {target: e})); armed = true; }
  return {texts, focused, region, armed};
}"""

#: What became of the key the guard was armed for (:data:`LIVE_TEXTS`), and disarm: ``{"seen": bool, "held":
#: {"is_target", "tag", "role", "type"} | null}`` (``held``: the key was held back, where it would have landed).
KEY_HELD = "() => { const lib = window.__steadyhand; return lib && lib.keyHeld ? lib.keyHeld() : null; }"


def skill_decider(store: Any, product: str, emit: Callable[[EngineEvent], None], *,
                  redact: Callable[[str], str] = lambda t: t, settings: Any = None, locator: Any = None,
                  secrets: Iterable[str] = ()) -> SkillDecider | None:
    """The skill decider of ``product`` when its store holds approved skills, else None.

    ``emit`` receives the use events (reasons passed through ``redact``);
    ``locator`` is the engine's locator settings (the flow step's own target
    is resolved with them), ``secrets`` the project's secret parameter names.
    A store that cannot be read gives None (the run goes on without skills).
    """
    if store is None:
        return None
    from core.store.skills import SkillTable

    table = SkillTable(store)
    try:
        if not table.list(product=product, state="approved"):
            return None
    except Exception:  # noqa: BLE001 - an unreadable library: no skills this run
        return None

    def notify(kind: str, **f: Any) -> None:
        if kind == "considered":
            emit(SkillConsidered(f["run_id"], f["flow"], f["index"], f["skill_id"], f["holds"], f["half"],
                                 redact(f["reason"])))
        elif kind == "fired":
            emit(SkillFired(f["run_id"], f["flow"], f["index"], f["skill_id"], redact(f["description"]),
                            f["action_index"], f["actions"]))
        elif kind == "finished":
            emit(SkillFinished(f["run_id"], f["flow"], f["index"], f["skill_id"], f["outcome"], redact(f["reason"]),
                               f["ms"]))

    return SkillDecider(table, product, settings, notify=notify, locator=locator, secrets=secrets)


def _decider(ex: Ports) -> SkillDecider | None:
    d = ex.decider("skill")
    return d if isinstance(d, SkillDecider) else None


def after_resolve(ex: Ports, ctx: StepContext, resolution: Resolution, cand: Candidate | None
                  ) -> tuple[Resolution, Candidate | None, Exception | None]:
    """After the locator found ``cand``: deny rules (whatever decided), then a skill action's live safety check.

    Returns the resolution and candidate to record, and the failure the
    pipeline raises once they are recorded (None: go on).  A held-back
    element leaves the resolution abstained (``ref`` None, the reason
    appended) and no candidate; the failure is ``abstained`` (a retry would
    meet the same rule: a person is asked at once) escalated as
    ``precondition`` ("found but cannot be used now: denied by skill ..."),
    so no use-once choice of that element is offered.  For a skill action
    the skill gives up instead and the chain decides again
    (:func:`fell_back`).
    """
    dec, obs, step = _decider(ex), ctx.before, ctx.step
    if dec is None or cand is None or obs is None or step is None or resolution.abstained:
        return resolution, cand, None
    run = ctx.run
    flow_step = run.flow.steps[ctx.index] if 0 <= ctx.index < len(run.flow.steps) else None
    denied = dec.denied(cand, obs, index=ctx.index, flow_step=flow_step, params=run.params,
                        step_id=ctx.decided.id if ctx.decided is not None else "")
    reason = denied[1] if denied is not None else ""
    if not reason and ctx.source == "skill" and ctx.decided is not None and is_skill_step(ctx.decided):
        reason = dec.check_resolved(ctx.decided.id, step.action.kind, cand, step.target, obs, run.params,
                                    value=ctx.value)[1]
    if not reason:
        return resolution, cand, None
    reason = ex.redact(reason)
    held = replace(resolution, ref=None, abstained=True, reason=f"{resolution.reason}; {reason}")
    return held, None, StepFailure(Failure("abstained", reason), escalation="precondition")


def targetless_key(ctx: StepContext) -> bool:
    """True for a skill's key pressed with no target: the locator is skipped, the key goes to the page
    (only Escape, Tab and arrows pass the skill's safety bar, :data:`core.skills.runtime.TARGETLESS_KEYS`)."""
    step = ctx.step
    return (ctx.source == "skill" and is_skill_step(ctx.decided) and step is not None
            and step.action.kind == "press" and step.target.is_empty and not step.selector)


def before_perform(ex: Ports, ctx: StepContext) -> bool:
    """Just before the driver acts for a skill: the live read of the element (:data:`LIVE_TEXTS`).

    Raises the skill's refusal as a :class:`~core.engine.step.StepFailure`
    (``precondition`` / ``failed``; :func:`fell_back` then ends the skill):
    a key whose target does not hold focus after being focused (the key
    would reach another control), a targetless arrow onto a control it would
    change, a text read live that the guard refuses.  An element in a frame
    other than the main one, or a driver that runs no script (the unit
    tests' fake), cannot be read: a key is then not pressed, other actions go
    on under the observation's texts (already checked).

    Returns True when the page's key guard was armed for the key about to be
    pressed (checked again as it arrives): the caller reads what became of
    it with :func:`key_held` once the key was pressed.
    """
    dec, step = _decider(ex), ctx.step
    if dec is None or step is None or ctx.source != "skill" or not is_skill_step(ctx.decided):
        return False
    assert ctx.decided is not None
    kind, cand = step.action.kind, ctx.candidate
    press = kind == "press"
    index = -1
    if cand is not None:
        frame, _, idx = cand.ref.partition(":")
        index = int(idx) if frame == "0" and idx.isdigit() else -2
    read: Any = None
    # the key is checked again as it arrives (page_lib's key guard): a targeted key must land on its target, a
    # targetless arrow not on a control it changes - no timer can move focus between the check and the key
    arm = None
    if press and (cand is not None or step.action.value.strip().lower().startswith("arrow")):
        arm = {"key": step.action.value, "tags": [] if cand is not None else list(ARROW_CHANGES["tags"]),
               "roles": [] if cand is not None else list(ARROW_CHANGES["roles"]),
               "types": [] if cand is not None else list(ARROW_CHANGES["types"])}
    if index != -2 and (cand is not None or press):
        try:
            read = ex.driver.evaluate(LIVE_TEXTS, [index, press, arm])
        except NotImplementedError:
            read = None  # a driver without scripts (the fake)
        except Exception as exc:  # noqa: BLE001 - a page that does not answer: nothing read, nothing pressed
            read = None
            if not press:
                raise StepFailure(Failure("precondition", f"the element could not be read before acting: {exc}"),
                                  escalation="precondition") from None
    armed = isinstance(read, dict) and bool(read.get("armed"))
    outcome, reason = "", ""
    if press:
        focused = read.get("focused") if isinstance(read, dict) else None
        outcome, reason = dec.check_key(ctx.decided.id, step.action.value, focused, targeted=cand is not None)
    if not reason and cand is not None and isinstance(read, dict) and ctx.before is not None:
        texts = {str(k): str(v) for k, v in (read.get("texts") or {}).items() if v}
        region = read.get("region") if isinstance(read.get("region"), dict) else None
        outcome, reason = dec.check_resolved(ctx.decided.id, kind, cand, step.target, ctx.before, ctx.run.params,
                                             value=ctx.value, live=texts, region=region)
    if reason:
        if armed:
            key_held(ex, ctx)  # disarm: the key is not pressed
        kind_of = "precondition" if outcome == "precondition" else "abstained"
        raise StepFailure(Failure(kind_of, ex.redact(reason)), escalation="precondition")
    return armed


def key_held(ex: Ports, ctx: StepContext) -> None:
    """After a skill's key was pressed with the key guard armed (:func:`before_perform` returned True): what the
    guard saw as the key arrived (:data:`KEY_HELD`), and disarm.  Raises the skill's refusal as a
    ``precondition`` :class:`~core.engine.step.StepFailure` when the guard held the key back - focus had moved,
    after the check, to another element than the target or to a control the arrow changes - with the same
    reason :meth:`~core.skills.runtime.SkillDecider.check_key` gives.  A page that does not answer: nothing
    raised (the key was held back or went where the check saw focus)."""
    try:
        got = ex.driver.evaluate(KEY_HELD)
    except Exception:  # noqa: BLE001 - a page gone or not answering: the guard in it is gone too
        return
    held = got.get("held") if isinstance(got, dict) else None
    dec, step = _decider(ex), ctx.step
    if not isinstance(held, dict) or dec is None or step is None or ctx.decided is None:
        return
    _outcome, reason = dec.check_key(ctx.decided.id, step.action.value, held, targeted=ctx.candidate is not None,
                                     held=True)
    reason = reason or f"{step.action.value} was held back as it arrived: focus had moved; not pressed"
    raise StepFailure(Failure("precondition", ex.redact(reason)), escalation="precondition")


def fell_back(ex: Ports, ctx: StepContext, exc: BaseException) -> Handled | None:
    """A failed skill action: end the skill (its use recorded); the attempt is ``skipped`` (None: not a skill's).

    The run stays at the step's index (:func:`core.engine.goal.next_index`)
    and the chain decides again without that skill (it fires once a step).
    """
    dec = _decider(ex)
    if dec is None or ctx.source != "skill" or not is_skill_step(ctx.decided) or not isinstance(exc, StepFailure):
        return None
    assert ctx.decided is not None
    ended = dec.action_failed(ctx.decided.id, exc.failure.kind, exc.failure.reason,
                              acted=bool(exc.failure.acted or ctx.acted))
    reason = ended[1] if ended is not None else exc.failure.reason
    if ended is not None and ended[0] in ("retry", "skip"):  # the skill's recovery rule (error_recovery)
        return Handled("skipped", ex.redact(f"the skill's action did not pass ({reason})"))
    return Handled("skipped", ex.redact(f"the skill gave up ({reason}); the step is decided without it"))


def popups_before(ex: Ports, ctx: StepContext) -> tuple[int, str]:
    """How many popups cover the page just before a skill's last action, and that action's step id ((0, "")
    for any other step, or when they cannot be read)."""
    dec = _decider(ex)
    if dec is None or ctx.source != "skill" or ctx.decided is None or not dec.last_action(ctx.decided.id):
        return 0, ""
    return len(overlays(ex.driver) or ()), ctx.decided.id


def quiet_after(ex: Ports, before: tuple[int, str], *, limit_ms: float = QUIET_MS) -> None:
    """After a skill's last action that met popups (``before``: :func:`popups_before`), before the page is looked
    at: wait until one of them has left (a fade, a slide-out), at most ``limit_ms`` (ms,
    :data:`core.recover.rollback.QUIET_MS`) - the action's verification, its verify rules and the flow step
    then see the page once quiet: a banner fading out over a second is cleared, not a failure of the skill
    (issue 25 items 4-5).  Returns at once when no popup was met."""
    count, _step_id = before
    if count > 0:
        wait_gone(ex.driver, None, count, limit_ms=limit_ms)


def skill_line(event: object) -> str | None:
    """The command line's line for a finished skill use, else None.

    ``  leave_request step 2: skill sk-1a2b3c4d5e6f passed: 1 action(s) done (412 ms)``
    """
    if isinstance(event, SkillFinished):
        why = f": {event.reason}" if event.reason else ""
        return f"  {event.flow} step {event.index + 1}: skill {event.skill_id} {event.outcome}{why} ({event.ms:.0f} ms)"
    return None


class SkillsPlugin:
    """The skill decider's safety at the kernel's hooks (see the module doc); does nothing without one.

    Parameters
    ----------
    ports : Ports
        Uses ``decider("skill")``, ``driver`` (the live read) and ``redact``.
    """

    def __init__(self, ports: Ports) -> None:
        self.ports = ports
        self._popups: tuple[int, str] = (0, "")  # popups over the page before a skill's last action, its step id
        self._armed: StepContext | None = None  # the step whose key the page's key guard was armed for

    @hookimpl
    def skip_resolve(self, p: SkipResolve) -> bool | None:
        return True if targetless_key(p.step) else None

    @hookimpl
    def hold_target(self, p: HoldTarget) -> Held | None:
        resolution, _cand, held = after_resolve(self.ports, p.step, p.resolution, p.candidate)
        return Held(resolution, held) if held is not None else None

    @hookimpl
    def refuse_action(self, p: RefuseAction) -> StepFailure | None:
        self._popups, self._armed = (0, ""), None
        try:
            if before_perform(self.ports, p.step):
                self._armed = p.step
        except StepFailure as failure:
            return failure
        self._popups = popups_before(self.ports, p.step)
        return None

    def _key_held(self, *, refuse: bool) -> None:
        """Read and disarm the page's key guard when armed; its refusal raised with ``refuse``."""
        armed, self._armed = self._armed, None
        if armed is None:
            return
        try:
            key_held(self.ports, armed)
        except StepFailure:
            if refuse:
                raise

    @hookimpl(tryfirst=True)
    def take_observation(self, p: TakeObservation) -> None:
        """Before the look after a skill's key: whether the page's key guard held it back (:func:`key_held`
        raises the refusal).  Before the look after a skill's last action: wait for the popup it met to leave
        (:func:`quiet_after`); the observation itself is the screen plugin's."""
        self._key_held(refuse=p.when == "after")
        if p.when == "after" and self._popups[0] > 0:
            quiet_after(self.ports, self._popups)
            self._popups = (0, "")

    @hookimpl
    def attempt_failed(self, p: AttemptFailed) -> Handled | None:
        self._key_held(refuse=False)  # the attempt failed before its look (or another rule refused the key)
        return fell_back(self.ports, p.step, p.error)
