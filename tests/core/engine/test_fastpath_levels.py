"""Evidence levels (core/engine/fastpath.py): which observation takes a screenshot (pure logic)."""
from __future__ import annotations

from types import SimpleNamespace

from core.engine import fastpath


def _ex(**kw):
    return SimpleNamespace(**{"screenshots": True, "evidence": None, "full_look": False, **kw})


def test_levels() -> None:
    assert fastpath.level_of(_ex()) == "full"  # an executor built without a level keeps the old behaviour
    assert fastpath.level_of(_ex(screenshots=False, evidence="full")) == "off"
    assert fastpath.level_of(_ex(evidence="failures")) == "failures"
    assert fastpath.level_of(_ex(evidence="nonsense")) == "full"


def test_screenshot_wanted_at_each_level() -> None:
    assert fastpath.screenshot_wanted(_ex(evidence="full"))
    assert not fastpath.screenshot_wanted(_ex(evidence="off", full_look=True))
    ex = _ex(evidence="failures")
    assert not fastpath.screenshot_wanted(ex)
    fastpath.begin_attempt(ex, SimpleNamespace(attempt=2))  # a retried step is looked at in full
    assert fastpath.screenshot_wanted(ex)
    fastpath.begin_attempt(ex, SimpleNamespace(attempt=1))  # the next step is not
    assert not fastpath.screenshot_wanted(ex)
