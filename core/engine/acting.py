"""A step's action that may write is under way: said to the store before the browser is told to act.

The ``act`` phase calls :func:`note_acting` right before
``driver.perform``; :mod:`core.engine.resume` reads the rows back
(``step_acts``) to tell a step that was killed before its action (done
again safely) from one killed while or after acting (never done again
blindly, S6).
"""
from __future__ import annotations

from typing import Any

__all__ = ["WRITING_KINDS", "note_acting", "writes_said"]

#: Action kinds that may write when their step declares nothing (S6): the rest set values or only look.
WRITING_KINDS = ("click", "dblclick", "press", "navigate", "back", "upload")


def note_acting(ex: Any, ctx: Any) -> None:
    """Before a step's action that may write is performed: commit that it is under way (``step_acts``).

    Called by the ``act`` phase; nothing without a store, nothing for actions
    that cannot write (read-only kinds, or fills and choices on a step not
    declared irreversible).  A failure is kept in ``ex.store_errors``.
    """
    store, step = getattr(ex, "store", None), ctx.step
    if store is None or step is None:
        return
    if step.reversible and (step.reversible_declared or step.action.kind not in WRITING_KINDS):
        return
    from core.store.resumes import ResumeTable

    try:
        ResumeTable(store).acting(ctx.run.run_id, ctx.index, ctx.attempt)
    except Exception as exc:  # noqa: BLE001 - recording is best effort, the run goes on
        ex.store_errors.append(f"step_acts failed: {exc}")


def writes_said(ctx: Any) -> str:
    """What the server said to the writes a failed irreversible step sent (S6), for its one-line message:
    ``"; the server answered POST /api/requests 500"``, ``"; no answer to POST /api/requests (failed or still
    pending)"``; ``""`` when its requests were not watched or it sent none.  Paths only, never a query."""
    writes = list(getattr(ctx, "writes", ()) or ()) if getattr(ctx, "watched", False) else []
    failed = [w.shown for w in writes if w.succeeded is False][:3]
    pending = [w.shown for w in writes if w.status is None][:3]
    parts = ([f"the server answered {', '.join(failed)}"] if failed else []) + (
        [f"no answer to {', '.join(pending)} (failed or still pending)"] if pending else [])
    return "".join(f"; {p}" for p in parts)
