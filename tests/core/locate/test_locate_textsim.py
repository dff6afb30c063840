"""Label normalisation and similarity."""
from __future__ import annotations

import pytest

from core.locate.roles import effective_role, kind_factor, role_family
from core.locate.textsim import core_label, normalize, text_similarity, text_similarity_many


def sim(a: str, b: str) -> float:
    return text_similarity(normalize(a), normalize(b), core_label(a), core_label(b))


@pytest.mark.parametrize("raw, core", [
    ("Query (Q)", "query"), ("Export report…", "export report"), ("Inbox (12)", "inbox"),
    ("Open [Ctrl+O]", "open"), ("Name *", "name"), ("Sign in", "sign in"), ("(Q)", "q"),
])
def test_core_label_strips_decorations(raw: str, core: str) -> None:
    assert core_label(raw) == core


@pytest.mark.parametrize("a, b", [
    ("Query", "Query (Q)"), ("Export report", "Export report (E)"), ("Sign in", "Sign In"),
    ("Log in", "Login"), ("Report export", "Export report"),
])
def test_similar_labels_pass_the_fuzzy_threshold(a: str, b: str) -> None:
    assert sim(a, b) > 0.8


@pytest.mark.parametrize("a, b", [
    ("Export report", "Save report"), ("Save", "Save report as PDF"), ("Report", "Export report"),
    ("Query", "Queries"),
])
def test_different_labels_stay_below_the_threshold(a: str, b: str) -> None:
    assert sim(a, b) <= 0.8


def test_vectorised_similarity_matches_the_scalar_one() -> None:
    labels = ["Query (Q)", "Export report", "Save report", "", "Export report (E)", "Report export"]
    many = text_similarity_many(normalize("Export report"), core_label("Export report"),
                                [normalize(x) for x in labels], [core_label(x) for x in labels])
    for x, s in zip(labels, many, strict=True):
        assert s == pytest.approx(sim("Export report", x), abs=1e-5)
    assert many[3] == 0.0


def test_roles_and_kinds() -> None:
    assert effective_role("", "input", "submit") == "button"
    assert effective_role("", "input", "") == "textbox"
    assert effective_role("combobox", "div") == "combobox"
    assert role_family("link") == role_family("button") == "action"
    assert kind_factor("button", "button", "action", "button", "button", "action") == 1.0
    assert kind_factor("a", "link", "action", "button", "button", "action") == 0.9
    assert kind_factor("input", "textbox", "text", "div", "combobox", "choice") == 0.8
