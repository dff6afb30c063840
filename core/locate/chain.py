"""The locator fallback chain (R2): exact -> fuzzy text -> semantic.

Each level runs only when the previous one has no clear winner; a level
without a winner leading the runner-up by ``LocatorConfig.margin`` falls
through, and when no level is clear the chain abstains - a silent wrong pick
is worse than escalating.  The RELATIVE level of R2 (offset from an anchor)
and the model-assisted part of SEMANTIC live outside this pure-logic chain.
"""
from __future__ import annotations

import time
from typing import Callable, Sequence

import numpy as np

from core.domain import Candidate, ElementDescriptor, Resolution, ScoredCandidate

from .config import LocatorConfig
from .exact import exact_level
from .features import CandidatePool, Features, features_of, pool_of
from .fuzzy_text import fuzzy_level
from .level import LevelResult
from .semantic import semantic_level

__all__ = ["resolve", "LEVELS"]

#: Level functions in chain order, fastest first.
LEVELS: dict[str, Callable[[Features, CandidatePool, LocatorConfig], LevelResult]] = {
    "exact": exact_level,
    "fuzzy_text": fuzzy_level,
    "semantic": semantic_level,
}

_DEFAULT_CONFIG = LocatorConfig()


def _top(res: LevelResult, pool: CandidatePool, k: int) -> tuple[ScoredCandidate, ...]:
    scores = res.scores
    if len(scores) == 0:
        return ()
    n = len(scores)
    pick = np.argpartition(-scores, k - 1)[:k] if n > k else np.arange(n)
    order = sorted((int(i) for i in pick), key=lambda i: (-scores[i], not pool.visible[i], i))
    return tuple(
        ScoredCandidate(pool.candidates[i].ref, round(float(scores[i]), 4), pool.features[i].raw_label[:80])
        for i in order
    )


def resolve(
    target: ElementDescriptor,
    candidates: Sequence[Candidate],
    *,
    config: LocatorConfig = _DEFAULT_CONFIG,
    selector_ref: str | None = None,
) -> Resolution:
    """Find the candidate that is ``target``, or abstain.

    Parameters
    ----------
    target : ElementDescriptor
        The remembered element.
    candidates : Sequence[Candidate]
        Elements of the current observation (visible or not, enabled or not:
        the pre-check decides whether one can be acted on; visible ones are
        preferred on ties).
    config : LocatorConfig
        Margin, tolerances and enabled levels.
    selector_ref : str | None
        Ref of the one candidate the author's Playwright selector matched,
        when the engine found exactly one; it wins as strategy ``"exact"``.

    Returns
    -------
    Resolution
        Winning strategy, ref, score (0..1), margin over the runner-up,
        time in ms; or ``abstained=True`` with ``ref=None``, the reason each
        level fell through and the best 5 candidates of the last level tried.
    """
    t0 = time.perf_counter()

    def ms() -> float:
        return (time.perf_counter() - t0) * 1000.0

    reasons: list[str] = []
    if selector_ref is not None:
        for c in candidates:
            if c.ref == selector_ref:
                return Resolution("exact", c.ref, 1.0, 1.0, ms(),
                                  reason="the step's selector matched exactly this candidate",
                                  top=(ScoredCandidate(c.ref, 1.0, c.descriptor.label_text[:80]),))
        reasons.append(f"selector: ref {selector_ref} is not among the candidates")
    if not candidates:
        reasons.append("no candidates on the page")
        return Resolution("", None, 0.0, 0.0, ms(), abstained=True, reason="; ".join(reasons))
    if target.is_empty and not any((target.label_text, target.test_id, target.name_attr)):
        reasons.append("the target descriptor is empty")
        return Resolution("", None, 0.0, 0.0, ms(), abstained=True, reason="; ".join(reasons))

    t = features_of(target)
    pool = pool_of(candidates)
    last: LevelResult | None = None
    for name, level in LEVELS.items():
        if name not in config.strategies:
            continue
        res = level(t, pool, config)
        last = res
        if res.winner is not None:
            why = f"{name}: {res.reason}"
            if reasons:
                why += " (after " + "; ".join(reasons) + ")"
            return Resolution(name, pool.candidates[res.winner].ref, round(res.score, 4),
                              round(res.margin, 4), ms(), reason=why,
                              top=_top(res, pool, config.top_k))
        reasons.append(f"{name}: {res.reason}")
    if last is None:
        reasons.append("no strategy enabled")
    top = _top(last, pool, config.top_k) if last is not None else ()
    return Resolution("", None, round(last.score, 4) if last else 0.0,
                      round(last.margin, 4) if last else 0.0, ms(), abstained=True,
                      reason="; ".join(reasons), top=top)
