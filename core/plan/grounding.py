"""Grid grounding (P1, P2): what the model sees, and how its answer is tied back to a DOM element.

What is sent: the viewport screenshot with secrets masked (password fields
and any field holding a secret value, painted over in device px before
anything else), downscaled to at most ``width`` px (1440, P2/P9), overlaid
with a labelled grid (default 10 x 10, rows A-J, columns 1-10, 2 px
semi-transparent red lines, P2) - and the visible interactive elements
listed with ids (``e1``...), role, name, state and grid cell (P1: decisions
choose among DOM candidates, never free pixels).

How an answer ``{"grid", "element_id", "element_desc", "action", "reason"}``
is judged (:func:`intersect`): the named cell is intersected with the
candidates' boxes.  The element id inside the cell, or the one element of the
cell whose name matches the description, is agreement: confidence 1.0.  A
cell that holds another element than the id, or nothing that matches, is a
conflict: the rules may still find the element by its description alone
(:func:`rule_fallback`, a unique name match), otherwise the decider
escalates.  A cell outside the grid, or an element that is hidden, disabled
or covered, is refused with the reason (never acted on).

Units: candidate boxes are CSS px (viewport); the screenshot is device px
(``Observation.device_pixel_ratio``); the image sent and its grid are image
px = CSS px * :attr:`GroundingView.scale`.
"""
from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Literal, Mapping, Optional, Sequence

from pydantic import BaseModel, Field, field_validator
from rapidfuzz import fuzz

from core.act.space import spec
from core.domain import ACTION_KINDS, BBox, Candidate, Observation
from core.perception.grid import DEFAULT_COLS, DEFAULT_ROWS, Grid
from core.secrets import MASK, Redactor, css_boxes_to_device, mask_boxes_png

__all__ = [
    "DEFAULT_WIDTH_PX", "MAX_LISTED", "GRID_RGBA", "GRID_LINE_PX", "Fill", "GroundAnswer", "GroundingView",
    "Grounded", "draw_grid", "grounding_view", "intersect", "rule_fallback", "describe_candidate", "secret_boxes",
]

#: Widest image sent, px (P2: at least 1440 px wide; P9: downscale to 1440).
DEFAULT_WIDTH_PX = 1440
#: Most candidates listed in a prompt (the rest are left out, nearest the top first).
MAX_LISTED = 80
#: Grid line colour: red, semi-transparent (P2).
GRID_RGBA = (255, 0, 0, 140)
#: Grid line width, px of the image sent (P2: 2 px; thicker lines gave +7%).
GRID_LINE_PX = 2
#: Name similarity (rapidfuzz token-set ratio, 0..100) at which a description matches an element.
DESC_MATCH = 60.0
#: The rules' stricter bar when the grid cell disagreed (a unique name match by itself).
RULE_MATCH = 80.0


class Fill(BaseModel):
    """One more field of a batched form fill (P9)."""

    element_id: str
    value: str


class GroundAnswer(BaseModel):
    """The model's answer (fixed schema; actions outside the closed space are rejected, P5)."""

    grid: str = Field(min_length=2, max_length=4)
    element_desc: str = ""
    action: Literal[ACTION_KINDS]  # type: ignore[valid-type]
    reason: str = ""
    element_id: Optional[str] = None
    value: str = ""
    confidence: float = Field(1.0, ge=0.0, le=1.0)
    direction: Literal["down", "up", "left", "right"] = "down"
    fills: list[Fill] = Field(default_factory=list, max_length=20)

    @field_validator("element_id")
    @classmethod
    def _blank(cls, v: Optional[str]) -> Optional[str]:
        return v.strip() or None if isinstance(v, str) else v


@dataclass(frozen=True)
class GroundingView:
    """The grounded picture of one observation.

    Attributes
    ----------
    png : bytes
        The image sent ("" when the observation had no screenshot): masked,
        downscaled, grid drawn.
    size : tuple[int, int]
        Image px (width, height); the grid spans it.
    scale : float
        Image px per CSS px.
    grid : Grid
        Over the image, in image px.
    ids : Mapping[str, Candidate]
        ``"e1"`` -> candidate, for the listed candidates.
    cells : Mapping[str, str]
        ``"e1"`` -> grid cell of its centre.
    listing : str
        One line per listed candidate (``e1 | button | 'Sign in' | enabled | C5``).
    """

    png: bytes
    size: tuple[int, int]
    scale: float
    grid: Grid
    ids: Mapping[str, Candidate]
    cells: Mapping[str, str]
    listing: str
    masked: tuple[tuple[float, float, float, float], ...] = field(default=())

    def box_of(self, element_id: str) -> BBox | None:
        """The element's box in image px."""
        c = self.ids.get(element_id)
        b = c.descriptor.bbox if c is not None else None
        return b.scaled(self.scale) if b is not None else None

    def id_of(self, cand: Candidate) -> str:
        """The listed id of ``cand`` ("" when not listed)."""
        return next((k for k, v in self.ids.items() if v.ref == cand.ref), "")


def _is_password(c: Candidate) -> bool:
    return bool(c.extra.get("is_password")) or c.descriptor.type.lower() == "password"


def secret_boxes(obs: Observation, redactor: Redactor) -> list[BBox]:
    """CSS px boxes to paint over: password fields and fields whose value holds a known secret."""
    out = []
    for c in obs.candidates:
        b = c.descriptor.bbox
        if b is None:
            continue
        if _is_password(c) or (c.value and redactor.contains_secret(c.value)):
            out.append(b)
    return out


def describe_candidate(c: Candidate, redactor: Redactor, *, value: bool = True) -> tuple[str, str, str]:
    """(role, quoted name, state) of a candidate for a prompt; secrets masked, passwords never shown."""
    d = c.descriptor
    role = d.role or d.tag or "element"
    name = redactor.text(" ".join((d.label_text or d.placeholder or d.title or d.alt or "").split()))[:60]
    state = []
    state.append("enabled" if c.enabled else "disabled")
    if not c.visible:
        state.append("hidden")
    if c.covered:
        state.append("covered")
    if c.checked is not None:
        state.append("checked" if c.checked else "unchecked")
    if value and c.editable:
        shown = MASK if _is_password(c) and c.value else redactor.text(c.value)[:40]
        state.append(f"value {shown!r}" if shown else "empty")
    return role, f"'{name}'" if name else "(no name)", ", ".join(state)


def draw_grid(img: "object", grid: Grid) -> None:
    """Draw the labelled grid (P2) on a PIL RGBA image in place: 2 px semi-transparent red lines, cell labels."""
    from PIL import ImageDraw, ImageFont

    draw = ImageDraw.Draw(img, "RGBA")
    w, h = img.size  # type: ignore[attr-defined]
    for c in range(1, grid.cols):
        x = round(c * grid.cell_width)
        draw.rectangle((x - GRID_LINE_PX // 2, 0, x - GRID_LINE_PX // 2 + GRID_LINE_PX - 1, h - 1), fill=GRID_RGBA)
    for r in range(1, grid.rows):
        y = round(r * grid.cell_height)
        draw.rectangle((0, y - GRID_LINE_PX // 2, w - 1, y - GRID_LINE_PX // 2 + GRID_LINE_PX - 1), fill=GRID_RGBA)
    size = max(10, min(18, int(min(grid.cell_width, grid.cell_height) / 4)))
    try:
        font = ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1
        font = ImageFont.load_default()
    for label in grid.labels():
        box = grid.cell_box(label)
        x, y = box.x + GRID_LINE_PX + 1, box.y + GRID_LINE_PX
        tw = draw.textlength(label, font=font)
        draw.rectangle((x - 1, y, x + tw + 1, y + size + 2), fill=(255, 255, 255, 150))
        draw.text((x, y), label, fill=(200, 0, 0, 230), font=font)


def grounding_view(obs: Observation, *, redactor: Redactor | None = None, rows: int = DEFAULT_ROWS,
                   cols: int = DEFAULT_COLS, width: int = DEFAULT_WIDTH_PX, image: bool = True) -> GroundingView:
    """Mask, downscale, draw the grid and list the candidates of ``obs``.

    Parameters
    ----------
    obs : Observation
        Candidates in CSS px; screenshot (device px) optional.
    redactor : Redactor | None
        Known secret values: masked in names and values, and fields holding
        one are painted over in the image.
    rows, cols : int
        Grid size (P2: 10 x 10).
    width : int
        Widest image sent, px (:data:`DEFAULT_WIDTH_PX`).
    image : bool
        False: the listing only (a text-only call).
    """
    red = redactor or Redactor(())
    vw, vh = (max(1, obs.viewport[0]), max(1, obs.viewport[1]))
    png = b""
    masked: list[tuple[float, float, float, float]] = []
    if image and obs.screenshot_png:
        from PIL import Image

        boxes = secret_boxes(obs, red)
        dev = css_boxes_to_device(boxes, obs.device_pixel_ratio or 1.0)
        masked = [tuple(b) for b in dev]  # type: ignore[misc]
        shot = mask_boxes_png(obs.screenshot_png, dev, pad=2)
        with Image.open(io.BytesIO(shot)) as src:
            img = src.convert("RGB")
        if img.width > width:
            img = img.resize((width, max(1, round(img.height * width / img.width))), Image.LANCZOS)
        img = img.convert("RGBA")
        grid = Grid(img.width, img.height, rows, cols)
        draw_grid(img, grid)
        buf = io.BytesIO()
        img.convert("RGB").save(buf, format="PNG")
        png, size = buf.getvalue(), (img.width, img.height)
        scale = img.width / vw
    else:
        scale = min(1.0, width / vw)
        size = (max(1, round(vw * scale)), max(1, round(vh * scale)))
        grid = Grid(size[0], size[1], rows, cols)
    shown = [c for c in obs.candidates if c.visible and c.descriptor.bbox is not None]
    shown.sort(key=lambda c: (c.descriptor.bbox.y, c.descriptor.bbox.x))  # type: ignore[union-attr]
    ids: dict[str, Candidate] = {}
    cells: dict[str, str] = {}
    lines = []
    for i, c in enumerate(shown[:MAX_LISTED], start=1):
        key = f"e{i}"
        ids[key] = c
        cells[key] = grid.cell_of_box(c.descriptor.bbox.scaled(scale))  # type: ignore[union-attr]
        role, name, state = describe_candidate(c, red)
        lines.append(f"{key} | {role} | {name} | {state} | {cells[key]}")
    if len(shown) > MAX_LISTED:
        lines.append(f"(+{len(shown) - MAX_LISTED} more elements further down, not listed)")
    return GroundingView(png, size, scale, grid, ids, cells, "\n".join(lines) or "(no interactive element)",
                         tuple(masked))


Verdict = Literal["agree", "conflict", "outside", "not_actionable", "unknown_id", "rules"]


@dataclass(frozen=True, slots=True)
class Grounded:
    """What an answer points at.

    Attributes
    ----------
    verdict : str
        ``agree`` (cell and element agree: confidence 1.0), ``rules`` (the
        cell disagreed, a unique name match found it), ``conflict``,
        ``outside`` (no such cell), ``unknown_id``, ``not_actionable``
        (hidden, disabled or covered).
    candidate : Candidate | None
        The element to act on; None unless the verdict is ``agree`` or ``rules``.
    element_id : str
        Its listed id.
    confidence : float
        0..1.
    reason : str
        One sentence.
    """

    verdict: Verdict
    candidate: Candidate | None
    element_id: str
    confidence: float
    reason: str

    @property
    def ok(self) -> bool:
        return self.verdict in ("agree", "rules") and self.candidate is not None


def _name(c: Candidate) -> str:
    d = c.descriptor
    return d.label_text or d.placeholder or d.title or d.alt or ""


def _matches(desc: str, c: Candidate) -> float:
    name = _name(c)
    if not desc or not name:
        return 0.0
    return float(fuzz.token_set_ratio(desc.lower(), name.lower()))


def _not_actionable(c: Candidate, kind: str) -> str:
    if not c.visible:
        return "hidden"
    if c.covered:
        return "covered by another element"
    if spec(kind).needs_enabled and not c.enabled:
        return "disabled"
    if spec(kind).needs_editable and not c.editable:
        return "not an editable field"
    return ""


def _checked(view: GroundingView, key: str, kind: str, verdict: Verdict, conf: float, why: str) -> Grounded:
    c = view.ids[key]
    bad = _not_actionable(c, kind)
    if bad:
        return Grounded("not_actionable", None, key, 0.0,
                        f"the model pointed at {key} ({_name(c)[:40]!r}), which is {bad}: not acted on")
    return Grounded(verdict, c, key, conf, why)


def intersect(answer: GroundAnswer, view: GroundingView) -> Grounded:
    """Tie ``answer`` to one listed candidate through its grid cell (P2).

    Never raises; a bad cell, an unknown id or an element that cannot take
    the action is a verdict with the reason.
    """
    try:
        cell = view.grid.cell_box(answer.grid)
    except ValueError:
        return Grounded("outside", None, answer.element_id or "", 0.0,
                        f"the model named cell {answer.grid!r}, outside the {view.grid.rows}x{view.grid.cols} grid "
                        "of the page")
    in_cell = [k for k in view.ids if (b := view.box_of(k)) is not None and b.intersection_area(cell) > 0]
    if answer.element_id is not None:
        if answer.element_id not in view.ids:
            return Grounded("unknown_id", None, answer.element_id, 0.0,
                            f"the model named element {answer.element_id!r}, which is not listed")
        if answer.element_id in in_cell:
            chosen = view.ids[answer.element_id]
            if answer.element_desc and _name(chosen) and _matches(answer.element_desc, chosen) < DESC_MATCH:
                # the id and the cell agree, the words do not: ids are positions in this listing (a cached or
                # stale answer, or a model that mixed them up) - the element is not the one described
                return Grounded("conflict", None, answer.element_id, 0.0,
                                f"the model described {answer.element_desc[:40]!r} but element {answer.element_id} "
                                f"is {_name(chosen)[:40]!r}")
            return _checked(view, answer.element_id, answer.action, "agree", 1.0,
                            f"cell {answer.grid} and element {answer.element_id} agree")
        return Grounded("conflict", None, answer.element_id, 0.0,
                        f"element {answer.element_id} ({_name(view.ids[answer.element_id])[:40]!r}) is in "
                        f"{view.cells[answer.element_id]}, not in the cell {answer.grid} the model named")
    scored = sorted(((_matches(answer.element_desc, view.ids[k]), k) for k in in_cell), reverse=True)
    good = [k for s, k in scored if s >= DESC_MATCH]
    if len(good) == 1 or (good and scored[0][0] > scored[1][0]):
        return _checked(view, good[0], answer.action, "agree", 1.0,
                        f"cell {answer.grid} holds {good[0]}, named like {answer.element_desc!r}")
    if len(in_cell) == 1 and not answer.element_desc:
        return _checked(view, in_cell[0], answer.action, "agree", 1.0, f"cell {answer.grid} holds only {in_cell[0]}")
    what = "nothing" if not in_cell else f"{len(in_cell)} elements, none clearly {answer.element_desc!r}"
    return Grounded("conflict", None, "", 0.0, f"cell {answer.grid} holds {what}")


def rule_fallback(answer: GroundAnswer, view: GroundingView, grounded: Grounded) -> Grounded:
    """After a conflict: the one listed element whose name matches the description (ratio >= 80) takes it.

    Only for a ``conflict``; anything else (an outside cell, a disabled
    target) is returned unchanged - the decider escalates.  Two or more
    matches, or none, keep the conflict.
    """
    if grounded.verdict != "conflict" or not answer.element_desc:
        return grounded
    hits = [k for k in view.ids if _matches(answer.element_desc, view.ids[k]) >= RULE_MATCH]
    if answer.element_id in hits:
        hits = [answer.element_id]  # the id and the description agree; only the cell was off
    if len(hits) != 1:
        return grounded
    g = _checked(view, hits[0], answer.action, "rules", 0.8,
                 f"{grounded.reason}; by its name alone {hits[0]} is {answer.element_desc!r}")
    return g if g.ok else grounded


def listing_of(cands: Sequence[Candidate], redactor: Redactor, prefix: str = "c") -> tuple[dict[str, Candidate], str]:
    """Ids and lines for a text-only list (tie-breaks): ``c1 | button | 'Save' | enabled | in 'Edit request'``."""
    ids, lines = {}, []
    for i, c in enumerate(cands, start=1):
        key = f"{prefix}{i}"
        ids[key] = c
        role, name, state = describe_candidate(c, redactor, value=False)
        ctx = redactor.text(c.descriptor.container)[:40]
        near = redactor.text(", ".join(c.descriptor.neighbours[:3]))[:60]
        lines.append(f"{key} | {role} | {name} | {state}" + (f" | in {ctx!r}" if ctx else "")
                     + (f" | near {near!r}" if near else ""))
    return ids, "\n".join(lines)
