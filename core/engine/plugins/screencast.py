"""Chromium's screencast of the engine's page, for a front end that watches (the studio's live view).

:class:`ScreencastPlugin` starts ``Page.startScreencast`` on a CDP session of
the driver's page when a flow begins, follows the page when the flow
replaces it, and stops the screencast (``Page.stopScreencast``, session
detached) when the flow ends; :meth:`ScreencastPlugin.stop` is also called by
the session after every flow, so that a flow that ended by an error never
leaves it running.  Each ``Page.screencastFrame`` is acknowledged at once
(``Page.screencastFrameAck``: Chromium sends the next frame only after it)
and emitted as a :class:`~core.engine.events.ScreencastFrame`.

Thread rule: the CDP session is a Playwright object; it is created, used and
detached on the engine thread only, and frames arrive there too (Playwright's
synchronous API dispatches events while the engine thread is inside one of
its calls, which is most of a run).  Chromium sends a frame when the page
repaints: a still page sends none, the view keeps showing the last one.

Secrets: frames are the page as drawn, so each frame carries the boxes of
password fields and of fields holding a secret (from the step's latest
observation, shifted by the scroll since) for the front end to paint over;
no frame is emitted while a step types a secret value (until the page has
been observed again) nor while a secret shows in the page's text outside
such fields (the view then keeps the observations' masked screenshots).

Registered only by a session built with ``screencast=True`` (the studio's
:class:`~core.engine.runner.EngineRunner`); ``steadyhand run`` never pays for it.
"""
from __future__ import annotations

import base64
from typing import Any, Callable

from core.domain import BBox, Observation
from core.engine.events import EngineEvent, ScreencastFrame
from core.engine.hooks import BeforeAction, FlowBegins, FlowEnds, StateAfter, StateBefore, hookimpl
from core.secrets import MASK

__all__ = ["ScreencastPlugin", "JPEG_QUALITY", "MASK_MARGIN_PX"]

#: JPEG quality of the frames (0-100): 70 keeps text legible at about 40-90 KB a 1280x800 frame.
JPEG_QUALITY = 70
#: CSS px added on each side of a secret field's box before it is painted over (the caret, a focus ring).
MASK_MARGIN_PX = 3.0


class ScreencastPlugin:
    """Streams the driver's page as :class:`~core.engine.events.ScreencastFrame` events while a flow runs.

    Parameters
    ----------
    driver : object
        The session's driver; its ``page`` (a Playwright page) is screencast.
        A driver without a Playwright page (the fake driver) makes this a no-op.
    emit : Callable[[EngineEvent], None]
        The engine's event sink (called on the engine thread, from within Playwright's event dispatch).
    redact : Callable[[str], str]
        Masks the run's secret values (text -> text): a step whose value it changes types a secret.

    Attributes
    ----------
    frames : int
        Frames emitted since the plugin was built.
    starts, stops : int
        Screencasts started and stopped (one page each).
    """

    def __init__(self, driver: Any, emit: Callable[[EngineEvent], None],
                 redact: Callable[[str], str] = lambda text: text) -> None:
        self.driver = driver
        self.emit = emit
        self.redact = redact
        self.frames = self.starts = self.stops = 0
        self._cdp: Any = None
        self._page: Any = None
        self._where: tuple[str, str, int] = ("", "", -1)
        self._masks: tuple[BBox, ...] = ()
        self._mask_scroll: tuple[float, float] = (0.0, 0.0)
        self._hold = False

    @property
    def active(self) -> bool:
        """True while a screencast runs."""
        return self._cdp is not None

    # --- hooks ------------------------------------------------------------------------------

    @hookimpl
    def flow_begins(self, p: FlowBegins) -> None:
        self._where = (p.run.run_id, p.run.flow.name, -1)
        self._masks, self._hold = (), False
        self._follow()

    @hookimpl
    def state_before(self, p: StateBefore) -> None:
        self._where = (p.step.run.run_id, p.step.run.flow.name, p.step.index)
        self._hold = False
        self._seen(p.step.before)
        self._follow()

    @hookimpl
    def before_action(self, p: BeforeAction) -> None:
        value = p.step.value or ""
        if value and self.redact(value) != value:
            self._hold = True  # a secret is about to be typed: no frame until the page is observed again

    @hookimpl
    def state_after(self, p: StateAfter) -> None:
        self._hold = False
        self._seen(p.step.after)
        self._follow()

    @hookimpl
    def flow_ends(self, p: FlowEnds) -> None:
        self.stop()

    # --- screencast ---------------------------------------------------------------------------

    def _seen(self, obs: Observation | None) -> None:
        """Masks (and holds) from an observation of the page (CSS px, viewport coordinates)."""
        if obs is None:
            return
        m = MASK_MARGIN_PX
        self._masks = tuple(
            BBox(b.x - m, b.y - m, b.width + 2 * m, b.height + 2 * m)
            for c in obs.candidates
            if (b := c.descriptor.bbox) is not None and (c.descriptor.type == "password" or MASK in (c.value or "")))
        self._mask_scroll = (float(obs.scroll[0]), float(obs.scroll[1]))
        if MASK in (obs.visible_text or ""):
            self._hold = True  # a secret shows in the text: only the masked observations are shown

    def _follow(self) -> None:
        """Screencast the driver's current page (restarting when the flow replaced it)."""
        page = getattr(self.driver, "page", None)
        if page is None or not hasattr(page, "context"):
            self.stop()
            return
        if page is self._page and self._cdp is not None:
            return
        self.stop()
        try:
            cdp = page.context.new_cdp_session(page)
            cdp.on("Page.screencastFrame", self._on_frame)
            size = page.viewport_size or {"width": 1280, "height": 800}
            cdp.send("Page.startScreencast", {"format": "jpeg", "quality": JPEG_QUALITY,
                                              "maxWidth": int(size["width"]), "maxHeight": int(size["height"]),
                                              "everyNthFrame": 1})
        except Exception:  # noqa: BLE001 - a page closing under us: no live frames, the run goes on
            return
        self._cdp, self._page = cdp, page
        self.starts += 1

    def stop(self) -> None:
        """Stop the screencast and detach its CDP session (engine thread); never raises; idempotent."""
        cdp, self._cdp, self._page = self._cdp, None, None
        if cdp is None:
            return
        self.stops += 1
        for call in (lambda: cdp.remove_listener("Page.screencastFrame", self._on_frame),
                     lambda: cdp.send("Page.stopScreencast"), cdp.detach):
            try:
                call()
            except Exception:  # noqa: BLE001 - the page or browser is already gone
                pass

    def _on_frame(self, params: dict[str, Any]) -> None:
        cdp = self._cdp
        if cdp is None:
            return  # a frame queued before the stop
        try:
            cdp.send("Page.screencastFrameAck", {"sessionId": params.get("sessionId")})
        except Exception:  # noqa: BLE001 - the page is closing
            return
        if self._hold:
            return
        meta = params.get("metadata") or {}
        scroll = (float(meta.get("scrollOffsetX", 0.0)), float(meta.get("scrollOffsetY", 0.0)))
        dx, dy = scroll[0] - self._mask_scroll[0], scroll[1] - self._mask_scroll[1]
        masks = tuple(BBox(b.x - dx, b.y - dy, b.width, b.height) for b in self._masks)
        run_id, flow, index = self._where
        try:
            jpeg = base64.b64decode(params.get("data") or "")
            url = self.redact(str(self._page.url)) if self._page is not None else ""  # cached by Playwright
        except Exception:  # noqa: BLE001 - bad data, or the page went away
            return
        self.frames += 1
        self.emit(ScreencastFrame(run_id, flow, index, jpeg, float(meta.get("deviceWidth", 0.0)),
                                  float(meta.get("deviceHeight", 0.0)), scroll, float(meta.get("timestamp", 0.0)),
                                  masks, url))
