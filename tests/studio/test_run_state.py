"""Run state machine and the controls it enables (no Qt)."""
from __future__ import annotations

from core.engine.events import (
    EngineError, EscalationRaised, HandBack, HandedBack, Pause, Paused, Resume, Resumed, RunFinished, RunStarted,
    Skip, Start, StepOnce, StepStarted, Stop, TakeOver, TakeoverStarted,
)
from studio.run_state import RunState, RunStateMachine, controls_for


def test_controls_by_state() -> None:
    idle = controls_for(RunState.IDLE)
    assert (idle.start, idle.pause, idle.step, idle.stop, idle.start_text) == (True, False, True, False, "Start")
    assert not controls_for(RunState.IDLE, has_flows=False).start
    running = controls_for(RunState.RUNNING)
    assert (running.start, running.pause, running.step, running.stop) == (False, True, False, True)
    paused = controls_for(RunState.PAUSED)
    assert (paused.start, paused.pause, paused.step, paused.stop, paused.start_text) == (
        True, False, True, True, "Resume")
    stopping = controls_for(RunState.STOPPING)
    assert not any((stopping.start, stopping.pause, stopping.step, stopping.stop))


def test_transitions_follow_commands_and_events() -> None:
    m = RunStateMachine()
    m.on_command(Start(flows=("f",)))
    assert m.state is RunState.STARTING
    m.on_event(RunStarted("r1", "p", ("f",)))
    assert m.state is RunState.RUNNING
    m.on_command(Pause())
    assert m.state is RunState.PAUSING
    m.on_event(Paused("r1", "f", 2, "paused by the user"))
    assert m.state is RunState.PAUSED
    m.on_command(StepOnce())
    assert m.state is RunState.RUNNING
    m.on_event(Paused("r1", "f", 3))
    m.on_event(StepStarted("r1", "f", 3, "t", 1))  # the engine goes on: it is running again
    assert m.state is RunState.RUNNING
    m.on_event(Paused("r1", "f", 4))
    m.on_command(Resume())
    m.on_event(Resumed("r1"))
    assert m.state is RunState.RUNNING
    m.on_command(Stop())
    m.on_event(Paused("r1", "f", 5))  # late: still stopping
    assert m.state is RunState.STOPPING
    m.on_event(RunFinished("r1", ()))
    assert m.state is RunState.FINISHED


def test_a_run_that_cannot_start_ends_the_starting_state() -> None:
    m = RunStateMachine()
    m.on_command(Start())
    assert m.on_event(EngineError("", "browser not found")) is True
    assert m.state is RunState.FINISHED


def _escalation(answers: tuple[str, ...]) -> EscalationRaised:
    return EscalationRaised("r1", "f", 2, "t", "why", answers=answers)  # type: ignore[arg-type]


def test_controls_follow_the_answers_of_the_open_escalation() -> None:
    m = RunStateMachine()
    m.on_command(Start())
    m.on_event(RunStarted("r1", "p", ("f",)))
    m.on_event(_escalation(("skip", "stop", "take_over")))
    m.on_event(Paused("r1", "f", 2, "escalated: why"))
    assert m.state is RunState.PAUSED and m.answers == ("skip", "stop", "take_over")
    c = controls_for(m.state, answers=m.answers)
    assert (c.start, c.step, c.stop, c.take_over) == (False, False, True, True)  # Resume / Step would retry
    assert controls_for(RunState.PAUSED, answers=("stop",)).take_over is False
    plain = controls_for(RunState.PAUSED)
    assert (plain.start, plain.step, plain.take_over) == (True, True, True)
    m.on_command(Skip())
    assert m.state is RunState.RUNNING
    m.on_event(Resumed("r1"))
    assert m.answers is None


def test_stop_answering_an_escalation_is_not_stopping_the_run() -> None:
    m = RunStateMachine()
    m.on_command(Start())
    m.on_event(RunStarted("r1", "p", ("f", "g")))
    m.on_event(_escalation(("retry", "skip", "stop", "take_over")))
    m.on_event(Paused("r1", "f", 2))
    m.on_command(Stop())
    assert m.state is RunState.RUNNING  # the flow ends escalated; the next flow runs
    m.on_event(Resumed("r1"))
    m.on_command(Stop())
    assert m.state is RunState.STOPPING


def test_takeover_and_hand_back() -> None:
    m = RunStateMachine()
    m.on_command(Start())
    m.on_event(RunStarted("r1", "p", ("f",)))
    assert controls_for(m.state).take_over
    m.on_command(TakeOver())
    assert m.takeover_asked and m.state is RunState.RUNNING  # the engine takes it at its next pause point
    m.on_event(TakeoverStarted("r1", "f", 3))
    assert m.state is RunState.TAKEN_OVER and m.takeover == ("f", 3) and not m.takeover_asked
    assert RunState.TAKEN_OVER.label == "Taken over"
    m.on_event(Paused("r1", "f", 3, "taken over by hand"))  # the engine waits: still taken over
    m.on_event(Resumed("r1"))
    assert m.state is RunState.TAKEN_OVER
    c = controls_for(m.state)
    assert (c.start, c.start_text, c.pause, c.step, c.stop, c.take_over) == (
        True, "Hand back", False, False, True, False)
    m.on_command(HandBack(continue_from=4))
    assert m.state is RunState.RUNNING
    m.on_event(HandedBack("r1", "f", 4))
    assert m.state is RunState.RUNNING and m.takeover is None
    m.on_event(TakeoverStarted("r1", "f", 5))
    m.on_command(Stop())  # stopping during a takeover stops the run
    assert m.state is RunState.STOPPING
    m.on_event(RunFinished("r1", ()))
    assert m.state is RunState.FINISHED and m.takeover is None
