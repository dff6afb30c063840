"""Safety rules of the locator chain (R2): when a level's winner may not be taken.

A wrong click is worse than an escalation, so a level's clear winner is
still overruled when

* it crosses roles - a button that became a link, a checkbox that became a
  button - unless every other attribute of the target agrees
  (:func:`crosses_roles`, :func:`others_agree`);
* its own non-empty name contradicts the recorded one and no identifier
  unique on the page says it is the same element (:func:`contradicts`;
  failure kind 12: a radio of the same group with another label);
* it cannot be acted on - hidden, disabled or covered - on a heal; the chain
  then abstains instead of taking the runner-up (failure kind 3; an EXACT
  match that is disabled is left to the S4 pre-check, which waits);
* the step is irreversible and the heal is not confirmed by a second,
  independent level (:data:`INDEPENDENT`).

Pure functions over :class:`~core.locate.features.Features`.
"""
from __future__ import annotations

from core.domain import Candidate, ElementDescriptor

from .features import CandidatePool, Features, features_of
from .roles import GENERIC
from .textsim import text_similarity

__all__ = [
    "crosses_roles", "others_agree", "contradicts", "unique_id_agrees", "not_actionable", "selector_contradicts",
    "CONTRADICTION_BELOW", "AGREE_AT_LEAST", "VALUE_FAMILIES",
]

#: Two non-empty labels that share no word and whose similarity
#: (:func:`~core.locate.textsim.text_similarity`, 0..1) is below this say
#: different things ("Maybe" / "Yes" 0.5, "Email" / "Phone" 0.2); a
#: spelling variant ("Colour" / "Color" 0.91) does not, and labels sharing
#: a word ("Export report" / "Save report") are left to the evidence bar.
#: 0.7: the semantic level's evidence bar (0.7 on the 0.4..1 rescaled
#: scale) is about 0.82 raw; below 0.7 raw nothing of the label agrees.
CONTRADICTION_BELOW = 0.7

#: "Every other attribute agrees" (a role-crossing heal): each identity
#: attribute the target has reaches this similarity on the candidate -
#: FUZZY_TEXT's bar of R2 plus one margin (0.8 + 0.1).
AGREE_AT_LEAST = 0.9

#: Families whose members take a value from the user (text box, combo box,
#: search box, spin button): a standard input that became a custom widget
#: (one of the tweaks of R) does not cross roles in a dangerous way.
VALUE_FAMILIES = frozenset({"text", "choice"})


def crosses_roles(t: Features, c: Features) -> bool:
    """True when ``c`` has another interactive role than ``t``.

    Both roles must be known and interactive (not generic); roles that both
    take a value (:data:`VALUE_FAMILIES`) do not cross.  button <-> link,
    checkbox <-> radio, checkbox <-> button cross.
    """
    if not t.role or not c.role or t.role == c.role:
        return False
    if t.family == GENERIC or c.family == GENERIC:
        return False
    if t.family in VALUE_FAMILIES and c.family in VALUE_FAMILIES:
        return False
    return True


_IDENTITY_TEXT = ("label_field", "placeholder", "alt", "title")
_IDENTITY_EQUAL = ("id", "name_attr", "test_id", "href")


def others_agree(t: Features, c: Features) -> bool:
    """Every identity attribute of ``t`` agrees on ``c`` (and it has at least one besides its name).

    The name must agree (:data:`AGREE_AT_LEAST`) but never counts as one: it is what the text level matched
    (a submit button "Insert" and a tab link "Insert" agree by name and nothing else).  Text attributes (the
    ``<label>``'s text, placeholder, alt, title) by :data:`AGREE_AT_LEAST`, identifiers (id, name attribute,
    test id, href) by equality; the container, when both have one, too.
    """
    if t.label and text_similarity(t.label, c.label) < AGREE_AT_LEAST:
        return False
    agreed = 0
    for name in _IDENTITY_TEXT:
        a, b = getattr(t, name), getattr(c, name)
        if not a:
            continue
        if text_similarity(a, b) < AGREE_AT_LEAST:
            return False
        agreed += 1
    for name in _IDENTITY_EQUAL:
        a = getattr(t, name)
        if not a:
            continue
        if a != getattr(c, name):
            return False
        agreed += 1
    if t.container and c.container and text_similarity(t.container, c.container) < AGREE_AT_LEAST:
        return False
    return agreed >= 1


def unique_id_agrees(t: Features, i: int, pool: CandidatePool) -> bool:
    """An identifier of ``t`` (test id, id, name attribute, href) equals candidate ``i``'s and no other's.

    The ``name`` attribute of a radio or checkbox names its group: one
    member left on the page makes it unique without making it the
    recorded element (failure kind 12), so it does not count for them.
    """
    c = pool.features[i]
    for name in ("test_id", "id", "name_attr", "href"):
        if name == "name_attr" and t.family == "check":
            continue
        v = getattr(t, name)
        if v and getattr(c, name) == v and pool.column(name).count(v) == 1:
            return True
    return False


def contradicts(t: Features, c: Features) -> bool:
    """Both have a non-empty label, they share no word and are not spelling variants (:data:`CONTRADICTION_BELOW`)."""
    if not t.label or not c.label:
        return False
    if set(t.label.split()) & set(c.label.split()):
        return False
    return text_similarity(t.label, c.label, t.label_core, c.label_core) < CONTRADICTION_BELOW


def not_actionable(c: Candidate) -> str:
    """``"hidden"``, ``"disabled"``, ``"covered"`` or ``""`` (S4's states, failure kind 3)."""
    if not c.visible:
        return "hidden"
    if not c.enabled:
        return "disabled"
    if c.covered:
        return "covered"
    return ""


def selector_contradicts(target: ElementDescriptor, found: ElementDescriptor) -> bool:
    """True when the one element a step's selector matched is not the recorded element.

    It crosses roles (:func:`crosses_roles`), or both have a label and the
    labels are less alike than a FUZZY_TEXT match (``SELECTOR_AGREE_AT_LEAST``,
    0.8, R2's fuzzy threshold): an id reused by another control in a new
    release ("#export-report" now on "Save report", 0.75) is no exact match,
    and the locator chain decides instead.  An empty target never
    contradicts (a selector-only step).
    """
    if target.is_empty:
        return False
    t, c = features_of(target), features_of(found)
    if crosses_roles(t, c):
        return True
    return bool(t.label and c.label) and text_similarity(t.label, c.label, t.label_core, c.label_core) < \
        SELECTOR_AGREE_AT_LEAST


#: Label similarity a selector's match needs to be the recorded element (R2's fuzzy threshold, 0.8).
SELECTOR_AGREE_AT_LEAST = 0.8
