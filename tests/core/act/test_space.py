"""The action-space table: one row per kind, and the rules read from it (P5, S4, S5, S6, R4)."""
from __future__ import annotations

import ast
from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest

from core.act.space import ACTION_SPACE, ActionSpec, already_satisfied, needs_target, spec
from core.domain import ACTION_KINDS, Action, Candidate, ElementDescriptor, Step

ROOT = Path(__file__).resolve().parents[3]
BUTTON = ElementDescriptor(tag="button", role="button", name="Save")


def old_needs_target(step: Step) -> bool:
    """The rule ``Step.needs_target`` implemented before the table took it over (the reference)."""
    if step.action.kind == "assert":
        return bool(step.selector) or not step.target.is_empty
    if step.action.kind == "scroll":  # since issue 8: a scrolled box is named by its selector
        return bool(step.selector)
    return step.action.kind not in {"scroll", "wait", "back", "screenshot", "navigate", "assert"}


# --- the table ------------------------------------------------------------------------------


def test_every_kind_of_the_closed_action_space_has_one_row() -> None:
    assert tuple(ACTION_SPACE) == ACTION_KINDS
    for kind, row in ACTION_SPACE.items():
        assert isinstance(row, ActionSpec) and row.kind == kind and spec(kind) is row
        assert row.target in ("required", "optional", "selector", "none") and row.value in ("required", "optional", "none")
        assert row.performs


def test_the_table_cannot_be_changed_at_run_time() -> None:
    with pytest.raises(TypeError):
        ACTION_SPACE["click"] = ACTION_SPACE["hover"]  # type: ignore[index]
    with pytest.raises(FrozenInstanceError):
        spec("click").read_only = True  # type: ignore[misc]


def test_an_unknown_kind_is_refused_with_the_kinds_named() -> None:
    with pytest.raises(KeyError, match="unknown action 'drag'; expected one of click, dblclick"):
        spec("drag")
    with pytest.raises(KeyError, match="unknown action 'drag'"):
        needs_target(Step("s1", Action("drag")))  # type: ignore[arg-type]


def test_the_rules_the_table_replaces() -> None:
    """Each column gives the kind lists the loader, the fake driver, the recorder and the studio used to spell out."""
    def kinds(pred) -> set[str]:  # noqa: ANN001
        return {k for k, row in ACTION_SPACE.items() if pred(row)}

    # loader: an empty value is refused for these (input may be empty: it clears the field)
    assert kinds(lambda r: r.value == "required") == {"select", "press", "navigate", "upload"}
    # fake driver and S4 pre-check: the target must be enabled
    assert kinds(lambda r: r.needs_enabled) == {"click", "dblclick", "input", "select", "check", "uncheck", "upload"}
    assert kinds(lambda r: r.needs_editable) == {"input"}
    # recorder: read-only by default (R4); every kind reversible until a network write is seen (S6)
    assert kinds(lambda r: r.read_only) == {"hover", "scroll", "wait", "assert", "screenshot"}
    assert kinds(lambda r: r.reversible) == set(ACTION_KINDS)
    # recorder: only actions with a vague default expectation get a recorded one (S5)
    assert kinds(lambda r: r.expected == "any") == {"click", "dblclick", "press"}
    # studio: values that can become parameters and are masked in password fields
    assert kinds(lambda r: r.parametrizable) == {"input", "select"}
    # importer: actions that put a value into their element (a codegen focus click before them is dropped)
    assert kinds(lambda r: r.target == "required" and r.value != "none") == {"input", "select", "press", "upload"}
    assert kinds(lambda r: r.satisfiable) == {"input", "select", "check", "uncheck"}


def test_the_domain_does_not_know_the_action_table() -> None:
    offenders = []
    for path in sorted((ROOT / "core" / "domain").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("core."):
                offenders.append(f"{path.name}: {node.module}")
            elif isinstance(node, ast.Import):
                offenders += [f"{path.name}: {a.name}" for a in node.names if a.name.startswith("core.")]
    assert offenders == []


# --- needs_target ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ACTION_KINDS)
@pytest.mark.parametrize("selector", ["", "#save"])
@pytest.mark.parametrize("target", [ElementDescriptor(), BUTTON], ids=["no-descriptor", "descriptor"])
def test_needs_target_is_the_old_domain_rule(kind: str, selector: str, target: ElementDescriptor) -> None:
    step = Step("s1", Action(kind), selector=selector, target=target)  # type: ignore[arg-type]
    assert needs_target(step) is old_needs_target(step)


def test_needs_target_examples() -> None:
    assert needs_target(Step("s1", Action("click")))  # the loader then asks for a selector or a target
    assert needs_target(Step("s1", Action("press", "Enter")))
    assert not needs_target(Step("s1", Action("scroll"), target=BUTTON))
    assert needs_target(Step("s1", Action("scroll"), selector="section#pane"))
    assert not needs_target(Step("s1", Action("navigate", "/home"), selector="#save"))
    assert not needs_target(Step("s1", Action("assert")))
    assert needs_target(Step("s1", Action("assert"), selector="#save"))
    assert needs_target(Step("s1", Action("assert"), target=BUTTON))


# --- already_satisfied ----------------------------------------------------------------------


def field(value: str = "", *, checked: bool | None = None, password: bool = False) -> Candidate:
    desc = ElementDescriptor(tag="input", role="checkbox" if checked is not None else "textbox",
                             type="password" if password else "")
    return Candidate("0:1", desc, value=value, checked=checked, extra={"is_password": True} if password else {})


@pytest.mark.parametrize(("kind", "cand", "value", "expected"), [
    ("input", field("alice"), "alice", True),
    ("input", field("alice"), "bob", False),
    ("input", field(""), "", False),  # clearing an empty field is still performed
    ("input", field("alice", password=True), "alice", False),  # a password is never read back
    ("input", None, "alice", False),
    ("select", field("CSV"), "CSV", True),
    ("select", field("CSV"), "PDF", False),
    ("select", field("CSV", password=True), "CSV", False),
    ("check", field(checked=True), "", True),
    ("check", field(checked=False), "", False),
    ("check", field(checked=None), "", False),
    ("uncheck", field(checked=False), "", True),
    ("uncheck", field(checked=True), "", False),
    ("uncheck", field(checked=None), "", False),
    ("click", field("alice"), "alice", False),
    ("upload", field("a.txt"), "a.txt", False),
    ("press", field("Enter"), "Enter", False),
])
def test_already_satisfied(kind: str, cand: Candidate | None, value: str, expected: bool) -> None:
    assert already_satisfied(kind, cand, value) is expected


@pytest.mark.parametrize("kind", ACTION_KINDS)
def test_only_satisfiable_kinds_are_ever_already_satisfied(kind: str) -> None:
    cands = [field("x"), field("x", password=True), field(checked=True), field(checked=False)]
    seen = any(already_satisfied(kind, c, "x") for c in cands)
    assert seen is spec(kind).satisfiable


def test_already_satisfied_refuses_an_unknown_kind() -> None:
    with pytest.raises(KeyError, match="unknown action 'drag'"):
        already_satisfied("drag", field("x"), "x")
