"""The state module's hooks in the step pipeline (S2, S3): note each state, emit it, mark submits.

The pipeline calls :func:`note_before` in its fingerprint phase, :func:`before_action`
in its precheck phase and :func:`note_after` in its verify phase; the logic is in
:mod:`core.state.awareness` (pure), this module only feeds it from the step's
context and emits :class:`~core.engine.events.StateNoted`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from core.domain.belief import Belief
from core.state.awareness import ActionNote, StateEntry, is_submit

from .events import StateNoted

if TYPE_CHECKING:  # pragma: no cover
    from .executor import FlowExecutor
    from .pipeline import StepContext

__all__ = ["note_before", "before_action", "note_after", "belief_of"]


def _emit(ex: "FlowExecutor", ctx: "StepContext", entry: StateEntry) -> None:
    ring = ex.awareness.recent()
    ex.emit(StateNoted(ctx.run.run_id, ctx.run.flow.name, ctx.index, entry.moment, entry.belief, entry.key_point,
                       entry.digest, tuple(ex.redact(e.line) for e in ring)))


def note_before(ex: "FlowExecutor", ctx: "StepContext") -> None:
    """The page before the step's action: a light state (heavy at the run's start or a dialog change)."""
    if ctx.before is None:
        return
    _emit(ex, ctx, ex.awareness.note(ctx.before, index=ctx.index, moment="before"))


def belief_of(ex: "FlowExecutor") -> Belief | None:
    """The current belief (S3), None before the first state."""
    return ex.awareness.belief


def _submit(ctx: "StepContext") -> bool:
    return ctx.step is not None and is_submit(ctx.step.action.kind, ctx.candidate, reversible=ctx.step.reversible)


def before_action(ex: "FlowExecutor", ctx: "StepContext") -> None:
    """A submit is about to be done: the state before it gets its heavy signature (S2 key point)."""
    if ctx.before is not None and _submit(ctx):
        ex.awareness.mark_submit(ctx.before)


def note_after(ex: "FlowExecutor", ctx: "StepContext") -> None:
    """The page after the step's action, with the action that led to it (heavy after a submit)."""
    if ctx.after is None or ctx.step is None:
        return
    label = ctx.candidate.descriptor.label_text if ctx.candidate is not None else ""
    action = ActionNote(ctx.step.action.kind, ex.redact(label)[:60], _submit(ctx) and ctx.acted,
                        ctx.after.timestamp_ms)
    _emit(ex, ctx, ex.awareness.note(ctx.after, index=ctx.index, moment="after",
                                     action=action if ctx.acted else None))
