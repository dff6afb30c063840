"""Steps model and panel: rows follow engine events; selecting a row shows its details."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from core.domain import (
    BBox, Candidate, ElementDescriptor, Resolution, RunResult, ScoredCandidate, StepOutcome, Verdict,
)
from core.engine.events import (
    PHASES, EscalationRaised, FlowFinished, FlowStarted, HandedBack, PhaseChanged, StepFinished, StepStarted,
    TakeoverStarted, TargetResolved, VerdictReached,
)
from studio.testing import sample_run_events
from studio.theme import STATUS_COLORS
from studio.views.steps import StepsModel, StepsPanel, step_details_html

M = StepsModel
RUN = "r1"


def _flow_started(n: int = 3) -> FlowStarted:
    return FlowStarted(RUN, "login", tuple(f"Step {i + 1}" for i in range(n)))


def _cell(model: StepsModel, row: int, col: int, role: Qt.ItemDataRole = Qt.ItemDataRole.DisplayRole) -> object:
    return model.data(model.index(row, col), role)


@pytest.fixture
def model(qtbot) -> StepsModel:  # noqa: ANN001
    m = StepsModel()
    m.apply(_flow_started())
    return m


def test_flow_started_lists_pending_steps(model: StepsModel) -> None:
    assert model.current_flow == "login" and model.rowCount() == 3
    assert [_cell(model, r, M.COL_INDEX) for r in range(3)] == ["1", "2", "3"]
    assert _cell(model, 1, M.COL_TITLE) == "Step 2"
    assert _cell(model, 0, M.COL_STATUS) == "pending"
    assert [model.headerData(c, Qt.Orientation.Horizontal) for c in range(7)] == [
        "#", "Step", "Status", "Strategy", "Score", "Verdict", "ms"]


def test_rows_update_through_a_step(qtbot, model: StepsModel) -> None:  # noqa: ANN001
    with qtbot.waitSignal(model.dataChanged, timeout=1000):
        model.apply(StepStarted(RUN, "login", 1, "Step 2", 1))
    assert _cell(model, 1, M.COL_STATUS) == "running"
    model.apply(PhaseChanged(RUN, "login", 1, "resolve"))
    assert _cell(model, 1, M.COL_STATUS) == "running \u00b7 resolve"
    cand = Candidate("0:3", ElementDescriptor(role="button", name="Log in", bbox=BBox(1, 2, 3, 4)))
    res = Resolution("fuzzy_text", "0:3", 0.874, 0.4, 3.0, reason="label similarity 0.87",
                     top=(ScoredCandidate("0:3", 0.874, "Log in"),))
    model.apply(TargetResolved(RUN, "login", 1, res, cand))
    assert (_cell(model, 1, M.COL_STRATEGY), _cell(model, 1, M.COL_SCORE)) == ("similar text", "0.87")  # no code
    model.apply(VerdictReached(RUN, "login", 1, Verdict("changed_unexpectedly", "value", ("url",), "navigated away")))
    assert _cell(model, 1, M.COL_VERDICT) == "changed unexpectedly"  # words, as the timeline says it
    model.apply(StepFinished(RUN, "login", 1, "failed", True, 1234.4))
    assert _cell(model, 1, M.COL_STATUS) == "failed"
    assert _cell(model, 1, M.COL_MS) == "1,234"
    assert _cell(model, 1, M.COL_STATUS, Qt.ItemDataRole.ForegroundRole).color().name() == STATUS_COLORS["failed"]
    row = model.row(1)
    assert row.healed and row.target_label == "Log in" and row.verdict_reason == "navigated away"


def test_abstained_and_escalated(model: StepsModel) -> None:
    res = Resolution("", None, 0.78, 0.02, 9.0, abstained=True, reason="two equal candidates")
    model.apply(TargetResolved(RUN, "login", 2, res, None))
    model.apply(EscalationRaised(RUN, "login", 2, "Step 3", "locator abstained"))
    assert _cell(model, 2, M.COL_STRATEGY) == "not found"
    assert _cell(model, 2, M.COL_SCORE) == "\u2014"  # nothing was picked: no score reads like a match
    assert _cell(model, 2, M.COL_STATUS) == "escalated"
    assert _cell(model, 2, M.COL_STATUS, Qt.ItemDataRole.ForegroundRole).color().name() == STATUS_COLORS["escalated"]


def test_targetless_finished_step_shows_a_dash_for_strategy(model: StepsModel) -> None:
    model.apply(StepStarted(RUN, "login", 0, "Step 1", 1))
    assert _cell(model, 0, M.COL_STRATEGY) == ""
    model.apply(StepFinished(RUN, "login", 0, "passed", False, 10))
    assert _cell(model, 0, M.COL_STRATEGY) == "\u2014"


def test_flow_finished_marks_an_interrupted_step_stopped(model: StepsModel) -> None:
    model.apply(StepStarted(RUN, "login", 0, "Step 1", 1))
    model.apply(StepFinished(RUN, "login", 0, "passed", False, 10))
    model.apply(StepStarted(RUN, "login", 1, "Step 2", 1))
    out = StepOutcome(0, "s1", "Step 1", "passed", None, None, 1, 12.0)
    model.apply(FlowFinished(RUN, RunResult(RUN, "login", "stopped", (out,), 0, 0, 1.0)))
    assert [model.row(i).status for i in range(3)] == ["passed", "stopped", "pending"]


def test_events_of_another_flow_do_not_touch_the_shown_rows(model: StepsModel) -> None:
    model.apply(StepStarted(RUN, "other", 0, "Elsewhere", 1))
    assert model.rowCount() == 3 and model.row(0).status == "pending"
    assert model.rows("other")[0].status == "running"
    assert model.flow_names() == ["login", "other"]


def test_details_html_explains_resolution_and_verdict() -> None:
    events = sample_run_events()
    m = StepsModel()
    for e in events:
        m.apply(e)
    html = step_details_html(m.row(3))
    assert "found by meaning" in html and "0.84" in html and "SEMANTIC" in html
    assert "Log in" in html and "Sign up" in html  # top candidates
    assert "An error message appeared" in html  # verdict reason
    escalated = step_details_html(m.row(5))
    assert "Escalated:" in escalated and "the margin 0.02 is below 0.10" in escalated


def test_selecting_a_row_shows_its_details_and_stops_following(qtbot) -> None:  # noqa: ANN001
    panel = StepsPanel()
    qtbot.addWidget(panel)
    panel.apply(_flow_started())
    panel.apply(StepStarted(RUN, "login", 0, "Step 1", 1))
    assert panel.selected_row().index == 0  # follows the running step
    with qtbot.waitSignal(panel.step_selected, timeout=1000) as sig:
        panel.table.selectRow(2)
    assert sig.args[0].index == 2
    assert "Step 3" in panel.details.toPlainText()
    panel.apply(StepStarted(RUN, "login", 1, "Step 2", 1))
    assert panel.selected_row().index == 2  # the user's choice stays
    panel.apply(VerdictReached(RUN, "login", 2, Verdict("unchanged", "value", (), "nothing changed")))
    # the details pane refreshes, once for the burst of events (not on the GUI thread's time per event)
    qtbot.waitUntil(lambda: "nothing changed" in panel.details.toPlainText(), timeout=2000)
    assert panel.summary.text() == "0/3 done"


def test_flow_combo_switches_the_shown_flow(qtbot) -> None:  # noqa: ANN001
    panel = StepsPanel()
    qtbot.addWidget(panel)
    panel.apply(_flow_started())
    panel.apply(FlowStarted(RUN, "export", ("A", "B")))
    assert panel.flow_combo.currentText() == "export" and panel.model.rowCount() == 2
    panel.flow_combo.setCurrentText("login")
    assert panel.model.current_flow == "login" and panel.model.rowCount() == 3


@pytest.mark.parametrize(("status", "label"), [("stopped", "stopped"), ("error", "error"), ("manual", "by hand")])
def test_new_statuses_have_their_colour_and_label(model: StepsModel, status: str, label: str) -> None:
    model.apply(StepStarted(RUN, "login", 0, "Step 1", 1))
    model.apply(StepFinished(RUN, "login", 0, status, False, 10.0, "why"))
    assert _cell(model, 0, M.COL_STATUS) == label
    color = _cell(model, 0, M.COL_STATUS, Qt.ItemDataRole.ForegroundRole).color().name()
    assert color == STATUS_COLORS[status]
    assert color not in (STATUS_COLORS["pending"], STATUS_COLORS["passed"])
    assert "why" in str(_cell(model, 0, M.COL_STATUS, Qt.ItemDataRole.ToolTipRole))
    assert len({STATUS_COLORS[s] for s in ("stopped", "error", "manual", "failed", "escalated")}) == 5


def test_phases_and_takeover_show_in_the_status_column(model: StepsModel) -> None:
    model.apply(StepStarted(RUN, "login", 1, "Step 2", 1))
    for phase in PHASES:
        model.apply(PhaseChanged(RUN, "login", 1, phase))  # type: ignore[arg-type]
        assert _cell(model, 1, M.COL_STATUS) == f"running \u00b7 {phase}"
    assert "phase record (10/10)" in step_details_html(model.row(1))
    model.apply(TakeoverStarted(RUN, "login", 1))
    assert _cell(model, 1, M.COL_STATUS) == "taken over"
    assert "you have the page" in step_details_html(model.row(1))
    model.apply(HandedBack(RUN, "login", 2))
    model.apply(StepFinished(RUN, "login", 1, "manual", False, 900.0, "done by hand; continued from step 3"))
    assert _cell(model, 1, M.COL_STATUS) == "by hand"
    assert "By hand:" in step_details_html(model.row(1))


def test_details_show_the_time_per_phase(model: StepsModel) -> None:
    phase_ms = (("observe", 41.25), ("decide", 0.5), ("resolve", 12.0), ("act", 230.0), ("verify", 18.0))
    model.apply(StepFinished(RUN, "login", 0, "passed", False, 301.75, phase_ms=phase_ms, source="skill"))
    row = model.row(0)
    assert row.phase_ms == phase_ms and row.source == "skill"
    html = step_details_html(row)
    assert "Time per phase (ms)" in html and "decided by skill" in html
    for phase, ms in phase_ms:
        assert phase in html and f"{ms:,.1f}" in html
    assert "301.8" in html  # the total
    assert "Time per phase" not in step_details_html(model.row(1))  # not finished: no times


def test_sample_run_reports_phase_times() -> None:
    m = StepsModel()
    for e in sample_run_events():
        m.apply(e)
    phases = [p for p, _ms in m.row(1).phase_ms]
    assert phases == ["observe", "fingerprint", "decide", "resolve", "precheck", "checkpoint", "act", "settle",
                      "verify"]
    assert abs(sum(ms for _p, ms in m.row(1).phase_ms) - 160) < 1


def test_the_details_say_stopped_and_the_verdict_in_plain_words(model: StepsModel) -> None:
    """trial: "Error: stopped by the user" for a Stop, "expected overlay_open", "STATE (BELIEF)", "fuzzy_text"."""
    from studio.views.steps import step_details_html

    res = Resolution("fuzzy_text", "0:3", 0.874, 0.4, 3.0, reason="label similarity 0.87")
    model.apply(StepStarted(RUN, "login", 1, "Step 2", 1))
    model.apply(TargetResolved(RUN, "login", 1, res, None))
    model.apply(VerdictReached(RUN, "login", 1, Verdict("unchanged", "overlay_open", ("no_change",), "nothing")))
    model.apply(StepFinished(RUN, "login", 1, "stopped", False, 12.0, error="stopped by the user"))
    html = step_details_html(model.row(1))
    assert "Stopped" in html and "Error:" not in html and "stopped by the user" not in html
    assert "overlay open" in html and "overlay_open" not in html and "no_change" not in html
    assert "fuzzy_text" not in html and "found by similar text" in html
    assert "belief" not in html.lower()

