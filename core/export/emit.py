"""The one way a string from a flow reaches generated Python: as a literal, a comment, docstring text or a name.

Every text an export writes that came from a project, a flow or an import
(step names and ids, values, selectors, parameter names, flow and project
names) goes through one of these functions, so that no input can become code
(issue 21 item 3: a step name with a newline was a line of the exported test).

- :func:`py_str` - a Python string literal (``repr``): ``eval(py_str(s)) == s`` for every ``str``.
- :func:`py_comment` - text for after ``# ``: one line, control characters (newlines, ``\\r``, form feeds,
  NUL, the Unicode line and paragraph separators) replaced by a space.
- :func:`py_doc` - text for inside a ``\"\"\"`` docstring: one line as :func:`py_comment`, with ``\\`` and
  ``"`` escaped so that it can neither close the docstring nor start an escape sequence.
- :func:`py_ident` - a name for a generated variable or function: ASCII letters, digits and ``_``; never a
  keyword, a builtin or one of the names the caller reserves.
"""
from __future__ import annotations

import builtins
import keyword
import re

__all__ = ["py_str", "py_comment", "py_doc", "py_ident"]

_BUILTINS = frozenset(dir(builtins))


def py_str(value: str) -> str:
    """A Python string literal of ``value`` (``repr``): evaluates back to ``value``, whatever it holds.

    Raises ``TypeError`` for a non-``str`` (a number or ``None`` must be written by its own emitter).
    """
    if not isinstance(value, str):
        raise TypeError(f"py_str takes a str, got {type(value).__name__}")
    return repr(value)


def py_comment(text: str) -> str:
    """``text`` as one line of a ``#`` comment: every character that is not printable (line breaks, tabs,
    NUL, the Unicode line and paragraph separators, other control or format characters) becomes a space."""
    return "".join(c if c.isprintable() else " " for c in str(text))


def py_doc(text: str) -> str:
    """``text`` as one line inside a triple-double-quoted docstring: :func:`py_comment`'s line with ``\\``
    doubled and ``"`` written ``\\"`` (it can neither end the docstring nor form an escape sequence)."""
    return py_comment(text).replace("\\", "\\\\").replace('"', '\\"')


def py_ident(name: str, *, prefix: str = "v_", reserved: frozenset[str] | set[str] = frozenset()) -> str:
    """A Python name for ``name``: ``name`` itself when it is an ASCII identifier that is no keyword (soft
    keywords included), builtin, dunder or reserved name; else ``prefix`` + ``name`` with every character other
    than ASCII letters, digits and ``_`` replaced by ``_``."""
    ok = (name.isascii() and name.isidentifier() and not keyword.iskeyword(name) and not keyword.issoftkeyword(name)
          and name not in _BUILTINS and name not in reserved and not name.startswith("__"))
    if ok:
        return name
    out = prefix + re.sub(r"[^A-Za-z0-9_]", "_", name)
    return out if out.isidentifier() and not keyword.iskeyword(out) and out not in reserved else prefix + "_"
