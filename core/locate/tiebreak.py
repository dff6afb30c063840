"""The SEMANTIC level's optional tie-breaker (R2): asked only when 2-5 candidates are tied within the margin.

The chain stays pure logic: a tie-breaker is a callable handed in by the
engine (the model's, :mod:`core.plan.tiebreak`).  It may choose one of the
tied candidates; the choice counts only when its confidence is above
:data:`MIN_CONFIDENCE` (0.7, R2) and it is one of the tied, eligible
candidates - otherwise the level abstains as it would without it.  A choice
that wins here is still judged by every safety rule of the chain afterwards
(role crossing, contradicting name, hidden / disabled / covered,
irreversible steps needing a second independent level): the tie-breaker
never overrides them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from core.progress import counted
from core.domain import Candidate

from .config import LocatorConfig
from .features import CandidatePool
from .level import LevelResult, describe

__all__ = ["TieChoice", "TieBreaker", "MIN_CONFIDENCE", "MAX_TIED", "break_tie"]

#: A tie-breaker's choice is accepted only above this confidence (R2: "accept confidence > 0.7").
MIN_CONFIDENCE = 0.7
#: Most tied candidates shown to a tie-breaker (the locator's top 5).
MAX_TIED = 5


@dataclass(frozen=True, slots=True)
class TieChoice:
    """A tie-breaker's answer: the chosen candidate's ref ("" = none), confidence 0..1, one sentence."""

    ref: str
    confidence: float
    reason: str = ""


#: ``(tied candidates, best first) -> choice or None`` (None: it could not answer; the level abstains).
TieBreaker = Callable[[Sequence[Candidate]], "TieChoice | None"]


def break_tie(res: LevelResult, scores: np.ndarray, pool: CandidatePool, config: LocatorConfig,
              tie_breaker: TieBreaker | None) -> LevelResult:
    """``res`` with the tie-breaker's choice as winner, or ``res`` unchanged.

    Asked only when the level has no winner, its best score reaches
    ``semantic_min_score`` and 2..:data:`MAX_TIED` eligible candidates
    (score > 0) are within ``margin`` of the best.
    """
    if tie_breaker is None or res.winner is not None or res.score < config.semantic_min_score or len(scores) < 2:
        return res
    group = [int(i) for i in np.flatnonzero((scores > 0) & (scores >= res.score - config.margin - 1e-9))]
    if not 2 <= len(group) <= MAX_TIED:
        return res
    group.sort(key=lambda i: -scores[i])
    try:
        choice = tie_breaker([pool.candidates[i] for i in group])
    except Exception as exc:  # noqa: BLE001 - a failing tie-breaker is an abstention, never a guess
        return LevelResult(res.strategy, scores, None, res.score, res.margin,
                           f"{res.reason}; the tie-breaker failed: {exc}", res.best, res.runner)
    if choice is None:
        return res
    w = next((i for i in group if pool.candidates[i].ref == choice.ref), None)
    if w is None or choice.confidence <= MIN_CONFIDENCE:
        why = (f"the model chose none of them (confidence {choice.confidence:.2f})" if w is None else
               f"the model chose {describe(pool, w)} with confidence {choice.confidence:.2f}, needs above "
               f"{MIN_CONFIDENCE:.1f}")
        return LevelResult(res.strategy, scores, None, res.score, res.margin, f"{res.reason}; {why}",
                           res.best, res.runner)
    others = [scores[j] for j in group if j != w]
    return LevelResult(
        res.strategy, scores, w, float(scores[w]), float(scores[w] - max(others)),
        f"{describe(pool, w)} scored {scores[w]:.2f}, tied within the margin with {counted(len(group) - 1, 'other')}; "
        f"the model chose it (confidence {choice.confidence:.2f}: {choice.reason[:80]})",
        res.best, res.runner, "model")
