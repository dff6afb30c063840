"""``{name}`` parameter placeholders: the one place that finds and binds them.

A placeholder is ``{`` + a Python identifier (letters, digits, ``_``) + ``}``
in a step value, an assertion's expected text or a start URL.  Flows,
the recorder, the importers, the studio and the engine all use these
functions instead of their own regular expressions.
"""
from __future__ import annotations

import re
from typing import Mapping

__all__ = [
    "PLACEHOLDER", "ParameterError", "placeholders", "bind", "placeholder", "is_placeholder", "placeholder_name",
]

#: A ``{name}`` placeholder; group 1 is the name.
PLACEHOLDER = re.compile(r"\{(\w+)\}")


class ParameterError(ValueError):
    """A text names a parameter that has no value; the message names where and which."""


def placeholders(text: str) -> tuple[str, ...]:
    """Names of the placeholders in ``text``, in order of appearance (repeats kept)."""
    return tuple(PLACEHOLDER.findall(text or ""))


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
    """Replace every ``{name}`` in ``text`` by ``params[name]``.

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
        if name not in params:
            known = ", ".join(sorted(params)) or "none"
            raise ParameterError(f"{where}: parameter {{{name}}} has no value (known: {known})")
        return str(params[name])

    return PLACEHOLDER.sub(sub, text)
