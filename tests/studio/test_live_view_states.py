"""LiveView: box states and their colours, stacked labels, the descriptor rows, the grid size (unit level)."""
from __future__ import annotations

import pytest
from PySide6.QtGui import QImage

from core.domain import Anchor, BBox, Candidate, ElementDescriptor, Resolution, ScoredCandidate
from studio.views.live_view import COVERED_COLOR, DISABLED_COLOR, LEGEND, LiveView, descriptor_lines


def _c(ref: str, box: BBox, **kw) -> Candidate:
    return Candidate(ref=ref, descriptor=ElementDescriptor(tag="button", role="button", name=f"b{ref}", bbox=box), **kw)


@pytest.fixture
def view(qtbot) -> LiveView:  # noqa: ANN001
    v = LiveView()
    qtbot.addWidget(v)
    v.resize(800, 600)
    img = QImage(800, 450, QImage.Format.Format_RGB32)
    img.fill(0xFFFFFF)
    v._page = img  # noqa: SLF001 - kept for the tests below
    return v


def _px(view: LiveView, box: BBox):  # noqa: ANN202
    img = view.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    r = view.map_to_widget(box)
    return [img.pixelColor(round(r.left()) + dx, y) for dx in (-1, 0, 1)
            for y in range(round(r.top()) + 2, round(r.bottom()) - 1)]


def _near(c, ref, tol=45) -> bool:  # noqa: ANN001
    return abs(c.red() - ref.red()) <= tol and abs(c.green() - ref.green()) <= tol and abs(c.blue() - ref.blue()) <= tol


def test_states_in_order_of_precedence_and_their_outlines(view: LiveView) -> None:
    a, b, c, d = (_c("0:1", BBox(20, 20, 100, 30)), _c("0:2", BBox(20, 100, 100, 30), enabled=False),
                  _c("0:3", BBox(20, 180, 100, 30), covered=True, enabled=False), _c("0:4", BBox(20, 260, 100, 30)))
    view.set_image(view._page, candidates=(a, b, c, d))  # noqa: SLF001
    res = Resolution("exact", "0:1", 1.0, 0.6, 1.0, top=(ScoredCandidate("0:1", 1.0), ScoredCandidate("0:4", 0.4)))
    view.show_resolution(res, a)
    assert [view.box_state(x) for x in (a, b, c, d)] == ["target", "disabled", "covered", "candidate"]
    assert any(_near(p, DISABLED_COLOR) for p in _px(view, b.descriptor.bbox))
    assert any(_near(p, COVERED_COLOR) for p in _px(view, c.descriptor.bbox))
    assert not any(_near(p, COVERED_COLOR) for p in _px(view, b.descriptor.bbox))
    assert [s for s, _t in LEGEND] == ["enabled", "disabled", "covered", "target", "candidate"]


def test_overlapping_labels_are_stacked_so_none_covers_another(view: LiveView) -> None:
    same = [_c(f"0:{i}", BBox(300 + i * 4, 200 + i * 2, 60, 24)) for i in range(4)]
    view.set_image(view._page, candidates=tuple(same))  # noqa: SLF001
    view.set_alternatives([(c, f"#{i + 1} 0.5{i}") for i, c in enumerate(same)])
    chips = [r for _t, r in view.label_rects()]
    assert len(chips) == 4
    assert all(not a.intersects(b) for i, a in enumerate(chips) for b in chips[i + 1:])
    assert all(r.left() >= 0 and r.top() >= 0 for r in chips)


def test_descriptor_rows_say_role_name_test_id_anchor_and_the_box_in_css_px() -> None:
    d = ElementDescriptor(tag="input", role="textbox", name="Department", label="Department", text="",
                          test_id="dept", id="d1", bbox=BBox(10.4, 20.6, 200, 30),
                          anchor=Anchor("Employee details", "heading", 0.0, 42.0))
    rows = dict(descriptor_lines(Candidate("0:7", d, enabled=False, grid_cell="C3")))
    assert rows["role"] == "textbox" and rows["name"] == "Department" and rows["test id"] == "dept"
    assert rows["anchor"] == "\u201cEmployee details\u201d heading (+0, +42) px"
    assert rows["box (CSS px)"] == "10, 21 \u00b7 200 \u00d7 30" and rows["state"] == "disabled" and rows["grid cell"] == "C3"
    assert "text" not in rows  # empty fields are left out
    assert "ref" not in rows and "0:7" not in rows.values()  # the observation's own id is no word for a person


def test_grid_size_is_validated_by_the_grid(view: LiveView) -> None:
    view.set_image(view._page)  # noqa: SLF001
    assert view.grid_size() == (10, 10) and len(view.grid_cells()) == 100
    view.set_grid_size(3, 4)
    assert [label for label, _r in view.grid_cells()][-1] == "C4"
    with pytest.raises(ValueError, match="1..26 rows"):
        view.set_grid_size(27, 4)
    assert view.grid_size() == (3, 4)
