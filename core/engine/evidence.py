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

The image difference is computed off the step's critical path (issue 20):
on one worker thread, started as soon as the after-screenshot is taken
(hook ``state_after``), while the step goes on verifying and recording.
The record phase gives it at most :data:`DIFF_WAIT_MS` more; a difference
not ready by then is stored and announced when it is - at a later step's
record phase, or when the flow ends (``flow_ends`` waits for every pending
one), in step order - with at most :data:`DIFF_QUEUE` steps waiting (one
more makes its step wait for the oldest).
"""
from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from core.domain import BBox, Observation
from core.domain.evidence import AssertionCheck, ConsoleMessage, FailedRequest, ImageDiff, StepEvidence
from core.engine.events import StepEvidenceRecorded
from core.engine.hooks import FlowBegins, FlowEnds, Ports, StateAfter, StepRecorded, hookimpl
from core.engine.step import StepContext
from core.perception.netwatch import NetworkWatch
from core.perception.pagelog import PageLog, failed_requests
from core.state.diff import image_diff

__all__ = ["EvidencePlugin", "secret_boxes", "MAX_ENTRIES", "DIFF_QUEUE"]

#: Console messages and failed requests kept per step (the first ones: later ones are usually their echo).
MAX_ENTRIES = 50
#: Image differences waiting on the worker at most; one more makes its step wait for the oldest (the bound that
#: keeps a run of full looks from piling up screenshots in memory: each waiting step holds two PNGs).
DIFF_QUEUE = 4
#: ms the record phase waits for its step's image difference (running since the after-screenshot) before it
#: leaves it to the worker: a difference of two 1280x800 screenshots takes 30-200 ms on the 2-core test machine,
#: so live evidence keeps coming just before its ``StepFinished`` while a slow one never holds the run longer.
DIFF_WAIT_MS = 1000.0


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


def _diff_job(ex: Any, ctx: StepContext) -> tuple[bytes, bytes, float, list[BBox]] | None:
    """What the image difference of the step needs (read on the engine thread), None without two screenshots."""
    before, after = ctx.before, ctx.after
    if before is None or after is None or not before.screenshot_png or not after.screenshot_png:
        return None
    return (before.screenshot_png, after.screenshot_png, after.device_pixel_ratio or 1.0,
            secret_boxes(before, after, redact=ex.redact))


def _diff(job: tuple[bytes, bytes, float, list[BBox]]) -> ImageDiff:
    """The image difference (worker thread); raises :class:`DiffError` / ValueError on unreadable images."""
    before, after, dpr, masks = job
    return image_diff(before, after, device_pixel_ratio=dpr, masks=masks)


def _assertions(ctx: StepContext) -> tuple[AssertionCheck, ...]:
    return tuple(getattr(ctx, "checks", ()) or ())


class EvidencePlugin:
    """Evidence of every step (see the module doc); uses the ports' driver, store, event sink and redactor."""

    def __init__(self, ports: Ports) -> None:
        self.ports = ports
        #: ``time.monotonic()`` where the next step's window of console errors and failed requests starts.
        self.t0: float | None = None
        #: Steps whose image difference is being computed: (run id, flow, evidence without it, the worker's future).
        self.pending: list[tuple[str, str, StepEvidence, Future[ImageDiff]]] = []
        self._worker: ThreadPoolExecutor | None = None
        #: The difference started at ``state_after``: (before, after, future) - used when the step still has them.
        self._early: tuple[Any, Any, Future[ImageDiff]] | None = None

    def _submit(self, job: tuple[bytes, bytes, float, list[BBox]]) -> Future[ImageDiff]:
        if self._worker is None:
            self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="steadyhand-evidence")
        return self._worker.submit(_diff, job)

    def drain(self, *, wait: bool = False, keep: int | None = None) -> None:
        """Store and announce the pending steps whose difference is ready, in order (all when ``wait``; with
        ``keep``, waits until at most that many are left)."""
        while self.pending:
            run_id, flow, evidence, future = self.pending[0]
            if not future.done() and not wait and (keep is None or len(self.pending) <= keep):
                return
            try:
                diff: ImageDiff | None = future.result()
            except Exception as exc:  # noqa: BLE001 - evidence never fails a step
                self.ports.store_errors.append(f"image diff of step {evidence.index + 1} failed: {exc}")
                diff = None
            self.pending.pop(0)
            self._publish(run_id, flow, replace(evidence, diff=diff))

    def _publish(self, run_id: str, flow: str, evidence: StepEvidence) -> None:
        self.ports.store_call("record_step_evidence", run_id, evidence)
        self.ports.emit(StepEvidenceRecorded(run_id, flow, evidence.index, evidence))

    @hookimpl
    def flow_ends(self, p: FlowEnds) -> None:
        """Every pending difference is computed, stored and announced before the run's result is."""
        self.drain(wait=True)
        if self._worker is not None:
            self._worker.shutdown(wait=False)
            self._worker = None

    @hookimpl
    def flow_begins(self, p: FlowBegins) -> None:
        """Follow the page's console and requests from now on; the next step's window starts now."""
        PageLog.of(self.ports.driver)
        NetworkWatch.of(self.ports.driver)
        self.t0 = time.monotonic()

    @hookimpl
    def state_after(self, p: StateAfter) -> None:
        """The after-screenshot is there: its difference with the before starts on the worker now."""
        self._early = None
        job = _diff_job(self.ports, p.step)
        if job is not None:
            self._early = (p.step.before, p.step.after, self._submit(job))

    @hookimpl
    def step_recorded(self, p: StepRecorded) -> None:
        self.collect(p.step, active_ms=p.active_ms, wall_ms=p.wall_ms)

    def collect(self, ctx: StepContext, *, active_ms: float, wall_ms: float) -> StepEvidence | None:
        """Collect the evidence of the step ``ctx`` (record phase) and store and announce it - at once without
        screenshots, else once its image difference is ready (:meth:`drain`); returns it without the difference."""
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
                                    None, tuple(console), tuple(failed), _assertions(ctx),
                                    round(active_ms, 1), round(wall_ms, 1), tuple(ctx.phase_ms.items()))
            job = _diff_job(ex, ctx)
        except Exception as exc:  # noqa: BLE001 - evidence never fails a step
            ex.store_errors.append(f"evidence of step {ctx.index + 1} failed: {type(exc).__name__}: {exc}")
            return None
        early, self._early = self._early, None
        if job is None:
            future: Future[ImageDiff] = Future()
            future.set_result(None)  # type: ignore[arg-type]
        elif early is not None and early[0] is ctx.before and early[1] is ctx.after:
            future = early[2]  # started at the after-screenshot: the same two images
        else:
            future = self._submit(job)  # the step looked again since (a failure's full look)
        self.drain(keep=DIFF_QUEUE - 1)  # those ready go out now; a full queue waits for its oldest
        if not self.pending:
            try:
                future.result(timeout=DIFF_WAIT_MS / 1000.0)
            except Exception:  # noqa: BLE001 - not ready (or failed): drain says so
                pass
        # in step order: behind the pending ones
        self.pending.append((ctx.run.run_id, ctx.run.flow.name, evidence, future))
        self.drain()
        return evidence
