"""What one step left behind for debugging: image difference, console errors, failed requests, time.

The engine computes these once per step (:mod:`core.engine.evidence`),
records them in the store (``step_evidence`` table) and announces them on
``StepEvidenceRecorded``; the studio's timeline and reports read the same
records.  Geometry is CSS px in viewport coordinates (the screenshot's
device pixels divided by the device pixel ratio); times are ms.
"""
from __future__ import annotations

from dataclasses import dataclass

from .element import BBox

__all__ = ["ImageDiff", "ConsoleMessage", "FailedRequest", "AssertionCheck", "StepEvidence"]


@dataclass(frozen=True, slots=True)
class ImageDiff:
    """The difference of a step's before and after screenshots (OpenCV, :mod:`core.state.diff`).

    Attributes
    ----------
    regions : tuple[BBox, ...]
        Changed regions, CSS px, largest first.  A secret field's own pixels
        are left out of the comparison, so typing a secret changes no region
        (a region may still enclose the field when its surroundings changed).
    changed_ratio : float
        Share of the compared pixels that changed (0..1).
    width, height : float
        Size of the compared screenshots in CSS px.
    device_pixel_ratio : float
        Device px per CSS px of the screenshots.
    truncated : bool
        More regions were found than are kept (:data:`core.state.diff.MAX_REGIONS`).
    ms : float
        Time the comparison took, ms.
    note : str
        Why the comparison is partial ("sizes differ: ..."), "" when it is not.
    """

    regions: tuple[BBox, ...]
    changed_ratio: float
    width: float
    height: float
    device_pixel_ratio: float = 1.0
    truncated: bool = False
    ms: float = 0.0
    note: str = ""

    @property
    def changed(self) -> bool:
        """True when at least one region changed."""
        return bool(self.regions)


@dataclass(frozen=True, slots=True)
class ConsoleMessage:
    """A console error or an uncaught exception of the page (text secrets masked).

    ``kind`` is ``error`` (``console.error`` and the browser's own errors,
    e.g. a failed resource) or ``exception`` (uncaught); ``source`` the
    script URL and line when known (path only, no query); ``t_ms`` ms since
    the step started.
    """

    kind: str
    text: str
    source: str = ""
    t_ms: float = 0.0


@dataclass(frozen=True, slots=True)
class FailedRequest:
    """A request of the page that failed: an HTTP status >= 400, or no response at all.

    ``url`` is origin and path only (a query may hold data); ``status`` None
    when the request failed without a response (``error`` says how, e.g.
    ``net::ERR_CONNECTION_REFUSED``); ``t_ms`` ms since the step started.
    """

    method: str
    url: str
    status: int | None
    resource_type: str = ""
    error: str = ""
    t_ms: float = 0.0

    @property
    def shown(self) -> str:
        """``"GET /api/x 500"`` or ``"GET /api/x net::ERR_FAILED"``."""
        from urllib.parse import urlsplit

        path = urlsplit(self.url).path or "/"
        return f"{self.method} {path} {self.status if self.status is not None else self.error}".rstrip()


@dataclass(frozen=True, slots=True)
class AssertionCheck:
    """One assertion of a step as checked (P7): what, on which element, expected and observed.

    ``target`` is the selector, or the step target's label, or ``"page"``;
    ``observed`` the driver's one-line account ("text is 'Saved'"); secrets masked.
    """

    kind: str
    target: str
    expected: str
    observed: str
    ok: bool


@dataclass(frozen=True, slots=True)
class StepEvidence:
    """Everything the timeline shows of one step besides its outcome.

    Attributes
    ----------
    index : int
        0-based step index in the flow.
    attempt : int
        The attempt the screenshots belong to (the last one, 1-based).
    action : str
        The action kind (``click``, ``input``...), "" when none was decided.
    diff : ImageDiff | None
        Before/after difference; None when one of the screenshots is missing
        (the step ended before its after-observation, or screenshots are off).
    console : tuple[ConsoleMessage, ...]
        Console errors and uncaught exceptions while the step ran, at most
        :data:`core.engine.evidence.MAX_ENTRIES`.
    failed_requests : tuple[FailedRequest, ...]
        Failed requests while the step ran, beacons and keepalive pings left
        out, at most :data:`core.engine.evidence.MAX_ENTRIES`.
    assertions : tuple[AssertionCheck, ...]
        The step's assertions as checked on its last attempt.
    active_ms, wall_ms : float
        Time the engine worked on the step, and the wall time; the difference
        is time paused or waiting for a human.
    phase_ms : tuple[tuple[str, float], ...]
        Time per phase of the last attempt, ms, in phase order.
    """

    index: int
    attempt: int = 1
    action: str = ""
    diff: ImageDiff | None = None
    console: tuple[ConsoleMessage, ...] = ()
    failed_requests: tuple[FailedRequest, ...] = ()
    assertions: tuple[AssertionCheck, ...] = ()
    active_ms: float = 0.0
    wall_ms: float = 0.0
    phase_ms: tuple[tuple[str, float], ...] = ()

    @property
    def paused_ms(self) -> float:
        """Time paused or waiting for a human, ms."""
        return max(0.0, self.wall_ms - self.active_ms)
