"""Event log: one short line per event."""
from __future__ import annotations

from core.domain import EscalationCandidate, Verdict
from core.engine.events import EscalationRaised, HandedBack, StepFinished, TakeoverStarted, VerdictReached
from studio.views.event_log import EventLog, describe_event


def test_event_log_lines_are_short_and_readable(qtbot) -> None:  # noqa: ANN001
    v = VerdictReached("r1", "f", 2, Verdict("unchanged", "value", (), "nothing changed"))
    assert describe_event(v) == "VerdictReached step 3: unchanged (expected value; observed nothing)"
    s = StepFinished("r1", "f", 2, "passed", True, 532.68)
    assert describe_event(s) == "StepFinished step 3: passed in 533 ms \u00b7 healed"
    log = EventLog()
    qtbot.addWidget(log)
    log.apply(s)
    assert log.toPlainText().endswith("StepFinished step 3: passed in 533 ms \u00b7 healed")


def test_event_log_says_taken_over_and_handed_back() -> None:
    assert describe_event(TakeoverStarted("r1", "f", 5)) == "TakeoverStarted f: taken over at step 6"
    assert describe_event(HandedBack("r1", "f", 6)) == "HandedBack f: handed back, continuing from step 7"
    esc = EscalationRaised("r1", "f", 2, "Click", "two equal candidates",
                           (EscalationCandidate("0:1", "a", 0.5, None),), kind="abstained", answers=("skip", "stop"))
    assert describe_event(esc) == ("EscalationRaised step 3 (abstained): two equal candidates \u00b7 1 candidate"
                                   " \u00b7 answers skip/stop")
