"""Engine text as a person reads it, wherever it reaches the studio (event log, details panels).

The engine's reasons and errors are written for its own logs: they quote
element refs ("button 'Save' (0:7)"), the design's mechanism ids (R1, S5,
P11, K2), snake_case names of verdicts and changes ("changed_unexpectedly")
and now and then a Python repr (``Verdict(kind='as_expected', ...)``,
``{'role': 'button'}``, ``b'\\x89PNG...'``, ``<Foo object at 0x7f...>``).
:func:`plain_words` takes those out and leaves the rest as it was; text in
quotes (a label read on the page, a value typed) is left alone.
"""
from __future__ import annotations

import re

__all__ = ["plain_words", "strategy_short", "STRATEGY_SHORT"]

_QUOTED = re.compile(r"('[^'\n]*'|\"[^\"\n]*\")")
_BYTES = re.compile(r"\bb(?:'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")")
_OBJECT = re.compile(r"<([\w.]+) object at 0x[0-9a-fA-F]+>")
_REF = re.compile(r"\s*\((?:ref\s*)?\d+:\d+\)|\s*\bref[ =]\d+:\d+\b")
_IDS = r"[RSPK]\d{1,2}"
_ID_GROUP = re.compile(rf"\s*\((?:{_IDS})(?:\s*(?:[/,;]|and)\s*{_IDS})*(?:[ ,;][^()]*)?\)")
_ID_LEAD = re.compile(rf"\b{_IDS}(?:/{_IDS})*(?::\s*|\s+)(?=[a-z])")
_ID = re.compile(rf"\s*\b{_IDS}\b(?!['\"])")
_CALL = re.compile(r"\b([A-Z][A-Za-z]+)\((?=\w+=)")
_KWARG = re.compile(r"\b([a-z][a-z0-9_]*)=")
_DICT_KEY = re.compile(r"[{,]\s*'([a-z][a-z0-9_]*)':\s*")
_SNAKE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
_SPACES = re.compile(r"[ \t]{2,}")


def _camel_words(name: str) -> str:
    return _CAMEL.sub(" ", name).lower()


def _outside_quotes(text: str) -> str:
    text = _REF.sub("", text)
    text = _ID_GROUP.sub("", text)
    text = _ID_LEAD.sub("", text)
    text = _ID.sub("", text)
    text = _SNAKE.sub(lambda m: m.group(0).replace("_", " "), text)
    return text


def _quoted(part: str) -> str:
    """A quoted name of the engine's (``'as_expected'``) in words; any other quoted text as it is."""
    inner = part[1:-1]
    return inner.replace("_", " ") if _SNAKE.fullmatch(inner) else part


def plain_words(text: object) -> str:
    """``text`` without refs, mechanism ids, snake_case names, reprs and bytes ("" for None or bytes).

    >>> plain_words("button 'Save' (0:7) changed_unexpectedly (S5)")
    "button 'Save' changed unexpectedly"
    """
    if text is None or isinstance(text, (bytes, bytearray, memoryview)):
        return ""
    s = str(text)
    s = _BYTES.sub("", s)
    s = _OBJECT.sub(lambda m: _camel_words(m.group(1).rsplit(".", 1)[-1]), s)
    s = _DICT_KEY.sub(lambda m: m.group(0)[0] + " " + m.group(1) + " ", s)
    s = _CALL.sub(lambda m: _camel_words(m.group(1)) + " (", s)
    s = _KWARG.sub(lambda m: m.group(1) + " ", s)
    parts = _QUOTED.split(s)
    s = "".join((_quoted(p) if i % 2 else _outside_quotes(p)) for i, p in enumerate(parts))
    s = s.replace("{ ", "").replace("{", "").replace("}", "").replace("( ", "(").replace("()", "")
    s = _SPACES.sub(" ", s)
    s = re.sub(r"\s+([,.;:)])", r"\1", s)
    return s.strip()


#: The locator's levels in a few words, for a table column (the details say more: studio.step_record.STRATEGY_WORDS).
STRATEGY_SHORT = {
    "exact": "as recorded",
    "fuzzy_text": "similar text",
    "semantic": "by meaning",
    "relative": "by its neighbour",
    "visual": "by its look",
    "pending_heal": "heal to review",
    "chosen": "chosen by you",
    "picked": "picked by you",
    "takeover": "by hand",
    "abstained": "not found",
}


def strategy_short(strategy: str) -> str:
    """A resolution's level in a few words (``"fuzzy_text"`` -> ``"similar text"``); "" for no strategy."""
    if not strategy:
        return ""
    return STRATEGY_SHORT.get(strategy, strategy.replace("_", " "))
