"""A scripted, in-memory :class:`~core.perception.driver.Driver` for unit tests.

No browser: a page is a list of element specs (plain dicts), and what an
action does is scripted per ``(url path, element id, action kind)``.  The
observations are real :class:`~core.domain.Observation` objects whose
signatures come from :func:`core.state.signature.light_signature`, so the
engine's verification logic sees the same digests it would see on a real
page.  It ships beside the real driver so any test of pure logic can use it::

    fake = FakeDriver(
        pages={"/login": [{"id": "user", "role": "textbox", "label": "User name"},
                          {"id": "go", "role": "button", "text": "Sign in"}],
               "/home": FakePage([{"id": "out", "role": "button", "text": "Sign out"}], title="Home")},
        reactions={("/login", "go", "click"): navigate("/home")},
    )

Element spec keys (all optional but ``id``): ``role``, ``tag``, ``name``,
``label``, ``text``, ``placeholder``, ``type``, ``bbox`` ``[x, y, w, h]`` in
CSS px (default: stacked 40 px apart), ``enabled``, ``visible``,
``editable``, ``value``, ``checked``, ``covered``, plus any
:class:`~core.domain.ElementDescriptor` field.  ``id`` is both the key of the
element in reactions and its HTML ``id`` (``#id`` selectors).

Unscripted actions behave like a plain page: ``input``/``select``/``upload``
set the value, ``check``/``uncheck`` set ``checked``, ``navigate`` and
``back`` move, ``scroll`` scrolls; everything else (a click on an unscripted
button) changes nothing.
"""
from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, NamedTuple, Sequence, Union

from core.act.precheck import EDITABLE_ROLES
from core.act.space import spec
from core.domain import Action, Assertion, Candidate, Observation
from core.perception.driver import ActionError, NavigationError, PageLoadingError, _candidate
from core.perception.grid import Grid
from core.state.signature import light_signature

__all__ = [
    "FakeDriver", "FakePage", "Performed", "Reaction",
    "navigate", "set_value", "open_modal", "close_modal", "change_text", "set_page", "update", "fail", "nothing",
]

BASE_URL = "http://fake.test"
VIEWPORT = (1280, 800)  # CSS px, the project default
_TAGS = {"button": "button", "link": "a", "textbox": "input", "searchbox": "input", "checkbox": "input",
         "radio": "input", "combobox": "select", "spinbutton": "input", "heading": "h1"}


@dataclass
class FakePage:
    """One page of the fake site: its elements and page-level state."""

    elements: Sequence[Mapping[str, Any]] = ()
    title: str = ""
    text: str = ""


class Performed(NamedTuple):
    """One recorded :meth:`FakeDriver.perform` call (recorded even when it raised)."""

    url: str
    element: str
    kind: str
    value: str
    ref: str | None


Reaction = Callable[["FakeDriver", Union[dict, None], str], None]


# --- scripted reactions: callables (driver, element or None, bound value) -> None -------------
@dataclass(frozen=True)
class navigate:  # noqa: N801 - reads as a verb in scripts
    """Go to another page (relative path)."""

    url: str

    def __call__(self, d: "FakeDriver", el: dict | None, value: str) -> None:
        d.goto(self.url)


@dataclass(frozen=True)
class set_value:  # noqa: N801
    """Set the target's value (the action's value when ``value`` is None)."""

    value: str | None = None
    element: str | None = None

    def __call__(self, d: "FakeDriver", el: dict | None, value: str) -> None:
        target = d.element(self.element) if self.element else el
        assert target is not None, "set_value needs a target element"
        target["value"] = value if self.value is None else self.value
        d.mutations += 1


@dataclass(frozen=True)
class open_modal:  # noqa: N801
    """Open a dialog titled ``title`` holding ``elements``."""

    title: str
    elements: Sequence[Mapping[str, Any]] = ()

    def __call__(self, d: "FakeDriver", el: dict | None, value: str) -> None:
        d.modals.append(self.title)
        d.elements.extend(d.make_element(spec, len(d.elements), modal=self.title) for spec in self.elements)
        d.mutations += 1


@dataclass(frozen=True)
class close_modal:  # noqa: N801
    """Close the innermost dialog and remove its elements."""

    def __call__(self, d: "FakeDriver", el: dict | None, value: str) -> None:
        if d.modals:
            title = d.modals.pop()
            d.elements[:] = [e for e in d.elements if e.get("_modal") != title]
            d.mutations += 1


@dataclass(frozen=True)
class change_text:  # noqa: N801
    """Replace the page's free text, or an element's text (and name) when ``element`` is given."""

    text: str
    element: str | None = None

    def __call__(self, d: "FakeDriver", el: dict | None, value: str) -> None:
        if self.element:
            e = d.element(self.element)
            e["text"] = e["name"] = self.text
        else:
            d.text = self.text
        d.mutations += 1


@dataclass(frozen=True)
class set_page:  # noqa: N801
    """Change page-level state: any of ``title``, ``text``, ``focus``, ``loading``, ``errors``, ``scroll``."""

    changes: Mapping[str, Any]

    def __init__(self, **changes: Any) -> None:
        unknown = set(changes) - {"title", "text", "focus", "loading", "errors", "scroll"}
        if unknown:
            raise ValueError(f"set_page: unknown page {'field' if len(unknown) == 1 else 'fields'} {sorted(unknown)}")
        object.__setattr__(self, "changes", changes)

    def __call__(self, d: "FakeDriver", el: dict | None, value: str) -> None:
        for k, v in self.changes.items():
            setattr(d, k, v)
        d.mutations += 1


@dataclass(frozen=True)
class update:  # noqa: N801
    """Change fields of an element (``update("save", enabled=False)``)."""

    element: str
    changes: Mapping[str, Any]

    def __init__(self, element: str, **changes: Any) -> None:
        object.__setattr__(self, "element", element)
        object.__setattr__(self, "changes", changes)

    def __call__(self, d: "FakeDriver", el: dict | None, value: str) -> None:
        d.element(self.element).update(self.changes)
        d.mutations += 1


@dataclass(frozen=True)
class fail:  # noqa: N801
    """Raise :class:`ActionError` (element covered, timeout...)."""

    message: str = "action failed"

    def __call__(self, d: "FakeDriver", el: dict | None, value: str) -> None:
        raise ActionError(self.message)


@dataclass(frozen=True)
class nothing:  # noqa: N801
    """The action has no visible effect."""

    def __call__(self, d: "FakeDriver", el: dict | None, value: str) -> None:
        return None


# --- the driver ----------------------------------------------------------------------------
@dataclass
class FakeDriver:
    """Scripted driver; see the module docstring.

    Attributes
    ----------
    pages : Mapping[str, FakePage | Sequence[Mapping]]
        Pages by URL path (``"/login"``); a bare list is a page's elements.
    reactions : Mapping[tuple[str, str, str], Reaction | Sequence[Reaction]]
        ``(path or "*", element id or "", action kind)`` -> reaction(s).
    actions : list[Performed]
        Every :meth:`perform` call, in order.
    visits : list[str]
        Every page loaded, in order (paths); ``history`` is the back stack.
    mutations : int
        Bumped on every state change (what :meth:`probe` reports).
    loaded_after_waits : int | None
        While ``loading`` (set by :func:`update`), the observation shows the
        loading evidence ``"fake loading indicator"``; the page is loaded after
        this many :meth:`wait_loaded` calls (None: never).
    loading_waits : int
        :meth:`wait_loaded` calls so far.
    """

    pages: Mapping[str, Any]
    reactions: Mapping[tuple[str, str, str], Any] = field(default_factory=dict)
    scripts: Mapping[str, Any] = field(default_factory=dict)
    actions: list[Performed] = field(default_factory=list)
    visits: list[str] = field(default_factory=list)
    history: list[str] = field(default_factory=list)
    mutations: int = 0
    is_open: bool = False
    loaded_after_waits: int | None = 1
    loading_waits: int = 0
    # live state of the current page
    path: str = ""
    elements: list[dict] = field(default_factory=list)
    modals: list[str] = field(default_factory=list)
    title: str = ""
    text: str = ""
    focus: str = ""
    loading: bool = False
    errors: int = 0
    scroll: tuple[float, float] = (0.0, 0.0)
    #: What the page keeps in its storage (key -> value): reactions may write it; the effect probe reads it.
    storage: dict[str, str] = field(default_factory=dict)

    # --- life cycle and navigation ---------------------------------------------------
    def open(self) -> None:
        self.is_open = True

    def close(self) -> None:
        self.is_open = False

    @property
    def url(self) -> str:
        return BASE_URL + self.path

    def goto(self, url: str, *, quiet_ms: float | None = None, look: bool = False, then: Any = None) -> None:
        """Load a page afresh (typed values are lost, dialogs closed); ``quiet_ms``, ``look`` and ``then`` as the
        real driver's (a scripted page is quiet at once: nothing to wait for, and a look or a read costs no round
        trip).

        Raises
        ------
        NavigationError
            When no page has that path.
        """
        path = url[len(BASE_URL):] if url.startswith(BASE_URL) else url
        path = "/" + path.lstrip("/")
        if path not in self.pages:
            raise NavigationError(f"cannot load {BASE_URL}{path}: HTTP 404")
        page = self.pages[path]
        if not isinstance(page, FakePage):
            page = FakePage(elements=page)
        self.path, self.title, self.text = path, page.title, page.text
        self.elements = [self.make_element(spec, i) for i, spec in enumerate(page.elements)]
        self.modals, self.focus, self.loading, self.errors, self.scroll = [], "", False, 0, (0.0, 0.0)
        self.visits.append(path)
        self.history.append(path)
        self.mutations += 1

    # --- elements ------------------------------------------------------------------
    @staticmethod
    def make_element(spec: Mapping[str, Any], position: int, *, modal: str = "") -> dict:
        """A live element from a spec, with defaults filled in."""
        if not spec.get("id"):
            raise ValueError(f"fake element spec needs an 'id': {dict(spec)!r}")
        el = copy.deepcopy(dict(spec))
        role = el.setdefault("role", "")
        el.setdefault("tag", _TAGS.get(role, "div"))
        el.setdefault("text", "")
        el.setdefault("label", "")
        el.setdefault("name", el["label"] or el["text"] or el.get("placeholder", ""))
        el.setdefault("bbox", [10.0, 10.0 + 40.0 * position, 120.0, 30.0])
        el.setdefault("enabled", True)
        el.setdefault("visible", True)
        el.setdefault("editable", role in EDITABLE_ROLES)
        el.setdefault("value", "")
        el.setdefault("checked", None)
        el.setdefault("container", modal)
        el["_modal"] = modal
        return el

    def element(self, element_id: str) -> dict:
        """The live element with that id on the current page (KeyError when absent)."""
        for el in self.elements:
            if el["id"] == element_id:
                return el
        raise KeyError(f"no element {element_id!r} on {self.path}")

    def _candidate(self, i: int) -> Candidate:
        return _candidate(f"0:{i}", dict(self.elements[i]), dx=0.0, dy=0.0, viewport=VIEWPORT, dpr=1.0,
                          frame="", grid=Grid(*VIEWPORT))

    def _by_ref(self, ref: str) -> dict:
        try:
            frame, idx = ref.split(":")
            if frame != "0":
                raise ValueError
            return self.elements[int(idx)]
        except (ValueError, IndexError):
            raise ActionError(f"element {ref} is gone") from None

    def _visible_text(self) -> str:
        parts = [self.text, *self.modals]
        for e in self.elements:
            if e["visible"]:
                parts += [e["label"], e["text"]]
        return " ".join(p for p in parts if p)

    # --- observation ---------------------------------------------------------------
    def observe(self, *, screenshot: bool = True, neighbours: bool = True, ax: bool = True,
                around: tuple[str, str] | None = None) -> Observation:
        """A real Observation of the visible elements (no screenshot pixels; ``ax`` changes nothing here).

        ``around`` (the real driver's page functions read before and after): their scripted results
        (:meth:`evaluate`; None when not scripted) are left in ``self.around``."""
        if around is not None:
            self.around = (self._scripted(around[0]), None)
        visible = [i for i, e in enumerate(self.elements) if e["visible"]]
        items = [self.elements[i] for i in visible]
        raw = {"url": self.url, "title": self.title, "items": items, "text": self._visible_text(),
               "modals": list(self.modals), "loading": self.loading, "errors": self.errors, "focus": self.focus}
        obs = Observation(
            url=self.url, title=self.title, viewport=VIEWPORT, device_pixel_ratio=1.0, scroll=self.scroll,
            candidates=tuple(self._candidate(i) for i in visible), visible_text=raw["text"],
            signature=light_signature(raw), modal_titles=tuple(self.modals), timestamp_ms=time.time() * 1000.0,
            loading=("fake loading indicator",) if self.loading else (),
        )
        if around is not None:
            self.around = (self.around[0], self._scripted(around[1]))
        return obs

    def _scripted(self, script: str) -> Any:
        try:
            return self.evaluate(script)
        except Exception:  # noqa: BLE001 - not scripted: unknown, as the real driver's None
            return None

    def effect_snapshot(self) -> Any:
        """What the page keeps now, as :func:`core.perception.effects.snapshot` reads a real page: URL,
        :attr:`storage` (as localStorage), element count, dialogs and each element's value or checked state."""
        from core.perception.effects import EffectSnapshot

        return EffectSnapshot(url=self.url, local={k: str(v) for k, v in self.storage.items()},
                              items={"elements": len(self.elements) + len(self.modals)},
                              values={e["id"]: f"{e['value']}|{e['checked']}" for e in self.elements})

    def refs_for_selector(self, selector: str) -> list[Candidate]:
        """Candidates matching ``#id``, ``text=sub string`` (case-insensitive) or ``text="exact"``.

        Unlike :meth:`observe` this also finds invisible elements (like Playwright).

        Raises
        ------
        ValueError
            For any other selector syntax (the fake does not guess).
        """
        sel = selector.strip()
        if sel.startswith("#"):
            hit = lambda e: e["id"] == sel[1:]  # noqa: E731
        elif sel.startswith("text="):
            want = sel[5:].strip()
            if len(want) >= 2 and want[0] == want[-1] == '"':
                hit = lambda e: want[1:-1] in (e["text"], e["name"])  # noqa: E731
            else:
                hit = lambda e: any(want.lower() in s.lower() for s in (e["text"], e["name"]) if s)  # noqa: E731
        else:
            raise ValueError(f"FakeDriver supports only '#id' and 'text=...' selectors, got {selector!r}")
        return [self._candidate(i) for i, e in enumerate(self.elements) if hit(e)]

    # --- acting ----------------------------------------------------------------------
    def _reaction(self, element_id: str, kind: str) -> Any:
        for key in ((self.path, element_id, kind), ("*", element_id, kind)):
            if key in self.reactions:
                return self.reactions[key]
        return None

    def _default(self, action: Action, el: dict | None, value: str) -> None:
        kind = action.kind
        if kind in ("input", "select", "upload") and el is not None:
            set_value()(self, el, value)
        elif kind in ("check", "uncheck") and el is not None:
            el["checked"] = kind == "check"
            self.mutations += 1
        elif kind == "navigate":
            self.goto(value)
        elif kind == "back" and len(self.history) > 1:
            self.history.pop()
            self.goto(self.history.pop())
        elif kind == "scroll":
            dx, dy = {"down": (0, 1), "up": (0, -1), "right": (1, 0), "left": (-1, 0)}[action.direction]
            self.scroll = (self.scroll[0] + dx * action.distance, max(0.0, self.scroll[1] + dy * action.distance))
            self.mutations += 1

    def perform(self, action: Action, ref: str | None, value: str, *, locator: str | None = None) -> None:
        """Record the call, then apply the scripted reaction (or the default behaviour); ``locator`` is ignored
        (the fake acts on ``ref``).

        Raises
        ------
        ActionError
            When the ref is gone, the element is invisible or disabled, or the
            reaction is :class:`fail`.
        """
        el = None
        try:
            el = self._by_ref(ref) if ref else None
        finally:
            self.actions.append(Performed(self.path, el["id"] if el else "", action.kind, value, ref))
        if el is not None and not el["visible"]:
            raise ActionError(f"{action.kind} failed: element {el['id']!r} is not visible")
        if el is not None and spec(action.kind).needs_enabled and not el["enabled"]:
            raise ActionError(f"{action.kind} failed: element {el['id']!r} is not enabled (timeout)")
        reaction = self._reaction(el["id"] if el else "", action.kind)
        if reaction is None:
            self._default(action, el, value)
            return
        for r in (reaction if isinstance(reaction, (list, tuple)) else (reaction,)):
            r(self, el, value)

    # --- waiting ---------------------------------------------------------------------
    def probe(self) -> dict[str, Any]:
        """Same keys as the in-page probe; the page is always quiet."""
        return {"url": self.url, "mutations": self.mutations, "quietMs": 1000.0, "inflight": 0,
                "loading": self.loading, "ready": "complete"}

    def wait_loaded(self, limit_ms: float, *, started: float | None = None) -> float:
        """Count a wait; the page loads after ``loaded_after_waits`` of them (at once: no time passes).

        Raises
        ------
        PageLoadingError
            ``"still loading after N ms"`` when the page never loads.
        """
        self.loading_waits += 1
        if self.loading and self.loaded_after_waits is not None and self.loading_waits >= self.loaded_after_waits:
            self.loading = False
            self.mutations += 1
        if self.loading:
            raise PageLoadingError(f"still loading after {limit_ms:.0f} ms: fake loading indicator")
        return 0.0

    def wait_settled(self, *, long: bool = False, start: Mapping[str, Any] | None = None,
                     idle_ms: float | None = None, limit_ms: float | None = None,
                     quiet_ms: float | None = None, react_from: int | None = None,
                     look: bool = False, then: tuple[str, str, str | None, Any] | None = None,
                     new_document: bool = False, text: bool = False) -> dict[str, Any]:
        """Returns at once (``quiet_ms``, ``react_from``, ``look``, ``then``, ``new_document`` and ``text`` change
        nothing here:
        a scripted page
        has no timers, and its observation and reads cost no round trip);
        ``changed`` compares the mutation counter with ``start``.

        A page still ``loading`` never settles: the wait "hits" its bound
        (``limit_ms``, else 30000 ms) at once and says ``timed_out``.
        """
        changed = bool(start) and (start.get("mutations") != self.mutations or start.get("url") != self.url)
        if self.loading:
            return {"ms": float(limit_ms if limit_ms is not None else 30000.0), "changed": changed, "timed_out": True}
        return {"ms": 0.0, "changed": changed, "timed_out": False}

    # --- assertions ------------------------------------------------------------------
    def check_assertion(self, assertion: Assertion, ref: str | None, expected: str) -> tuple[bool, str]:
        """Check once (the fake never changes by itself, so there is nothing to poll)."""
        kind = assertion.kind
        if kind in ("text_appears", "text_absent"):
            present = expected in self._visible_text()
            if kind == "text_appears":
                return present, f"text {expected!r} {'appears' if present else 'does not appear'}"
            return not present, f"text {expected!r} {'is present' if present else 'is absent'}"
        if kind == "url_contains":
            return expected in self.url, f"URL is {self.url}"
        if assertion.selector:
            matches = self.refs_for_selector(assertion.selector)
            if kind == "count":
                return str(len(matches)) == expected, f"{len(matches)} elements match {assertion.selector!r}"
            if not matches:
                return kind == "hidden", f"no element matches {assertion.selector!r}"
            el = self._by_ref(matches[0].ref)
        elif ref:
            el = self._by_ref(ref)
        else:
            return False, "no element to assert on"
        checks = {
            "visible": (el["visible"], "visible" if el["visible"] else "not visible"),
            "hidden": (not el["visible"], "visible" if el["visible"] else "hidden"),
            "enabled": (el["enabled"], "enabled" if el["enabled"] else "disabled"),
            "disabled": (not el["enabled"], "enabled" if el["enabled"] else "disabled"),
            "value": (str(el["value"]) == expected, f"value is {str(el['value'])[:80]!r}"),
            "text_equals": (el["text"] == expected, f"text is {el['text'][:80]!r}"),
            "text_contains": (expected in el["text"], f"text is {el['text'][:80]!r}"),
        }
        if kind not in checks:
            return False, f"unknown assertion {kind}"
        ok, why = checks[kind]
        return bool(ok), why

    def evaluate(self, script: str, arg: Any = None) -> Any:
        """Return the scripted result of ``script`` (``scripts``); the fake runs no JavaScript."""
        if script not in self.scripts:
            raise NotImplementedError(f"FakeDriver has no scripted result for {script[:60]!r}")
        result = self.scripts[script]
        return result(arg) if callable(result) else result
