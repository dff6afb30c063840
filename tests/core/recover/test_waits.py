"""Learnt settle budgets (S7): per page pattern and action kind, bounded, longer for submits."""
from __future__ import annotations

import pytest

from core.domain import WaitSettings
from core.recover.waits import WaitLearner, bound_reason, url_pattern


@pytest.mark.parametrize("url, pattern", [
    ("http://127.0.0.1:8000/requests/42/edit?x=1#top", "/requests/{n}/edit"),
    ("http://h/o/3f2504e0-4f89-11d3-9a0c-0305e82c3301", "/o/{uuid}"),
    ("http://h/commit/0123456789abcdef0123", "/commit/{hex}"),
    ("http://h/s/Ab3dEf9hIj2LmN0pQr7sTu", "/s/{token}"),
    ("http://h/", "/"),
    ("http://h", "/"),
    ("http://h/books/search", "/books/search"),
])
def test_url_patterns_hide_ids(url: str, pattern: str) -> None:
    assert url_pattern(url) == pattern


def test_without_samples_the_budget_is_the_p6_default_and_submits_get_twice_as_long() -> None:
    learner = WaitLearner(WaitSettings())
    b = learner.budget("http://h/a", "click")
    assert (b.idle_ms, b.limit_ms, b.samples) == (500.0, 30000.0, 0)
    s = learner.budget("http://h/a", "click", long=True)
    assert (s.idle_ms, s.limit_ms) == (1000.0, 60000.0)
    assert s.key.endswith(" submit") and s.key != b.key


def test_a_page_that_changes_late_gets_a_longer_idle_wait_next_time() -> None:
    learner = WaitLearner(WaitSettings())
    b = learner.budget("http://h/requests/1", "click")
    learner.learn(b, {"ms": 500.0, "changed": False, "timed_out": False}, late_change_ms=900.0)
    later = learner.budget("http://h/requests/2", "click")  # same pattern
    assert later.samples == 1 and later.idle_ms == pytest.approx(900.0 + 4 * 450.0)
    assert learner.budget("http://h/other", "click").idle_ms == 500.0  # another page learnt nothing


def test_the_learnt_wait_converges_and_stays_within_its_bounds() -> None:
    learner = WaitLearner(WaitSettings())
    b = learner.budget("http://h/a", "click")
    for _ in range(40):
        learner.learn(b, {"ms": 800.0, "changed": True, "timed_out": False})
    idle = learner.budget("http://h/a", "click").idle_ms
    assert 800.0 <= idle < 820.0  # mean 800, the deviation decays towards 0
    fast = learner.budget("http://h/f", "click")
    for _ in range(10):
        learner.learn(fast, {"ms": 40.0, "changed": True, "timed_out": False})
    assert learner.budget("http://h/f", "click").idle_ms == 500.0  # never below P6's 500 ms
    slow = learner.budget("http://h/s", "click")
    learner.learn(slow, {"ms": 4000.0, "changed": True, "timed_out": False})
    assert learner.budget("http://h/s", "click").idle_ms == 5000.0  # never above S7's 5 s
    assert learner.budget("http://h/s", "click", long=True).idle_ms == 1000.0  # the submit key learnt nothing


def test_submit_samples_are_learnt_in_the_unscaled_unit() -> None:
    learner = WaitLearner(WaitSettings())
    b = learner.budget("http://h/a", "click", long=True)
    for _ in range(40):
        learner.learn(b, {"ms": 1600.0, "changed": True, "timed_out": False})
    assert learner.budget("http://h/a", "click", long=True).idle_ms == pytest.approx(1600.0, rel=0.02)


def test_unchanged_and_timed_out_waits_teach_nothing_and_a_timeout_is_a_reason() -> None:
    learner = WaitLearner(WaitSettings(loading_max_ms=2000))
    b = learner.budget("http://h/a", "click")
    learner.learn(b, {"ms": 500.0, "changed": False, "timed_out": False})
    assert learner.estimates == {} and bound_reason(b, {"ms": 500.0, "timed_out": False}) == ""
    hit = {"ms": 2003.0, "changed": True, "timed_out": True}
    learner.learn(b, hit)
    assert learner.estimates == {} and learner.bound_hits == 1
    # it ended "(2003 ms waited, S7)": no mechanism ID in a reason a person reads
    assert bound_reason(b, hit) == "the page was still loading when the wait hit its bound of 2 s (2003 ms waited)"
