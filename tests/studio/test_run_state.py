"""Run state machine and the controls it enables (no Qt)."""
from __future__ import annotations

from core.engine.events import (
    EngineError, Pause, Paused, Resume, Resumed, RunFinished, RunStarted, Start, StepOnce, StepStarted, Stop,
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
