"""R1 screen baselines in the store: read, create, refresh, alert; and the change reports of runs.

Called by :class:`core.store.Store` (its ``*_baseline*`` and
``record_screen_change`` methods) inside the store's own sessions; texts and
JSON pass through the store's redactor before they are written.  Baselines
live only here - a flow file is never read or written by this module.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable

from sqlalchemy import Connection, Table, bindparam, delete, insert, select, update
from sqlalchemy.orm import Session

from core.domain.change import ChangeReport, KeyElement, ScreenFingerprint

from .models import ScreenBaselineRow, ScreenChangeRow, utcnow
from .statements import first, write

__all__ = ["StoredBaseline", "ScreenChangeRecord", "load_baselines", "save_baseline", "alert_baseline",
           "add_screen_change", "baseline_rows", "screen_changes"]

#: Version of the rows this module writes (``schema_version`` column).
BASELINE_VERSION = 1


@dataclass(frozen=True, slots=True)
class StoredBaseline:
    """One stored baseline (read model).

    Attributes
    ----------
    flow, step_id : str
        The step whose "before" screen this is.
    fingerprint : ScreenFingerprint
        The baseline.
    created_at, updated_at : datetime
        UTC; ``updated_at`` moves with every refresh.
    refreshed : int
        Refreshes after passing runs.
    alert : bool
        A run saw the screen changed beyond the R1 threshold since the last refresh.
    alert_reason : str
        The change report's summary line.
    alert_report : dict
        :meth:`ChangeReport.to_mapping` of that run.
    alert_run_id : str
        The run that raised the alert.
    """

    flow: str
    step_id: str
    fingerprint: ScreenFingerprint
    created_at: datetime
    updated_at: datetime
    refreshed: int = 0
    alert: bool = False
    alert_reason: str = ""
    alert_report: dict[str, Any] = field(default_factory=dict)
    alert_run_id: str = ""


@dataclass(frozen=True, slots=True)
class ScreenChangeRecord:
    """A stored change report: run, step, screen and the report as a mapping."""

    run_id: str
    step_index: int
    flow: str
    step_id: str
    screen_key: str
    similarity: float | None
    layout_changed: bool
    report: dict[str, Any]


_TABLE: Table = ScreenBaselineRow.__table__  # type: ignore[assignment]
#: The id and refresh count of one baseline (parameters ``flow``, ``step_id``).
_FIND_BASELINE = select(_TABLE.c.id, _TABLE.c.refreshed).where(_TABLE.c.flow == bindparam("flow"),
                                                               _TABLE.c.step_id == bindparam("step_id"))
#: Prebuilt writes of :func:`save_baseline` (compiled once; the parameters are the columns, ``row_id``).
_INSERT_BASELINE = insert(_TABLE)
_UPDATE_BASELINE = update(_TABLE).where(_TABLE.c.id == bindparam("row_id"))


def _utc(dt: datetime) -> datetime:
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=timezone.utc)


def _of(row: ScreenBaselineRow) -> StoredBaseline:
    fp = ScreenFingerprint(row.screen_key, row.phash or "", row.layout or "",
                           tuple(KeyElement.from_mapping(e) for e in row.elements or ()))
    return StoredBaseline(row.flow, row.step_id, fp, _utc(row.created_at), _utc(row.updated_at), row.refreshed,
                          bool(row.alert), row.alert_reason or "", dict(row.alert_report or {}),
                          row.alert_run_id or "")


def load_baselines(s: Session, flow: str) -> dict[str, StoredBaseline]:
    """Baselines of one flow by step id."""
    rows = s.scalars(select(ScreenBaselineRow).where(ScreenBaselineRow.flow == flow))
    return {r.step_id: _of(r) for r in rows}


def baseline_rows(s: Session, *, alerts_only: bool = False) -> list[StoredBaseline]:
    """Every baseline (or only those with an alert), by flow then step id."""
    q = select(ScreenBaselineRow).order_by(ScreenBaselineRow.flow, ScreenBaselineRow.step_id)
    if alerts_only:
        q = q.where(ScreenBaselineRow.alert.is_(True))
    return [_of(r) for r in s.scalars(q)]


def delete_baselines(s: Session, *, flow: str | None = None, step_id: str | None = None) -> int:
    """Delete baselines (all, one flow's, or one step's); the next passing run makes new ones. Returns the count."""
    q = delete(ScreenBaselineRow)
    if flow is not None:
        q = q.where(ScreenBaselineRow.flow == flow)
    if step_id is not None:
        q = q.where(ScreenBaselineRow.step_id == step_id)
    return int(s.execute(q).rowcount or 0)


def save_baseline(s: Session | Connection, flow: str, step_id: str, fp: ScreenFingerprint, *,
                  t: Callable[[str], str], j: Callable[[Any], Any]) -> bool:
    """Create the baseline of ``(flow, step_id)`` or refresh it with ``fp`` (clearing an alert).

    Two Core statements (look up, then insert or update) on ``s`` (a session or a connection in its write
    transaction).  Returns True when it was created.
    """
    conn = s.connection() if isinstance(s, Session) else s
    found = first(conn, _FIND_BASELINE, {"flow": flow, "step_id": step_id})
    now = utcnow()
    values = dict(screen_key=t(fp.screen_key), phash=fp.phash, layout=fp.layout,
                  elements=j([e.to_mapping() for e in fp.elements]), updated_at=now, alert=False, alert_reason="",
                  alert_report={}, alert_at=None, alert_run_id="", schema_version=BASELINE_VERSION)
    if found is None:
        write(conn, _INSERT_BASELINE, dict(values, flow=flow, step_id=step_id, created_at=now, refreshed=0))
        return True
    write(conn, _UPDATE_BASELINE, dict(values, row_id=found[0], refreshed=(found[1] or 0) + 1))
    return False


def alert_baseline(s: Session, flow: str, step_id: str, report: ChangeReport, run_id: str, *,
                   t: Callable[[str], str], j: Callable[[Any], Any]) -> bool:
    """Flag the baseline of ``(flow, step_id)``: the screen changed beyond the threshold; the baseline is kept.

    Returns False when there is no such baseline.
    """
    row = s.scalar(select(ScreenBaselineRow).where(ScreenBaselineRow.flow == flow,
                                                   ScreenBaselineRow.step_id == step_id))
    if row is None:
        return False
    row.alert = True
    row.alert_reason = t(report.summary())
    row.alert_report = j(report.to_mapping())
    row.alert_at = utcnow()
    row.alert_run_id = run_id
    return True


def add_screen_change(s: Session, run_id: str, index: int, flow: str, step_id: str, report: ChangeReport, *,
                      t: Callable[[str], str], j: Callable[[Any], Any]) -> None:
    """Insert one change report of a run."""
    s.add(ScreenChangeRow(run_id=run_id, step_index=int(index), flow=t(flow), step_id=t(step_id),
                          screen_key=t(report.screen_key), similarity=report.similarity,
                          layout_changed=bool(report.layout_changed), report=j(report.to_mapping()),
                          created_at=utcnow()))


def screen_changes(s: Session, run_id: str) -> list[ScreenChangeRecord]:
    """The change reports of one run, in the order they were recorded."""
    rows = s.scalars(select(ScreenChangeRow).where(ScreenChangeRow.run_id == run_id).order_by(ScreenChangeRow.id))
    return [ScreenChangeRecord(r.run_id, r.step_index, r.flow, r.step_id, r.screen_key, r.similarity,
                               bool(r.layout_changed), dict(r.report or {})) for r in rows]
