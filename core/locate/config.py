"""Settings of the locator fallback chain (R2)."""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LocatorConfig", "STRATEGIES"]

#: The levels of the chain, fastest first (R2, seed 000).
STRATEGIES: tuple[str, ...] = ("exact", "fuzzy_text", "semantic")


@dataclass(frozen=True, slots=True)
class LocatorConfig:
    """How strict each level of the locator chain is.

    Attributes
    ----------
    margin : float
        Score lead (0..1) the best candidate of a level must have over the
        runner-up; otherwise the level falls through (ties never win).  0.1:
        on the Similo dev half (318 pairs) it gives 0.6 % wrong picks and
        89 % located (``core/bench/similo.py``).
    position_tolerance_px : float
        EXACT accepts a candidate whose box centre moved at most this far
        (CSS px) when both boxes are known.  5 px, seed 000 R2.
    fuzzy_threshold : float
        FUZZY_TEXT needs a label similarity strictly above this (0..1).
        0.8, seed 000 R2.
    semantic_min_score : float
        SEMANTIC needs a weighted similarity of at least this (0..1).  0.45,
        tuned on the Similo dev half.
    semantic_min_evidence : float
        When the target has identity attributes (label, text, placeholder,
        alt, title, id, name attribute, test id, href), a SEMANTIC candidate
        may win or block only if one of them agrees at least this much
        (0..1, text similarities rescaled from 0.4..1 to 0..1).  0.7 - about
        a raw label similarity of 0.82, FUZZY_TEXT's bar - tuned on the
        Similo dev half.
    place_tiebreak : bool
        When 2-3 SEMANTIC candidates are tied within the margin, let the one
        clearly (by the margin) closer to the target's place - XPath, page
        region, position - win: the same link in header and footer.
    strategies : tuple[str, ...]
        Enabled levels, a subset of ``("exact", "fuzzy_text", "semantic")``;
        they always run in the chain's order (fastest first).
    top_k : int
        How many scored candidates a :class:`~core.domain.Resolution` keeps.
    """

    margin: float = 0.1
    position_tolerance_px: float = 5.0
    fuzzy_threshold: float = 0.8
    semantic_min_score: float = 0.45
    semantic_min_evidence: float = 0.7
    place_tiebreak: bool = True
    strategies: tuple[str, ...] = STRATEGIES
    top_k: int = 5

    def __post_init__(self) -> None:
        if not 0.0 <= self.margin <= 1.0:
            raise ValueError(f"margin must be in [0, 1], got {self.margin}")
        if self.position_tolerance_px < 0:
            raise ValueError("position_tolerance_px must be >= 0")
        if not 0.0 <= self.fuzzy_threshold <= 1.0:
            raise ValueError("fuzzy_threshold must be in [0, 1]")
        if not 0.0 <= self.semantic_min_score <= 1.0:
            raise ValueError("semantic_min_score must be in [0, 1]")
        if not 0.0 <= self.semantic_min_evidence <= 1.0:
            raise ValueError("semantic_min_evidence must be in [0, 1]")
        unknown = set(self.strategies) - set(STRATEGIES)
        if unknown:
            raise ValueError(f"unknown strategies {sorted(unknown)}; known: {STRATEGIES}")
        if self.top_k < 1:
            raise ValueError("top_k must be >= 1")
