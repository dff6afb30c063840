"""Circuit breaker over consecutive failed attempts, with thresholds by risk (R4).

closed -> open after N consecutive failed attempts, where N is the limit of
the risk class of the step whose failure is being counted: ``read_only``
steps tolerate more (5), ordinary ``reversible`` ones 3, ``write`` steps
(irreversible) fewer (2) (:class:`~core.domain.BreakerSettings`, R4).
open -> half_open after ``recovery_timeout_s`` (300 s, R4) or when a human
resumes (answers "retry"); half_open lets exactly **one** probe through:
its success closes the breaker, its failure re-opens it at once (the count
stays at the limit - a failed probe is not a fourth failure of three, it is a
failed probe, counted in ``failed_probes``).  An attempt refused because the
breaker is open is not a failure of the page and is not counted.

The clock is injected so tests need no sleeping; everything here is pure.
"""
from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Literal

from core.progress import counted
from core.act.space import spec
from core.domain import BreakerContext, BreakerFailure, BreakerSettings, Step

__all__ = ["CircuitBreaker", "BreakerState", "Risk", "risk_of", "describe_open"]

BreakerState = Literal["closed", "open", "half_open"]
#: Risk class of a step (R4): read-only actions, ordinary reversible ones, writes.
Risk = Literal["read_only", "reversible", "write"]
#: The one place of the thresholds' defaults (3, 5, 2, 300 s; R4).
_DEFAULTS = BreakerSettings()
#: Failures kept for the escalation's context (the last ones, oldest first).
_KEPT = 10


def risk_of(step: Step | None) -> Risk:
    """The risk class of ``step`` (R4): irreversible = ``write`` (wins over read-only); read-only when the
    step says so or its action kind is read-only in the action-space table (hover, scroll, wait, assert,
    screenshot); else ``reversible``.  None (no step decided yet) is ``reversible``.
    """
    if step is None:
        return "reversible"
    if not step.reversible:
        return "write"
    try:
        kind_read_only = spec(step.action.kind).read_only
    except KeyError:
        kind_read_only = False
    return "read_only" if step.read_only or kind_read_only else "reversible"


@dataclass
class CircuitBreaker:
    """A per-run circuit breaker (R4).

    Parameters
    ----------
    threshold : int
        Consecutive failures that open it for an ordinary step (3, R4).
    read_only_threshold : int
        The same for read-only steps (5: they tolerate more, R4).
    recovery_timeout_s : float
        Seconds in ``open`` before ``half_open`` (300, R4).
    clock : Callable[[], float]
        Monotonic clock in seconds.
    write_threshold : int
        The same for writes (2: they tolerate fewer, R4).
    """

    threshold: int = _DEFAULTS.threshold
    read_only_threshold: int = _DEFAULTS.read_only_threshold
    recovery_timeout_s: float = _DEFAULTS.recovery_timeout_s
    clock: Callable[[], float] = field(default=time.monotonic)
    write_threshold: int = _DEFAULTS.write_threshold
    state: BreakerState = "closed"
    failures: int = 0
    opened_at: float | None = None
    last_reason: str = ""
    #: The limit that applies now: that of the last counted failure's risk (or the one that opened it).
    current_limit: int = 0
    #: Half-open probes that failed in a row (reset by a success).
    failed_probes: int = 0
    #: True while the one half-open probe is under way (a second attempt is refused).
    probing: bool = False
    history: deque[BreakerFailure] = field(default_factory=lambda: deque(maxlen=_KEPT))

    def __post_init__(self) -> None:
        if not self.current_limit:
            self.current_limit = self.threshold

    @classmethod
    def from_settings(cls, settings: BreakerSettings, *, clock: Callable[[], float] = time.monotonic
                      ) -> "CircuitBreaker":
        """A closed breaker with the project's thresholds."""
        return cls(settings.threshold, settings.read_only_threshold, settings.recovery_timeout_s, clock,
                   settings.write_threshold)

    def limit(self, *, read_only: bool = False, risk: Risk | None = None) -> int:
        """Consecutive failures that open the breaker for a step of ``risk`` (``read_only=True``: read-only)."""
        risk = risk or ("read_only" if read_only else "reversible")
        return {"read_only": self.read_only_threshold, "write": self.write_threshold}.get(risk, self.threshold)

    def _tick(self) -> None:
        if self.state == "open" and self.opened_at is not None and \
                self.clock() - self.opened_at >= self.recovery_timeout_s:
            self.state = "half_open"
            self.probing = False

    def allow(self) -> bool:
        """True when an attempt may run now.

        Moves open -> half_open once the recovery timeout has passed; in
        half_open the first call grants the one probe and later calls are
        refused until that probe's result is recorded.
        """
        self._tick()
        if self.state == "open":
            return False
        if self.state == "half_open":
            if self.probing:
                return False
            self.probing = True
        return True

    def half_open(self) -> None:
        """Let one probe through now (a human resumed or answered "retry").

        Also re-arms a half-open breaker whose probe ended without a result
        (an optional step skipped), so a human's retry is never refused.
        """
        if self.state in ("open", "half_open"):
            self.state = "half_open"
            self.probing = False

    def seconds_to_half_open(self) -> float | None:
        """Seconds until the open breaker half-opens by itself; None when it is not open."""
        self._tick()
        if self.state != "open" or self.opened_at is None:
            return None
        return max(0.0, self.recovery_timeout_s - (self.clock() - self.opened_at))

    def record_success(self) -> None:
        """A passed attempt: closed, count and history cleared."""
        self.failures = 0
        self.state = "closed"
        self.opened_at = None
        self.last_reason = ""
        self.failed_probes = 0
        self.probing = False
        self.history.clear()

    def record_failure(self, reason: str = "", *, read_only: bool = False, risk: Risk | None = None,
                       index: int = -1, step_title: str = "", attempt: int = 0) -> BreakerState:
        """Count a failed attempt; returns the new state.

        A failure in half_open (the probe) re-opens at once and restarts the
        recovery timeout; the count stays at the limit that had opened it.
        """
        risk = risk or ("read_only" if read_only else "reversible")
        self.last_reason = reason
        self.history.append(BreakerFailure(index, step_title, attempt, reason, risk))
        self.probing = False
        if self.state == "half_open":
            self.failed_probes += 1
            self.failures = max(self.failures, self.current_limit)
            self.state, self.opened_at = "open", self.clock()
            return self.state
        if self.state == "open":  # counted while already open (should not happen): keep it open
            return self.state
        self.failures += 1
        self.current_limit = self.limit(risk=risk)
        if self.failures >= self.current_limit:
            self.state = "open"
            self.opened_at = self.clock()
        return self.state

    def context(self) -> BreakerContext:
        """The breaker as an escalation shows it (R4): count, limit, failures, time to half-open."""
        n = self.failures + self.failed_probes
        return BreakerContext(self.state, self.failures, self.current_limit, tuple(self.history)[-n:] if n else (),
                              self.seconds_to_half_open(), self.failed_probes)


def describe_open(ctx: BreakerContext, side_effects: tuple[str, ...] = ()) -> str:
    """The plain message of an open breaker (R4): why, the failures that opened it, side effects, timeout.

    ``"circuit breaker open after 3 consecutive failures (limit 3): step 2 'Save' attempt 1: unchanged;
    ...; side effects so far: none; half-opens by itself in 300 s, or answer Retry to probe once now"``.
    """
    seen = "; ".join(f"step {f.index + 1} '{f.step_title}' attempt {f.attempt}: {f.reason}" if f.index >= 0
                     else f.reason for f in ctx.failures_seen) or "no failure recorded"
    probes = f", then {counted(ctx.failed_probes, 'failed probe')}" if ctx.failed_probes else ""
    effects = "; ".join(side_effects) or "none"
    when = (f"half-opens by itself in {ctx.seconds_to_half_open:.0f} s, or a retry probes once now"
            if ctx.seconds_to_half_open is not None else "half-open: the next attempt is the one probe")
    return (f"circuit breaker open after {ctx.failures} consecutive failures (limit {ctx.threshold}){probes}: "
            f"{seen}; side effects so far: {effects}; {when}")
