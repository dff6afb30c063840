"""Skills, their uses and failure records in the store (K1, K2, K6, K7).

:class:`SkillTable` works on an open :class:`~core.store.Store` (its
sessions, its redactor: every text and JSON written is redacted like the
rest of the store).  The rules about *what* becomes a skill, when it fires
and how its quality moves live in :mod:`core.skills`; this module only
persists them.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from sqlalchemy import func, select

from core.domain.skill import SKILL_STATES, Skill, skill_from_mapping, skill_to_mapping

from .models import utcnow
from .skill_models import FailureRecordRow, SkillRow, SkillUseRow

if TYPE_CHECKING:
    from .repository import Store

__all__ = ["SkillTable", "SkillConflictError", "SkillUseRecord", "FailureRecord", "USE_OUTCOMES",
           "FAILURE_OUTCOMES"]

#: Outcomes of one use (see :mod:`core.store.skill_models`).
USE_OUTCOMES = ("passed", "failed", "precondition", "half", "denied")
#: What a failure record became.
FAILURE_OUTCOMES = ("open", "skill", "transient", "dropped")


class SkillConflictError(RuntimeError):
    """A write that would overwrite an approved skill, or a review of a skill not in the state it needs."""


def _utc(dt: datetime | None) -> datetime | None:
    if dt is None:
        return None
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=timezone.utc)


@dataclass(frozen=True)
class SkillUseRecord:
    """One stored use (fields: :class:`~core.store.skill_models.SkillUseRow`)."""

    id: int
    skill_id: str
    run_id: str
    flow: str
    step_index: int
    step_id: str
    outcome: str
    reason: str
    ms: float
    at: datetime | None


@dataclass(frozen=True)
class FailureRecord:
    """One stored failure (fields: :class:`~core.store.skill_models.FailureRecordRow`)."""

    id: int
    project: str
    run_id: str
    flow: str
    step_index: int
    step_id: str
    error_type: str
    message: str
    state: str
    url: str
    trajectory: tuple[Mapping[str, Any], ...]
    page: Mapping[str, Any]
    screenshots: tuple[str, ...]
    attribution: Mapping[str, Any]
    outcome: str
    correction_id: int
    skill_id: str
    created_at: datetime | None


_FAILURE_FIELDS = ("project", "run_id", "flow", "step_index", "step_id", "error_type", "message", "state", "url",
                   "trajectory", "page", "screenshots", "attribution", "outcome", "correction_id", "skill_id")


def _skill(row: SkillRow) -> Skill:
    s = skill_from_mapping(row.data)
    return replace(s, state=row.state, quality=row.quality, successes=row.successes, failures=row.failures,  # type: ignore[arg-type]
                   review_reason=row.review_reason, last_used_at=_utc(row.last_used_at),
                   created_at=_utc(row.created_at), updated_at=_utc(row.updated_at))


def _use(r: SkillUseRow) -> SkillUseRecord:
    return SkillUseRecord(r.id, r.skill_id, r.run_id, r.flow, r.step_index, r.step_id, r.outcome, r.reason, r.ms,
                          _utc(r.at))


def _failure(r: FailureRecordRow) -> FailureRecord:
    return FailureRecord(
        id=r.id, project=r.project, run_id=r.run_id, flow=r.flow, step_index=r.step_index, step_id=r.step_id,
        error_type=r.error_type, message=r.message, state=r.state, url=r.url,
        trajectory=tuple(dict(x) for x in r.trajectory or ()), page=dict(r.page or {}),
        screenshots=tuple(str(x) for x in r.screenshots or ()), attribution=dict(r.attribution or {}),
        outcome=r.outcome, correction_id=r.correction_id, skill_id=r.skill_id, created_at=_utc(r.created_at))


class SkillTable:
    """Read and write ``skills``, ``skill_uses`` and ``failure_records`` through an open store.

    Raises (every method): :class:`~core.store.StoreClosedError`, and for
    writes on a read-only store :class:`~core.store.StoreReadOnlyError`.
    """

    def __init__(self, store: "Store") -> None:
        self.store = store

    # --- skills -----------------------------------------------------------------------------
    def _data(self, skill: Skill) -> dict[str, Any]:
        return self.store._j(skill_to_mapping(skill))

    def put(self, skill: Skill, *, replace_approved: bool = False) -> tuple[Skill, bool]:
        """Insert a skill, or replace the one with the same id; one transaction.

        The row's state, counters and quality are the skill's.  Returns the
        stored skill and True when it was inserted now.

        Raises
        ------
        SkillConflictError
            The id names an approved skill and ``replace_approved`` is False
            (an import never overwrites an approved skill without asking).
        ValueError
            An unknown state.
        """
        self._check_state(skill)
        with self.store._write() as s:
            return self._put_row(s, skill, replace_approved, utcnow())

    def put_many(self, skills: "Iterable[Skill]", *, replace_approved: bool = False) -> list[tuple[Skill, bool]]:
        """:meth:`put` for several skills in one transaction: all are stored or none (an import).

        Raises
        ------
        SkillConflictError, ValueError
            As :meth:`put`; then nothing is stored.
        """
        skills = list(skills)
        for skill in skills:
            self._check_state(skill)
        now = utcnow()
        with self.store._write() as s:
            return [self._put_row(s, skill, replace_approved, now) for skill in skills]

    @staticmethod
    def _check_state(skill: Skill) -> None:
        if skill.state not in SKILL_STATES:
            raise ValueError(f"unknown skill state {skill.state!r}; expected one of {', '.join(SKILL_STATES)}")

    def _put_row(self, s: Any, skill: Skill, replace_approved: bool, now: datetime) -> tuple[Skill, bool]:
        row = s.get(SkillRow, skill.id)
        created = row is None
        if row is None:
            row = SkillRow(id=skill.id, created_at=skill.created_at or now)
            s.add(row)
        elif row.state == "approved" and not replace_approved:
            raise SkillConflictError(f"skill {skill.id} is approved; replacing it needs an explicit yes")
        row.product, row.kind, row.state = skill.scope.product, skill.kind, skill.state
        row.description = self.store._t(skill.description)
        row.quality, row.successes, row.failures = skill.quality, skill.successes, skill.failures
        row.review_reason = self.store._t(skill.review_reason)
        row.last_used_at = skill.last_used_at
        row.data = self._data(skill)
        row.updated_at = now
        s.flush()
        return _skill(row), created

    def get(self, skill_id: str) -> Skill | None:
        """One skill, None when unknown."""
        with self.store._read() as s:
            row = s.get(SkillRow, skill_id)
            return _skill(row) if row is not None else None

    def list(self, *, product: str | None = None, state: str | None = None,
             kind: str | None = None) -> list[Skill]:
        """Skills, best quality first (then newest), optionally filtered."""
        q = select(SkillRow).order_by(SkillRow.quality.desc(), SkillRow.created_at.desc())
        if product is not None:
            q = q.where(SkillRow.product == product)
        if state is not None:
            q = q.where(SkillRow.state == state)
        if kind is not None:
            q = q.where(SkillRow.kind == kind)
        with self.store._read() as s:
            return [_skill(r) for r in s.scalars(q)]

    def set_state(self, skill_id: str, state: str, *, reason: str = "",
                  expect: tuple[str, ...] = ()) -> Skill:
        """Move a skill to ``state`` (with the reason), optionally only from one of ``expect``.

        Raises
        ------
        KeyError
            Unknown id.
        SkillConflictError
            ``expect`` is given and the skill is in none of those states.
        ValueError
            An unknown state.
        """
        if state not in SKILL_STATES:
            raise ValueError(f"unknown skill state {state!r}; expected one of {', '.join(SKILL_STATES)}")
        with self.store._write() as s:
            row = s.get(SkillRow, skill_id)
            if row is None:
                raise KeyError(skill_id)
            if expect and row.state not in expect:
                raise SkillConflictError(f"skill {skill_id} is {row.state}, not {' or '.join(expect)}")
            row.state, row.review_reason = state, self.store._t(reason)
            row.reviewed_at = row.updated_at = utcnow()
            data = dict(row.data or {})
            data.update(state=state, review_reason=row.review_reason)
            row.data = data
            return _skill(row)

    def created_since(self, product: str, since: datetime, *, source_not: str = "import") -> int:
        """How many skills of ``product`` were created since ``since`` (imports not counted; the daily cap, K7)."""
        with self.store._read() as s:
            rows = s.scalars(select(SkillRow).where(SkillRow.product == product, SkillRow.created_at >= since))
            return sum(1 for r in rows if (r.data or {}).get("provenance", {}).get("source") != source_not)

    def delete(self, skill_id: str) -> bool:
        """Remove a skill (a merge keeps the other); its uses stay. True when it existed."""
        with self.store._write() as s:
            row = s.get(SkillRow, skill_id)
            if row is None:
                return False
            s.delete(row)
            return True

    # --- uses -------------------------------------------------------------------------------
    def record_use(self, skill_id: str, *, run_id: str, flow: str, step_index: int, step_id: str, outcome: str,
                   reason: str = "", ms: float = 0.0, quality_delta: float = 0.0,
                   count: str = "") -> SkillUseRecord:
        """Store one use and move the skill's counters in the same transaction.

        ``count`` is ``"success"`` / ``"failure"`` / ``""`` (which counter
        goes up); ``quality_delta`` is added to the quality, clamped to 0..1
        (the rules are :mod:`core.skills.upkeep`'s).  An unknown skill id
        stores the use alone.

        Raises
        ------
        ValueError
            An unknown outcome.
        """
        if outcome not in USE_OUTCOMES:
            raise ValueError(f"unknown skill use outcome {outcome!r}; expected one of {', '.join(USE_OUTCOMES)}")
        now = utcnow()
        with self.store._write() as s:
            use = SkillUseRow(skill_id=skill_id, run_id=run_id, flow=flow, step_index=step_index, step_id=step_id,
                              outcome=outcome, reason=self.store._t(reason), ms=float(ms), at=now)
            s.add(use)
            row = s.get(SkillRow, skill_id)
            if row is not None:
                if count == "success":
                    row.successes += 1
                elif count == "failure":
                    row.failures += 1
                row.quality = min(1.0, max(0.0, row.quality + quality_delta))
                row.last_used_at = now
                row.updated_at = now
            s.flush()
            return _use(use)

    def uses(self, *, skill_id: str | None = None, run_id: str | None = None,
             limit: int = 500) -> list[SkillUseRecord]:
        """Uses, newest first, filtered by skill or run."""
        q = select(SkillUseRow).order_by(SkillUseRow.id.desc()).limit(limit)
        if skill_id is not None:
            q = q.where(SkillUseRow.skill_id == skill_id)
        if run_id is not None:
            q = q.where(SkillUseRow.run_id == run_id)
        with self.store._read() as s:
            return [_use(r) for r in s.scalars(q)]

    def use_counts(self) -> dict[str, dict[str, int]]:
        """skill id -> outcome -> count over every stored use."""
        q = select(SkillUseRow.skill_id, SkillUseRow.outcome, func.count()).group_by(SkillUseRow.skill_id,
                                                                                     SkillUseRow.outcome)
        out: dict[str, dict[str, int]] = {}
        with self.store._read() as s:
            for sid, outcome, n in s.execute(q):
                out.setdefault(sid, {})[outcome] = int(n)
        return out

    # --- failure records --------------------------------------------------------------------
    def _clean_failure(self, values: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in values.items():
            if k not in _FAILURE_FIELDS:
                raise ValueError(f"unknown failure record field {k!r}")
            if k == "outcome" and v not in FAILURE_OUTCOMES:
                raise ValueError(f"unknown failure outcome {v!r}; expected one of {', '.join(FAILURE_OUTCOMES)}")
            if isinstance(v, str) and k not in ("outcome", "state", "skill_id", "error_type"):
                v = self.store._t(v)
            elif isinstance(v, (dict, list, tuple)):
                v = self.store._j(list(v) if isinstance(v, tuple) else v)
            out[k] = v
        return out

    def add_failure(self, values: Mapping[str, Any]) -> FailureRecord:
        """Store one failure record (fields of :class:`FailureRecord` but ``id``/``created_at``)."""
        with self.store._write() as s:
            row = FailureRecordRow(**self._clean_failure(values), created_at=utcnow())
            s.add(row)
            s.flush()
            return _failure(row)

    def update_failure(self, failure_id: int, **values: Any) -> FailureRecord:
        """Change fields of a failure record (its attribution, what it became).

        Raises
        ------
        KeyError
            Unknown id.
        """
        clean = self._clean_failure(values)
        with self.store._write() as s:
            row = s.get(FailureRecordRow, int(failure_id))
            if row is None:
                raise KeyError(failure_id)
            for k, v in clean.items():
                setattr(row, k, v)
            return _failure(row)

    def failure(self, failure_id: int) -> FailureRecord | None:
        """One failure record, None when unknown."""
        with self.store._read() as s:
            row = s.get(FailureRecordRow, int(failure_id))
            return _failure(row) if row is not None else None

    def failures(self, *, run_id: str | None = None, flow: str | None = None, outcome: str | None = None,
                 project: str | None = None, limit: int = 500) -> list[FailureRecord]:
        """Failure records, newest first, filtered."""
        q = select(FailureRecordRow).order_by(FailureRecordRow.id.desc()).limit(limit)
        for col, val in ((FailureRecordRow.run_id, run_id), (FailureRecordRow.flow, flow),
                         (FailureRecordRow.outcome, outcome), (FailureRecordRow.project, project)):
            if val is not None:
                q = q.where(col == val)
        with self.store._read() as s:
            return [_failure(r) for r in s.scalars(q)]
