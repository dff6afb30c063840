"""``{name}`` parameter placeholders: the one place that finds and binds them.

A placeholder is ``{`` + a Python identifier (letters, digits, ``_``) + ``}``
in a step value, an assertion's expected text or selector, a start URL, a
step's selector and the text fields of its target descriptor (so "click the
button the task names" is ``name: '{button}'``).  A literal brace is
written twice (``{{`` and ``}}``), as in Python's format strings; the
recorder escapes what it copies from the page with :func:`escape`.  Flows,
the recorder, the importers, the studio and the engine all use these
functions instead of their own regular expressions.
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Iterator, Mapping

from core.domain import Assertion, ElementDescriptor, Step

__all__ = [
    "PLACEHOLDER", "ParameterError", "placeholders", "bind", "placeholder", "is_placeholder", "placeholder_name",
    "escape", "escape_target", "display", "TARGET_FIELDS", "step_texts", "bind_step",
]

#: A ``{name}`` placeholder; group 1 is the name.
PLACEHOLDER = re.compile(r"\{(\w+)\}")
#: What :func:`bind` reads: an escaped brace, or a placeholder (group 1).
_TOKEN = re.compile(r"\{\{|\}\}|\{(\w+)\}")
#: Text fields of a target descriptor that may hold placeholders (the element's meaning and its ids).
TARGET_FIELDS: tuple[str, ...] = ("name", "label", "text", "placeholder", "id", "name_attr", "href", "test_id",
                                  "alt", "title")


class ParameterError(ValueError):
    """A text names a parameter that has no value; the message names where and which."""


def placeholders(text: str) -> tuple[str, ...]:
    """Names of the placeholders in ``text``, in order of appearance (repeats kept; ``{{x}}`` is none)."""
    return tuple(m.group(1) for m in _TOKEN.finditer(text or "") if m.group(1))


def escape(text: str) -> str:
    """``text`` as literal text: its braces doubled, so :func:`bind` gives it back unchanged."""
    return text.replace("{", "{{").replace("}", "}}")


def placeholder(name: str) -> str:
    """The placeholder text of parameter ``name`` (``"user"`` -> ``"{user}"``)."""
    return "{" + name + "}"


def is_placeholder(text: str) -> bool:
    """True when ``text`` is exactly one placeholder (``"{password}"``)."""
    return PLACEHOLDER.fullmatch(text or "") is not None


def placeholder_name(text: str) -> str:
    """The parameter name when ``text`` is exactly one placeholder (``"{password}"`` -> ``"password"``), else ``""``."""
    m = PLACEHOLDER.fullmatch(text or "")
    return m.group(1) if m else ""


def bind(text: str, params: Mapping[str, str], *, where: str = "") -> str:
    """Replace every ``{name}`` in ``text`` by ``params[name]``, and ``{{`` / ``}}`` by one brace.

    Parameters
    ----------
    text : str
        Text with placeholders.
    params : Mapping[str, str]
        Bound values (secrets included: the caller masks them downstream).
    where : str
        Names the flow and step for the error message.

    Raises
    ------
    ParameterError
        When a placeholder has no value.
    """
    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        if name is None:
            return m.group(0)[0]
        if name not in params:
            known = ", ".join(sorted(params)) or "none"
            raise ParameterError(f"{where}: parameter {{{name}}} has no value (known: {known})")
        return str(params[name])

    return _TOKEN.sub(sub, text)


def display(text: str) -> str:
    """``text`` as a person reads it: doubled braces shown once, placeholders kept as ``{name}``."""
    return _TOKEN.sub(lambda m: m.group(0) if m.group(1) else m.group(0)[0], text or "")


def escape_target(desc: ElementDescriptor) -> ElementDescriptor:
    """``desc`` with its :data:`TARGET_FIELDS` escaped: what a page showed is kept as literal text."""
    changes = {name: escape(getattr(desc, name)) for name in TARGET_FIELDS}
    return desc.with_(**changes) if any(changes[n] != getattr(desc, n) for n in TARGET_FIELDS) else desc


def step_texts(step: Step) -> Iterator[tuple[str, str]]:
    """Every text of ``step`` that may hold placeholders, as ``(field, text)``.

    Fields: ``value``, ``selector``, ``target.<field>`` (:data:`TARGET_FIELDS`),
    ``assertions[i].expected``, ``assertions[i].selector``.
    """
    yield "value", step.action.value
    yield "selector", step.selector
    for name in TARGET_FIELDS:
        yield f"target.{name}", getattr(step.target, name)
    for i, a in enumerate(step.assertions):
        yield f"assertions[{i}].expected", a.expected
        yield f"assertions[{i}].selector", a.selector


def bind_step(step: Step, params: Mapping[str, str], *, where: str = "") -> Step:
    """``step`` with every placeholder of :func:`step_texts` bound.

    Raises
    ------
    ParameterError
        When a placeholder has no value; the message names ``where`` and the field.
    """
    def b(field: str, text: str) -> str:
        return bind(text, params, where=f"{where}, field '{field}'") if text else text

    target: ElementDescriptor = step.target
    changes = {name: b(f"target.{name}", getattr(target, name)) for name in TARGET_FIELDS}
    if any(changes[n] != getattr(target, n) for n in TARGET_FIELDS):
        target = target.with_(**changes)
    assertions = tuple(Assertion(a.kind, b(f"assertions[{i}].expected", a.expected),
                                 b(f"assertions[{i}].selector", a.selector)) for i, a in enumerate(step.assertions))
    return replace(step, action=replace(step.action, value=b("value", step.action.value)),
                   selector=b("selector", step.selector), target=target, assertions=assertions)
