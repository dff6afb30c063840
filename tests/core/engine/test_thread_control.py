"""The engine thread's run control: commands from the front end become pauses, answers and hand-backs.

The control reads the runner's command queue; here the queue is filled up front (or from a timer thread),
so each test runs without a browser and without Qt.
"""
from __future__ import annotations

import queue
import threading
import time
from typing import Any

import pytest

from core.domain import Escalation
from core.engine.control import Answer, StopRequested, TakeoverRequested
from core.engine.events import HandBack, Pause, Paused, Resume, Resumed, Retry, Skip, StepOnce, Stop, TakeOver
from core.engine.runner import _ThreadControl


class Runner:
    """What the control needs of :class:`core.engine.runner.EngineRunner`."""

    def __init__(self, *commands: Any) -> None:
        self._commands: queue.Queue[object] = queue.Queue()
        for c in commands:
            self._commands.put(c)
        self._closing = False
        self.events: list[Any] = []

    def _emit(self, event: Any) -> None:
        self.events.append(event)


def escalation(*answers: str) -> Escalation:
    return Escalation("r", "f", 2, "click Save", "locator abstained", answers=answers or  # type: ignore[arg-type]
                      ("retry", "skip", "stop", "take_over"))


@pytest.mark.parametrize("command, kind", [(Retry(), "retry"), (Resume(), "retry"), (Skip(), "skip"),
                                           (TakeOver(), "take_over"), (Stop(), "stop")])
def test_each_command_answers_an_escalation(command: Any, kind: str) -> None:
    runner = Runner(command)
    answer = _ThreadControl(runner).escalate(escalation())
    assert answer == Answer(kind)  # type: ignore[arg-type]
    assert isinstance(runner.events[0], Paused) and runner.events[0].reason == "escalated: locator abstained"
    if kind != "stop":
        assert isinstance(runner.events[-1], Resumed)


def test_an_answer_the_escalation_does_not_offer_is_not_taken() -> None:
    runner = Runner(Retry(), Pause(), Skip())  # retry is not offered after an irreversible step acted
    assert _ThreadControl(runner).escalate(escalation("skip", "stop", "take_over")) == Answer("skip")


def test_a_takeover_waits_for_the_hand_back_and_its_step() -> None:
    runner = Runner(Skip(), HandBack(continue_from=4))
    assert _ThreadControl(runner).take_over("r", "f", 2) == Answer("take_over", continue_from=4)
    assert runner.events[0].reason == "taken over by hand"


def test_resume_during_a_takeover_hands_back_at_the_same_step() -> None:
    assert _ThreadControl(Runner(Resume())).take_over("r", "f", 2) == Answer("take_over", continue_from=None)


def test_stop_during_a_takeover_stops_the_run() -> None:
    with pytest.raises(StopRequested):
        _ThreadControl(Runner(Stop())).take_over("r", "f", 2)


def test_take_over_while_running_is_raised_at_the_next_pause_point_of_a_step() -> None:
    runner = Runner(TakeOver())
    control = _ThreadControl(runner)
    control.pause_point("r", "f", -1, "start")  # not before the first step: nothing to take over yet
    with pytest.raises(TakeoverRequested):
        control.pause_point("r", "f", 0, "observe")
    control.pause_point("r", "f", 0, "fingerprint")  # asked once, raised once


def test_pause_blocks_at_the_next_pause_point_until_resume() -> None:
    runner = Runner(Pause())
    control = _ThreadControl(runner)
    timer = threading.Timer(0.05, lambda: runner._commands.put(Resume()))
    timer.start()
    control.pause_point("r", "f", 1, "act")
    timer.join()
    assert [type(e).__name__ for e in runner.events] == ["Paused", "Resumed"]
    assert runner.events[0].index == 1


def _when_paused(runner: Runner, command: Any, count: int) -> threading.Thread:
    """A thread that sends ``command`` once the runner has announced its ``count``-th pause (at most 5 s)."""
    def send() -> None:
        deadline = time.monotonic() + 5.0
        while sum(isinstance(e, Paused) for e in runner.events) < count and time.monotonic() < deadline:
            time.sleep(0.005)
        runner._commands.put(command)
    t = threading.Thread(target=send, daemon=True)
    t.start()
    return t


def test_step_once_runs_one_step_then_pauses_at_the_next() -> None:
    runner = Runner(Pause())
    control = _ThreadControl(runner)
    later = _when_paused(runner, StepOnce(), 1)  # sent once it is paused (a timer raced the pause under load)
    control.pause_point("r", "f", 1, "observe")  # paused, then one step is let through
    later.join()
    for phase in ("decide", "act", "verify"):
        control.pause_point("r", "f", 1, phase)  # the same step goes on without pausing
    later = _when_paused(runner, Resume(), 2)
    control.pause_point("r", "f", 2, "observe")  # the next step pauses again until Resume
    later.join()
    control.pause_point("r", "f", 3, "observe")  # after Resume nothing pauses
    assert [(type(e).__name__, getattr(e, "index", None)) for e in runner.events] == [
        ("Paused", 1), ("Resumed", None), ("Paused", 2), ("Resumed", None)]


def test_closing_the_runner_during_an_escalation_stops_the_thread() -> None:
    from core.engine import runner as runner_module

    runner = Runner(runner_module._CLOSE)
    with pytest.raises(StopRequested):
        _ThreadControl(runner).escalate(escalation())


def test_stop_as_an_answer_ends_the_question_and_leaves_nothing_paused() -> None:
    runner = Runner(Stop())
    control = _ThreadControl(runner)
    assert control.escalate(escalation()) == Answer("stop")
    assert control.paused is False
    assert [type(e).__name__ for e in runner.events] == ["Paused", "Resumed"]
    control.pause_point("r", "next-flow", -1, "start")  # the next flow of the batch is not paused
    assert [type(e).__name__ for e in runner.events] == ["Paused", "Resumed"]


def test_a_takeover_an_escalation_did_not_take_does_not_outlive_it() -> None:
    runner = Runner(TakeOver(), Stop())  # budget escalations offer only stop
    control = _ThreadControl(runner)
    assert control.escalate(escalation("stop")) == Answer("stop")
    control.pause_point("r", "next-flow", -1, "start")
    control.pause_point("r", "next-flow", 0, "observe")  # nothing raised: no takeover was asked for here
