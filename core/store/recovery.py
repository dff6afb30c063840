"""Mark runs left ``running`` by a dead process as ``interrupted``.

A run row is inserted as ``running`` when the run begins and completed when
it finishes; a process killed in between leaves it ``running`` forever.
:func:`mark_interrupted` finds such rows: the owner process (see
:mod:`core.store.owner`) is known to be gone on this host, or - when
``older_than`` is given - the owner cannot be checked (another host) and the
run has not written anything for longer than ``older_than``.  A run whose
owner is alive is never touched.
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from .models import RunRow, utcnow
from .owner import owner_alive, parse_owner

if TYPE_CHECKING:
    from .repository import Store

__all__ = ["INTERRUPTED", "mark_interrupted", "recover_interrupted"]

#: Status of a run whose process ended before the run finished.
INTERRUPTED = "interrupted"


def _utc(dt: datetime) -> datetime:
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=timezone.utc)


def mark_interrupted(session: Session, *, older_than: timedelta | None = None,
                     now: datetime | None = None) -> list[str]:
    """Mark stale ``running`` runs ``interrupted`` inside the session's transaction.

    ``finished_at`` becomes the run's last write time (its last sign of
    life) and ``seconds`` the time from start to then.

    Parameters
    ----------
    session : Session
        Session with an open write transaction.
    older_than : timedelta | None
        Also mark runs whose owner cannot be checked (another host) when
        their last write is older than this; None never marks those.
    now : datetime | None
        Current time (UTC), injectable for tests.

    Returns
    -------
    list[str]
        Ids of the runs marked, oldest first.
    """
    now = now or utcnow()
    marked: list[str] = []
    rows = session.execute(
        select(RunRow.id, RunRow.owner, RunRow.started_at, RunRow.updated_at)
        .where(RunRow.status == "running").order_by(RunRow.started_at)
    ).all()
    for run_id, owner, started_at, updated_at in rows:
        alive = owner_alive(owner or "")
        last = _utc(updated_at or started_at)
        stale = alive is False or (
            alive is None and older_than is not None and now - last > older_than)
        if not stale:
            continue
        parsed = parse_owner(owner or "")
        who = f"process {parsed[1]} on {parsed[0]}" if parsed else "its process"
        done = session.execute(
            update(RunRow)
            .where(RunRow.id == run_id, RunRow.status == "running")
            .values(status=INTERRUPTED, finished_at=last,
                    seconds=max(0.0, (last - _utc(started_at)).total_seconds()),
                    error=f"interrupted: {who} ended before the run finished")
        )
        if done.rowcount:
            marked.append(run_id)
    return marked


def recover_interrupted(store: "Store | Path", *, older_than: timedelta | None = None) -> list[str]:
    """Mark the stale ``running`` runs of a store ``interrupted``.

    Parameters
    ----------
    store : Store | Path
        An open writable :class:`~core.store.Store`, or a path accepted by
        :meth:`Store.open <core.store.Store.open>` (opened and closed here).
    older_than : timedelta | None
        See :func:`mark_interrupted`.

    Returns
    -------
    list[str]
        Ids of the runs marked.
    """
    from .repository import Store

    if isinstance(store, Store):
        return store.recover_interrupted(older_than=older_than)
    with Store.open(Path(store), recover=False) as opened:
        return opened.recover_interrupted(older_than=older_than)
