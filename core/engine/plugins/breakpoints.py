"""Breakpoints as a plugin of the step kernel: says when the run pauses by itself (:mod:`core.engine.breakpoints`).

:class:`BreakpointPlugin` answers the kernel's ``breakpoint_hit`` decision
before each phase and after a failed attempt: the one-line reason when a
step or conditional breakpoint fires, None otherwise.  The breakpoints are
the run control's (``control.breakpoints``, a
:class:`~core.engine.breakpoints.Breakpoints`, set by the studio's
:class:`~core.engine.events.SetBreakpoints`); a control without them or
without ``break_here`` (the headless command line) never pauses.  The
kernel pauses through ``control.break_here``.
"""
from __future__ import annotations

from core.engine.breakpoints import Breakpoints, evaluate, facts_of
from core.engine.hooks import BreakpointHit, FlowBegins, Ports, hookimpl

__all__ = ["BreakpointPlugin"]


class BreakpointPlugin:
    """Decides the breakpoint pauses of a run; each breakpoint fires at most once per attempt of a step.

    Parameters
    ----------
    ports : Ports
        Uses ``control`` (its ``breakpoints`` and ``break_here``).
    """

    def __init__(self, ports: Ports) -> None:
        self.ports = ports
        #: The kinds that fired per (run id, step index, attempt) of the current run.
        self.fired: dict[tuple[str, int, int], set[str]] = {}

    @hookimpl
    def flow_begins(self, p: FlowBegins) -> None:
        self.fired.clear()  # a new run: what fired in the last one is forgotten

    @hookimpl
    def breakpoint_hit(self, p: BreakpointHit) -> str | None:
        """``"step 2 'Submit', before it starts; ..."`` when breakpoints fire before ``p.phase``, else None."""
        control = self.ports.control
        bps = getattr(control, "breakpoints", None)
        if not isinstance(bps, Breakpoints) or bps.empty or getattr(control, "break_here", None) is None:
            return None
        ctx = p.step
        done = self.fired.setdefault((ctx.run.run_id, ctx.index, ctx.attempt), set())
        hits = evaluate(bps, facts_of(ctx, p.phase), done)
        if not hits:
            return None
        done.update(h.kind for h in hits)
        return "; ".join(h.reason for h in hits)
