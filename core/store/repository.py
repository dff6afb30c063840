"""The run store: record runs as they happen, read them back.

One :class:`Store` per database.  The engine thread owns a writable store;
a front end (the studio) may open a second, read-only store on the same
file from another thread or process and read while the engine writes
(SQLite WAL; see :mod:`core.store.database`).  Every call uses its own
session and short transaction, so:

* a run row is inserted as ``running`` by :meth:`Store.begin_run` and
  completed by :meth:`Store.finish_run`; each record in between is one
  committed transaction - a killed process leaves whole records and a
  ``running`` row, which :meth:`Store.recover_interrupted` (called on a
  writable open) marks ``interrupted`` once its process is gone;
* readers always see whole records.

Secrets: every text written (including JSON contents) goes through the
store's :class:`~core.secrets.Redactor`; screenshots must arrive already
masked (``core.secrets.mask_boxes_png``), and their file names contain only
the run id, the step index and the moment.
"""
from __future__ import annotations

import errno
import threading

import uuid
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from sqlalchemy import Connection, Engine, bindparam, func, select
from sqlalchemy.exc import DatabaseError, DBAPIError
from sqlalchemy.orm import Session

from core.domain import BBox, Checkpoint, Escalation, EscalationCandidate, Observation, Resolution, RunResult, StepOutcome, Verdict
from core.secrets import Redactor

from . import baselines as _baselines
from . import database
from .database import StoreError, StoreUnavailableError
from .media import PNG_MAGIC, check_run_id, screenshot_relpath, write_atomic
from .correction_models import CorrectionRow
from .migrations import SchemaVersionError, check_version, migrate
from .models import (
    Base,
    SCHEMA_VERSION, CheckpointRow, EscalationRow, ObservationRow, ResolutionRow, RunRow, StepRow, VerdictRow,
    utcnow,
)
from .owner import current_owner
from .records import (
    EscalationRecord, ObservationRecord, ResolutionRecord, RunDetail, RunSummary, StepRecord,
    VerdictRecord,
)
from .recovery import mark_interrupted
from .shared import StoreUrlError, engine_url, store_url, url_label
from .statements import (
    CHECKPOINTS, INSERT_OBSERVATION, INSERT_RESOLUTION, INSERT_VERDICT, OBSERVATIONS, STEPS, TOUCH_RUN, check_transaction,
    first, savepoint, upsert, write,
)
from .writer import PUT_LIMIT_S, BackgroundWriter


__all__ = [
    "STORE_DIRNAME", "DB_FILENAME", "StoreError", "StoreReadOnlyError", "StoreClosedError",
    "UnknownRunError", "store_path", "Store",
]

#: Folder of a project's run data (git-ignored).
STORE_DIRNAME = ".steadyhand"
#: Database file name inside it.
DB_FILENAME = "store.sqlite"


#: How many screenshots a step's moment has already (parameters ``run_id``, ``index``, ``when``): the next one's n.
_COUNT_SHOTS = select(func.count()).select_from(OBSERVATIONS).where(
    OBSERVATIONS.c.run_id == bindparam("run_id"), OBSERVATIONS.c.step_index == bindparam("index"),
    OBSERVATIONS.c.moment == bindparam("when"))

#: errno values of a full disk or quota: a screenshot is then left out, the row kept (never a broken link).
_DISK_FULL = (errno.ENOSPC, errno.EDQUOT)


class StoreVersionError(StoreError, SchemaVersionError):
    """The file is no Steadyhand store of a schema this code can use (newer, or not a store); names the file."""


class StoreReadOnlyError(StoreError):
    """A write was attempted on a store opened read-only."""


class StoreClosedError(StoreError):
    """The store was used after :meth:`Store.close`."""


class UnknownRunError(StoreError, KeyError):
    """A record names a run id that was never begun in this store."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown run"


class RunIdError(StoreError, LookupError):
    """A run id given by a person matches no run of the store, or several (a prefix too short).

    Attributes
    ----------
    given : str
        The id or prefix as given.
    matches : tuple[str, ...]
        The full ids that start with it (at most :data:`RUN_ID_MATCHES_SHOWN`; empty: none).
    """

    def __init__(self, message: str, given: str, matches: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.given, self.matches = given, matches


#: Characters of a run id that History, ``history list`` and the studio's status bar show (git's short ids).
SHORT_RUN_ID = 8
#: Most matches an ambiguous prefix's error lists.
RUN_ID_MATCHES_SHOWN = 10


def short_run_id(run_id: str) -> str:
    """The first :data:`SHORT_RUN_ID` characters of ``run_id``: the id every listing shows."""
    return run_id[:SHORT_RUN_ID]


def store_path(project_dir: Path) -> Path:
    """Database path of a project folder: ``<project>/.steadyhand/store.sqlite``."""
    return Path(project_dir) / STORE_DIRNAME / DB_FILENAME


def _utc(dt: datetime | None) -> datetime | None:
    if dt is None:
        return None
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=timezone.utc)


class Store:
    """Repository of runs, steps, observations, resolutions, verdicts and escalations.

    Do not construct directly: use :meth:`open` (SQLite file or project
    folder) or :meth:`from_url` (any SQLAlchemy URL, e.g. PostgreSQL).

    Attributes
    ----------
    media_root : Path
        Folder that screenshot paths are relative to (``.steadyhand/``).
    read_only : bool
        True when opened read-only; writes raise :class:`StoreReadOnlyError`.
    path : Path | None
        The SQLite file, None for a URL store.
    """

    def __init__(self, engine: Engine, *, media_root: Path, redactor: Redactor | None,
                 read_only: bool, path: Path | None) -> None:
        self._engine = engine
        self._wengine = database.writer(engine)
        self._redactor = redactor if redactor is not None else Redactor(())
        self._closed = False
        self._owner = current_owner()
        self._last_start = datetime.min.replace(tzinfo=timezone.utc)
        self.media_root = Path(media_root)
        #: Screenshots that could not be written (a full disk): one line each, for the front end to say.
        self.media_errors: list[str] = []
        self.read_only = read_only
        self.path = path
        #: Writes handed over by :meth:`defer`, committed in order on one thread (:mod:`core.store.writer`).
        self._writer = BackgroundWriter(batch=self._batch)
        #: The writer thread's batch while it commits one (``conn``, ``touched``; on that thread only).
        self._batching = threading.local()
        #: Runs known to be in the store (begun here, or found by a write): a batch's writes for one of them
        #: look nothing up; its last-write time is set once, when the batch commits (see :meth:`_touch`).
        self._known_runs: set[str] = set()

    # -- opening and closing ---------------------------------------------------------

    @classmethod
    def open(cls, path: Path, *, redactor: Redactor | None = None, read_only: bool = False,
             recover: bool = True) -> "Store":
        """Open (and create or migrate, when writable) a SQLite store.

        Parameters
        ----------
        path : Path
            The database file (``<project>/.steadyhand/store.sqlite``), or an
            existing project folder (the file is then
            :func:`store_path` of it), or an existing ``.steadyhand`` folder.
        redactor : Redactor | None
            Masks secrets in every text written; None masks nothing.
        read_only : bool
            Open for reading only (the file must exist and be at the current
            schema version); for a second store next to the engine's.
        recover : bool
            When writable, mark runs left ``running`` by dead processes
            ``interrupted`` (:meth:`recover_interrupted`).

        Raises
        ------
        FileNotFoundError
            Read-only open of a missing file.
        core.store.SchemaVersionError
            The file is from a newer Steadyhand, or (read-only) needs a migration.
        StoreError
            The file is damaged or not a SQLite database.
        """
        path = Path(path)
        if path.is_dir():
            path = path / DB_FILENAME if path.name == STORE_DIRNAME else store_path(path)
        if store_url():  # STEADYHAND_STORE_URL: the team's shared store (core.store.shared); media stay here
            return cls.from_url(store_url(), media_root=path.parent, redactor=redactor, read_only=read_only,
                                recover=recover)
        if read_only and not path.is_file():
            raise FileNotFoundError(f"no store at {path}")
        path.parent.mkdir(parents=True, exist_ok=True)
        engine = database.sqlite_engine(path, read_only=read_only)
        store = cls(engine, media_root=path.parent, redactor=redactor, read_only=read_only,
                    path=path)
        try:
            store._prepare(recover=recover)
        except DatabaseError as exc:  # a damaged file or not SQLite at all: say so, never write over it
            engine.dispose()
            why = _unwritable(path, exc) if not read_only else ""
            if why:  # a sound store the disk will not let us write (issue 21 item 9): never "move it away"
                raise StoreError(f"{path}: the store cannot be written: {why}; nothing was run") from None
            raise StoreError(f"{path}: not a readable Steadyhand store ({exc.orig}); move the file away to "
                             f"start a new store (nothing was written to it)") from None
        except SchemaVersionError as exc:  # newer, or not a store at all (an empty file opened read-only)
            engine.dispose()
            raise StoreVersionError(f"{path}: {exc}") from None
        return store

    @classmethod
    def from_url(cls, url: str, *, media_root: Path, redactor: Redactor | None = None,
                 read_only: bool = False, recover: bool = True) -> "Store":
        """Open a store on a server database (e.g. ``postgresql+psycopg://...``).

        ``media_root`` is the folder for screenshots.  ``read_only`` here is
        enforced by the store, not the database.
        """
        try:
            engine = database.url_engine(engine_url(url))
        except StoreUrlError as exc:
            raise StoreError(str(exc)) from None
        except ImportError:
            raise StoreError(f"the shared store {url_label(url)} needs the PostgreSQL driver psycopg: "
                             "pip install 'steadyhand[postgres]'") from None
        store = cls(engine, media_root=Path(media_root), redactor=redactor,
                    read_only=read_only, path=None)
        try:
            store._prepare(recover=recover)
        except DBAPIError as exc:  # the server is down, refuses us, or timed out: one line, password hidden
            first = str(getattr(exc, "orig", exc) or exc).strip().splitlines()
            raise StoreUnavailableError(f"the shared store {url_label(url)} cannot be used: "
                             f"{first[0] if first else type(exc).__name__}") from None
        except SchemaVersionError as exc:
            raise StoreVersionError(f"{url_label(url)}: {exc}") from None
        return store

    def _prepare(self, *, recover: bool) -> None:
        try:
            if self.read_only:
                with self._engine.connect() as conn:
                    check_version(conn)
            else:
                with self._wengine.begin() as conn:
                    migrate(conn)
                if recover:
                    self.recover_interrupted()
            self._check_tables()
        except BaseException:
            self._engine.dispose()
            self._closed = True
            raise

    def _check_tables(self) -> None:
        """Every table of the schema is there (one query on SQLite's catalogue; other databases: skipped).

        Raises
        ------
        StoreError
            Naming the file and the missing tables (a table dropped by hand or a damaged file).
        """
        if self._engine.dialect.name != "sqlite":
            return
        with self._engine.connect() as conn:
            have = {r[0] for r in conn.exec_driver_sql("SELECT name FROM sqlite_master WHERE type = 'table'")}
        missing = sorted(set(Base.metadata.tables) - have)
        if missing:
            raise StoreError(f"{self.path}: a damaged Steadyhand store: table {', '.join(repr(m) for m in missing[:5])} "
                             f"{'is' if len(missing) == 1 else 'are'} missing; move the file away to start a new "
                             "store (nothing was written to it)")

    def close(self) -> None:
        """Commit the deferred writes (:meth:`defer`), then release the database connections (idempotent)."""
        if not self._closed:
            self._writer.close()
            self._closed = True
            self._engine.dispose()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        return self._closed

    # -- secrets ------------------------------------------------------------------------

    @property
    def redactor(self) -> Redactor:
        """The redactor applied to every text written."""
        return self._redactor

    def add_secrets(self, values: Iterable[str]) -> None:
        """Also mask these secret values from now on (e.g. a flow's resolved secrets)."""
        self._redactor = self._redactor.extended(values)

    def _t(self, s: str | None) -> str:
        return self._redactor.text(s or "")

    def _j(self, value: Any) -> Any:
        return self._redactor.mapping(value)

    # -- sessions -------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosedError("the store is closed")
        self._wait_deferred()

    def _wait_deferred(self) -> None:
        """Before a synchronous read or write: every deferred write handed over before it is committed."""
        if self._writer.pending and not self._writer.flush(PUT_LIMIT_S):
            raise StoreError(f"{self.path or 'the store'}: the deferred writes did not finish within "
                             f"{PUT_LIMIT_S:.0f} s (the database stayed locked)")

    # -- write-behind -----------------------------------------------------------------------

    def defer(self, write: str | Any, *args: Any, on_error: Any = None) -> None:
        """Hand a write over to the store's writer thread: ``write`` is a method name of this store
        (``"record_verdict"``) or a callable; it runs with ``args`` after every write deferred before it, and
        before any later synchronous read or write of this store (:mod:`core.store.writer`).

        Its result is dropped; its exception goes to ``on_error(exc)`` (nothing raised here for it).

        Raises
        ------
        StoreClosedError
            When the store is closed.
        StoreReadOnlyError
            When the store was opened read-only.
        queue.Full
            When :data:`core.store.writer.QUEUE_MAX` writes stayed queued for
            :data:`core.store.writer.PUT_LIMIT_S` s.
        """
        if self._closed:
            raise StoreClosedError("the store is closed")
        if self.read_only:
            raise StoreReadOnlyError("this store was opened read-only")
        fn = getattr(self, write) if isinstance(write, str) else write
        self._writer.submit(fn, args, on_error)

    def flush(self) -> None:
        """Wait until every deferred write is committed (or failed: see :meth:`defer`'s ``on_error``).

        Raises
        ------
        StoreError
            When they did not finish within :data:`core.store.writer.PUT_LIMIT_S` s.
        """
        if not self._closed:
            self._wait_deferred()

    @property
    def deferred(self) -> int:
        """Deferred writes not yet finished."""
        return self._writer.pending

    @contextmanager
    def _batch(self) -> Iterator[None]:
        """The writer thread's batch (:data:`core.store.writer.BATCH_MAX`): the deferred writes run in it share
        one write transaction on one connection, committed when it exits; each is its own savepoint
        (:meth:`_write`, :meth:`_conn`), so one that fails is undone alone.  A kill before the commit loses the
        batch whole, never a part of it."""
        self._check_open()
        b = self._batching
        with self._wengine.connect() as conn, conn.begin():
            b.conn, b.touched = conn, set()
            try:
                yield
                check_transaction(conn)  # a write that failed may have taken the whole batch with it
                now = utcnow()  # each run written in the batch: its last-write time, once (see _touch)
                for run_id in sorted(b.touched):
                    conn.execute(TOUCH_RUN, {"run_id": run_id, "now": now})
            finally:
                b.conn, b.touched = None, None

    @contextmanager
    def _read(self) -> Iterator[Session]:
        conn = getattr(self._batching, "conn", None)
        if conn is not None:  # a deferred write reading inside its batch: it sees the batch's rows
            with Session(bind=conn, expire_on_commit=False) as s:  # joins the batch's transaction
                yield s
            return
        self._check_open()
        with Session(self._engine, expire_on_commit=False) as s, s.begin():
            yield s

    @contextmanager
    def _write(self) -> Iterator[Session]:
        """An ORM session for one write: in a batch, joined to the batch's connection, in a savepoint (a
        write that fails is undone alone); else its own write transaction, committed when it exits."""
        conn = getattr(self._batching, "conn", None)
        if conn is not None:
            check_transaction(conn)  # never a savepoint that would begin a transaction of its own
            # a session of its own (it never holds rows another write of the batch changed), closed with
            # the savepoint; the batch's transaction goes on
            with Session(bind=conn, expire_on_commit=False) as s, s.begin_nested():
                yield s
            return
        self._check_open()
        if self.read_only:
            raise StoreReadOnlyError("this store was opened read-only")
        with Session(self._wengine, expire_on_commit=False) as s, s.begin():
            yield s

    @contextmanager
    def _conn(self) -> Iterator[Connection]:
        """A Core connection for one write of prebuilt statements (:mod:`core.store.statements`; no ORM unit
        of work: a step's rows cost the writer thread about a quarter of the CPU they took through the ORM): in
        a batch, the batch's connection in a savepoint (a write that fails is undone alone); else its own write
        transaction (``BEGIN IMMEDIATE``), committed when it exits."""
        conn = getattr(self._batching, "conn", None)
        if conn is not None:
            with savepoint(conn):
                yield conn
            return
        self._check_open()
        if self.read_only:
            raise StoreReadOnlyError("this store was opened read-only")
        with self._wengine.begin() as conn:
            yield conn

    def _touch(self, s: Session | Connection, run_id: str) -> None:
        """Update the run's last-write time; raise UnknownRunError for an unknown run.

        In a batch of deferred writes (:meth:`_batch`) the run's last-write time is set once, when the batch
        commits (an UPDATE of the same row for each write of a step was a third of the writer thread's time),
        and the run is looked up only when this store never saw it (not begun here, no write found it yet).
        Runs are never deleted while they are written; were one, its rows' foreign key would still refuse a
        write for it."""
        touched = getattr(self._batching, "touched", None)  # set only on the writer thread, during a batch
        if touched is not None and (run_id in touched or run_id in self._known_runs):
            touched.add(run_id)
            return
        done = s.execute(TOUCH_RUN, {"run_id": run_id, "now": utcnow()})
        if not done.rowcount:
            raise UnknownRunError(f"unknown run {run_id!r}")
        self._known_runs.add(run_id)
        if touched is not None:
            touched.add(run_id)

    # -- writing --------------------------------------------------------------------------

    def begin_run(self, project: str, flow: str, *, run_id: str | None = None) -> str:
        """Insert a run row with status ``running``; return its id.

        Parameters
        ----------
        project, flow : str
            Project and flow names.
        run_id : str | None
            Id to use (letters, digits, ``_``, ``-``; at most 64 chars);
            a new UUID4 string when None.
        """
        run_id = check_run_id(run_id) if run_id is not None else str(uuid.uuid4())
        # Strictly increasing start times per writer, so list_runs orders runs
        # begun within the clock's resolution in the order they began.
        now = max(utcnow(), self._last_start + timedelta(microseconds=1))
        self._last_start = now
        with self._write() as s:
            s.add(RunRow(id=run_id, project=self._t(project), flow=self._t(flow),
                         status="running", started_at=now, updated_at=now, heals=0,
                         invalid_actions=0, error="", heals_by_strategy={},
                         owner=self._owner, schema_version=SCHEMA_VERSION))
        self._known_runs.add(run_id)
        return run_id

    def record_observation(self, run_id: str, index: int, when: str,
                           observation: Observation) -> Path | None:
        """Record an observation of step ``index`` ``"before"``/``"after"`` its action.

        Writes ``observation.screenshot_png`` (must be a PNG, already masked)
        to ``screenshots/<run_id>/<index>_<when>_<n>.png`` under
        :attr:`media_root` and references it by relative path.

        Returns
        -------
        Path | None
            Absolute path of the PNG written, None when there was none.
        """
        if when not in ("before", "after"):
            raise ValueError(f"when must be 'before' or 'after', not {when!r}")
        png = observation.screenshot_png or b""
        if png and not png.startswith(PNG_MAGIC):
            raise ValueError("screenshot_png is not a PNG")
        written: Path | None = None
        with self._conn() as conn:
            self._touch(conn, run_id)
            rel: str | None = None
            if png:
                found = first(conn, _COUNT_SHOTS, {"run_id": run_id, "index": int(index), "when": when})
                n = int(found[0] or 0) if found else 0
                rel = screenshot_relpath(run_id, index, when, n + 1)
                try:
                    written = write_atomic(self.media_root, rel, png)
                except OSError as exc:
                    if exc.errno not in _DISK_FULL:
                        raise
                    # a full disk: the row is kept without its screenshot (it never names a missing file)
                    self.media_errors.append(f"screenshot of step {int(index) + 1} ({when}) not saved: "
                                             f"{exc.strerror or exc} ({self.media_root})")
                    rel = None
            vw, vh = (tuple(observation.viewport) + (0, 0))[:2]
            write(conn, INSERT_OBSERVATION, dict(
                run_id=run_id, step_index=int(index), moment=when,
                url=self._t(observation.url), title=self._t(observation.title),
                signature_digest=self._t(observation.signature.digest if observation.signature else ""),
                element_count=len(observation.candidates), viewport_w=int(vw), viewport_h=int(vh),
                device_pixel_ratio=float(observation.device_pixel_ratio),
                timestamp_ms=float(observation.timestamp_ms), screenshot=rel))
        return written

    def _resolution_values(self, run_id: str, index: int, r: Resolution) -> dict[str, Any]:
        return dict(
            run_id=run_id, step_index=int(index), strategy=self._t(r.strategy),
            ref=self._t(r.ref) if r.ref is not None else None, score=float(r.score),
            margin=float(r.margin), ms=float(r.ms), abstained=bool(r.abstained),
            reason=self._t(r.reason),
            top=self._j([{"ref": c.ref, "score": float(c.score), "label": c.label} for c in r.top]))

    def _verdict_values(self, run_id: str, index: int, v: Verdict) -> dict[str, Any]:
        return dict(run_id=run_id, step_index=int(index), kind=self._t(v.kind),
                    expected=self._t(v.expected), observed=self._j(list(v.observed)),
                    reason=self._t(v.reason))

    def _resolution_row(self, run_id: str, index: int, r: Resolution) -> ResolutionRow:
        return ResolutionRow(**self._resolution_values(run_id, index, r))

    def _verdict_row(self, run_id: str, index: int, v: Verdict) -> VerdictRow:
        return VerdictRow(**self._verdict_values(run_id, index, v))

    def record_resolution(self, run_id: str, index: int, resolution: Resolution) -> None:
        """Record how step ``index``'s target was resolved (one row per call/attempt)."""
        values = self._resolution_values(run_id, index, resolution)
        with self._conn() as conn:
            self._touch(conn, run_id)
            write(conn, INSERT_RESOLUTION, values)

    def record_verdict(self, run_id: str, index: int, verdict: Verdict) -> None:
        """Record the post-verification of step ``index``'s action (one row per call/attempt)."""
        values = self._verdict_values(run_id, index, verdict)
        with self._conn() as conn:
            self._touch(conn, run_id)
            write(conn, INSERT_VERDICT, values)

    def _upsert_step(self, s: Session, run_id: str, o: StepOutcome,
                     rows: dict[int, StepRow] | None = None) -> None:
        """Write step ``o.index``'s row (replacing the one there); ``rows``: the run's step rows by index, read
        once by the caller (kept up to date here), else the row is looked up."""
        if rows is not None:
            row = rows.get(int(o.index))
        else:
            row = s.scalar(select(StepRow).where(StepRow.run_id == run_id, StepRow.step_index == o.index))
        if row is None:
            row = StepRow(run_id=run_id, step_index=int(o.index))
            s.add(row)
            if rows is not None:
                rows[int(o.index)] = row
        row.step_id = self._t(o.step_id)
        row.title = self._t(o.title)
        row.status = self._t(o.status)
        row.attempts = int(o.attempts)
        row.ms = float(o.ms)
        row.error = self._t(o.error)

    def record_step(self, run_id: str, outcome: StepOutcome) -> None:
        """Record (or replace) the outcome of step ``outcome.index``.

        Only the step row: resolutions and verdicts are recorded by
        :meth:`record_resolution` / :meth:`record_verdict` (per attempt);
        :meth:`finish_run` fills in those of the outcome when none was recorded.
        """
        values = dict(run_id=run_id, step_index=int(outcome.index), step_id=self._t(outcome.step_id),
                      title=self._t(outcome.title), status=self._t(outcome.status), attempts=int(outcome.attempts),
                      ms=float(outcome.ms), error=self._t(outcome.error))
        with self._conn() as conn:
            self._touch(conn, run_id)
            upsert(conn, STEPS, ("run_id", "step_index"), values)

    def record_escalation(self, run_id: str, event: Escalation) -> None:
        """Record an escalation to a human (flow, step, reason, candidates with boxes in CSS px, side effects)."""
        with self._write() as s:
            self._touch(s, run_id)
            s.add(EscalationRow(
                run_id=run_id, flow=self._t(event.flow), step_index=int(event.index),
                step_title=self._t(event.step_title), reason=self._t(event.reason),
                candidates=self._j([_candidate_json(c) for c in event.candidates]),
                side_effects=self._j(list(event.side_effects)), created_at=utcnow(),
                kind=str(getattr(event, "kind", "") or ""), plain=self._t(getattr(event, "plain", "") or "")))

    def record_checkpoint(self, run_id: str, cp: Checkpoint) -> None:
        """Record (or replace, on a retry or a state change) the checkpoint of step ``cp.index`` (R3).

        Texts pass the redactor; a secret field's value is already only its digest.
        """
        fields = [{"key": self._t(f.key), "label": self._t(f.label), "value": self._t(f.value), "checked": f.checked,
                   "digest": f.digest} for f in cp.fields]
        values = dict(run_id=run_id, step_index=int(cp.index), step_id=self._t(cp.step_id), url=self._t(cp.url),
                      state=cp.state, reversible=bool(cp.reversible), step_state=cp.step_state,
                      screenshot=cp.screenshot or None, modal_titles=self._j(list(cp.modal_titles)),
                      fields=self._j(fields), side_effects=self._j(list(cp.side_effects)))
        with self._conn() as conn:
            self._touch(conn, run_id)
            # one INSERT ... ON CONFLICT DO UPDATE: a replaced checkpoint keeps its id and its created_at
            upsert(conn, CHECKPOINTS, ("run_id", "step_index"), values, insert_only={"created_at": utcnow()})

    def checkpoints(self, run_id: str) -> list[dict[str, Any]]:
        """The checkpoints of a run as stored, by step index (plain mappings, for reports and tests)."""
        with self._read() as s:
            rows = s.scalars(select(CheckpointRow).where(CheckpointRow.run_id == run_id)
                             .order_by(CheckpointRow.step_index)).all()
            return [{"index": r.step_index, "step_id": r.step_id, "url": r.url, "state": r.state,
                     "reversible": r.reversible, "step_state": r.step_state, "screenshot": r.screenshot,
                     "modal_titles": list(r.modal_titles or ()), "fields": list(r.fields or ()),
                     "side_effects": list(r.side_effects or ())} for r in rows]

    def finish_run(self, run_id: str, result: RunResult) -> None:
        """Complete a run: status, duration, counts, reward, error - in one transaction.

        Also writes the step rows of ``result.steps`` (replacing earlier
        ones of the same index), and each step's resolution and verdict
        when none was recorded for that step, so a run recorded only at
        the end is complete too.
        """
        now = utcnow()
        with self._write() as s:
            row = s.get(RunRow, run_id)
            if row is None:
                raise UnknownRunError(f"unknown run {run_id!r}")
            # the run's step rows read in one query, not one per step
            rows = {r.step_index: r for r in s.scalars(select(StepRow).where(StepRow.run_id == run_id))}
            for o in result.steps:
                self._upsert_step(s, run_id, o, rows)
            s.flush()
            have_res = set(s.scalars(select(ResolutionRow.step_index)
                                     .where(ResolutionRow.run_id == run_id)))
            have_ver = set(s.scalars(select(VerdictRow.step_index)
                                     .where(VerdictRow.run_id == run_id)))
            for o in result.steps:
                if o.resolution is not None and o.index not in have_res:
                    s.add(self._resolution_row(run_id, o.index, o.resolution))
                if o.verdict is not None and o.index not in have_ver:
                    s.add(self._verdict_row(run_id, o.index, o.verdict))
            row.status = self._t(result.status)
            row.finished_at = now
            row.updated_at = now
            row.seconds = float(result.seconds)
            row.heals = int(result.heals)
            row.invalid_actions = int(result.invalid_actions)
            row.reward = None if result.reward is None else float(result.reward)
            row.error = self._t(result.error)
            row.heals_by_strategy = self._j(dict(result.heals_by_strategy))
            row.steps_total = int(result.total_steps) if result.total_steps else None

    def recover_interrupted(self, *, older_than: timedelta | None = None) -> list[str]:
        """Mark runs left ``running`` by dead processes ``interrupted``; return their ids.

        See :func:`core.store.recovery.mark_interrupted` (``older_than``
        also marks runs of other hosts idle for longer than that).
        """
        with self._write() as s:
            return mark_interrupted(s, older_than=older_than)

    # -- reading --------------------------------------------------------------------------

    @staticmethod
    def _summary(r: RunRow) -> RunSummary:
        return RunSummary(
            id=r.id, project=r.project, flow=r.flow, status=r.status,
            started_at=_utc(r.started_at), finished_at=_utc(r.finished_at),  # type: ignore[arg-type]
            seconds=r.seconds, heals=r.heals, invalid_actions=r.invalid_actions,
            reward=r.reward, error=r.error or "",
            heals_by_strategy=dict(r.heals_by_strategy or {}), schema_version=r.schema_version,
            steps_total=r.steps_total)

    def list_runs(self, limit: int = 50, *, flow: str | None = None,
                  status: str | None = None) -> list[RunSummary]:
        """Most recent runs first (by start time), at most ``limit``, optionally filtered."""
        q = select(RunRow).order_by(RunRow.started_at.desc(), RunRow.id.desc()).limit(int(limit))
        if flow is not None:
            q = q.where(RunRow.flow == flow)
        if status is not None:
            q = q.where(RunRow.status == status)
        with self._read() as s:
            return [self._summary(r) for r in s.scalars(q)]

    def get_run(self, run_id: str) -> RunSummary | None:
        """One run's summary, None when unknown."""
        with self._read() as s:
            row = s.get(RunRow, run_id)
            return self._summary(row) if row is not None else None

    def resolve_run_id(self, given: str) -> str:
        """The full id of the run ``given`` names: a full id, or any prefix only one run's id starts with (as git
        accepts a unique prefix of a commit id) - the 8 characters ``history list`` prints among them.

        Raises
        ------
        RunIdError
            No run starts with ``given`` (or it is empty), or several do: the message lists them (at most
            :data:`RUN_ID_MATCHES_SHOWN`, each with its flow and start time) and asks for more characters.
        """
        given = given.strip()
        if not given:
            raise RunIdError("no run id given", given)
        if self.get_run(given) is not None:
            return given
        q = (select(RunRow).where(RunRow.id.startswith(given, autoescape=True))
             .order_by(RunRow.started_at.desc(), RunRow.id.desc()).limit(RUN_ID_MATCHES_SHOWN + 1))
        with self._read() as s:
            rows = [self._summary(r) for r in s.scalars(q)]
        if len(rows) == 1:
            return rows[0].id
        if not rows:
            raise RunIdError(f"no run id starts with {given!r} in {self.path} (see `steadyhand history list`)",
                             given)
        more = " and more" if len(rows) > RUN_ID_MATCHES_SHOWN else ""
        listed = "; ".join(f"{r.id} ({r.flow}, {r.started_at:%Y-%m-%d %H:%M:%S})" for r in rows[:RUN_ID_MATCHES_SHOWN])
        raise RunIdError(f"run id {given!r} is ambiguous: {len(rows) if not more else 'more than ' + str(len(rows) - 1)}"
                         f" runs start with it: {listed}{more}; give more characters", given,
                         tuple(r.id for r in rows[:RUN_ID_MATCHES_SHOWN]))

    def run_detail(self, run_id: str) -> RunDetail | None:
        """A run and all its records (one consistent snapshot), None when unknown."""
        with self._read() as s:
            row = s.get(RunRow, run_id)
            if row is None:
                return None

            def rows(model: Any) -> list[Any]:
                return list(s.scalars(select(model).where(model.run_id == run_id)
                                      .order_by(model.id)))

            steps = sorted(rows(StepRow), key=lambda r: r.step_index)
            return RunDetail(
                run=self._summary(row),
                steps=tuple(StepRecord(r.step_index, r.step_id, r.title, r.status, r.attempts,
                                       r.ms, r.error) for r in steps),
                observations=tuple(ObservationRecord(
                    r.step_index, r.moment, r.url, r.title, r.signature_digest, r.element_count,
                    (r.viewport_w, r.viewport_h), r.device_pixel_ratio, r.timestamp_ms,
                    r.screenshot) for r in rows(ObservationRow)),
                resolutions=tuple(ResolutionRecord(
                    r.step_index, r.strategy, r.ref, r.score, r.margin, r.ms, r.abstained,
                    r.reason, tuple(dict(c) for c in (r.top or ()))) for r in rows(ResolutionRow)),
                verdicts=tuple(VerdictRecord(r.step_index, r.kind, r.expected,
                                             tuple(r.observed or ()), r.reason)
                               for r in rows(VerdictRow)),
                escalations=tuple(EscalationRecord(
                    r.step_index, r.flow, r.step_title, r.reason, tuple(_candidate_of(c) for c in r.candidates or ()),
                    tuple(r.side_effects or ()), _utc(r.created_at), r.kind or "", r.plain or "")  # type: ignore[arg-type]
                    for r in rows(EscalationRow)),
                hand_backs=tuple(r.step_index for r in rows(CorrectionRow)),
            )

    # -- R1 screen baselines (core/store/baselines.py) ------------------------------------

    def load_baselines(self, flow: str) -> dict[str, _baselines.StoredBaseline]:
        """The R1 baselines of ``flow``'s steps, by step id (the screen seen before the step)."""
        with self._read() as s:
            return _baselines.load_baselines(s, self._t(flow))

    def baselines(self, *, alerts_only: bool = False) -> list[_baselines.StoredBaseline]:
        """Every R1 baseline of the project (or only those with an alert), by flow and step id."""
        with self._read() as s:
            return _baselines.baseline_rows(s, alerts_only=alerts_only)

    def save_baseline(self, flow: str, step_id: str, fingerprint: Any) -> bool:
        """Create or refresh the baseline of ``(flow, step_id)`` (clears its alert); True when created.

        Never touches a flow file: a baseline is a row of its own.
        """
        with self._conn() as conn:
            return _baselines.save_baseline(conn, self._t(flow), self._t(step_id), fingerprint, t=self._t, j=self._j)

    def reset_baselines(self, *, flow: str | None = None, step_id: str | None = None) -> int:
        """Forget R1 baselines (all, one flow's or one step's): the next passing run takes new ones.

        For a baseline that keeps raising an alert because the app really
        changed (or it was taken with a popup open).  Never touches a flow
        file.  Returns how many were deleted.
        """
        with self._write() as s:
            return _baselines.delete_baselines(s, flow=None if flow is None else self._t(flow),
                                               step_id=None if step_id is None else self._t(step_id))

    def alert_baseline(self, flow: str, step_id: str, report: Any, run_id: str = "") -> bool:
        """Flag the baseline of ``(flow, step_id)`` with a change beyond the R1 threshold; it is kept as it was."""
        with self._write() as s:
            return _baselines.alert_baseline(s, self._t(flow), self._t(step_id), report, run_id, t=self._t,
                                             j=self._j)

    def record_screen_change(self, run_id: str, index: int, flow: str, step_id: str, report: Any) -> None:
        """Record the change report (R1) of the screen seen before step ``index`` of a run."""
        with self._write() as s:
            self._touch(s, run_id)
            _baselines.add_screen_change(s, run_id, index, flow, step_id, report, t=self._t, j=self._j)

    def screen_changes(self, run_id: str) -> list[_baselines.ScreenChangeRecord]:
        """The change reports recorded for one run."""
        with self._read() as s:
            return _baselines.screen_changes(s, run_id)

    # -- step evidence (core/store/evidence.py) --------------------------------------------

    def record_step_evidence(self, run_id: str, evidence: Any) -> None:
        """Record (or replace) what step ``evidence.index`` left behind (a :class:`core.domain.evidence.StepEvidence`:
        image difference in CSS px, console errors, failed requests, assertions checked, active and wall ms)."""
        from . import evidence as _evidence

        with self._conn() as conn:
            self._touch(conn, run_id)
            _evidence.add_evidence(conn, run_id, evidence, t=self._t)

    def step_evidence(self, run_id: str) -> list[Any]:
        """The evidence of every step of a run, by step index (:class:`core.store.StepEvidenceRecord`: the
        evidence and the paths of the step's last before and after screenshots); [] for an unknown run."""
        from . import evidence as _evidence

        with self._read() as s:
            return _evidence.read_evidence(s, run_id)

    def record_model_usage(self, run_id: str, flow: str, model: str, usage: Mapping[str, float],
                           judged_share: float = 0.0, alarm: bool = False) -> None:
        """Keep what the model cost in one run (:mod:`core.store.usage_models`)."""
        from .usage_models import ModelUsageRow

        with self._write() as s:
            s.add(ModelUsageRow(run_id=run_id, flow=self._t(flow), model=self._t(model),
                                usage={str(k): float(v) for k, v in usage.items()}, judged_share=float(judged_share),
                                alarm=bool(alarm), created_at=utcnow()))

    def model_usage(self, run_id: str) -> dict[str, Any] | None:
        """``{"model", "usage", "judged_share", "alarm"}`` of one run, None when it used no model."""
        from .usage_models import ModelUsageRow

        with self._read() as s:
            row = s.scalars(select(ModelUsageRow).where(ModelUsageRow.run_id == run_id)
                            .order_by(ModelUsageRow.id.desc())).first()
            if row is None:
                return None
            return {"model": row.model, "usage": dict(row.usage or {}), "judged_share": row.judged_share,
                    "alarm": row.alarm}

    def media_path(self, relpath: str) -> Path:
        """Absolute path of a screenshot path stored in a row."""
        return Path(self.media_root, *relpath.split("/"))


def _candidate_json(c: EscalationCandidate) -> dict[str, Any]:
    box = [c.box.x, c.box.y, c.box.width, c.box.height] if c.box is not None else None
    return {"ref": c.ref, "label": c.label, "score": float(c.score), "box": box}


def _candidate_of(row: Any) -> EscalationCandidate:
    """A stored candidate; rows written before candidates were structured hold a label string."""
    if isinstance(row, str):
        return EscalationCandidate("", row, 0.0, None)
    box = row.get("box")
    return EscalationCandidate(str(row.get("ref", "")), str(row.get("label", "")), float(row.get("score", 0.0)),
                               BBox(*box) if box else None)


def _unwritable(path: Path, exc: DatabaseError) -> str:
    """Why the store at ``path`` cannot be written although it may be sound ("" when nothing says so): its
    folder is on a read-only filesystem or not writable by this user, or the disk is full."""
    import os

    folder = path.parent
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return "its folder is on a read-only filesystem"
    except OSError:
        pass
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        return "it or its folder is read-only for this user"
    if "disk is full" in str(exc.orig) or "No space left" in str(exc.orig):
        return "the disk is full; free some space and run again"
    return ""

