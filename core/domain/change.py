"""Screen fingerprints, baselines and change reports (R1).

A *screen* is what one page shows at one moment, identified by a screen key
(URL path pattern, title, main heading, top dialog).  Its fingerprint has
three parts (R1): a perceptual hash of the screenshot, the baseline of its
key elements (position and text), and a layout signature (hash of the
serialized control tree).  Comparing a fingerprint with the stored baseline
gives a :class:`ChangeReport`.

Geometry is CSS px in *page* coordinates (viewport coordinates plus the main
frame's scroll offset), so scrolling does not read as "moved".
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Mapping

__all__ = [
    "ChangeThresholds", "KeyElement", "ScreenFingerprint", "ElementChangeKind", "ElementChange",
    "ChangeReport", "BaselineAlert",
]


@dataclass(frozen=True, slots=True)
class ChangeThresholds:
    """When a screen counts as changed (R1).

    Attributes
    ----------
    min_similarity : float
        Perceptual-hash similarity (1 - Hamming distance / bits) below which
        the screenshot changed.  0.95, R1.
    max_shift_px : float
        A key element whose box centre moved more than this (CSS px, page
        coordinates) moved.  20 px, R1.
    """

    min_similarity: float = 0.95
    max_shift_px: float = 20.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.min_similarity <= 1.0:
            raise ValueError(f"min_similarity must be in [0, 1], got {self.min_similarity}")
        if self.max_shift_px < 0:
            raise ValueError(f"max_shift_px must be >= 0, got {self.max_shift_px}")


@dataclass(frozen=True, slots=True)
class KeyElement:
    """One key element of a screen baseline.

    Attributes
    ----------
    key : str
        Identity within the screen, independent of the text:
        ``"<role>|<strong id or CSS path>"`` (``"button|#signin"``).
    role : str
        ARIA role or lower-case tag (``"heading"``, ``"main"`` for landmarks).
    text : str
        Accessible name / visible text, volatile parts normalized
        (:func:`core.state.normalize.normalize_text`), at most 80 chars.
    x, y, width, height : float
        Box in CSS px, page coordinates.
    """

    key: str
    role: str
    text: str
    x: float
    y: float
    width: float
    height: float

    @property
    def center(self) -> tuple[float, float]:
        """Box centre ``(cx, cy)`` in CSS px, page coordinates."""
        return (self.x + self.width / 2.0, self.y + self.height / 2.0)

    def to_mapping(self) -> dict[str, Any]:
        """``{"key", "role", "text", "box": [x, y, w, h]}`` rounded to 0.1 px, for the store."""
        return {"key": self.key, "role": self.role, "text": self.text,
                "box": [round(self.x, 1), round(self.y, 1), round(self.width, 1), round(self.height, 1)]}

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> "KeyElement":
        """Inverse of :meth:`to_mapping`; raises ``KeyError``/``ValueError`` on bad fields."""
        x, y, w, h = (float(v) for v in data["box"])
        return cls(str(data["key"]), str(data.get("role", "")), str(data.get("text", "")), x, y, w, h)


@dataclass(frozen=True, slots=True)
class ScreenFingerprint:
    """The R1 fingerprint of one observation.

    Attributes
    ----------
    screen_key : str
        ``"<path pattern> | <title> | <main heading> | <top dialog>"``: which
        screen this is (numbers and ids in the path become ``{n}`` / ``{id}``).
    phash : str
        64-bit perceptual hash of the screenshot (imagehash ``phash``, editable
        fields painted over first so typed values do not count) as 16 hex
        chars; ``""`` without a screenshot.
    layout : str
        SHA1 of the serialized control tree (role, tag, frame, dialog of every
        candidate, heading and landmark in document order; runs of identical
        entries collapsed, so a list that grew by one row is the same layout).
    elements : tuple[KeyElement, ...]
        The key elements, in document order.
    """

    screen_key: str
    phash: str
    layout: str
    elements: tuple[KeyElement, ...]


#: What happened to one key element (R1); ``screen`` means another screen than the baseline's.
ElementChangeKind = Literal["missing", "text_changed", "moved", "added", "screen"]


@dataclass(frozen=True, slots=True)
class ElementChange:
    """One element that changed against the baseline (R1).

    Attributes
    ----------
    kind : ElementChangeKind
        ``missing`` (in the baseline, not on the page), ``text_changed``
        (``before`` -> ``after``), ``moved`` (centre moved by ``dx, dy``,
        ``distance`` > the threshold), ``added`` (on the page, not in the
        baseline), ``screen`` (the screen key itself differs).
    key : str
        The element's :attr:`KeyElement.key` (the screen key for ``screen``).
    role : str
        Its role.
    before, after : str
        Text in the baseline and now (``""`` when absent).
    dx, dy, distance : float
        Centre shift in CSS px (``moved`` and ``text_changed``; 0 otherwise).
    """

    kind: ElementChangeKind
    key: str
    role: str = ""
    before: str = ""
    after: str = ""
    dx: float = 0.0
    dy: float = 0.0
    distance: float = 0.0

    def describe(self) -> str:
        """One line: ``button 'Sign in' moved by 24 px (dx 24, dy 0)``."""
        name = self.before or self.after or self.key
        if self.kind == "missing":
            return f"{self.role} {self.before!r} is missing"
        if self.kind == "added":
            return f"{self.role} {self.after!r} was added"
        if self.kind == "text_changed":
            return f"{self.role} text changed from {self.before!r} to {self.after!r}"
        if self.kind == "screen":
            return f"another screen: {self.before!r} -> {self.after!r}"
        return f"{self.role} {name!r} moved by {self.distance:.0f} px (dx {round(self.dx):+d}, dy {round(self.dy):+d})"

    def to_mapping(self) -> dict[str, Any]:
        """Plain dict for the store and JSON reports."""
        return {"kind": self.kind, "key": self.key, "role": self.role, "before": self.before, "after": self.after,
                "dx": round(self.dx, 1), "dy": round(self.dy, 1), "distance": round(self.distance, 1)}


@dataclass(frozen=True, slots=True)
class ChangeReport:
    """Outcome of comparing a screen with its baseline (R1).

    Attributes
    ----------
    screen_key : str
        The observed screen.
    status : str
        ``"new"`` (no baseline yet: this visit creates it), ``"unchanged"``
        or ``"changed"``.
    similarity : float | None
        Perceptual-hash similarity 0..1 (None when either side has no
        screenshot hash).
    layout_changed : bool
        The layout signature differs.
    changes : tuple[ElementChange, ...]
        Per element: missing, text changed, moved beyond the threshold, added.
    drift : float
        The largest centre shift (CSS px) of a matched key element, also
        when below the threshold.
    reasons : tuple[str, ...]
        Why it is "changed" (empty otherwise), one sentence each.
    """

    screen_key: str
    status: Literal["new", "unchanged", "changed"]
    similarity: float | None = None
    layout_changed: bool = False
    changes: tuple[ElementChange, ...] = ()
    drift: float = 0.0
    reasons: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        """True when the screen changed against its baseline (the fallback locator path, R1)."""
        return self.status == "changed"

    @property
    def unchanged(self) -> bool:
        """True when a baseline exists and the screen is within every threshold (the fast path, R1)."""
        return self.status == "unchanged"

    def summary(self) -> str:
        """One line for the CLI: reasons, then the first element changes."""
        if self.status != "changed":
            return self.status
        parts = list(self.reasons)
        parts += [c.describe() for c in self.changes[:6]]
        more = len(self.changes) - 6
        return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")

    def to_mapping(self) -> dict[str, Any]:
        """Plain dict for the store and JSON reports."""
        return {"screen_key": self.screen_key, "status": self.status,
                "similarity": None if self.similarity is None else round(self.similarity, 4),
                "layout_changed": self.layout_changed, "drift": round(self.drift, 1),
                "reasons": list(self.reasons), "changes": [c.to_mapping() for c in self.changes]}


@dataclass(frozen=True, slots=True)
class BaselineAlert:
    """A screen that differed beyond the threshold in a run that passed: its baseline is kept, not refreshed (R1).

    Attributes
    ----------
    flow, step_id : str
        Where the screen was seen (the step it was seen before).
    screen_key : str
        The baseline's screen.
    report : ChangeReport
        What changed.
    """

    flow: str
    step_id: str
    screen_key: str
    report: ChangeReport
