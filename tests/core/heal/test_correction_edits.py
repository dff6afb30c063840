"""Takeover corrections as flow edits: the text edit in place, and the review API over a real SQLite store."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from core.domain import Action, ElementDescriptor, Step
from core.heal.corrections import (
    CorrectionReviewError, accept_correction, correction_diff, correction_edit, list_corrections, new_step_ids,
    reject_correction, steps_as_mappings,
)
from core.heal.flowfile import FlowEditError
from core.project import load_flow
from core.secrets import Redactor
from core.store import Store
from core.store.corrections import CorrectionTable

ROOT = Path(__file__).resolve().parents[3]
DEMO = (ROOT / "projects" / "demo" / "flows" / "export_report.yaml").read_text(encoding="utf-8")
PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 32


def _click(name: str, step_id: str = "s1") -> Step:
    return Step(step_id, Action("click"), name=f"Click {name}",
                target=ElementDescriptor(tag="button", role="button", name=name, text=name, id="x"))


def _mappings(*steps: Step) -> list[dict]:
    return steps_as_mappings("export_report", "", steps)


def test_replace_changes_only_the_step_and_keeps_every_other_line() -> None:
    commented = DEMO.replace("- id: s5\n", "# the dialog's confirm button\n- id: s5\n")
    edit = correction_edit(commented, step_id="s4", meaning="replace", steps=_mappings(_click("Export report (E)")),
                           crops={"s1": "c"}, path="flows/export_report.yaml")
    old, new = commented.splitlines(), edit.new.splitlines()
    start = old.index("- id: s4")
    assert new[:start] == old[:start]  # everything before the step, byte for byte
    tail = old.index("# the dialog's confirm button")
    assert new[-(len(old) - tail):] == old[tail:]  # the comment and everything after
    data = yaml.safe_load(edit.new)
    assert [s["id"] for s in data["steps"]] == ["s1", "s2", "s3", "s4_h1", "s5"]
    new_step = data["steps"][3]
    # the stable key order of flow files; the replaced step's expected effect and after-state are kept (nothing
    # recorded says otherwise); its selector named another element: said in one line above the diff
    assert list(new_step) == ["id", "name", "action", "target", "expect", "after"]
    assert new_step["expect"] == "overlay_open" and new_step["after"] == {"dialog": True, "dialog_name": "Export report"}
    assert new_step["target"]["name"] == "Export report (E)"
    assert new_step["target"]["crop"] == "export_report.crops/s4_h1.png"
    assert edit.not_kept == ("Not kept from the replaced step s4 'Export report': selector '#export-report' "
                             "(no recorded step acts on the same element).")
    assert edit.diff.startswith(edit.not_kept + "\n--- a/flows/export_report.yaml\n+++ b/flows/export_report.yaml\n")
    assert "-- id: s4\n" in edit.diff and "+- id: s4_h1\n" in edit.diff


def test_a_replacement_keeps_the_checks_and_selector_and_names_a_value_it_changed() -> None:
    leave = (ROOT / "projects" / "demo" / "flows" / "leave_request.yaml").read_text(encoding="utf-8")
    typed = Step("s1", Action("input", "Family trip"), name="Fill Reason",
                 target=ElementDescriptor(tag="textarea", role="textbox", name="Reason", id="reason"))
    edit = correction_edit(leave, step_id="s10", meaning="replace", steps=steps_as_mappings("leave_request", "", [typed]),
                           path="leave_request.yaml")
    new = yaml.safe_load(edit.new)["steps"][9]
    assert new["selector"] == "#reason" and new["assertions"] == [{"kind": "enabled",
                                                                    "selector": "role=button[name='Submit']"}]
    assert edit.not_kept == ("Not kept from the replaced step s10 'Type the reason': value '{reason}' "
                             "(you typed 'Family trip').")


def test_insert_puts_the_steps_before_and_keeps_the_step() -> None:
    steps = _mappings(_click("Close tip", "s1"), _click("Accept cookies", "s2"))
    edit = correction_edit(DEMO, step_id="s4", meaning="insert", steps=steps, path="export_report.yaml")
    data = yaml.safe_load(edit.new)
    assert [s["id"] for s in data["steps"]] == ["s1", "s2", "s3", "s4_h1", "s4_h2", "s4", "s5"]
    assert "crop" not in data["steps"][3]["target"]  # no crop recorded: none named
    assert not any(line.startswith("-") and not line.startswith("---") for line in edit.diff.splitlines())


def test_new_ids_never_collide() -> None:
    assert new_step_ids(["s1", "s4", "s4_h1", "s4_h3"], "s4", 2) == ["s4_h2", "s4_h4"]
    once = correction_edit(DEMO, step_id="s4", meaning="insert", steps=_mappings(_click("A")), path="f.yaml").new
    twice = correction_edit(once, step_id="s4", meaning="insert", steps=_mappings(_click("B")), path="f.yaml").new
    assert [s["id"] for s in yaml.safe_load(twice)["steps"]][3:6] == ["s4_h1", "s4_h2", "s4"]


def test_a_new_secret_is_declared_in_the_flow() -> None:
    typed = Step("s1", Action("input", "{pin}"), name="Fill PIN",
                 target=ElementDescriptor(tag="input", role="textbox", name="PIN", type="password"))
    edit = correction_edit(DEMO, step_id="s2", meaning="replace", steps=_mappings(typed), secrets=("pin",),
                           path="f.yaml")
    data = yaml.safe_load(edit.new)
    assert data["secrets"] == ["pin"] and data["steps"][1]["value"] == "{pin}"


@pytest.mark.parametrize("meaning, steps, step_id, message", [
    ("done", [{"id": "s1", "action": "click"}], "s4", "edits nothing"),
    ("replace", [], "s4", "no manual action"),
    ("replace", [{"id": "s1", "action": "click"}], "nope", "no step with id 'nope'"),
])
def test_what_cannot_be_an_edit_is_refused(meaning: str, steps: list, step_id: str, message: str) -> None:
    with pytest.raises(FlowEditError, match=message):
        correction_edit(DEMO, step_id=step_id, meaning=meaning, steps=steps, path="f.yaml")


# --- the review API over a real store ---------------------------------------------------------------


def _project(tmp_path: Path) -> tuple[Path, Store]:
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "export_report.yaml").write_text(DEMO, encoding="utf-8")
    store = Store.open(tmp_path / ".steadyhand" / "store.sqlite", redactor=Redactor(["s3cret-pass"]))
    return tmp_path, store


def _add(store: Store, root: Path, **over) -> int:  # noqa: ANN003
    values = {"run_id": "r1", "project": "Demo", "flow": "export_report",
              "flow_file": str(root / "flows" / "export_report.yaml"), "step_index": 3, "step_id": "s4",
              "step_title": "Export report", "reason": "locator abstained (typed s3cret-pass)",
              "page": {"url": "/requests", "title": "Leave requests"}, "steps": _mappings(_click("Export")),
              "meaning": "replace", "continue_from": 4, "state": "offered", **over}
    return CorrectionTable(store).add(values, screenshot_png=PNG, crops={"s1": PNG}).id


def test_accept_writes_the_flow_and_its_crop_once(tmp_path: Path) -> None:
    root, store = _project(tmp_path)
    try:
        cid = _add(store, root)
        (rec,) = list_corrections(store)
        assert rec.id == cid and "s3cret" not in rec.reason  # the store redacts what it keeps
        assert store.media_path(rec.screenshot).read_bytes() == PNG and rec.crops == {"s1": f"corrections/{cid}/s1.png"}
        preview = correction_diff(store, cid)
        assert (root / "flows" / "export_report.yaml").read_text() == DEMO  # a preview writes nothing
        assert accept_correction(store, cid) == preview.diff
        flow = load_flow(root / "flows" / "export_report.yaml")
        assert [s.id for s in flow.steps] == ["s1", "s2", "s3", "s4_h1", "s5"]
        assert (root / "flows" / "export_report.crops" / "s4_h1.png").read_bytes() == PNG
        assert list_corrections(store) == [] and list_corrections(store, "accepted")[0].diff == preview.diff
        with pytest.raises(CorrectionReviewError, match="accepted"):
            accept_correction(store, cid)
    finally:
        store.close()


def test_reject_keeps_the_file_and_the_reason(tmp_path: Path) -> None:
    root, store = _project(tmp_path)
    try:
        cid = _add(store, root)
        kept = _add(store, root, meaning="done", state="kept")
        assert [c.id for c in list_corrections(store)] == [cid]
        assert {c.id for c in list_corrections(store, None)} == {cid, kept}
        assert reject_correction(store, cid, "clicked the wrong thing").review_reason == "clicked the wrong thing"
        assert (root / "flows" / "export_report.yaml").read_text() == DEMO
        with pytest.raises(CorrectionReviewError, match="rejected"):
            accept_correction(store, cid)
        with pytest.raises(CorrectionReviewError, match="no correction #99"):
            reject_correction(store, 99)
    finally:
        store.close()


def test_a_flow_that_lost_the_step_is_not_written(tmp_path: Path) -> None:
    root, store = _project(tmp_path)
    try:
        cid = _add(store, root)
        path = root / "flows" / "export_report.yaml"
        path.write_text(DEMO.replace("- id: s4\n", "- id: s4x\n"), encoding="utf-8")
        with pytest.raises(CorrectionReviewError, match="no step with id 's4'; nothing written"):
            accept_correction(store, cid)
        assert "s4_h1" not in path.read_text() and list_corrections(store)[0].state == "offered"
    finally:
        store.close()


def test_bad_fields_are_refused(tmp_path: Path) -> None:
    root, store = _project(tmp_path)
    try:
        with pytest.raises(ValueError, match="bad meaning"):
            _add(store, root, meaning="sometimes")
        with pytest.raises(ValueError, match="unknown correction field"):
            _add(store, root, colour="red")
    finally:
        store.close()
