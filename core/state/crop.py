"""An element's picture cut out of a screenshot: the crop a step's target keeps for the visual level."""
from __future__ import annotations

from core.domain import BBox

__all__ = ["CROP_MARGIN_PX", "crop_png"]

#: Margin around the element in its crop, CSS px.
CROP_MARGIN_PX = 4


def crop_png(png: bytes, box: BBox, dpr: float, *, margin: float = CROP_MARGIN_PX) -> bytes:
    """Crop ``box`` (CSS px, viewport coordinates) plus ``margin`` out of a screenshot (device px).

    Returns ``b""`` when the box lies outside the screenshot.
    """
    import io

    from PIL import Image

    if not png or box.width <= 0 or box.height <= 0:
        return b""
    with Image.open(io.BytesIO(png)) as im:
        left = max(0, int((box.x - margin) * dpr))
        top = max(0, int((box.y - margin) * dpr))
        right = min(im.width, int((box.x + box.width + margin) * dpr + 0.999))
        bottom = min(im.height, int((box.y + box.height + margin) * dpr + 0.999))
        if right - left < 2 or bottom - top < 2:
            return b""
        out = io.BytesIO()
        im.crop((left, top, right, bottom)).save(out, format="PNG", optimize=True)
        return out.getvalue()
