"""An event sink for engine tests: collects every event; ``of(type)`` filters, ``phases(i)`` lists phase names."""
from __future__ import annotations

from typing import Any

from core.engine.events import EngineEvent, PhaseChanged


class EventLog:
    """Collects events in the order the engine emits them."""

    def __init__(self) -> None:
        self.events: list[EngineEvent] = []

    def __call__(self, event: EngineEvent) -> None:
        self.events.append(event)

    def of(self, kind: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]

    def phases(self, index: int | None = None) -> list[str]:
        return [e.phase for e in self.of(PhaseChanged) if index is None or e.index == index]
