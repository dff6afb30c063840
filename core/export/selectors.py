"""Playwright selector strings as public locator code: no ``internal:`` selector reaches an exported test.

A flow imported from a codegen script (:mod:`core.record.codegen`) keeps the
selector strings Playwright's own locators produce, some written in
Playwright's private ``internal:`` engines (``internal:role=button[name="Sign
in"i]``).  Those work with ``page.locator()`` today but are no public API: an
exported test must say ``page.get_by_role("button", name="Sign in")``.  This
module turns a selector chain back into the locator calls that make it
(the inverse of codegen's table)::

    internal:role=button[name="Sign in"i]       page.get_by_role("button", name="Sign in")
    internal:role=button[name="Sign in"s]       page.get_by_role("button", name="Sign in", exact=True)
    internal:label="User name"i                 page.get_by_label("User name")
    internal:text="Hello"s                      page.get_by_text("Hello", exact=True)
    internal:attr=[placeholder="Search"i]       page.get_by_placeholder("Search")   (title, alt alike)
    internal:testid=[data-testid="save"s]       page.get_by_test_id("save")
    A >> B                                      <A>.locator("B") / <A>.get_by_...(...)
    ... >> nth=0 / nth=-1 / nth=2               .first / .last / .nth(2)
    ... >> internal:has-text="x"i               .filter(has_text="x")        (has-not-text alike)
    ... >> internal:has="<selector>"            .filter(has=<locator>)       (has-not alike)
    ... >> internal:and="<selector>"            .and_(<locator>)             (or alike)
    ... >> visible=true                         .filter(visible=True)
    iframe >> internal:control=enter-frame >> X page.locator("iframe").content_frame.<X>

``/pattern/flags`` values become ``re.compile(pattern, flags)``.  Any other
part (CSS, ``xpath=``, ``text=``, ``role=``, ``id=``: Playwright's public
engines) stays a ``.locator("...")``.  An ``internal:`` part this table does
not know raises :class:`SelectorError`: the export refuses rather than write
a private selector.

Pure; strings are emitted by the caller's ``literal`` function (a Python
expression of a text, with the flow's ``{param}`` placeholders as variables).
"""
from __future__ import annotations

import json
import re
from typing import Callable

__all__ = ["SelectorError", "has_internal", "locator_code", "split_chain"]

Literal = Callable[[str], str]

_INTERNAL = re.compile(r"(^|>>)\s*internal:")
_FLAGS = {"i": "re.IGNORECASE", "s": "re.DOTALL", "m": "re.MULTILINE"}
#: ``internal:attr`` attributes -> the getter that writes them.
_ATTR_GETTERS = {"placeholder": "get_by_placeholder", "title": "get_by_title", "alt": "get_by_alt_text"}
#: ``internal:role`` properties with a boolean / integer value -> ``get_by_role`` keyword.
_ROLE_FLAGS = {"checked": "checked", "disabled": "disabled", "expanded": "expanded", "include-hidden": "include_hidden",
               "level": "level", "pressed": "pressed", "selected": "selected"}


class SelectorError(ValueError):
    """A selector part has no public locator form; the message names the part."""


def has_internal(selector: str) -> bool:
    """True when ``selector`` uses one of Playwright's private ``internal:`` engines."""
    return bool(_INTERNAL.search(selector))


def split_chain(selector: str) -> list[str]:
    """The parts of a ``>>`` chain, stripped; a ``>>`` inside quotes or a ``/regex/`` is not a separator.

    ``'a >> internal:text="x >> y"i'`` -> ``['a', 'internal:text="x >> y"i']``.
    """
    parts: list[str] = []
    buf: list[str] = []
    quote = ""
    i, n = 0, len(selector)
    while i < n:
        ch = selector[i]
        if quote:
            buf.append(ch)
            if ch == "\\" and i + 1 < n:
                buf.append(selector[i + 1])
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "\"'`":
            quote = ch
            buf.append(ch)
        elif selector.startswith(">>", i):
            parts.append("".join(buf).strip())
            buf = []
            i += 2
            continue
        else:
            buf.append(ch)
        i += 1
    parts.append("".join(buf).strip())
    return [p for p in parts if p]


def _text_value(raw: str, literal: Literal) -> tuple[str, bool]:
    """(Python expression, exact) of a text-selector value: ``"x"i`` / ``"x"s`` (JSON) or ``/re/flags``."""
    raw = raw.strip()
    if raw.startswith("/"):
        return _regex(raw), False
    exact = raw.endswith('"s')
    body = raw[:-1] if raw[-1:] in ("i", "s") and raw[-2:-1] == '"' else raw
    try:
        text = json.loads(body)
    except ValueError:
        raise SelectorError(f"cannot read the text {raw!r}") from None
    if not isinstance(text, str):
        raise SelectorError(f"cannot read the text {raw!r}")
    return literal(text), exact


def _regex(raw: str) -> str:
    end = raw.rfind("/")
    if end <= 0:
        raise SelectorError(f"cannot read the pattern {raw!r}")
    pattern = raw[1:end].replace("\\>\\>", ">>")
    flags = [_FLAGS[f] for f in raw[end + 1:] if f in _FLAGS]
    return f"re.compile({pattern!r}{', ' + ' | '.join(flags) if flags else ''})"


def _attr_value(raw: str, literal: Literal) -> tuple[str, bool]:
    """(Python expression, exact) of an attribute-selector value: ``"x"i`` / ``"x"s`` or ``/re/flags``."""
    raw = raw.strip()
    if raw.startswith("/"):
        return _regex(raw), False
    m = re.fullmatch(r'"((?:[^"\\]|\\.)*)"([is]?)', raw, re.S)
    if not m:
        raise SelectorError(f"cannot read the value {raw!r}")
    return literal(re.sub(r"\\(.)", r"\1", m.group(1))), m.group(2) == "s"


def _props(text: str) -> list[tuple[str, str]]:
    """``[name="x"i][level=2]`` -> ``[("name", '"x"i'), ("level", "2")]`` (quotes and ``]`` inside kept)."""
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(text):
        if text[i] != "[":
            raise SelectorError(f"cannot read the properties {text!r}")
        j, quote = i + 1, ""
        while j < len(text):
            ch = text[j]
            if quote:
                if ch == "\\":
                    j += 2
                    continue
                if ch == quote:
                    quote = ""
            elif ch in "\"'/" and text[j - 1] == "=":
                quote = ch
            elif ch == "]":
                break
            j += 1
        key, _, value = text[i + 1:j].partition("=")
        out.append((key.strip(), value.strip()))
        i = j + 1
    return out


def _exact(args: list[str], exact: bool) -> list[str]:
    return args + ["exact=True"] if exact else args


def _part(part: str, literal: Literal, root: str) -> tuple[str, bool]:
    """(call text to append, enters a frame) for one chain part; ``root`` is what the call hangs on."""
    engine, eq, value = part.partition("=")
    engine = engine.strip()
    if not eq or not engine.startswith("internal:") and engine not in ("nth", "visible"):
        return f".locator({literal(part)})", False
    if engine == "nth":
        idx = int(value.strip())
        return (".first" if idx == 0 else ".last" if idx == -1 else f".nth({idx})"), False
    if engine == "visible":
        return f".filter(visible={value.strip() == 'true'})", False
    kind = engine[len("internal:"):]
    if kind == "control" and value.strip() == "enter-frame":
        return ".content_frame", True
    if kind in ("text", "label"):
        expr, exact = _text_value(value, literal)
        return f".get_by_{kind}({', '.join(_exact([expr], exact))})", False
    if kind in ("has-text", "has-not-text"):
        expr, _ = _text_value(value, literal)
        return f".filter({kind.replace('-', '_')}={expr})", False
    if kind in ("has", "has-not", "and", "or"):
        try:
            inner = json.loads(value)
        except ValueError:
            raise SelectorError(f"cannot read {part!r}") from None
        code = locator_code(inner, literal, root=root)
        if kind in ("and", "or"):
            return f".{kind}_({code})", False
        return f".filter({kind.replace('-', '_')}={code})", False
    if kind == "role":
        m = re.match(r"([a-z]+)(.*)$", value.strip(), re.S)
        if not m:
            raise SelectorError(f"cannot read the role of {part!r}")
        args, exact = [repr(m.group(1))], False
        for key, val in _props(m.group(2)):
            if key in ("name", "description"):
                expr, ex = _attr_value(val, literal)
                args.append(f"{key}={expr}")
                exact = exact or (key == "name" and ex)
            elif key in _ROLE_FLAGS:
                args.append(f"{_ROLE_FLAGS[key]}={int(val) if val.isdigit() else val == 'true'}")
            else:
                raise SelectorError(f"the role property {key!r} of {part!r} has no get_by_role() form")
        return f".get_by_role({', '.join(_exact(args, exact))})", False
    if kind in ("attr", "testid"):
        props = _props(value.strip())
        if len(props) != 1:
            raise SelectorError(f"cannot read {part!r}")
        key, val = props[0]
        expr, exact = _attr_value(val, literal)
        if kind == "testid" and key == "data-testid":
            return f".get_by_test_id({expr})", False
        if kind == "attr" and key in _ATTR_GETTERS:
            return f".{_ATTR_GETTERS[key]}({', '.join(_exact([expr], exact))})", False
    raise SelectorError(f"the selector part {part!r} is Playwright-internal and has no public locator form")


def locator_code(selector: str, literal: Literal, *, root: str = "page") -> str:
    """Python code of the locator ``selector`` names, hung on ``root`` (``page.get_by_role(...)...``).

    Parameters
    ----------
    selector : str
        A Playwright selector, possibly a ``>>`` chain with ``internal:`` parts.
    literal : Callable[[str], str]
        Makes the Python expression of a text (the exporter's ``{param}``-aware quoting).

    Raises
    ------
    SelectorError
        A part is ``internal:`` and has no public form (the message names it).
    """
    code, frame = root, False
    for part in split_chain(selector) or [selector]:
        call, entered = _part(part, literal, root)
        code += call
        frame = entered
    if frame:
        raise SelectorError(f"{selector!r} ends in a frame, not an element")
    return code
