"""EXACT level (R2): same role/tag, same label, same place.

A candidate matches exactly when

* its role equals the target's (when both have one) and its tag equals the
  target's (when both have one), and
* its label (accessible name, else label, text, placeholder...) equals the
  target's after normalising, and
* it is in the same frame and dialog/form (when both are known), and
* its box centre lies within ``position_tolerance_px`` (5 px, R2)
  of the target's when both boxes are known - or, instead of the position,
  it carries the same strong identifier (``id``, ``data-testid`` or the
  ``name`` attribute).

Labels that differ only in case or punctuation ("No" / "no", "Sign in" /
"Sign-in") are not the same label: such a candidate never matches here.  Both
may be on the page as different targets (failure kind 11), and when only the
variant is left the name changed - a heal, reported as one, found by the
FUZZY_TEXT level (:data:`~core.locate.textsim.CASE_VARIANT_SCORE`, 0.9).  When
the variant is the only one on the page, of the target's role and tag, in its
frame, dialog/form and place (:func:`renamed_in_place`), the chain takes that
as enough evidence on its own, as it does for the same role and name.  (A
label shown in other capitals by CSS is read in its DOM case by the observer,
so it is no variant.)  One variant is the same label: a name recorded in
capitals that the page now shows in other case, letters and punctuation
otherwise equal ("EMPLOYEE" for "Employee": the recorder read the text as CSS
showed it, the observer reads the DOM's case), and a ``select`` whose name
differs only in case (the observer may give it the case of an option).  It scores
:data:`~core.locate.textsim.CASE_VARIANT_SCORE` (0.9, not 1.00), and only
when no candidate carries the label as recorded and no other variant of it is
on the page.

A target without any label matches only through a strong identifier or a
known position.  Matches score 1, the rest 0; the margin rule then needs a
single match - or, among 2-3 matches, one clearly in the target's landmark
region or container (:func:`~core.locate.place.break_tie_by_place`: the
same link in header and footer).
"""
from __future__ import annotations

import math

import numpy as np

from .config import LocatorConfig
from .features import CandidatePool, Features, same_context
from .identity import not_in_place
from .textsim import CASE_VARIANT_SCORE
from .level import LevelResult, decide
from .place import break_tie_by_place, break_tie_by_query

__all__ = ["exact_level", "strong_id_equal", "within_tolerance", "renamed_in_place", "read_in_capitals",
           "same_name_read_twice"]


def strong_id_equal(t: Features, c: Features) -> bool:
    """Same non-empty ``id``, ``data-testid`` or ``name`` attribute."""
    return bool(
        (t.test_id and t.test_id == c.test_id)
        or (t.id and t.id == c.id)
        or (t.name_attr and t.name_attr == c.name_attr)
    )


def within_tolerance(t: Features, c: Features, tol_px: float) -> bool | None:
    """Centre distance <= ``tol_px`` (CSS px) in the viewport or in the page; None when a box is unknown.

    The page comparison (box + the main frame's scroll at capture) applies
    when both scroll offsets are known: a recording whose click scrolled the
    element into view matches the page observed from its top.  The viewport
    comparison keeps fixed and sticky elements (same viewport box whatever
    the scroll) matching.
    """
    if t.bbox is None or c.bbox is None:
        return None
    (tx, ty), (cx, cy) = t.bbox.center, c.bbox.center
    if math.hypot(tx - cx, ty - cy) <= tol_px:
        return True
    if t.scroll is None or c.scroll is None:
        return False
    return math.hypot(tx + t.scroll[0] - cx - c.scroll[0], ty + t.scroll[1] - cy - c.scroll[1]) <= tol_px


def _matches(t: Features, c: Features, tol_px: float) -> bool:
    if t.role and c.role and t.role != c.role:
        return False
    if t.tag and c.tag and t.tag != c.tag:
        return False
    if t.label != c.label:
        return False
    if not same_context(t, c):
        return False
    near = within_tolerance(t, c, tol_px)
    if not t.label:
        return near is True or strong_id_equal(t, c)
    return near is not False or strong_id_equal(t, c)


def read_in_capitals(recorded: str, shown: str) -> bool:
    """``recorded`` is ``shown`` as CSS capitals show it (``text-transform: uppercase``): ``"EMPLOYEE"`` /
    ``"Employee"``.  True when ``recorded`` has 2 letters or more, all upper-case, and ``shown`` is another text
    that upper-cases to it (same letters, same punctuation and spaces)."""
    letters = [ch for ch in recorded if ch.isalpha()]
    return len(letters) >= 2 and recorded == recorded.upper() and shown != recorded and shown.upper() == recorded


def same_name_read_twice(t: Features, c: Features) -> bool:
    """``c``'s name is ``t``'s read another way, not a changed name: recorded in CSS capitals
    (:func:`read_in_capitals`), or a ``select`` whose name differs only in case (the observer gives a select's
    name the case of an option that holds it: "Priority" read as "priority" beside a "priority" option)."""
    if read_in_capitals(t.label_key, c.label_key):
        return True
    return t.tag == "select" and c.tag == "select" and t.label_key.casefold() == c.label_key.casefold()


def renamed_in_place(t: Features, pool: CandidatePool, w: int, tol_px: float) -> bool:
    """Candidate ``w`` is the target whose name changed only in case or punctuation ("Sign in" -> "Sign-in").

    True when ``w`` has the target's role and tag, a name equal to the
    target's after normalising (:func:`~core.locate.textsim.normalize`) but
    not as shown (:attr:`Features.label_key`), is in the target's frame and
    dialog/form, at its place (box centre within ``tol_px`` CSS px) or with
    the same strong identifier (:func:`strong_id_equal`), no other visible
    candidate carries that name in any spelling, and the page shows no sign
    that the recorded control is elsewhere
    (:func:`~core.locate.identity.not_in_place`).  Such a candidate may be
    acted on without a second level's confirmation; it is still a heal.
    """
    c = pool.features[w]
    if not t.label or not t.role or c.role != t.role or c.label != t.label or c.label_key == t.label_key:
        return False
    if same_name_read_twice(t, c):
        return False  # the same name read another way: the exact level's
    if (t.tag and c.tag and t.tag != c.tag) or not same_context(t, c):
        return False
    if within_tolerance(t, c, tol_px) is not True and not strong_id_equal(t, c):
        return False
    if any(i != w and pool.visible[i] for i in pool.by_label().get(t.label, ())):
        return False
    return not not_in_place(t, pool, w)


def _agreement(t: Features, c: Features) -> int:
    """How many of the recorded attributes that say what a control does (``type``, ``href``, the link's query,
    classes) ``c`` keeps."""
    n = int(bool(t.type) and t.type == c.type) + int(bool(t.href) and t.href == c.href)
    n += int(bool(t.href_query) and t.href_query == c.href_query)  # "?_facet=genre" is not "?_sort=genre"
    return n + len(t.classes & c.classes)


def _drop_place_only_over_truer_look_alike(t: Features, pool: CandidatePool, scores: np.ndarray) -> None:
    """Unscore a match made by its place alone when a look-alike keeps more of the recording.

    A look-alike has the matched candidate's role and name as shown, is
    visible, and did not match only because it sits elsewhere.  When it
    keeps more of the recorded ``type`` / ``href`` / query / classes than the
    candidate at the recorded place (a ``type=button`` "Add" put where the
    recorded ``type=submit`` "Add" was, the real one moved beside it), the
    place is not evidence of identity: ``get_by_role(role, name=...)`` would
    find both, and the later levels must tell them apart or abstain
    (issue 19: never a wrong action).  Matches by a strong id stay.
    """
    for i in np.flatnonzero(scores > 0):
        f = pool.features[i]
        if strong_id_equal(t, f):
            continue
        mine = _agreement(t, f)
        for j, g in enumerate(pool.features):
            if (j != i and pool.visible[j] and scores[j] == 0 and g.role == f.role and g.label_key == f.label_key
                    and same_context(t, g) and _agreement(t, g) > mine):
                scores[i] = 0.0
                break


def exact_level(t: Features, pool: CandidatePool, config: LocatorConfig) -> LevelResult:
    """Score every candidate 1 (exact match) or 0 and apply the margin rule."""
    tol = config.position_tolerance_px
    scores = np.zeros(len(pool))
    same = pool.by_label().get(t.label, ())
    keys = {pool.features[i].label_key for i in same}
    for i in same:
        f = pool.features[i]
        if f.label_key == t.label_key:
            if _matches(t, f, tol):
                scores[i] = 1.0
        elif same_name_read_twice(t, f) and len(keys) == 1 and _matches(t, f, tol):
            scores[i] = CASE_VARIANT_SCORE  # two reads of one name; any other variant is a changed name
    _drop_place_only_over_truer_look_alike(t, pool, scores)
    res = decide("exact", scores, pool, margin=config.margin, minimum=CASE_VARIANT_SCORE)
    if res.winner is None and res.score >= CASE_VARIANT_SCORE:  # links that differ only by their query (issue 19)
        res = break_tie_by_query("exact", t, pool, scores, res, config)
    if res.winner is None and res.score >= CASE_VARIANT_SCORE and config.place_tiebreak:
        res = break_tie_by_place("exact", t, pool, scores, res, config)
    if res.winner is None and res.reason == "no candidate scored":
        what = f"label '{t.raw_label[:40]}'" if t.label else "no label, so a strong id or position"
        res = LevelResult("exact", scores, None, 0.0, 0.0,
                          f"no candidate with the same role/tag and {what} within "
                          f"{config.position_tolerance_px:g} px")
    return res
