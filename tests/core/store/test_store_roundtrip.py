"""A run recorded through the Store API and read back, screenshots included."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlalchemy.dialects import postgresql
from sqlalchemy.schema import CreateIndex, CreateTable

from core.domain import BBox, EscalationCandidate, RunResult
from core.engine.events import EscalationRaised
from core.store import (
    SCHEMA_VERSION, Store, StoreClosedError, StoreReadOnlyError, UnknownRunError, store_path,
)
from core.store.models import Base


def _record_full_run(store: Store, make_observation, make_resolution, make_verdict,
                     make_outcome, make_png, flow: str = "login") -> tuple[str, RunResult, list[bytes]]:
    run_id = store.begin_run("demo", flow)
    pngs: list[bytes] = []
    outcomes = []
    for i in range(3):
        png = make_png(seed=i)
        pngs.append(png)
        written = store.record_observation(run_id, i, "before", make_observation(
            url=f"http://127.0.0.1:8000/page{i}", title=f"Page {i}", png=png, digest=f"{i:040d}"))
        assert written is not None and written.is_file()
        strategy = "fuzzy_text" if i == 1 else "exact"
        res = make_resolution(strategy=strategy, label=f"Button {i}")
        store.record_resolution(run_id, i, res)
        ver = make_verdict(kind="unchanged" if i == 2 else "as_expected")
        store.record_verdict(run_id, i, ver)
        assert store.record_observation(run_id, i, "after", make_observation(
            url=f"http://127.0.0.1:8000/page{i + 1}", n_candidates=5)) is None
        status = "escalated" if i == 2 else "passed"
        outcome = make_outcome(i, status=status, resolution=res, verdict=ver,
                               error="verification failed" if i == 2 else "")
        store.record_step(run_id, outcome)
        outcomes.append(outcome)
    store.record_escalation(run_id, EscalationRaised(
        run_id=run_id, flow=flow, index=2, step_title="Step 3", reason="page did not change",
        candidates=(EscalationCandidate("0:1", "Save", 0.61, BBox(10, 20, 80, 24)),
                    EscalationCandidate("0:2", "Cancel", 0.58)), side_effects=("POST /orders",),
        kind="failed", plain="The step did not have the expected effect: page did not change."))
    result = RunResult(run_id=run_id, flow=flow, status="escalated", steps=tuple(outcomes),
                       heals=1, invalid_actions=1, seconds=4.25, error="escalated at step 3",
                       reward=0.5, heals_by_strategy={"fuzzy_text": 1})
    store.finish_run(run_id, result)
    return run_id, result, pngs


def test_full_run_is_read_back_after_reopening(tmp_path, make_observation, make_resolution,
                                               make_verdict, make_outcome, make_png):
    with Store.open(tmp_path) as store:
        run_id, result, pngs = _record_full_run(store, make_observation, make_resolution,
                                                make_verdict, make_outcome, make_png)

    with Store.open(tmp_path) as store:
        detail = store.run_detail(run_id)
        assert detail is not None
        run = detail.run
        assert (run.id, run.project, run.flow, run.status) == (run_id, "demo", "login", "escalated")
        assert run.seconds == pytest.approx(4.25)
        assert (run.heals, run.invalid_actions, run.reward) == (1, 1, 0.5)
        assert run.error == "escalated at step 3"
        assert run.heals_by_strategy == {"fuzzy_text": 1}
        assert run.schema_version == SCHEMA_VERSION
        assert run.finished_at is not None and run.finished_at >= run.started_at
        assert run.started_at.tzinfo is not None

        assert [s.index for s in detail.steps] == [0, 1, 2]
        assert [s.status for s in detail.steps] == ["passed", "passed", "escalated"]
        assert detail.steps[0].step_id == "s1" and detail.steps[0].title == "Step 1"
        assert detail.steps[2].error == "verification failed"
        assert detail.steps[1].ms == pytest.approx(121.0)

        # record_* wrote one resolution and one verdict per step; finish_run added none.
        assert [r.strategy for r in detail.resolutions] == ["exact", "fuzzy_text", "exact"]
        r1 = detail.resolutions[1]
        assert (r1.ref, r1.score, r1.margin, r1.ms, r1.abstained) == ("0:1", 0.97, 0.4, 3.5, False)
        assert r1.top[0] == {"ref": "0:1", "score": 0.97, "label": "Button 1"}
        assert [v.kind for v in detail.verdicts] == ["as_expected", "as_expected", "unchanged"]
        assert detail.verdicts[0].observed == ("value",)

        assert [(o.index, o.when) for o in detail.observations] == [
            (0, "before"), (0, "after"), (1, "before"), (1, "after"), (2, "before"), (2, "after")]
        before0 = detail.observations[0]
        assert before0.url == "http://127.0.0.1:8000/page0" and before0.title == "Page 0"
        assert before0.signature_digest == "0" * 40
        assert before0.element_count == 3 and detail.observations[1].element_count == 5
        assert before0.viewport == (1280, 800) and before0.device_pixel_ratio == 2.0
        assert detail.observations[1].screenshot is None

        (esc,) = detail.escalations
        assert (esc.index, esc.flow, esc.reason) == (2, "login", "page did not change")
        assert esc.candidates == (EscalationCandidate("0:1", "Save", 0.61, BBox(10, 20, 80, 24)),
                                  EscalationCandidate("0:2", "Cancel", 0.58))
        assert esc.side_effects == ("POST /orders",)
        assert (esc.kind, esc.plain) == ("failed", "The step did not have the expected effect: page did not change.")

        step2 = detail.for_step(2)
        assert step2["step"].status == "escalated" and len(step2["escalations"]) == 1
        assert detail.to_dict()["run"]["id"] == run_id


def test_screenshots_are_png_files_referenced_by_relative_paths(tmp_path, make_observation,
                                                                 make_resolution, make_verdict,
                                                                 make_outcome, make_png):
    with Store.open(tmp_path) as store:
        run_id, _, pngs = _record_full_run(store, make_observation, make_resolution,
                                           make_verdict, make_outcome, make_png)
        detail = store.run_detail(run_id)
        shots = [o.screenshot for o in detail.observations if o.screenshot]
        assert shots == [f"screenshots/{run_id}/{i:04d}_before_1.png" for i in range(3)]
        media = tmp_path / ".steadyhand"
        assert store.media_root == media
        for rel, png in zip(shots, pngs, strict=True):
            assert not Path(rel).is_absolute()
            assert store.media_path(rel) == media / "screenshots" / run_id / Path(rel).name
            assert store.media_path(rel).read_bytes() == png
        # A second observation of the same step and moment gets the next number.
        again = store.record_observation(run_id, 0, "before", make_observation(png=make_png(seed=9)))
        assert again == media / "screenshots" / run_id / "0000_before_2.png"
        assert again.read_bytes() == make_png(seed=9)
        # No temporary files left behind.
        assert not list((media / "screenshots").rglob(".tmp-*"))


def test_finish_run_alone_records_steps_resolutions_and_verdicts(tmp_path, make_outcome,
                                                                 make_resolution, make_verdict):
    with Store.open(tmp_path) as store:
        run_id = store.begin_run("demo", "checkout")
        store.record_verdict(run_id, 1, make_verdict(kind="failed", reason="recorded live"))
        outcomes = (make_outcome(0, resolution=make_resolution(), verdict=make_verdict()),
                    make_outcome(1, status="failed", resolution=make_resolution(strategy="semantic"),
                                 verdict=make_verdict(kind="failed", reason="from outcome")))
        store.finish_run(run_id, RunResult(run_id=run_id, flow="checkout", status="failed",
                                           steps=outcomes, heals=1, invalid_actions=0,
                                           seconds=1.0))
        # Finishing again (idempotent) does not duplicate anything.
        store.finish_run(run_id, RunResult(run_id=run_id, flow="checkout", status="failed",
                                           steps=outcomes, heals=1, invalid_actions=0,
                                           seconds=1.0))
        d = store.run_detail(run_id)
        assert [s.index for s in d.steps] == [0, 1]
        assert [(r.index, r.strategy) for r in d.resolutions] == [(0, "exact"), (1, "semantic")]
        # Step 1 already had a live verdict: the outcome's is not added.
        assert sorted((v.index, v.reason) for v in d.verdicts) == [
            (0, "value changed"), (1, "recorded live")]
        assert d.run.status == "failed" and d.run.reward is None


def test_record_step_replaces_the_row_of_the_same_index(tmp_path, make_outcome):
    with Store.open(tmp_path) as store:
        run_id = store.begin_run("demo", "f")
        store.record_step(run_id, make_outcome(0, status="failed", error="timeout"))
        store.record_step(run_id, make_outcome(0, status="passed"))
        (step,) = store.run_detail(run_id).steps
        assert (step.status, step.error) == ("passed", "")


def test_list_runs_newest_first_with_limit_and_filters(tmp_path):
    with Store.open(tmp_path) as store:
        ids = [store.begin_run("demo", flow) for flow in ("a", "b", "a", "c")]
        assert [r.id for r in store.list_runs()] == ids[::-1]
        assert [r.id for r in store.list_runs(limit=2)] == ids[:1:-1]
        assert [r.id for r in store.list_runs(flow="a")] == [ids[2], ids[0]]
        assert {r.status for r in store.list_runs()} == {"running"}
        assert store.list_runs(status="passed") == []
        assert store.get_run(ids[1]).flow == "b"
        assert store.get_run("nope") is None and store.run_detail("nope") is None


def test_open_accepts_project_folder_store_folder_or_file(tmp_path):
    with Store.open(tmp_path) as store:
        run_id = store.begin_run("demo", "f")
    db = store_path(tmp_path)
    assert db == tmp_path / ".steadyhand" / "store.sqlite" and db.is_file()
    for path in (db, tmp_path / ".steadyhand"):
        with Store.open(path) as again:
            assert [r.id for r in again.list_runs()] == [run_id]
            assert again.path == db


def test_given_run_id_is_used_and_validated(tmp_path):
    with Store.open(tmp_path) as store:
        assert store.begin_run("demo", "f", run_id="run-0001") == "run-0001"
        for bad in ("", "../x", "a/b", "x" * 65, "-lead"):
            with pytest.raises(ValueError):
                store.begin_run("demo", "f", run_id=bad)


def test_errors(tmp_path, make_observation, make_outcome, make_verdict):
    store = Store.open(tmp_path)
    run_id = store.begin_run("demo", "f")
    with pytest.raises(UnknownRunError):
        store.record_step("not-a-run", make_outcome(0))
    with pytest.raises(KeyError):  # UnknownRunError is a KeyError too
        store.record_verdict("not-a-run", 0, make_verdict())
    with pytest.raises(ValueError):
        store.record_observation(run_id, 0, "during", make_observation())
    with pytest.raises(ValueError):
        store.record_observation(run_id, 0, "before", make_observation(png=b"GIF89a..."))
    assert store.run_detail(run_id).observations == ()  # nothing half-written
    store.close()
    store.close()  # idempotent
    with pytest.raises(StoreClosedError):
        store.list_runs()
    with pytest.raises(FileNotFoundError):
        Store.open(tmp_path / "elsewhere" / "store.sqlite", read_only=True)


def test_read_only_store_refuses_writes(tmp_path, make_outcome):
    with Store.open(tmp_path) as store:
        run_id = store.begin_run("demo", "f")
    with Store.open(tmp_path, read_only=True) as ro:
        assert ro.read_only
        with pytest.raises(StoreReadOnlyError):
            ro.begin_run("demo", "g")
        with pytest.raises(StoreReadOnlyError):
            ro.record_step(run_id, make_outcome(0))
        assert [r.id for r in ro.list_runs()] == [run_id]


def test_sqlite_runs_in_wal_mode_with_synchronous_normal(tmp_path):
    with Store.open(tmp_path) as store:
        with store._engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1  # NORMAL
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    raw = sqlite3.connect(store_path(tmp_path))
    try:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"  # persistent
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        raw.close()


def test_models_compile_for_postgresql():
    dialect = postgresql.dialect()
    for table in Base.metadata.sorted_tables:
        ddl = str(CreateTable(table).compile(dialect=dialect))
        assert table.name in ddl
        for index in table.indexes:
            str(CreateIndex(index).compile(dialect=dialect))
    names = {t.name for t in Base.metadata.sorted_tables}
    assert names >= {"schema_meta", "runs", "steps", "observations", "resolutions", "verdicts",
                     "escalations", "heal_proposals", "screen_baselines", "screen_changes", "checkpoints"}
