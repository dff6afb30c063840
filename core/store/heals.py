"""Heal proposals in the store: insert or count again, list, review (issue 9 part 4).

:class:`HealTable` works on an open :class:`~core.store.Store` (its sessions,
its redactor): every text and JSON written is redacted like the rest of the
store.  The rules about *what* is proposed live in :mod:`core.heal`; this
module only persists them.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from sqlalchemy import select

from .heal_models import HealProposalRow
from .models import utcnow

if TYPE_CHECKING:
    from .repository import Store

__all__ = ["HealProposalRecord", "HealTable", "HEAL_STATUSES", "HEAL_KINDS", "HealConflictError"]

#: Review states of a proposal (``applied``: a filled-in descriptor written at once).
HEAL_STATUSES = ("pending", "accepted", "rejected", "applied")
#: Kinds of proposal: a heal (another element than the file's descriptor names) or a filled-in descriptor.
HEAL_KINDS = ("heal", "filled_in")


class HealConflictError(RuntimeError):
    """A review of a proposal that is no longer pending (another review came first)."""


def _utc(dt: datetime | None) -> datetime | None:
    if dt is None:
        return None
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=timezone.utc)


@dataclass(frozen=True)
class HealProposalRecord:
    """One stored proposal, as read back (see :class:`~core.store.heal_models.HealProposalRow`).

    ``score`` and ``margin`` are 0..1 (the winning level's); ``top`` is a
    list of ``{"ref", "score", "label"}`` best first; screenshot paths are
    relative to the store's media folder (``Store.media_path`` makes them
    absolute).
    """

    id: int
    key: str
    old_key: str
    project: str
    flow: str
    flow_file: str
    step_id: str
    step_index: int
    step_title: str
    kind: str
    status: str
    old_target: Mapping[str, Any]
    new_target: Mapping[str, Any]
    strategy: str
    score: float
    margin: float
    top: tuple[Mapping[str, Any], ...]
    resolution_reason: str
    before_screenshot: str | None
    after_screenshot: str | None
    run_id: str
    last_run_id: str
    seen: int
    reused: int
    reuse_failed: int
    flow_digest: str
    reason: str
    diff: str
    created_at: datetime | None = None
    updated_at: datetime | None = None
    reviewed_at: datetime | None = None


_FIELDS = ("key", "old_key", "project", "flow", "flow_file", "step_id", "step_index", "step_title", "kind",
           "status", "old_target", "new_target", "strategy", "score", "margin", "top", "resolution_reason",
           "before_screenshot", "after_screenshot", "run_id", "last_run_id", "seen", "reused", "reuse_failed",
           "flow_digest", "reason", "diff")


def _record(r: HealProposalRow) -> HealProposalRecord:
    return HealProposalRecord(
        id=r.id, key=r.key, old_key=r.old_key, project=r.project, flow=r.flow, flow_file=r.flow_file,
        step_id=r.step_id, step_index=r.step_index, step_title=r.step_title, kind=r.kind, status=r.status,
        old_target=dict(r.old_target or {}), new_target=dict(r.new_target or {}), strategy=r.strategy,
        score=r.score, margin=r.margin, top=tuple(dict(c) for c in r.top or ()),
        resolution_reason=r.resolution_reason, before_screenshot=r.before_screenshot,
        after_screenshot=r.after_screenshot, run_id=r.run_id, last_run_id=r.last_run_id, seen=r.seen,
        reused=r.reused, reuse_failed=r.reuse_failed, flow_digest=r.flow_digest, reason=r.reason, diff=r.diff,
        created_at=_utc(r.created_at), updated_at=_utc(r.updated_at), reviewed_at=_utc(r.reviewed_at))


class HealTable:
    """Read and write ``heal_proposals`` through an open store.

    Raises (every method): :class:`~core.store.StoreClosedError`, and for
    writes on a read-only store :class:`~core.store.StoreReadOnlyError`.
    """

    def __init__(self, store: "Store") -> None:
        self.store = store

    def _clean(self, values: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in values.items():
            if k not in _FIELDS:
                raise ValueError(f"unknown heal proposal field {k!r}")
            if isinstance(v, str) and k not in ("key", "old_key", "status", "kind", "flow_digest"):
                v = self.store._t(v)
            elif isinstance(v, (dict, list, tuple)):
                v = self.store._j(list(v) if isinstance(v, tuple) else v)
            out[k] = v
        return out

    def propose(self, values: Mapping[str, Any]) -> tuple[HealProposalRecord, bool]:
        """Insert a proposal, or count a sighting of the same ``key`` again; one transaction.

        A pending row seen again gets ``seen + 1``, ``last_run_id`` and
        ``flow_digest`` of this sighting (its first evidence is kept).  A row
        already reviewed (accepted, rejected, applied) is left as it is: a
        rejected change is never proposed again.

        Returns
        -------
        tuple[HealProposalRecord, bool]
            The row, and True when it was inserted now.
        """
        clean = self._clean(values)
        if clean.get("status", "pending") not in HEAL_STATUSES or clean.get("kind", "heal") not in HEAL_KINDS:
            raise ValueError(f"bad status/kind {clean.get('status')!r}/{clean.get('kind')!r}")
        with self.store._write() as s:
            row = s.scalar(select(HealProposalRow).where(HealProposalRow.key == clean["key"]))
            if row is None:
                now = utcnow()
                row = HealProposalRow(**clean, created_at=now, updated_at=now)
                if row.status == "applied":
                    row.reviewed_at = now
                s.add(row)
                s.flush()
                return _record(row), True
            if row.status == "pending":
                row.seen += 1
                row.last_run_id = clean.get("last_run_id") or clean.get("run_id") or row.last_run_id
                row.flow_digest = clean.get("flow_digest") or row.flow_digest
                row.updated_at = utcnow()
            return _record(row), False

    def get(self, proposal_id: int) -> HealProposalRecord | None:
        """One proposal, None when unknown."""
        with self.store._read() as s:
            row = s.get(HealProposalRow, int(proposal_id))
            return _record(row) if row is not None else None

    def list(self, *, status: str | None = None, flow: str | None = None,
             project: str | None = None) -> list[HealProposalRecord]:
        """Proposals, newest first, optionally filtered by status, flow and project name."""
        q = select(HealProposalRow).order_by(HealProposalRow.id.desc())
        if status is not None:
            q = q.where(HealProposalRow.status == status)
        if flow is not None:
            q = q.where(HealProposalRow.flow == flow)
        if project is not None:
            q = q.where(HealProposalRow.project == project)
        with self.store._read() as s:
            return [_record(r) for r in s.scalars(q)]

    def pending_for(self, old_key: str) -> list[HealProposalRecord]:
        """Pending heals of one (flow, step, old descriptor), most recently seen first."""
        q = (select(HealProposalRow).where(HealProposalRow.old_key == old_key, HealProposalRow.status == "pending",
                                           HealProposalRow.kind == "heal")
             .order_by(HealProposalRow.updated_at.desc(), HealProposalRow.id.desc()))
        with self.store._read() as s:
            return [_record(r) for r in s.scalars(q)]

    def count_reuse(self, proposal_id: int, run_id: str, *, passed: bool, flow_digest: str = "") -> None:
        """Count one reuse of a pending heal by a later run: ``reused`` when its step passed, else ``reuse_failed``."""
        with self.store._write() as s:
            row = s.get(HealProposalRow, int(proposal_id))
            if row is None:
                return
            if passed:
                row.reused += 1
            else:
                row.reuse_failed += 1
            row.last_run_id = run_id
            if flow_digest and row.status == "pending":
                row.flow_digest = flow_digest
            row.updated_at = utcnow()

    def review(self, proposal_id: int, status: str, *, reason: str = "", diff: str = "") -> HealProposalRecord:
        """Mark a pending proposal ``accepted`` or ``rejected`` (with the reason and the diff applied).

        Raises
        ------
        KeyError
            Unknown id.
        HealConflictError
            The proposal is not pending any more.
        """
        if status not in ("accepted", "rejected"):
            raise ValueError(f"a review accepts or rejects, not {status!r}")
        with self.store._write() as s:
            row = s.get(HealProposalRow, int(proposal_id))
            if row is None:
                raise KeyError(proposal_id)
            if row.status != "pending":
                raise HealConflictError(f"heal #{proposal_id} is {row.status}, not pending")
            row.status, row.reason, row.diff = status, self.store._t(reason), self.store._t(diff)
            row.reviewed_at = row.updated_at = utcnow()
            return _record(row)

    def refresh_digest(self, ids: Iterable[int], digest: str) -> None:
        """Set the flow digest of pending proposals (after an accepted heal changed their flow file)."""
        ids = [int(i) for i in ids]
        if not ids:
            return
        with self.store._write() as s:
            for row in s.scalars(select(HealProposalRow).where(HealProposalRow.id.in_(ids),
                                                               HealProposalRow.status == "pending")):
                row.flow_digest = digest
