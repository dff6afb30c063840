"""What the model cost in the last run (P9) and the judge alarm (P7): one status-bar label.

Shown only when a run used a model (a ``ModelUsage`` event); a project
without a ``model:`` section never shows it.
"""
from __future__ import annotations

from PySide6.QtWidgets import QLabel, QWidget

from core.engine.events import EngineEvent, ModelUsage

from ..theme import COLORS, STATUS_COLORS

__all__ = ["ModelUsageLabel"]


def _tokens(n: float) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else f"{int(n)}"


class ModelUsageLabel(QLabel):
    """``Model scripted · 2 calls · 1 cached · 2 by rules · 5.1k+0.2k tokens · 840 ms``; the alarm in colour."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.usage: ModelUsage | None = None
        self.hide()

    def apply(self, event: EngineEvent) -> None:
        """Update from a ``ModelUsage`` event (others are ignored)."""
        if isinstance(event, ModelUsage):
            self.set_usage(event)

    def reset(self) -> None:
        self.usage = None
        self.clear()
        self.hide()

    def set_usage(self, u: ModelUsage) -> None:
        c = u.counters
        text = (f"Model {u.model} \u00b7 {int(c.get('calls', 0))} calls \u00b7 {int(c.get('cache_hits', 0))} cached"
                f" \u00b7 {int(c.get('rule_decisions', 0))} by rules \u00b7 "
                f"{_tokens(c.get('prompt_tokens', 0))}+{_tokens(c.get('completion_tokens', 0))} tokens \u00b7 "
                f"{c.get('latency_ms', 0):.0f} ms")
        if c.get("errors"):
            text += f" \u00b7 {int(c['errors'])} failed"
        if u.alarm:
            text += f" \u00b7 judged {u.judged_share:.0%} of goals (above 30%)"
        self.usage = u
        self.setText(text)
        color = STATUS_COLORS["escalated"] if u.alarm or c.get("errors") else COLORS["muted"]
        self.setStyleSheet(f"color: {color}; padding: 0 8px;")
        self.setToolTip("Model calls, cache hits, decisions made by rules, tokens (prompt + completion) and "
                        "latency of the last run; the share of goals passed by the model's judgement "
                        "instead of an assertion raises an alarm above 30%.")
        self.show()
