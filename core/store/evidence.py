"""Step evidence in the store: write one step's record, read a run's (``step_evidence`` table).

:func:`add_evidence` and :func:`read_evidence` work inside a session of
:class:`~core.store.Store`, which exposes them as
:meth:`~core.store.Store.record_step_evidence` and
:meth:`~core.store.Store.step_evidence`.  A run's evidence read back is one
:class:`StepEvidenceRecord` per step: the engine's
:class:`~core.domain.evidence.StepEvidence` and the paths of the last
before and after screenshots of that step (relative to the media folder).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from sqlalchemy import Connection, Table, bindparam, insert, select, update
from sqlalchemy.orm import Session

from core.domain import BBox
from core.domain.evidence import AssertionCheck, ConsoleMessage, FailedRequest, ImageDiff, StepEvidence

from .evidence_models import StepEvidenceRow
from .models import ObservationRow
from .statements import first, write

__all__ = ["StepEvidenceRecord", "add_evidence", "read_evidence", "evidence_json", "evidence_of"]


_TABLE: Table = StepEvidenceRow.__table__  # type: ignore[assignment]
#: The id of a step's evidence row (parameters ``run_id``, ``index``); the first one, were there several.
_FIND_EVIDENCE = select(_TABLE.c.id).where(_TABLE.c.run_id == bindparam("run_id"),
                                           _TABLE.c.step_index == bindparam("index")).order_by(_TABLE.c.id)
#: Prebuilt writes of :func:`add_evidence` (compiled once; the parameters are the columns, ``row_id``).
_INSERT = insert(_TABLE)
_UPDATE = update(_TABLE).where(_TABLE.c.id == bindparam("row_id"))


@dataclass(frozen=True, slots=True)
class StepEvidenceRecord:
    """One step's evidence as stored, with its screenshots (paths relative to the media folder, or None)."""

    evidence: StepEvidence
    before_screenshot: str | None = None
    after_screenshot: str | None = None

    @property
    def index(self) -> int:
        return self.evidence.index


def evidence_json(ev: StepEvidence, t: Callable[[str], str] = str) -> dict[str, Any]:
    """The row's JSON columns of ``ev``; ``t`` masks texts (the store's redactor)."""
    d = ev.diff
    diff = None if d is None else {
        "regions": [[round(b.x, 2), round(b.y, 2), round(b.width, 2), round(b.height, 2)] for b in d.regions],
        "ratio": d.changed_ratio, "width": d.width, "height": d.height, "dpr": d.device_pixel_ratio,
        "truncated": d.truncated, "ms": round(d.ms, 2), "note": t(d.note)}
    return {
        "diff": diff,
        "console": [{"kind": c.kind, "text": t(c.text), "source": t(c.source), "t_ms": c.t_ms} for c in ev.console],
        "failed_requests": [{"method": r.method, "url": t(r.url), "status": r.status, "type": r.resource_type,
                             "error": t(r.error), "t_ms": r.t_ms} for r in ev.failed_requests],
        "assertions": [{"kind": a.kind, "target": t(a.target), "expected": t(a.expected), "observed": t(a.observed),
                        "ok": a.ok} for a in ev.assertions],
        "phase_ms": [[p, round(float(ms), 2)] for p, ms in ev.phase_ms],
    }


def evidence_of(row: StepEvidenceRow) -> StepEvidence:
    """The :class:`StepEvidence` of a stored row."""
    d = row.diff
    diff = None if not d else ImageDiff(
        tuple(BBox(*map(float, b)) for b in d.get("regions", ())), float(d.get("ratio", 0.0)),
        float(d.get("width", 0.0)), float(d.get("height", 0.0)), float(d.get("dpr", 1.0)),
        bool(d.get("truncated", False)), float(d.get("ms", 0.0)), str(d.get("note", "")))
    return StepEvidence(
        row.step_index, row.attempt, row.action or "", diff,
        tuple(ConsoleMessage(str(c.get("kind", "")), str(c.get("text", "")), str(c.get("source", "")),
                             float(c.get("t_ms", 0.0))) for c in row.console or ()),
        tuple(FailedRequest(str(r.get("method", "")), str(r.get("url", "")),
                            None if r.get("status") is None else int(r["status"]), str(r.get("type", "")),
                            str(r.get("error", "")), float(r.get("t_ms", 0.0))) for r in row.failed_requests or ()),
        tuple(AssertionCheck(str(a.get("kind", "")), str(a.get("target", "")), str(a.get("expected", "")),
                             str(a.get("observed", "")), bool(a.get("ok"))) for a in row.assertions or ()),
        float(row.active_ms), float(row.wall_ms), tuple((str(p), float(ms)) for p, ms in row.phase_ms or ()))


def add_evidence(s: Session | Connection, run_id: str, ev: StepEvidence, *, t: Callable[[str], str]) -> None:
    """Insert (or replace) the evidence row of step ``ev.index`` of ``run_id``: two Core statements (look up,
    then insert or update) on ``s``, a session or a connection in its write transaction."""
    cols = evidence_json(ev, t)
    values = dict(attempt=int(ev.attempt), action=t(ev.action), diff=cols["diff"], console=cols["console"],
                  failed_requests=cols["failed_requests"], assertions=cols["assertions"], phase_ms=cols["phase_ms"],
                  active_ms=float(ev.active_ms), wall_ms=float(ev.wall_ms))
    conn = s.connection() if isinstance(s, Session) else s
    found = first(conn, _FIND_EVIDENCE, {"run_id": run_id, "index": int(ev.index)})
    if found is None:
        write(conn, _INSERT, dict(values, run_id=run_id, step_index=int(ev.index)))
    else:
        write(conn, _UPDATE, dict(values, row_id=found[0]))


def read_evidence(s: Session, run_id: str) -> list[StepEvidenceRecord]:
    """The evidence of every recorded step of ``run_id``, by step index, with the last screenshots of each."""
    rows = s.scalars(select(StepEvidenceRow).where(StepEvidenceRow.run_id == run_id)
                     .order_by(StepEvidenceRow.step_index)).all()
    shots: dict[tuple[int, str], str] = {}
    for o in s.scalars(select(ObservationRow).where(ObservationRow.run_id == run_id).order_by(ObservationRow.id)):
        if o.screenshot:
            shots[(o.step_index, o.moment)] = o.screenshot  # the last one of each step and moment wins
    return [StepEvidenceRecord(evidence_of(r), shots.get((r.step_index, "before")), shots.get((r.step_index, "after")))
            for r in rows]
