"""Change detection (R1): screen fingerprints and their comparison with a baseline.

Pure functions, tested without a browser (architecture rule 3).

What the fingerprint holds (R1):

* **perceptual hash** - imagehash's 64-bit ``phash`` of the screenshot in
  grey, with the boxes of value-bearing controls (text fields, selects,
  comboboxes) painted a flat grey first: a typed value is data, not UI.  It
  is insensitive to brightness and to 1-2 px shifts (it works on a 32 x 32
  thumbnail's low frequencies);
* **key elements** - position and text of the elements a step may act on or
  read its place from: every candidate with a non-empty accessible name
  (buttons, links, labelled fields), the page's headings (h1-h3, ``role=heading``)
  and its landmarks (main, nav, header, footer, aside, search, named forms
  and regions).  Data rows (anything inside a ``<tbody>``, rows and cells) are
  left out: a list that gained a row is the same screen, not a changed one;
  at most :data:`MAX_KEY_ELEMENTS`, in document order;
* **layout signature** - SHA1 of the serialized control tree: role, tag,
  frame and (normalized) dialog/form title of every candidate, then every
  heading level and landmark role, in document order, data rows left out and
  runs of identical entries collapsed to one.

Screen identity (:func:`screen_key`): the URL path with numbers and ids
replaced by ``{n}`` / ``{id}`` (host, port, query and fragment dropped), the
title, the main heading and the top dialog, volatile text normalized.
"""
from __future__ import annotations

import hashlib
import io
import math
import re
from typing import Any, Iterable, Mapping, Sequence
from urllib.parse import urlsplit

from core.domain import Candidate, Observation
from core.domain.change import (
    ChangeReport, ChangeThresholds, ElementChange, KeyElement, ScreenFingerprint,
)

from .normalize import normalize_text

__all__ = [
    "MAX_KEY_ELEMENTS", "DEFAULT_THRESHOLDS", "path_pattern", "screen_key", "screen_phash", "phash_similarity",
    "key_elements", "layout_signature", "fingerprint", "compare", "phash",
]

#: At most this many key elements per screen (bounds the store row and the comparison on huge pages).
MAX_KEY_ELEMENTS = 120
#: The R1 thresholds (similarity 0.95, shift 20 px).
DEFAULT_THRESHOLDS = ChangeThresholds()
#: Grey level (0..255) painted over value-bearing controls before hashing.
_MASK_GREY = 128
#: The screenshot is shrunk this many times before hashing (1280 x 800 -> 320 x 200; phash then takes 32 x 32).
_SHRINK = 4
_VALUE_ROLES = frozenset({"textbox", "searchbox", "combobox", "spinbutton", "listbox", "slider"})
_DATA_ROLES = frozenset({"row", "cell", "gridcell", "rowheader"})
_NUMBER = re.compile(r"^\d+$")
_ID_LIKE = re.compile(r"^(?=.*\d)[0-9a-fA-F-]{8,}$|^[A-Za-z0-9_-]{20,}$")


def path_pattern(url: str) -> str:
    """The URL's path as a pattern: ``http://h:81/requests/42/edit?x=1`` -> ``/requests/{n}/edit``.

    Numeric segments become ``{n}``, id-like ones (UUIDs, hex or long
    tokens with a digit) ``{id}``; host, port, query and fragment are dropped
    (a loopback port changes every run).
    """
    path = urlsplit(url).path or "/"
    out = []
    for seg in path.split("/"):
        if _NUMBER.match(seg):
            out.append("{n}")
        elif _ID_LIKE.match(seg):
            out.append("{id}")
        else:
            out.append(seg)
    return "/".join(out) or "/"


def screen_key(url: str, title: str, heading: str = "", dialog: str = "") -> str:
    """``"<path pattern> | <title> | <main heading> | <top dialog>"``, volatile text normalized (80 chars each)."""
    parts = [path_pattern(url)] + [normalize_text(p)[:80] for p in (title, heading, dialog)]
    return " | ".join(parts)


def _is_data_row(c: Candidate) -> bool:
    d = c.descriptor
    return "/tbody" in d.xpath or d.role in _DATA_ROLES


def _value_bearing(c: Candidate) -> bool:
    d = c.descriptor
    return c.editable or d.tag in ("select", "textarea") or d.role in _VALUE_ROLES


def screen_phash(png: bytes, mask_css_boxes: Iterable[tuple[float, float, float, float]] = (), *,
                 device_pixel_ratio: float = 1.0) -> str:
    """64-bit perceptual hash (imagehash ``phash``) of a PNG, as 16 hex chars.

    The PNG is decoded in grey and shrunk 4 times (box average) first - the
    hash only looks at a 32 x 32 thumbnail, and shrinking with a box filter
    before imagehash's Lanczos resize cuts the hashing time by more than
    half - then the mask boxes are painted flat grey and :func:`phash` hashes it.

    Parameters
    ----------
    png : bytes
        The screenshot (device px).
    mask_css_boxes : iterable of (x, y, w, h)
        Boxes in CSS px (viewport coordinates) painted flat grey first.
    device_pixel_ratio : float
        Device px per CSS px of the screenshot.

    Returns
    -------
    str
        ``""`` for an empty ``png``.
    """
    if not png:
        return ""
    from PIL import Image, ImageDraw

    with Image.open(io.BytesIO(png)) as src:
        grey = src.convert("L")
    small = grey.reduce(_SHRINK) if min(grey.size) >= 32 * _SHRINK else grey
    r = device_pixel_ratio * small.size[0] / grey.size[0]
    draw = ImageDraw.Draw(small)
    for x, y, w, h in mask_css_boxes:
        if w > 0 and h > 0:
            draw.rectangle((math.floor(x * r), math.floor(y * r), math.ceil((x + w) * r), math.ceil((y + h) * r)),
                           fill=_MASK_GREY)
    return str(phash(small))


def _dct_matrix(n: int) -> Any:
    """The unnormalized DCT-II matrix (scipy.fftpack's ``dct`` type 2, ``norm=None``): ``2 cos(pi k (2i+1) / 2n)``."""
    import numpy as np

    k = np.arange(n)[:, None]
    i = np.arange(n)[None, :]
    return 2.0 * np.cos(np.pi * k * (2 * i + 1) / (2 * n))


_DCT: dict[int, Any] = {}


def phash(image: Any, hash_size: int = 8, highfreq_factor: int = 4) -> Any:
    """imagehash's ``phash`` with the DCT done by a matrix product (no SciPy import: 0.3-1 s per process saved).

    The same steps as :func:`imagehash.phash` - grey, Lanczos resize to
    ``hash_size * highfreq_factor`` squared, 2-D DCT-II, the top-left
    ``hash_size`` squared block compared with its median - and the same
    :class:`imagehash.ImageHash` result (tests/core/state/test_change.py
    checks the bits against imagehash's own).
    """
    import imagehash
    import numpy as np
    from PIL import Image

    size = hash_size * highfreq_factor
    pixels = np.asarray(image.convert("L").resize((size, size), Image.Resampling.LANCZOS), dtype=np.float64)
    m = _DCT.get(size)
    if m is None:
        m = _DCT[size] = _dct_matrix(size)
    low = (m @ pixels @ m.T)[:hash_size, :hash_size]
    return imagehash.ImageHash(low > np.median(low))


def phash_similarity(a: str, b: str) -> float | None:
    """1 - Hamming distance / bits of two hex hashes of the same length; None when either is empty."""
    if not a or not b or len(a) != len(b):
        return None
    bits = len(a) * 4
    return 1.0 - bin(int(a, 16) ^ int(b, 16)).count("1") / bits


def _identity(d: Any) -> str:
    strong = (f"#t:{d.test_id}" if d.test_id else f"#{d.id}" if d.id else f"@{d.name_attr}" if d.name_attr
              else d.css_path)
    return f"{d.frame}>{strong}" if d.frame else strong


def key_elements(candidates: Sequence[Candidate], *, scroll: tuple[float, float] = (0.0, 0.0),
                 headings: Sequence[Mapping[str, Any]] = (), landmarks: Sequence[Mapping[str, Any]] = ()
                 ) -> tuple[KeyElement, ...]:
    """The key elements of a screen, page coordinates (CSS px).

    Parameters
    ----------
    candidates : Sequence[Candidate]
        The observation's candidates (boxes in viewport CSS px).
    scroll : (float, float)
        The main frame's scroll offset, CSS px, added to candidate boxes.
    headings, landmarks : Sequence[Mapping]
        ``{"role", "text", "path", "box": [x, y, w, h]}`` in page CSS px, as the
        engine's page facts report them.
    """
    sx, sy = scroll
    out: list[KeyElement] = []
    for c in candidates:
        d = c.descriptor
        # a value-bearing control is named by its label, never by the value it shows
        label = (d.name or d.label or d.placeholder) if _value_bearing(c) else d.label_text
        name = normalize_text(label)[:80]
        if not name or d.bbox is None or _is_data_row(c):
            continue
        b = d.bbox
        out.append(KeyElement(f"{d.role or d.tag}|{_identity(d)}", d.role or d.tag, name, b.x + sx, b.y + sy,
                              b.width, b.height))
    for group in (headings, landmarks):
        for e in group:
            box = e.get("box") or (0, 0, 0, 0)
            role = str(e.get("role", ""))
            out.append(KeyElement(f"{role}|{e.get('path', '')}", role, normalize_text(str(e.get("text", "")))[:80],
                                  *(float(v) for v in box)))
    return tuple(out[:MAX_KEY_ELEMENTS])


def layout_signature(candidates: Sequence[Candidate], *, headings: Sequence[Mapping[str, Any]] = (),
                     landmarks: Sequence[Mapping[str, Any]] = ()) -> str:
    """SHA1 of the serialized control tree (see the module docstring)."""
    tokens: list[str] = []
    for c in candidates:
        if _is_data_row(c):
            continue
        d = c.descriptor
        tokens.append(f"c:{d.role}/{d.tag}/{d.frame}/{normalize_text(d.container).lower()[:40]}")
    tokens += [f"h:{e.get('level', '')}" for e in headings]
    tokens += [f"l:{e.get('role', '')}" for e in landmarks]
    h = hashlib.sha1()
    last = None
    for t in tokens:
        if t == last:
            continue  # a run of identical entries (list items, repeated controls) counts once
        last = t
        h.update(t.encode("utf-8", "replace"))
        h.update(b"\x1f")
    return h.hexdigest()


def fingerprint(obs: Observation, facts: Mapping[str, Any] | None = None) -> ScreenFingerprint:
    """The R1 fingerprint of an observation.

    Parameters
    ----------
    obs : Observation
        The observation (its screenshot may be empty: the hash is then ``""``).
    facts : Mapping | None
        ``{"heading": str, "headings": [...], "landmarks": [...]}`` read from
        the page with the observation (see :func:`key_elements`); None: the
        candidates alone.
    """
    facts = facts or {}
    headings = list(facts.get("headings", ()))
    landmarks = list(facts.get("landmarks", ()))
    dialog = obs.modal_titles[-1] if obs.modal_titles else ""
    key = screen_key(obs.url, obs.title, str(facts.get("heading", "")), dialog)
    masks = [(b.x, b.y, b.width, b.height) for c in obs.candidates
             if _value_bearing(c) and (b := c.descriptor.bbox) is not None]
    return ScreenFingerprint(
        screen_key=key,
        phash=screen_phash(obs.screenshot_png, masks, device_pixel_ratio=obs.device_pixel_ratio),
        layout=layout_signature(obs.candidates, headings=headings, landmarks=landmarks),
        elements=key_elements(obs.candidates, scroll=obs.scroll, headings=headings, landmarks=landmarks),
    )


def _shift(a: KeyElement, b: KeyElement) -> tuple[float, float, float]:
    (ax, ay), (bx, by) = a.center, b.center
    return bx - ax, by - ay, math.hypot(bx - ax, by - ay)


def _by(elements: Iterable[tuple[int, KeyElement]], key: Any) -> dict[Any, list[int]]:
    out: dict[Any, list[int]] = {}
    for i, e in elements:
        out.setdefault(key(e), []).append(i)
    return out


def _element_changes(base: Sequence[KeyElement], cur: Sequence[KeyElement], max_shift: float
                     ) -> tuple[list[ElementChange], float]:
    """Pair baseline and current elements; return the changes and the largest shift of a pair."""
    changes: list[ElementChange] = []
    drift = 0.0
    free_b, free_c = set(range(len(base))), set(range(len(cur)))
    # 1. same role and text (k-th occurrence with k-th occurrence): moved or not
    # 2. then same identity (strong id / CSS path) and role: the text changed
    for key in (lambda e: (e.role, e.text), lambda e: (e.role, e.key)):
        cb = _by(((i, cur[i]) for i in sorted(free_c)), key)
        for i in sorted(free_b):
            js = cb.get(key(base[i]))
            if not js:
                continue
            j = js.pop(0)
            free_b.discard(i)
            free_c.discard(j)
            b, c = base[i], cur[j]
            dx, dy, dist = _shift(b, c)
            drift = max(drift, dist)
            if b.text != c.text:
                changes.append(ElementChange("text_changed", b.key, b.role, b.text, c.text, dx, dy, dist))
            elif dist > max_shift:
                changes.append(ElementChange("moved", b.key, b.role, b.text, c.text, dx, dy, dist))
    changes += [ElementChange("missing", base[i].key, base[i].role, before=base[i].text) for i in sorted(free_b)]
    changes += [ElementChange("added", cur[j].key, cur[j].role, after=cur[j].text) for j in sorted(free_c)]
    return changes, drift


def compare(baseline: ScreenFingerprint | None, current: ScreenFingerprint, *,
            thresholds: ChangeThresholds = DEFAULT_THRESHOLDS) -> ChangeReport:
    """Compare a screen with its baseline (R1).

    "changed" when the screen key differs, the perceptual-hash similarity is
    below ``thresholds.min_similarity`` (0.95), a key element is missing or
    added, its text changed, it moved more than ``thresholds.max_shift_px``
    (20 px, centre distance), or the layout signature differs; "new" without
    a baseline; else "unchanged".
    """
    if baseline is None:
        return ChangeReport(current.screen_key, "new")
    reasons: list[str] = []
    changes: list[ElementChange] = []
    if baseline.screen_key != current.screen_key:
        reasons.append("another screen than the baseline's")
        changes.append(ElementChange("screen", current.screen_key, before=baseline.screen_key,
                                     after=current.screen_key))
    similarity = phash_similarity(baseline.phash, current.phash)
    if similarity is not None and similarity < thresholds.min_similarity:
        reasons.append(f"screenshot similarity {similarity:.3f} < {thresholds.min_similarity:g}")
    layout_changed = baseline.layout != current.layout
    if layout_changed:
        reasons.append("layout signature changed")
    elem, drift = _element_changes(baseline.elements, current.elements, thresholds.max_shift_px)
    if elem:
        counts: dict[str, int] = {}
        for c in elem:
            counts[c.kind] = counts.get(c.kind, 0) + 1
        reasons.append("key elements: " + ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in counts.items()))
    changes += elem
    return ChangeReport(current.screen_key, "changed" if reasons else "unchanged", similarity, layout_changed,
                        tuple(changes), drift, tuple(reasons))
