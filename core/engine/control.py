"""How the step loop talks to whoever drives the run: pause points, escalation answers, takeover.

The loop calls :meth:`RunControl.pause_point` between every two phases of a
step; it may block (paused), raise :class:`StopRequested` (the user stopped
the run) or :class:`TakeoverRequested` (the user took the page).  When the
engine cannot go on alone it calls :meth:`RunControl.escalate` and gets an
:class:`Answer`; a takeover then blocks in :meth:`RunControl.take_over` until
the human hands control back with "continue from step N".
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from core.domain import Escalation, EscalationAnswerKind

__all__ = ["StopRequested", "TakeoverRequested", "Answer", "RunControl", "HeadlessControl", "continue_target"]


class StopRequested(BaseException):
    """The user asked the run to stop; the current step is recorded as ``stopped``.

    A :class:`BaseException`, like ``KeyboardInterrupt``: it is a request, not
    an error, and no ``except Exception`` on its way may swallow it.
    """


class TakeoverRequested(BaseException):
    """The user took over the page at a pause point (a :class:`core.engine.events.TakeOver` command).

    Raised only at pause points of a step (index >= 0); a BaseException for
    the same reason as :class:`StopRequested`.
    """


@dataclass(frozen=True, slots=True)
class Answer:
    """A human's answer to an escalation, or the end of a takeover.

    Attributes
    ----------
    kind : EscalationAnswerKind
        ``retry`` / ``skip`` / ``stop`` / ``take_over``.
    continue_from : int | None
        Only for the end of a takeover: the 0-based step index to continue
        from; None = the step the takeover began at.
    ref : str
        Only for ``use_candidate``: the ref of the escalation's candidate to use once.
    index, label : int, str
        Only for ``use_candidate``: the step index of the escalation answered and
        the candidate's label as the person saw it (-1 / "": not said).
    confirmed : bool
        Only for ``use_candidate``: the person confirmed a choice that needs it
        (an irreversible step, a role crossing).
    meaning : str | None
        Only for the end of a takeover: what the manual actions were for
        (``replace`` / ``insert`` / ``done``, :data:`core.engine.events.HandBackMeaning`).
    reason : str
        Why a takeover ended without a hand-back (e.g. its wait timed out); "" otherwise.
    """

    kind: EscalationAnswerKind
    continue_from: int | None = None
    ref: str = ""
    confirmed: bool = False
    index: int = -1
    label: str = ""
    meaning: str | None = None
    reason: str = ""


class RunControl(Protocol):
    """Pause, stop, escalation and takeover policy of one driver of the run (studio or CLI)."""

    def pause_point(self, run_id: str, flow: str, index: int, phase: str) -> None:
        """Called before each phase of step ``index`` (-1 before the first step).

        Blocks while paused. Raises :class:`StopRequested` or :class:`TakeoverRequested`.
        """

    def escalate(self, escalation: Escalation) -> Answer:
        """A human is needed; returns one of ``escalation.answers`` (blocks until answered)."""

    def take_over(self, run_id: str, flow: str, index: int) -> Answer:
        """The human has the page; blocks until hand-back and returns where to continue.

        Returns ``Answer("take_over", continue_from=N)`` on hand-back, or
        ``Answer("stop")``. Raises :class:`StopRequested` when stopped.
        """


class HeadlessControl:
    """Run control of the command line: never pauses; every escalation stops the flow."""

    def pause_point(self, run_id: str, flow: str, index: int, phase: str) -> None:
        return None

    def escalate(self, escalation: Escalation) -> Answer:
        return Answer("stop")

    def take_over(self, run_id: str, flow: str, index: int) -> Answer:
        return Answer("stop")


def continue_target(meaning: str | None, index: int, continue_from: int | None) -> int:
    """The step to continue from (0-based): ``continue_from`` when given, else by ``meaning``.

    ``replace`` and ``done``: the next step (the manual actions did this
    step's work); ``insert``: the same step, after the actions put before it;
    no meaning: the same step.
    """
    if continue_from is not None:
        return continue_from
    return index + 1 if meaning in ("replace", "done") else index
