"""Draw Steadyhand's application icon: ``packaging/icons/steadyhand.svg`` and PNGs of :data:`SIZES` px.

The SVG is the source; each PNG is that SVG rendered by Qt's own SVG renderer
(``QSvgRenderer`` through a ``QPainter``) at its size, so the two never
disagree.  The design: a rounded dark-blue tile, a white pointer over a
target ring (a click that lands where it was meant to) and a green check.

Run it offscreen: ``QT_QPA_PLATFORM=offscreen .venv/bin/python packaging/make_icons.py [--out DIR]``.
Prints each file written.  The build script runs it when an icon is missing.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

#: Icon sizes in px (square), as the freedesktop icon theme's hicolor/<N>x<N>/apps folders name them.
SIZES = (16, 24, 32, 48, 64, 128, 256)
#: The icon's name in the desktop entry's ``Icon=`` key and the file names.
ICON_NAME = "steadyhand"
ICONS_DIR = Path(__file__).resolve().parent / "icons"

SVG = """<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="256" height="256" viewBox="0 0 256 256">
  <title>Steadyhand</title>
  <defs>
    <linearGradient id="tile" x1="0" y1="0" x2="0" y2="1">
      <stop offset="0" stop-color="#2f5d9e"/>
      <stop offset="1" stop-color="#1b365e"/>
    </linearGradient>
  </defs>
  <rect x="8" y="8" width="240" height="240" rx="48" ry="48" fill="url(#tile)"/>
  <circle cx="104" cy="104" r="60" fill="none" stroke="#9cc3f5" stroke-width="14"/>
  <circle cx="104" cy="104" r="18" fill="#9cc3f5"/>
  <path d="M104 104 L104 214 L132 186 L152 230 L176 219 L156 176 L196 176 Z"
        fill="#ffffff" stroke="#1b365e" stroke-width="8" stroke-linejoin="round"/>
  <circle cx="196" cy="70" r="38" fill="#2fb36b" stroke="#ffffff" stroke-width="8"/>
  <path d="M176 70 L190 85 L216 56" fill="none" stroke="#ffffff" stroke-width="12"
        stroke-linecap="round" stroke-linejoin="round"/>
</svg>
"""


def write_icons(out: Path = ICONS_DIR) -> list[Path]:
    """Write the SVG and one PNG per size into ``out``; returns the paths written.

    Raises
    ------
    RuntimeError
        Qt could not parse the SVG or save a PNG.
    """
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QByteArray, QRectF, Qt  # noqa: PLC0415
    from PySide6.QtGui import QGuiApplication, QImage, QPainter  # noqa: PLC0415
    from PySide6.QtSvg import QSvgRenderer  # noqa: PLC0415

    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # noqa: F841 - keeps Qt's GUI alive
    out.mkdir(parents=True, exist_ok=True)
    svg_path = out / f"{ICON_NAME}.svg"
    svg_path.write_text(SVG, encoding="utf-8")
    renderer = QSvgRenderer(QByteArray(SVG.encode("utf-8")))
    if not renderer.isValid():
        raise RuntimeError(f"{svg_path}: Qt cannot parse the icon's SVG")
    written = [svg_path]
    for size in SIZES:
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter, QRectF(0, 0, size, size))
        painter.end()
        path = out / f"{ICON_NAME}-{size}.png"
        if not image.save(str(path), "PNG"):
            raise RuntimeError(f"{path}: cannot write the PNG")
        written.append(path)
    return written


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Draw Steadyhand's icons (SVG and PNGs).")
    parser.add_argument("--out", type=Path, default=ICONS_DIR, help=f"folder to write (default {ICONS_DIR})")
    for p in write_icons(parser.parse_args().out):
        print(p)
