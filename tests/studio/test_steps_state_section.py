"""The step details show the state module's belief and the ring buffer (S2, S3) from StateNoted events."""
from __future__ import annotations

from core.domain.belief import Belief
from core.engine.events import FlowStarted, StateNoted
from studio.views.steps import StepsModel, step_details_html


def test_state_noted_events_fill_the_state_section(qtbot):
    model = StepsModel()
    model.apply(FlowStarted("r1", "f", ("Submit the request",)))
    before = Belief("incomplete", 0.85, ("Submit is disabled because Reason is empty",), (("0:3", "x"),))
    after = Belief("waiting_server", 0.9, ("a spinner after 'Submit': waiting for the server (spinner)",))
    model.apply(StateNoted("r1", "f", 0, "before", before, "before submit", "d1", ("#1 start before incomplete (0.85)",)))
    model.apply(StateNoted("r1", "f", 0, "after", after, "after submit", "d2",
                           ("#1 start before incomplete (0.85)", "#2 step 1 after waiting_server (0.90)")))
    model.apply(StateNoted("r2", "other", 0, "after", after))  # another flow: not this row
    row = model.row(0)
    assert [s[0] for s in row.states] == ["before", "after"]
    html = step_details_html(row)
    assert "state (belief)" in html.lower() and "incomplete (0.85)" in html and "[before submit]" in html
    assert "Submit is disabled because Reason is empty" in html
    assert "waiting for the server" in html and "Recent states (2 kept, last 6)" in html
