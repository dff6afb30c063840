"""Event log: one short line per event, in plain words (issue 23: no snake_case, no reprs, no image bytes)."""
from __future__ import annotations

import re

from PySide6.QtCore import Qt

from core.domain import EscalationCandidate, Verdict
from core.engine.events import (
    EscalationRaised, HandedBack, StepFinished, TakeoverActionRecorded, TakeoverFrame, TakeoverStarted,
    VerdictReached,
)
from studio.run_state import RunState
from studio.testing import FakeEngine
from studio.views.event_log import EventLog, describe_event


def test_event_log_lines_are_short_and_readable(qtbot) -> None:  # noqa: ANN001
    v = VerdictReached("r1", "f", 2, Verdict("as_expected", "overlay_open", ("overlay_open", "value"), "ok"))
    assert describe_event(v) == "Check of step 3: as expected (expected overlay open; seen overlay open, value)"
    s = StepFinished("r1", "f", 2, "passed", True, 532.68)
    assert describe_event(s) == "Step 3 passed in 533 ms \u00b7 healed"
    log = EventLog()
    qtbot.addWidget(log)
    log.apply(s)
    assert log.toPlainText().endswith("Step 3 passed in 533 ms \u00b7 healed")
    log.apply(TakeoverFrame("r1", "f", 2, b"\x89PNG\r\n\x1a\n" + b"\0" * 64, 1.0, "http://x/"))  # many a second
    assert "PNG" not in log.toPlainText() and log.toPlainText().count("\n") == 0
    log.apply(TakeoverActionRecorded("r1", "f", 2, ("Click Export report",)))
    assert log.toPlainText().endswith("Takeover action recorded: step 3, titles Click Export report")


def test_event_log_says_taken_over_and_handed_back() -> None:
    assert describe_event(TakeoverStarted("r1", "f", 5)) == "f: taken over at step 6 (you have the page)"
    assert describe_event(HandedBack("r1", "f", 6)) == "f: handed back, continuing from step 7"
    esc = EscalationRaised("r1", "f", 2, "Click", "two equal candidates",
                           (EscalationCandidate("0:1", "a", 0.5, None),), kind="breaker_open",
                           answers=("skip", "take_over"))
    assert describe_event(esc) == ("Escalated at step 3 (the circuit breaker is open): two equal candidates"
                                   " \u00b7 1 candidate \u00b7 you can: skip the step, take over")


def test_a_whole_run_in_the_window_logs_no_snake_case_no_reprs_no_bytes(qtbot, make_window) -> None:  # noqa: ANN001
    w = make_window(FakeEngine.factory(), run_on_show=True)
    w.show()
    qtbot.waitUntil(lambda: w.state is RunState.PAUSED, timeout=20000)
    qtbot.keyClick(w, Qt.Key.Key_F5)
    qtbot.waitUntil(lambda: w.state is RunState.FINISHED, timeout=20000)
    text = w.event_log.toPlainText()
    assert len(text.splitlines()) > 20
    for name in w.flow_names():  # the flows' own names are the user's, as written in their files
        text = text.replace(name, "FLOW")
    for bad in (r"\b[a-z]+_[a-z_]+\b", r"\w+\(\w+=", r"b'\\x", r"\b[A-Z][a-z]+[A-Z]\w+ step \d"):
        found = re.findall(bad, text)
        assert not found, (bad, found[:5])


def test_a_state_graph_change_is_one_plain_line_without_the_graphs_names() -> None:
    from core.engine.events import StateGraphChanged
    from core.state.graph import StateEdge, StateNode

    a = StateNode("a", "s-a", url="http://127.0.0.1/login", title="Sign in")
    b = StateNode("b", "s-b", url="http://127.0.0.1/requests", title="Leave requests")
    new = StateGraphChanged("r", "sort_table", 3, "flow:sort_table", a, b, StateEdge("a", "b", "e1", "click"),
                            False, True, True, False)
    assert describe_event(new) == "Step 4 led to Leave requests (a new page, a new action)"
    again = StateGraphChanged("r", "sort_table", 4, "flow:sort_table", b, b, StateEdge("b", "b", "e2", "click"))
    line = describe_event(again)
    assert line == "Step 5 led to Leave requests (seen before)"
    assert "flow:" not in line and "new source" not in line and "revisit" not in line


def test_engine_text_reaches_the_log_and_the_details_in_plain_words(qtbot) -> None:  # noqa: ANN001
    from core.engine.events import ActionPerformed, Paused
    from studio.plain_words import plain_words
    from studio.views.escalations import EscalationsPanel

    raw = ("button 'Save' (0:7) changed_unexpectedly after the wait (P6, S7); R1 baseline kept; "
           "Verdict(kind='as_expected', expected='overlay_open') crop b'\\x89PNG\\r\\n' "
           "<core.domain.Resolution object at 0x7f3a2b>")
    text = plain_words(raw)
    assert text.startswith("button 'Save' changed unexpectedly after the wait; baseline kept;"), text
    assert "link 'K2 building'" in plain_words("link 'K2 building' (0:12) was chosen (K2)")  # page text stays
    log = EventLog()
    qtbot.addWidget(log)
    log.apply(StepFinished("r1", "f", 2, "failed", False, 10.0, error=raw))
    log.apply(ActionPerformed("r1", "f", 2, "click", False, error=raw))
    log.apply(Paused("r1", "f", 2, raw))
    panel = EscalationsPanel()
    qtbot.addWidget(panel)
    panel.apply(EscalationRaised("r1", "f", 2, "Click Save", raw, (EscalationCandidate("0:7", "a", 0.5, None),),
                                 kind="abstained", answers=("skip",)))
    for shown in (log.toPlainText(), panel.details.toPlainText()):
        for bad in (r"\(\d+:\d+\)", r"\b[RSPK]\d+\b", r"\b[a-z]+_[a-z_]+\b", r"\w+\(\w+=", r"b'\\x", r"0x[0-9a-f]+"):
            assert not re.findall(bad, shown), (bad, shown)
        assert "changed unexpectedly" in shown and "button 'Save'" in shown
