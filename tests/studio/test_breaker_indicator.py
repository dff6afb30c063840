"""Breaker indicator: state, counts and colour."""
from __future__ import annotations

import pytest

from core.engine.events import BreakerChanged, StepStarted
from studio.theme import BREAKER_COLORS
from studio.views.breaker import BreakerIndicator


@pytest.mark.parametrize(("state", "n", "text"), [
    ("closed", 0, "Breaker closed \u00b7 0/3"),
    ("half_open", 2, "Breaker half-open \u00b7 2/3"),
    ("open", 3, "Breaker OPEN \u00b7 3/3"),
])
def test_breaker_shows_state_and_failures(qtbot, state: str, n: int, text: str) -> None:  # noqa: ANN001
    b = BreakerIndicator()
    qtbot.addWidget(b)
    assert b.text() == "Breaker \u2014"
    b.apply(BreakerChanged("r1", state, n, 3))
    b.apply(StepStarted("r1", "f", 0, "t", 1))  # other events are ignored
    assert b.text() == text
    assert b.color().name() == BREAKER_COLORS[state]
    assert (b.state, b.failures, b.threshold) == (state, n, 3)
    assert not b.grab().isNull()

