"""What makes a heal the recorded element rather than a guess (issue 19, "heal on evidence that exists").

Three rules the chain (:mod:`core.locate.chain`) applies to a level's winner
on a heal (any level but EXACT):

* **role and name identity** (:func:`role_name_identity`): the winner has
  the target's role and its accessible name exactly as shown (case and
  punctuation kept, whitespace collapsed), it is the only visible candidate
  of the page with both, and it lives in the same frame, dialog/form and
  landmark region.  That is what Playwright's
  ``get_by_role(role, name=..., exact=True)`` finds; a tag change
  (``input type=submit`` -> ``button``, ``div role=button`` -> ``button``)
  keeps the control.  It counts as identity: enough alone, even for an
  irreversible step;
* **nothing shared** (:func:`shares_nothing`): a winner whose name, text and
  identifiers have nothing in common with the recorded ones was chosen for
  its place, neighbours or style alone - never the recorded element;
* **siblings of one role** (:func:`role_siblings`): among siblings of the
  winner's role (a radio group, a list of options, a dialog's buttons), a
  winner whose name contradicts the recorded one is a guess even when a
  positional identifier agrees (MiniWoB's radios ``ch0``..``ch5`` carry new
  random labels each episode: ``ch2`` is another option, not the recorded
  one); the step abstains.

Pure functions over :class:`~core.locate.features.Features`.
"""
from __future__ import annotations

import re

import numpy as np

from .features import CONTEXT_MIN_SIMILARITY, CandidatePool, Features, same_context
from .level import describe
from .roles import GENERIC
from .safety import CONTRADICTION_BELOW
from .textsim import text_similarity

__all__ = ["role_name_identity", "not_in_place", "shares_nothing", "role_siblings", "TIE_FLOOR", "names_contradict",
           "id_is_positional", "same_destination"]

#: A heal whose winner leads the runner-up by less than this (0..1 score
#: points, at the level that chose it) is a tie and is never acted on: the
#: chain abstains and shows both.  Source: SEMANTIC's smallest attribute
#: weight (0.5: alt, title, type, classes, href, xpath, region, position,
#: size) over the total weight a typical recorded target has (tag, role,
#: label, text, type, classes, xpath, region, neighbours, position, size:
#: 9.5), about 0.05 - a lead smaller than the full credit of one minor
#: attribute is no evidence that one candidate is the target and the other
#: not.  It holds whatever margin a project configures (the default margin,
#: 0.1, is above it).  One exception (:func:`same_destination`): tied links
#: with the same name and the same ``href`` (a header and a footer copy of
#: one link) request the same page whichever is pressed.
TIE_FLOOR = 0.05

_INDEX = re.compile(r"\[\d+\]")
_TEXT_ATTRS = ("label", "text", "placeholder", "alt", "title")


def _landmarks_agree(t: Features, c: Features) -> bool:
    """Same form membership and a shared landmark region, when both paths are known."""
    if not t.xpath_steps or not c.xpath_steps:
        return True
    if ("form" in t.landmarks) != ("form" in c.landmarks):
        return False
    if t.landmarks and c.landmarks:
        return bool(t.landmarks & c.landmarks)
    return t.landmarks == c.landmarks


def not_in_place(t: Features, pool: CandidatePool, w: int) -> str:
    """Why candidate ``w``, named as the target, is another control than the recorded one ("" when no evidence).

    A control named as the recorded one is still another control when the
    page says the recorded element's place is elsewhere and still there:

    * the recorded ``id`` (not a generated one), test id or link address is
      carried by another visible candidate while ``w`` has another one - the
      recorded element is still on the page under another name (an "Add
      task" renamed "Save" while a new "Add task" appears elsewhere; a tab
      "Query" renamed "SQL" while the navigation bar's "Query" goes elsewhere);
    * the recorded container (the dialog, form or labelled section title)
      still holds other visible candidates while ``w`` is outside it (no
      container, or another one) - the recorded form is on the page and
      ``w`` is not in it.

    The chain abstains on such a heal (a person decides); with no such
    evidence (the recorded form or region is gone) a same-named control may
    still heal.
    """
    c = pool.features[w]
    for name, words in (("id", "id"), ("test_id", "test id"), ("href", "link address")):
        v = getattr(t, name)
        if v and getattr(c, name) != v:
            for i, f in enumerate(pool.features):
                if i != w and pool.visible[i] and getattr(f, name) == v:
                    return (f"the recorded {words} '{v[:60]}' is still on the page, on {describe(pool, i)}: "
                            f"{describe(pool, w)} is another control with the same name")
    if t.container and not (c.container and text_similarity(t.container, c.container) >= CONTEXT_MIN_SIMILARITY):
        for i, f in enumerate(pool.features):
            if (i != w and pool.visible[i] and f.frame == t.frame and f.container
                    and text_similarity(t.container, f.container) >= CONTEXT_MIN_SIMILARITY):
                return (f"the recorded form or region '{t.container[:40]}' "
                        f"is still on the page and {describe(pool, w)} is outside it: it is another control")
    return ""


def role_name_identity(t: Features, pool: CandidatePool, w: int) -> bool:
    """Candidate ``w`` is what ``get_by_role(t.role, name=t's name, exact=True)`` finds, in the target's place.

    True when the target has an interactive role and a name, ``w`` has the
    same role and the same name as shown (:attr:`Features.label_key`), no
    other visible candidate of the page has both, and ``w`` is in the
    target's frame, dialog/form (:func:`~core.locate.features.same_context`)
    and landmark region (same form membership, a shared landmark).
    """
    c = pool.features[w]
    if not t.label_key or not t.role or t.family == GENERIC or c.role != t.role or c.label_key != t.label_key:
        return False
    if not same_context(t, c) or not _landmarks_agree(t, c) or not_in_place(t, pool, w):
        return False
    for i, f in enumerate(pool.features):
        if i != w and pool.visible[i] and f.role == t.role and f.label_key == t.label_key:
            return False
    return True


def _texts(f: Features) -> list[str]:
    return [v for v in (getattr(f, a) for a in _TEXT_ATTRS) if v]


def names_contradict(t: Features, c: Features) -> bool:
    """Both have a name (label) and they share no word and are no spelling variants of each other."""
    if not t.label or not c.label:
        return False
    if set(t.label.split()) & set(c.label.split()):
        return False
    return text_similarity(t.label, c.label, t.label_core, c.label_core) < CONTRADICTION_BELOW


def shares_nothing(t: Features, c: Features, *, positional_id: bool = False) -> bool:
    """The target has a name or text, and ``c`` shares no word, spelling variant or identifier with it.

    Words are compared over the name, text, placeholder, alt text and
    title of both; identifiers are the test id, the ``id``, the ``href``
    and the ``name`` attribute (not for a radio or checkbox, where it names
    the group).  With ``positional_id`` the ``id`` is one of a numbered
    series among ``c``'s siblings (``ch0``, ``ch1``...: :func:`id_is_positional`)
    and says where ``c`` is, not what it is: it is not compared.  A target
    without any text is not judged here (an icon button heals on its other
    attributes).
    """
    ts = _texts(t)
    if not ts:
        return False
    ids = ("test_id", "href") + (() if positional_id else ("id",)) + (("name_attr",) if t.family != "check" else ())
    for name in ids:
        v = getattr(t, name)
        if v and getattr(c, name) == v:
            return False
    cs = _texts(c)
    words = set(" ".join(ts).split())
    for v in cs:
        if words & set(v.split()):
            return False
    for a in ts:
        for b in cs:
            if text_similarity(a, b) >= CONTRADICTION_BELOW:
                return False
    return True


def id_is_positional(pool: CandidatePool, w: int, siblings: list[int]) -> bool:
    """``w``'s ``id`` holds a number and a sibling's ``id`` is the same but for its digits (``ch2`` / ``ch3``)."""
    c = pool.features[w]
    if not c.id or c.id_core == c.id.lower():
        return False
    return any(pool.features[i].id and pool.features[i].id_core == c.id_core for i in siblings)


def same_destination(pool: CandidatePool, w: int, scores: "np.ndarray") -> bool:
    """Every candidate within :data:`TIE_FLOOR` of ``w``'s score is a link with ``w``'s name and ``href``.

    Such a tie is between copies of one link (header and footer, a
    breadcrumb and a title link to the same page): pressing either requests
    the same page, so the place tie-break may choose without guessing.
    """
    c = pool.features[w]
    if c.role != "link" or not c.href:
        return False
    for i in np.flatnonzero(scores >= scores[w] - TIE_FLOOR - 1e-9):
        f = pool.features[int(i)]
        if int(i) != w and (f.role != "link" or f.href != c.href or f.label_key != c.label_key):
            return False
    return True


def _group_key(f: Features) -> str:
    """Where an element sits among look-alikes: its path with every index removed (a list's rows share it)."""
    return _INDEX.sub("", f.xpath) if f.xpath else ""


def role_siblings(pool: CandidatePool, w: int) -> list[int]:
    """Other candidates of ``w``'s role in the same group: same frame, and the same index-free path,
    or the same ``name`` attribute for radios and checkboxes (one group), or the same dialog/form title.

    Empty when ``w`` has no interactive role.
    """
    c = pool.features[w]
    if not c.role or c.family == GENERIC:
        return []
    key = _group_key(c)
    out = []
    for i, f in enumerate(pool.features):
        if i == w or f.role != c.role or f.frame != c.frame:
            continue
        if ((key and _group_key(f) == key) or (c.family == "check" and c.name_attr and f.name_attr == c.name_attr)
                or (c.container and f.container == c.container)):
            out.append(i)
    return out
