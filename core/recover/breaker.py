"""Circuit breaker over consecutive failed attempts (R4).

closed -> open after ``threshold`` consecutive failures (default 3; read-only
actions tolerate more: ``read_only_threshold``, default 5); open ->
half_open after ``recovery_timeout_s`` (default 300 s) or when a human
resumes; half_open lets one probe through and closes on success, re-opens on
failure.  The clock is injected so tests need no sleeping.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Literal

from core.domain.settings import BreakerSettings

__all__ = ["CircuitBreaker", "BreakerState"]

BreakerState = Literal["closed", "open", "half_open"]
#: The one place of the thresholds' defaults (3, 5, 300 s; R4).
_DEFAULTS = BreakerSettings()


@dataclass
class CircuitBreaker:
    """A per-run circuit breaker.

    Parameters
    ----------
    threshold : int
        Consecutive failures that open it (3, R4).
    read_only_threshold : int
        Threshold when the failing actions are read-only (R4: more tolerant).
    recovery_timeout_s : float
        Seconds in ``open`` before ``half_open`` (300, R4).
    clock : Callable[[], float]
        Monotonic clock in seconds.
    """

    threshold: int = _DEFAULTS.threshold
    read_only_threshold: int = _DEFAULTS.read_only_threshold
    recovery_timeout_s: float = _DEFAULTS.recovery_timeout_s
    clock: Callable[[], float] = field(default=time.monotonic)
    state: BreakerState = "closed"
    failures: int = 0
    opened_at: float | None = None
    last_reason: str = ""

    def limit(self, *, read_only: bool = False) -> int:
        return self.read_only_threshold if read_only else self.threshold

    def allow(self) -> bool:
        """True when an attempt may run now (moves open -> half_open after the timeout)."""
        if self.state == "open" and self.opened_at is not None and self.clock() - self.opened_at >= self.recovery_timeout_s:
            self.state = "half_open"
        return self.state != "open"

    def half_open(self) -> None:
        """Let one probe through now (a human resumed the run)."""
        if self.state == "open":
            self.state = "half_open"

    def record_success(self) -> None:
        self.failures = 0
        self.state = "closed"
        self.opened_at = None
        self.last_reason = ""

    def record_failure(self, reason: str = "", *, read_only: bool = False) -> BreakerState:
        """Count a failed attempt; returns the new state."""
        self.failures += 1
        self.last_reason = reason
        if self.state == "half_open" or self.failures >= self.limit(read_only=read_only):
            self.state = "open"
            self.opened_at = self.clock()
        return self.state
