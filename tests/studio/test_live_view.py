"""LiveView: boxes land where CSS px * dpr puts them, the grid is drawn and labelled, tooltips."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QPointF, QRectF
from PySide6.QtGui import QColor, QHelpEvent, QImage
from PySide6.QtWidgets import QToolTip

from core.domain import BBox, Candidate, ElementDescriptor
from studio.samples import find_candidate, sample_observation
from studio.views.live_view import LiveView

WHITE = QColor(255, 255, 255)


def _white(w: int, h: int) -> QImage:
    img = QImage(w, h, QImage.Format.Format_RGB32)
    img.fill(WHITE)
    return img


def _candidate(ref: str, box: BBox, *, role: str = "button", name: str = "Save", cell: str = "C5") -> Candidate:
    return Candidate(ref=ref, descriptor=ElementDescriptor(tag="button", role=role, name=name, bbox=box),
                     grid_cell=cell)


def _render(view: LiveView) -> QImage:
    return view.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)


def _bluish(c: QColor) -> bool:
    return c.blue() > 150 and c.blue() - c.red() > 40


def _reddish(c: QColor) -> bool:
    return c.red() > 150 and c.red() - c.green() > 60 and c.red() - c.blue() > 60


@pytest.fixture
def view(qtbot) -> LiveView:  # noqa: ANN001
    v = LiveView()
    qtbot.addWidget(v)
    v.resize(800, 600)
    return v


@pytest.mark.parametrize(("dpr", "expected"), [
    # 800x450 CSS viewport; image 800*dpr wide, fit into 800x600 => scale 1/dpr, centred vertically (75 px)
    (2.0, QRectF(100, 125, 200, 40)),
    (1.0, QRectF(100, 125, 200, 40)),
])
def test_box_maps_through_dpr_and_fit_scale(view: LiveView, dpr: float, expected: QRectF) -> None:
    box = BBox(100, 50, 200, 40)
    view.set_image(_white(round(800 * dpr), round(450 * dpr)), device_pixel_ratio=dpr,
                   candidates=(_candidate("0:0", box),))
    assert view.image_rect() == QRectF(0, 75, 800, 450)
    assert view.map_to_widget(box) == expected


def test_box_maps_with_a_fractional_dpr_and_a_larger_widget(view: LiveView) -> None:
    obs = sample_observation("login")  # 1280x720 CSS at dpr 1.25 => 1600x900 device px
    view.resize(1600, 1000)
    view.set_observation(obs, QImage.fromData(obs.screenshot_png, "PNG"))
    user = find_candidate(obs.candidates, "User name", "textbox")
    assert view.scale() == pytest.approx(1.0)
    r = view.map_to_widget(user.descriptor.bbox)
    assert (r.x(), r.y(), r.width(), r.height()) == pytest.approx((472 * 1.25, 50 + 214 * 1.25, 336 * 1.25, 50))


def test_box_outline_is_painted_at_its_widget_position(view: LiveView) -> None:
    view.set_image(_white(1600, 900), device_pixel_ratio=2.0, candidates=(_candidate("0:0", BBox(100, 50, 200, 40)),))
    img = _render(view)
    # expected widget box: x 100..300, y 125..165
    assert any(_bluish(img.pixelColor(200, y)) for y in range(123, 128)), "top edge"
    assert any(_bluish(img.pixelColor(x, 145)) for x in range(98, 103)), "left edge"
    assert not _bluish(img.pixelColor(200, 115)), "10 px above the box"
    assert not _bluish(img.pixelColor(200, 145)), "inside: only a faint fill"
    assert not _bluish(img.pixelColor(90, 145)), "10 px left of the box"


def test_boxes_can_be_hidden(view: LiveView) -> None:
    view.set_image(_white(1600, 900), device_pixel_ratio=2.0, candidates=(_candidate("0:0", BBox(100, 50, 200, 40)),))
    view.set_boxes_visible(False)
    img = _render(view)
    assert not any(_bluish(img.pixelColor(200, y)) for y in range(123, 128))


def test_grid_cells_are_labelled_a1_to_j10_over_the_image(view: LiveView) -> None:
    view.set_image(_white(1600, 900), device_pixel_ratio=2.0)
    cells = view.grid_cells()
    labels = [label for label, _ in cells]
    assert len(labels) == 100 and labels[0] == "A1" and labels[9] == "A10" and labels[-1] == "J10"
    assert labels[10] == "B1"  # rows are letters
    first, last = cells[0][1], cells[-1][1]
    assert (first.x(), first.y(), first.width(), first.height()) == pytest.approx((0, 75, 80, 45))
    assert (last.right(), last.bottom()) == pytest.approx((800, 525))


def test_grid_lines_are_drawn_red_only_when_toggled_on(view: LiveView) -> None:
    view.set_image(_white(1600, 900), device_pixel_ratio=2.0)
    line_x = 240  # the line between columns 3 and 4 (80 px cells)
    probe_y = 75 + 5 * 45 + 22  # middle of row F (45 px rows from y 75), away from its label
    assert not any(_reddish(_render(view).pixelColor(x, probe_y)) for x in range(line_x - 2, line_x + 3))
    view.set_grid_visible(True)
    img = _render(view)
    assert any(_reddish(img.pixelColor(x, probe_y)) for x in range(line_x - 2, line_x + 3))
    assert not _reddish(img.pixelColor(line_x + 20, probe_y))
    # the label chip of C4 (top-left of its cell) holds red text
    c4 = dict(view.grid_cells())["C4"]
    chip = [img.pixelColor(round(c4.x()) + dx, round(c4.y()) + dy) for dx in range(4, 20) for dy in range(4, 16)]
    assert any(_reddish(c) for c in chip)


def test_target_is_highlighted(view: LiveView) -> None:
    cand = _candidate("0:1", BBox(400, 200, 100, 30))
    view.set_image(_white(1600, 900), device_pixel_ratio=2.0, candidates=(cand,))
    view.set_target(cand, "semantic 0.84")
    img = _render(view)
    r = view.map_to_widget(cand.descriptor.bbox)  # 400,275 200x30 ... outline 3 px outside
    c = img.pixelColor(round(r.center().x()), round(r.bottom()) + 3)
    assert c.red() > 200 and 120 < c.green() < 200 and c.blue() < 90  # amber
    assert view.target is cand


def test_alternatives_are_outlined_until_a_target_is_set(view: LiveView) -> None:
    a = _candidate("0:1", BBox(100, 100, 100, 30))
    view.set_image(_white(1600, 900), device_pixel_ratio=2.0, candidates=(a,))
    view.set_alternatives([(a, "#1 0.78")])
    img = _render(view)
    r = view.map_to_widget(a.descriptor.bbox)
    x, y = round(r.left()) - 3, round(r.center().y())
    edge = [img.pixelColor(x + dx, y + dy) for dx in (-1, 0, 1) for dy in range(-6, 7)]
    assert any(c.red() > 200 and c.blue() < 90 for c in edge)  # dashed amber outline
    view.set_target(None)
    assert view.alternatives == ()


def test_candidate_at_prefers_the_smallest_box_and_tooltip_names_it(qtbot, view: LiveView) -> None:  # noqa: ANN001
    outer = _candidate("0:0", BBox(0, 0, 400, 300), role="dialog", name="Confirm", cell="B2")
    inner = _candidate("0:1", BBox(100, 100, 50, 20), role="button", name="OK", cell="D3")
    view.set_image(_white(800, 450), device_pixel_ratio=1.0, candidates=(outer, inner))
    centre = view.map_to_widget(inner.descriptor.bbox).center()
    assert view.candidate_at(centre) is inner
    assert view.candidate_at(QPointF(10, 80)) is outer
    assert view.candidate_at(QPointF(790, 590)) is None
    text = LiveView.tooltip_text(inner)
    assert "button" in text and "OK" in text and "D3" in text

    view.show()
    qtbot.waitExposed(view)
    pos = centre.toPoint()
    QToolTip.hideText()
    view.event(QHelpEvent(QEvent.Type.ToolTip, pos, view.mapToGlobal(pos)))
    assert "OK" in QToolTip.text() and "D3" in QToolTip.text()


def test_hover_reports_the_candidate_under_the_mouse(qtbot, view: LiveView) -> None:  # noqa: ANN001
    cand = _candidate("0:0", BBox(100, 100, 50, 20))
    view.set_image(_white(800, 450), device_pixel_ratio=1.0, candidates=(cand,))
    view.show()
    qtbot.waitExposed(view)
    with qtbot.waitSignal(view.candidate_hovered, timeout=2000) as sig:
        qtbot.mouseMove(view, view.map_to_widget(cand.descriptor.bbox).center().toPoint())
    assert sig.args == [cand]


def test_a_null_image_keeps_the_previous_observation(view: LiveView) -> None:
    obs = sample_observation("login")
    view.set_observation(obs, QImage.fromData(obs.screenshot_png, "PNG"))
    view.set_observation(sample_observation("reports"), QImage())
    assert view.candidates == obs.candidates and not view.image.isNull()


def test_placeholder_without_image(view: LiveView) -> None:
    assert view.image_rect().isEmpty() and view.grid_cells() == []
    img = _render(view)
    assert img.width() == 800  # paints without an image
