"""SEMANTIC level (R2): multi-attribute weighted similarity.

After Similo (Nass, Alégroth, Feldt et al., ACM TOSEM 2023): every
attribute the target has contributes ``weight * similarity`` (0..1); the sum
is divided by the total weight of the attributes the target has, so
missing target attributes do not count and a candidate lacking an attribute
the target has scores 0 on it.  Weights and similarity functions are in
:data:`WEIGHTS` and below.

Three guards keep it from guessing (a wrong pick is worse than abstaining):

* evidence - when the target has identity attributes (:data:`IDENTITY`),
  only candidates agreeing on one of them by ``semantic_min_evidence`` may
  win or block;
* context - candidates in another frame, or in another dialog while the
  target's dialog is gone, are out;
* margin - the usual rule, with one tie-break: among 2-3 candidates tied
  within the margin, the one clearly in the target's place wins.

Checked on the Similo dev half (24 apps, 318 pairs, ``core/bench/similo.py``):
halving or doubling any single weight moves the result by at most two pairs,
the guards matter more than the weights.  Nothing is tuned per app.
"""
from __future__ import annotations

from typing import Callable, Mapping

import numpy as np
from rapidfuzz import fuzz, process

from .config import LocatorConfig
from .features import CandidatePool, Features, same_context
from .level import LevelResult, decide, describe, gap
from .roles import GENERIC
from .place import break_tie_by_place, break_tie_by_query, sim_region as _sim_region
from .safety import CONTRADICTION_BELOW, unique_id_agrees
from .textsim import text_similarity_many
from .tiebreak import TieBreaker, break_tie

__all__ = ["WEIGHTS", "IDENTITY", "TEXT_ATTRIBUTES", "semantic_scores", "semantic_level", "POSITION_SCALE_PX"]

#: Attribute weights (relative; normalised over the attributes the target
#: has).  What an element says or is called (label, test id, id, name)
#: weighs most; its kind (tag, role), context (neighbours, container),
#: structure (XPath, page region, classes) and geometry less.
WEIGHTS: Mapping[str, float] = {
    "tag": 1.0,
    "role": 1.0,
    "label": 2.0,
    "text": 1.0,
    "placeholder": 1.0,
    "alt": 0.5,
    "title": 0.5,
    "id": 1.5,
    "name_attr": 1.5,
    "test_id": 2.0,
    "type": 0.5,
    "classes": 0.5,
    "href": 0.5,
    "xpath": 0.5,
    "region": 0.5,
    "neighbours": 1.0,
    "container": 1.0,
    "position": 0.5,
    "size": 0.5,
}

#: Distance (CSS px) at which the position similarity halves:
#: ``1 / (1 + d / POSITION_SCALE_PX)``; a 20 px move (R1) scores 0.83.
POSITION_SCALE_PX = 100.0



def _ratio(query: str, choices: list[str]) -> np.ndarray:
    """Indel ratio 0..1 of ``query`` against non-empty choices (empty -> 0)."""
    out = process.cdist([query], choices, scorer=fuzz.ratio, dtype=np.float32, workers=1)[0]
    out = out.astype(np.float64) / 100.0
    for i, c in enumerate(choices):
        if not c:
            out[i] = 0.0
    return out


def _equal(query: str, choices: list[str]) -> np.ndarray:
    return np.fromiter((1.0 if c == query else 0.0 for c in choices), dtype=np.float64, count=len(choices))


def _jaccard(a: frozenset[str], sets: list[frozenset[str]]) -> np.ndarray:
    return np.fromiter(
        (len(a & s) / len(a | s) if s else 0.0 for s in sets), dtype=np.float64, count=len(sets),
    )


#: Text similarity below this is what unrelated labels reach by chance
#: (shared letters); text similarities are rescaled so it counts as 0:
#: ``max(0, (s - floor) / (1 - floor))``.
TEXT_FLOOR = 0.4


def _sharpen(s: np.ndarray) -> np.ndarray:
    return np.clip((s - TEXT_FLOOR) / (1.0 - TEXT_FLOOR), 0.0, 1.0)


def _text(t: Features, pool: CandidatePool, name: str) -> np.ndarray:
    col = pool.column(name)
    return _sharpen(text_similarity_many(getattr(t, name), getattr(t, name), col, col))


def _sim_tag(t: Features, pool: CandidatePool) -> np.ndarray:
    return _equal(t.tag, pool.column("tag"))


#: Families whose members take a value from the user: a text box that
#: became a combo box (a custom widget, one of the tweaks of R) keeps half the role credit.
_VALUE_FAMILIES = frozenset({"text", "choice"})


def _role_similarity(t: Features, f: Features) -> float:
    if f.role == t.role:
        return 1.0
    if f.family == t.family and t.family != GENERIC:
        return 0.5
    if {f.family, t.family} <= _VALUE_FAMILIES:
        return 0.5
    return 0.0


def _sim_role(t: Features, pool: CandidatePool) -> np.ndarray:
    return np.fromiter((_role_similarity(t, f) for f in pool.features), dtype=np.float64, count=len(pool))


def _sim_label(t: Features, pool: CandidatePool) -> np.ndarray:
    return _sharpen(text_similarity_many(t.label, t.label_core, pool.labels, pool.label_cores,
                                        t.label_key, pool.label_keys))


def _sim_id(t: Features, pool: CandidatePool) -> np.ndarray:
    exact = _equal(t.id, pool.column("id"))
    loose = 0.8 * _ratio(t.id_core, pool.column("id_core"))
    return np.maximum(exact, loose)


def _sim_name_attr(t: Features, pool: CandidatePool) -> np.ndarray:
    return np.maximum(_equal(t.name_attr, pool.column("name_attr")),
                      0.8 * _ratio(t.name_attr, pool.column("name_attr")))


def _sim_href(t: Features, pool: CandidatePool) -> np.ndarray:
    return np.maximum(_equal(t.href, pool.column("href")), _sharpen(_ratio(t.href, pool.column("href"))))


def _sim_xpath(t: Features, pool: CandidatePool) -> np.ndarray:
    return _ratio(t.xpath, pool.column("xpath"))


def _sim_classes(t: Features, pool: CandidatePool) -> np.ndarray:
    return _jaccard(t.classes, pool.column("classes"))


def _sim_neighbours(t: Features, pool: CandidatePool) -> np.ndarray:
    return _jaccard(t.neighbour_tokens, pool.column("neighbour_tokens"))


def _sim_position(t: Features, pool: CandidatePool) -> np.ndarray:
    assert t.bbox is not None
    tx, ty = t.bbox.center
    cx, cy, _, _, known = pool.boxes()
    d = np.hypot(cx - tx, cy - ty)
    return np.where(known, 1.0 / (1.0 + d / POSITION_SCALE_PX), 0.0)


def _size_ratio(a: float, b: np.ndarray) -> np.ndarray:
    hi = np.maximum(a, b)
    return np.where(hi > 0, np.minimum(a, b) / np.where(hi > 0, hi, 1.0), 1.0)


def _sim_size(t: Features, pool: CandidatePool) -> np.ndarray:
    assert t.bbox is not None
    _, _, w, h, known = pool.boxes()
    tw, th = max(t.bbox.width, 0.0), max(t.bbox.height, 0.0)
    return np.where(known, 0.5 * (_size_ratio(tw, w) + _size_ratio(th, h)), 0.0)


def _present(name: str) -> Callable[[Features], bool]:
    return lambda t: bool(getattr(t, name))


#: attribute -> (is the target's attribute present?, similarity to every candidate)
_ATTRIBUTES: dict[str, tuple[Callable[[Features], bool], Callable[[Features, CandidatePool], np.ndarray]]] = {
    "tag": (_present("tag"), _sim_tag),
    "role": (_present("role"), _sim_role),
    "label": (_present("label"), _sim_label),
    "text": (lambda t: bool(t.text) and t.text != t.label, lambda t, p: _text(t, p, "text")),
    "placeholder": (_present("placeholder"), lambda t, p: _text(t, p, "placeholder")),
    "alt": (_present("alt"), lambda t, p: _text(t, p, "alt")),
    "title": (_present("title"), lambda t, p: _text(t, p, "title")),
    "id": (_present("id"), _sim_id),
    "name_attr": (_present("name_attr"), _sim_name_attr),
    "test_id": (_present("test_id"), lambda t, p: _equal(t.test_id, p.column("test_id"))),
    "type": (_present("type"), lambda t, p: _equal(t.type, p.column("type"))),
    "classes": (_present("classes"), _sim_classes),
    "href": (_present("href"), _sim_href),
    "xpath": (_present("xpath"), _sim_xpath),
    "region": (lambda t: bool(t.xpath_steps), _sim_region),
    "neighbours": (_present("neighbour_tokens"), _sim_neighbours),
    "container": (_present("container"), lambda t, p: _text(t, p, "container")),
    "position": (lambda t: t.bbox is not None, _sim_position),
    "size": (lambda t: t.bbox is not None, _sim_size),
}


#: Attributes that identify an element by itself (what it says or is called),
#: as opposed to its kind (tag, role, type) or place (xpath, position, size).
IDENTITY = frozenset({
    "label", "text", "placeholder", "alt", "title", "id", "name_attr", "test_id", "href",
})


def semantic_scores(
    t: Features, pool: CandidatePool, weights: Mapping[str, float] = WEIGHTS,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Weighted similarity (0..1) of every candidate to the target.

    Returns
    -------
    scores : numpy.ndarray
        Weighted mean over the attributes the target has.
    evidence : numpy.ndarray | None
        Best similarity among the :data:`IDENTITY` attributes; None when the
        target has none of them.  The ``name`` attribute of a radio or
        checkbox names its group, not the element, and is no evidence.
    """
    total = np.zeros(len(pool))
    best = np.zeros(len(pool))
    wsum = 0.0
    has_identity = False
    for name, w in weights.items():
        if w <= 0:
            continue
        present, sim = _ATTRIBUTES[name]
        if not present(t):
            continue
        s = sim(t, pool)
        total += w * s
        wsum += w
        if name in IDENTITY and not (name == "name_attr" and t.family == "check"):
            has_identity = True
            np.maximum(best, s, out=best)
    scores = total / wsum if wsum > 0 else total
    return scores, (best if has_identity else None)


def _foreign_context(t: Features, pool: CandidatePool) -> np.ndarray | None:
    """Mask of candidates in another frame, or in another dialog while the target's is gone.

    When no candidate is in a dialog/form like the target's, the page shows
    another one ("Delete account" instead of "Confirm export") and nothing in
    it may stand for the target.  When the target's dialog is still there,
    candidates in other containers stay eligible (a dialog split into two
    nested ones, one of the tweaks of R) and only lose the container weight.
    """
    other_frame = np.fromiter((f.frame != t.frame for f in pool.features), dtype=bool, count=len(pool))
    if not t.container:
        return other_frame if other_frame.any() else None
    same = np.fromiter((same_context(t, f) for f in pool.features), dtype=bool, count=len(pool))
    if (same & ~other_frame).any():
        return other_frame if other_frame.any() else None
    return ~same | other_frame


def _contradicting(t: Features, pool: CandidatePool) -> np.ndarray:
    """Candidates whose own non-empty name contradicts the target's, with no unique id agreeing (kind 12)."""
    out = np.zeros(len(pool), dtype=bool)
    if not t.label:
        return out
    sims = text_similarity_many(t.label, t.label_core, pool.labels, pool.label_cores)
    has_label = np.fromiter((bool(lab) for lab in pool.labels), dtype=bool, count=len(pool))
    words = set(t.label.split())
    for i in np.flatnonzero(has_label & (sims < CONTRADICTION_BELOW)):
        if words.isdisjoint(pool.labels[i].split()) and not unique_id_agrees(t, int(i), pool):
            out[i] = True
    return out


#: A target with no identity attribute (an icon, an unnamed field) may be
#: claimed on its stable CSS classes (generated ones dropped) by an element
#: of the same tag whose class set overlaps this much (Jaccard 0..1).
STRUCTURAL_MIN_JACCARD = 0.7


def _structural_evidence(t: Features, pool: CandidatePool) -> np.ndarray | None:
    """Positive agreement for a target without identity attributes: same tag and stable classes.

    1.0 for a candidate of the target's tag whose class set (tool-generated
    classes left out) overlaps the target's by :data:`STRUCTURAL_MIN_JACCARD`,
    else 0; None when the target has no tag or no stable class.
    """
    if not t.tag or not t.classes:
        return None
    jac = _sim_classes(t, pool)
    same_tag = _equal(t.tag, pool.column("tag"))
    return np.where((same_tag > 0) & (jac >= STRUCTURAL_MIN_JACCARD - 1e-9), 1.0, 0.0)


#: Attributes FUZZY_TEXT already judged; left out when SEMANTIC is asked to
#: confirm a FUZZY_TEXT heal on other evidence (an irreversible step).
TEXT_ATTRIBUTES = frozenset({"label", "text"})


def _context_evidence(t: Features, pool: CandidatePool) -> np.ndarray | None:
    """Agreement on the element's context: neighbour words (Jaccard) or container title (0..1).

    None when the target has neither.  Only for confirming another level's
    heal (:func:`semantic_level` with ``context_evidence``): the confirming
    level must not reuse the text the first level matched, but still needs
    positive agreement on something.
    """
    parts = []
    if t.neighbour_tokens:
        parts.append(_sim_neighbours(t, pool))
    if t.container:
        parts.append(_text(t, pool, "container"))
    if not parts:
        return None
    return np.maximum.reduce(parts) if len(parts) > 1 else parts[0]


def semantic_level(t: Features, pool: CandidatePool, config: LocatorConfig,
                   weights: Mapping[str, float] = WEIGHTS, *, context_evidence: bool = False,
                   tie_breaker: TieBreaker | None = None) -> LevelResult:
    """Score all candidates semantically and apply the margin rule.

    Positive agreement is required (failure kind 15): only candidates
    agreeing with the target on an identity attribute (:data:`IDENTITY`:
    name/label, text, placeholder, ids, test id, href) by at least
    ``semantic_min_evidence`` may win or block - sharing tag, role, style
    and place is not enough to claim an element ("Save report" next to a
    vanished "Export report"), and a target without any identity attribute
    is never healed here.  A candidate whose own non-empty name contradicts
    the target's is out unless an identifier unique on the page agrees
    (kind 12: a radio of the same group with another label).  Candidates in
    a foreign frame or dialog are out too (:func:`_foreign_context`).

    With ``weights`` lacking the text attributes and ``context_evidence``,
    the level confirms a FUZZY_TEXT heal on other evidence (an irreversible
    step, R2): agreement on the neighbours or the container then counts as
    positive agreement too (:func:`_context_evidence`).
   
    With ``tie_breaker`` (the model's, handed in by the engine), candidates
    still tied within the margin after every rule above are shown to it; its
    choice wins only above confidence 0.7 (R2, :func:`core.locate.tiebreak.break_tie`).
    """
    scores, evidence = semantic_scores(t, pool, weights)
    foreign = _foreign_context(t, pool)
    if foreign is not None:
        scores = np.where(foreign, 0.0, scores)
    if context_evidence:
        ctx = _context_evidence(t, pool)
        if ctx is not None:
            evidence = ctx if evidence is None else np.maximum(evidence, ctx)
    if evidence is None:
        evidence = _structural_evidence(t, pool)
        if evidence is None:
            return LevelResult("semantic", np.zeros(len(pool)), None, 0.0, 0.0,
                               "the target has no name, text, ids or stable classes another element "
                               "could agree with")
    if not context_evidence:  # a confirming level must not judge by the text either
        scores = np.where(_contradicting(t, pool), 0.0, scores)
    if evidence is not None:
        eligible = evidence >= config.semantic_min_evidence
        if not eligible.any():
            best = int(np.argmax(scores)) if len(scores) else 0
            return LevelResult(
                "semantic", scores, None, float(scores.max(initial=0.0)), 0.0,
                f"no candidate agrees with the target's name, text or ids by "
                f"{config.semantic_min_evidence:.2f} (best overall {describe(pool, best)}, "
                f"agreeing {evidence[best]:.2f})" if len(scores) else "no candidates",
            )
        blocking, scores = scores, np.where(eligible, scores, 0.0)
    else:
        blocking = scores
    res = decide("semantic", scores, pool, margin=config.margin, minimum=config.semantic_min_score)
    if res.winner is None and res.score >= config.semantic_min_score:  # links that differ only by their query (issue 19)
        res = break_tie_by_query("semantic", t, pool, scores, res, config)
    if res.winner is None and res.score >= config.semantic_min_score and config.place_tiebreak:
        res = break_tie_by_place("semantic", t, pool, scores, res, config)
    return break_tie(_blocked(res, blocking, pool, config), scores, pool, config, tie_breaker)


def _blocked(res: LevelResult, blocking: np.ndarray, pool: CandidatePool, config: LocatorConfig) -> LevelResult:
    """Fall through when a candidate without enough evidence to win still scores within the margin.

    Evidence decides who may *win*; a close rival that lacks it ("Apply
    filters" next to "Apply all" for a vanished "Apply") still makes the
    choice unclear, so it blocks.  Contradicting and foreign candidates
    were zeroed before and do not block.  The result that falls through
    carries ``blocking`` as its scores, so the candidates shown with an
    abstention are the real best ones in order (the rival with its own
    score), and ``best`` / ``runner`` are the higher and the lower of the two.
    """
    if res.winner is None or len(blocking) < 2:
        return res
    w = res.winner
    others = np.delete(blocking, w)
    rival = int(np.argmax(others))
    rival = rival + 1 if rival >= w else rival
    w_s, r_s = float(res.score), float(blocking[rival])
    lead = w_s - r_s
    if lead >= config.margin - 1e-9:
        return res
    shown = np.array(blocking, dtype=np.float64)
    shown[w] = max(shown[w], w_s)
    if r_s > w_s + 1e-9:
        why = (f"{describe(pool, rival)} scored higher ({r_s:.2f}) than {describe(pool, w)} ({w_s:.2f}) but does "
               f"not agree with the target's name, text or ids enough to be chosen; {describe(pool, w)} does, but "
               f"is not ahead of it by the margin {config.margin:.2f}")
        best, runner = rival, w
    else:
        why = (f"{describe(pool, w)} scored {w_s:.2f} and {describe(pool, rival)} {r_s:.2f}: "
               f"{gap(max(lead, 0.0), config.margin)} apart, under the margin {config.margin:.2f}; {describe(pool, rival)} does not agree with the "
               "target's name, text or ids enough to be chosen, but is too close to rule out")
        best, runner = w, rival
    return LevelResult("semantic", shown, None, max(w_s, r_s), abs(lead), why, best, runner)
