"""A step's evidence as a plugin of the step kernel: image difference, console errors, failed requests, time.

:class:`EvidencePlugin` starts following the page's console and failed
requests when a flow starts (hook ``flow_begins``, before its start URL
loads, so the first step sees the errors of the page load).  Its
:meth:`~EvidencePlugin.collect` runs at the ``step_recorded`` hook of
every step: it compares the last attempt's before and after screenshots
(:func:`core.state.diff.image_diff`; secret fields left out), takes the
console errors and failed requests since the previous step ended (the
step that was running when they happened: nothing runs between two steps
but the engine's own bookkeeping), stores it all (``Store.record_step_evidence``)
and emits :class:`~core.engine.events.StepEvidenceRecorded`.  Evidence is
best effort: a failure here is kept in ``Ports.store_errors`` and never fails
the step.
"""
from __future__ import annotations

import time
from typing import Any

from core.domain import BBox, Observation
from core.domain.evidence import AssertionCheck, ConsoleMessage, FailedRequest, ImageDiff, StepEvidence
from core.engine.events import StepEvidenceRecorded
from core.engine.hooks import FlowBegins, Ports, StepRecorded, hookimpl
from core.engine.step import StepContext
from core.perception.netwatch import NetworkWatch
from core.perception.pagelog import PageLog, failed_requests
from core.state.diff import DiffError, image_diff

__all__ = ["EvidencePlugin", "secret_boxes", "MAX_ENTRIES"]

#: Console messages and failed requests kept per step (the first ones: later ones are usually their echo).
MAX_ENTRIES = 50


def secret_boxes(*observations: Observation | None, redact=None) -> list[BBox]:
    """Boxes (CSS px) of password fields and of fields whose value holds a secret, in any observation."""
    out: list[BBox] = []
    for obs in observations:
        for c in (obs.candidates if obs is not None else ()):
            box = c.descriptor.bbox
            if box is None:
                continue
            secret = bool(c.extra.get("is_password")) if c.extra else False
            if not secret and redact is not None and c.value and redact(c.value) != c.value:
                secret = True
            if secret:
                out.append(box)
    return out


def _diff(ex: Any, ctx: StepContext) -> ImageDiff | None:
    before, after = ctx.before, ctx.after
    if before is None or after is None or not before.screenshot_png or not after.screenshot_png:
        return None
    try:
        return image_diff(before.screenshot_png, after.screenshot_png,
                          device_pixel_ratio=after.device_pixel_ratio or 1.0,
                          masks=secret_boxes(before, after, redact=ex.redact))
    except (DiffError, ValueError) as exc:
        ex.store_errors.append(f"image diff of step {ctx.index + 1} failed: {exc}")
        return None


def _assertions(ctx: StepContext) -> tuple[AssertionCheck, ...]:
    return tuple(getattr(ctx, "checks", ()) or ())


class EvidencePlugin:
    """Evidence of every step (see the module doc); uses the ports' driver, store, event sink and redactor."""

    def __init__(self, ports: Ports) -> None:
        self.ports = ports
        #: ``time.monotonic()`` where the next step's window of console errors and failed requests starts.
        self.t0: float | None = None

    @hookimpl
    def flow_begins(self, p: FlowBegins) -> None:
        """Follow the page's console and requests from now on; the next step's window starts now."""
        PageLog.of(self.ports.driver)
        NetworkWatch.of(self.ports.driver)
        self.t0 = time.monotonic()

    @hookimpl
    def step_recorded(self, p: StepRecorded) -> None:
        self.collect(p.step, active_ms=p.active_ms, wall_ms=p.wall_ms)

    def collect(self, ctx: StepContext, *, active_ms: float, wall_ms: float) -> StepEvidence | None:
        """Compute, store and announce the evidence of the step ``ctx`` (record phase); returns it."""
        ex = self.ports
        try:
            now = time.monotonic()
            t0 = self.t0
            start = ctx.t0 if t0 is None else min(t0, ctx.t0)
            self.t0 = now
            console: list[ConsoleMessage] = []
            log = PageLog.of(ex.driver)
            for e in (log.between(start, now) if log is not None else ()):
                if e.kind in ("error", "exception") and len(console) < MAX_ENTRIES:
                    console.append(ConsoleMessage(e.kind, ex.redact(e.text), ex.redact(e.source),
                                                  round((e.t - ctx.t0) * 1000.0, 1)))
            failed = [FailedRequest(m, ex.redact(u), status, rtype, ex.redact(err), round((t - ctx.t0) * 1000.0, 1))
                      for t, m, u, status, rtype, err in failed_requests(ex.driver, start, now)][:MAX_ENTRIES]
            step = ctx.decided or (ctx.run.flow.steps[ctx.index] if ctx.index < len(ctx.run.flow.steps) else None)
            evidence = StepEvidence(ctx.index, max(1, ctx.attempt), step.action.kind if step is not None else "",
                                    _diff(ex, ctx), tuple(console), tuple(failed), _assertions(ctx),
                                    round(active_ms, 1), round(wall_ms, 1), tuple(ctx.phase_ms.items()))
        except Exception as exc:  # noqa: BLE001 - evidence never fails a step
            ex.store_errors.append(f"evidence of step {ctx.index + 1} failed: {type(exc).__name__}: {exc}")
            return None
        ex.store_call("record_step_evidence", ctx.run.run_id, evidence)
        ex.emit(StepEvidenceRecorded(ctx.run.run_id, ctx.run.flow.name, ctx.index, evidence))
        return evidence
