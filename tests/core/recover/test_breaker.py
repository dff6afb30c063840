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


# --- thresholds by risk, one probe, the context of an open breaker (R4) -------------------------


def test_writes_tolerate_fewer_failures(breaker: CircuitBreaker) -> None:
    assert breaker.limit(risk="write") == 2 < breaker.limit(risk="reversible") == 3 < breaker.limit(risk="read_only")
    assert breaker.record_failure("save failed", risk="write") == "closed"
    assert breaker.record_failure("save failed", risk="write") == "open"
    assert (breaker.failures, breaker.current_limit) == (2, 2)


def test_the_limit_is_that_of_the_failing_steps_risk(breaker: CircuitBreaker) -> None:
    for _ in range(3):
        breaker.record_failure("look", risk="read_only")
    assert breaker.state == "closed" and breaker.current_limit == 5
    assert breaker.record_failure("write", risk="write") == "open"  # 4 in a row, and a write allows 2
    assert breaker.current_limit == 2


def test_risk_of_a_step() -> None:
    from core.domain import Action, Step
    from core.recover.breaker import risk_of

    assert risk_of(Step("s", Action("click"))) == "reversible"
    assert risk_of(Step("s", Action("click"), read_only=True)) == "read_only"
    assert risk_of(Step("s", Action("hover"))) == "read_only"  # the action table says hover is read-only
    assert risk_of(Step("s", Action("click"), reversible=False)) == "write"
    assert risk_of(Step("s", Action("click"), reversible=False, read_only=True)) == "write"  # a write wins
    assert risk_of(None) == "reversible"


def test_half_open_lets_exactly_one_probe_through(breaker: CircuitBreaker, clock: Clock) -> None:
    for _ in range(3):
        breaker.record_failure("x")
    clock.advance(300)
    assert breaker.allow() and breaker.state == "half_open"
    assert not breaker.allow()  # a second attempt while the probe runs is refused
    assert not breaker.allow()
    breaker.record_success()
    assert breaker.allow() and breaker.allow() and breaker.state == "closed"


def test_a_failed_probe_reopens_without_counting_past_the_limit(breaker: CircuitBreaker) -> None:
    for i in range(3):
        breaker.record_failure(f"fail {i}", index=1, step_title="Save", attempt=i + 1)
    assert (breaker.state, breaker.failures, breaker.current_limit) == ("open", 3, 3)
    breaker.half_open()  # the studio's Resume
    assert breaker.allow()
    assert breaker.record_failure("probe failed", index=1, step_title="Save", attempt=4) == "open"
    assert (breaker.failures, breaker.current_limit, breaker.failed_probes) == (3, 3, 1)  # 3/3, never 4/3
    ctx = breaker.context()
    assert [f.reason for f in ctx.failures_seen] == ["fail 0", "fail 1", "fail 2", "probe failed"]
    assert ctx.failed_probes == 1


def test_a_human_retry_re_arms_a_probe_that_ended_without_a_result(breaker: CircuitBreaker) -> None:
    for _ in range(3):
        breaker.record_failure("x")
    breaker.half_open()
    assert breaker.allow()  # the probe starts, then ends without success or failure (an optional step skipped)
    assert not breaker.allow()
    breaker.half_open()
    assert breaker.allow()


def test_the_context_says_which_failures_opened_it_and_when_it_half_opens(breaker: CircuitBreaker,
                                                                           clock: Clock) -> None:
    from core.recover.breaker import describe_open

    breaker.record_failure("unrelated", index=0, step_title="Open", attempt=1)
    breaker.record_success()
    breaker.record_failure("nothing changed", index=1, step_title="Save", attempt=1)
    breaker.record_failure("nothing changed", index=2, step_title="Send", attempt=1, risk="write")
    assert breaker.state == "open"
    clock.advance(120)
    ctx = breaker.context()
    assert ctx.state == "open" and (ctx.failures, ctx.threshold) == (2, 2)
    assert [(f.index, f.step_title, f.risk) for f in ctx.failures_seen] == [(1, "Save", "reversible"),
                                                                            (2, "Send", "write")]
    assert ctx.seconds_to_half_open == pytest.approx(180.0)
    text = describe_open(ctx, ("step 1 'Open' wrote data",))
    assert text.startswith("circuit breaker open after 2 consecutive failures (limit 2): ")
    assert "step 2 'Save' attempt 1: nothing changed; step 3 'Send' attempt 1: nothing changed" in text
    assert "side effects so far: step 1 'Open' wrote data" in text
    assert "half-opens by itself in 180 s" in text
    assert "unrelated" not in text  # a success in between ended that run of failures
    clock.advance(180)
    assert breaker.context().seconds_to_half_open is None and breaker.state == "half_open"


def test_from_settings_takes_every_threshold() -> None:
    from core.domain import BreakerSettings

    b = CircuitBreaker.from_settings(BreakerSettings(threshold=4, read_only_threshold=7, write_threshold=1,
                                                     recovery_timeout_s=10.0))
    assert (b.threshold, b.read_only_threshold, b.write_threshold, b.recovery_timeout_s) == (4, 7, 1, 10.0)
    assert b.current_limit == 4


@pytest.mark.parametrize("kw", [{"threshold": 0}, {"write_threshold": 0}, {"loop_repeats": 4, "loop_window": 3},
                                {"recovery_timeout_s": -1.0}])
def test_breaker_settings_refuse_impossible_limits(kw: dict) -> None:
    from core.domain import BreakerSettings

    with pytest.raises(ValueError):
        BreakerSettings(**kw)
