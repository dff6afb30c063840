"""What a resume reads and writes in the store (``run_resumes`` table, and the earlier run's rows).

:class:`ResumeTable` works on an open :class:`~core.store.Store`:
:meth:`ResumeTable.state` reads what an earlier run left (its status, the
steps recorded, their checkpoints and whether a verdict was reached),
:meth:`ResumeTable.record` links a new run to the one it resumed, and
:meth:`ResumeTable.of` / :meth:`ResumeTable.resumed_by` read the link back.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from sqlalchemy import select

from .models import CheckpointRow, ObservationRow, RunRow, StepRow, VerdictRow, utcnow
from .resume_models import RunResumeRow, StepActRow
from .statements import INSERT_ACT, write

__all__ = ["RunState", "ResumeTable"]


@dataclass(frozen=True)
class RunState:
    """What an earlier run left in the store (step indexes 0-based).

    Attributes
    ----------
    run_id, flow, status, error : str
        The run row.
    steps : Mapping[int, str]
        Recorded step statuses by index.
    checkpoints : Mapping[int, Mapping[str, Any]]
        Checkpoint rows by index: ``step_state`` (``pending`` while the step
        runs), ``reversible``, ``side_effects`` (the run's "data already
        written" lines when the checkpoint was taken).
    observed : frozenset[int]
        Steps with a before-observation (they started).
    verdicts : frozenset[int]
        Steps with at least one verdict (their effect was judged).
    acts : Mapping[int, int]
        Per step, the attempts whose action (one that may write) was about to be performed.
    verdict_counts : Mapping[int, int]
        Per step, the verdicts recorded (one per attempt that was judged).
    last_verdicts : Mapping[int, str]
        Per step, the kind of its latest verdict (``as_expected``, ``unchanged``...): a step verified
        ``as_expected`` whose outcome was never recorded passed - the run died in its ``record`` phase.
    """

    run_id: str
    flow: str
    status: str
    error: str = ""
    steps: Mapping[int, str] = field(default_factory=dict)
    checkpoints: Mapping[int, Mapping[str, Any]] = field(default_factory=dict)
    observed: frozenset[int] = frozenset()
    verdicts: frozenset[int] = frozenset()
    acts: Mapping[int, int] = field(default_factory=dict)
    verdict_counts: Mapping[int, int] = field(default_factory=dict)
    last_verdicts: Mapping[int, str] = field(default_factory=dict)


class ResumeTable:
    """The resume links of one open store (and what earlier runs left)."""

    def __init__(self, store: Any) -> None:
        self.store = store

    def state(self, run_id: str) -> RunState | None:
        """What run ``run_id`` left; None when there is no such run."""
        with self.store._read() as s:
            run = s.get(RunRow, run_id)
            if run is None:
                return None
            steps = {r.step_index: r.status for r in s.scalars(select(StepRow).where(StepRow.run_id == run_id))}
            cps = {r.step_index: {"step_state": r.step_state, "reversible": bool(r.reversible),
                                  "side_effects": list(r.side_effects or ())}
                   for r in s.scalars(select(CheckpointRow).where(CheckpointRow.run_id == run_id))}
            observed = frozenset(s.scalars(select(ObservationRow.step_index).where(
                ObservationRow.run_id == run_id, ObservationRow.moment == "before")))
            vrows = list(s.execute(select(VerdictRow.step_index, VerdictRow.kind).where(VerdictRow.run_id == run_id)
                                   .order_by(VerdictRow.id)))
            vlist = [int(i) for i, _ in vrows]
            last = {int(i): str(k) for i, k in vrows}
            acts: dict[int, int] = {}
            for i in s.scalars(select(StepActRow.step_index).where(StepActRow.run_id == run_id)):
                acts[i] = acts.get(i, 0) + 1
            counts: dict[int, int] = {}
            for i in vlist:
                counts[i] = counts.get(i, 0) + 1
            return RunState(run.id, run.flow, run.status, run.error or "", steps, cps, observed, frozenset(vlist),
                            acts, counts, last)

    def acting(self, run_id: str, index: int, attempt: int) -> None:
        """Say that step ``index``'s action (attempt ``attempt``) is about to be performed (committed first)."""
        with self.store._conn() as conn:
            write(conn, INSERT_ACT, dict(run_id=run_id, step_index=int(index), attempt=int(attempt), created_at=utcnow()))

    def record(self, run_id: str, resumed_from: str, plan: Mapping[str, Any]) -> None:
        """Say that run ``run_id`` resumed run ``resumed_from``, with the resume's plan (texts redacted)."""
        with self.store._write() as s:
            s.merge(RunResumeRow(run_id=run_id, resumed_from=resumed_from, plan=self.store._j(dict(plan)),
                                 created_at=utcnow()))

    def of(self, run_id: str) -> dict[str, Any] | None:
        """``{"resumed_from", "plan"}`` of a resumed run, None for a run that resumed nothing."""
        with self.store._read() as s:
            row = s.get(RunResumeRow, run_id)
            return None if row is None else {"resumed_from": row.resumed_from, "plan": dict(row.plan or {})}

    def resumed_by(self, run_id: str) -> list[str]:
        """The runs that resumed run ``run_id``, oldest first."""
        with self.store._read() as s:
            return list(s.scalars(select(RunResumeRow.run_id).where(RunResumeRow.resumed_from == run_id)
                                  .order_by(RunResumeRow.created_at)))
