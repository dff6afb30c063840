"""Grid grounding maths (P2): labels, point -> cell, cell -> box."""
from __future__ import annotations

import pytest

from core.domain import BBox
from core.perception.grid import DEFAULT_COLS, DEFAULT_ROWS, Grid

GRID = Grid(1000.0, 500.0)  # cells of 100 x 50


def test_default_is_ten_by_ten() -> None:
    assert (DEFAULT_ROWS, DEFAULT_COLS) == (10, 10)
    assert (GRID.rows, GRID.cols) == (10, 10)
    assert (GRID.cell_width, GRID.cell_height) == (100.0, 50.0)


def test_labels_a1_to_j10_row_by_row() -> None:
    labels = GRID.labels()
    assert len(labels) == 100 and len(set(labels)) == 100
    assert labels[:11] == ["A1", "A2", "A3", "A4", "A5", "A6", "A7", "A8", "A9", "A10", "B1"]
    assert labels[-1] == "J10"


@pytest.mark.parametrize(("x", "y", "label"), [
    (0, 0, "A1"),
    (999.9, 0, "A10"),
    (0, 499.9, "J1"),
    (999.9, 499.9, "J10"),
    (99.9, 49.9, "A1"),
    (100, 50, "B2"),
    (450, 220, "E5"),
])
def test_cell_at_corners_and_edges(x: float, y: float, label: str) -> None:
    assert GRID.cell_at(x, y) == label


@pytest.mark.parametrize(("x", "y", "label"), [
    (-5, -5, "A1"),
    (1000, 500, "J10"),
    (5000, -1, "A10"),
    (-1, 10000, "J1"),
])
def test_cell_at_clamps_outside_points(x: float, y: float, label: str) -> None:
    assert GRID.cell_at(x, y) == label


def test_cell_box() -> None:
    assert GRID.cell_box("A1") == BBox(0.0, 0.0, 100.0, 50.0)
    assert GRID.cell_box("C5") == BBox(400.0, 100.0, 100.0, 50.0)
    assert GRID.cell_box("J10") == BBox(900.0, 450.0, 100.0, 50.0)


def test_cell_box_accepts_lower_case_and_spaces() -> None:
    assert GRID.cell_box(" c 5 ") == GRID.cell_box("C5")


@pytest.mark.parametrize(("rows", "cols", "w", "h"), [(10, 10, 1280, 800), (3, 7, 333.0, 101.0), (26, 12, 1920, 1080)])
def test_cell_box_is_the_inverse_of_cell_at(rows: int, cols: int, w: float, h: float) -> None:
    g = Grid(w, h, rows, cols)
    for label in g.labels():
        box = g.cell_box(label)
        assert g.cell_at(*box.center) == label
        assert g.cell_at(box.x + 1e-6, box.y + 1e-6) == label  # just inside the top-left corner
        assert g.cell_of_box(box) == label


def test_cells_tile_the_area() -> None:
    total = sum(GRID.cell_box(label).area for label in GRID.labels())
    assert total == pytest.approx(1000.0 * 500.0)


def test_cell_of_box_uses_the_centre() -> None:
    assert GRID.cell_of_box(BBox(90, 40, 30, 20)) == "B2"  # centre (105, 50)


@pytest.mark.parametrize("label", ["", "5C", "AA1", "A-1", "A1.5", "C", "11"])
def test_malformed_labels_raise_value_error(label: str) -> None:
    with pytest.raises(ValueError, match="not a grid cell label") as info:
        GRID.cell_box(label)
    assert repr(label) in str(info.value) and "'C5'" in str(info.value)


@pytest.mark.parametrize("label", ["K1", "A0", "A11", "Z10"])
def test_labels_outside_the_grid_raise_value_error(label: str) -> None:
    with pytest.raises(ValueError, match="outside the 10x10 grid") as info:
        GRID.cell_box(label)
    assert repr(label) in str(info.value)


def test_wide_grids_round_trip_three_digit_columns() -> None:
    g = Grid(1200, 100, rows=2, cols=120)
    assert g.labels()[-1] == "B120"
    assert g.cell_box("B120") == BBox(1190.0, 50.0, 10.0, 50.0)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"width": 100, "height": 100, "rows": 27}, "1..26 rows"),
    ({"width": 100, "height": 100, "rows": 0}, "1..26 rows"),
    ({"width": 100, "height": 100, "cols": 0}, ">= 1 column"),
    ({"width": 0, "height": 100}, "area must be positive"),
    ({"width": 100, "height": -1}, "area must be positive"),
])
def test_bad_grids_raise_value_error(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        Grid(**kwargs)
