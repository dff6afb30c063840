"""The locator fallback chain (R2): exact -> fuzzy text -> semantic -> relative -> visual.

Each level runs only when the previous one has no clear winner; a level
without a winner leading the runner-up by ``LocatorConfig.margin`` falls
through, and when no level is clear the chain abstains - a silent wrong pick
is worse than escalating.  A level's clear winner is still overruled by the
safety rules of :mod:`core.locate.safety`:

* a heal never crosses roles (button <-> link, checkbox <-> button) unless
  every other attribute agrees - the level falls through;
* a heal never goes to a candidate whose name contradicts the target's
  (failure kind 12) - the level falls through;
* a heal never goes to a hidden, disabled or covered best candidate, and
  then not to the runner-up either: the chain abstains (failure kind 3);
* an irreversible step is healed only when a second independent level
  (:data:`INDEPENDENT`) has the same candidate as its clear winner, or the
  candidate is the target by role and name in its place
  (:func:`~core.locate.identity.role_name_identity`) or with its name changed
  only in case or punctuation, alone so named, in the recorded place
  (:func:`~core.locate.exact.renamed_in_place`); otherwise the chain
  abstains and says so.

Every resolution records the winning level, score, margin, candidates
considered, ms and a per-level trace (:class:`~core.domain.LevelTrace`).
The model-assisted part of SEMANTIC lives outside this pure-logic chain.
"""
from __future__ import annotations

import time
from dataclasses import replace
from typing import Callable, Mapping, Sequence

import numpy as np

from core.domain import Candidate, ElementDescriptor, LevelTrace, Resolution, ScoredCandidate

from .config import LocatorConfig
from .exact import exact_level, renamed_in_place
from .features import CandidatePool, Features, features_of, pool_of
from .fuzzy_text import fuzzy_level
from .identity import (TIE_FLOOR, id_is_positional, not_in_place, role_name_identity, role_siblings, same_destination,
                       shares_nothing)
from .inputs import Image, LocateInputs, TextBox
from .level import LevelResult, describe
from .relative import relative_level
from .safety import contradicts, crosses_roles, not_actionable, others_agree, unique_id_agrees
from .semantic import TEXT_ATTRIBUTES, WEIGHTS, semantic_level
from .visual import visual_level

__all__ = ["resolve", "LEVELS", "INDEPENDENT"]

LevelFn = Callable[[Features, CandidatePool, LocatorConfig, LocateInputs], LevelResult]

#: Level functions in chain order, fastest first.
LEVELS: dict[str, LevelFn] = {
    "exact": lambda t, p, c, _i: exact_level(t, p, c),
    "fuzzy_text": lambda t, p, c, _i: fuzzy_level(t, p, c),
    "semantic": lambda t, p, c, i: semantic_level(t, p, c, tie_breaker=i.tie_breaker),
    "relative": relative_level,
    "visual": visual_level,
}

#: What each level's evidence is; two levels confirm each other only when
#: their evidence differs (an irreversible heal needs two).  SEMANTIC
#: confirming FUZZY_TEXT is re-run without the label and text it shares.
INDEPENDENT: Mapping[str, str] = {
    "exact": "text", "fuzzy_text": "text", "semantic": "attributes", "relative": "anchor", "visual": "pixels",
}

_DEFAULT_CONFIG = LocatorConfig()
_NO_TEXT_WEIGHTS = {k: v for k, v in WEIGHTS.items() if k not in TEXT_ATTRIBUTES}


def _scored(pool: CandidatePool, scores: np.ndarray, i: int | None) -> ScoredCandidate | None:
    if i is None or i < 0 or len(scores) == 0:
        return None
    return ScoredCandidate(pool.candidates[i].ref, round(float(scores[i]), 4), pool.features[i].raw_label[:80])


def _top(res: LevelResult, pool: CandidatePool, k: int) -> tuple[ScoredCandidate, ...]:
    scores = res.scores
    if len(scores) == 0:
        return ()
    n = len(scores)
    pick = np.argpartition(-scores, k - 1)[:k] if n > k else np.arange(n)
    order = sorted((int(i) for i in pick), key=lambda i: (-scores[i], not pool.visible[i], i))
    if order and scores[order[0]] > 0.0:  # a candidate scored 0 is no runner-up beside one that scored
        order = [i for i in order if scores[i] > 0.0]
    return tuple(
        ScoredCandidate(pool.candidates[i].ref, round(float(scores[i]), 4), pool.features[i].raw_label[:80])
        for i in order
    )


def _trace(name: str, res: LevelResult, pool: CandidatePool, won: bool, reason: str) -> LevelTrace:
    return LevelTrace(name, _scored(pool, res.scores, res.best if res.best is not None else res.winner),
                      _scored(pool, res.scores, res.runner), won, reason)


def _considered(n: int) -> str:
    """Suffix of a resolution's reason: the count is kept where the store keeps the reason."""
    return f" [{n} candidate{'s' if n != 1 else ''} considered]"


def _overrule(t: Features, pool: CandidatePool, w: int) -> tuple[str, bool]:
    """Why a heal to candidate ``w`` is refused, and whether the chain abstains (True) or falls through.

    ``("", False)`` when it is not refused.  A candidate that has the
    target's role and name as shown, unique in its place
    (:func:`~core.locate.identity.role_name_identity`), is never refused here.
    """
    if role_name_identity(t, pool, w):
        return "", False
    c = pool.features[w]
    if crosses_roles(t, c) and not others_agree(t, c):
        return (f"{describe(pool, w)} has role {c.role}, the target {t.role}: a heal never crosses "
                "roles unless every other attribute agrees"), False
    sib = role_siblings(pool, w)
    positional = id_is_positional(pool, w, sib)
    nothing = shares_nothing(t, c, positional_id=positional)
    if sib and nothing:
        return (f"{describe(pool, w)} is one of {len(sib) + 1} {c.role} siblings and shares no name, text or "
                f"identifier with the target '{t.raw_label[:40]}': choosing among them by place or neighbours "
                "is a guess"), True
    if contradicts(t, c) and (positional or not unique_id_agrees(t, w, pool)):
        return f"{describe(pool, w)} has another name than the target's '{t.raw_label[:40]}'", False
    if nothing:
        return (f"{describe(pool, w)} shares no name, text or identifier with the target "
                f"'{t.raw_label[:40]}': its place or neighbours alone do not make it the target"), False
    return "", False


def _look_alike_clash(name: str, w: int, pool: CandidatePool, fell: list[tuple[str, LevelResult]]) -> str:
    """Why a pick by place (the relative or visual level) between look-alikes is refused ("" when it is not).

    Two visible candidates with the same role and the same name as shown are
    look-alikes: a person cannot tell them apart by what they say, and
    ``get_by_role(role, name=..., exact=True)`` finds both.  When a level
    that compares what the elements are (text, attributes) ranked another
    look-alike strictly above ``w`` and the chain then chose ``w`` by its
    place or pixels, the levels disagree about which control it is: the
    chain abstains and shows both (issue 19: a decoy placed where the
    recorded button was must never be pressed).
    """
    if INDEPENDENT.get(name) not in ("anchor", "pixels"):
        return ""
    c = pool.features[w]
    if not c.role or not c.label_key:
        return ""
    for other, res in fell:
        if INDEPENDENT.get(other) not in ("text", "attributes"):
            continue
        scores = res.scores
        j = int(scores.argmax())
        if j == w or float(scores[j]) <= float(scores[w]) + 1e-6:
            continue
        f = pool.features[j]
        if pool.visible[j] and f.role == c.role and f.label_key == c.label_key:
            return (f"{describe(pool, j)} looks the same by role and name and the {other} level ranked it "
                    f"higher ({float(scores[j]):.2f} against {float(scores[w]):.2f}): choosing between look-alikes "
                    "by place alone is a guess")
    return ""


def _confirmations(name: str, w: int, t: Features, pool: CandidatePool, config: LocatorConfig,
                   inputs: LocateInputs) -> list[str]:
    """Levels of other evidence (:data:`INDEPENDENT`) whose clear winner is also ``w``."""
    out = [name]
    kinds = {INDEPENDENT[name]}
    inputs = replace(inputs, tie_breaker=None)  # a model's tie-break is no independent confirmation
    for other in LEVELS:
        if other == name or other == "exact" or other not in config.strategies or INDEPENDENT[other] in kinds:
            continue
        if other == "semantic" and INDEPENDENT[name] == "text":
            res = semantic_level(t, pool, config, _NO_TEXT_WEIGHTS, context_evidence=True)
        else:
            res = LEVELS[other](t, pool, config, inputs)
        if res.winner == w:
            out.append(other)
            kinds.add(INDEPENDENT[other])
    return out


def resolve(
    target: ElementDescriptor,
    candidates: Sequence[Candidate],
    *,
    config: LocatorConfig = _DEFAULT_CONFIG,
    selector_ref: str | None = None,
    irreversible: bool = False,
    screenshot: Image | None = None,
    screenshot_dpr: float = 1.0,
    crop: Image | None = None,
    anchors: Sequence[TextBox] = (),
    tie_breaker: "Callable[[ElementDescriptor, Sequence[Candidate]], object] | None" = None,
) -> Resolution:
    """Find the candidate that is ``target``, or abstain.

    Parameters
    ----------
    target : ElementDescriptor
        The remembered element.
    candidates : Sequence[Candidate]
        Elements of the current observation (visible or not, enabled or not).
    config : LocatorConfig
        Margin, tolerances and enabled levels.
    selector_ref : str | None
        Ref of the one candidate the author's Playwright selector matched,
        when the engine found exactly one; it wins as strategy ``"exact"``.
        A selector matching two or more elements is never the answer
        (failure kind 7): pass None and the chain decides by meaning.
    irreversible : bool
        The step writes data (``not Step.reversible``): a heal needs the
        agreement of two independent levels, else the chain abstains.
    screenshot : bytes | numpy.ndarray | None
        Viewport screenshot (PNG or decoded), device px - for VISUAL.
    screenshot_dpr : float
        Device px per CSS px of ``screenshot``.
    crop : bytes | numpy.ndarray | None
        The target's recorded crop (device px at ``target.device_pixel_ratio``).
    anchors : Sequence[TextBox]
        Text-bearing elements of the page (labels, headings) where RELATIVE
        looks for the target's anchor besides the candidates.
    tie_breaker : Callable | None
        ``(target, tied candidates) -> TieChoice | None``: SEMANTIC asks it
        among candidates tied within the margin and accepts its choice only
        above confidence 0.7 (R2, :mod:`core.locate.tiebreak`); the safety
        rules below still judge the choice.

    Returns
    -------
    Resolution
        Winning strategy, ref, score (0..1), margin over the runner-up, ms,
        candidates considered, the per-level trace and the confirming
        levels; or ``abstained=True`` with ``ref=None``, the reason each
        level fell through and the best 5 candidates of the last level that
        scored any candidate.
    """
    t0 = time.perf_counter()

    def ms() -> float:
        return (time.perf_counter() - t0) * 1000.0

    n = len(candidates)
    reasons: list[str] = []
    trace: list[LevelTrace] = []
    if selector_ref is not None:
        for c in candidates:
            if c.ref == selector_ref:
                sc = ScoredCandidate(c.ref, 1.0, c.descriptor.label_text[:80])
                return Resolution("exact", c.ref, 1.0, 1.0, ms(),
                                  reason="the step's selector matched exactly this candidate", top=(sc,),
                                  considered=n, trace=(LevelTrace("selector", sc, None, True, "unique match"),),
                                  confirmed_by=("exact",))
        reasons.append(f"selector: ref {selector_ref} is not among the candidates")
        trace.append(LevelTrace("selector", None, None, False, reasons[-1]))

    def abstain(why: str, last: LevelResult | None, pool: CandidatePool | None) -> Resolution:
        reasons.append(why) if why else None
        top = _top(last, pool, config.top_k) if last is not None and pool is not None else ()
        return Resolution("", None, round(last.score, 4) if last else 0.0, round(last.margin, 4) if last else 0.0,
                          ms(), abstained=True, reason="; ".join(reasons) + _considered(n), top=top, considered=n,
                          trace=tuple(trace))

    if not candidates:
        return abstain("no candidates on the page", None, None)
    if target.is_empty and not any((target.label_text, target.test_id, target.name_attr)):
        return abstain("the target descriptor is empty", None, None)

    t = features_of(target)
    pool = pool_of(candidates)
    inputs = LocateInputs(screenshot=screenshot, screenshot_dpr=screenshot_dpr, crop=crop,
                          crop_dpr=target.device_pixel_ratio or 1.0, anchors=tuple(anchors),
                          tie_breaker=(lambda tied: tie_breaker(target, tied)) if tie_breaker is not None else None)
    last: LevelResult | None = None
    fell: list[tuple[str, LevelResult]] = []  # levels that scored but found no clear winner, in chain order
    for name, level in LEVELS.items():
        if name not in config.strategies:
            continue
        res = level(t, pool, config, inputs)
        if res.winner is None and len(res.scores):
            fell.append((name, res))
        if last is None or (len(res.scores) and float(res.scores.max()) > 0.0):
            last = res  # the abstention shows the last level that scored anything
        if res.winner is None:
            reasons.append(f"{name}: {res.reason}")
            trace.append(_trace(name, res, pool, False, res.reason))
            continue
        w = res.winner
        heal = name != "exact"
        why, stop = _overrule(t, pool, w) if heal else ("", False)
        if why and stop:
            trace.append(_trace(name, res, pool, False, f"overruled: {why}"))
            return abstain(f"{name}: {res.reason}, but {why}", res, pool)
        if why:
            reasons.append(f"{name}: {res.reason}, but {why}")
            trace.append(_trace(name, res, pool, False, f"overruled: {why}"))
            continue
        c = pool.features[w]
        away = not_in_place(t, pool, w) if heal and c.role == t.role and c.label_key == t.label_key else ""
        if away:
            trace.append(_trace(name, res, pool, False, f"overruled: {away}"))
            return abstain(f"{name}: {res.reason}, but {away}", res, pool)
        identity = heal and role_name_identity(t, pool, w)
        # a name changed only in case or punctuation, same control in the same place: no second level needed
        renamed = heal and not identity and renamed_in_place(t, pool, w, config.position_tolerance_px)
        clash = _look_alike_clash(name, w, pool, fell) if heal and not identity else ""
        if clash:
            trace.append(_trace(name, res, pool, False, f"overruled: {clash}"))
            return abstain(f"{name}: {res.reason}, but {clash}", res, pool)
        if (heal and not identity and res.margin < TIE_FLOOR - 1e-9 and res.chosen_by != "model"
                and not same_destination(pool, w, res.scores)):
            other = f" and {describe(pool, res.runner)}" if res.runner is not None and res.runner != w else ""
            trace.append(_trace(name, res, pool, False, f"tie: margin {res.margin:.2f} < {TIE_FLOOR:.2f}"))
            return abstain(f"{name}: {describe(pool, w)}{other} are tied (lead {res.margin:.2f}, under the tie "
                           f"floor {TIE_FLOOR:.2f}): a tie is never acted on", res, pool)
        trace.append(_trace(name, res, pool, True, res.reason))
        state = not_actionable(pool.candidates[w])
        if heal and state:
            return abstain(f"{name}: {res.reason}, but it is {state}; a heal never goes to a {state} best "
                           "candidate, nor to the runner-up in its place", res, pool)
        if identity:
            confirmed = [name, "identity"]
        elif renamed:
            confirmed = [name, "place"]
        else:
            confirmed = _confirmations(name, w, t, pool, config, inputs) if heal and irreversible else [name]
        if heal and irreversible and len(confirmed) < 2:
            return abstain(f"{name}: {res.reason}, but the step is irreversible and no second independent "
                           "level (relative anchor, visual crop, attributes other than the text) agrees "
                           "on that candidate", res, pool)
        why_won = f"{name}: {res.reason}"
        if identity:
            why_won += (f" (the same {t.role} '{t.raw_label[:40]}' by role and name, the only one on the page "
                        "in the same form or region: the same control)")
        elif renamed:
            why_won += (f" (the same {t.role} in the same place, the only one named so on the page; its name "
                        f"changed only in case or punctuation: '{t.raw_label[:40]}' -> "
                        f"'{pool.features[w].raw_label[:40]}')")
        elif len(confirmed) > 1:
            why_won += f" (confirmed by {', '.join(confirmed[1:])})"
        if reasons:
            why_won += " (after " + "; ".join(reasons) + ")"
        why_won += _considered(n)
        return Resolution(name, pool.candidates[w].ref, round(res.score, 4), round(res.margin, 4), ms(),
                          reason=why_won, top=_top(res, pool, config.top_k), considered=n, trace=tuple(trace),
                          confirmed_by=tuple(confirmed), role_crossing=crosses_roles(t, pool.features[w]))
    if last is None:
        return abstain("no strategy enabled", None, None)
    return abstain("", last, pool)
