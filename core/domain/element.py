"""Element descriptors: what Steadyhand remembers about a target element.

An element is remembered by its meaning (role, accessible name, label, text,
neighbours, container) and only secondarily by its position (architecture
rule 5).  All geometry is in CSS pixels relative to the top-left corner of
the top-level viewport; multiply by ``device_pixel_ratio`` to get device
pixels (screenshot pixels).
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, Mapping

__all__ = ["BBox", "Anchor", "Scope", "ElementDescriptor", "Candidate", "GROUND_TRUTH_ATTRIBUTES", "NAMED_BY_AUTHOR"]

#: Attributes that carry the demo app's hidden ground-truth identity.  The
#: engine, the locator and the recorder must never read them; the in-page
#: observer skips them and :meth:`ElementDescriptor.from_mapping` drops them.
GROUND_TRUTH_ATTRIBUTES = ("data-gt", "data-gt-id")


@dataclass(frozen=True, slots=True)
class BBox:
    """Axis-aligned bounding box in CSS pixels (viewport coordinates).

    Attributes
    ----------
    x, y : float
        Top-left corner, CSS px from the viewport's top-left corner.
    width, height : float
        Size in CSS px.
    """

    x: float
    y: float
    width: float
    height: float

    @property
    def center(self) -> tuple[float, float]:
        """Centre point ``(cx, cy)`` in CSS px."""
        return (self.x + self.width / 2.0, self.y + self.height / 2.0)

    @property
    def area(self) -> float:
        """Area in CSS px squared."""
        return max(0.0, self.width) * max(0.0, self.height)

    def scaled(self, factor: float) -> "BBox":
        """Return the box multiplied by ``factor`` (e.g. the device pixel ratio)."""
        return BBox(self.x * factor, self.y * factor, self.width * factor, self.height * factor)

    def intersection_area(self, other: "BBox") -> float:
        """Area of overlap with ``other`` in px squared (0 when disjoint)."""
        w = min(self.x + self.width, other.x + other.width) - max(self.x, other.x)
        h = min(self.y + self.height, other.y + other.height) - max(self.y, other.y)
        return w * h if w > 0 and h > 0 else 0.0

    def to_list(self) -> list[float]:
        """``[x, y, width, height]`` rounded to 0.1 px, for files."""
        return [round(self.x, 1), round(self.y, 1), round(self.width, 1), round(self.height, 1)]


@dataclass(frozen=True, slots=True)
class Anchor:
    """The stable labelled element a target sits by, and the offset to it.

    Recorded with every step (issue "record by demonstration"): when the
    target's own label changes, the anchor still says where it is.  It is,
    in order: the field's own label, its fieldset's legend, the nearest
    heading of its section, its column header (a cell or a control in a
    table); never a link or a button, and never farther than the target's
    section (its nearest sectioning ancestor: form, fieldset, section,
    table, dialog, main...).  A target whose section offers none has no
    anchor.

    Attributes
    ----------
    text : str
        The anchor's visible text or accessible name (at most 80 chars).
    role : str
        Its ARIA role or lower-case tag (``"heading"``, ``"label"``).
    dx, dy : float
        Offset from the anchor's box centre to the target's box centre, CSS px.
    """

    text: str
    role: str = ""
    dx: float = 0.0
    dy: float = 0.0

    def to_mapping(self) -> dict[str, Any]:
        """``{"text", "role", "dx", "dy"}`` with offsets rounded to 0.1 px."""
        return {"text": self.text, "role": self.role, "dx": round(self.dx, 1), "dy": round(self.dy, 1)}

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> "Anchor":
        """Build from a mapping; raises ``KeyError``/``ValueError`` on bad fields."""
        return cls(text=str(data["text"]), role=str(data.get("role", "")),
                   dx=float(data.get("dx", 0.0)), dy=float(data.get("dy", 0.0)))


@dataclass(frozen=True, slots=True)
class Scope:
    """The nearest container that makes a target's role and accessible name unique on its page.

    Recorded when the page holds another element of the target's role whose accessible name contains the
    target's (an "Edit" link in each table row): the nearest row, landmark or labelled container (a named
    ``row``, ``listitem``, ``region``, ``form``, ``dialog``, ``navigation``, ``group``...) inside which the
    target is the only one.  The exporter writes it as Playwright's chained locator
    (``page.get_by_role("row", name="Bob ...").get_by_role("link", name="Edit")``) so strict mode passes;
    the replay does not read it.

    Attributes
    ----------
    role : str
        The container's ARIA role (``"row"``).
    name : str
        Its accessible name (at most 200 chars), matched as a substring as Playwright's ``get_by_role`` does.
    """

    role: str
    name: str

    def to_mapping(self) -> dict[str, Any]:
        """``{"role", "name"}``."""
        return {"role": self.role, "name": self.name}

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> "Scope":
        """Build from a mapping; raises ``KeyError`` on a missing field."""
        return cls(role=str(data["role"]), name=str(data["name"]))


#: Roles whose accessible name only an author gives (aria-label, aria-labelledby), never their content (WAI-ARIA
#: 1.2 "Name From: author"): a recorded scope of one of them was named by its text, which Playwright's
#: ``get_by_role(..., name=...)`` never matches; a locator within it filters by that text instead (the
#: exported script, ``core.export.playwright_test``; the fast path's scoped locator, ``core.engine.fastpath``).
NAMED_BY_AUTHOR = frozenset({"listitem", "list", "group", "table", "rowgroup", "grid", "tabpanel", "form",
                             "article", "figure", "toolbar", "listbox", "menu", "menubar", "tree"})


#: Field names of each descriptor class (:meth:`ElementDescriptor.from_mapping`), read once.
_FIELD_NAMES: dict[type, frozenset[str]] = {}


@dataclass(frozen=True, slots=True)
class ElementDescriptor:
    """Everything known about one element, as stored in a flow step.

    Every field is optional: a step authored by hand may carry only a
    ``selector`` in the step and an empty descriptor; its first successful
    run fills the descriptor in.

    Attributes
    ----------
    tag : str
        Lower-case tag name (``"button"``).
    role : str
        ARIA role, explicit or implicit (``"button"``, ``"textbox"``).
    name : str
        Accessible name (aria-label, aria-labelledby, label, text, title...).
    label : str
        Text of the associated ``<label>``, if any.
    text : str
        Visible text content, whitespace-collapsed, at most 200 chars.
    placeholder, id, name_attr, type, href, test_id, alt, title : str
        The element's attributes of those names (``name_attr`` is the HTML
        ``name`` attribute; ``test_id`` is ``data-testid``).
    classes : tuple[str, ...]
        CSS classes.
    css_path, xpath : str
        Absolute CSS path and XPath from the document root of its frame.
    bbox : BBox | None
        Box in CSS px in top-level viewport coordinates at capture time.
    viewport : tuple[int, int] | None
        Viewport ``(width, height)`` in CSS px at capture time.
    device_pixel_ratio : float
        Device pixels per CSS pixel at capture time.
    scroll : tuple[float, float] | None
        ``(scrollX, scrollY)`` of the main frame in CSS px at capture time, so
        ``bbox`` plus ``scroll`` is the box in page coordinates (a click that
        scrolled the element into view leaves a viewport box far from where
        the page, seen from its top, has it); None when unknown (older files).
    neighbours : tuple[str, ...]
        Texts of the nearest visible labelled elements, nearest first.
    container : str
        Title of the enclosing dialog or form (``"Confirm export"``).
    frame : str
        Frame path: ``""`` for the main frame, else the iframe names/urls
        joined by ``" > "``.
    shadow : str
        CSS paths of the shadow hosts enclosing the element, outermost
        first, joined by ``" >> "`` (``""`` outside shadow roots).
    anchor : Anchor | None
        Nearest stable labelled element and the offset to it (recorded).
    crop : str
        PNG crop of the element (device px) at record time: a path relative
        to the flow file's folder (``"leave_request.crops/s3.png"``).
    imported : bool
        True for hints an import wrote (a Selenium IDE target list: id,
        name attribute, link text, tag) that no page has confirmed yet; the
        first run that passes the step replaces them by the descriptor it
        captured, as for a selector-only step.  False for everything
        recorded or captured (and then omitted from files).
    exact : bool | None
        True when the page held another element of the same role whose accessible name contains this one's
        ("Save" beside "Save draft"), so a locator must match the name whole (Playwright's ``exact=True``, what
        codegen writes then); False when the recorder looked and saw none: the name is matched as codegen
        matches it, case-insensitively as a substring, which keeps a test passing when a release appends to a
        label; None (omitted from files) when nobody looked (a flow recorded before the recorder did, an
        import): the exporter then matches the name whole, which never trips strict mode on a page that has
        "Save" beside "Save and Continue Editing".
    scope : Scope | None
        The nearest container that makes the target unique when its role and name alone are not (recorded);
        None when they are unique or not recorded.
    """

    tag: str = ""
    role: str = ""
    name: str = ""
    label: str = ""
    text: str = ""
    placeholder: str = ""
    id: str = ""
    name_attr: str = ""
    type: str = ""
    classes: tuple[str, ...] = ()
    href: str = ""
    test_id: str = ""
    alt: str = ""
    title: str = ""
    css_path: str = ""
    xpath: str = ""
    bbox: BBox | None = None
    viewport: tuple[int, int] | None = None
    device_pixel_ratio: float = 1.0
    scroll: tuple[float, float] | None = None
    neighbours: tuple[str, ...] = ()
    container: str = ""
    frame: str = ""
    shadow: str = ""
    anchor: Anchor | None = None
    crop: str = ""
    imported: bool = False
    exact: bool | None = None
    scope: Scope | None = None

    @property
    def is_empty(self) -> bool:
        """True when no identifying field is set."""
        return not any((self.tag, self.role, self.name, self.text, self.id, self.css_path, self.xpath,
                        self.name_attr, self.test_id, self.label, self.placeholder, self.alt))

    @property
    def label_text(self) -> str:
        """The best human label: accessible name, else label, text, placeholder."""
        return self.name or self.label or self.text or self.placeholder or self.alt or self.title

    def to_mapping(self) -> dict[str, Any]:
        """Plain dict for files, omitting empty fields; key order is stable."""
        out: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if v in ("", (), None) or (f.name == "device_pixel_ratio" and v == 1.0 and self.bbox is None):
                continue
            if f.name == "imported" and not v:
                continue
            if f.name == "exact":
                if v is not None:
                    out[f.name] = bool(v)
                continue
            if isinstance(v, (BBox,)):
                v = v.to_list()
            elif isinstance(v, (Anchor, Scope)):
                v = v.to_mapping()
            elif isinstance(v, tuple):
                v = list(v)
            out[f.name] = v
        return out

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], **typed: Any) -> "ElementDescriptor":
        """Build from a dict (file or in-page observer output).

        Unknown keys and ground-truth attributes are ignored.  ``typed``: fields given as they are kept (a
        ``BBox``, a ``(w, h)`` tuple...), taken as given instead of ``data``'s (one construction instead of
        :meth:`with_` after it: the observer builds one descriptor per element per look).
        """
        kw: dict[str, Any] = dict(typed)
        names = _FIELD_NAMES.get(cls)
        if names is None:
            names = _FIELD_NAMES[cls] = frozenset(f.name for f in fields(cls))
        for k, v in data.items():
            if k not in names or v is None or k in typed:
                continue
            if k == "bbox":
                if isinstance(v, Mapping):
                    v = BBox(float(v["x"]), float(v["y"]), float(v["width"]), float(v["height"]))
                else:
                    v = BBox(*(float(c) for c in v))
            elif k == "anchor":
                v = v if isinstance(v, Anchor) else Anchor.from_mapping(v)
            elif k == "viewport":
                v = (int(v[0]), int(v[1]))
            elif k == "scroll":
                v = (float(v[0]), float(v[1]))
            elif k in ("classes", "neighbours"):
                v = tuple(str(c) for c in v)
            elif k == "device_pixel_ratio":
                v = float(v)
            elif k == "scope":
                if not isinstance(v, Scope) and not (isinstance(v, Mapping) and v.get("role") and v.get("name")):
                    continue  # an empty scope from the page: none
                v = v if isinstance(v, Scope) else Scope.from_mapping(v)
            elif k in ("imported", "exact"):
                v = v is True or str(v).lower() == "true"
            else:
                v = str(v)
            kw[k] = v
        return cls(**kw)

    def with_(self, **changes: Any) -> "ElementDescriptor":
        """Copy with some fields replaced."""
        return replace(self, **changes)


@dataclass(frozen=True, slots=True)
class Candidate:
    """One interactive element of an observation, addressable for acting.

    Attributes
    ----------
    ref : str
        Ephemeral handle valid for the observation it came from:
        ``"<frame index>:<element index>"``.
    descriptor : ElementDescriptor
        What the element is.
    enabled, visible, editable, checked : bool | None
        Live state at observation time.
    value : str
        Current value of a form control (masked for secrets).
    covered : bool
        True when the centre point is covered by another element (mask,
        overlay) - S4 pre-check.
    grid_cell : str
        Grid cell (``"C5"``) of the box centre - P2.
    """

    ref: str
    descriptor: ElementDescriptor
    enabled: bool = True
    visible: bool = True
    editable: bool = False
    checked: bool | None = None
    value: str = ""
    covered: bool = False
    grid_cell: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)
