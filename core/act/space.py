"""The closed action space as one table (P5 and the recorded kinds).

Per action kind: whether it acts on an element, whether it takes a value,
whether it can already be satisfied (so it is not done twice), whether it
is reversible and read-only by default (S6, R4), the expected delta that
post-verification looks for (S5), whether the target must be enabled or
editable (S4), and how the driver performs it (the Playwright call).  The
executor, the fake driver, the loader, the recorder, the importers and the
studio read this table instead of repeating the rules.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal, Mapping

from core.domain import ACTION_KINDS, Candidate, Step

__all__ = ["Need", "ActionSpec", "ACTION_SPACE", "spec", "needs_target", "already_satisfied"]

#: How much an action needs a target element or a value.
Need = Literal["required", "optional", "selector", "none"]


@dataclass(frozen=True, slots=True)
class ActionSpec:
    """What one action kind needs and promises.

    Attributes
    ----------
    kind : str
        The action kind (one of :data:`core.domain.ACTION_KINDS`).
    target : Need
        ``"required"``: acts on an element, so the step must name one (a
        selector or a descriptor) and the locator chain resolves it;
        ``"optional"``: resolved only when the step names one (``assert``);
        ``"selector"``: resolved only when the step gives a selector (the
        scrolled box of a ``scroll``; without one the window scrolls);
        ``"none"``: never resolved.
    value : Need
        ``Action.value``: ``"required"``: must not be empty (option, key,
        URL, path); ``"optional"``: may be empty (``input`` with ``""``
        clears the field, ``wait`` without text only waits); ``"none"``:
        not used.
    satisfiable : bool
        Can already be in the wanted state (a field holding the value, a box
        already checked): then it is not performed again
        (:func:`already_satisfied`).
    reversible : bool
        Default reversibility (S6); the recorder marks steps that wrote data.
    read_only : bool
        Default: the action has no side effect (R4: the breaker tolerates more).
    expected : str
        Expected delta for post-verification (S5), one of the names of
        :func:`core.act.expect.expected_delta`.
    needs_enabled : bool
        Pre-check: the target must be enabled (S4).
    needs_editable : bool
        Pre-check: the target must be an editable field (S4).
    parametrizable : bool
        The value is data the user typed or chose (text, option): a value
        equal to a known parameter becomes ``{name}``, the studio offers to
        make it a parameter, and in a password field it is never shown.
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
    parametrizable: bool
    performs: str


def _s(kind: str, target: Need, value: Need, expected: str, performs: str, *, satisfiable: bool = False,
       reversible: bool = True, read_only: bool = False, enabled: bool = False, editable: bool = False,
       parametrizable: bool = False) -> ActionSpec:
    return ActionSpec(kind, target, value, satisfiable, reversible, read_only, expected, enabled, editable,
                      parametrizable, performs)


#: The table, one row per kind of :data:`core.domain.ACTION_KINDS` (read-only mapping).
ACTION_SPACE: Mapping[str, ActionSpec] = MappingProxyType({s.kind: s for s in (
    _s("click", "required", "none", "any", "locator.click()", enabled=True),
    _s("dblclick", "required", "none", "any", "locator.dblclick()", enabled=True),
    _s("input", "required", "optional", "value", "locator.fill() (clears first); custom widgets: "
       "click, select all, type", satisfiable=True, enabled=True, editable=True, parametrizable=True),
    _s("select", "required", "required", "value", "locator.select_option(label|value); custom listbox: "
       "open, click the option by accessible name", satisfiable=True, enabled=True, parametrizable=True),
    _s("check", "required", "none", "value", "locator.check()", satisfiable=True, enabled=True),
    _s("uncheck", "required", "none", "value", "locator.uncheck()", satisfiable=True, enabled=True),
    _s("hover", "required", "none", "none", "locator.hover()", read_only=True),
    _s("press", "required", "required", "any", "locator.press(key)"),
    _s("scroll", "selector", "none", "scroll", "mouse.wheel(dx, dy) (over the box when one is given)", read_only=True),
    _s("wait", "none", "optional", "none", "get_by_text(value).wait_for(visible)", read_only=True),
    _s("assert", "optional", "none", "none", "assertions only", read_only=True),
    _s("back", "none", "none", "navigation", "page.go_back()"),
    _s("screenshot", "none", "none", "none", "page.screenshot()", read_only=True),
    _s("navigate", "none", "required", "navigation", "page.goto(base_url + value)"),
    _s("upload", "required", "required", "value", "locator.set_input_files(path)", enabled=True),
)})

if set(ACTION_SPACE) != set(ACTION_KINDS) or len(ACTION_SPACE) != len(ACTION_KINDS):
    raise ImportError("the action table must cover the closed action space, one row per kind")


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
    """True when the step acts on (or asserts) an element, so the locator chain must resolve one.

    ``target == "required"`` kinds always; ``"optional"`` kinds (``assert``)
    only when the step names an element (a selector or a non-empty
    descriptor); ``"selector"`` kinds (``scroll``) only with a selector;
    ``"none"`` kinds never.

    Raises
    ------
    KeyError
        When the step's action kind is outside the closed action space.
    """
    need = spec(step.action.kind).target
    if need == "optional":
        return bool(step.selector) or not step.target.is_empty
    if need == "selector":
        return bool(step.selector)
    return need == "required"


def already_satisfied(kind: str, cand: Candidate | None, value: str) -> bool:
    """True when the target already is in the wanted state, so acting would do nothing or act twice.

    ``input`` / ``select``: the field already holds the (non-empty, bound)
    ``value``; ``check`` / ``uncheck``: the box already is (un)checked.
    Password fields never count (their value is not read back).  False
    without a target and for kinds that are not ``satisfiable``.

    Raises
    ------
    KeyError
        When ``kind`` is outside the closed action space.
    """
    if cand is None or not spec(kind).satisfiable:
        return False
    if kind == "check":
        return cand.checked is True
    if kind == "uncheck":
        return cand.checked is False
    return value != "" and cand.value == value and not cand.extra.get("is_password")
