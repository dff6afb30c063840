"""Event log: one short line per event."""
from __future__ import annotations

from core.domain import Verdict
from core.engine.events import StepFinished, VerdictReached
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
