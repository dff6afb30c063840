"""Light state signature (S2) and the P4 state hash.

Pure functions over the in-page observer's raw output, so they are tested
without a browser.
"""
from __future__ import annotations

import hashlib
import io
from typing import Any, Iterable, Mapping
from urllib.parse import urldefrag

from core.domain import StateSignature

from .normalize import normalize_text

__all__ = ["light_signature", "state_hash", "dhash64"]


def _sha1(parts: Iterable[str]) -> str:
    h = hashlib.sha1()
    for p in parts:
        h.update(p.encode("utf-8", "replace"))
        h.update(b"\x1f")
    return h.hexdigest()


def light_signature(raw: Mapping[str, Any]) -> StateSignature:
    """Compute the light signature of a page from the observer's raw output.

    Parameters
    ----------
    raw : Mapping
        ``{"url", "title", "items": [...], "text", "modals", "loading",
        "errors", "focus"}`` and optionally ``"extra_text"`` (the text of
        iframes and open shadow roots) as returned by the in-page ``collect()``; each
        item has ``tag``, ``role``, ``text``, ``name``, ``value``, ``checked``.

    Returns
    -------
    StateSignature
        Digests are SHA1 hex strings; volatile text is normalized first.
    """
    items = raw.get("items", ())
    url = urldefrag(str(raw.get("url", "")))[0]
    title = normalize_text(str(raw.get("title", "")))
    text = normalize_text(str(raw.get("text", "")))[:500]  # first 500 chars, P4
    elements = _sha1(
        f"{i.get('tag', '')}|{i.get('role', '')}|{normalize_text(str(i.get('text') or i.get('name') or ''))[:20]}"  # 20 chars, P4
        for i in items
    )
    values = _sha1(f"{i.get('value', '')}|{i.get('checked')}|{i.get('enabled')}" for i in items)
    modals = tuple(raw.get("modals", ()))
    loading = bool(raw.get("loading", False))
    errors = int(raw.get("errors", 0))
    focus = str(raw.get("focus", ""))
    text_digest = _sha1([text])
    # everything visible, for post-verification (S5): the whole main text, iframes, open shadow roots
    content_digest = _sha1([normalize_text(str(raw.get("text", ""))), normalize_text(str(raw.get("extra_text", "")))])
    digest = _sha1([url, title, str(len(items)), str(len(modals)), text_digest, elements, values, str(loading), str(errors)])
    return StateSignature(
        url=url, title=title, interactive_count=len(items), modal_count=len(modals),
        text_digest=text_digest, elements_digest=elements, values_digest=values,
        loading=loading, error_count=errors, focus=focus, digest=digest, content_digest=content_digest,
    )


def dhash64(png: bytes) -> str:
    """64-bit difference hash (9x8 grey thumbnail, P4) of a PNG, as 16 hex chars."""
    import imagehash
    from PIL import Image

    with Image.open(io.BytesIO(png)) as im:
        return str(imagehash.dhash(im, hash_size=8))


def state_hash(signature: StateSignature, *, screenshot_png: bytes = b"", dhash: str | None = None) -> str:
    """P4 state hash: SHA1 of elements digest + text digest + dHash of the screenshot.

    ``dhash``: the screenshot's :func:`dhash64` when the caller has it already (one PNG decode fewer, about
    20 ms for 1280x800 on the 2-core test machine); ``screenshot_png`` is then not read.
    """
    dh = dhash if dhash is not None else (dhash64(screenshot_png) if screenshot_png else "")
    return _sha1([signature.elements_digest, signature.text_digest, dh])
