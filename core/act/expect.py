"""Expected deltas per action and post-verification (S5).

Only changes inside the expected set count as progress; focus moves,
spinners and hover styles do not (S5).  Outcomes: as expected /
changed unexpectedly / unchanged.
"""
from __future__ import annotations

from core.domain import Observation, Step, Verdict

from .space import spec

__all__ = ["expected_delta", "observed_deltas", "judge", "NOISE_DELTAS", "CHANGE_WORDS", "change_words"]

#: Deltas that never count as progress (S5: hover styles, spinners, caret blinks).
NOISE_DELTAS = frozenset({"focus", "loading"})

#: A delta kind (the stored ``expected`` / ``observed`` values of a verdict) in plain words, for every text a
#: person reads (verdict reasons, the HTML report): a noun phrase each, so "expected X but saw Y, Z" reads.
CHANGE_WORDS = {
    "navigation": "a new page", "overlay_open": "a dialog opening", "overlay_close": "a dialog closing",
    "value": "a value change", "elements": "a change of elements", "content": "a content change",
    "errors_up": "error messages", "scroll": "scrolling", "focus": "a focus move", "loading": "a loading change",
    "any": "any change", "none": "no change",
}


def change_words(deltas: str | tuple[str, ...] | list[str]) -> str:
    """One delta kind, or several (comma-joined), in plain words (:data:`CHANGE_WORDS`); "nothing" for none.

    An unknown kind is shown with its underscores as spaces."""
    names = [deltas] if isinstance(deltas, str) else list(deltas)
    return ", ".join(CHANGE_WORDS.get(d, d.replace("_", " ")) for d in names) or "nothing"


#: Keys whose press has a narrower expected delta than the table's ``"any"`` (S5).
_SOFT_KEYS = {"Tab": "focus", "Escape": "overlay_close"}


def expected_delta(step: Step) -> str:
    """Expected delta kind of a step (S5).

    ``step.expect`` when it is not ``"auto"``; else the action table's
    ``expected`` (:mod:`core.act.space`), except that ``press`` of ``Tab``
    expects ``"focus"`` and of ``Escape`` ``"overlay_close"``.

    Returns one of ``"navigation"``, ``"value"``, ``"overlay_open"``,
    ``"overlay_close"``, ``"content"``, ``"scroll"``, ``"focus"``, ``"any"``
    (some real change) or ``"none"`` (no change needed).

    Raises
    ------
    KeyError
        When the step's action kind is outside the closed action space.
    """
    if step.expect != "auto":
        return step.expect
    kind = step.action.kind
    expected = spec(kind).expected
    if kind == "press":
        return _SOFT_KEYS.get(step.action.value, expected)
    return expected


def _control_states(obs: Observation) -> dict[tuple, tuple]:
    return {(c.descriptor.frame, c.descriptor.id, c.descriptor.name_attr, c.descriptor.role,
             c.descriptor.label_text): (c.value, c.checked, c.enabled) for c in obs.candidates}


def _control_changed(before: Observation, after: Observation) -> bool:
    """True when a control present in both observations changed value, checked or enabled state."""
    b, a = _control_states(before), _control_states(after)
    return any(k in a and a[k] != v for k, v in b.items())


def observed_deltas(before: Observation, after: Observation) -> tuple[str, ...]:
    """Names of the differences between two observations, in a fixed order."""
    b, a = before.signature, after.signature
    out: list[str] = []
    if a.url != b.url:
        out.append("navigation")
    if a.modal_count > b.modal_count:
        out.append("overlay_open")
    elif a.modal_count < b.modal_count:
        out.append("overlay_close")
    elif before.modal_titles != after.modal_titles:
        out.append("overlay_open")
    if a.values_digest != b.values_digest and (
            a.elements_digest == b.elements_digest or _control_changed(before, after)):
        out.append("value")
    if a.elements_digest != b.elements_digest or a.interactive_count != b.interactive_count:
        out.append("elements")
    if a.text_digest != b.text_digest or a.content_digest != b.content_digest or a.title != b.title:
        out.append("content")
    if a.error_count > b.error_count:
        out.append("errors_up")
    if tuple(round(v) for v in after.scroll) != tuple(round(v) for v in before.scroll):
        out.append("scroll")
    if a.focus != b.focus:
        out.append("focus")
    if a.loading != b.loading:
        out.append("loading")
    return tuple(out)


def judge(expected: str, observed: tuple[str, ...]) -> Verdict:
    """Classify an action's effect (S5).

    Parameters
    ----------
    expected : str
        From :func:`expected_delta`.
    observed : tuple[str, ...]
        From :func:`observed_deltas`.
    """
    real = tuple(d for d in observed if d not in NOISE_DELTAS)
    if expected == "none":
        return Verdict("as_expected", expected, observed, "no change was required")
    if expected == "focus":
        ok = "focus" in observed or bool(real)
        return Verdict("as_expected" if ok else "unchanged", expected, observed,
                       "focus moved" if ok else "focus did not move")
    if not real:
        return Verdict("unchanged", expected, observed, f"expected {change_words(expected)} but nothing changed beyond noise")
    if "errors_up" in real and expected not in ("any", "content") and expected not in real:
        return Verdict("changed_unexpectedly", expected, observed,
                       f"expected {change_words(expected)} but error messages appeared instead")
    if expected == "any":
        if real == ("errors_up",):
            return Verdict("changed_unexpectedly", expected, observed, "only validation errors appeared")
        return Verdict("as_expected", expected, observed, "the page changed: " + change_words(real))
    if expected == "content" and any(d in real for d in ("content", "elements", "value", "overlay_open", "overlay_close", "navigation")):
        return Verdict("as_expected", expected, observed, "content changed")
    if expected in real:
        return Verdict("as_expected", expected, observed, f"{change_words(expected)}, as expected")
    if expected == "navigation" and "content" in real:
        return Verdict("as_expected", expected, observed, "page content was replaced")
    return Verdict("changed_unexpectedly", expected, observed,
                   f"expected {change_words(expected)} but saw " + change_words(real))
