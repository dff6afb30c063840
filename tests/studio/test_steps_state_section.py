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
    assert "what the page was like" in html.lower() and "belief" not in html.lower() and "incomplete (0.85)" in html and "[before submit]" in html
    assert "Submit is disabled because Reason is empty" in html
    assert "waiting for the server" in html and "Recent states (2 kept, last 6)" in html


def test_the_resolution_section_speaks_plain_words_without_element_refs(qtbot):
    """Seen in the studio: "exact: button 'Employee' (0:7) scored 0.90" and a column of "0:7" refs."""
    from core.domain import ScoredCandidate
    from studio.views.steps import StepRow

    row = StepRow(0, "Sort by employee", status="passed", strategy="exact", score=0.9, margin=0.9,
                  resolution_reason="fast path (R1): exact: button 'Employee' (0:7) scored 0.90",
                  top=(ScoredCandidate("0:7", 0.9, "Employee"), ScoredCandidate("0:9", 0.2, "")))
    html = step_details_html(row)
    assert "0:7" not in html and "0:9" not in html and "R1" not in html
    assert "button 'Employee' scored 0.90" in html and "Employee" in html and "an element without a name" in html
