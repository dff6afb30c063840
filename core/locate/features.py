"""Pre-computed, normalised features of elements, shared by all levels.

Normalising strings is the expensive part of matching many candidates, so
it is done once per element; a pool of candidates (:class:`CandidatePool`)
also holds column lists ready for rapidfuzz.  Pools are cached by the
identity of the candidate objects, so resolving several targets against one
observation prepares the candidates once.
"""
from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from core.domain import Anchor, BBox, Candidate, ElementDescriptor

from .roles import effective_role, role_family
from .textsim import core_label, label_key, normalize, text_similarity, tokens

__all__ = [
    "Features", "CandidatePool", "features_of", "pool_of", "xpath_steps", "strip_indexes", "LANDMARKS",
    "same_context", "CONTEXT_MIN_SIMILARITY",
]

#: Two known containers (dialog / form titles) count as the same context
#: from this text similarity on ("Export" vs "Export options" yes, "Confirm
#: export" vs "Delete account" no).
CONTEXT_MIN_SIMILARITY = 0.5

#: Tags that name a region of the page; the set of them above an element
#: (from its XPath) says where it lives (header vs footer...).
LANDMARKS = frozenset({
    "header", "nav", "main", "footer", "aside", "form", "dialog", "table", "section", "article",
})

_INDEX_ONE = re.compile(r"\[1\]")
_XPATH_STEP = re.compile(r"([^/\[]+)(?:\[(\d+)\])?")


def strip_indexes(xpath: str) -> str:
    """The XPath without ``[1]`` indexes (Similo's "almost identical")."""
    return _INDEX_ONE.sub("", xpath)


def xpath_steps(path: str) -> tuple[tuple[str, int], ...]:
    """``/html[1]/body[1]/div[2]`` -> ``(("html", 1), ("body", 1), ("div", 2))``.

    Also accepts CSS paths (``html > body > div:nth-child(2)``) by splitting on
    ``>``; their index is taken from ``nth-child``/``nth-of-type``.
    """
    if not path:
        return ()
    if ">" in path and "/" not in path:
        out = []
        for part in path.split(">"):
            part = part.strip()
            m = re.search(r":nth-(?:child|of-type)\((\d+)\)", part)
            tag = re.split(r"[:.#\[]", part, maxsplit=1)[0].lower() or part.lower()
            out.append((tag, int(m.group(1)) if m else 1))
        return tuple(out)
    out2 = []
    for part in path.split("/"):
        if not part:
            continue
        m = _XPATH_STEP.fullmatch(part)
        if m:
            out2.append((m.group(1).lower(), int(m.group(2) or 1)))
        else:
            out2.append((part.lower(), 1))
    return tuple(out2)


@dataclass(frozen=True, slots=True)
class Features:
    """Normalised view of one element.

    Text fields hold :func:`~core.locate.textsim.normalize` output; ``*_core``
    the label without decorations.  Geometry is in CSS px.
    """

    tag: str
    role: str
    family: str
    label: str
    label_core: str
    label_key: str
    name: str
    text: str
    label_field: str
    placeholder: str
    alt: str
    title: str
    id: str
    id_core: str
    name_attr: str
    test_id: str
    type: str
    classes: frozenset[str]
    href: str
    xpath: str
    xpath_loose: str
    xpath_steps: tuple[tuple[str, int], ...]
    landmarks: frozenset[str]
    css_path: str
    neighbours: str
    neighbour_tokens: frozenset[str]
    container: str
    frame: str
    bbox: BBox | None
    raw_label: str
    anchor: Anchor | None = None


_DIGITS = re.compile(r"\d+")


def _href_key(href: str) -> str:
    h = href.strip().lower()
    h = re.sub(r"^[a-z][a-z0-9+.-]*://", "", h)
    h = re.sub(r"^www\.", "", h)
    return h.rstrip("/")


def features_of(d: ElementDescriptor) -> Features:
    """Compute the :class:`Features` of a descriptor."""
    role = effective_role(d.role, d.tag, d.type)
    steps = xpath_steps(d.xpath.strip() or d.css_path.strip())
    raw_label = d.label_text
    id_norm = d.id.strip()
    return Features(
        tag=d.tag.lower().strip(),
        role=role,
        family=role_family(role),
        label=normalize(raw_label),
        label_core=core_label(raw_label),
        label_key=label_key(raw_label),
        name=normalize(d.name),
        text=normalize(d.text),
        label_field=normalize(d.label),
        placeholder=normalize(d.placeholder),
        alt=normalize(d.alt),
        title=normalize(d.title),
        id=id_norm,
        id_core=_DIGITS.sub("#", id_norm.lower()),
        name_attr=d.name_attr.strip(),
        test_id=d.test_id.strip(),
        type=d.type.lower().strip(),
        classes=frozenset(c for c in d.classes if c),
        href=_href_key(d.href),
        xpath=d.xpath.strip(),
        xpath_loose=strip_indexes(d.xpath.strip()),
        xpath_steps=steps,
        landmarks=frozenset(tag for tag, _ in steps[:-1] if tag in LANDMARKS),
        css_path=d.css_path.strip(),
        neighbours=normalize(" ".join(d.neighbours)),
        neighbour_tokens=tokens(" ".join(d.neighbours)),
        container=normalize(d.container),
        frame=d.frame,
        bbox=d.bbox,
        raw_label=raw_label,
        anchor=d.anchor,
    )


def same_context(t: Features, c: Features) -> bool:
    """Same frame, and a compatible container when both are known.

    EXACT and FUZZY_TEXT never match across frames or dialogs: an "OK" in
    the "Delete account" dialog is not the "OK" of "Confirm export".
    """
    if t.frame != c.frame:
        return False
    if t.container and c.container:
        return text_similarity(t.container, c.container) >= CONTEXT_MIN_SIMILARITY
    return True


@dataclass(frozen=True, slots=True)
class CandidatePool:
    """Candidates with their features and column lists for vectorised scoring."""

    candidates: tuple[Candidate, ...]
    features: tuple[Features, ...]
    labels: list[str]
    label_cores: list[str]
    label_keys: list[str]
    visible: tuple[bool, ...]
    _columns: dict = field(default_factory=dict, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.candidates)

    def parents(self) -> list[int]:
        """Index of each candidate's nearest ancestor candidate (by XPath), -1 if none."""
        col = self._columns.get("__parents__")
        if col is None:
            index = {f.xpath: i for i, f in enumerate(self.features) if f.xpath}
            col = []
            for f in self.features:
                parent = -1
                path = f.xpath
                while path:
                    cut = path.rfind("/")
                    if cut <= 0:
                        break
                    path = path[:cut]
                    j = index.get(path)
                    if j is not None:
                        parent = j
                        break
                col.append(parent)
            self._columns["__parents__"] = col
        return col

    def boxes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(cx, cy, width, height, known)`` arrays of the candidates' boxes, CSS px."""
        arr = self._columns.get("__boxes__")
        if arr is None:
            n = len(self.features)
            cx, cy, w, h = (np.zeros(n) for _ in range(4))
            known = np.zeros(n, dtype=bool)
            for i, f in enumerate(self.features):
                b = f.bbox
                if b is not None:
                    cx[i], cy[i] = b.center
                    w[i], h[i] = max(b.width, 0.0), max(b.height, 0.0)
                    known[i] = True
            arr = self._columns["__boxes__"] = (cx, cy, w, h, known)
        return arr

    def by_label(self) -> dict[str, list[int]]:
        """Normalised label -> indices of the candidates carrying it."""
        idx = self._columns.get("__by_label__")
        if idx is None:
            idx = {}
            for i, lab in enumerate(self.labels):
                idx.setdefault(lab, []).append(i)
            self._columns["__by_label__"] = idx
        return idx

    def column(self, name: str) -> list:
        """``[getattr(f, name) for f in features]``, computed once."""
        col = self._columns.get(name)
        if col is None:
            col = self._columns[name] = [getattr(f, name) for f in self.features]
        return col


_POOL_CACHE: "OrderedDict[tuple[int, ...], CandidatePool]" = OrderedDict()
_POOL_CACHE_SIZE = 8
_POOL_LOCK = threading.Lock()


def pool_of(candidates: Sequence[Candidate]) -> CandidatePool:
    """Prepare ``candidates`` (cached by the identity of the candidate objects).

    The cache keeps a reference to the candidates, so an id cannot be reused
    while its entry lives; the newest 8 pools are kept.
    """
    key = tuple(id(c) for c in candidates)
    with _POOL_LOCK:
        pool = _POOL_CACHE.get(key)
        if pool is not None and all(a is b for a, b in zip(pool.candidates, candidates, strict=True)):
            _POOL_CACHE.move_to_end(key)
            return pool
    cands = tuple(candidates)
    feats = tuple(features_of(c.descriptor) for c in cands)
    pool = CandidatePool(
        candidates=cands,
        features=feats,
        labels=[f.label for f in feats],
        label_cores=[f.label_core for f in feats],
        label_keys=[f.label_key for f in feats],
        visible=tuple(bool(c.visible) for c in cands),
    )
    with _POOL_LOCK:
        _POOL_CACHE[key] = pool
        while len(_POOL_CACHE) > _POOL_CACHE_SIZE:
            _POOL_CACHE.popitem(last=False)
    return pool
