"""What one level of the chain concluded, and the margin rule that decides it."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .features import CandidatePool

__all__ = ["LevelResult", "decide", "describe", "gap"]

_EPS = 1e-9


@dataclass(frozen=True, slots=True)
class LevelResult:
    """Outcome of one level.

    Attributes
    ----------
    strategy : str
        Level name (``"exact"``, ``"fuzzy_text"``, ``"semantic"``).
    scores : numpy.ndarray
        Score of every candidate of the pool (0..1; 0 = not eligible).
    winner : int | None
        Index of the chosen candidate in the pool, None when the level
        fell through.
    score : float
        Winner's score (best score when it fell through).
    margin : float
        Best minus runner-up at this level.
    reason : str
        One sentence: why it won or fell through.
    best, runner : int | None
        Index of the best candidate and of the runner-up (None when there
        is none); for the per-level trace of a resolution.
    chosen_by : str
        ``""`` when the scores alone chose the winner; ``"place"`` when a
        tie within the margin was broken by the landmark region / container
        (:func:`~core.locate.place.break_tie_by_place`); ``"query"`` when links to
        one path tied and the recorded link's query told them apart
        (:func:`~core.locate.place.break_tie_by_query`); ``"model"`` when a
        model's tie-breaker chose (:func:`~core.locate.tiebreak.break_tie`).
    """

    strategy: str
    scores: np.ndarray
    winner: int | None
    score: float
    margin: float
    reason: str
    best: int | None = None
    runner: int | None = None
    chosen_by: str = ""


def describe(pool: CandidatePool, i: int) -> str:
    """Short human label of candidate ``i``: ``button 'Export report' (ref 0:3)``."""
    f = pool.features[i]
    label = f.raw_label[:40]
    kind = f.role or f.tag or "element"
    return f"{kind} '{label}' ({pool.candidates[i].ref})" if label else f"{kind} ({pool.candidates[i].ref})"


def gap(lead: float, margin: float) -> str:
    """``lead`` as shown beside ``margin``: 2 decimals, 3 when 2 would show a lead under the margin as equal to it."""
    two = f"{lead:.2f}"
    return f"{lead:.3f}" if two == f"{margin:.2f}" and lead < margin else two


def _lead(scores: np.ndarray, idx: np.ndarray) -> tuple[int, float, float, int | None]:
    """Best index, its score, lead over the runner-up and the runner-up index, within ``idx``."""
    sub = scores[idx]
    if len(sub) == 1:
        return int(idx[0]), float(sub[0]), float(sub[0]), None
    top2 = np.argpartition(-sub, 1)[:2]
    a, b = (top2[0], top2[1]) if sub[top2[0]] >= sub[top2[1]] else (top2[1], top2[0])
    return int(idx[a]), float(sub[a]), float(sub[a] - sub[b]), int(idx[b])


def _hidden_twins_only(pool: CandidatePool, scores: np.ndarray, w: int, w_score: float, margin: float) -> bool:
    """Every hidden candidate scoring within ``margin`` of ``w`` (or above) is ``w``'s twin.

    A twin has the same role and the same label as shown (a desktop and a
    mobile copy of one menu).  Preferring the visible copy is then safe;
    preferring a visible *other* element over a better-scoring hidden one
    would be picking the runner-up in silence (failure kind 3).
    """
    fw = pool.features[w]
    for i in np.flatnonzero(scores >= w_score - margin - _EPS):
        if pool.visible[i] or i == w:
            continue
        f = pool.features[int(i)]
        if f.role != fw.role or f.label_key != fw.label_key:
            return False
    return True


def decide(
    strategy: str, scores: np.ndarray, pool: CandidatePool, *, margin: float, minimum: float,
    strict_minimum: bool = False,
) -> LevelResult:
    """Apply the margin rule to one level's scores.

    The best candidate wins when its score reaches ``minimum`` (exceeds it when
    ``strict_minimum``) and it leads the runner-up by at least ``margin`` and
    by more than nothing (ties never win).  When that fails and some
    candidates are invisible, the rule is retried among the visible ones only,
    provided the best visible one is within ``margin`` of the overall best
    (disabled or invisible candidates stay candidates, but visible ones are
    preferred).
    """
    n = len(scores)
    if n == 0 or float(scores.max(initial=0.0)) <= 0.0:
        return LevelResult(strategy, scores, None, 0.0, 0.0, "no candidate scored")

    def ok(best: float, lead: float) -> bool:
        above = best > minimum + _EPS if strict_minimum else best >= minimum - _EPS
        return above and lead > _EPS and lead >= margin - _EPS

    all_idx = np.arange(n)
    best, best_s, lead, runner = _lead(scores, all_idx)
    if ok(best_s, lead):
        return LevelResult(strategy, scores, best, best_s, lead,
                           f"{describe(pool, best)} scored {best_s:.2f}, {lead:.2f} ahead", best, runner)
    vis = np.fromiter(pool.visible, dtype=bool, count=n)
    if not vis.all() and vis.any():
        v_idx = all_idx[vis]
        v_best, v_s, v_lead, v_runner = _lead(scores, v_idx)
        if v_s >= best_s - margin - _EPS and ok(v_s, v_lead) and _hidden_twins_only(pool, scores, v_best, v_s, margin):
            return LevelResult(strategy, scores, v_best, v_s, v_lead,
                               f"{describe(pool, v_best)} scored {v_s:.2f}, {v_lead:.2f} ahead "
                               "of the visible candidates (the hidden ones near it are its twins)", v_best, v_runner)
    cmp = "above" if strict_minimum else "of at least"
    if not (best_s > minimum + _EPS if strict_minimum else best_s >= minimum - _EPS):
        why = f"the best, {describe(pool, best)}, scored {best_s:.2f}; it needs a score {cmp} {minimum:.2f}"
    elif runner is None or lead <= _EPS:
        other = f" and {describe(pool, runner)}" if runner is not None else ""
        why = f"tie at {best_s:.2f} between {describe(pool, best)}{other}"
    else:
        why = (f"{describe(pool, best)} scored {best_s:.2f} and the next best, {describe(pool, runner)}, "
               f"{float(scores[runner]):.2f}: {gap(lead, margin)} apart, under the margin {margin:.2f}")
    return LevelResult(strategy, scores, None, best_s, lead, why, best, runner)
