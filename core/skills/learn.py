"""Learn from a run: its failure records and its takeover corrections become proposed skills (K2-K5).

:func:`learn_from_run` is called by the engine when a run that had a
takeover correction ends (:class:`core.engine.session.ProjectSession`), and
by ``steadyhand skills learn PROJECT RUN_ID``.  For each correction of the
run it takes the failure record captured at that step (K2), attributes the
failure (K3, optionally refined by a model), contrasts the failed segment
with the correction (K4), validates the candidate (K5) and stores it with
state ``proposed`` - or says why not.  A failure the step got past by
itself (``transient``) is reported and never learnt.  It emits nothing; the
caller announces the report (``SkillProposed`` / ``SkillDropped``).

The failure record's ``outcome`` says what it became (``skill``,
``dropped``, ``transient``) and its ``attribution`` is filled in.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping, Sequence

from core.domain import Flow
from core.skills.attribution import attribute, refine
from core.skills.capture import observation_of, semantic_target
from core.skills.extract import Candidate, NoSkill, choose_actions, extract, recording_observation, step_of
from core.skills.validate import DEFAULT_THRESHOLD, Case, reproduced, validate
from core.store.corrections import CorrectionRecord, CorrectionTable
from core.store.skills import FailureRecord, SkillConflictError, SkillTable

__all__ = ["LearnReport", "Dropped", "LearnSettings", "learn_from_run", "cases_for", "failed_segment"]

#: Flow steps after the failing one that belong to the failed segment (the correction may do them by hand).
AHEAD = 3


@dataclass(frozen=True, slots=True)
class LearnSettings:
    """How learning validates (K5); the project file's ``skills:`` section may carry the same names.

    ``validation_threshold``: pass rate below which a candidate is dropped
    (0.6, K5); ``max_similar``: other failure records of the same flow step
    or dialog replayed (4, with the failure itself: 5 states, K5).
    """

    validation_threshold: float = DEFAULT_THRESHOLD
    max_similar: int = 4


@dataclass(frozen=True, slots=True)
class Dropped:
    """A failure or candidate that did not become a skill, and why (one line)."""

    reason: str
    flow: str = ""
    step_index: int = -1
    failure_id: int = 0
    correction_id: int = 0


@dataclass(frozen=True, slots=True)
class LearnReport:
    """What :func:`learn_from_run` did: skills proposed (stored) and what was dropped."""

    run_id: str
    proposed: list[Any] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)


def _entry(m: Mapping[str, Any], index: int, status: str) -> dict[str, Any]:
    return {"index": index, "step_id": str(m.get("id", "")), "action": str(m.get("action", "")),
            "value": str(m.get("value", "") or ""), "intent": str(m.get("name", "") or ""),
            "target": {k: v for k, v in (m.get("target") or {}).items()
                       if k in ("tag", "role", "name", "label", "text", "placeholder", "test_id", "title", "alt",
                                "container", "anchor")},
            "status": status}


def _flow_of(correction: CorrectionRecord | None, flow: Flow | None) -> Flow | None:
    if flow is not None or correction is None or not correction.flow_file:
        return flow
    try:
        from core.project.loader import load_flow

        return load_flow(Path(correction.flow_file))
    except Exception:  # noqa: BLE001 - a flow file gone or changed: the record's trajectory is enough
        return None


def failed_segment(record: FailureRecord, flow: Flow | None) -> list[dict[str, Any]]:
    """The window before the failure, the failing step and the :data:`AHEAD` flow steps after it."""
    traj = [dict(e) for e in record.trajectory]
    at = next((i for i in range(len(traj) - 1, -1, -1) if traj[i].get("index") == record.step_index), len(traj) - 1)
    out = traj[max(0, at - 3):at + 1]
    if flow is not None:
        for j, st in enumerate(flow.steps[record.step_index + 1:record.step_index + 1 + AHEAD]):
            out.append({"index": record.step_index + 1 + j, "step_id": st.id, "action": st.action.kind,
                        "value": st.action.value, "intent": st.title, "target": semantic_target(st.target),
                        "status": "ahead"})
    return out


def _similar(table: SkillTable, record: FailureRecord, limit: int) -> list[FailureRecord]:
    """Other failure records of the same flow step, or with the same dialog open (newest first).

    An ``error_signal`` record (a passed step with a failed write or an error shown) is never a case of a
    failure of another kind: the step worked there."""
    out = []
    titles = set((record.page.get("before") or {}).get("modal_titles") or ())
    for r in table.failures(project=record.project or None, limit=200):
        if r.id == record.id or r.outcome == "transient" or r.run_id == record.run_id:
            continue
        if r.error_type == "error_signal" and record.error_type != "error_signal":
            continue
        same_step = r.flow == record.flow and r.step_id == record.step_id
        same_dialog = bool(titles & set((r.page.get("before") or {}).get("modal_titles") or ()))
        if same_step or same_dialog:
            out.append(r)
        if len(out) >= limit:
            break
    return out


def cases_for(record: FailureRecord, table: SkillTable | None = None, *, limit: int = 4) -> list[Case]:
    """The stored states a candidate from ``record`` is replayed on (K5).

    Positive: the failure's page on each attempt (distinct states) - or, when
    the failed action opened a dialog, the page after it (and the pages
    before it are negative: nothing to do yet) - and the failure pages of
    similar records of other runs.  Negative: the recording's page (its R1
    baseline and recorded dialog), and the page the step passed from after
    the correction.
    """
    page = record.page or {}
    traj = list(record.trajectory)
    point = next((e for e in reversed(traj) if e.get("index") == record.step_index), traj[-1] if traj else {})
    step = step_of(point) if point else None
    cases: list[Case] = []
    seen: set[str] = set()
    snaps = [a.get("before") for a in reversed(page.get("attempts") or ()) if a.get("before")] or [page.get("before")]
    after = page.get("after") or {}
    opened = bool(after) and bool(set(after.get("modal_titles") or ())
                                  - set((page.get("before") or {}).get("modal_titles") or ()))
    if opened:  # the failed action opened a dialog: the person met that page; before it, nothing to do yet
        seen.add(str(after.get("signature")))
        cases.append(Case(observation_of(after), True, "the page after the failed action", step))
    for k, snap in enumerate(s for s in snaps if s):
        if snap.get("signature") in seen:
            continue
        seen.add(str(snap.get("signature")))
        label = (f"the page before the failed action (attempt {len(snaps) - k}, no dialog yet)" if opened
                 else f"the failure's page (attempt {len(snaps) - k})")
        cases.append(Case(observation_of(snap), not opened, label, step))
    for other in (_similar(table, record, limit) if table is not None else ()):
        snap = other.page.get("before") or {}
        if snap and snap.get("signature") not in seen:
            seen.add(str(snap.get("signature")))
            ostep = next((e for e in reversed(other.trajectory) if e.get("index") == other.step_index), None)
            cases.append(Case(observation_of(snap), True, f"a similar failure (run {other.run_id[:8]}, "
                                                          f"{other.flow} step {other.step_index + 1})",
                              step_of(ostep) if ostep else step))
    rec = recording_observation(page.get("recorded") or {}, (point or {}).get("target") or page.get("target"))
    if rec is not None:
        cases.append(Case(rec, False, "the recording's page", step))
    passed = page.get("passed_from")
    if passed:
        cases.append(Case(observation_of(passed), False, "the page the step passed from after the correction",
                          step))
    return cases


def _threshold(settings: Any) -> float:
    for name in ("validation_threshold", "threshold"):
        v = getattr(settings, name, None)
        if isinstance(v, (int, float)):
            return float(v)
    return DEFAULT_THRESHOLD


def _under_cap(table: SkillTable, product: str, settings: Any) -> bool:
    """The daily cap on new proposals (K7), when the library's upkeep provides it."""
    try:
        from core.skills import upkeep  # type: ignore[attr-defined]

        check = getattr(upkeep, "under_daily_cap", None)
        return True if check is None or settings is None else bool(check(table, product, settings,
                                                                         datetime.now(timezone.utc)))
    except Exception:  # noqa: BLE001 - no upkeep module yet, or settings of another shape: no cap
        return True


def learn_from_run(store: Any, project_name: str, run_id: str, *, settings: Any = None, model: Any = None,
                   flow: Flow | None = None) -> LearnReport:
    """Turn the failures of run ``run_id`` and their corrections into proposed skills.

    Parameters
    ----------
    store : core.store.Store
        The project's open store (writable).
    project_name : str
        The product: one skill space each (K7).
    run_id : str
        The run.
    settings : LearnSettings | object | None
        ``validation_threshold`` (0.6) and ``max_similar`` (4); the project's
        skill settings may be passed as they are.
    model : object | None
        A :class:`core.plan.model.ModelClient` to refine the attribution (optional).
    flow : Flow | None
        The run's flow (else read from the correction's flow file).

    Returns
    -------
    LearnReport
        Proposed skills (stored, state ``proposed``) and what was dropped, with reasons.

    Raises
    ------
    core.store.StoreClosedError, core.store.StoreReadOnlyError
        From the store.
    """
    table = SkillTable(store)
    report = LearnReport(run_id)
    records = sorted(table.failures(run_id=run_id), key=lambda r: r.id)
    corrections = sorted((c for c in CorrectionTable(store).list(project=project_name or None) if c.run_id == run_id),
                         key=lambda c: c.id)
    threshold = _threshold(settings)
    limit = int(getattr(settings, "max_similar", 4) or 4)
    corrected = {c.step_index for c in corrections}
    for r in records:
        if r.step_index not in corrected and r.outcome == "transient":
            _ok, why = reproduced(r, explained=False)
            report.dropped.append(Dropped(why, r.flow, r.step_index, r.id))
    for c in corrections:
        rec = next((r for r in reversed(records) if r.step_index == c.step_index), None)
        if rec is None:
            report.dropped.append(Dropped(f"no failure was captured at step {c.step_index + 1}: the takeover was "
                                          "asked for, not needed", c.flow, c.step_index, 0, c.id))
            continue
        try:
            _learn_one(table, rec, c, project_name, report, threshold=threshold, limit=limit, model=model,
                       flow=_flow_of(c, flow), settings=settings)
        except SkillConflictError as exc:
            report.dropped.append(Dropped(str(exc), rec.flow, rec.step_index, rec.id, c.id))
    return report


def _learn_one(table: SkillTable, rec: FailureRecord, c: CorrectionRecord, product: str, report: LearnReport, *,
               threshold: float, limit: int, model: Any, flow: Flow | None, settings: Any) -> None:
    later = [_entry(m, rec.step_index, "corrected") for m in c.steps]
    att = attribute(rec, later=later)
    if model is not None:
        att = refine(att, rec, model)
    table.update_failure(rec.id, attribution=att.to_mapping(), correction_id=c.id)

    def drop(reason: str, outcome: str = "dropped") -> None:
        table.update_failure(rec.id, outcome=outcome)
        report.dropped.append(Dropped(reason, rec.flow, rec.step_index, rec.id, c.id))

    if rec.outcome == "transient":
        drop(reproduced(rec, explained=False)[1], "transient")
        return
    failed = failed_segment(rec, flow)
    chosen = choose_actions(later, failed, rec, model) if model is not None else None
    out = extract(rec, corrected=chosen or later, failed=failed, product=product, attribution=att,
                  meaning=c.meaning, correction_id=c.id, extractor="contrast+model" if chosen else "contrast")
    if isinstance(out, NoSkill):
        drop(out.reason)
        return
    assert isinstance(out, Candidate)
    result, why = validate(out.skill, rec, cases_for(rec, table, limit=limit), threshold=threshold)
    if why:
        drop(why, "dropped" if result.reproduced else "transient")
        return
    skill = replace(out.skill, validation=result, quality=result.pass_rate)
    existing = table.get(skill.id)
    if existing is not None and existing.state in ("approved", "rejected", "retired"):
        drop(f"the same skill is in the library already ({skill.id}, {existing.state})")
        return
    if existing is None and not _under_cap(table, product, settings):
        drop("the daily cap on new skill proposals is reached")
        return
    stored, _new = table.put(skill)
    table.update_failure(rec.id, outcome="skill", skill_id=stored.id)
    # two failures of the run may teach the same skill (one id): listed once, as stored now (issue 25 item 7:
    # the same id was printed twice with two descriptions)
    report.proposed[:] = [s for s in report.proposed if s.id != stored.id] + [stored]


def as_lines(report: LearnReport) -> Sequence[str]:
    """One line per proposal and per drop (the CLI prints them)."""
    out = [f"proposed {s.id}: {s.description} (pass rate {s.validation.pass_rate:.0%} on {s.validation.cases} "
           f"states)" for s in report.proposed]
    out += [f"dropped ({d.flow} step {d.step_index + 1}): {d.reason}" for d in report.dropped]
    return out
