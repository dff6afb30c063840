"""State awareness as a plugin of the step kernel (S2, S3): note each state, emit it, mark submits.

:class:`AwarenessPlugin` owns the run's :class:`~core.state.awareness.StateAwareness`
(ring buffer and belief; the logic is there, pure) and feeds it from the
kernel's hooks (:mod:`core.engine.hooks`): ``state_before`` (fingerprint
phase), ``before_action`` (precheck: a submit's state gets its heavy
signature), ``state_after`` (verify phase); it answers ``current_belief``
for the pre-check and the settle wait, and emits
:class:`~core.engine.events.StateNoted` for every state noted.
"""
from __future__ import annotations

from core.domain.belief import Belief
from core.state.awareness import ActionNote, StateAwareness, StateEntry, is_submit

from .events import StateNoted
from .hooks import BeforeAction, CurrentBelief, FlowBegins, Ports, StateAfter, StateBefore, hookimpl
from .step import StepContext

__all__ = ["AwarenessPlugin"]


class AwarenessPlugin:
    """The state module of the current run, fed by the kernel's hooks (see the module doc).

    Parameters
    ----------
    ports : Ports
        Uses ``emit`` and ``redact``.
    """

    def __init__(self, ports: Ports) -> None:
        self.ports = ports
        #: The state module of the current run: ring buffer and belief (S2, S3); new for every flow.
        self.awareness = StateAwareness()

    def _emit(self, ctx: StepContext, entry: StateEntry) -> None:
        ring = self.awareness.recent()
        self.ports.emit(StateNoted(ctx.run.run_id, ctx.run.flow.name, ctx.index, entry.moment, entry.belief,
                                   entry.key_point, entry.digest, tuple(self.ports.redact(e.line) for e in ring)))

    @hookimpl
    def flow_begins(self, p: FlowBegins) -> None:
        self.awareness = StateAwareness()

    @hookimpl
    def current_belief(self, p: CurrentBelief) -> Belief | None:
        """The current belief (S3), None before the first state."""
        return self.awareness.belief

    @hookimpl
    def state_before(self, p: StateBefore) -> None:
        """The page before the step's action: a light state (heavy at the run's start or a dialog change)."""
        ctx = p.step
        if ctx.before is not None:
            self._emit(ctx, self.awareness.note(ctx.before, index=ctx.index, moment="before"))

    @hookimpl
    def before_action(self, p: BeforeAction) -> None:
        """A submit is about to be done: the state before it gets its heavy signature (S2 key point)."""
        if p.step.before is not None and _submit(p.step):
            self.awareness.mark_submit(p.step.before)

    @hookimpl
    def state_after(self, p: StateAfter) -> None:
        """The page after the step's action, with the action that led to it (heavy after a submit)."""
        ctx = p.step
        if ctx.after is None or ctx.step is None:
            return
        label = ctx.candidate.descriptor.label_text if ctx.candidate is not None else ""
        action = ActionNote(ctx.step.action.kind, self.ports.redact(label)[:60], _submit(ctx) and ctx.acted,
                            ctx.after.timestamp_ms)
        self._emit(ctx, self.awareness.note(ctx.after, index=ctx.index, moment="after",
                                            action=action if ctx.acted else None))


def _submit(ctx: StepContext) -> bool:
    return ctx.step is not None and is_submit(ctx.step.action.kind, ctx.candidate, reversible=ctx.step.reversible)
