"""Escalations panel: shown with context, answered with exactly the answers it accepts; the takeover bar."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from core.domain import BBox, EscalationCandidate
from core.engine.events import (
    EscalationRaised, HandBack, HandedBack, ObservationMade, Resumed, Retry, RunFinished, Skip, Stop, TakeOver,
    TakeoverStarted,
)
from core.perception.grid import Grid
from studio.samples import SAMPLE_VIEWPORT, sample_observation
from studio.testing import sample_run_events
from studio.views.escalations import (
    EscalationsPanel, TakeoverBanner, box_text, candidate_cell, escalation_html,
)

LINK = EscalationCandidate("0:9", "link \u201cUnlock account\u201d", 0.78, BBox(680, 492, 128, 20))
BUTTON = EscalationCandidate("0:10", "button \u201cUnlock account\u201d", 0.76, BBox(1098, 660, 158, 36))
NO_BOX = EscalationCandidate("0:3", "Forgot password?", 0.31, None)


def _esc(index: int = 5, answers: tuple[str, ...] = ("retry", "skip", "stop", "take_over"),
         kind: str = "abstained") -> EscalationRaised:
    return EscalationRaised("r1", "login_lockout", index, "Click Unlock account", "locator abstained: margin 0.02",
                            candidates=(LINK, BUTTON, NO_BOX),
                            side_effects=("step 4: Click Sign in (irreversible, done)",),
                            kind=kind, answers=answers)  # type: ignore[arg-type]


def _panel(qtbot) -> EscalationsPanel:  # noqa: ANN001
    panel = EscalationsPanel()
    qtbot.addWidget(panel)
    panel.resize(420, 640)
    panel.show()
    # the boxes refer to the page the step was resolved on: its viewport gives the grid cells
    panel.apply(ObservationMade("r1", "login_lockout", 5, "before", sample_observation("login_locked")))
    return panel


def test_escalation_is_listed_selected_and_detailed(qtbot) -> None:  # noqa: ANN001
    panel = _panel(qtbot)
    assert panel.header.text() == "No escalations"
    panel.apply(_esc())
    assert panel.model.rowCount() == 1 and panel.model.open_count == 1
    assert panel.list.currentIndex().row() == 0
    text = panel.details.toPlainText()
    for part in ("Step 6: Click Unlock account", "Locator abstained", "locator abstained: margin 0.02",
                 "Click Sign in (irreversible, done)", "The run waits for your answer"):
        assert part in text
    assert panel.header.text() == "1 open \u00b7 1 in this run"
    # the structured candidates: label, score, grid cell of the box centre (or the box), box in the tooltip
    rows = [[panel.candidates.topLevelItem(i).text(c) for c in range(4)]
            for i in range(panel.candidates.topLevelItemCount())]
    assert rows == [
        ["1", LINK.label, "0.78", "G6"],
        ["2", BUTTON.label, "0.76", "J10"],
        ["3", "Forgot password?", "0.31", "\u2014"],
    ]
    assert "box 1098,660 158\u00d736" in panel.candidates.topLevelItem(1).toolTip(1)
    assert "no box known" in panel.candidates.topLevelItem(2).toolTip(3)


def test_cell_and_box_text() -> None:
    assert candidate_cell(BUTTON, (1280, 720)) == "J10" and candidate_cell(LINK, (1280, 720)) == "G6"
    assert candidate_cell(BUTTON, None) == "" and candidate_cell(NO_BOX, (1280, 720)) == ""
    assert box_text(BBox(712.7, 106.0, 147.9, 39.8)) == "713,106 148\u00d740" and box_text(None) == "\u2014"


@pytest.mark.parametrize("answers", [
    ("retry", "skip", "stop", "take_over"), ("skip", "stop", "take_over"), ("stop",),
])
def test_only_the_accepted_answers_are_offered(qtbot, answers) -> None:  # noqa: ANN001
    panel = _panel(qtbot)
    panel.apply(_esc(answers=answers))
    order = ("retry", "skip", "take_over", "stop")
    assert panel.answers.shown() == tuple(a for a in order if a in answers)
    assert [b.text() for a, b in panel.answers.buttons.items() if b.isVisible()] == [
        {"retry": "Retry", "skip": "Skip step", "stop": "Stop", "take_over": "Take over"}[a]
        for a in order if a in answers]


@pytest.mark.parametrize(("answer", "command"), [
    ("retry", Retry()), ("skip", Skip()), ("stop", Stop()), ("take_over", TakeOver()),
])
def test_each_answer_button_sends_its_command(qtbot, answer, command) -> None:  # noqa: ANN001
    panel = _panel(qtbot)
    panel.apply(_esc())
    sent: list[object] = []
    panel.command_requested.connect(sent.append)
    qtbot.mouseClick(panel.answers.buttons[answer], Qt.MouseButton.LeftButton)
    assert sent == [command]
    # one answer per question: a second click sends nothing
    qtbot.mouseClick(panel.answers.buttons[answer], Qt.MouseButton.LeftButton)
    assert sent == [command]


def test_answers_disappear_once_the_run_goes_on(qtbot) -> None:  # noqa: ANN001
    panel = _panel(qtbot)
    panel.apply(_esc())
    assert panel.answers.isVisible()
    panel.apply(Resumed("r1"))
    assert not panel.answers.isVisible() and panel.model.items[0].state == "resumed"


def test_escalation_closes_when_the_run_resumes_or_ends(qtbot) -> None:  # noqa: ANN001
    panel = _panel(qtbot)
    panel.apply(_esc(1))
    panel.apply(Resumed("r1"))
    panel.apply(_esc(3))
    assert [e.state for e in panel.model.items] == ["resumed", "open"]
    panel.apply(RunFinished("r1", ()))
    assert [e.state for e in panel.model.items] == ["resumed", "closed"]
    assert "The run waits for you" not in panel.details.toPlainText()
    assert panel.header.text() == "0 open \u00b7 2 in this run"


def test_a_takeover_marks_the_escalation_taken_over_then_handed_back(qtbot) -> None:  # noqa: ANN001
    panel = _panel(qtbot)
    panel.apply(_esc(5))
    panel.apply(Resumed("r1"))  # the engine took the TakeOver answer
    panel.apply(TakeoverStarted("r1", "login_lockout", 5))
    assert panel.model.items[0].state == "taken over"
    assert "You have the page" in panel.details.toPlainText()
    panel.apply(HandedBack("r1", "login_lockout", 6))
    assert panel.model.items[0].state == "handed back"


def test_hovering_or_selecting_a_candidate_highlights_it(qtbot) -> None:  # noqa: ANN001
    panel = _panel(qtbot)
    seen: list[object] = []
    panel.candidate_highlighted.connect(seen.append)
    panel.apply(_esc())
    panel.select_candidate(1)
    assert seen[-1] == BUTTON and panel.selected_candidate() == BUTTON
    # hovering another row reports it; leaving the table goes back to the selection
    tree = panel.candidates
    rect = tree.visualItemRect(tree.topLevelItem(0))
    qtbot.mouseMove(tree.viewport(), rect.center())
    qtbot.waitUntil(lambda: seen[-1] == LINK, timeout=3000)
    panel._on_left()
    assert seen[-1] == BUTTON
    # once the run went on, the boxes are of an old page: nothing is highlighted
    panel.apply(Resumed("r1"))
    assert seen[-1] is None


def test_sample_run_escalates_with_context() -> None:
    events = [e for e in sample_run_events() if isinstance(e, EscalationRaised)]
    assert len(events) == 1
    html = escalation_html(None)
    assert "asks you here" in html and "No escalation" not in html  # the header says it, once
    ev = events[0]
    assert ev.index == 5 and "abstained" in ev.reason and ev.kind == "abstained"
    assert ev.answers == ("retry", "skip", "stop", "take_over") and len(ev.side_effects) == 2
    assert [(c.label, c.score) for c in ev.candidates] == [
        ("link \u201cUnlock account\u201d", 0.78), ("button \u201cUnlock account\u201d", 0.76),
        ("link \u201cForgot password?\u201d", 0.31)]
    grid = Grid(*map(float, SAMPLE_VIEWPORT))
    assert all(c.box is not None for c in ev.candidates)
    assert [grid.cell_of_box(c.box) for c in ev.candidates] == ["G6", "J10", "G5"]  # type: ignore[arg-type]


def test_takeover_banner_hands_back_with_the_0_based_step(qtbot) -> None:  # noqa: ANN001
    banner = TakeoverBanner()
    qtbot.addWidget(banner)
    sent: list[object] = []
    banner.command_requested.connect(sent.append)
    banner.begin("login_lockout", 5, [f"Step {i + 1}" for i in range(7)])
    assert banner.isVisible() and "You have the page" in banner.title.text()
    assert "Do the step yourself" in banner.title.text()
    banner.begin("login_lockout", 5, [f"Step {i + 1}" for i in range(7)], headless=True)
    # a headless page is reached through the live view: the human's input goes to the engine's page
    assert "live view" in banner.title.text() and "cannot be reached" not in banner.title.text()
    assert banner.continue_from.value() == 6  # 1-based: the step the takeover began at
    assert (banner.continue_from.minimum(), banner.continue_from.maximum()) == (1, 8)
    assert "the same step again" in banner.continue_title.text()
    banner.continue_from.setValue(7)
    assert banner.continue_title.text() == "Step 7"
    banner.continue_from.setValue(8)
    assert "end of the flow" in banner.continue_title.text()
    banner.continue_from.setValue(7)
    qtbot.mouseClick(banner.hand_back_button, Qt.MouseButton.LeftButton)
    assert sent == [HandBack(continue_from=6, meaning="insert")]  # nothing recorded: before the step
    banner.hand_back()  # once per takeover
    assert sent == [HandBack(continue_from=6, meaning="insert")]
    banner.end()
    assert not banner.isVisible() and not banner.active


def test_an_approval_is_answered_with_approve_and_the_next_question_says_retry_again(qtbot) -> None:  # noqa: ANN001
    panel = _panel(qtbot)
    panel.apply(_esc(kind="approval"))
    retry = panel.answers.buttons["retry"]
    assert retry.text() == "Approve" and "may write data" in retry.toolTip()
    assert "Waiting for approval" in panel.details.toPlainText()
    panel.apply(_esc(index=6))
    panel.list.setCurrentIndex(panel.model.index(1))
    assert panel.answers.buttons["retry"].text() == "Retry"


@pytest.mark.parametrize(("answer", "state"), [
    ("stop", "stopped"), ("skip", "skipped"), ("retry", "retried"),
])
def test_an_escalation_is_listed_by_the_answer_it_got(qtbot, answer, state) -> None:  # noqa: ANN001
    panel = _panel(qtbot)
    panel.apply(_esc())
    sent: list[object] = []
    panel.command_requested.connect(sent.append)
    qtbot.mouseClick(panel.answers.buttons[answer], Qt.MouseButton.LeftButton)
    panel.model.note_command(sent[0])  # the window tells the model every command it sends
    panel.apply(Resumed("r1"))
    assert panel.model.items[0].state == state
    assert state in panel.details.toPlainText()
    panel.apply(_esc(6))  # the next escalation is open, not listed by the last answer
    panel.apply(Resumed("r1"))
    assert [e.state for e in panel.model.items] == [state, "resumed"]


def test_stop_during_a_takeover_lists_the_escalation_as_stopped(qtbot) -> None:  # noqa: ANN001
    from core.engine.events import TakeoverStarted

    panel = _panel(qtbot)
    panel.apply(_esc())
    panel.model.note_command(TakeOver())
    panel.apply(Resumed("r1"))
    panel.apply(TakeoverStarted("r1", panel.model.items[0].event.flow, panel.model.items[0].event.index))
    assert panel.model.items[0].state == "taken over"
    panel.model.note_command(Stop())  # Stop on the takeover bar
    panel.apply(RunFinished("r1", ()))
    assert panel.model.items[0].state == "stopped"  # not "resumed", not "closed"


def test_no_escalations_is_said_once_in_the_window(qtbot, make_window) -> None:  # noqa: ANN001
    from studio.testing import RecordingEngine

    w = make_window(RecordingEngine.factory([]))
    w.show()
    panel = w.escalations_panel
    said = [t for t in (panel.header.text(), panel.details.toPlainText()) if "No escalation" in t]
    assert said == ["No escalations"]
