"""What each step that acted was seen to write, for ``run --retries`` (issue 22 item 6).

A retry runs the whole flow again; it is safe only when the failed run wrote nothing.  The store says which
steps performed an action that *may* write (``step_acts``: any click, key press or navigation); this plugin
says, per step, what the run *saw* it do, after the step's outcome is recorded (``step_recorded``):

* ``"wrote"`` - a request that writes to the app was accepted or not answered (``StepContext.writes``,
  :func:`core.act.writes.server_writes`: a 4xx answer is a refusal, not a write), or what the page keeps
  (storage, cookies, IndexedDB) changed (:func:`core.recover.effects.effect_of`);
* ``"none"`` - the step's requests were watched, the page's kept state was read before and after the action,
  and neither shows a write;
* ``""`` - nothing can be told (no network watch, a page that could not be read): counted as a write.

Only the step's last attempt is looked at: an earlier attempt was retried by the engine only when it showed no
effect, writes included (:mod:`core.engine.norepeat`), or when its flow file declares it ``reversible: true``.
Registered only by a session asked for it (``ProjectSession(writes_seen=True)``, ``run --retries N`` with N > 0):
reading the page's kept state costs one evaluation per step that acted.
"""
from __future__ import annotations

from typing import Any

from core.engine.hooks import StepRecorded, hookimpl
from core.perception.effects import EffectWatch, snapshot
from core.recover.effects import effect_of

__all__ = ["WritesSeenPlugin"]


class WritesSeenPlugin:
    """Keeps, per run id and step index, ``"wrote"``, ``"none"`` or ``""`` (see the module doc).

    Parameters
    ----------
    driver : object
        The session's driver (its page's kept state is read after a step that acted).

    Attributes
    ----------
    seen : dict[str, dict[int, str]]
        Run id -> step index (0-based) -> what the step was seen to write.
    """

    def __init__(self, driver: Any) -> None:
        self.driver = driver
        self.seen: dict[str, dict[int, str]] = {}

    @hookimpl
    def step_recorded(self, p: StepRecorded) -> None:
        ctx = p.step
        if not ctx.acted or ctx.step is None:
            return
        book = self.seen.setdefault(ctx.run.run_id, {})
        book[ctx.index] = "wrote" if book.get(ctx.index) == "wrote" else self._judge(ctx)

    def _judge(self, ctx: Any) -> str:
        if ctx.writes:
            return "wrote"
        watch = EffectWatch.of(self.driver)
        before = watch.before if watch is not None else None
        now = snapshot(self.driver) if before is not None else None
        effect = effect_of(before, now, background=watch.background if watch is not None else ())
        if effect.storage:
            return "wrote"
        return "none" if ctx.watched and before is not None and now is not None else ""
