"""Text normalisation and label similarity used by every locator level.

All similarities are in 0..1.  Strings are normalised once per element
(:func:`normalize`, :func:`core_label`) and compared many at a time with
rapidfuzz's ``process.cdist``.
"""
from __future__ import annotations

import re
import unicodedata
from typing import Sequence

import numpy as np
from rapidfuzz import fuzz, process

__all__ = [
    "normalize", "core_label", "tokens", "containment", "text_similarity", "text_similarity_many", "label_key",
    "EQUAL_CORE_SCORE", "CASE_VARIANT_SCORE",
]

#: Score of two labels equal only after removing decorations ("Query" vs
#: "Query (Q)"): high, but below an untouched match so the latter wins.
EQUAL_CORE_SCORE = 0.95

#: Score of two labels equal only after case-folding and dropping
#: punctuation ("No" / "no", "ut." / "Ut"): such labels may name different
#: targets when both are on the page (failure kind 11), so this is no 1.00
#: match; it is one margin (0.1) below an untouched match, so the untouched
#: one wins and two variants of each other tie.
CASE_VARIANT_SCORE = 0.9

_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)
# Decorations UIs add to labels: shortcut hints "(Q)", "[Ctrl+E]", counters
# "(12)", ellipses, required-field stars, trailing colons and arrows.
_DECORATION = re.compile(
    r"""(
        \s*[\(\[]\s*(?:ctrl|alt|shift|cmd|⌘|⌥|⇧|\+|-|\s|\w){1,12}\s*[\)\]]   # (Q) [Ctrl+E] (12)
      | \s*(?:\.\.\.|…|\*|:|›|»|>|→|▾|▼)                                  # ... * : arrows
    )\s*$""",
    re.VERBOSE | re.IGNORECASE,
)
_LEADING = re.compile(r"^\s*(?:[\*›»>→•·]\s*)+")


def normalize(text: str) -> str:
    """Lower-case, NFKC, punctuation to spaces, whitespace collapsed."""
    if not text:
        return ""
    t = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_NON_WORD.sub(" ", t).split())


def label_key(text: str) -> str:
    """The label as shown: NFKC, whitespace collapsed, case and punctuation kept.

    Two labels are the same label only when their keys are equal; equal
    :func:`normalize` output with different keys is a case/punctuation
    variant (:data:`CASE_VARIANT_SCORE`).
    """
    if not text:
        return ""
    return " ".join(unicodedata.normalize("NFKC", text).split())


def core_label(text: str) -> str:
    """The label without decorations (shortcut hints, counters, ellipses...), normalised.

    ``"Query (Q)"`` -> ``"query"``, ``"Export report…"`` -> ``"export report"``,
    ``"Inbox (12)"`` -> ``"inbox"``.  Returns the normalised text unchanged
    when stripping would leave nothing.
    """
    if not text:
        return ""
    t = unicodedata.normalize("NFKC", text).strip()
    t = _LEADING.sub("", t)
    for _ in range(3):
        stripped = _DECORATION.sub("", t)
        if stripped == t or not stripped.strip():
            break
        t = stripped
    return normalize(t) or normalize(text)


def tokens(text: str) -> frozenset[str]:
    """Set of normalised words."""
    return frozenset(normalize(text).split())


def containment(short: str, long: str) -> float:
    """Score for a label that gained words at its start or end.

    ``0.6 + 0.4 * len(short) / len(long)`` when ``short`` occurs in ``long``
    on word boundaries, else 0: a small addition stays above the 0.8 fuzzy
    threshold, a short word inside a long sentence does not.
    """
    if not short or len(short) >= len(long):
        return 0.0
    if f" {short} " in f" {long} ":
        return 0.6 + 0.4 * len(short) / len(long)
    return 0.0


def text_similarity(a: str, b: str, a_core: str | None = None, b_core: str | None = None) -> float:
    """Similarity of two normalised labels, 0..1.

    1.0 when equal; :data:`EQUAL_CORE_SCORE` when equal without decorations;
    otherwise the best of the indel ratio, the word-order-insensitive ratio
    (x 0.95) and the containment score.  ``"export report"`` vs
    ``"save report"`` scores about 0.75, below the 0.8 threshold.
    """
    if not a or not b:
        return 0.0
    if a == b:
        return 1.0
    if a_core is None:
        a_core = a
    if b_core is None:
        b_core = b
    if a_core and a_core == b_core:
        return EQUAL_CORE_SCORE
    r = fuzz.ratio(a, b) / 100.0
    ts = 0.95 * fuzz.token_sort_ratio(a, b, processor=None) / 100.0
    c = containment(a, b) if len(a) < len(b) else containment(b, a)
    return max(r, ts, c)


def text_similarity_many(
    query: str, query_core: str, choices: Sequence[str], choice_cores: Sequence[str],
    query_key: str | None = None, choice_keys: Sequence[str] | None = None,
) -> np.ndarray:
    """:func:`text_similarity` of ``query`` against every choice, vectorised.

    When ``query_key`` and ``choice_keys`` (:func:`label_key`) are given, a
    choice equal to ``query`` only after normalising (case, punctuation)
    scores :data:`CASE_VARIANT_SCORE` instead of 1 (failure kind 11).

    Returns a float array of ``len(choices)``; empty strings score 0.
    """
    n = len(choices)
    if not query or n == 0:
        return np.zeros(n, dtype=np.float64)
    r = process.cdist([query], choices, scorer=fuzz.ratio, dtype=np.float32, workers=1)[0]
    ts = process.cdist([query], choices, scorer=fuzz.token_sort_ratio, dtype=np.float32, workers=1)[0]
    out = np.maximum(r.astype(np.float64) / 100.0, 0.95 * ts.astype(np.float64) / 100.0)
    padded_q = f" {query} "
    lq = len(query)
    for i, c in enumerate(choices):
        if not c:
            out[i] = 0.0
            continue
        if c == query:
            keyed = query_key is not None and choice_keys is not None
            out[i] = CASE_VARIANT_SCORE if keyed and choice_keys[i] != query_key else 1.0  # type: ignore[index]
            continue
        if query_core and choice_cores[i] == query_core:
            out[i] = max(out[i], EQUAL_CORE_SCORE)
            continue
        lc = len(c)
        if lq < lc:
            if padded_q in f" {c} ":
                out[i] = max(out[i], 0.6 + 0.4 * lq / lc)
        elif lc < lq and f" {c} " in padded_q:
            out[i] = max(out[i], 0.6 + 0.4 * lc / lq)
    return out
