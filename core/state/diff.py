"""The image difference of a step: which regions of the screen its action changed (OpenCV).

:func:`image_diff` compares the before and after screenshots of one step:

1. decode both PNGs (``cv2.imdecode``, colour);
2. ``cv2.absdiff``, the largest channel difference per pixel (a red that
   turns green at the same brightness is a change), ``cv2.threshold`` at
   :data:`THRESHOLD` grey levels (anti-aliasing and sub-pixel text jitter
   stay below it); then the changed mask is brought to the work scale - CSS
   px (device px divided by the device pixel ratio), and never more than
   :data:`MAX_WORK_PIXELS` pixels (``INTER_AREA``: a work pixel is changed
   when any device pixel under it changed), so the grouping below costs the
   same whatever the screen;
3. secret fields (password boxes and fields holding a secret, CSS px) are
   cut out of the changed mask, padded by :data:`MASK_PAD_PX`: their pixels
   are painted over in both shots anyway, and nothing about them is reported;
4. ``cv2.dilate`` (a :data:`DILATE_PX` square) joins the letters of a changed
   word and the parts of a moved box into one region;
5. ``cv2.findContours`` (external) and ``cv2.boundingRect`` give the regions,
   shrunk back to the changed pixels they hold, in CSS px; regions with fewer
   than :data:`MIN_CHANGED_PIXELS` changed pixels are dropped (a caret blink)
   and overlapping ones merged.  When a page changed all over (more than
   :data:`MAX_REGIONS` regions: a navigation) the grouping is redone with a 3
   and 9 times larger square, so the regions say "this area changed" rather
   than listing every word; at most :data:`MAX_REGIONS` are kept, largest
   first.

The constants are Steadyhand's choices, tuned on the demo app and MiniWoB++
pages at dpr 1 and 2; none comes from the mechanism list.  A pure function:
no browser, no store.
"""
from __future__ import annotations

import time
from functools import lru_cache
from typing import Sequence

from core.domain import BBox
from core.domain.evidence import ImageDiff

__all__ = ["image_diff", "THRESHOLD", "DILATE_PX", "MIN_CHANGED_PIXELS", "MAX_REGIONS", "MAX_WORK_PIXELS",
           "MASK_PAD_PX", "DiffError"]

#: Grey levels (0..255) a pixel must change by in its most changed channel to count as changed.
THRESHOLD = 32
#: Side of the square (work px, about CSS px) that changed pixels are grown by before they are grouped.
DILATE_PX = 9
#: A region needs at least this many changed pixels (work px) to be reported.
MIN_CHANGED_PIXELS = 6
#: Regions kept per step (largest first); the rest is said by ``ImageDiff.truncated``.
MAX_REGIONS = 40
#: Largest image compared (pixels): 1920 x 1200 CSS px; bigger screenshots are shrunk first.
MAX_WORK_PIXELS = 1920 * 1200
#: Secret fields are cut out of the comparison with this margin (CSS px; focus rings, borders).
MASK_PAD_PX = 3.0


class DiffError(ValueError):
    """A screenshot could not be decoded (not a PNG, or empty)."""


@lru_cache(maxsize=4)
def _decoded(png: bytes):  # -> np.ndarray (H, W, 3) uint8 | None; never written to by the callers
    import cv2
    import numpy as np

    return cv2.imdecode(np.frombuffer(png, dtype=np.uint8), cv2.IMREAD_COLOR)


def _decode(png: bytes, what: str):  # -> np.ndarray (H, W, 3) uint8
    """Decode a screenshot; the last few are kept (a step's after is often the next step's before, R1 reuse)."""

    if not png:
        raise DiffError(f"the {what} screenshot is empty")
    img = _decoded(bytes(png))
    if img is None:
        raise DiffError(f"the {what} screenshot is not a readable image")
    return img


def _groups(changed, k: int) -> list[tuple[int, int, int, int]]:
    """Tight boxes (work px, ``x0, y0, x1, y1``) of the changed pixels grouped by a ``k`` px dilation; boxes
    that overlap are merged (two words of one changed line whose boxes cross are one region)."""
    import cv2
    import numpy as np

    grown = cv2.dilate(changed, np.ones((k, k), np.uint8))
    contours, _ = cv2.findContours(grown, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    boxes: list[list[int]] = []
    for c in contours:
        x, y, cw, ch = cv2.boundingRect(c)
        ys, xs = np.nonzero(changed[y:y + ch, x:x + cw])
        if len(xs) < MIN_CHANGED_PIXELS:
            continue
        boxes.append([x + int(xs.min()), y + int(ys.min()), x + int(xs.max()) + 1, y + int(ys.max()) + 1])
    merged = True
    while merged and len(boxes) > 1:  # few boxes by now (findContours grouped them): quadratic is fine
        merged = False
        out: list[list[int]] = []
        for b in boxes:
            for o in out:
                if b[0] < o[2] and o[0] < b[2] and b[1] < o[3] and o[1] < b[3]:
                    o[:] = [min(o[0], b[0]), min(o[1], b[1]), max(o[2], b[2]), max(o[3], b[3])]
                    merged = True
                    break
            else:
                out.append(b)
        boxes = out
    return [tuple(b) for b in boxes]  # type: ignore[misc]


def image_diff(before_png: bytes, after_png: bytes, *, device_pixel_ratio: float = 1.0,
               masks: Sequence[BBox] = (), threshold: int = THRESHOLD) -> ImageDiff:
    """Changed regions between two screenshots of the same viewport.

    Parameters
    ----------
    before_png, after_png : bytes
        PNG screenshots in device px (secrets already painted over).
    device_pixel_ratio : float
        Device px per CSS px of both screenshots (> 0).
    masks : Sequence[BBox]
        Secret fields, CSS px (viewport coordinates), left out of the comparison.
    threshold : int
        Grey levels a pixel must change by (default :data:`THRESHOLD`).

    Returns
    -------
    ImageDiff
        Regions in CSS px, largest first.  When the sizes differ (the
        viewport was resized) the common top-left part is compared and the
        rest reported as one changed region each, with a ``note``.

    Raises
    ------
    DiffError
        A screenshot is empty or not an image.
    ValueError
        ``device_pixel_ratio`` is not positive.
    """
    import cv2
    import numpy as np

    if not device_pixel_ratio or device_pixel_ratio <= 0:
        raise ValueError(f"device_pixel_ratio must be > 0, got {device_pixel_ratio}")
    t0 = time.perf_counter()
    a, b = _decode(before_png, "before"), _decode(after_png, "after")
    note = ""
    extra: list[BBox] = []
    dpr = float(device_pixel_ratio)
    if a.shape[:2] != b.shape[:2]:
        (ha, wa), (hb, wb) = a.shape[:2], b.shape[:2]
        note = f"sizes differ: {wa}x{ha} before, {wb}x{hb} after (device px); the common part was compared"
        h, w = min(ha, hb), min(wa, wb)
        if max(wa, wb) > w:
            extra.append(BBox(w / dpr, 0.0, (max(wa, wb) - w) / dpr, max(ha, hb) / dpr))
        if max(ha, hb) > h:
            extra.append(BBox(0.0, h / dpr, w / dpr, (max(ha, hb) - h) / dpr))
        a, b = a[:h, :w], b[:h, :w]
    h, w = a.shape[:2]
    b0, g0, r0 = cv2.split(cv2.absdiff(a, b))  # cheap at device px; resizing the colour shots is not
    diff = cv2.max(cv2.max(b0, g0), r0)  # the most changed channel (numpy's max over axis 2 is 8x slower)
    _, changed = cv2.threshold(diff, int(threshold), 255, cv2.THRESH_BINARY)
    # work scale: CSS px, and at most MAX_WORK_PIXELS; the changed mask is shrunk (a work pixel is changed
    # when any device pixel under it is), so a 1-device-px change survives
    scale = min(1.0 / dpr, (MAX_WORK_PIXELS / float(h * w)) ** 0.5)
    if scale < 1.0:
        size = (max(1, round(w * scale)), max(1, round(h * scale)))
        changed = cv2.resize(changed, size, interpolation=cv2.INTER_AREA)
        _, changed = cv2.threshold(changed, 0, 255, cv2.THRESH_BINARY)
        scale = size[0] / float(w)
    else:
        scale = 1.0
    to_css = 1.0 / (scale * dpr)  # work px -> CSS px
    wh, ww = changed.shape[:2]
    for m in masks:  # secret fields: nothing about them is compared or reported
        x0 = max(0, int((m.x - MASK_PAD_PX) / to_css))
        y0 = max(0, int((m.y - MASK_PAD_PX) / to_css))
        x1 = min(ww, int(np.ceil((m.x + m.width + MASK_PAD_PX) / to_css)))
        y1 = min(wh, int(np.ceil((m.y + m.height + MASK_PAD_PX) / to_css)))
        if x1 > x0 and y1 > y0:
            changed[y0:y1, x0:x1] = 0
    total = float(wh * ww) or 1.0
    ratio = float(cv2.countNonZero(changed)) / total
    rects: list[tuple[int, int, int, int]] = []  # work px, x0 y0 x1 y1
    if ratio > 0:
        for k in (DILATE_PX, DILATE_PX * 3, DILATE_PX * 9):  # a page that changed all over: coarser groups
            rects = _groups(changed, k)
            if len(rects) <= MAX_REGIONS:
                break
    regions = [BBox(x0 * to_css, y0 * to_css, (x1 - x0) * to_css, (y1 - y0) * to_css) for x0, y0, x1, y1 in rects]
    regions.sort(key=lambda r: (-r.area, r.y, r.x))
    boxes = regions
    truncated = len(boxes) + len(extra) > MAX_REGIONS
    boxes = (extra + boxes)[:MAX_REGIONS]
    return ImageDiff(tuple(boxes), round(ratio, 6), w / dpr, h / dpr, dpr, truncated,
                     (time.perf_counter() - t0) * 1000.0, note)
