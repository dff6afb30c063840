"""What each control's use did, told to the model's guard after every step (issue 21 item 4).

After a step that acted on a control, :class:`EffectsSeenPlugin` tells the
model agent (``Ports.decider("model").agent.learn_effect``) one of:

* ``"wrote"`` - the action sent a write to the app (:func:`core.act.writes.server_writes`,
  ``StepContext.writes``: accepted, failed on the server (5xx) or not answered; a request the server refused
  with a 4xx wrote nothing) or changed what the page keeps
  (storage, cookies, IndexedDB: :func:`core.recover.effects.effect_of`);
* ``"dialog"`` - a dialog was open after the action that was not before (a confirmation may follow);
* ``"none"`` - the requests were watched, the page's kept state was read before and after, and
  nothing of it changed.

When nothing can be told (no network watch, the page could not be read) nothing is learnt, and the
control's effect stays unknown to the guard (:func:`core.plan.guard.needs_approval`).  Runs without a
model decider skip the whole thing (no snapshot is taken).
"""
from __future__ import annotations

from typing import Any

from core.engine.hooks import Ports, StepRecorded, hookimpl
from core.perception.effects import EffectWatch, snapshot
from core.recover.effects import effect_of

__all__ = ["EffectsSeenPlugin", "effect_seen"]


def effect_seen(ctx: Any, driver: Any) -> str:
    """``"wrote"``, ``"dialog"``, ``"none"`` or ``""`` (nothing can be told) for the step ``ctx`` that acted."""
    if ctx.writes:
        return "wrote"
    watch = EffectWatch.of(driver)
    before = watch.before if watch is not None else None
    now = snapshot(driver) if before is not None else None
    effect = effect_of(before, now, background=watch.background if watch is not None else ())
    if effect.storage:
        return "wrote"
    opened = set(ctx.after.modal_titles if ctx.after is not None else ()) - set(
        ctx.before.modal_titles if ctx.before is not None else ())
    if opened:
        return "dialog"
    if ctx.watched and before is not None and now is not None:
        return "none"
    return ""


class EffectsSeenPlugin:
    """Feeds the model agent's effect book; uses the ports' ``decider`` and ``driver``."""

    def __init__(self, ports: Ports) -> None:
        self.ports = ports

    @hookimpl
    def step_recorded(self, p: StepRecorded) -> None:
        ctx = p.step
        if not ctx.acted or ctx.candidate is None or ctx.step is None:
            return
        learn = getattr(getattr(self.ports.decider("model"), "agent", None), "learn_effect", None)
        if not callable(learn):
            return
        known = effect_seen(ctx, self.ports.driver)
        if known:
            learn(ctx.run.run_id, ctx.candidate, known, ctx.before.url if ctx.before is not None else "")
