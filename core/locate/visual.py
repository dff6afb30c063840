"""VISUAL level (R2): template match of the recorded crop on the current screenshot.

The recorder saves a PNG crop of every target (device px,
``ElementDescriptor.crop``).  This level slides it over the viewport
screenshot with OpenCV's normalised cross-correlation
(``cv2.matchTemplate``, ``TM_CCOEFF_NORMED``) - on the *structure* of both
images, not their colours, so that the crop is evidence a restyled release
does not silence and a look-alike does not fake (issue 19):

* structure = the gradient magnitude (Sobel, 3x3) of the grey levels: the
  outlines of glyphs and icons, the same whatever the colours (dark text on
  light and light text on dark give the same outlines);
* the crop's outer :data:`INSET_PX` device px are left out before matching:
  its border and the edge of its background are what a restyle changes
  (colour, border, radius), the label or icon inside is what it keeps;

* the crop is rescaled by ``screenshot_dpr / crop_dpr`` when the device
  pixel ratio changed since recording;
* the best peak must reach :data:`VISUAL_MIN_PEAK` and lead the best peak
  elsewhere (outside the crop's own size around the first) by the margin -
  a page with two identical buttons has two peaks and falls through;
* the match box, converted to CSS px, is intersected with the candidate
  boxes: a candidate scores ``peak * IoU`` (intersection over union), and
  the margin rule picks one (a span inside a button covering the same
  pixels ties with it and falls through).

Flat crops (grey-level standard deviation below :data:`MIN_CROP_STD`) carry
no pattern and fall through.
"""
from __future__ import annotations

import numpy as np

from core.domain import BBox

from .config import LocatorConfig
from .features import CandidatePool, Features
from .inputs import Image, LocateInputs
from .level import LevelResult, decide

__all__ = ["visual_level", "match_crop", "structure", "VISUAL_MIN_PEAK", "INSET_PX", "MIN_IOU", "MIN_CROP_STD",
           "decode_gray"]

#: Correlation of structure a match must reach (0..1).  0.95: the same
#: rendering, recoloured, matches at 0.99-1.00; a label one letter apart in
#: the same font ("Save" / "Sane", 0.90 on outlines; 0.80 on grey levels) and
#: any other label stay below.
VISUAL_MIN_PEAK = 0.95

#: Device px left out on each side of the crop before matching (its border
#: and background edge, what a restyle changes); crops too small to keep
#: :data:`MIN_CROP_PX` after the inset are matched whole.
INSET_PX = 3

#: A candidate box must overlap the match box by at least this IoU (0..1).
MIN_IOU = 0.5

#: Grey-level standard deviation below which a crop is flat (0..255 scale).
MIN_CROP_STD = 4.0

#: Crops smaller than this (device px, either side) are not matched.
MIN_CROP_PX = 6


def decode_gray(img: Image) -> np.ndarray | None:
    """A grey-level ``uint8`` array from PNG bytes or an array; None when undecodable."""
    import cv2

    if isinstance(img, (bytes, bytearray)):
        if not img:
            return None
        arr = cv2.imdecode(np.frombuffer(img, dtype=np.uint8), cv2.IMREAD_GRAYSCALE)
        return arr
    a = np.asarray(img)
    if a.ndim == 3:
        code = cv2.COLOR_BGRA2GRAY if a.shape[2] == 4 else cv2.COLOR_BGR2GRAY
        a = cv2.cvtColor(a.astype(np.uint8), code)
    return a.astype(np.uint8)


def structure(gray: np.ndarray) -> np.ndarray:
    """Gradient magnitude (Sobel 3x3) of a grey-level image, ``float32``: its outlines, whatever the colours."""
    import cv2

    a = gray.astype(np.float32)
    return cv2.magnitude(cv2.Sobel(a, cv2.CV_32F, 1, 0, ksize=3), cv2.Sobel(a, cv2.CV_32F, 0, 1, ksize=3))


#: A window of the screenshot whose outline energy (standard deviation of
#: :func:`structure`) is below this share of the crop's cannot be the crop:
#: normalised correlation is unstable on near-flat windows (it reaches 1.0
#: on antialiasing noise), so they score 0.  0.5: the crop's own window
#: has the full energy, a window with half of it lacks half the outline.
MIN_WINDOW_ENERGY = 0.5


def _window_std(img: np.ndarray, h: int, w: int) -> np.ndarray:
    """Standard deviation of every ``h`` x ``w`` window of ``img``, indexed by its top-left corner (matchTemplate's grid)."""
    import cv2

    s, sq = cv2.integral2(img.astype(np.float64))[:2]
    n = float(h * w)

    def box(a: np.ndarray) -> np.ndarray:
        return a[h:, w:] - a[:-h, w:] - a[h:, :-w] + a[:-h, :-w]

    mean = box(s) / n
    return np.sqrt(np.maximum(box(sq) / n - mean * mean, 0.0))


def match_crop(screenshot: np.ndarray, crop: np.ndarray, *, scale: float = 1.0,
               ) -> tuple[float, float, tuple[int, int, int, int] | None, str]:
    """Best and second-best correlation peaks of ``crop``'s structure on ``screenshot``'s.

    Both are grey-level images; their outlines (:func:`structure`) are
    correlated, the crop without its outer :data:`INSET_PX` px.

    Returns
    -------
    peak, second : float
        Best peak and best peak outside the first match's neighbourhood (0..1).
    box : tuple[int, int, int, int] | None
        ``(x, y, w, h)`` of the best match in screenshot (device) px.
    why : str
        Why nothing could be matched (empty when matched).
    """
    import cv2

    if scale > 0 and abs(scale - 1.0) > 1e-3:
        crop = cv2.resize(crop, None, fx=scale, fy=scale,
                          interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR)
    h, w = crop.shape[:2]
    H, W = screenshot.shape[:2]
    if h < MIN_CROP_PX or w < MIN_CROP_PX:
        return 0.0, 0.0, None, f"crop too small ({w}x{h} px)"
    if h > H or w > W:
        return 0.0, 0.0, None, f"crop ({w}x{h} px) larger than the screenshot ({W}x{H} px)"
    if float(crop.std()) < MIN_CROP_STD:
        return 0.0, 0.0, None, "crop is flat (no pattern to match)"
    k = INSET_PX if min(h, w) >= MIN_CROP_PX + 2 * INSET_PX else 0
    inner = structure(crop)[k:h - k, k:w - k] if k else structure(crop)
    if float(inner.std()) < MIN_CROP_STD:
        return 0.0, 0.0, None, "crop has no outline inside its border (nothing to match)"
    shot = structure(screenshot)
    res = cv2.matchTemplate(shot, inner, cv2.TM_CCOEFF_NORMED)
    res = np.nan_to_num(res, nan=0.0, posinf=0.0, neginf=0.0)
    res[_window_std(shot, *inner.shape[:2]) < MIN_WINDOW_ENERGY * float(inner.std())] = 0.0
    _, peak, _, (x, y) = cv2.minMaxLoc(res)
    masked = res.copy()
    masked[max(0, y - h // 2):y + h // 2 + 1, max(0, x - w // 2):x + w // 2 + 1] = -1.0
    second = float(masked.max()) if masked.size else -1.0
    return float(peak), max(second, 0.0), (int(x) - k, int(y) - k, int(w), int(h)), ""


def _iou(a: BBox, b: BBox) -> float:
    inter = a.intersection_area(b)
    union = a.area + b.area - inter
    return inter / union if union > 0 else 0.0


def visual_level(t: Features, pool: CandidatePool, config: LocatorConfig,
                 inputs: LocateInputs | None = None) -> LevelResult:
    """Match the crop, intersect the match box with the candidate boxes, margin rule."""
    n = len(pool)
    scores = np.zeros(n)
    inputs = inputs or LocateInputs()
    if inputs.crop is None or inputs.screenshot is None:
        what = "no recorded crop" if inputs.crop is None else "no screenshot of the page"
        return LevelResult("visual", scores, None, 0.0, 0.0, what)
    shot, crop = decode_gray(inputs.screenshot), decode_gray(inputs.crop)
    if shot is None or crop is None:
        return LevelResult("visual", scores, None, 0.0, 0.0, "crop or screenshot cannot be decoded")
    scale = inputs.screenshot_dpr / inputs.crop_dpr if inputs.crop_dpr > 0 else 1.0
    peak, second, box, why = match_crop(shot, crop, scale=scale)
    if box is None:
        return LevelResult("visual", scores, None, 0.0, 0.0, why)
    if peak < VISUAL_MIN_PEAK:
        return LevelResult("visual", scores, None, peak, 0.0,
                           f"best match of the crop {peak:.2f}, needs {VISUAL_MIN_PEAK:.2f}")
    if peak - second < config.margin:
        return LevelResult("visual", scores, None, peak, peak - second,
                           f"the crop matches twice ({peak:.2f} and {second:.2f}), margin {config.margin:.2f}")
    dpr = inputs.screenshot_dpr if inputs.screenshot_dpr > 0 else 1.0
    x, y, w, h = box
    mbox = BBox(x / dpr, y / dpr, w / dpr, h / dpr)
    for i, f in enumerate(pool.features):
        if f.bbox is None or f.frame != t.frame:
            continue
        iou = _iou(mbox, f.bbox)
        if iou >= MIN_IOU:
            scores[i] = peak * iou
    res = decide("visual", scores, pool, margin=config.margin, minimum=VISUAL_MIN_PEAK * MIN_IOU)
    if res.winner is None and res.reason == "no candidate scored":
        res = LevelResult("visual", scores, None, 0.0, 0.0,
                          f"the crop matched at ({mbox.x:.0f}, {mbox.y:.0f}) CSS px ({peak:.2f}) "
                          f"but no candidate box overlaps it by IoU {MIN_IOU:.2f}")
    return res
