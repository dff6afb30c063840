"""Typed events and commands of a recording session.

Events are emitted on the recorder's thread (the one that owns Playwright);
a front end marshals them to its own thread, as for engine events.  All
coordinates are CSS px in top-level viewport coordinates.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from core.domain import Candidate, ElementDescriptor, Flow, Step

__all__ = [
    "RecordingStarted", "StepRecorded", "StepRemoved", "ElementPicked", "LiveFrame", "RecordingStopped",
    "RecorderError", "RecorderEvent",
    "StopRecording", "SetInspect", "ForwardClick", "ForwardMove", "ForwardType", "ForwardKey", "ForwardScroll",
    "AddAssertion", "RecorderCommand",
]


@dataclass(frozen=True, slots=True)
class RecordingStarted:
    """The browser is up and the start page loaded.

    ``url`` is the page's absolute URL now (after any redirect);
    ``cdp_endpoint`` is ``"http://127.0.0.1:<port>"`` when a CDP port was
    asked for, else ``""``; ``start_url`` is the flow's start URL as it
    will be saved: the URL asked for, relative to the base URL (``""``
    when unknown).
    """

    flow: str
    url: str
    cdp_endpoint: str = ""
    headless: bool = True
    start_url: str = ""


@dataclass(frozen=True, slots=True)
class StepRecorded:
    """Step number ``index`` (0-based) was recorded.

    ``crop_png`` is the element's PNG crop in device px (``b""`` for
    targetless steps); ``step.target.crop`` names the file it will be saved as.
    ``same_named`` counts the other elements of the page that had the
    target's role and name just before the action
    (:func:`core.record.review.same_named`; 0 when unknown).
    """

    index: int
    step: Step
    crop_png: bytes = b""
    same_named: int = 0


@dataclass(frozen=True, slots=True)
class StepRemoved:
    """Step ``index`` was withdrawn (e.g. two clicks that became one double click)."""

    index: int


@dataclass(frozen=True, slots=True)
class ElementPicked:
    """In inspect mode the user picked an element (or selected page text).

    Attributes
    ----------
    pick_id : int
        Pass back in :class:`AddAssertion`.
    descriptor : ElementDescriptor
        The picked element (empty for a page-level text pick).
    text : str
        Its visible text (or the selected text for a page-level pick).
    value : str
        Its current value ("" for passwords, which are never read).
    enabled, visible : bool
        Its live state.
    count : int
        How many elements match ``count_selector`` now.
    count_selector : str
        CSS selector of the picked element's siblings of the same kind.
    suggested : tuple[str, ...]
        Assertion kinds that make sense for it, best first
        (:func:`core.record.steps.suggested_assertions`; labels in
        :data:`core.record.steps.ASSERTION_LABELS`).
    page_text : bool
        True when the user selected text rather than an element.
    selector : str
        Playwright selector of the picked element from the main frame
        (id or test id when unique, else its CSS path); checks of an element
        the observer does not list, and ``hidden``, use it.  "" when
        unknown (a frame of another origin).
    """

    pick_id: int
    descriptor: ElementDescriptor
    text: str = ""
    value: str = ""
    enabled: bool = True
    visible: bool = True
    count: int = 1
    count_selector: str = ""
    suggested: tuple[str, ...] = ()
    page_text: bool = False
    selector: str = ""


@dataclass(frozen=True, slots=True)
class LiveFrame:
    """A fresh screenshot of the recorded page, for the studio's live view.

    ``png`` is in device px; ``candidates`` carry CSS px boxes.
    """

    png: bytes
    device_pixel_ratio: float
    url: str
    candidates: tuple[Candidate, ...] = ()


@dataclass(frozen=True, slots=True)
class RecordingStopped:
    """Recording ended; ``flow`` holds every recorded step, ``crops`` the PNGs by step id.

    ``files`` are uploaded files to keep beside the flow, by path relative to
    the flows folder (``"<flow>.files/note.txt"``).  ``reason`` is
    ``"stopped"``, ``"page closed"``, ``"signal"`` or ``"error: ..."``.
    """

    flow: Flow
    crops: dict[str, bytes] = field(default_factory=dict)
    reason: str = "stopped"
    files: dict[str, bytes] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RecorderError:
    """Something went wrong; ``fatal`` means the recording stopped."""

    message: str
    fatal: bool = False


@dataclass(frozen=True, slots=True)
class InspectChanged:
    """Inspect (assert) mode was turned on or off in the page itself (Alt+Shift+A, Escape): the front end's
    Assert button follows it."""

    on: bool


RecorderEvent = Union[RecordingStarted, StepRecorded, StepRemoved, ElementPicked, LiveFrame, RecordingStopped,
                      RecorderError, InspectChanged]
__all__ += ["InspectChanged"]


@dataclass(frozen=True, slots=True)
class StopRecording:
    """Flush pending typing, close the browser and emit :class:`RecordingStopped`."""


@dataclass(frozen=True, slots=True)
class SetInspect:
    """Turn inspect mode (pick an element to assert on) on or off."""

    on: bool


@dataclass(frozen=True, slots=True)
class ForwardClick:
    """Click at ``(x, y)`` CSS px of the viewport (studio live view, headless Chromium)."""

    x: float
    y: float
    double: bool = False


@dataclass(frozen=True, slots=True)
class ForwardMove:
    """Move the pointer to ``(x, y)`` CSS px (hover menus open from the live view too)."""

    x: float
    y: float


@dataclass(frozen=True, slots=True)
class ForwardType:
    """Type ``text`` into the focused element."""

    text: str


@dataclass(frozen=True, slots=True)
class ForwardKey:
    """Press ``key`` (Playwright key name: ``"Enter"``, ``"Tab"``, ``"Backspace"``...)."""

    key: str


@dataclass(frozen=True, slots=True)
class ForwardScroll:
    """Scroll by ``(dx, dy)`` CSS px with the mouse wheel at ``(x, y)``."""

    x: float
    y: float
    dx: float
    dy: float


@dataclass(frozen=True, slots=True)
class AddAssertion:
    """Add an assertion step for pick ``pick_id`` (see :class:`ElementPicked`).

    ``kind`` is an assertion kind (``"visible"``, ``"text_equals"``,
    ``"text_contains"``, ``"enabled"``, ``"disabled"``, ``"value"``,
    ``"count"``, ``"text_appears"``); ``expected`` its expected text.
    """

    pick_id: int
    kind: str
    expected: str = ""


RecorderCommand = Union[StopRecording, SetInspect, ForwardClick, ForwardMove, ForwardType, ForwardKey, ForwardScroll,
                        AddAssertion]
