"""The closed action space as one table (P5 and the recorded kinds).

Per action kind: whether it acts on an element, whether it takes a value,
whether it can already be satisfied (so it is not done twice), whether it
is reversible and read-only by default (S6, R4), the expected delta that
post-verification looks for (S5), whether the target must be enabled or
editable (S4), and how the driver performs it (the Playwright call).  The
executor, the fake driver, the recorder, the importers and the studio read
this table instead of repeating the rules.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Mapping

from core.domain import ACTION_KINDS, Candidate, Step

__all__ = ["ActionSpec", "ACTION_SPACE", "spec", "needs_target", "already_satisfied"]

Need = Literal["required", "optional", "none"]


@dataclass(frozen=True, slots=True)
class ActionSpec:
    """What one action kind needs and promises.

    Attributes
    ----------
    kind : str
        The action kind (one of :data:`core.domain.ACTION_KINDS`).
    target : Need
        ``"required"``: acts on an element; ``"optional"``: may (``press``,
        ``scroll``, ``assert``); ``"none"``: never.
    value : Need
        Whether ``Action.value`` is needed (text, option, key, URL, path).
    satisfiable : bool
        Can already be in the wanted state (a field holding the value, a box
        already checked): then it is not performed again.
    reversible : bool
        Default reversibility (S6); the recorder marks steps that wrote data.
    read_only : bool
        Default: the action has no side effect (R4: the breaker tolerates more).
    expected : str
        Expected delta for post-verification (S5): see
        :func:`core.act.expect.expected_delta`.
    needs_enabled : bool
        Pre-check: the target must be enabled (S4).
    needs_editable : bool
        Pre-check: the target must be editable (S4).
    performs : str
        How the driver performs it (the Playwright call), for docs and the studio.
    """

    kind: str
    target: Need
    value: Need
    satisfiable: bool
    reversible: bool
    read_only: bool
    expected: str
    needs_enabled: bool
    needs_editable: bool
    performs: str


def _s(kind: str, target: Need, value: Need, expected: str, performs: str, *, satisfiable: bool = False,
       reversible: bool = True, read_only: bool = False, enabled: bool = False, editable: bool = False) -> ActionSpec:
    return ActionSpec(kind, target, value, satisfiable, reversible, read_only, expected, enabled, editable, performs)


#: The table, one row per kind of :data:`core.domain.ACTION_KINDS`.
ACTION_SPACE: Mapping[str, ActionSpec] = {s.kind: s for s in (
    _s("click", "required", "none", "any", "locator.click()", enabled=True),
    _s("dblclick", "required", "none", "any", "locator.dblclick()", enabled=True),
    _s("input", "required", "required", "value", "locator.fill() (clears first, P5); custom widgets: "
       "click, select all, type", satisfiable=True, enabled=True, editable=True),
    _s("select", "required", "required", "value", "locator.select_option(label|value); custom listbox: "
       "open, click the option by accessible name", satisfiable=True, enabled=True),
    _s("check", "required", "none", "value", "locator.check()", satisfiable=True, enabled=True),
    _s("uncheck", "required", "none", "value", "locator.uncheck()", satisfiable=True, enabled=True),
    _s("hover", "required", "none", "none", "locator.hover()", read_only=True),
    _s("press", "optional", "required", "any", "locator.press(key) or keyboard.press(key)"),
    _s("scroll", "optional", "none", "scroll", "mouse.wheel(dx, dy) (over the target when given)", read_only=True),
    _s("wait", "none", "optional", "none", "get_by_text(value).wait_for(visible)", read_only=True),
    _s("assert", "optional", "none", "none", "assertions only", read_only=True),
    _s("back", "none", "none", "navigation", "page.go_back()"),
    _s("screenshot", "none", "none", "none", "page.screenshot()", read_only=True),
    _s("navigate", "none", "required", "navigation", "page.goto(base_url + value)"),
    _s("upload", "required", "required", "value", "locator.set_input_files(path)", enabled=True),
)}

assert set(ACTION_SPACE) == set(ACTION_KINDS), "the action table must cover the closed action space"


def spec(kind: str) -> ActionSpec:
    """The table row of ``kind``.

    Raises
    ------
    KeyError
        When ``kind`` is outside the closed action space (names the kinds).
    """
    try:
        return ACTION_SPACE[kind]
    except KeyError:
        raise KeyError(f"unknown action {kind!r}; expected one of {', '.join(ACTION_KINDS)}") from None


def needs_target(step: Step) -> bool:
    """True when the step acts on (or asserts) an element.

    ``required`` kinds always; ``optional`` kinds only when the step names an
    element (a selector or a descriptor) - except ``press`` and ``scroll``,
    which keep today's rule: ``press`` needs one, ``scroll`` never resolves one.
    """
    return step.needs_target


def already_satisfied(kind: str, cand: Candidate | None, value: str) -> bool:
    """True when the target already is in the wanted state, so acting would do nothing or act twice.

    Password fields never count (their value is not read back).
    """
    if cand is None or not spec(kind).satisfiable:
        return False
    if kind in ("input", "select"):
        return value != "" and cand.value == value and not cand.extra.get("is_password")
    if kind == "check":
        return cand.checked is True
    if kind == "uncheck":
        return cand.checked is False
    return False
