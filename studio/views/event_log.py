"""Event log: one line per engine event, for following a run closely."""
from __future__ import annotations

import re
import time
from dataclasses import fields, is_dataclass

from PySide6.QtGui import QFont
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from core.engine.events import (
    ActionPerformed, BreakerChanged, EngineEvent, EscalationRaised, FlowFinished, FlowStarted, HandedBack,
    ObservationMade, Paused, Recovered, Resumed, RunFinished, RunStarted, StateGraphChanged, StateNoted,
    StepEvidenceRecorded, StepFinished, StepStarted, TakeoverStarted, TargetResolved, VerdictReached,
)
from core.engine.report import result_label, results_line

from ..plain_words import plain_words
from ..theme import status_label

#: Escalation answer -> what the log says the person can do.
ANSWER_WORDS = {"retry": "retry", "skip": "skip the step", "stop": "stop", "take_over": "take over",
                "compensate": "run the compensation", "use_candidate": "choose a candidate"}
#: Escalation kind -> plain words (the escalations panel's labels, lower case).
KIND_WORDS = {"abstained": "the target was not found for sure", "breaker_open": "the circuit breaker is open",
              "precondition": "a pre-check failed", "failed": "the step failed",
              "irreversible": "an irreversible step failed", "assertion": "a check did not hold",
              "budget": "the step's budget is spent", "no_decision": "no decision", "approval": "approval needed",
              "crashed": "the browser crashed", "loop": "the same action again", "stagnation": "nothing changes",
              "page": "the page is broken or still loading"}

__all__ = ["EventLog", "describe_event", "plain", "SILENT"]


_SNAKE = re.compile(r"^[a-z]+(?:_[a-z]+)+$")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
#: Events not written to the log: a frame of the page during a takeover comes many times a second, a phase
#: change with every phase; the live view and the steps table show them.
SILENT = ("TakeoverFrame", "PhaseChanged", "LiveFrame")


def _words(name: str) -> str:
    """``"TakeoverActionRecorded"`` -> ``"Takeover action recorded"``."""
    text = _CAMEL.sub(" ", name)
    return text[:1].upper() + text[1:].lower()


def plain(value: object) -> str:
    """A value as a person reads it: no snake_case identifiers, no reprs, no bytes ("" when not worth a word)."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return ""  # a screenshot or a crop: the live view shows it
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.2f}"
    if isinstance(value, str):
        return value.replace("_", " ") if _SNAKE.match(value) else plain_words(value)
    if isinstance(value, (tuple, list)):
        items = [plain(v) for v in value]
        if len(items) > 3 or any(is_dataclass(v) for v in value):
            return f"{len(items)} item{'s' * (len(items) != 1)}" if items else ""
        return ", ".join(i for i in items if i)
    if is_dataclass(value) or isinstance(value, dict):
        return ""  # a nested record: its own event or panel says it in full
    return str(value)


def _kind(text: str) -> str:
    return text.replace("_", " ")


def describe_event(event: EngineEvent) -> str:
    """One readable line for ``event`` in plain words (no screenshot bytes, no reprs, no snake_case); "" for an
    event not worth a line (:data:`SILENT`)."""
    name = type(event).__name__
    if name in SILENT:
        return ""
    words = _words(name)
    if isinstance(event, ObservationMade):
        o = event.observation
        return (f"Page seen {event.when} step {event.index + 1}: {o.url} \u00b7 {len(o.candidates)} elements"
                f" \u00b7 pixel ratio {o.device_pixel_ratio:g}")
    if isinstance(event, TargetResolved):
        r = event.resolution
        what = "not found for sure (abstained)" if r.abstained else (
            f"found by {_kind(r.strategy)}, score {r.score:.2f}, margin {r.margin:.2f}")
        return f"Target of step {event.index + 1}: {what} in {r.ms:.0f} ms"
    if isinstance(event, VerdictReached):
        v = event.verdict
        observed = ", ".join(_kind(o) for o in v.observed) or "nothing"
        return (f"Check of step {event.index + 1}: {_kind(v.kind)} (expected {_kind(v.expected) or 'any change'}; "
                f"seen {observed})")
    if isinstance(event, StepFinished):
        extra = " \u00b7 healed" if event.healed else ""
        error = f" \u00b7 {plain_words(event.error)}" if event.error else ""
        return f"Step {event.index + 1} {status_label(event.status)} in {event.ms:,.0f} ms{extra}{error}"
    if isinstance(event, StepStarted):
        again = f" (attempt {event.attempt})" if event.attempt > 1 else ""
        return f"Step {event.index + 1} started: {event.title}{again}"
    if isinstance(event, ActionPerformed):
        if event.ok:
            return f"Step {event.index + 1}: {_kind(event.kind)} done"
        return f"Step {event.index + 1}: {_kind(event.kind)} failed \u2014 {plain_words(event.error)}"
    if isinstance(event, EscalationRaised):
        answers = ", ".join(ANSWER_WORDS.get(a, _kind(a)) for a in event.answers)
        n = len(event.candidates)
        kind = KIND_WORDS.get(event.kind, _kind(event.kind))
        return (f"Escalated at step {event.index + 1} ({kind}): {plain_words(event.plain or event.reason)[:160]} \u00b7 "
                f"{n} candidate{'' if n == 1 else 's'} \u00b7 you can: {answers}")
    if isinstance(event, Paused):
        return f"Paused at step {event.index + 1}" + (f": {plain_words(event.reason)}" if event.reason else "")
    if isinstance(event, Resumed):
        return "Going on"
    if isinstance(event, BreakerChanged):
        state = {"closed": "closed", "open": "open", "half_open": "half open"}.get(event.state, _kind(event.state))
        return f"Breaker {state} \u00b7 {event.consecutive_failures}/{event.threshold} failures in a row"
    if isinstance(event, Recovered):
        how = {"rollback": "Rolled back", "dismiss": "Closed a popup", "compensate": "Compensated"}.get(
            event.how, _kind(event.how))
        return f"{how} at step {event.index + 1}{'' if event.ok else ' (not complete)'}: {plain_words(event.detail)}"
    if isinstance(event, TakeoverStarted):
        return f"{event.flow}: taken over at step {event.index + 1} (you have the page)"
    if isinstance(event, HandedBack):
        return f"{event.flow}: handed back, continuing from step {event.continue_from + 1}"
    if isinstance(event, FlowStarted):
        return f"Flow {event.flow} started \u00b7 {len(event.step_titles)} steps"
    if isinstance(event, RunStarted):
        return f"Run started: {', '.join(event.flows)}"
    if isinstance(event, FlowFinished):
        r = event.result
        return (f"Flow {r.flow}: {result_label(r)} \u00b7 {len(r.steps)} steps \u00b7 {r.heals} heals"
                f" \u00b7 {r.seconds:.1f} s")
    if isinstance(event, RunFinished):
        return "Run finished: " + results_line(event.results)
    if isinstance(event, StepEvidenceRecorded):
        ev = event.evidence
        diff = "no screenshots compared" if ev.diff is None else f"{len(ev.diff.regions)} changed regions"
        failed = "".join(f" ({r.shown})" for r in ev.failed_requests[:1])
        return (f"Evidence of step {event.index + 1}: {diff} \u00b7 {len(ev.console)} console errors \u00b7 "
                f"{len(ev.failed_requests)} failed requests{failed} \u00b7 {ev.active_ms:,.0f} ms active")
    if isinstance(event, StateGraphChanged):
        page = event.target.title or event.target.url or "a page"
        news = [w for w, on in (("a new page", event.new_target), ("a new action", event.new_edge),
                                ("back to a page seen before", event.revisit)) if on]
        return f"Step {event.index + 1} led to {page}" + (f" ({', '.join(news)})" if news else " (seen before)")
    if isinstance(event, StateNoted):
        b = event.belief
        why = f": {plain_words(b.evidence[0])}" if b.evidence else ""
        return f"Page {event.moment} step {event.index + 1} looks {_kind(b.state)}{why}"
    from ..skill_events import describe_skill_event  # noqa: PLC0415 - the skill runtime's and learner's events

    skill_line = describe_skill_event(event)
    if skill_line is not None:
        return skill_line
    parts = []
    if is_dataclass(event):
        for f in fields(event):
            if f.name in ("run_id", "flow"):
                continue
            v = getattr(event, f.name)
            if f.name == "index" and isinstance(v, int):
                parts.append(f"step {v + 1}")
                continue
            text = plain(v)
            if text:
                parts.append(f"{f.name.replace('_', ' ')} {text[:80]}")
    return f"{words}: " + ", ".join(parts) if parts else words


class EventLog(QPlainTextEdit):
    """Read-only log of engine events with wall-clock times; keeps the last 5000 lines."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setMaximumBlockCount(5000)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        font = QFont("DejaVu Sans Mono")
        font.setPointSizeF(8.5)
        self.setFont(font)

    def apply(self, event: EngineEvent) -> None:
        """Append a line for ``event`` (none for the events of :data:`SILENT`)."""
        line = describe_event(event)
        if line:
            self.log(line)

    def log(self, text: str) -> None:
        """Append a line of free text."""
        self.appendPlainText(f"{time.strftime('%H:%M:%S')}  {text}")
