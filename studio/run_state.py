"""What the run controls show: the front end's view of the run state.

A pure state machine (no Qt) fed with the commands the user sends and the
events the engine emits; :func:`controls_for` says which controls are
enabled in each state.  It mirrors the engine, it does not drive it: which
answers an escalation accepts comes from the escalation itself
(``EscalationRaised.answers``).
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from core.engine.events import (
    Command, EngineError, EngineEvent, EscalationRaised, HandBack, HandedBack, Pause, Paused, Resume, Resumed,
    Retry, RunFinished, RunStarted, Skip, Start, StepOnce, StepStarted, Stop, TakeOver, TakeoverStarted,
)

__all__ = ["RunState", "Controls", "controls_for", "RunStateMachine"]


class RunState(str, Enum):
    """Run state as shown by the studio."""

    IDLE = "idle"              # no run yet
    STARTING = "starting"      # Start sent, RunStarted not seen yet
    RUNNING = "running"
    PAUSING = "pausing"        # Pause sent, Paused not seen yet
    PAUSED = "paused"          # waiting for the user (Resume / Step / Stop, or an escalation's answers)
    TAKEN_OVER = "taken_over"  # a human has the page until they hand back
    STOPPING = "stopping"      # Stop sent, RunFinished not seen yet
    FINISHED = "finished"      # the last run ended

    @property
    def label(self) -> str:
        """Capitalised name for the status bar (``"Taken over"``)."""
        return self.value.replace("_", " ").capitalize()


@dataclass(frozen=True, slots=True)
class Controls:
    """Which run controls are enabled, and what the Start control says."""

    start: bool
    pause: bool
    step: bool
    stop: bool
    start_text: str = "Start"
    flows_editable: bool = False
    take_over: bool = False


def controls_for(state: RunState, *, has_flows: bool = True,
                 answers: tuple[str, ...] | None = None) -> Controls:
    """Enabled controls in ``state``.

    ``has_flows`` is False when no flow is selected: nothing can start then.
    Step from idle starts the run paused before its first step.  ``answers``
    are those of the open escalation (None when none is open): Resume and
    Step answer "retry", Take over answers "take_over", so each is enabled
    only when the escalation accepts it.  While taken over, Start reads
    "Hand back".
    """
    if state in (RunState.IDLE, RunState.FINISHED):
        return Controls(start=has_flows, pause=False, step=has_flows, stop=False, flows_editable=True)
    if state in (RunState.STARTING, RunState.RUNNING):
        return Controls(start=False, pause=True, step=False, stop=True, take_over=state is RunState.RUNNING)
    if state is RunState.PAUSING:
        return Controls(start=False, pause=False, step=False, stop=True, take_over=True)
    if state is RunState.PAUSED:
        retry = answers is None or "retry" in answers
        return Controls(start=retry, pause=False, step=retry, stop=answers is None or "stop" in answers,
                        start_text="Resume", take_over=answers is None or "take_over" in answers)
    if state is RunState.TAKEN_OVER:
        return Controls(start=True, pause=False, step=False, stop=True, start_text="Hand back")
    return Controls(start=False, pause=False, step=False, stop=False)  # STOPPING


class RunStateMachine:
    """Follows commands and (already de-staled) events; exposes :attr:`state`.

    :attr:`answers` are the answers of the open escalation (None when none
    is open); :attr:`takeover` the ``(flow, index)`` a takeover began at
    while :attr:`state` is ``TAKEN_OVER``; :attr:`takeover_asked` is True
    from a ``TakeOver`` command until the takeover starts (or the run ends).
    """

    def __init__(self) -> None:
        self.state = RunState.IDLE
        self.answers: tuple[str, ...] | None = None
        self.takeover: tuple[str, int] | None = None
        self.takeover_asked = False

    def on_command(self, command: Command) -> bool:
        """Update for a command the user sent; True when the state changed."""
        before = self.state
        if isinstance(command, TakeOver) and self.state in (RunState.RUNNING, RunState.PAUSING, RunState.PAUSED):
            self.takeover_asked = True
        if isinstance(command, Start):
            self.state, self.answers, self.takeover, self.takeover_asked = RunState.STARTING, None, None, False
        elif isinstance(command, Pause) and self.state in (RunState.STARTING, RunState.RUNNING):
            self.state = RunState.PAUSING
        elif isinstance(command, (Resume, StepOnce, Retry, Skip)) and self.state is RunState.PAUSED:
            self.state = RunState.RUNNING
        elif isinstance(command, (HandBack, Resume)) and self.state is RunState.TAKEN_OVER:
            self.state = RunState.RUNNING
        elif isinstance(command, Stop) and self.state is RunState.PAUSED and self.answers is not None:
            self.state = RunState.RUNNING  # an answer: this flow ends escalated, the run goes on with the next
        elif isinstance(command, Stop) and self.state not in (RunState.IDLE, RunState.FINISHED):
            self.state = RunState.STOPPING
        return self.state is not before

    def on_event(self, event: EngineEvent) -> bool:
        """Update for an engine event; True when the state changed."""
        before = self.state
        stopping = self.state is RunState.STOPPING
        if isinstance(event, EscalationRaised):
            self.answers = tuple(event.answers)
        elif isinstance(event, (Resumed, StepStarted, RunFinished, TakeoverStarted)):
            self.answers = None
        if isinstance(event, (TakeoverStarted, RunFinished)):
            self.takeover_asked = False
        if isinstance(event, RunFinished):
            self.state, self.takeover = RunState.FINISHED, None
        elif isinstance(event, EngineError) and self.state is RunState.STARTING:
            self.state = RunState.FINISHED  # the run could not start (no RunStarted came)
        elif stopping:
            pass
        elif isinstance(event, TakeoverStarted):
            self.state, self.takeover = RunState.TAKEN_OVER, (event.flow, event.index)
        elif isinstance(event, HandedBack):
            self.state, self.takeover = RunState.RUNNING, None
        elif self.state is RunState.TAKEN_OVER:
            pass  # the engine waits (Paused, Resumed) until the hand-back
        elif isinstance(event, RunStarted) and self.state is not RunState.PAUSING:
            self.state = RunState.RUNNING
        elif isinstance(event, Paused):
            self.state = RunState.PAUSED
        elif isinstance(event, (Resumed, StepStarted)) and self.state is RunState.PAUSED:
            self.state = RunState.RUNNING
        return self.state is not before
