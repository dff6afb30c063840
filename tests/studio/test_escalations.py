"""Escalations panel: shown with context; closed when the run goes on."""
from __future__ import annotations

from core.engine.events import EscalationRaised, Resumed, RunFinished
from studio.testing import sample_run_events
from studio.views.escalations import EscalationsPanel, escalation_html


def _esc(index: int = 5) -> EscalationRaised:
    return EscalationRaised("r1", "login_lockout", index, "Click Unlock account", "locator abstained: margin 0.02",
                            candidates=("link Unlock account in G6 0.78", "button Unlock account in J10 0.76"),
                            side_effects=("step 4: Click Sign in (irreversible, done)",))


def test_escalation_is_listed_selected_and_detailed(qtbot) -> None:  # noqa: ANN001
    panel = EscalationsPanel()
    qtbot.addWidget(panel)
    assert panel.header.text() == "No escalations"
    panel.apply(_esc())
    assert panel.model.rowCount() == 1 and panel.model.open_count == 1
    assert panel.list.currentIndex().row() == 0
    text = panel.details.toPlainText()
    for part in ("Step 6: Click Unlock account", "locator abstained", "G6 0.78", "J10 0.76",
                 "Click Sign in (irreversible, done)", "The run waits for you"):
        assert part in text
    assert panel.header.text() == "1 open \u00b7 1 in this run"


def test_escalation_closes_when_the_run_resumes_or_ends(qtbot) -> None:  # noqa: ANN001
    panel = EscalationsPanel()
    qtbot.addWidget(panel)
    panel.apply(_esc(1))
    panel.apply(Resumed("r1"))
    panel.apply(_esc(3))
    assert [e.state for e in panel.model.items] == ["resumed", "open"]
    panel.apply(RunFinished("r1", ()))
    assert [e.state for e in panel.model.items] == ["resumed", "closed"]
    assert "The run waits for you" not in panel.details.toPlainText()
    assert panel.header.text() == "0 open \u00b7 2 in this run"


def test_sample_run_escalates_with_context() -> None:
    events = [e for e in sample_run_events() if isinstance(e, EscalationRaised)]
    assert len(events) == 1
    html = escalation_html(None)
    assert "No escalation" in html
    ev = events[0]
    assert ev.index == 5 and "abstained" in ev.reason
    assert any("J10" in c for c in ev.candidates) and len(ev.side_effects) == 2
