"""learn_from_run on a real SQLite store: a correction and its failure record become one proposal (stored,
linked both ways); learning again finds the same skill; a reviewed one is not overwritten; what is dropped
says why; the command line refuses bad input with exit 2."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from core.cli import main

from core.skills.learn import LearnSettings, as_lines, learn_from_run
from core.store import Store
from core.store.corrections import CorrectionTable
from core.store.skills import SkillTable
from skill_records import FORM, OWN, correction_step, record, snap


def _fill(store: Store, rec, *, step_index: int = 0, steps=None) -> int:  # noqa: ANN001
    values = {f.name: getattr(rec, f.name) for f in dataclasses.fields(rec) if f.name not in ("id", "created_at")}
    stored = SkillTable(store).add_failure(values)
    CorrectionTable(store).add({"run_id": rec.run_id, "project": "Shipping", "flow": rec.flow, "step_index": step_index,
                                "step_id": rec.step_id, "meaning": "insert", "state": "offered",
                                "steps": steps if steps is not None else [correction_step("click", OWN)]})
    return stored.id


def test_a_correction_and_its_failure_become_one_stored_proposal(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "store.sqlite")
    try:
        fid = _fill(store, record(passed_from=snap(FORM, sig="after")))
        table = SkillTable(store)
        report = learn_from_run(store, "Shipping", "run-1")
        (skill,) = report.proposed
        assert not report.dropped and skill.state == "proposed" and skill.quality == skill.validation.pass_rate == 1.0
        assert table.get(skill.id) is not None and skill.provenance.failure_id == fid
        rec = table.failure(fid)
        assert rec.outcome == "skill" and rec.skill_id == skill.id and rec.correction_id
        assert rec.attribution["cause"] == "unexpected_state" and rec.attribution["after"][0]["action"] == "click"
        assert as_lines(report)[0].startswith(f"proposed {skill.id}: When the dialog 'Autofill?' is open")
        again = learn_from_run(store, "Shipping", "run-1")
        assert [s.id for s in again.proposed] == [skill.id] and len(table.list()) == 1
        table.set_state(skill.id, "rejected", reason="not wanted")
        third = learn_from_run(store, "Shipping", "run-1", settings=LearnSettings(validation_threshold=0.9))
        assert not third.proposed and "in the library already" in third.dropped[0].reason
        assert table.get(skill.id).state == "rejected"
    finally:
        store.close()


def test_what_is_not_learnt_is_reported_with_the_reason(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "store.sqlite")
    try:
        # a takeover asked for at step 2 with no failure there; a transient failure at step 3
        _fill(store, record(outcome="transient", step_index=2, step_id="s3", run_id="run-2"), step_index=1,
              steps=[correction_step("click", OWN)])
        report = learn_from_run(store, "Shipping", "run-2")
        assert not report.proposed
        assert sorted(d.reason for d in report.dropped) == [
            "did not reproduce: the step passed on a retry by itself (a transient failure)",
            "no failure was captured at step 2: the takeover was asked for, not needed"]
        assert not learn_from_run(store, "Shipping", "no-such-run").dropped
    finally:
        store.close()


def test_the_learn_command_refuses_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "flows").mkdir()
    (tmp_path / "steadyhand.yaml").write_text(yaml.safe_dump({"name": "T", "base_url": "http://127.0.0.1:9"}))

    def cli(*args: str) -> tuple[int, str]:
        code = main(["skills", "learn", *args])
        return code, capsys.readouterr().err

    code, err = cli(str(tmp_path), "abc")
    assert code == 2 and "no store (run the project first)" in err
    Store.open(tmp_path / ".steadyhand" / "store.sqlite").close()
    code, err = cli(str(tmp_path), "abc")
    assert code == 2 and "no run id starts with 'abc'" in err
    code, err = cli(str(tmp_path), "abc", "--threshold", "2")
    assert code == 2 and "--threshold must be within 0..1" in err


def test_a_failure_with_the_same_dialog_in_another_run_is_a_similar_state_to_replay_on(tmp_path: Path) -> None:
    from core.skills.learn import cases_for

    store = Store.open(tmp_path / "store.sqlite")
    try:
        table = SkillTable(store)
        older = record(run_id="run-0", flow="billing", step_id="b2", step_index=1,
                       before=snap(snap(FORM)["candidates"] + [{**OWN}], ("Autofill?",), sig="billing-popup"))
        _fill(store, older, step_index=1)
        fid = _fill(store, record(passed_from=snap(FORM, sig="after")))
        cases = cases_for(table.failure(fid), table)
        assert [(c.label.split(" (")[0], c.expect) for c in cases] == [
            ("the failure's page", True), ("a similar failure", True), ("the recording's page", False),
            ("the page the step passed from after the correction", False)]
        (skill,) = learn_from_run(store, "Shipping", "run-1").proposed
        assert (skill.validation.cases, skill.validation.passed) == (4, 4)
    finally:
        store.close()


def test_an_error_signal_of_a_passed_step_is_no_case_for_a_failure_of_another_kind(tmp_path: Path) -> None:
    from core.skills.learn import cases_for

    store = Store.open(tmp_path / "store.sqlite")
    try:
        table = SkillTable(store)
        # the same flow step passed in another run with a failed write: an error_signal record, no failure page
        signal = record(run_id="run-0", error_type="error_signal", message="the step passed with error signals: "
                        "HTTP 500 POST http://x.test/api/save", before=snap(FORM, sig="signal"))
        table.add_failure({f.name: getattr(signal, f.name) for f in dataclasses.fields(signal)
                           if f.name not in ("id", "created_at")})
        fid = _fill(store, record(passed_from=snap(FORM, sig="after")))
        labels = [c.label for c in cases_for(table.failure(fid), table)]
        assert not any(label.startswith("a similar failure") for label in labels), labels
        # another error_signal of the same step is one
        other = table.add_failure({**{f.name: getattr(signal, f.name) for f in dataclasses.fields(signal)
                                      if f.name not in ("id", "created_at")}, "run_id": "run-9",
                                   "page": {**signal.page, "before": snap(FORM, sig="signal-2")}})
        assert any(c.label.startswith("a similar failure") for c in cases_for(table.failure(other.id), table))
    finally:
        store.close()


def test_two_failures_that_teach_the_same_skill_list_it_once(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "store.sqlite")
    try:
        _fill(store, record(passed_from=snap(FORM, sig="after")))
        _fill(store, record(passed_from=snap(FORM, sig="after"), step_index=1, step_id="s2"), step_index=1)
        report = learn_from_run(store, "Shipping", "run-1")
        ids = [s.id for s in report.proposed]
        assert ids and len(ids) == len(set(ids))
        lines = [line for line in as_lines(report) if line.startswith("proposed ")]
        assert len(lines) == len({line.split(":")[0] for line in lines})
        (stored,) = [SkillTable(store).get(i) for i in ids]
        assert lines == [f"proposed {stored.id}: {stored.description} (pass rate "
                         f"{stored.validation.pass_rate:.0%} on {stored.validation.cases} states)"]
    finally:
        store.close()
