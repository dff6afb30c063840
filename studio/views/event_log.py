"""Event log: one line per engine event, for following a run closely."""
from __future__ import annotations

import time
from dataclasses import fields, is_dataclass

from PySide6.QtGui import QFont
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from core.engine.events import (
    EngineEvent, EscalationRaised, FlowFinished, HandedBack, ObservationMade, RunFinished, StepFinished,
    TakeoverStarted, TargetResolved, VerdictReached,
)
from core.engine.events import StepEvidenceRecorded
from core.engine.report import result_label, results_line

__all__ = ["EventLog", "describe_event"]


def describe_event(event: EngineEvent) -> str:
    """One readable line for ``event`` (no screenshot bytes, no long texts)."""
    name = type(event).__name__
    if isinstance(event, ObservationMade):
        o = event.observation
        return (f"{name} {event.when} step {event.index + 1}: {o.url} \u00b7 {len(o.candidates)} candidates"
                f" \u00b7 dpr {o.device_pixel_ratio:g}")
    if isinstance(event, TargetResolved):
        r = event.resolution
        what = "abstained" if r.abstained else f"{r.strategy} {r.score:.2f} (margin {r.margin:.2f})"
        return f"{name} step {event.index + 1}: {what} in {r.ms:.0f} ms"
    if isinstance(event, VerdictReached):
        v = event.verdict
        observed = ", ".join(v.observed) or "nothing"
        return f"{name} step {event.index + 1}: {v.kind} (expected {v.expected or '?'}; observed {observed})"
    if isinstance(event, StepFinished):
        extra = " \u00b7 healed" if event.healed else ""
        error = f" \u00b7 {event.error}" if event.error else ""
        return f"{name} step {event.index + 1}: {event.status} in {event.ms:,.0f} ms{extra}{error}"
    if isinstance(event, EscalationRaised):
        answers = "/".join(a.replace("_", " ") for a in event.answers)
        n = len(event.candidates)
        return (f"{name} step {event.index + 1} ({event.kind}): {event.reason[:120]} \u00b7 "
                f"{n} candidate{'' if n == 1 else 's'} \u00b7 answers {answers}")
    if isinstance(event, TakeoverStarted):
        return f"{name} {event.flow}: taken over at step {event.index + 1}"
    if isinstance(event, HandedBack):
        return f"{name} {event.flow}: handed back, continuing from step {event.continue_from + 1}"
    if isinstance(event, FlowFinished):
        r = event.result
        return (f"{name} {r.flow}: {result_label(r)} \u00b7 {len(r.steps)} steps \u00b7 {r.heals} heals"
                f" \u00b7 {r.seconds:.1f} s")
    if isinstance(event, RunFinished):
        return f"{name}: " + results_line(event.results)
    if isinstance(event, StepEvidenceRecorded):
        ev = event.evidence
        diff = "no screenshots compared" if ev.diff is None else f"{len(ev.diff.regions)} changed regions"
        failed = "".join(f" ({r.shown})" for r in ev.failed_requests[:1])
        return (f"{name} step {event.index + 1}: {diff} \u00b7 {len(ev.console)} console errors \u00b7 "
                f"{len(ev.failed_requests)} failed requests{failed} \u00b7 {ev.active_ms:,.0f} ms active")
    from ..skill_events import describe_skill_event  # noqa: PLC0415 - the skill runtime's and learner's events

    skill_line = describe_skill_event(event)
    if skill_line is not None:
        return skill_line
    parts = []
    if is_dataclass(event):
        for f in fields(event):
            if f.name == "run_id":
                continue
            v = getattr(event, f.name)
            if f.name == "index" and isinstance(v, int):
                v = v + 1
                parts.append(f"step={v}")
                continue
            if isinstance(v, tuple):
                v = f"[{len(v)}]" if len(v) > 3 else ", ".join(map(str, v))
            text = str(v)
            if text:
                parts.append(f"{f.name}={text[:80]}")
    return f"{name} " + " ".join(parts)


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
        """Append a line for ``event``."""
        self.log(describe_event(event))

    def log(self, text: str) -> None:
        """Append a line of free text."""
        self.appendPlainText(f"{time.strftime('%H:%M:%S')}  {text}")
