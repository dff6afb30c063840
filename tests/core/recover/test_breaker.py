"""Circuit breaker (R4): closed -> open -> half_open -> closed/open, with an injected clock."""
from __future__ import annotations

import pytest

from core.recover.breaker import CircuitBreaker


class Clock:
    """A manual monotonic clock in seconds."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def breaker(clock: Clock) -> CircuitBreaker:
    return CircuitBreaker(clock=clock)


def test_defaults_are_seed_000_r4() -> None:
    b = CircuitBreaker()
    assert (b.threshold, b.read_only_threshold, b.recovery_timeout_s) == (3, 5, 300.0)
    assert b.state == "closed" and b.failures == 0 and b.allow()


def test_opens_after_three_consecutive_failures(breaker: CircuitBreaker, clock: Clock) -> None:
    assert breaker.record_failure("one") == "closed"
    assert breaker.record_failure("two") == "closed"
    assert breaker.allow()
    assert breaker.record_failure("three") == "open"
    assert breaker.failures == 3
    assert breaker.opened_at == clock.now
    assert breaker.last_reason == "three"
    assert not breaker.allow()


def test_read_only_failures_tolerate_five(breaker: CircuitBreaker) -> None:
    for _ in range(4):
        assert breaker.record_failure("look", read_only=True) == "closed"
    assert breaker.record_failure("look", read_only=True) == "open"
    assert breaker.limit(read_only=True) == 5 and breaker.limit() == 3


def test_a_non_read_only_failure_after_read_only_ones_uses_the_strict_threshold(breaker: CircuitBreaker) -> None:
    breaker.record_failure(read_only=True)
    breaker.record_failure(read_only=True)
    assert breaker.record_failure("write") == "open"


def test_success_resets_the_count(breaker: CircuitBreaker) -> None:
    breaker.record_failure("a")
    breaker.record_failure("b")
    breaker.record_success()
    assert breaker.failures == 0 and breaker.last_reason == ""
    assert breaker.record_failure("c") == "closed"
    assert breaker.record_failure("d") == "closed"
    assert breaker.record_failure("e") == "open"


def test_half_open_after_the_recovery_timeout(breaker: CircuitBreaker, clock: Clock) -> None:
    for _ in range(3):
        breaker.record_failure("x")
    clock.advance(299.9)
    assert not breaker.allow()
    assert breaker.state == "open"
    clock.advance(0.1)
    assert breaker.allow()
    assert breaker.state == "half_open"


def test_probe_failure_reopens(breaker: CircuitBreaker, clock: Clock) -> None:
    for _ in range(3):
        breaker.record_failure("x")
    clock.advance(300)
    assert breaker.allow()
    # a single failed probe re-opens even though it alone is below the threshold
    assert breaker.record_failure("probe failed") == "open"
    assert breaker.opened_at == clock.now
    assert not breaker.allow()
    clock.advance(150)
    assert not breaker.allow()  # the timeout restarts from the re-opening
    clock.advance(150)
    assert breaker.allow() and breaker.state == "half_open"


def test_probe_success_closes(breaker: CircuitBreaker, clock: Clock) -> None:
    for _ in range(3):
        breaker.record_failure("x")
    clock.advance(300)
    assert breaker.allow()
    breaker.record_success()
    assert breaker.state == "closed" and breaker.failures == 0 and breaker.opened_at is None
    assert breaker.record_failure("again") == "closed"  # a fresh count


def test_a_human_resume_half_opens_at_once(breaker: CircuitBreaker) -> None:
    for _ in range(3):
        breaker.record_failure("x")
    breaker.half_open()
    assert breaker.state == "half_open" and breaker.allow()


def test_half_open_is_a_no_op_when_closed(breaker: CircuitBreaker) -> None:
    breaker.half_open()
    assert breaker.state == "closed"


def test_custom_thresholds_and_timeout(clock: Clock) -> None:
    b = CircuitBreaker(threshold=1, read_only_threshold=2, recovery_timeout_s=0.0, clock=clock)
    assert b.record_failure() == "open"
    assert b.allow() and b.state == "half_open"  # zero timeout: the next attempt is a probe
