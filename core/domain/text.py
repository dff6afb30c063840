"""Text that is safe to print on a terminal: no escape sequences, no control characters.

Names and descriptions come from files a person may not have written (a
cloned project, an imported ``.side`` file, a shared skill file) and from
pages.  Printed raw, ``ESC [ 2 J`` clears the screen, ``ESC ] 8`` makes a
link that hides its target, and a bidirectional override turns text around.
:func:`printable` removes them; :func:`has_controls` tells whether a text has any.
This module imports nothing of the project (bottom layer).
"""
from __future__ import annotations

import re

__all__ = ["printable", "has_controls"]

#: ANSI / VT escape sequences: CSI (ESC [ ... final), OSC (ESC ] ... BEL or ESC \\), and two-character escapes.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]|\x9b[0-?]*[ -/]*[@-~]")
#: C0 controls (tab and newline included: a name is one line), DEL, C1 controls, bidirectional overrides and
#: isolates (U+202A-U+202E, U+2066-U+2069).
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` without terminal escape sequences and control characters; a tab or line break becomes a space."""
    text = _ESCAPES.sub("", str(text))
    return _CONTROLS.sub(lambda m: " " if m.group(0) in "\t\n\r" else "", text)


def has_controls(text: str) -> bool:
    """True when ``text`` holds an escape sequence or a control character (tab and line breaks included)."""
    return bool(_CONTROLS.search(str(text)))
