"""FUZZY_TEXT level (R2): a similar label on an element of the same kind.

Score = label similarity (:func:`~core.locate.textsim.text_similarity_many`:
1 for equal labels, 0.95 for labels equal without decorations - "Query" /
"Query (Q)", the regex part of R2 - else the best of the indel ratio, the
word-order insensitive ratio and a containment score for words added at
either end) times :func:`~core.locate.roles.kind_factor` (1 same kind, 0.9
same family, 0.8 otherwise: such a candidate never wins, it only blocks).
Candidates in another frame or dialog score 0.

The best must exceed ``fuzzy_threshold`` (0.8, R2) and lead the
runner-up - any candidate, even below the threshold - by the margin, so
"Export report" is never taken for "Save report" (0.67).  A text part
(``span``) matching the label hands its score to the enclosing link or
button when that fits the target's kind better.  Among 2-3 candidates
tied within the margin, one clearly in the target's landmark region or
container wins (:func:`~core.locate.place.break_tie_by_place`).

A label that gained words ("Apply" -> "Apply filters") scores below the
threshold by the containment formula; it is still taken when two
independent facts agree (:func:`_grown_label`): it is the only candidate of
the target's kind whose label holds the recorded label on word boundaries,
and it sits at the recorded element's place in its document (the same CSS
path, same frame, same ``type``).
"""
from __future__ import annotations

import numpy as np

from .config import LocatorConfig
from .features import CandidatePool, Features, same_context
from .level import LevelResult, decide, describe
from .place import break_tie_by_place, break_tie_by_query
from .roles import kind_factor
from .textsim import containment, text_similarity_many

__all__ = ["fuzzy_level", "kind_factors"]


def kind_factors(t: Features, pool: CandidatePool) -> np.ndarray:
    """:func:`~core.locate.roles.kind_factor` of every candidate (0 in another frame or dialog)."""
    return np.fromiter(
        (kind_factor(t.tag, t.role, t.family, c.tag, c.role, c.family) if same_context(t, c) else 0.0
         for c in pool.features),
        dtype=np.float64, count=len(pool),
    )


def _promote_parts(scores: np.ndarray, sims: np.ndarray, factors: np.ndarray, pool: CandidatePool) -> None:
    """Let an enclosing candidate of the target's kind take its text part's match.

    A label is often the text of a ``span`` inside the link or button that
    was recorded ("Facebook" inside the link "Facebook (Opens Overlay)").
    When the nearest enclosing candidate (by XPath) is of a better-fitting
    kind than the part, it gets the part's label similarity times its own
    kind factor - so it leads the part instead of tying with it.
    """
    parents = pool.parents()
    for i in np.flatnonzero(sims > 0.0):
        p = parents[i]
        if p >= 0 and factors[p] > factors[i]:
            scores[p] = max(scores[p], sims[i] * factors[p])


def fuzzy_level(t: Features, pool: CandidatePool, config: LocatorConfig) -> LevelResult:
    """Score label similarity among compatible candidates and apply the margin rule."""
    n = len(pool)
    if not t.label:
        return LevelResult("fuzzy_text", np.zeros(n), None, 0.0, 0.0, "the target has no label")
    sims = text_similarity_many(t.label, t.label_core, pool.labels, pool.label_cores, t.label_key, pool.label_keys)
    factors = kind_factors(t, pool)
    scores = sims * factors
    _promote_parts(scores, sims, factors, pool)
    res = decide("fuzzy_text", scores, pool, margin=config.margin,
                 minimum=config.fuzzy_threshold, strict_minimum=True)
    if res.winner is None and res.score > config.fuzzy_threshold:  # links that differ only by their query (issue 19)
        res = break_tie_by_query("fuzzy_text", t, pool, scores, res, config)
    if res.winner is None and res.score > config.fuzzy_threshold and config.place_tiebreak:
        res = break_tie_by_place("fuzzy_text", t, pool, scores, res, config)
    if res.winner is None and res.best is not None:
        res = _grown_label(t, pool, scores, factors, res, config) or res
    if res.winner is None and res.reason == "no candidate scored":
        res = LevelResult("fuzzy_text", scores, None, 0.0, 0.0,
                          f"no compatible candidate has a label like '{t.raw_label[:40]}'")
    return res


def _grown_label(t: Features, pool: CandidatePool, scores: np.ndarray, factors: np.ndarray,
                 res: LevelResult, config: LocatorConfig) -> LevelResult | None:
    """The one same-kind candidate whose label grew around the recorded one, at the recorded CSS path.

    Returns a winning :class:`LevelResult` (score = its label similarity,
    margin = lead over the runner-up), or None when any condition fails:
    another compatible candidate also holds the label, the kinds differ,
    the CSS path, frame or ``type`` differ, or the lead is below the margin.
    """
    if not t.css_path or not t.label:
        return None
    holders = [i for i in range(len(pool)) if factors[i] >= 0.9
               and containment(t.label, pool.labels[i]) > 0.0]
    if len(holders) != 1:
        return None
    b = holders[0]
    f = pool.features[b]
    if factors[b] < 1.0 or f.css_path != t.css_path or f.frame != t.frame or (t.type and f.type != t.type):
        return None
    others = np.delete(scores, b)
    lead = float(scores[b] - (others.max() if len(others) else 0.0))
    if lead < config.margin:
        return None
    return LevelResult("fuzzy_text", scores, b, float(scores[b]), lead,
                       f"{describe(pool, b)} scored {scores[b]:.2f}: the only one whose label holds "
                       f"'{t.raw_label[:40]}', at the recorded CSS path, {lead:.2f} ahead", b, res.runner)
