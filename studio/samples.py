"""Sample data for previews and tests: a small project and rendered demo pages.

Nothing here imports Qt: screenshots are drawn with Pillow so that the fake
engine can produce them on its own thread, exactly like the real engine
hands over PNG bytes.  Geometry follows the engine's conventions: element
boxes in CSS px (viewport coordinates), screenshots in device px
(CSS px * device pixel ratio).
"""
from __future__ import annotations

import io
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Literal, Mapping, Sequence

from PIL import Image, ImageDraw, ImageFont

from core.domain import (
    Action, Assertion, BBox, Candidate, ElementDescriptor, EscalationCandidate, Flow, Observation, ScoredCandidate,
    StateSignature, Step,
)
from core.domain.element import Anchor
from core.domain.flow import StepEvidence
from core.perception.grid import Grid

__all__ = [
    "SAMPLE_VIEWPORT", "SAMPLE_DPR", "PageElement", "SamplePage", "SampleProject",
    "sample_project", "sample_page", "render_page", "page_candidates", "find_candidate", "offered_candidates",
    "sample_observation", "RecordedSample", "crop_element", "sample_recording", "SAMPLE_RECORDING_NAME",
]

#: Viewport of the sample pages in CSS px.
SAMPLE_VIEWPORT = (1280, 720)
#: Device pixel ratio of the sample screenshots: 1280 * 1.25 = 1600 device px,
#: above the 1440 px minimum width of P2.
SAMPLE_DPR = 1.25

ElementKind = Literal[
    "navbar", "brand", "navlink", "card", "heading", "text", "label", "input", "button",
    "primary", "link", "checkbox", "alert", "select", "table",
]
_INTERACTIVE = {"navlink", "input", "button", "primary", "link", "checkbox", "select"}
_ROLES = {
    "navlink": "link", "link": "link", "input": "textbox", "button": "button",
    "primary": "button", "checkbox": "checkbox", "select": "combobox",
}
_TAGS = {
    "navlink": "a", "link": "a", "input": "input", "button": "button", "primary": "button",
    "checkbox": "input", "select": "select",
}


@dataclass(frozen=True, slots=True)
class PageElement:
    """One drawn element of a sample page.

    Attributes
    ----------
    kind : ElementKind
        How it is drawn; interactive kinds become candidates.
    text : str
        Visible text (or the accessible name of an input / checkbox).
    box : tuple[float, float, float, float]
        ``(x, y, width, height)`` in CSS px.
    value : str
        Current value of an input (shown masked when ``secret``).
    secret : bool
        Password field: its value is drawn as bullets.
    enabled : bool
        False draws the control greyed out.
    """

    kind: ElementKind
    text: str
    box: tuple[float, float, float, float]
    value: str = ""
    secret: bool = False
    enabled: bool = True


@dataclass(frozen=True, slots=True)
class SamplePage:
    """A sample page: URL, title and its elements in paint order."""

    key: str
    url: str
    title: str
    elements: tuple[PageElement, ...]


@dataclass(frozen=True, slots=True)
class SampleProject:
    """Stand-in for ``core.project.Project`` (name, root, flows)."""

    name: str
    root: Path
    flows: Mapping[str, Flow] = field(default_factory=dict)


# --- pages ----------------------------------------------------------------------------------


def _chrome(active: str) -> list[PageElement]:
    links = [("Home", 930), ("Reports", 1000), ("Help", 1085)]
    out = [PageElement("navbar", "", (0, 0, 1280, 56)), PageElement("brand", "Acme Portal", (24, 14, 200, 28))]
    out += [PageElement("navlink", name, (x, 16, 70 if name != "Help" else 50, 24),
                        enabled=name != active) for name, x in links]
    out.append(PageElement("button", "Sign up", (1150, 12, 106, 32)))
    return out


def _login(key: str, *, user: str = "", password: str = "", alert: str = "",
           locked: bool = False) -> SamplePage:
    top = 120
    els = _chrome("")
    els.append(PageElement("card", "", (440, top, 400, 470)))
    els.append(PageElement("heading", "Sign in to your account", (472, top + 28, 336, 30)))
    y = top + 72
    if alert:
        els.append(PageElement("alert", alert, (472, y, 336, 40)))
        y += 52
    els += [
        PageElement("label", "User name", (472, y, 336, 18)),
        PageElement("input", "User name", (472, y + 22, 336, 40), value=user, enabled=not locked),
        PageElement("label", "Password", (472, y + 76, 336, 18)),
        PageElement("input", "Password", (472, y + 98, 336, 40), value=password, secret=True,
                    enabled=not locked),
        PageElement("checkbox", "Remember me", (472, y + 152, 18, 18), enabled=not locked),
        PageElement("text", "Remember me", (498, y + 152, 150, 18)),
        PageElement("primary", "Log in", (472, y + 188, 336, 44), enabled=not locked),
        PageElement("link", "Forgot password?", (472, y + 248, 140, 20)),
    ]
    if locked:
        els.append(PageElement("link", "Unlock account", (680, y + 248, 128, 20)))
        els.append(PageElement("button", "Unlock account", (1098, 660, 158, 36)))
    return SamplePage(key, "http://127.0.0.1:8765/login", "Sign in - Acme Portal", tuple(els))


def _reports(key: str, *, exported: bool = False, fmt: str = "PDF") -> SamplePage:
    els = _chrome("Reports")
    els += [
        PageElement("heading", "Quarterly reports", (48, 88, 500, 34)),
        PageElement("select", "Format", (860, 90, 150, 36), value=fmt),
        PageElement("primary", "Export", (1024, 90, 100, 36)),
        PageElement("button", "Download", (1136, 90, 110, 36), enabled=exported),
        PageElement("table", "Region|Q1|Q2|Q3|Q4;North|1,204|1,310|1,187|1,402;"
                             "South|988|1,041|1,120|1,096;East|1,450|1,502|1,611|1,587;"
                             "West|876|912|955|1,003", (48, 150, 1184, 260)),
    ]
    if exported:
        els.append(PageElement("alert", "Export ready: q3-report.csv (12 kB)", (48, 430, 520, 40)))
    return SamplePage(key, "http://127.0.0.1:8765/reports", "Reports - Acme Portal", tuple(els))


@lru_cache(maxsize=None)
def sample_page(key: str) -> SamplePage:
    """Return the sample page called ``key``.

    Keys: ``login``, ``login_user``, ``login_filled``, ``login_error``,
    ``login_locked``, ``reports``, ``reports_csv``, ``reports_exported``.

    Raises
    ------
    KeyError
        For an unknown key.
    """
    pages = {
        "login": lambda: _login("login"),
        "login_user": lambda: _login("login_user", user="alice"),
        "login_filled": lambda: _login("login_filled", user="alice", password="wrong-1"),
        "login_error": lambda: _login("login_error", user="alice",
                                      alert="Invalid user name or password (attempt 2 of 3)"),
        "login_locked": lambda: _login("login_locked", user="alice", locked=True,
                                       alert="Account locked after 3 failed attempts"),
        "reports": lambda: _reports("reports"),
        "reports_csv": lambda: _reports("reports_csv", fmt="CSV"),
        "reports_exported": lambda: _reports("reports_exported", fmt="CSV", exported=True),
    }
    return pages[key]()


# --- rendering ------------------------------------------------------------------------------

_FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")


@lru_cache(maxsize=64)
def _font(size: int, bold: bool = False) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    name = "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"
    try:
        return ImageFont.truetype(str(_FONT_DIR / name), size)
    except OSError:
        return ImageFont.load_default(size)


@lru_cache(maxsize=32)
def render_page(page: SamplePage, *, dpr: float = SAMPLE_DPR,
                viewport: tuple[int, int] = SAMPLE_VIEWPORT) -> bytes:
    """Draw ``page`` as a viewport screenshot.

    Parameters
    ----------
    page : SamplePage
        What to draw; boxes in CSS px.
    dpr : float
        Device pixel ratio; the PNG is ``viewport * dpr`` device px.
    viewport : tuple[int, int]
        Viewport ``(width, height)`` in CSS px.

    Returns
    -------
    bytes
        PNG image, device px.
    """
    w, h = round(viewport[0] * dpr), round(viewport[1] * dpr)
    img = Image.new("RGB", (w, h), (244, 246, 250))
    d = ImageDraw.Draw(img)

    def px(box: tuple[float, float, float, float]) -> tuple[int, int, int, int]:
        x, y, bw, bh = box
        return (round(x * dpr), round(y * dpr), round((x + bw) * dpr) - 1, round((y + bh) * dpr) - 1)

    def text(x: float, y: float, s: str, size: float, fill: tuple[int, int, int], bold: bool = False) -> None:
        d.text((round(x * dpr), round(y * dpr)), s, font=_font(round(size * dpr), bold), fill=fill)

    r = round(6 * dpr)
    for el in page.elements:
        x, y, bw, bh = el.box
        grey = (160, 166, 176)
        if el.kind == "navbar":
            d.rectangle(px(el.box), fill=(28, 43, 74))
        elif el.kind == "brand":
            text(x, y + 2, el.text, 19, (255, 255, 255), bold=True)
        elif el.kind == "navlink":
            text(x, y + 3, el.text, 14, (200, 212, 235) if el.enabled else (255, 255, 255), bold=not el.enabled)
        elif el.kind == "card":
            d.rounded_rectangle(px((x + 2, y + 3, bw, bh)), r, fill=(226, 229, 236))
            d.rounded_rectangle(px(el.box), r, fill=(255, 255, 255), outline=(214, 219, 228), width=1)
        elif el.kind == "heading":
            text(x, y, el.text, 22, (24, 32, 48), bold=True)
        elif el.kind in ("text", "label"):
            text(x, y, el.text, 13, (60, 68, 84), bold=el.kind == "label")
        elif el.kind == "input":
            d.rounded_rectangle(px(el.box), round(4 * dpr), fill=(255, 255, 255) if el.enabled else (236, 238, 242),
                                outline=(176, 184, 198), width=max(1, round(dpr)))
            shown = "\u2022" * len(el.value) if el.secret else el.value
            text(x + 12, y + 11, shown, 15, (24, 32, 48) if el.enabled else grey)
        elif el.kind in ("button", "primary"):
            primary = el.kind == "primary"
            fill = (37, 99, 235) if primary else (255, 255, 255)
            if not el.enabled:
                fill = (203, 210, 222) if primary else (240, 242, 246)
            d.rounded_rectangle(px(el.box), round(4 * dpr), fill=fill,
                                outline=None if primary else (176, 184, 198), width=max(1, round(dpr)))
            fg = (255, 255, 255) if primary else ((37, 52, 84) if el.enabled else grey)
            f = _font(round(15 * dpr), True)
            tw = d.textlength(el.text, font=f) / dpr
            text(x + (bw - tw) / 2, y + (bh - 18) / 2, el.text, 15, fg, bold=True)
        elif el.kind == "link":
            text(x, y + 2, el.text, 13, (37, 99, 235))
        elif el.kind == "checkbox":
            d.rounded_rectangle(px(el.box), round(3 * dpr), fill=(255, 255, 255),
                                outline=(150, 158, 172), width=max(1, round(dpr)))
        elif el.kind == "alert":
            ok = el.text.startswith("Export")
            d.rounded_rectangle(px(el.box), round(4 * dpr), fill=(222, 247, 229) if ok else (254, 226, 226),
                                outline=(134, 214, 160) if ok else (248, 160, 160), width=1)
            text(x + 12, y + 11, el.text, 13, (22, 101, 52) if ok else (153, 27, 27), bold=True)
        elif el.kind == "select":
            d.rounded_rectangle(px(el.box), round(4 * dpr), fill=(255, 255, 255), outline=(176, 184, 198),
                                width=max(1, round(dpr)))
            text(x + 12, y + 9, f"{el.text}: {el.value}", 14, (24, 32, 48))
            text(x + bw - 22, y + 8, "\u25be", 14, (90, 98, 114))
        elif el.kind == "table":
            d.rectangle(px(el.box), fill=(255, 255, 255), outline=(214, 219, 228))
            rows = [row.split("|") for row in el.text.split(";")]
            rh = bh / len(rows)
            cw = bw / len(rows[0])
            for i, row in enumerate(rows):
                if i == 0:
                    d.rectangle(px((x, y, bw, rh)), fill=(236, 240, 247))
                elif i > 1:
                    d.line([(round(x * dpr), round((y + i * rh) * dpr)),
                            (round((x + bw) * dpr), round((y + i * rh) * dpr))], fill=(230, 233, 240))
                for j, cell in enumerate(row):
                    text(x + j * cw + 16, y + i * rh + rh / 2 - 9, cell, 14, (24, 32, 48), bold=i == 0 or j == 0)
    out = io.BytesIO()
    img.save(out, format="PNG", optimize=False, compress_level=1)
    return out.getvalue()


def page_candidates(page: SamplePage, *, dpr: float = SAMPLE_DPR,
                    viewport: tuple[int, int] = SAMPLE_VIEWPORT) -> tuple[Candidate, ...]:
    """Interactive elements of ``page`` as engine candidates (boxes in CSS px).

    Refs are ``"0:<n>"`` (main frame, element number in paint order of the
    interactive elements); grid cells use the default 10 x 10 grid over the
    viewport (P2).
    """
    grid = Grid(float(viewport[0]), float(viewport[1]))
    out: list[Candidate] = []
    for el in page.elements:
        if el.kind not in _INTERACTIVE:
            continue
        bbox = BBox(*el.box)
        desc = ElementDescriptor(
            tag=_TAGS[el.kind], role=_ROLES[el.kind], name=el.text,
            label=el.text if el.kind in ("input", "checkbox") else "",
            text=el.text if el.kind not in ("input", "checkbox") else "",
            type="password" if el.secret else ("checkbox" if el.kind == "checkbox" else ""),
            bbox=bbox, viewport=viewport, device_pixel_ratio=dpr,
        )
        out.append(Candidate(
            ref=f"0:{len(out)}", descriptor=desc, enabled=el.enabled,
            editable=el.kind == "input" and el.enabled,
            value=("\u2022" * len(el.value) if el.secret else el.value),
            grid_cell=grid.cell_of_box(bbox),
        ))
    return tuple(out)


def find_candidate(candidates: tuple[Candidate, ...], name: str, role: str = "") -> Candidate:
    """First candidate whose accessible name is ``name`` (and role, when given).

    Raises
    ------
    LookupError
        When none matches.
    """
    for c in candidates:
        if c.descriptor.name == name and (not role or c.descriptor.role == role):
            return c
    raise LookupError(f"no candidate named {name!r} (role {role!r})")


def offered_candidates(top: Sequence[ScoredCandidate],
                       candidates: tuple[Candidate, ...]) -> tuple[EscalationCandidate, ...]:
    """``top`` (a resolution's best candidates) as an escalation offers them: ref, label, score, box.

    The box (CSS px) is that of the candidate with the same ref in
    ``candidates`` (the observation the step was resolved on), None when the
    ref is not there - the shape the engine gives ``EscalationRaised``.
    """
    by_ref = {c.ref: c for c in candidates}
    return tuple(EscalationCandidate(s.ref, s.label, s.score,
                                     by_ref[s.ref].descriptor.bbox if s.ref in by_ref else None) for s in top)


def sample_observation(key: str = "login", *, dpr: float = SAMPLE_DPR,
                       viewport: tuple[int, int] = SAMPLE_VIEWPORT,
                       timestamp_ms: float = 0.0) -> Observation:
    """An observation of the sample page ``key`` with screenshot and candidates."""
    page = sample_page(key)
    cands = page_candidates(page, dpr=dpr, viewport=viewport)
    sig = StateSignature(
        url=page.url, title=page.title, interactive_count=len(cands),
        modal_count=0, text_digest=key, elements_digest=key, values_digest=key, loading=False,
        error_count=sum(1 for e in page.elements if e.kind == "alert"), focus="", digest=f"sig-{key}",
    )
    return Observation(
        url=page.url, title=page.title, viewport=viewport, device_pixel_ratio=dpr, scroll=(0.0, 0.0),
        candidates=cands, visible_text=" ".join(e.text for e in page.elements if e.text),
        signature=sig, screenshot_png=render_page(page, dpr=dpr, viewport=viewport),
        timestamp_ms=timestamp_ms,
    )


# --- project --------------------------------------------------------------------------------


def _target(name: str, role: str, tag: str) -> ElementDescriptor:
    return ElementDescriptor(tag=tag, role=role, name=name)


def sample_project(root: Path | None = None) -> SampleProject:
    """A project with two flows: ``login_lockout`` (P11) and ``export_report``."""
    login = Flow(
        name="login_lockout", start_url="/login", params={"user": "alice"}, secrets=("password",),
        description="Three failed logins lock the account",
        steps=(
            Step("s1", Action("navigate", "/login"), name="Open the login page"),
            Step("s2", Action("input", "{user}"), name="Type the user name", selector="#username",
                 target=_target("User name", "textbox", "input")),
            Step("s3", Action("input", "wrong-1"), name="Type a wrong password", selector="#password",
                 target=_target("Password", "textbox", "input")),
            Step("s4", Action("click"), name="Click Sign in", target=_target("Sign in", "button", "button"),
                 reversible=False),
            Step("s5", Action("click"), name="Click Sign in twice more",
                 target=_target("Sign in", "button", "button"), reversible=False),
            Step("s6", Action("click"), name="Click Unlock account",
                 target=_target("Unlock account", "link", "a")),
            Step("s7", Action("assert"), name="Check the lockout message",
                 assertions=(Assertion("text_appears", "Account locked"),)),
        ),
    )
    export = Flow(
        name="export_report", start_url="/reports", description="Export the quarterly report as CSV",
        steps=(
            Step("s1", Action("navigate", "/reports"), name="Open the reports page"),
            Step("s2", Action("select", "CSV"), name="Choose the CSV format",
                 target=_target("Format", "combobox", "select")),
            Step("s3", Action("click"), name="Click Export", target=_target("Export", "button", "button"),
                 reversible=False),
            Step("s4", Action("click"), name="Click Download", target=_target("Download", "button", "button")),
        ),
    )
    return SampleProject(name="demo", root=root or Path("projects/demo"),
                         flows={login.name: login, export.name: export})


# --- recording ------------------------------------------------------------------------------

#: Name of the sample recorded flow (:func:`sample_recording`).
SAMPLE_RECORDING_NAME = "export_csv_report"


@dataclass(frozen=True, slots=True)
class RecordedSample:
    """One step of the sample recording: the step, its element crop and the page it left."""

    step: Step
    crop_png: bytes
    page_after: str


def crop_element(page_key: str, box: tuple[float, float, float, float], *, dpr: float = SAMPLE_DPR,
                 pad: float = 4.0) -> bytes:
    """PNG crop (device px) of ``box`` (CSS px) on the rendered sample page ``page_key``, padded."""
    img = Image.open(io.BytesIO(render_page(sample_page(page_key), dpr=dpr)))
    x, y, w, h = box
    area = (max(0, round((x - pad) * dpr)), max(0, round((y - pad) * dpr)),
            min(img.width, round((x + w + pad) * dpr)), min(img.height, round((y + h + pad) * dpr)))
    out = io.BytesIO()
    img.crop(area).save(out, format="PNG", compress_level=1)
    return out.getvalue()


def _element(page_key: str, kind: str, text: str) -> PageElement:
    for el in sample_page(page_key).elements:
        if el.kind == kind and el.text.startswith(text):
            return el
    raise LookupError(f"no {kind} {text!r} on {page_key}")


def _recorded(sid: str, page_key: str, kind: str, text: str, action: Action, *, name: str, after: str,
              expect: str, observed: tuple[str, ...], anchor: Anchor | None = None,
              assertions: tuple[Assertion, ...] = ()) -> RecordedSample:
    el = _element(page_key, kind, text)
    role = _ROLES.get(kind, "alert" if kind == "alert" else "")
    desc = ElementDescriptor(
        tag=_TAGS.get(kind, "div"), role=role, name=el.text,
        label=el.text if kind in ("input", "checkbox") else "",
        text=el.text if kind not in ("input", "checkbox") else "",
        type="password" if el.secret else "", bbox=BBox(*el.box), viewport=SAMPLE_VIEWPORT,
        device_pixel_ratio=SAMPLE_DPR, anchor=anchor, crop=f"{SAMPLE_RECORDING_NAME}.crops/{sid}.png",
    )
    step = Step(sid, action, name=name, target=desc, expect=expect, assertions=assertions,
                recorded=StepEvidence(f"sig-{page_key}", f"sig-{after}", observed))
    return RecordedSample(step, crop_element(page_key, el.box), after)


@lru_cache(maxsize=1)
def sample_recording() -> tuple[RecordedSample, ...]:
    """Seven steps as the recorder would report them: log in, open Reports, export as CSV, check.

    The password step carries ``{password}`` (secret values are never
    recorded); crops are cut from the rendered sample pages.
    """
    form = Anchor("Sign in to your account", "heading")
    return (
        _recorded("s1", "login_user", "input", "User name", Action("input", "alice"), name="Type the user name",
                  after="login_user", expect="value", observed=("value",), anchor=form),
        _recorded("s2", "login_filled", "input", "Password", Action("input", "{password}"),
                  name="Type the password", after="login_filled", expect="value", observed=("value",),
                  anchor=form),
        _recorded("s3", "login_filled", "primary", "Log in", Action("click"), name="Click Log in",
                  after="reports", expect="navigation", observed=("navigation", "content"), anchor=form),
        _recorded("s4", "reports", "navlink", "Reports", Action("click"), name="Click Reports",
                  after="reports", expect="none", observed=()),
        _recorded("s5", "reports", "select", "Format", Action("select", "CSV"), name="Choose Format CSV",
                  after="reports_csv", expect="value", observed=("value",),
                  anchor=Anchor("Quarterly reports", "heading")),
        _recorded("s6", "reports_csv", "primary", "Export", Action("click"), name="Click Export",
                  after="reports_exported", expect="content", observed=("content", "enabled")),
        _recorded("s7", "reports_exported", "alert", "Export ready", Action("assert"),
                  name="Check 'Export ready' is shown", after="reports_exported", expect="none", observed=(),
                  assertions=(Assertion("text_contains", "Export ready"),)),
    )
