"""The recording journal carries a schema version: old journals read as version 1, newer ones are refused."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
import yaml

from core.domain import Action, ElementDescriptor, Flow, Step
from core.project import ProjectError
from core.project.loader import flow_to_mapping
from core.record.command import _recover
from core.record.journal import JOURNAL_SCHEMA_VERSION, JournalVersionError, RecordingSpool, recover_journal

CLICK = Step("s1", Action("click"), name="Click Save", target=ElementDescriptor(tag="button", role="button", name="Save"))
TYPE = Step("s2", Action("input", "alice"), name="Fill User name",
            target=ElementDescriptor(tag="input", role="textbox", name="User name"))


def _line(step: Step) -> str:
    return json.dumps({"op": "step", "step": flow_to_mapping(Flow("x", "/", (step,)))["steps"][0]})


def _lines(folder: Path) -> list[dict]:
    return [json.loads(x) for x in (folder / "steps.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]


def test_a_new_journal_starts_with_its_version_and_its_meta_carries_it(tmp_path):
    spool = RecordingSpool(tmp_path / "j")
    spool.write_meta({"flow": "save", "start_url": "/"})
    spool.add(CLICK, b"")
    spool.close()
    assert _lines(tmp_path / "j")[0] == {"op": "journal", "schema_version": JOURNAL_SCHEMA_VERSION}
    assert json.loads((tmp_path / "j" / "meta.json").read_text())["schema_version"] == JOURNAL_SCHEMA_VERSION
    again = RecordingSpool(tmp_path / "j")  # reopened (a recovery): appends, no second header
    again.add(TYPE, b"")
    steps, _ = again.read()
    again.close()
    assert [s.id for s in steps] == ["s1", "s2"]
    assert [r["op"] for r in _lines(tmp_path / "j")] == ["journal", "step", "step"]
    assert again.read_meta() == {"flow": "save", "start_url": "/"}


def test_a_journal_written_before_versions_reads_as_version_1(tmp_path):
    folder = tmp_path / "save-20250101-120000"
    folder.mkdir()
    (folder / "steps.jsonl").write_text(f"{_line(CLICK)}\n{_line(TYPE)}\n" + json.dumps({"op": "remove", "index": 1})
                                        + "\n", encoding="utf-8")
    (folder / "meta.json").write_text(json.dumps({"flow": "save", "start_url": "/form"}), encoding="utf-8")
    flow, crops, files = recover_journal(folder)
    assert (flow.name, flow.start_url, [s.id for s in flow.steps]) == ("save", "/form", ["s1"])
    assert crops == {} and files == {}
    assert _lines(folder)[0]["op"] == "step"  # reading an old journal does not rewrite it


@pytest.mark.parametrize("where", ["steps", "meta"])
def test_a_journal_of_a_newer_version_is_refused_naming_the_file_and_the_version_expected(tmp_path, where):
    folder = tmp_path / "save-20990101-120000"
    folder.mkdir()
    newer = JOURNAL_SCHEMA_VERSION + 1
    header = {"op": "journal", "schema_version": newer if where == "steps" else JOURNAL_SCHEMA_VERSION}
    (folder / "steps.jsonl").write_text(json.dumps(header) + "\n" + _line(CLICK) + "\n", encoding="utf-8")
    meta = {"schema_version": newer if where == "meta" else JOURNAL_SCHEMA_VERSION, "flow": "save"}
    (folder / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(JournalVersionError) as err:
        recover_journal(folder)
    name = "steps.jsonl" if where == "steps" else "meta.json"
    assert err.value.path == str(folder / name)
    assert f"schema_version {newer}" in str(err.value) and f"expected {JOURNAL_SCHEMA_VERSION} or older" in str(err.value)
    assert isinstance(err.value, ProjectError)


def test_a_journal_header_that_is_not_a_version_is_refused(tmp_path):
    (tmp_path / "steps.jsonl").write_text(json.dumps({"op": "journal", "schema_version": "two"}) + "\n")
    with pytest.raises(ProjectError, match="not a version number"):
        RecordingSpool(tmp_path)


def test_steadyhand_record_recovery_reports_a_newer_journal_and_keeps_it(tmp_path, capsys):
    root = tmp_path / "proj"
    (root / "flows").mkdir(parents=True)
    (root / "steadyhand.yaml").write_text(yaml.safe_dump({"name": "Proj", "base_url": "http://127.0.0.1:9"}))
    folder = root / ".steadyhand" / "recordings" / "save-20990101-120000"
    folder.mkdir(parents=True)
    (folder / "steps.jsonl").write_text(json.dumps({"op": "journal", "schema_version": 99}) + "\n" + _line(CLICK) + "\n")
    code = _recover(argparse.Namespace(project=str(root), flow="save"))
    err = capsys.readouterr().err
    assert code == 4
    assert str(folder / "steps.jsonl") in err and "schema_version 99" in err and f"expected {JOURNAL_SCHEMA_VERSION}" in err
    assert folder.is_dir() and not (root / "flows" / "save.yaml").exists()
