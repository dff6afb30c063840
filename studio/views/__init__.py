"""Studio panels: each one is a thin view over events, openable alone (``studio.preview``)."""
from .breaker import BreakerIndicator
from .escalations import EscalationsModel, EscalationsPanel
from .event_log import EventLog
from .live_view import LiveView
from .steps import StepRow, StepsModel, StepsPanel

__all__ = [
    "BreakerIndicator", "EscalationsModel", "EscalationsPanel", "EventLog", "LiveView",
    "StepRow", "StepsModel", "StepsPanel",
]
