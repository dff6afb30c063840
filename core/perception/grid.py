"""Grid grounding maths (P2): a labelled grid over the screenshot.

Rows are letters A.., columns are numbers 1..; the default is 10 x 10
(A1..J10, P2).  All coordinates here are in the same unit as the
``width``/``height`` given (CSS px or device px - the maths is unit-free).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from core.domain import BBox

__all__ = ["Grid", "DEFAULT_ROWS", "DEFAULT_COLS"]

DEFAULT_ROWS = 10  # P2
DEFAULT_COLS = 10  # P2
_CELL_RE = re.compile(r"^\s*([A-Za-z])\s*(\d+)\s*$")


@dataclass(frozen=True, slots=True)
class Grid:
    """A ``rows`` x ``cols`` grid over an area of ``width`` x ``height``.

    Raises
    ------
    ValueError
        When rows is not within 1..26, cols < 1, or the area is empty.
    """

    width: float
    height: float
    rows: int = DEFAULT_ROWS
    cols: int = DEFAULT_COLS

    def __post_init__(self) -> None:
        if not 1 <= self.rows <= 26 or self.cols < 1:
            raise ValueError(f"grid must have 1..26 rows and >= 1 column, got {self.rows}x{self.cols}")
        if self.width <= 0 or self.height <= 0:
            raise ValueError(f"grid area must be positive, got {self.width}x{self.height}")

    @property
    def cell_width(self) -> float:
        return self.width / self.cols

    @property
    def cell_height(self) -> float:
        return self.height / self.rows

    def cell_at(self, x: float, y: float) -> str:
        """Label (``"C5"``) of the cell holding point ``(x, y)``; clamped to the grid."""
        col = min(self.cols - 1, max(0, int(x // self.cell_width)))
        row = min(self.rows - 1, max(0, int(y // self.cell_height)))
        return f"{chr(ord('A') + row)}{col + 1}"

    def cell_of_box(self, box: BBox) -> str:
        """Label of the cell holding the centre of ``box``."""
        return self.cell_at(*box.center)

    def cell_box(self, label: str) -> BBox:
        """Box of the cell called ``label``.

        Raises
        ------
        ValueError
            When ``label`` is not a cell of this grid.
        """
        m = _CELL_RE.match(label)
        if not m:
            raise ValueError(f"not a grid cell label: {label!r} (expected like 'C5')")
        row = ord(m.group(1).upper()) - ord("A")
        col = int(m.group(2)) - 1
        if not (0 <= row < self.rows and 0 <= col < self.cols):
            raise ValueError(f"cell {label!r} is outside the {self.rows}x{self.cols} grid")
        return BBox(col * self.cell_width, row * self.cell_height, self.cell_width, self.cell_height)

    def labels(self) -> list[str]:
        """All cell labels, row by row (A1, A2, ... J10)."""
        return [f"{chr(ord('A') + r)}{c + 1}" for r in range(self.rows) for c in range(self.cols)]
