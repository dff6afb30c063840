"""RELATIVE level (R2): the candidate at the recorded offset from an anchor found exactly.

The recorder keeps, with every target, its anchor - the stable labelled
element it sits by (field label, legend, heading, column header) - and the
offset from the anchor's centre to the target's centre
(:class:`~core.domain.Anchor`, CSS px).  This level:

1. finds the anchor *exactly*: one element of the page (a candidate or a
   :class:`~core.locate.inputs.TextBox`) whose text is the anchor's text as
   shown (case and punctuation included) and whose role is the anchor's
   when both are known; none or several -> falls through;
2. takes the expected centre = anchor centre + offset;
3. scores each candidate of the same frame by ``RELATIVE_CONFIDENCE /
   (1 + d / RELATIVE_SCALE_PX)``, ``d`` the distance of its centre to the
   expected one, when ``d <= RELATIVE_RADIUS_PX`` and it lies on the same
   side of the anchor (sign of dx and dy, where the offset is larger than
   the radius); candidates of another role (:func:`~core.locate.safety.crosses_roles`)
   or whose name contradicts the target's score 0;
4. applies the margin rule.

A candidate exactly at the expected place scores 0.6 - the confidence R2
gives this level.
"""
from __future__ import annotations

import math

import numpy as np

from .config import LocatorConfig
from .features import CandidatePool, Features, same_context
from .inputs import LocateInputs
from .level import LevelResult, decide
from .safety import contradicts, crosses_roles
from .textsim import label_key

__all__ = ["relative_level", "RELATIVE_CONFIDENCE", "RELATIVE_RADIUS_PX", "RELATIVE_SCALE_PX", "find_anchor"]

#: Score of a candidate exactly at the recorded offset (R2: "confidence 0.6").
RELATIVE_CONFIDENCE = 0.6

#: A candidate farther than this from the expected centre is not at the
#: offset (CSS px): the 20 px move of R1, doubled for rounding of both boxes.
RELATIVE_RADIUS_PX = 40.0

#: Distance (CSS px) at which a candidate's score halves: the 20 px move of R1.
RELATIVE_SCALE_PX = 20.0


def find_anchor(t: Features, pool: CandidatePool, inputs: LocateInputs) -> tuple[tuple[float, float] | None, str]:
    """Centre of the one element that is the target's anchor, or None and why not."""
    a = t.anchor
    if a is None or not a.text:
        return None, "the target has no recorded anchor"
    key = label_key(a.text)
    role = a.role.lower()
    found: list[tuple[float, float]] = []
    for tb in inputs.anchors:
        if tb.frame != t.frame:
            continue
        if label_key(tb.text) == key and (not role or not tb.role or tb.role.lower() == role):
            found.append(tb.bbox.center)
    for c in pool.features:
        if c.bbox is None or c.frame != t.frame:
            continue
        # a candidate is an anchor only with the anchor's role: a control's own
        # name often is its label's text, and the control is not its label
        if role and c.label_key == key and (c.role == role or c.tag == role):
            if all(math.hypot(c.bbox.center[0] - x, c.bbox.center[1] - y) > 1.0 for x, y in found):
                found.append(c.bbox.center)
    if not found and not inputs.anchors:
        # no label or heading was handed in (a caller without the page's anchors): never claim it is absent
        return None, f"anchor '{a.text[:40]}' not looked for (the page's labels and headings were not read)"
    if not found:
        return None, f"anchor '{a.text[:40]}' not among the page's labels and headings"
    if len(found) > 1:
        return None, f"anchor '{a.text[:40]}' found {len(found)} times, not exactly"
    return found[0], ""


def relative_level(t: Features, pool: CandidatePool, config: LocatorConfig,
                   inputs: LocateInputs | None = None) -> LevelResult:
    """Score candidates by their distance to the anchor + recorded offset; margin rule."""
    n = len(pool)
    scores = np.zeros(n)
    centre, why = find_anchor(t, pool, inputs or LocateInputs())
    if centre is None:
        return LevelResult("relative", scores, None, 0.0, 0.0, why)
    assert t.anchor is not None
    dx, dy = t.anchor.dx, t.anchor.dy
    ex, ey = centre[0] + dx, centre[1] + dy
    cx, cy, _, _, known = pool.boxes()
    for i, c in enumerate(pool.features):
        if not known[i] or not same_context(t, c) or crosses_roles(t, c) or contradicts(t, c):
            continue
        d = math.hypot(cx[i] - ex, cy[i] - ey)
        if d > RELATIVE_RADIUS_PX:
            continue
        ox, oy = cx[i] - centre[0], cy[i] - centre[1]
        if (abs(dx) > RELATIVE_RADIUS_PX and ox * dx <= 0) or (abs(dy) > RELATIVE_RADIUS_PX and oy * dy <= 0):
            continue  # on the other side of the anchor
        scores[i] = RELATIVE_CONFIDENCE / (1.0 + d / RELATIVE_SCALE_PX)
    res = decide("relative", scores, pool, margin=config.margin,
                 minimum=RELATIVE_CONFIDENCE / (1.0 + RELATIVE_RADIUS_PX / RELATIVE_SCALE_PX))
    if res.winner is None and res.reason == "no candidate scored":
        res = LevelResult("relative", scores, None, 0.0, 0.0,
                          f"no compatible candidate within {RELATIVE_RADIUS_PX:g} px of anchor "
                          f"'{t.anchor.text[:40]}' + ({dx:.0f}, {dy:.0f}) px")
    return res
