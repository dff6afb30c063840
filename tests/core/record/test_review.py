"""The review of a recording: which steps' names need a second look (pure, no browser)."""
from __future__ import annotations

from core.domain import Action, Assertion, Candidate, ElementDescriptor, Step
from core.record.review import flags_by_step, format_review, review_flags, same_named


def _desc(role: str = "button", name: str = "", text: str = "", css: str = "", **kw) -> ElementDescriptor:
    return ElementDescriptor(tag=kw.pop("tag", "button"), role=role, name=name, text=text, css_path=css, **kw)


def _step(sid: str, desc: ElementDescriptor, kind: str = "click", title: str = "") -> Step:
    return Step(id=sid, name=title or f"Click {desc.label_text or desc.tag}", action=Action(kind), target=desc)  # type: ignore[arg-type]


def _cand(ref: str, desc: ElementDescriptor) -> Candidate:
    return Candidate(ref=ref, descriptor=desc)


def test_same_named_counts_the_other_elements_with_the_role_and_name():
    me = _desc("link", "Edit", "Edit", "tr:nth-child(2) a")
    page = [_cand("e1", _desc("link", "Edit", "Edit", "tr:nth-child(1) a")),
            _cand("e2", _desc("link", "edit ", "Edit", "tr:nth-child(2) a")),   # itself: not counted
            _cand("e3", _desc("link", "  EDIT", "EDIT", "tr:nth-child(3) a")),  # case and spaces folded
            _cand("e4", _desc("button", "Edit", "Edit", "button#edit")),        # another role
            _cand("e5", _desc("link", "Edit profile", "Edit profile", "a#p"))]  # another name
    assert same_named(me, page) == 2
    # the same CSS path in another frame is another element
    assert same_named(me, [_cand("f", _desc("link", "Edit", "Edit", "tr:nth-child(2) a", frame="basket"))]) == 1
    assert same_named(_desc("link", "", "", "a"), page) == 0  # no name: nothing to compare
    assert same_named(me, []) == 0


def test_review_flags_empty_duplicated_and_differing_names_in_step_order():
    steps = [
        _step("s1", _desc("link", "Edit", "Edit", "a#e2", tag="a")),
        _step("s2", _desc("button", "", "", "button#gear")),
        _step("s3", _desc("button", "Close panel", "\u00d7", "button#close")),
        _step("s4", _desc("button", "Save", "Save", "button#save")),
        _step("s5", _desc("textbox", "User name", "", "input#user", tag="input"), kind="input"),
        _step("s6", _desc("button", "Add book", "ADD BOOK", "button#add")),   # CSS capitals: the same name
        _step("s7", _desc("link", "New request", "+ New request", "a#new", tag="a")),  # the name is in the text
        Step(id="s8", name="Check that 'Saved' appears", action=Action("assert"),
             assertions=(Assertion("text_appears", "Saved"),)),  # page level: no target, no name to check
        Step(id="s9", name="Press Enter", action=Action("press", value="Enter")),
        _step("s10", _desc("link", "Delete", "Save", "a#del", tag="a")),
    ]
    flags = review_flags(steps, {"s1": 1, "s4": 0, "s10": 2})
    assert [(f.step_id, f.kind) for f in flags] == [
        ("s1", "duplicate_name"), ("s2", "empty_name"), ("s3", "name_differs"),
        ("s10", "duplicate_name"), ("s10", "name_differs")]
    assert "2 elements on the page are a link named 'Edit'" in flags[0].message
    assert "a button without an accessible name" in flags[1].message
    assert "named 'Close panel' but shows '\u00d7'" in flags[2].message
    assert "3 elements on the page" in flags[3].message
    assert flags[0].step_name == "Click Edit"
    assert list(flags_by_step(flags)) == ["s1", "s2", "s3", "s10"]
    # without counts (a journal recovered after a crash) duplicates are not known, the rest still is
    assert [(f.step_id, f.kind) for f in review_flags(steps)] == [
        ("s2", "empty_name"), ("s3", "name_differs"), ("s10", "name_differs")]


def test_an_empty_name_is_said_once_even_when_the_element_shows_text():
    flags = review_flags([_step("s1", _desc("generic", "", "Go", "div#go", tag="div"))], {"s1": 3})
    assert [f.kind for f in flags] == ["empty_name"] and "a generic without" in flags[0].message


def test_format_review_lists_the_flags_under_one_heading():
    steps = [_step("s1", _desc("button", "", "", "button#gear")), _step("s2", _desc("button", "Close", "x", "b#c"))]
    text = format_review(review_flags(steps), "flows/team.yaml")
    lines = text.splitlines()
    assert lines[0] == "Review 2 steps of flows/team.yaml while you remember the page:"
    assert lines[1].startswith("  s1   Click button: a button without an accessible name")
    assert lines[2].startswith("  s2   Click Close: named 'Close' but shows 'x'")
    assert format_review([], "flows/team.yaml") == ""
    one = format_review(review_flags(steps[:1]), "flows/a.yaml")
    assert one.startswith("Review 1 step of flows/a.yaml")
