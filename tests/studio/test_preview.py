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


def test_takeover_window_shows_the_hand_back_bar(qtbot, tmp_path) -> None:  # noqa: ANN001
    w = build_panel("takeover")
    qtbot.addWidget(w)
    assert isinstance(w, MainWindow) and w.state is RunState.TAKEN_OVER
    assert w.takeover_banner.isVisibleTo(w) and w.takeover_banner.continue_from.value() == 7
    assert w.live_view.highlight is not None  # the selected candidate is outlined on the page
    path = grab(w, tmp_path / "takeover.png")
    assert not QImage(str(path)).isNull()
    w.close()
