"""What the run controls show: the front end's view of the run state.

A pure state machine (no Qt) fed with the commands the user sends and the
events the engine emits; :func:`controls_for` says which controls are
enabled in each state.  It mirrors the engine, it does not drive it.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from core.engine.events import (
    Command, EngineError, EngineEvent, Pause, Paused, Resume, Resumed, RunFinished, RunStarted,
    Start, StepOnce, StepStarted, Stop,
)

__all__ = ["RunState", "Controls", "controls_for", "RunStateMachine"]


class RunState(str, Enum):
    """Run state as shown by the studio."""

    IDLE = "idle"            # no run yet
    STARTING = "starting"    # Start sent, RunStarted not seen yet
    RUNNING = "running"
    PAUSING = "pausing"      # Pause sent, Paused not seen yet
    PAUSED = "paused"        # waiting for the user (Resume / Step / Stop)
    STOPPING = "stopping"    # Stop sent, RunFinished not seen yet
    FINISHED = "finished"    # the last run ended

    @property
    def label(self) -> str:
        """Capitalised name for the status bar."""
        return self.value.capitalize()


@dataclass(frozen=True, slots=True)
class Controls:
    """Which run controls are enabled, and what the Start control says."""

    start: bool
    pause: bool
    step: bool
    stop: bool
    start_text: str = "Start"
    flows_editable: bool = False


def controls_for(state: RunState, *, has_flows: bool = True) -> Controls:
    """Enabled controls in ``state``.

    ``has_flows`` is False when no flow is selected: nothing can start then.
    Step from idle starts the run paused before its first step.
    """
    if state in (RunState.IDLE, RunState.FINISHED):
        return Controls(start=has_flows, pause=False, step=has_flows, stop=False, flows_editable=True)
    if state in (RunState.STARTING, RunState.RUNNING):
        return Controls(start=False, pause=True, step=False, stop=True)
    if state is RunState.PAUSING:
        return Controls(start=False, pause=False, step=False, stop=True)
    if state is RunState.PAUSED:
        return Controls(start=True, pause=False, step=True, stop=True, start_text="Resume")
    return Controls(start=False, pause=False, step=False, stop=False)  # STOPPING


class RunStateMachine:
    """Follows commands and (already de-staled) events; exposes :attr:`state`."""

    def __init__(self) -> None:
        self.state = RunState.IDLE

    def on_command(self, command: Command) -> bool:
        """Update for a command the user sent; True when the state changed."""
        before = self.state
        if isinstance(command, Start):
            self.state = RunState.STARTING
        elif isinstance(command, Pause) and self.state in (RunState.STARTING, RunState.RUNNING):
            self.state = RunState.PAUSING
        elif isinstance(command, (Resume, StepOnce)) and self.state is RunState.PAUSED:
            self.state = RunState.RUNNING
        elif isinstance(command, Stop) and self.state not in (RunState.IDLE, RunState.FINISHED):
            self.state = RunState.STOPPING
        return self.state is not before

    def on_event(self, event: EngineEvent) -> bool:
        """Update for an engine event; True when the state changed."""
        before = self.state
        stopping = self.state is RunState.STOPPING
        if isinstance(event, RunFinished):
            self.state = RunState.FINISHED
        elif isinstance(event, EngineError) and self.state is RunState.STARTING:
            self.state = RunState.FINISHED  # the run could not start (no RunStarted came)
        elif stopping:
            pass
        elif isinstance(event, RunStarted) and self.state is not RunState.PAUSING:
            self.state = RunState.RUNNING
        elif isinstance(event, Paused):
            self.state = RunState.PAUSED
        elif isinstance(event, (Resumed, StepStarted)) and self.state is RunState.PAUSED:
            self.state = RunState.RUNNING
        return self.state is not before
