"""Place tie-break shared by the levels: the same element twice on a page, told apart by where it lives.

Only what a new release keeps counts as place: the landmark region above
the element (header, nav, main, footer, form... from its XPath) and the
title of its dialog or form.  XPath indexes and coordinates do not - a
release that moves a link to where a button was (failure kind 1), or a
breadcrumb next to a same-named title link in one region (kind 10), would
make them point at the wrong element.
"""
from __future__ import annotations

import numpy as np

from .config import LocatorConfig
from .features import CandidatePool, Features
from .level import LevelResult, describe
from .textsim import text_similarity_many

__all__ = ["sim_region", "place_similarity", "break_tie_by_place", "MAX_TIED"]

#: The place tie-break applies to at most this many tied candidates (a
#: duplicated control, not a list of look-alikes).
MAX_TIED = 3

#: Text similarity below this is chance (same floor as SEMANTIC's TEXT_FLOOR).
_FLOOR = 0.4


def _sharpen(s: np.ndarray) -> np.ndarray:
    return np.clip((s - _FLOOR) / (1.0 - _FLOOR), 0.0, 1.0)


def sim_region(t: Features, pool: CandidatePool) -> np.ndarray:
    """Jaccard of the landmark sets above the elements (both empty = 1)."""
    a = t.landmarks
    return np.fromiter(
        ((len(a & s) / len(a | s)) if (a or s) else 1.0 for s in pool.column("landmarks")),
        dtype=np.float64, count=len(pool),
    )


def place_similarity(t: Features, pool: CandidatePool, idx: np.ndarray) -> np.ndarray:
    """Mean of landmark-region and container similarity (those known) for ``idx``.

    Only what a new release keeps: the landmark the element lives in
    (header, nav, main, footer, form...) and its dialog/form title.  Neither
    the XPath nor the coordinates: a release that moves a link to where a
    button was (failure kind 1), or a breadcrumb link next to a same-named
    title (kind 10), would make them point at the wrong element.
    """
    parts = []
    if t.xpath_steps:
        parts.append(sim_region(t, pool)[idx])
    if t.container:
        col = pool.column("container")
        parts.append(_sharpen(text_similarity_many(t.container, t.container, [col[i] for i in idx],
                                                   [col[i] for i in idx])))
    if not parts:
        return np.zeros(len(idx))
    return np.mean(parts, axis=0)


def break_tie_by_place(
    strategy: str, t: Features, pool: CandidatePool, scores: np.ndarray, res: LevelResult, config: LocatorConfig,
) -> LevelResult:
    """Among candidates tied within the margin, the one clearly in the target's place.

    The same link often appears twice (header and footer, desktop and
    mobile menu).  When the candidates within ``margin`` of the best differ
    in place - landmark region and container (:func:`place_similarity`) -
    by at least ``margin``, the one in the target's place wins.  Siblings of
    one list share both and stay tied, so the chain abstains on them; so do
    a breadcrumb and a title link in one region (failure kind 10).
    """
    group = np.flatnonzero(scores >= res.score - config.margin)
    if not 2 <= len(group) <= MAX_TIED:
        return res
    place = place_similarity(t, pool, group)
    order = np.argsort(-place)
    lead = float(place[order[0]] - place[order[1]])
    if lead < config.margin or lead <= 0:
        return res
    w = int(group[order[0]])
    return LevelResult(
        strategy, scores, w, float(scores[w]), float(scores[w] - max(scores[j] for j in group if j != w)),
        f"{describe(pool, w)} scored {scores[w]:.2f}, tied within the margin with "
        f"{len(group) - 1} other(s) but {lead:.2f} closer to the target's place in the page",
        w, int(max((j for j in group if j != w), key=lambda j: scores[j])), "place",
    )
