"""What a step looked like, for the studio's step inspector and element picker: a small JSON file per step.

The store keeps each step's screenshots, resolution, verdict and evidence,
but not the elements of the page it saw.  :class:`StepSnapshotPlugin`
writes, at the kernel's ``step_recorded`` hook, one file per step of a run
under the store's media folder, ``inspect/<run_id>/<index:04d>.json``
(:func:`snapshot_relpath`; the last attempt of a step replaces the file)::

    {"version": 1, "index": 3, "attempt": 1, "step_id": "s4", "action": "click",
     "target": {"ref": "0:12", "box": [x, y, w, h]} | null,     # the element acted on, CSS px
     "point": [x, y] | null,                                   # where a pointer action lands (box centre), CSS px
     "locator": "internal:role=button[...]",                   # the recorded locator the action went through, or ""
     "before": OBSERVATION | null, "after": OBSERVATION | null,
     "requests": [{"method", "url", "type", "status", "t_ms"}, ...]}   # sent while the step ran, t_ms from its start

    OBSERVATION = {"url", "viewport": [w, h], "dpr", "scroll": [x, y],
                   "elements": [{"ref", "descriptor": {...}, "enabled", "visible", "editable", "covered",
                                 "checked"}, ...],                # only when the observation has a screenshot
                   "anchors": [{"text", "role", "box", "frame"}, ...]}

An observation's elements are kept only with its screenshot: at the
evidence level ``failures`` a passing step has none, and its file holds the
target, the locator and the requests only (a few hundred bytes).  Every
text passes the driver's redactor; form values are never written (a
descriptor holds none), and the screenshots themselves are the store's,
already masked.

The file is built and written on one worker thread (the step does not wait
for it); ``flow_ends`` waits for the writes of the flow.  Best effort: a
failure is kept in ``Ports.store_errors``, never fails a step.  Nothing is
written without a store.
"""
from __future__ import annotations

import json
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

from core.domain import Observation
from core.engine.hooks import FlowEnds, Ports, StepRecorded, hookimpl
from core.engine.step import StepContext
from core.perception.netwatch import NetworkWatch
from core.store.media import check_run_id, write_atomic

__all__ = ["StepSnapshotPlugin", "SNAPSHOT_DIR", "SNAPSHOT_VERSION", "MAX_REQUESTS", "snapshot_relpath",
           "observation_json"]

#: Folder of the step files, relative to the store's media folder.
SNAPSHOT_DIR = "inspect"
#: Version of the file's layout (``version`` key); a reader refuses a newer one.
SNAPSHOT_VERSION = 1
#: Requests kept per step (the first ones), the bound of :data:`core.engine.evidence.MAX_ENTRIES` doubled: a step
#: of a busy page sends a few dozen, the inspector lists them all.
MAX_REQUESTS = 100
#: Actions whose pointer lands on the target's centre (the inspector marks that point on the action image).
POINTER_ACTIONS = frozenset({"click", "dblclick", "hover", "check", "uncheck"})


def snapshot_relpath(run_id: str, index: int) -> str:
    """``inspect/<run_id>/<index:04d>.json``; raises ValueError for an unsafe run id."""
    return f"{SNAPSHOT_DIR}/{check_run_id(run_id)}/{int(index):04d}.json"


def _box(b: Any) -> list[float] | None:
    return None if b is None else [round(b.x, 1), round(b.y, 1), round(b.width, 1), round(b.height, 1)]


def _masked(value: Any, redact: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: _masked(v, redact) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_masked(v, redact) for v in value]
    return value


def observation_json(obs: Observation | None, redact: Callable[[str], str], *, elements: bool) -> dict[str, Any] | None:
    """The OBSERVATION object of the module doc (``elements`` False: without elements and anchors)."""
    if obs is None:
        return None
    out: dict[str, Any] = {"url": redact(obs.url), "viewport": list(obs.viewport),
                           "dpr": float(obs.device_pixel_ratio or 1.0), "scroll": list(obs.scroll or (0.0, 0.0))}
    if elements:
        out["elements"] = [
            {"ref": c.ref, "descriptor": _masked({k: v for k, v in c.descriptor.to_mapping().items() if k != "crop"},
                                                 redact),
             "enabled": bool(c.enabled), "visible": bool(c.visible), "editable": bool(c.editable),
             "covered": bool(c.covered), "checked": c.checked}
            for c in obs.candidates]
        out["anchors"] = [{"text": redact(a.text), "role": a.role, "box": _box(a.bbox), "frame": a.frame}
                          for a in obs.anchors]
    return out


class StepSnapshotPlugin:
    """One JSON file per step for the studio's inspector (see the module doc); uses the ports' driver and store."""

    def __init__(self, ports: Ports) -> None:
        self.ports = ports
        self._worker: ThreadPoolExecutor | None = None
        self._pending: list[Future[None]] = []
        #: ``time.monotonic()`` where the next step's window of requests starts (the previous step's end).
        self._t0: float | None = None

    def _media_root(self) -> Path | None:
        root = getattr(self.ports.store, "media_root", None)
        return Path(root) if root is not None else None

    @hookimpl
    def step_recorded(self, p: StepRecorded) -> None:
        root = self._media_root()
        if root is None:
            return
        ctx = p.step
        try:
            job = self._job(ctx)
        except Exception as exc:  # noqa: BLE001 - never fails a step
            self.ports.store_errors.append(f"step snapshot of step {ctx.index + 1} failed: {exc}")
            return
        if self._worker is None:
            self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="steadyhand-snapshot")
        self._pending = [f for f in self._pending if not f.done()]
        self._pending.append(self._worker.submit(self._write, root, *job))

    def _job(self, ctx: StepContext) -> tuple[str, int, dict[str, Any], Observation | None, Observation | None]:
        """What the file needs, read on the engine thread (the observations are frozen: read later)."""
        now = time.monotonic()
        start = ctx.t0 if self._t0 is None else min(self._t0, ctx.t0)
        self._t0 = now
        requests: list[dict[str, Any]] = []
        watch = getattr(self.ports.driver, "_steadyhand_netwatch", None)
        if isinstance(watch, NetworkWatch):
            # the deque as it is now: no round trip to the page (the evidence plugin's read already waited)
            for r in list(watch._seen):  # noqa: SLF001 - read-only copy of the watch's own records
                if start <= r.t <= now and len(requests) < MAX_REQUESTS:
                    requests.append({"method": r.method, "url": r.url, "type": r.resource_type,
                                     "status": r.status, "t_ms": round((r.t - ctx.t0) * 1000.0, 1)})
        step = ctx.decided or (ctx.run.flow.steps[ctx.index] if ctx.index < len(ctx.run.flow.steps) else None)
        action = step.action.kind if step is not None else ""
        cand = ctx.candidate
        box = cand.descriptor.bbox if cand is not None else None
        point = None
        if box is not None and action in POINTER_ACTIONS:
            point = [round(box.x + box.width / 2, 1), round(box.y + box.height / 2, 1)]
        head = {"version": SNAPSHOT_VERSION, "index": ctx.index, "attempt": max(1, ctx.attempt),
                "step_id": step.id if step is not None else "", "action": action,
                "target": None if cand is None else {"ref": cand.ref, "box": _box(box)},
                "point": point, "locator": ctx.locator or "", "requests": requests}
        return ctx.run.run_id, ctx.index, head, ctx.before, ctx.after

    def _write(self, root: Path, run_id: str, index: int, head: dict[str, Any],
               before: Observation | None, after: Observation | None) -> None:
        try:
            redact = self.ports.redact
            data = dict(head)
            data["requests"] = [dict(r, url=redact(r["url"])) for r in head["requests"]]
            data["before"] = observation_json(before, redact, elements=bool(before and before.screenshot_png))
            data["after"] = observation_json(after, redact, elements=bool(after and after.screenshot_png))
            text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
            write_atomic(root, snapshot_relpath(run_id, index), text.encode("utf-8"))
        except Exception as exc:  # noqa: BLE001 - never fails a step
            self.ports.store_errors.append(f"step snapshot of step {index + 1} failed: {exc}")

    @hookimpl
    def flow_ends(self, p: FlowEnds) -> None:
        """Every file of the flow is written before its result is returned."""
        for f in self._pending:
            f.result()
        self._pending = []
        if self._worker is not None:
            self._worker.shutdown(wait=True)
            self._worker = None
        self._t0 = None
