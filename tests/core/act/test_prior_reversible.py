"""Reversibility before acting (S6): only what is surely front-end only is reversible; unsure = irreversible."""
from __future__ import annotations

import pytest

from core.act.prior import judge_reversible
from core.domain import Candidate, ElementDescriptor


def c(name: str, *, role: str = "button", tag: str = "button", type_: str = "button", href: str = "",
      classes: tuple[str, ...] = ()) -> Candidate:
    return Candidate("0:1", ElementDescriptor(tag=tag, role=role, name=name, type=type_, href=href, classes=classes))


@pytest.mark.parametrize("cand, why", [
    (c("Sign in", type_="submit"), "a submit button"),
    (c("Delete request"), "named like a write ('delete')"),
    (c("Save report"), "named like a write ('save')"),
    (c("OK"), "named like a write ('ok')"),
    (c("Sign out", role="link", tag="a", href="/logout"), "named like a write ('sign out')"),
    (c("Frobnicate"), "unsure: a button that says nothing of what it does"),
])
def test_irreversible_or_unsure(cand: Candidate, why: str) -> None:
    assert judge_reversible("click", cand) == (False, why)


@pytest.mark.parametrize("cand, why", [
    (c("Requests", role="link", tag="a", href="/requests"), "a link"),
    (c("Tab #2", role="tab"), "a tab"),
    (c("Cancel"), "named like navigation ('cancel')"),
    (c("Next month"), "named like navigation ('next')"),
    (c("EMPLOYEE", classes=("sort",)), "styled as navigation (class 'sort')"),
])
def test_surely_reversible(cand: Candidate, why: str) -> None:
    assert judge_reversible("click", cand) == (True, why)


def test_value_actions_are_front_end_only_and_a_script_link_is_not_a_link() -> None:
    assert judge_reversible("input", c("Reason", role="textbox", tag="input"))[0]
    assert not judge_reversible("click", c("Go", role="link", tag="a", href="javascript:go()"))[0]
    assert not judge_reversible("upload", None)[0]
