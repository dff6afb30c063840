"""Answering escalations and taking over in the window: the commands sent and what the window shows."""
from __future__ import annotations

from PySide6.QtCore import Qt

from core.domain import BBox, EscalationCandidate
from core.engine.events import (
    EscalationRaised, FlowStarted, HandBack, HandedBack, Paused, Resumed, Retry, RunStarted, Skip, StepStarted,
    Stop, TakeOver, TakeoverActionRecorded, TakeoverStarted,
)
from studio.main_window import MainWindow
from studio.run_state import RunState
from studio.testing import FakeEngine, RecordingEngine

TIMEOUT_MS = 20000
FLOW = "login_lockout"
CANDIDATES = (EscalationCandidate("0:9", "link Unlock account", 0.78, BBox(680, 492, 128, 20)),
              EscalationCandidate("0:10", "button Unlock account", 0.76, BBox(1098, 660, 158, 36)))


def _play(qtbot, w: MainWindow, engine: RecordingEngine, *events) -> None:  # noqa: ANN001
    with qtbot.waitSignal(w.bridge.event_received, timeout=5000, check_params_cb=lambda e: e is events[-1]):
        engine.emit_from_thread(*events)


def _escalated(qtbot, recorded, answers=("retry", "skip", "stop", "take_over")):  # noqa: ANN001, ANN202
    w, engines = recorded
    w.resize(1400, 900)
    w.show()
    w.start_run((FLOW,))
    engine = engines[0]
    _play(qtbot, w, engine, RunStarted("r1", "demo", (FLOW,)), FlowStarted("r1", FLOW, tuple(f"s{i}" for i in range(7))),
          StepStarted("r1", FLOW, 5, "Click Unlock account", 1),
          EscalationRaised("r1", FLOW, 5, "Click Unlock account", "locator abstained", CANDIDATES, (),
                           "abstained", answers),
          Paused("r1", FLOW, 5, "escalated: locator abstained"))
    return w, engine


def test_the_window_offers_exactly_the_escalations_answers(qtbot, recorded) -> None:  # noqa: ANN001
    w, engine = _escalated(qtbot, recorded, answers=("skip", "stop", "take_over"))
    assert w.state is RunState.PAUSED
    assert w.escalations_panel.answers.shown() == ("skip", "take_over", "stop")
    assert w.banner_answers.isVisibleTo(w) and w.banner_answers.shown() == ("skip", "take_over", "stop")
    assert not any(b.isVisibleTo(w) for b in w.banner_buttons)  # no plain Resume / Step for an escalation
    # Resume and Step would answer "retry", which this escalation does not accept
    assert not w.action_start.isEnabled() and not w.action_step.isEnabled()
    assert w.action_take_over.isEnabled() and w.action_stop.isEnabled()
    qtbot.mouseClick(w.banner_answers.buttons["skip"], Qt.MouseButton.LeftButton)
    assert engine.commands[-1] == Skip() and w.state is RunState.RUNNING


def test_panel_answers_reach_the_engine(qtbot, recorded) -> None:  # noqa: ANN001
    w, engine = _escalated(qtbot, recorded)
    qtbot.mouseClick(w.escalations_panel.answers.buttons["retry"], Qt.MouseButton.LeftButton)
    assert engine.commands[-1] == Retry() and w.state is RunState.RUNNING
    # answered: neither the panel nor the banner sends a second answer
    assert not any(b.isEnabled() for b in w.escalations_panel.answers.buttons.values())
    assert not any(b.isEnabled() for b in w.banner_answers.buttons.values())


def test_stop_answers_the_escalation_and_the_run_goes_on(qtbot, recorded) -> None:  # noqa: ANN001
    w, engine = _escalated(qtbot, recorded)
    qtbot.mouseClick(w.escalations_panel.answers.buttons["stop"], Qt.MouseButton.LeftButton)
    # the flow ends escalated; a run of several flows goes on with the next one, so it is not "stopping"
    assert engine.commands[-1] == Stop() and w.state is RunState.RUNNING
    _play(qtbot, w, engine, Resumed("r1"))
    assert w.escalations_panel.model.items[0].state == "stopped"  # not "resumed" (issue 23)
    assert "stopped" in w.escalations_panel.details.toPlainText()


def test_a_selected_candidate_is_outlined_on_the_live_view(qtbot, recorded) -> None:  # noqa: ANN001
    w, _engine = _escalated(qtbot, recorded)
    assert w.live_view.highlight is None
    w.escalations_panel.select_candidate(1)
    box, label = w.live_view.highlight  # type: ignore[misc]
    assert box == CANDIDATES[1].box and "button Unlock account" in label and "0.76" in label
    _play(qtbot, w, _engine, Resumed("r1"))
    assert w.live_view.highlight is None


def test_take_over_then_hand_back_from_the_next_step(qtbot, recorded) -> None:  # noqa: ANN001
    w, engine = _escalated(qtbot, recorded)
    qtbot.mouseClick(w.escalations_panel.answers.buttons["take_over"], Qt.MouseButton.LeftButton)
    assert engine.commands[-1] == TakeOver()
    _play(qtbot, w, engine, Resumed("r1"), TakeoverStarted("r1", FLOW, 5),
          Paused("r1", FLOW, 5, "taken over by hand"))
    assert w.state is RunState.TAKEN_OVER
    banner = w.takeover_banner
    assert banner.isVisibleTo(w) and not w.banner.isVisibleTo(w)
    assert "You have the page" in banner.title.text() and "step 6" in banner.title.text()
    assert banner.continue_from.value() == 6
    assert "Taken over" in w.state_label.text() and "taken over at step 6/7" in w.state_label.text()
    assert w.action_start.text() == "Hand back" and not w.action_take_over.isEnabled()
    assert w.steps_panel.model.row(5).phase == "taken over"
    assert "taken over at step 6" in w.event_log.toPlainText()

    # preselected: the actions go before the step, which runs again; a recorded action does not change that
    assert banner.meaning == "insert" and banner.continue_from.value() == 6
    _play(qtbot, w, engine, TakeoverActionRecorded("r1", FLOW, 5, ("Click Unlock account",)))
    assert banner.meaning == "insert" and banner.continue_from.value() == 6
    assert "1. Click Unlock account" in banner.actions.text()
    qtbot.mouseClick(banner.meaning_buttons["replace"], Qt.MouseButton.LeftButton)  # the person chooses
    assert banner.meaning == "replace" and banner.continue_from.value() == 7
    banner.set_meaning("done")
    assert banner.continue_from.value() == 7
    banner.set_meaning("insert")
    assert banner.continue_from.value() == 6
    banner.continue_from.setValue(7)  # the user's own choice of step wins over the meaning's
    banner.set_meaning("replace")
    qtbot.mouseClick(banner.hand_back_button, Qt.MouseButton.LeftButton)
    assert engine.commands[-1] == HandBack(continue_from=6, meaning="replace")
    assert not banner.isVisibleTo(w) and w.state is RunState.RUNNING
    _play(qtbot, w, engine, Resumed("r1"), HandedBack("r1", FLOW, 6))
    assert "handed back, continuing from step 7" in w.state_label.text()
    assert "handed back, continuing from step 7" in w.event_log.toPlainText()


def test_recorded_actions_never_change_the_preselected_go_before_this_step(qtbot, recorded) -> None:  # noqa: ANN001
    # issue 23 item 2: the first recorded action flipped "go before this step, continue from step 6" to "replace
    # this step, continue from 7"; Hand back then skipped the blocked step and offered an edit deleting it
    w, engine = _escalated(qtbot, recorded)
    qtbot.mouseClick(w.escalations_panel.answers.buttons["take_over"], Qt.MouseButton.LeftButton)
    _play(qtbot, w, engine, Resumed("r1"), TakeoverStarted("r1", FLOW, 5))
    banner = w.takeover_banner
    assert banner.meaning_buttons["insert"].isChecked() and banner.continue_from.value() == 6
    for titles in (("Click Dismiss",), ("Click Dismiss", "Press Escape")):
        _play(qtbot, w, engine, TakeoverActionRecorded("r1", FLOW, 5, titles))
        assert banner.meaning_buttons["insert"].isChecked() and banner.continue_from.value() == 6
    assert "2. Press Escape" in banner.actions.text()
    qtbot.mouseClick(banner.hand_back_button, Qt.MouseButton.LeftButton)
    assert engine.commands[-1] == HandBack(continue_from=5, meaning="insert")


def test_the_persons_choice_made_before_any_action_is_kept_too(qtbot, recorded) -> None:  # noqa: ANN001
    w, engine = _escalated(qtbot, recorded)
    w.take_over()
    _play(qtbot, w, engine, Resumed("r1"), TakeoverStarted("r1", FLOW, 5))
    banner = w.takeover_banner
    qtbot.mouseClick(banner.meaning_buttons["done"], Qt.MouseButton.LeftButton)
    assert banner.continue_from.value() == 7
    _play(qtbot, w, engine, TakeoverActionRecorded("r1", FLOW, 5, ("Click Unlock account",)))
    assert banner.meaning == "done" and banner.continue_from.value() == 7
    qtbot.mouseClick(banner.hand_back_button, Qt.MouseButton.LeftButton)
    assert engine.commands[-1] == HandBack(continue_from=6, meaning="done")


def test_f5_during_a_takeover_hands_back(qtbot, recorded) -> None:  # noqa: ANN001
    w, engine = _escalated(qtbot, recorded)
    w.take_over()
    _play(qtbot, w, engine, Resumed("r1"), TakeoverStarted("r1", FLOW, 5))
    w.start_or_resume()
    assert engine.commands[-1] == HandBack(continue_from=5, meaning="insert")


def test_toolbar_take_over_while_running_and_while_paused(qtbot, recorded) -> None:  # noqa: ANN001
    w, engines = recorded
    assert not w.action_take_over.isEnabled()
    w.start_run((FLOW,))
    engine = engines[0]
    _play(qtbot, w, engine, RunStarted("r1", "demo", (FLOW,)), StepStarted("r1", FLOW, 0, "a", 1))
    assert w.action_take_over.isEnabled()
    w.action_take_over.trigger()
    assert engine.commands[-1] == TakeOver()
    assert not w.action_take_over.isEnabled()  # asked for: not twice
    _play(qtbot, w, engine, TakeoverStarted("r1", FLOW, 0), Resumed("r1"), HandedBack("r1", FLOW, 1),
          StepStarted("r1", FLOW, 1, "b", 1))
    assert w.state is RunState.RUNNING and w.action_take_over.isEnabled()
    w.pause()
    _play(qtbot, w, engine, Paused("r1", FLOW, 1, "paused"))
    assert w.action_take_over.isEnabled()
    w.take_over()
    assert engine.commands[-1] == TakeOver() and not w.action_take_over.isEnabled()


def test_fake_engine_takeover_marks_the_step_done_by_hand(qtbot, make_window) -> None:  # noqa: ANN001
    w = make_window(FakeEngine.factory())
    w.set_checked_flows([FLOW])
    w.show()
    w.start_run()
    qtbot.waitUntil(lambda: w.state is RunState.PAUSED, timeout=TIMEOUT_MS)
    qtbot.mouseClick(w.escalations_panel.answers.buttons["take_over"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.state is RunState.TAKEN_OVER, timeout=TIMEOUT_MS)
    w.takeover_banner.continue_from.setValue(7)
    w.takeover_banner.hand_back()
    qtbot.waitUntil(lambda: w.state is RunState.FINISHED, timeout=TIMEOUT_MS)
    rows = w.steps_panel.model.rows(FLOW)
    assert [r.status for r in rows] == ["passed"] * 5 + ["manual", "passed"]
    assert rows[5].error == "done by hand; continued from step 7"
    assert w.steps_panel.model.data(w.steps_panel.model.index(5, 2)) == "by hand"
    assert "login_lockout passed" in w.state_label.text()
    assert w.escalations_panel.model.items[0].state == "handed back"


def test_fake_engine_skip_and_takeover_at_the_same_step(qtbot, make_window) -> None:  # noqa: ANN001
    w = make_window(FakeEngine.factory())
    w.set_checked_flows([FLOW])
    w.show()
    w.start_run()
    qtbot.waitUntil(lambda: w.state is RunState.PAUSED, timeout=TIMEOUT_MS)
    w.take_over()
    qtbot.waitUntil(lambda: w.state is RunState.TAKEN_OVER, timeout=TIMEOUT_MS)
    w.start_or_resume()  # F5: hand back at the same step, which runs again on the page as left
    qtbot.waitUntil(lambda: w.state is RunState.FINISHED, timeout=TIMEOUT_MS)
    rows = w.steps_panel.model.rows(FLOW)
    assert [r.status for r in rows][-2:] == ["passed", "passed"] and rows[5].attempt == 2

    w.start_run()
    qtbot.waitUntil(lambda: w.state is RunState.PAUSED and w.escalations_panel.model.open_count == 1,
                    timeout=TIMEOUT_MS)
    qtbot.mouseClick(w.escalations_panel.answers.buttons["skip"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.state is RunState.FINISHED, timeout=TIMEOUT_MS)
    rows = w.steps_panel.model.rows(FLOW)
    assert [r.status for r in rows][-2:] == ["skipped", "passed"]
    assert rows[5].error.startswith("skipped by the user")


def test_fake_engine_takes_over_a_running_step(qtbot, make_window) -> None:  # noqa: ANN001
    w = make_window(FakeEngine.factory(phase_delay_s=0.02))
    w.set_checked_flows(["export_report"])
    w.show()
    w.start_run()
    qtbot.waitUntil(lambda: w.state is RunState.RUNNING and w._step_index >= 1, timeout=TIMEOUT_MS)
    w.take_over()
    qtbot.waitUntil(lambda: w.state is RunState.TAKEN_OVER, timeout=TIMEOUT_MS)
    index = w.run_state.takeover[1]  # type: ignore[index]
    assert w.takeover_banner.continue_from.value() == index + 1
    w.hand_back(4)  # 0-based 4 = past the last step: the flow is done
    qtbot.waitUntil(lambda: w.state is RunState.FINISHED, timeout=TIMEOUT_MS)
    rows = w.steps_panel.model.rows("export_report")
    assert [r.status for r in rows][index] == "manual"
    assert all(r.status == "passed" for r in rows[:index])


def test_the_bar_says_what_the_engine_did_to_the_page_before_asking_and_rolls_back_only_when_asked(qtbot, recorded) -> None:  # noqa: ANN001
    from core.engine.events import Recovered, RollBackStep, TakeoverRolledBack

    w, engine = _escalated(qtbot, recorded)
    # the engine rolled back once at this step before it escalated: the page handed over is that one, and said
    _play(qtbot, w, engine, Recovered("r1", FLOW, 5, "rollback", True, "closed 'Export report'; reloaded /requests"))
    qtbot.mouseClick(w.escalations_panel.answers.buttons["take_over"], Qt.MouseButton.LeftButton)
    _play(qtbot, w, engine, Resumed("r1"), TakeoverStarted("r1", FLOW, 5), Paused("r1", FLOW, 5, "taken over by hand"))
    banner = w.takeover_banner
    assert banner.notice.isVisibleTo(w)
    assert "Before asking you, the engine already tried at this step: rolled back: closed 'Export report'" in \
        banner.notice.text()
    sent_before = len(engine.commands)
    assert RollBackStep() not in engine.commands  # never by itself
    qtbot.mouseClick(banner.rollback_button, Qt.MouseButton.LeftButton)
    assert RollBackStep() in engine.commands[sent_before:] and not banner.rollback_button.isEnabled()
    qtbot.mouseClick(banner.rollback_button, Qt.MouseButton.LeftButton)  # once until the engine answers
    assert engine.commands.count(RollBackStep()) == 1
    _play(qtbot, w, engine, TakeoverRolledBack("r1", FLOW, 5, True, "rolled back to before this step: restored the "
                                                                   "form values", 2))
    assert "Rolled back to before this step: restored the form values." in banner.notice.text()
    assert banner.rollback_button.isEnabled()


def _fully_in_sight(slot, widget) -> bool:  # noqa: ANN001
    """True when ``widget`` is shown and lies wholly inside the banner slot's visible viewport."""
    if not widget.isVisibleTo(slot):
        return False
    vp = slot.viewport()
    top_left = widget.mapTo(vp, widget.rect().topLeft())
    bottom_right = widget.mapTo(vp, widget.rect().bottomRight())
    return vp.rect().contains(top_left) and vp.rect().contains(bottom_right)


def test_the_hand_back_choice_stays_in_sight_under_a_long_paragraph(qtbot, recorded, tmp_path) -> None:  # noqa: ANN001
    """trial-37/38: "the engine already tried ..." pushed the choice and Hand back below the strip's fold."""
    from core.engine.events import Recovered

    w, engine = _escalated(qtbot, recorded)
    w.resize(1100, 760)  # a small window: the strip is narrow, a paragraph wraps to many lines
    detail = ("no close control in the popup 'We value your privacy': pressed Escape; the popup 'We value your "
              "privacy' asks for a choice ('Cookie settings' / 'Accept all cookies'): the engine does not choose "
              "for you - answer it, or approve a skill that does; the popup did not close")
    _play(qtbot, w, engine, Recovered("r1", FLOW, 5, "dismiss", False, detail),
          Recovered("r1", FLOW, 5, "dismiss", False, detail))
    qtbot.mouseClick(w.escalations_panel.answers.buttons["take_over"], Qt.MouseButton.LeftButton)
    _play(qtbot, w, engine, Resumed("r1"), TakeoverStarted("r1", FLOW, 5), Paused("r1", FLOW, 5, "taken over by hand"),
          TakeoverActionRecorded("r1", FLOW, 5, tuple(f"Click Accept all cookies number {i}" for i in range(12))))
    qtbot.wait(50)
    banner, slot = w.takeover_banner, w.banner_slot
    assert "Before asking you, the engine already tried" in banner.notice.text()
    controls = [*banner.meaning_buttons.values(), banner.continue_label, banner.continue_from, banner.hand_back_button]
    assert all(_fully_in_sight(slot, c) for c in controls)
    assert slot.verticalScrollBar().value() == 0
    # the whole paragraph is one hover or one click away, and opening it keeps the choice where it was
    assert banner.notice.is_elided() and detail in banner.notice.toolTip()
    assert banner.details_button.isVisibleTo(w)
    where = banner.hand_back_button.mapTo(w, banner.hand_back_button.rect().topLeft())
    qtbot.mouseClick(banner.details_button, Qt.MouseButton.LeftButton)
    qtbot.wait(50)
    assert banner.details.isVisibleTo(w) and detail in banner.details.text()
    assert all(_fully_in_sight(slot, c) for c in controls)
    assert banner.hand_back_button.mapTo(w, banner.hand_back_button.rect().topLeft()) == where
    slot.grab().save(str(tmp_path / "takeover-strip.png"))
    qtbot.mouseClick(banner.hand_back_button, Qt.MouseButton.LeftButton)
    assert engine.commands[-1] == HandBack(continue_from=5, meaning="insert")


def _toolbar_geometry(w: MainWindow) -> list[tuple[str, tuple[int, int, int, int]]]:
    from PySide6.QtWidgets import QToolButton

    tb = w.toolbar
    return [(b.text(), (b.x(), b.y(), b.width(), b.height())) for b in tb.findChildren(QToolButton)
            if b.isVisible() and b.defaultAction() is not None and b.defaultAction() is not w.action_start]


def test_toolbar_buttons_stay_put_when_start_becomes_resume_and_hand_back(qtbot, recorded) -> None:  # noqa: ANN001
    """trial-33/34/37: Start -> Resume (~20 px) and -> Hand back (~35 px) moved Step, Stop and Record."""
    w, engines = recorded
    w.resize(1400, 900)
    w.show()
    qtbot.wait(20)
    start = w.toolbar.widgetForAction(w.action_start)
    idle = (_toolbar_geometry(w), start.geometry())
    assert w.action_start.text() == "Start"
    w2, engine = _escalated(qtbot, (w, engines))
    qtbot.wait(20)
    assert w.action_start.text() == "Resume"
    assert (_toolbar_geometry(w), start.geometry()) == idle
    qtbot.mouseClick(w.escalations_panel.answers.buttons["take_over"], Qt.MouseButton.LeftButton)
    _play(qtbot, w, engine, Resumed("r1"), TakeoverStarted("r1", FLOW, 5), Paused("r1", FLOW, 5, "taken over by hand"))
    qtbot.wait(20)
    assert w.action_start.text() == "Hand back"
    assert (_toolbar_geometry(w), start.geometry()) == idle
    # the label fits the fixed width
    assert start.fontMetrics().horizontalAdvance("Hand back") < start.width()


def test_after_hand_back_the_header_no_longer_says_you_have_the_page(qtbot, recorded) -> None:  # noqa: ANN001
    """trial-65/70: after Hand back the header kept "You have the page ..." while the strip said it was paused."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice
    from PySide6.QtGui import QColor, QImage

    from core.engine.events import TakeoverFrame

    img, data = QImage(64, 40, QImage.Format.Format_RGB32), QByteArray()
    img.fill(QColor("white"))
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    img.save(buf, "PNG")
    png = bytes(data.data())

    w, engine = _escalated(qtbot, recorded)
    qtbot.mouseClick(w.escalations_panel.answers.buttons["take_over"], Qt.MouseButton.LeftButton)
    _play(qtbot, w, engine, Resumed("r1"), TakeoverStarted("r1", FLOW, 5), Paused("r1", FLOW, 5, "taken over by hand"),
          TakeoverFrame("r1", FLOW, 5, png, 1.0, "http://127.0.0.1:1/requests"))
    assert "You have the page" in w.caption.text()
    qtbot.mouseClick(w.takeover_banner.hand_back_button, Qt.MouseButton.LeftButton)
    _play(qtbot, w, engine, Resumed("r1"), HandedBack("r1", FLOW, 6), Paused("r1", FLOW, 6, "paused"))
    assert "You have the page" not in w.caption.text() and "Handed back" in w.caption.text()

