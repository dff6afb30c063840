"""What the engine believes about the page it is on (S3): a state, a confidence and the evidence.

The belief is derived from the observation and the recent history by
:mod:`core.state.awareness`; pre-checks (S4, :mod:`core.act.precheck`) and
the adaptive waits (S7, :mod:`core.recover.waits`) read it, the studio shows
it in a step's details.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["BeliefState", "BELIEF_STATES", "Belief"]

#: What the page is doing, as the engine believes it:
#: ``ready`` nothing pending; ``waiting_server`` a loading indicator after an action that sent data
#: (a submit): the server is working; ``loading`` a loading indicator without such an action;
#: ``dialog`` a dialog is open (only its controls are reachable); ``incomplete`` a form whose
#: submit is disabled while required fields are empty; ``invalid`` validation errors are shown;
#: ``stuck`` the last action changed nothing or came back to a state seen just before.
BeliefState = Literal["ready", "waiting_server", "loading", "dialog", "incomplete", "invalid", "stuck"]
BELIEF_STATES: tuple[str, ...] = BeliefState.__args__  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class Belief:
    """The engine's belief about the current page (S3).

    Attributes
    ----------
    state : BeliefState
        The leading belief (see :data:`BeliefState`).
    confidence : float
        0..1; it grows while the same belief is seen again and again and
        drops when evidence is missing (a guess from few signals).
    evidence : tuple[str, ...]
        Sentences that support it, strongest first ("Submit is disabled
        because Reason is empty", "a spinner after 'Submit': waiting for the
        server"); secrets never appear (they come from masked observations).
    blocked : tuple[tuple[str, str], ...]
        ``(candidate ref, why it cannot be used now)`` for the controls the
        belief explains (a disabled submit and the empty required fields
        behind it); refs are those of the observation it was derived from.
    """

    state: BeliefState
    confidence: float
    evidence: tuple[str, ...] = ()
    blocked: tuple[tuple[str, str], ...] = ()

    def why_blocked(self, ref: str | None) -> str:
        """The belief's explanation for candidate ``ref``, ``""`` when it has none."""
        if ref is None:
            return ""
        return next((why for r, why in self.blocked if r == ref), "")

    @property
    def summary(self) -> str:
        """``"incomplete (0.80): Submit is disabled because Reason is empty"``."""
        head = f"{self.state} ({self.confidence:.2f})"
        return f"{head}: {self.evidence[0]}" if self.evidence else head
