"""A step's action that may write is under way: said to the store before the browser is told to act.

The ``act`` phase calls :func:`note_acting` right before
``driver.perform``; :mod:`core.engine.resume` reads the rows back
(``step_acts``) to tell a step that was killed before its action (done
again safely) from one killed while or after acting (never done again
blindly, S6).
"""
from __future__ import annotations

from typing import Any

__all__ = ["WRITING_KINDS", "PREREAD_PAUSE_S", "note_acting", "read_before_acting", "act_read", "writes_said",
           "before_acting_script", "reads_kind"]

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

    errors: list[BaseException] = []
    try:
        defer, flush = getattr(store, "defer", None), getattr(store, "flush", None)
        if defer is not None and flush is not None:
            # handed to the store's writer behind the step's checkpoint (one commit for both when they queue
            # together), then waited for: committed before the browser is told to act, as before
            defer(ResumeTable(store).acting, ctx.run.run_id, ctx.index, ctx.attempt, on_error=errors.append)
            flush()
        else:
            ResumeTable(store).acting(ctx.run.run_id, ctx.index, ctx.attempt)
    except Exception as exc:  # noqa: BLE001 - recording is best effort, the run goes on
        errors.append(exc)
    for exc in errors:
        ex.store_errors.append(f"step_acts failed: {exc}")


#: A pause longer than this (s) between the checkpoint's read and the action (a breakpoint, the run paused at the
#: act phase) makes the act phase read the page again: what a person did meanwhile is not the action's effect.
#: The kernel's own pause points cost microseconds; a person's pause is seconds.
PREREAD_PAUSE_S = 0.005


def reads_kind(ex: Any, kind: str) -> bool:
    """Whether a step of action ``kind`` reads the page's kept state with its probe before acting (it may change
    it, and the driver's effects are watched)."""
    from core.act.space import spec
    from core.perception.effects import EffectWatch

    return (getattr(ex.driver, "probe_and_read", None) is not None and not spec(kind).read_only
            and EffectWatch.of(ex.driver) is not None)


def _reads_before_acting(ex: Any, ctx: Any) -> bool:
    """Whether the act phase reads the page's kept state with its probe (a step that may change it)."""
    return ctx.step is not None and not ctx.already and reads_kind(ex, ctx.step.action.kind)


def before_acting_script() -> tuple[str, int]:
    """(page function, its argument) of the read before acting: ``[kept state, form values]`` - the page's kept
    state (:data:`core.perception.effects.SNAPSHOT_JS`, within :data:`~core.perception.effects.IDB_LIMIT_MS`)
    and the form values (:data:`core.perception.pagefacts.FORM_VALUES_JS`; null when that read threw)."""
    from core.perception.effects import IDB_LIMIT_MS, SNAPSHOT_JS
    from core.perception.pagefacts import FORM_VALUES_JS

    return (f"async (arg) => {{ const kept = await ({SNAPSHOT_JS})(arg); let form = null; "
            f"try {{ form = ({FORM_VALUES_JS})(); }} catch (e) {{ form = null; }} return [kept, form]; }}",
            IDB_LIMIT_MS)


def read_before_acting(ex: Any, ctx: Any) -> list[dict[str, Any]] | None:
    """The checkpoint phase's one round trip for the checkpoint and the action: the page library's probe (the
    settle wait's start), the page's kept state (:data:`core.perception.effects.SNAPSHOT_JS`, what
    :func:`core.engine.norepeat.mark_effects` snapshots) and the form values (:data:`core.perception.pagefacts.
    FORM_VALUES_JS`, what the checkpoint keeps), read together; the first two are kept in ``ctx.probe`` and
    ``ctx.effects_read`` for the act phase (:func:`act_read`).  Returns the form values (None: unread, or a
    step that reads nothing before acting - the checkpoint reads them itself).

    Only for a step whose act phase reads its kept state (one that may change it); the checkpoint runs right
    before the act phase, so the probe is as fresh as the act phase's own (both are read before the cookies
    and the "under way" row).
    """
    if not _reads_before_acting(ex, ctx):
        return None
    from core.engine import ahead

    early = ahead.take(ctx, scripted=True)  # read with the reuse check: no round trip of its own
    if early is not None:
        probe, got, at = early.probe, early.read, early.waited
    else:
        script, arg = before_acting_script()
        probe, got = ex.driver.probe_and_read(script, arg)
        at = float(ctx.waited)
    if probe is None or not isinstance(got, list) or len(got) != 2:
        return None  # navigating, or the page would not answer: each phase reads on its own
    ctx.probe, ctx.effects_read = probe, (got[0] if isinstance(got[0], dict) else None)
    ctx.preread = at
    return [dict(x) for x in got[1] if isinstance(x, dict)] if isinstance(got[1], list) else None


def act_read(ex: Any, ctx: Any) -> None:
    """The act phase's read right before the action: ``ctx.probe`` (and ``ctx.effects_read`` for a step that may
    change the page's kept state) - taken over from the checkpoint phase's read (:func:`read_before_acting`)
    when it was made and the run did not pause since, else read now (one round trip)."""
    if ctx.preread is not None and float(ctx.waited) - ctx.preread <= PREREAD_PAUSE_S:
        return
    ctx.preread = None
    if _reads_before_acting(ex, ctx):
        from core.perception.effects import IDB_LIMIT_MS, SNAPSHOT_JS

        probe, got = ex.driver.probe_and_read(SNAPSHOT_JS, IDB_LIMIT_MS)  # what mark_effects snapshots
        ctx.probe, ctx.effects_read = probe or {}, (got if isinstance(got, dict) else None)
    else:
        from core.engine import ahead

        early = ahead.take(ctx, scripted=False)  # the probe read with the reuse check, when no pause came since
        ctx.probe = dict(early.probe) if early is not None else getattr(ex.driver, "probe", lambda: None)() or {}


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
