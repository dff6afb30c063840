"""Past runs read back for time travel and comparison (read-only; no new table).

``run_history(store, limit=, flow=)`` lists runs, newest first, with their
step counts (one query, not one per run).  ``stored_steps(detail)`` turns a
:class:`~core.store.RunDetail` into one :class:`StoredStep` per executed
step (the last attempt's resolution and verdict, the first
before-screenshot and the last after-screenshot).  ``compare_runs(a, b)``
lines two runs of one flow up step by step (by step id, else by index) and
says per step what changed: healed now / not any more, slower, verdict or
status changed (:class:`StepDelta`).

Screenshot paths are relative to the store's media folder
(:meth:`core.store.Store.media_path`); durations in ms.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import case, func, select

from .correction_models import CorrectionRow
from .models import StepRow
from .records import RunDetail, RunSummary

if TYPE_CHECKING:
    from .repository import Store

__all__ = ["SLOWER_RATIO", "SLOWER_MIN_MS", "HistoryEntry", "StoredStep", "StepDelta", "run_history", "stored_steps",
           "compare_runs"]

#: A step is "slower" when it took at least 1.5 times as long and at least 250 ms more (our choice: below that,
#: the demo's settle waits vary from run to run on their own).
SLOWER_RATIO = 1.5
SLOWER_MIN_MS = 250.0


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """A past run: its summary, how many steps ran (``steps``) and passed (``passed``), the flow's steps
    (``total``), and how many times a person acted.

    ``by_hand`` counts the run's hand-backs (each takeover a person handed
    back is stored as a correction, :mod:`core.store.corrections`); ``label``
    is the status as listed: ``passed with help`` for a passed run with one.
    """

    run: RunSummary
    steps: int
    passed: int
    by_hand: int = 0

    @property
    def total(self) -> int:
        """Steps in the flow file as the run ran it (runs stored before schema 4, or not finished: the steps run).

        Every list counts a run ``passed`` / ``total``: steps passed / steps in the flow (README).
        """
        return max(self.run.steps_total or 0, self.steps)

    @property
    def label(self) -> str:
        from core.domain import run_label

        return run_label(self.run.status, self.by_hand)


def run_history(store: "Store", *, limit: int = 200, flow: str | None = None) -> list[HistoryEntry]:
    """Runs, newest first (at most ``limit``), optionally of one flow, with their step counts."""
    runs = store.list_runs(limit=limit, flow=flow)
    if not runs:
        return []
    ids = [r.id for r in runs]
    with store._read() as s:
        passed = func.sum(case((StepRow.status == "passed", 1), else_=0))
        rows = s.execute(select(StepRow.run_id, func.count(), passed)
                         .where(StepRow.run_id.in_(ids)).group_by(StepRow.run_id)).all()
        hands = dict(s.execute(select(CorrectionRow.run_id, func.count()).where(CorrectionRow.run_id.in_(ids))
                               .group_by(CorrectionRow.run_id)).all())
    counts = {r[0]: (int(r[1] or 0), int(r[2] or 0)) for r in rows}
    return [HistoryEntry(r, *counts.get(r.id, (0, 0)), int(hands.get(r.id) or 0)) for r in runs]


@dataclass(frozen=True, slots=True)
class StoredStep:
    """One executed step as the store holds it.

    ``strategy`` is the locator level that won (``""`` for a step without a
    target, and for a step done by hand: ``by_hand``, status ``manual`` -
    what the locator proposed there was not acted on, so it is neither a
    locator result nor a heal), ``healed`` True when it is not ``exact`` (R2); ``verdict`` the
    S5 verdict kind (``""`` when none was reached); ``before``/``after``
    screenshot paths (``""`` when none); ``escalated`` how many times the step
    asked a human, ``hand_backs`` how many takeovers a person handed back at it
    (a step that passed after a person acted before it - a consent banner
    dismissed by hand - is not a plain pass).
    """

    index: int
    step_id: str
    title: str
    status: str
    attempts: int
    ms: float
    error: str = ""
    strategy: str = ""
    score: float = 0.0
    abstained: bool = False
    verdict: str = ""
    verdict_reason: str = ""
    before: str = ""
    after: str = ""
    url: str = ""
    escalated: int = 0
    hand_backs: int = 0

    @property
    def helped(self) -> bool:
        """A person acted at this step (a takeover handed back), whether or not the step then passed."""
        return self.hand_backs > 0 or self.by_hand

    @property
    def by_hand(self) -> bool:
        """A person did this step during a takeover (status ``manual``)."""
        return self.status == "manual"

    @property
    def healed(self) -> bool:
        return bool(self.strategy) and not self.abstained and self.strategy != "exact" and not self.by_hand


def stored_steps(detail: RunDetail) -> list[StoredStep]:
    """The run's steps in index order (see :class:`StoredStep`)."""
    res = {r.index: r for r in detail.resolutions}  # later attempts replace earlier ones
    ver = {v.index: v for v in detail.verdicts}
    before: dict[int, str] = {}
    after: dict[int, str] = {}
    url: dict[int, str] = {}
    for o in detail.observations:
        if o.when == "before" and o.index not in before:
            before[o.index] = o.screenshot or ""
            url[o.index] = o.url
        elif o.when == "after":
            after[o.index] = o.screenshot or ""
    out = []
    for st in detail.steps:
        r, v = res.get(st.index), ver.get(st.index)
        if st.status == "manual":  # the engine's refused resolution and its verdict are not the step's result
            r, v = None, None
        out.append(StoredStep(
            index=st.index, step_id=st.step_id, title=st.title, status=st.status, attempts=st.attempts, ms=st.ms,
            error=st.error, strategy=r.strategy if r else "", score=r.score if r else 0.0,
            abstained=r.abstained if r else False, verdict=v.kind if v else "", verdict_reason=v.reason if v else "",
            before=before.get(st.index, ""), after=after.get(st.index, ""), url=url.get(st.index, ""),
            escalated=sum(1 for e in detail.escalations if e.index == st.index),
            hand_backs=sum(1 for i in detail.hand_backs if i == st.index)))
    return out


@dataclass(frozen=True, slots=True)
class StepDelta:
    """One step of two runs side by side (``a`` the older/reference run, ``b`` the other); None where it did not run."""

    step_id: str
    title: str
    a: StoredStep | None
    b: StoredStep | None

    @property
    def healed_now(self) -> bool:
        """Found by a healing level in ``b`` but exactly in ``a`` (or ``a`` did not run it)."""
        return self.b is not None and self.b.healed and not (self.a is not None and self.a.healed)

    @property
    def heal_gone(self) -> bool:
        return self.a is not None and self.a.healed and self.b is not None and not self.b.healed

    @property
    def ms_delta(self) -> float | None:
        return None if self.a is None or self.b is None else self.b.ms - self.a.ms

    @property
    def slower(self) -> bool:
        """``b`` took >= :data:`SLOWER_RATIO` times and >= :data:`SLOWER_MIN_MS` ms more than ``a``."""
        d = self.ms_delta
        return d is not None and self.a is not None and d >= SLOWER_MIN_MS and self.b.ms >= self.a.ms * SLOWER_RATIO  # type: ignore[union-attr]

    @property
    def verdict_changed(self) -> bool:
        return self.a is not None and self.b is not None and self.a.verdict != self.b.verdict

    @property
    def status_changed(self) -> bool:
        return (self.a.status if self.a else "") != (self.b.status if self.b else "")

    @property
    def changes(self) -> tuple[str, ...]:
        """What changed, in words: ``("healed", "slower", "verdict", "status", "only in A", "only in B")``."""
        out = []
        if self.a is None:
            out.append("only in B")
        elif self.b is None:
            out.append("only in A")
        if self.healed_now:
            out.append("healed")
        if self.heal_gone:
            out.append("heal gone")
        if self.slower:
            out.append("slower")
        if self.verdict_changed:
            out.append("verdict")
        if self.status_changed and self.a is not None and self.b is not None:
            out.append("status")
        return tuple(out)


def compare_runs(a: RunDetail, b: RunDetail) -> list[StepDelta]:
    """Line two runs up step by step: by step id where both have ids, else by index; ``a``'s order first.

    Raises
    ------
    ValueError
        The runs are of different flows.
    """
    if a.run.flow != b.run.flow:
        raise ValueError(f"runs {a.run.id} and {b.run.id} are of different flows ({a.run.flow!r}, {b.run.flow!r})")
    sa, sb = stored_steps(a), stored_steps(b)

    def key(s: StoredStep) -> str:
        return s.step_id or f"#{s.index}"

    by_b = {key(s): s for s in sb}
    out: list[StepDelta] = []
    seen: set[str] = set()
    for s in sa:
        k = key(s)
        seen.add(k)
        other = by_b.get(k)
        out.append(StepDelta(k if s.step_id else "", s.title, s, other))
    for s in sb:
        if key(s) not in seen:
            out.append(StepDelta(s.step_id, s.title, None, s))
    return out
