"""Anti-loop (P8) and stagnation (K2): pure counters over the attempts of one run.

:class:`LoopGuard` (P8): the same action - kind, target element, value -
performed on the same page state (the light signature's digest, volatile
text normalized, S2/P4) ``repeats`` times within the last ``window``
performed attempts may not be performed again (3 in 5, P8).  Retries of one
step count like separate steps.  A human who answers "retry" grants exactly
one more attempt (:meth:`LoopGuard.grant_once`): P8 forbids the *agent* to
choose the action again, not a person.

:class:`Stagnation` (K2): a *round* is an attempt that performed its action
(retries included).  A round changed nothing real when the page state
after it is the state before it and the verdict was not "as expected", or
when it is a state already seen in the last ``memory`` states (a toggle
going back and forth, a dialog opened and closed again: S1's "repeated
triggering").  ``rounds`` such rounds in a row (3, K2) stop the run: a
round whose verification failed stops at once; one whose verification
passed (each click of a toggle "works") lets its step pass, and the next
attempt of an action that took part in those rounds is refused
(:meth:`Stagnation.blocks`) - a different action may still lead out.
Rounds that need no change (expected delta ``none``: hover, wait, assert,
screenshot) neither count nor reset; a round that reached a new state, or
changed what it was meant to without changing the digest (a scroll, a
focus move), resets the count.
"""
from __future__ import annotations

import hashlib
from collections import deque
from dataclasses import dataclass, field

from core.domain import BreakerSettings, ElementDescriptor, Step

__all__ = ["action_key", "LoopGuard", "Stagnation"]

_DEFAULTS = BreakerSettings()
#: Page states remembered for revisits (the S2 ring buffer: "the last 20-30 states").
_MEMORY = 20


def action_key(step: Step, target: ElementDescriptor | None, value: str) -> str:
    """A key naming one action on one element: kind, the element's place and role, the value's digest.

    The element is named by where it is (frame, shadow hosts, XPath or CSS
    path, id, role), not by its text, so a button whose label toggles is
    still the same button.  The value is hashed (it may be a secret; the key
    is kept in memory only).
    """
    a = step.action
    where = ""
    if target is not None:
        where = "|".join((target.frame, target.shadow, target.xpath or target.css_path, target.id, target.role))
        if not (target.xpath or target.css_path or target.id):
            where += "|" + target.label_text
    digest = hashlib.sha1(value.encode("utf-8", "replace")).hexdigest()[:12] if value else ""
    return f"{a.kind}|{where}|{digest}|{a.direction}|{a.distance}"


@dataclass
class LoopGuard:
    """P8 over the last ``window`` performed attempts of a run.

    Parameters
    ----------
    repeats : int
        Times the same action on the same state may be performed within the
        window before the next one is refused (3, P8).
    window : int
        Performed attempts looked back on (5, P8).
    """

    repeats: int = _DEFAULTS.loop_repeats
    window: int = _DEFAULTS.loop_window
    recent: deque[tuple[str, str]] = field(default_factory=deque)
    granted: bool = False

    def __post_init__(self) -> None:
        self.recent = deque(self.recent, maxlen=self.window)

    def count(self, key: str, state: str) -> int:
        """How often ``key`` was performed on ``state`` within the window."""
        return sum(1 for k, s in self.recent if (k, s) == (key, state))

    def check(self, key: str, state: str, *, title: str = "") -> str:
        """``""`` when the action may be performed now, else why not (one sentence, P8).

        A grant from :meth:`grant_once` is used up by the check it lets pass.
        """
        n = self.count(key, state)
        if n < self.repeats:
            return ""
        if self.granted:
            self.granted = False
            return ""
        what = f"'{title}'" if title else "this action"
        return (f"anti-loop: {what} was already done {n} times on this same page state within the last "
                f"{self.window} attempts (at most {self.repeats} in {self.window}); not doing it again")

    def record(self, key: str, state: str) -> None:
        """The action was performed on ``state``."""
        self.recent.append((key, state))

    def grant_once(self) -> None:
        """A human answered "retry": the next refused check passes once."""
        self.granted = True

    def reset(self) -> None:
        """Forget the window (a human took over and handed back)."""
        self.recent.clear()
        self.granted = False


@dataclass
class Stagnation:
    """K2 over the rounds of a run.

    Parameters
    ----------
    rounds : int
        Rounds in a row without a real state change that stop the run (3, K2).
    memory : int
        Page states remembered to recognise a revisit (20, S2).
    """

    rounds: int = _DEFAULTS.stagnation_rounds
    memory: int = _MEMORY
    seen: deque[str] = field(default_factory=deque)
    stale: list[tuple[str, str]] = field(default_factory=list)
    pending: str = ""

    def __post_init__(self) -> None:
        self.seen = deque(self.seen, maxlen=self.memory)

    @property
    def count(self) -> int:
        """Rounds in a row without a real state change so far."""
        return len(self.stale)

    def observe(self, before: str, after: str, *, verdict: str, expected: str, where: str = "", key: str = "") -> str:
        """Count one round; returns ``""``, or why the run stagnates once ``rounds`` are reached (K2).

        Parameters
        ----------
        before, after : str
            State digests before and after the round's action (S2).
        verdict : str
            The post-verification's kind (``as_expected``, ``unchanged``...).
        expected : str
            The action's expected delta (S5); ``none`` makes the round neutral.
        where : str
            How the round is named in the reason (``"step 2 'Save' attempt 1"``).
        key : str
            The round's action (:func:`action_key`), for :meth:`blocks`.

        When the count is reached on a round whose verdict was ``as_expected``
        the reason is also kept as :attr:`pending` (see :meth:`blocks`).
        """
        if expected == "none":
            self._remember(before, after)
            return ""
        if after == before:
            stale = "" if verdict == "as_expected" else "nothing changed"
        elif after in self.seen:
            stale = "back to a page state seen before"
        else:
            stale = ""
        self._remember(before, after)
        if not stale:
            self.stale.clear()
            self.pending = ""
            return ""
        self.stale.append((f"{where}: {stale}" if where else stale, key))
        if len(self.stale) < self.rounds:
            return ""
        last = [w for w, _ in self.stale[-self.rounds:]]
        why = (f"stagnation: {len(self.stale)} rounds in a row without a real state change (at most {self.rounds}): "
               + "; ".join(last))
        if verdict == "as_expected":
            self.pending = why
        return why

    def blocks(self, key: str) -> str:
        """``""``, or the pending stagnation when ``key`` is an action of the stagnant rounds (K2)."""
        if self.pending and key and any(k == key for _, k in self.stale[-self.rounds:]):
            return self.pending
        return ""

    def grant_once(self) -> None:
        """A human answered "retry": the pending stagnation no longer blocks (the next round counts again)."""
        self.pending = ""

    def _remember(self, before: str, after: str) -> None:
        for s in (before, after):
            if s and s not in self.seen:
                self.seen.append(s)

    def reset(self) -> None:
        """Forget the count (a human took over and handed back)."""
        self.stale.clear()
        self.pending = ""
