"""Optional inputs of the chain beyond the candidates: the screenshot, the crop, text boxes."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Union

import numpy as np

from core.domain import TextBox

__all__ = ["TextBox", "LocateInputs", "Image", "load_crop"]

#: A PNG (bytes) or a decoded image (``numpy`` array, H x W or H x W x 3 BGR).
Image = Union[bytes, np.ndarray]


@dataclass(frozen=True, slots=True)
class LocateInputs:
    """What the RELATIVE and VISUAL levels look at besides the candidates.

    Attributes
    ----------
    screenshot : Image | None
        Viewport screenshot of the current page, device px.
    screenshot_dpr : float
        Device px per CSS px of ``screenshot``.
    crop : Image | None
        The target's recorded crop (``ElementDescriptor.crop``), device px.
    crop_dpr : float
        Device px per CSS px when the crop was taken
        (``ElementDescriptor.device_pixel_ratio``).
    anchors : tuple[TextBox, ...]
        Text-bearing elements of the current page (labels, headings...) in
        which the target's anchor is looked for, besides the candidates.
    tie_breaker : Callable | None
        SEMANTIC's optional tie-breaker (:data:`core.locate.tiebreak.TieBreaker`).
    """

    screenshot: Image | None = None
    screenshot_dpr: float = 1.0
    crop: Image | None = None
    crop_dpr: float = 1.0
    anchors: tuple[TextBox, ...] = ()
    tie_breaker: Callable[..., Any] | None = None


#: Crops larger than this are not read (a recorded element crop is a few KB).
MAX_CROP_BYTES = 4 * 1024 * 1024


def load_crop(flow_source: str, crop: str) -> bytes | None:
    """The PNG bytes of a target's crop, a path relative to the flow file's folder.

    Returns None when there is no crop, no flow file, the file is missing,
    outside the flow's folder tree, or larger than :data:`MAX_CROP_BYTES`.
    """
    if not crop or not flow_source:
        return None
    base = Path(flow_source).resolve().parent
    path = (base / crop).resolve()
    try:
        path.relative_to(base)
        if not path.is_file() or path.stat().st_size > MAX_CROP_BYTES:
            return None
        return path.read_bytes()
    except (ValueError, OSError):
        return None
