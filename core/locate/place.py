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

from core.progress import counted
from .config import LocatorConfig
from .features import CandidatePool, Features
from .identity import TIE_FLOOR
from .level import LevelResult, describe
from .textsim import text_similarity_many

__all__ = ["sim_region", "place_similarity", "break_tie_by_place", "break_tie_by_query", "query_similarity", "MAX_TIED",
           "QUERY_MIN"]

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
        f"{counted(len(group) - 1, 'other')} but {lead:.2f} closer to the target's place in the page",
        w, int(max((j for j in group if j != w), key=lambda j: scores[j])), "place",
    )


#: A link's query must resemble the recorded one at least this much (:func:`query_similarity`, 0..1) to win
#: a tie by it: half its pairs, or all its keys with other values.
QUERY_MIN = 0.5


def query_similarity(t: Features, c: Features) -> float:
    """How much link ``c``'s query is the recorded link ``t``'s, 0..1: the mean of the Jaccard index of their
    ``key=value`` pairs and that of their keys (``_facet=genre`` vs ``_sort=genre``: 0; the same pairs: 1)."""
    a, b = t.href_query, c.href_query
    if not a and not b:
        return 1.0
    ka, kb = {x.split("=", 1)[0] for x in a}, {x.split("=", 1)[0] for x in b}
    pairs = len(a & b) / len(a | b) if a | b else 1.0
    keys = len(ka & kb) / len(ka | kb) if ka | kb else 1.0
    return 0.5 * pairs + 0.5 * keys


def break_tie_by_query(
    strategy: str, t: Features, pool: CandidatePool, scores: np.ndarray, res: LevelResult, config: LocatorConfig,
) -> LevelResult:
    """Among links tied within the margin that go to one path and differ only by their query string, the one
    whose query is the recorded link's.

    A table page links a column name twice: "facet by genre" (``?_sort=year&_facet=genre``) and "sort by
    genre" (``?_sort=genre``).  Name, role and path are the same; what the link does is in its query.  The
    query is compared relative to the recording (:func:`query_similarity`, never the host: it changes with
    the server): the best must reach :data:`QUERY_MIN` and lead the next by ``margin`` (and by the chain's
    tie floor, :data:`core.locate.identity.TIE_FLOOR`), else the tie stays (the chain abstains and shows
    both).  Only when the recorded link had a query.  The result's ``margin`` is that lead.
    """
    if not t.href_query or t.role != "link":
        return res
    group = [int(i) for i in np.flatnonzero(scores >= res.score - config.margin) if scores[i] > 0]
    if not 2 <= len(group) <= MAX_TIED:
        return res
    feats = [pool.features[i] for i in group]
    if any(f.role != "link" or not f.href_path for f in feats) or len({f.href_path for f in feats}) != 1:
        return res
    sims = sorted(((query_similarity(t, f), i) for f, i in zip(feats, group, strict=True)), reverse=True)
    (best, w), (second, _) = sims[0], sims[1]
    lead = best - second
    if best < QUERY_MIN or lead < max(config.margin, TIE_FLOOR):
        return res
    runner = max((j for j in group if j != w), key=lambda j: scores[j])
    return LevelResult(  # the margin is the query's lead: the evidence that told the links apart
        strategy, scores, w, float(scores[w]), float(lead),
        f"{describe(pool, w)} scored {scores[w]:.2f}, tied within the margin with "
        f"{counted(len(group) - 1, 'other link')} to the same page, but its query is the recorded link's ({best:.2f} against {second:.2f})",
        w, int(runner), "query",
    )
