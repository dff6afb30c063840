"""``{name}`` placeholders: finding, building and binding them, as properties."""
from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from core.domain import Action, Assertion, ElementDescriptor, Step
from core.project.params import (
    ParameterError, bind, bind_step, escape, escape_target, is_placeholder, placeholder, placeholder_name,
    placeholders, step_texts,
)

#: Parameter names as the placeholder pattern reads them (``\w+``: letters, digits, ``_``, any script).
NAMES = st.from_regex(r"\w+", fullmatch=True)
NO_BRACES = st.text(st.characters(blacklist_characters="{}"), max_size=12)
#: A text as literal chunks (no braces) and placeholder names, in order.
PARTS = st.lists(st.one_of(NO_BRACES.map(lambda t: ("text", t)), NAMES.map(lambda n: ("param", n))), max_size=8)


def render(parts: list[tuple[str, str]], values: dict[str, str] | None = None) -> str:
    """The text of ``parts``; with ``values``, what binding it must give."""
    out = []
    for what, s in parts:
        if what == "text":
            out.append(s)
        else:
            out.append(placeholder(s) if values is None else values[s])
    return "".join(out)


@given(PARTS, st.data())
def test_bind_with_every_name_leaves_no_placeholder(parts: list[tuple[str, str]], data: st.DataObject) -> None:
    text = render(parts)
    names = placeholders(text)
    assert names == tuple(s for what, s in parts if what == "param")
    values = {n: data.draw(NO_BRACES, label=n) for n in names}
    bound = bind(text, values, where="flow step 's1'")
    assert placeholders(bound) == () and "{" not in bound
    assert bound == render(parts, values)


@given(st.text(max_size=40))
def test_binding_each_name_to_its_own_placeholder_is_the_identity(text: str) -> None:
    assume("{{" not in text and "}}" not in text)  # a doubled brace is an escape: it binds to one brace
    assert bind(text, {n: placeholder(n) for n in placeholders(text)}) == text


def test_a_doubled_brace_binds_to_one_brace() -> None:
    assert bind("{{", {}) == "{" and bind("a }} b", {}) == "a } b" and bind("{{x}}", {}) == "{x}"


@given(NO_BRACES, st.dictionaries(NAMES, NO_BRACES, max_size=3))
def test_text_without_braces_is_unchanged(text: str, params: dict[str, str]) -> None:
    assert placeholders(text) == ()
    assert bind(text, params, where="anywhere") == text
    assert not is_placeholder(text) and placeholder_name(text) == ""


@given(PARTS, NAMES, st.text(max_size=20))
def test_a_missing_name_raises_naming_where_and_the_name(parts: list[tuple[str, str]], missing: str,
                                                         where: str) -> None:
    parts = [*parts, ("param", missing)]
    text = render(parts)
    params = {n: "v" for n in placeholders(text) if n != missing}
    with pytest.raises(ParameterError) as info:
        bind(text, params, where=where)
    message = str(info.value)
    assert message.startswith(f"{where}: parameter ") and placeholder(missing) in message
    assert isinstance(info.value, ValueError)


@given(NAMES)
def test_a_placeholder_round_trips(name: str) -> None:
    text = placeholder(name)
    assert text == "{" + name + "}"
    assert is_placeholder(text) and placeholder_name(text) == name and placeholders(text) == (name,)
    assert not is_placeholder(f" {text}") and placeholder_name(text + text) == ""


def test_examples() -> None:
    assert placeholders("{user} and {pw}, {user} again; {not a name} {}") == ("user", "pw", "user")
    assert bind("/users/{id}?q={q}", {"id": "7", "q": "x y"}) == "/users/7?q=x y"
    assert bind("", {}) == "" and placeholders("") == ()
    with pytest.raises(ParameterError, match=r"^login step 's2': parameter \{pw\} has no value \(known: user\)$"):
        bind("{pw}", {"user": "alice"}, where="login step 's2'")
    with pytest.raises(ParameterError, match=r"\(known: none\)$"):
        bind("{pw}", {}, where="x")


@given(st.text(max_size=30))
def test_escaped_text_binds_back_to_itself_and_holds_no_placeholder(text: str) -> None:
    assert placeholders(escape(text)) == ()
    assert bind(escape(text), {}) == text


@given(st.text(max_size=20), NAMES)
def test_literal_text_and_a_placeholder_side_by_side(literal: str, name: str) -> None:
    text = escape(literal) + placeholder(name)
    assert placeholders(text) == (name,)
    assert bind(text, {name: "v"}) == literal + "v"


def test_bind_step_binds_value_selector_target_and_assertions_and_names_the_field() -> None:
    step = Step("s1", Action("input", "{who}"), selector='#area a:text-is("{link}")',
                target=ElementDescriptor(role="button", name="{button}", text="Save {{draft}}", css_path="#a"),
                assertions=(Assertion("text_appears", "hello {who}", "#out-{n}"),))
    fields = dict(step_texts(step))
    assert fields["value"] == "{who}" and fields["target.name"] == "{button}"
    assert fields["assertions[0].selector"] == "#out-{n}" and "target.css_path" not in fields
    bound = bind_step(step, {"who": "Ann", "link": "Beta", "button": "Two", "n": "3"}, where="f step 's1'")
    assert bound.action.value == "Ann" and bound.selector == '#area a:text-is("Beta")'
    assert (bound.target.name, bound.target.text) == ("Two", "Save {draft}")
    assert bound.assertions == (Assertion("text_appears", "hello Ann", "#out-3"),)
    with pytest.raises(ParameterError, match=r"^f step 's1', field 'target.name': parameter \{button\}"):
        bind_step(step, {"who": "Ann", "link": "Beta", "n": "3"}, where="f step 's1'")


def test_escape_target_keeps_what_the_page_showed() -> None:
    desc = ElementDescriptor(role="button", name="{x} Save", text="{x} Save", css_path="div > b")
    escaped = escape_target(desc)
    assert escaped.name == "{{x}} Save" and escaped.css_path == "div > b"
    assert escape_target(ElementDescriptor(role="button", name="Save")) == ElementDescriptor(role="button", name="Save")
