"""Read models of the store: small frozen dataclasses returned by queries.

They are plain data (no ORM state), safe to hand to another thread.  Times
are timezone-aware UTC ``datetime``; durations are in the unit their name
says.  Screenshot paths are relative to the store's media folder (resolve
them with :meth:`core.store.Store.media_path`).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from core.domain import EscalationCandidate

__all__ = [
    "RunSummary", "StepRecord", "ObservationRecord", "ResolutionRecord", "VerdictRecord",
    "EscalationRecord", "RunDetail",
]


@dataclass(frozen=True, slots=True)
class RunSummary:
    """One row of ``runs``.

    Attributes
    ----------
    status : str
        ``running`` while in progress, then the run result's status
        (``passed``/``failed``/``escalated``/``stopped``/``error``), or
        ``interrupted`` when its process died before finishing.
    seconds : float | None
        Wall-clock duration in s (None until finished).
    reward : float | None
        Raw reward of an episodic task, else None.
    steps_total : int | None
        Steps in the flow file as the run ran it (None: not finished, or
        stored before schema version 4).
    """

    id: str
    project: str
    flow: str
    status: str
    started_at: datetime
    finished_at: datetime | None
    seconds: float | None
    heals: int
    invalid_actions: int
    reward: float | None
    error: str
    heals_by_strategy: dict[str, int]
    schema_version: int
    steps_total: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (times stay ``datetime``)."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class StepRecord:
    """One executed step; ``ms`` is the step's duration in ms."""

    index: int
    step_id: str
    title: str
    status: str
    attempts: int
    ms: float
    error: str


@dataclass(frozen=True, slots=True)
class ObservationRecord:
    """One observation; ``viewport`` in CSS px; ``screenshot`` relative path or None."""

    index: int
    when: str
    url: str
    title: str
    signature_digest: str
    element_count: int
    viewport: tuple[int, int]
    device_pixel_ratio: float
    timestamp_ms: float
    screenshot: str | None


@dataclass(frozen=True, slots=True)
class ResolutionRecord:
    """How a target was resolved; ``ms`` in ms; ``top`` = ({ref, score, label}, ...)."""

    index: int
    strategy: str
    ref: str | None
    score: float
    margin: float
    ms: float
    abstained: bool
    reason: str
    top: tuple[dict[str, Any], ...]


@dataclass(frozen=True, slots=True)
class VerdictRecord:
    """Post-verification of one action."""

    index: int
    kind: str
    expected: str
    observed: tuple[str, ...]
    reason: str


@dataclass(frozen=True, slots=True)
class EscalationRecord:
    """An escalation to a human."""

    index: int
    flow: str
    step_title: str
    reason: str
    candidates: tuple[EscalationCandidate, ...]
    side_effects: tuple[str, ...]
    created_at: datetime
    kind: str = ""
    plain: str = ""


@dataclass(frozen=True, slots=True)
class RunDetail:
    """A run and everything recorded for it, each list in recording order.

    ``hand_backs`` holds the 0-based step index of each takeover a person
    handed back in the run (one per stored correction, in order).
    """

    run: RunSummary
    steps: tuple[StepRecord, ...]
    observations: tuple[ObservationRecord, ...]
    resolutions: tuple[ResolutionRecord, ...]
    verdicts: tuple[VerdictRecord, ...]
    escalations: tuple[EscalationRecord, ...]
    hand_backs: tuple[int, ...] = ()

    def for_step(self, index: int) -> dict[str, Any]:
        """Everything of step ``index``: ``{"step", "observations", "resolutions", "verdicts", "escalations"}``."""
        return {
            "step": next((s for s in self.steps if s.index == index), None),
            "observations": tuple(o for o in self.observations if o.index == index),
            "resolutions": tuple(r for r in self.resolutions if r.index == index),
            "verdicts": tuple(v for v in self.verdicts if v.index == index),
            "escalations": tuple(e for e in self.escalations if e.index == index),
        }

    def to_dict(self) -> dict[str, Any]:
        """Nested plain dicts (for JSON reports; times stay ``datetime``)."""
        return asdict(self)
