"""The recorded after-state and its comparison (issue 9 item 3, failure kinds 13 and 15) - pure, no browser."""
from __future__ import annotations

from dataclasses import replace

import pytest

from core.act.after import (
    appeared_fields, changed_fields, compare_after, fill_undone, observed_after, same_text, url_pattern,
)
from core.domain import AfterState, Candidate, ElementDescriptor, Observation, StateSignature


def sig(url: str = "http://h/x", modal_count: int = 0) -> StateSignature:
    return StateSignature(url, "t", 0, modal_count, "", "", "", False, 0, "", "d")


def field(label: str, value: str = "", *, role: str = "textbox", editable: bool = True, **extra: object) -> Candidate:
    return Candidate(f"0:{label}", ElementDescriptor(tag="input", role=role, label=label, name=label, id=label.lower()),
                     editable=editable, value=value, extra=dict(extra))


def obs(url: str = "http://h/list", *, title: str = "Requests", cands: tuple[Candidate, ...] = (),
        modals: tuple[str, ...] = ()) -> Observation:
    return Observation(url, title, (1280, 800), 1.0, (0, 0), cands, "", sig(url, len(modals)), modal_titles=modals)


@pytest.mark.parametrize("url, pattern", [
    ("http://h/requests/42/edit?x=1#top", "/requests/{n}/edit"),
    ("http://h/orders/3f2b8c1e-0d3a-4c1e-9a7b-2b8c1e0d3a4c", "/orders/{uuid}"),
    ("http://h/items/a1b2c3d4e5f6a7b8", "/items/{id}"),
    ("http://h/", "/"),
    ("http://h", "/"),
    ("http://h/users/alice/profile", "/users/alice/profile"),  # a parameter's value is never a path segment
    ("http://h/about-us/", "/about-us/"),
])
def test_url_patterns_generalise_ids_and_numbers(url: str, pattern: str) -> None:
    assert url_pattern(url) == pattern


@pytest.mark.parametrize("url, base, pattern", [
    ("http://h/examples/a/", "/examples/a/", "/"),
    ("http://h/examples/a", "/examples/a/", "/"),
    ("http://h/examples/a/list/7", "/examples/a", "/list/{n}"),
    ("http://h/examples/ab/list", "/examples/a/", "/examples/ab/list"),  # not under it: whole
    ("http://h/login", "/examples/a/", "/login"),
    ("http://h/x", "/", "/x"),
])
def test_url_patterns_are_relative_to_the_base_path(url: str, base: str, pattern: str) -> None:
    assert url_pattern(url, base) == pattern


def test_a_confirmation_page_instead_of_the_list_is_another_page() -> None:
    recorded = AfterState(url_pattern="/requests", title="Requests", heading="My requests", dialog=False)
    actual = AfterState(url_pattern="/requests/{n}/confirm", title="Confirm", heading="Confirm deletion", dialog=False)
    (m,) = compare_after(recorded, actual)
    assert m.code == "page" and "/requests/{n}/confirm instead of /requests" in m.reason


def test_the_same_page_with_another_id_count_or_a_suffix_holds() -> None:
    recorded = AfterState(url_pattern="/requests/{n}", title="Request 12", heading="Request \u2019A\u2019 (3)")
    actual = AfterState(url_pattern="/requests/{n}", title="Request 13", heading="Request 'A' (4) (Q)")
    assert compare_after(recorded, actual) == []


def test_same_path_but_another_heading_is_another_page_unless_the_heading_is_unknown() -> None:
    recorded = AfterState(url_pattern="/", heading="My requests")
    actual = AfterState(url_pattern="/", heading="Are you sure you want to delete?")
    assert [m.code for m in compare_after(recorded, actual)] == ["page"]
    assert compare_after(recorded, actual, heading_known=False) == []
    assert compare_after(AfterState(title="Requests"), AfterState(title="Confirm"))[0].code == "page"


def test_a_heading_with_a_parameter_matches_any_value() -> None:
    assert same_text("Welcome, {user}", "Welcome, bob")
    assert not same_text("Welcome, {user}", "Goodbye")


def test_dialogs_expected_missing_other_and_unexpected() -> None:
    assert compare_after(AfterState(dialog=True, dialog_name="Edit"), AfterState(dialog=False))[0].code == \
        "dialog_missing"
    assert compare_after(AfterState(dialog=True, dialog_name="Edit"), AfterState(dialog=True, dialog_name="Delete?"),
                         modal_titles=("Delete?",))[0].code == "dialog_other"
    # nested dialogs: the recorded one is among them
    assert compare_after(AfterState(dialog=True, dialog_name="Edit"), AfterState(dialog=True, dialog_name="Pick"),
                         modal_titles=("Edit", "Pick")) == []
    (m,) = compare_after(AfterState(dialog=False), AfterState(dialog=True, dialog_name="Subscribe!"))
    assert m.code == "dialog_unexpected" and "'Subscribe!'" in m.reason
    assert compare_after(AfterState(), AfterState(dialog=True)) == []  # not recorded: not compared


def test_a_double_click_that_changed_the_page_but_not_the_recorded_field_or_editor_fails() -> None:
    recorded = AfterState(field_appeared="Title", field_changed="")
    assert compare_after(recorded, AfterState(), appeared=["Author"])[0].code == "editor"
    assert compare_after(recorded, AfterState(), appeared=["Title"]) == []
    recorded = AfterState(field_changed="Done")
    assert compare_after(recorded, AfterState(), changed=["Starred"])[0].code == "field"
    assert compare_after(recorded, AfterState(), changed=["Starred", "Done"]) == []


def test_observed_after_names_the_changed_field_and_the_editor_that_appeared() -> None:
    before = obs("http://h/books/7", cands=(field("Done", role="checkbox", editable=False), field("Note", "x")))
    done = replace(before.candidates[0], checked=True)
    after = obs("http://h/books/7", cands=(done, before.candidates[1], field("Title", "Dune")), modals=("Edit",))
    assert changed_fields(before, after) == ["Done"]
    assert appeared_fields(before, after) == ["Title"]
    a = observed_after(before, after, heading="Book 7")
    assert (a.url_pattern, a.heading, a.dialog, a.dialog_name, a.field_changed, a.field_appeared) == (
        "/books/{n}", "Book 7", True, "Edit", "Done", "Title")


def test_observed_after_generalises_parameters_in_the_heading_as_whole_words_only() -> None:
    a = observed_after(None, obs("http://h/u/alice"), heading="Hello alice", params={"user": "alice"})
    assert (a.url_pattern, a.heading, a.field_changed) == ("/u/alice", "Hello {user}", "")
    # failure kind 4 (issue 19): a value inside another word, or a path segment, is a coincidence
    a = observed_after(None, obs("http://h/admin/"), heading="Site administration", params={"user": "admin"})
    assert (a.url_pattern, a.heading) == ("/admin/", "Site administration")
    a = observed_after(None, obs("http://h/admin/"), heading="admin: Site administration (admin)",
                       params={"user": "admin"})
    assert a.heading == "{user}: Site administration ({user})"


def test_a_fill_the_page_undid_is_caught_a_reformatted_one_is_not() -> None:
    before = field("Name", "")
    assert "empty after the fill" in fill_undone("Ada", before, field("Name", ""))
    assert "old value" in fill_undone("Ada", field("Name", "Bob"), field("Name", "Bob"))
    assert fill_undone("Ada", before, field("Name", "Ada")) == ""
    assert fill_undone("2024-01-05", before, field("Date", "05/01/2024")) == ""  # a mask reformatted it
    assert fill_undone("Ada", before, None) == ""  # not listed: not judged here
    assert fill_undone("Ada", before, field("Password", "", is_password=True)) == ""
    assert fill_undone("", field("Name", "x"), field("Name", "")) == ""  # clearing a field is not undone
