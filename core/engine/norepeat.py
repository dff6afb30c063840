"""The step pipeline's two call sites for "never repeat an effect" (issue 19, failure kind 2).

- :func:`mark_effects` (``act`` phase, right before the action): the page's
  kept state is snapshotted (:class:`core.perception.effects.EffectWatch`).
- :func:`no_repeat` (``_on_failure``, before a planned retry or rollback of
  an attempt that acted): the attempt's effect is read
  (:func:`core.recover.effects.effect_of`) and judged
  (:func:`core.recover.effects.decide_repeat`).  An attempt with no effect
  is retried as planned.  One whose effect a rollback can undo is rolled
  back, and retried only when the page's state - storage included - is the
  checkpoint's again (:func:`core.recover.effects.undone`).  Any other is
  never done again: the step is verified once more as the page stands (its
  effect may be the expected one, only late) and passes, or it escalates as
  irreversible (no "retry" answer), its reason saying what effect was seen.
  An action that adds or submits (:func:`core.recover.effects.non_idempotent`) and whose attempt sent a
  request to the app from the page's script - of any method, ``GET /add?item=...`` too - reached the server:
  that request is its effect, one a rollback cannot undo.

A step declared ``reversible: true`` in its flow file keeps its retries
whatever it does: its author said so (S6).

A refusal is not an effect done: when every write the attempt sent was
refused by the server (answered 4xx, :func:`core.act.writes.refused`), no
other write was seen and the page keeps nothing new (no storage change),
what the page shows (an error message) is the server's "no".  The step is
not done again all the same (a second sign-in with the same wrong password
only counts towards a lockout), but it fails - ``ctx.refused`` says which
requests were refused - instead of escalating to a person: the flow failed,
and a run that wrote nothing may be run again (``run --retries``).
"""
from __future__ import annotations

import weakref
from typing import Any, Callable

from core.act.expect import NOISE_DELTAS, observed_deltas
from core.act.regions import PageRegions, read_regions
from core.act.space import spec
from core.act.writes import app_requests, refused, refused_writes
from core.perception.effects import EffectWatch, snapshot
from core.recover.effects import (
    BACKGROUND_WATCH_MS, changed_keys, decide_repeat, effect_of, non_idempotent, undone,
)
from core.recover.motion import wait_motion
from core.recover.policy import Recovery

__all__ = ["mark_effects", "no_repeat", "list_counts", "page_regions"]

#: The page's regions read right before the action of a step whose recording names the region it changed,
#: per page watch (:func:`mark_effects`, :func:`page_regions`).
_REGIONS_BEFORE: "weakref.WeakKeyDictionary[EffectWatch, PageRegions | None]" = weakref.WeakKeyDictionary()


def mark_effects(ex: Any, ctx: Any) -> None:
    """Right before the step's action: snapshot what the page keeps (nothing for read-only kinds)."""
    step = ctx.step
    if step is None or spec(step.action.kind).read_only:
        return
    watch = EffectWatch.of(ex.driver)
    if watch is not None:
        watch.mark(ex.driver, getattr(ctx, "effects_read", None))  # read with the act phase's probe, if it was
        after = step.recorded.after if step.recorded is not None else None
        if after is not None and after.region:  # the region it changed is judged against this reading
            _REGIONS_BEFORE[watch] = read_regions(ex.driver)
        else:
            _REGIONS_BEFORE.pop(watch, None)


def page_regions(ex: Any, ctx: Any) -> tuple[PageRegions | None, PageRegions | None]:
    """The page's regions right before the step's action and now (:func:`core.act.regions.read_regions`),
    for the landing check's landmark and region signals; ``(None, None)`` when the step's recording has
    neither (no page read: it costs nothing then), a None item when that reading could not be made."""
    after = ctx.step.recorded.after if ctx.step is not None and ctx.step.recorded is not None else None
    if after is None or not (after.landmark or after.region):
        return None, None
    watch = EffectWatch.of(ex.driver) if after.region else None
    before = _REGIONS_BEFORE.get(watch) if watch is not None else None
    return before, read_regions(ex.driver)


def list_counts(ex: Any, ctx: Any) -> tuple[dict[str, int] | None, dict[str, int] | None]:
    """Item counts by kind right before the step's action and now (:attr:`EffectSnapshot.items`), for the
    recorded list change (:func:`core.act.landing.list_change`); ``(None, None)`` when the step has none
    recorded (no page read: it costs nothing then) or a count cannot be read."""
    after = ctx.step.recorded.after if ctx.step is not None and ctx.step.recorded is not None else None
    watch = EffectWatch.of(ex.driver) if after is not None and after.list_kind and after.list_delta else None
    if watch is None or watch.before is None:
        return None, None
    now = snapshot(ex.driver)
    return dict(watch.before.items), (dict(now.items) if now is not None else None)


def _learn_background(ex: Any, watch: EffectWatch) -> None:
    """Learn what the page changes on its own: watch it :data:`BACKGROUND_WATCH_MS` with no action, after
    letting the attempt's own reaction end.

    Right after a click the page may still be reacting to it (a confirmation box shown when its backdrop's
    fade ended, a tooltip that leaves when the box takes the focus): learnt then, the attempt's own effect
    would pass for the page's background and the attempt be done again.  So the page is first given the
    same time to finish reacting (motion waited for, then :data:`BACKGROUND_WATCH_MS`, nothing learnt), and
    only what changes in the watch after that is its own (a heartbeat, a clock, a poller: they change in
    both windows).
    """
    page = watch.page
    if page is None:
        return  # a scripted page has no timers of its own
    try:
        wait_motion(ex.driver)
        page.wait_for_timeout(BACKGROUND_WATCH_MS)  # the attempt's late reaction: not the page's own
    except Exception:  # noqa: BLE001 - a page that closed: nothing learnt
        return
    first = snapshot(ex.driver)
    try:
        page.wait_for_timeout(BACKGROUND_WATCH_MS)
    except Exception:  # noqa: BLE001 - a page that closed: nothing learnt
        return
    second = snapshot(ex.driver)
    if first is not None and second is not None:
        watch.background.update(key for group, key, _ in changed_keys(first, second) if group != "navigation")


def _page_changed(ctx: Any) -> bool:
    """A real change between the observations before and after the action (focus, loading and scroll aside)."""
    if ctx.before is None or ctx.after is None:
        return False
    return any(d not in NOISE_DELTAS and d != "scroll" for d in observed_deltas(ctx.before, ctx.after))


def _attempt_requests(ex: Any, ctx: Any) -> tuple[list[Any], str] | None:
    """(the requests the page sent since the attempt's action, the app's origin), when they were watched; else
    None."""
    if not getattr(ctx, "watched", False) or ctx.before is None or not getattr(ctx, "t_act", 0.0):
        return None
    from urllib.parse import urlsplit

    from core.perception.netwatch import NetworkWatch

    watch = NetworkWatch.of(ex.driver)
    if watch is None:
        return None
    u = urlsplit(ctx.before.url)
    return watch.between(ctx.t_act), f"{u.scheme}://{u.netloc}"


def _refusal(ex: Any, ctx: Any, effect: Any) -> str:
    """``"POST /api/login 401"`` when the attempt's requests were watched, it sent writes that the server all
    refused (4xx), no write was accepted and the page keeps nothing new (storage, cookies); else ``""``."""
    if getattr(ctx, "writes", None) or effect.writes or effect.storage or getattr(effect, "unknown", ""):
        return ""
    seen = _attempt_requests(ex, ctx)
    if seen is None:
        return ""
    no = refused_writes(seen[0], origin=seen[1], background=ctx.run.background)
    return ", ".join(r.shown for r in no[:3])


def _requests_sent(ex: Any, ctx: Any) -> list[str]:
    """The requests the attempt's script sent to the app, whatever their method (:func:`core.act.writes.
    app_requests`), as shown (``"GET /log 200 sent"``), when they were watched; else ``[]``."""
    seen = _attempt_requests(ex, ctx)
    if seen is None:
        return []
    sent = app_requests(seen[0], origin=seen[1], background=ctx.run.background)
    # a request the server refused (4xx) is no effect done: the refusal rule judges it (module docstring)
    return [f"{r.shown} sent" for r in sent if not refused(r)][:3]


def no_repeat(ex: Any, ctx: Any, rec: Recovery, *, reverify: Callable[[], None],
              roll_back: Callable[[], tuple[str, bool]]) -> Recovery:
    """Judge a planned retry or rollback of an attempt that acted (rules in the module docstring).

    Parameters
    ----------
    rec : Recovery
        The policy's plan (:func:`core.recover.policy.decide_recovery`).
    reverify : Callable[[], None]
        Verifies the step again without acting; sets ``ctx.status`` to ``"passed"`` when it holds, raises
        when it does not.
    roll_back : Callable[[], tuple[str, bool]]
        Rolls back to the checkpoint: ``("", True)`` when done and verified, else why not and False.

    Returns
    -------
    Recovery
        ``rec`` unchanged (no effect); ``retry`` after a rollback that undid the effect; else ``escalate``,
        with ``ctx.reversible`` set to False.  When the step passed on re-verification, ``ctx.status`` is
        ``"passed"`` and the returned recovery does not matter.
    """
    step = ctx.step
    if rec.kind not in ("retry", "roll_back") or not ctx.acted or step is None:
        return rec
    if step.reversible_declared and step.reversible:
        return rec  # the flow's author declared it safe to repeat (S6)
    watch = EffectWatch.of(ex.driver)
    cand = ctx.candidate
    d_ = cand.descriptor if cand is not None else None
    idempotent = not non_idempotent(step.action.kind, step.action.value,
                                    name=(d_.name or d_.text) if d_ is not None else "",
                                    input_type=d_.type if d_ is not None else "", role=d_.role if d_ is not None else "")
    writes = [w.shown for w in getattr(ctx, "writes", ()) or ()]
    if not idempotent and not writes:
        writes = _requests_sent(ex, ctx)  # an action that adds or submits and reached the server did its work

    def judge() -> tuple[Any, Any]:
        now = snapshot(ex.driver) if watch is not None else None
        effect = effect_of(watch.before if watch is not None else None, now, writes=writes,
                           background=watch.background if watch is not None else ())
        return effect, decide_repeat(effect, idempotent=idempotent, page_changed=_page_changed(ctx),
                                     can_roll_back=ctx.cp is not None, compensations=bool(step.compensations))

    effect, decision = judge()
    if decision.kind != "retry" and effect.seen and not effect.writes and watch is not None:
        _learn_background(ex, watch)  # a heartbeat, a clock or a poller is not the attempt's effect
        effect, decision = judge()
    if decision.kind == "retry":
        return rec
    reason, again = decision.reason, ""
    try:
        reverify()  # the effect may be the one the recording expects, only late: never act again to find out
    except Exception as exc:  # noqa: BLE001 - any failure of the second look: the step is not done again
        still = getattr(exc, "failure", None)
        again = str(getattr(still, "reason", "") or exc)
    if ctx.status:
        return rec
    no = _refusal(ex, ctx, effect)
    if no:  # the server said no and nothing was kept: the flow failed; the step is not done again
        ctx.refused = no
        looked = f"; looked at again without acting: {again}" if again else ""
        redact = getattr(ex, "redact", lambda t: t)
        return Recovery("escalate", redact(f"the server refused the step's request ({no}); the step is not done "
                                           f"again{looked}"))
    if decision.kind == "roll_back_then_check":
        why, ok = roll_back()
        left = undone(watch.before if watch is not None else None, snapshot(ex.driver),
                      background=watch.background if watch is not None else ())
        if not why and ok and not left:
            return Recovery("retry", f"rolled back and the page is as before the action: {rec.reason}")
        reason = f"{reason}, and the rollback did not undo it ({why or '; '.join(left[:3]) or 'not verified'})"
    ctx.reversible = False  # an effect seen is an effect done (S6): never retried, by the engine or an answer
    looked = f"; looked at again without acting: {again}" if again else ""
    redact = getattr(ex, "redact", lambda t: t)  # a URL or a verdict may hold a secret value
    return Recovery("escalate", redact(f"the step is not done again: {reason}{looked}"))
