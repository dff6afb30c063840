"""Normalization of volatile text before hashing (S2, P4).

UUIDs, timestamps, clock times, long numbers and random tokens are replaced
by placeholders so that a state signature does not change when only such
volatile text changes (P4: "normalize UUIDs, timestamps and random
tokens to placeholders").
"""
from __future__ import annotations

import re

__all__ = ["normalize_text"]

_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I), "<uuid>"),  # P4 regex
    (re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?\b"), "<timestamp>"),
    (re.compile(r"\b\d{1,2}:\d{2}(:\d{2})?(\s?[AaPp][Mm])?\b"), "<time>"),
    (re.compile(r"\b\d{10,13}\b"), "<epoch>"),
    (re.compile(r"\b(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{24,}\b"), "<token>"),
    (re.compile(r"\b[0-9a-f]{16,}\b", re.I), "<hex>"),
)
_WS = re.compile(r"\s+")


def normalize_text(text: str) -> str:
    """Return ``text`` with volatile parts replaced by placeholders and whitespace collapsed."""
    for pattern, repl in _RULES:
        text = pattern.sub(repl, text)
    return _WS.sub(" ", text).strip()
