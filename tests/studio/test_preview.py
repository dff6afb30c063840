"""Every panel opens alone with sample data (``python -m studio.preview NAME``)."""
from __future__ import annotations

import pytest
from PySide6.QtGui import QImage

from studio.main_window import MainWindow
from studio.preview import PANELS, build_panel, grab
from studio.run_state import RunState


@pytest.mark.parametrize("name", sorted(PANELS))
def test_panel_builds_and_renders(qtbot, tmp_path, name: str) -> None:  # noqa: ANN001
    widget = build_panel(name)
    qtbot.addWidget(widget)
    path = grab(widget, tmp_path / f"{name}.png")
    img = QImage(str(path))
    assert not img.isNull() and img.width() > 100 and img.height() > 50
    colours = {img.pixel(x, y) for x in range(0, img.width(), 37) for y in range(0, img.height(), 29)}
    assert len(colours) > 3  # not a blank surface
    if isinstance(widget, MainWindow):
        assert widget.state is RunState.PAUSED
        widget.close()
