"""Pure logic of heal proposals: identity keys, the in-place flow-file edit, the diff, the proposed descriptor.

No browser and no store.
"""
from __future__ import annotations

import pytest
import yaml

from core.domain import Anchor, BBox, ElementDescriptor
from core.heal import FlowEditError, identity, new_descriptor, old_key, proposal_key, set_step_target, unified_diff
from core.project import ProjectError
from core.project.loader import flow_from_mapping

OLD = ElementDescriptor(tag="button", role="button", name="Export report", text="Export report", id="export-report",
                        bbox=BBox(712.7, 106.0, 147.9, 39.8), css_path="button#export-report",
                        neighbours=("DAYS", "Save report"), crop="f.crops/s4.png",
                        anchor=Anchor("Reports", "heading", 10.0, 40.0))
NEW = ElementDescriptor(tag="button", role="button", name="Export report (E)", text="Export report (E)",
                        id="btn-export", bbox=BBox(683.5, 106.0, 177.1, 39.8), css_path="button#btn-export")

FLOW = """\
# hand-written header comment: must survive
schema_version: 1
name: f
start_url: /login   # trailing comment
steps:
- id: s1
  name: Sign in
  action: click
  selector: '#signin'
- id: s2
  action: click
  target:
    tag: button
    role: button
    name: Export report
    bbox: [712.7, 106.0, 147.9, 39.8]
    neighbours:
    - DAYS
  expect: overlay_open   # keep me
- target: {role: button, name: Save}
  id: s3
  action: click
"""


# --- identity -------------------------------------------------------------------------------


def test_a_proposal_seen_again_after_a_relayout_is_the_same_proposal() -> None:
    moved = NEW.with_(bbox=BBox(690.0, 110.0, 177.0, 40.0), css_path="div > button:nth-child(3)",
                      neighbours=("Something else",), classes=("btn", "focus"))
    assert proposal_key("f", "s4", OLD, NEW) == proposal_key("f", "s4", OLD, moved)
    assert proposal_key("f", "s4", OLD, NEW) == proposal_key("f", "s4", OLD.to_mapping(), NEW.to_mapping())


@pytest.mark.parametrize("other", [
    ("g", "s4", OLD, NEW),                                     # another flow
    ("f", "s5", OLD, NEW),                                     # another step
    ("f", "s4", OLD.with_(name="Export"), NEW),                # another old descriptor
    ("f", "s4", OLD, NEW.with_(name="Export report (X)")),     # another new element
    ("f", "s4", OLD, NEW.with_(role="link", tag="a")),         # another role
])
def test_flow_step_old_and_new_identity_each_make_another_proposal(other) -> None:
    assert proposal_key("f", "s4", OLD, NEW) != proposal_key(*other)


def test_the_old_key_finds_every_heal_of_a_step_whatever_its_new_element() -> None:
    assert old_key("f", "s4", OLD) == old_key("f", "s4", OLD.with_(bbox=None))
    assert old_key("f", "s4", OLD) != old_key("f", "s4", OLD.with_(text="Export"))
    assert identity(OLD) == {"tag": "button", "role": "button", "name": "Export report", "text": "Export report",
                             "id": "export-report"}


def test_the_proposed_descriptor_keeps_the_recorded_crop_and_anchor_and_escapes_braces() -> None:
    acted = NEW.with_(name="Total {n}", text="Total {n}")
    new = new_descriptor(OLD, acted)
    assert new.crop == OLD.crop and new.anchor == OLD.anchor
    assert new.name == "Total {{n}}"  # what the page showed stays literal text, not a parameter
    assert new.id == "btn-export" and new.bbox == NEW.bbox


# --- the flow file ----------------------------------------------------------------------------


def _changed_lines(old: str, new: str) -> tuple[list[str], list[str]]:
    diff = unified_diff(old, new, "flows/f.yaml").splitlines()
    removed = [line[1:] for line in diff[2:] if line.startswith("-")]
    added = [line[1:] for line in diff[2:] if line.startswith("+")]
    return removed, added


def test_replacing_a_target_changes_only_its_lines() -> None:
    out = set_step_target(FLOW, "s2", NEW.to_mapping(), path="flows/f.yaml")
    data = yaml.safe_load(out)
    assert data["steps"][1]["target"] == yaml.safe_load(yaml.safe_dump(NEW.to_mapping()))
    assert data["steps"][0] == yaml.safe_load(FLOW)["steps"][0]
    assert "# hand-written header comment: must survive" in out and "# trailing comment" in out
    assert "expect: overlay_open   # keep me" in out
    removed, added = _changed_lines(FLOW, out)
    assert all(line.startswith("    ") or line == "  target:" for line in removed + added)
    assert "    name: Export report (E)" in added and "    name: Export report" in removed
    old_lines, new_lines = FLOW.splitlines(), out.splitlines()
    assert old_lines[:12] == new_lines[:12]  # everything above s2's target, byte for byte
    assert old_lines[-4:] == new_lines[-4:]  # and everything after it
    flow_from_mapping(data, "flows/f.yaml")


def test_a_selector_only_step_gets_its_target_right_after_the_selector() -> None:
    out = set_step_target(FLOW, "s1", {"tag": "button", "role": "button", "name": "Sign in"}, path="f.yaml")
    lines = out.splitlines()
    at = lines.index("  selector: '#signin'")
    assert lines[at + 1:at + 5] == ["  target:", "    tag: button", "    role: button", "    name: Sign in"]
    removed, added = _changed_lines(FLOW, out)
    assert removed == [] and len(added) == 4


def test_a_target_that_is_the_steps_first_entry_keeps_the_list_dash() -> None:
    out = set_step_target(FLOW, "s3", {"role": "button", "name": "Save draft"}, path="f.yaml")
    assert "- target:\n    role: button\n    name: Save draft\n  id: s3\n" in out
    assert yaml.safe_load(out)["steps"][2] == {"target": {"role": "button", "name": "Save draft"}, "id": "s3",
                                               "action": "click"}


def test_a_flow_style_step_is_rewritten_from_its_data_and_still_loads() -> None:
    text = "name: f\nstart_url: /\nsteps:\n- {id: s1, action: click, selector: '#go'}\n"
    out = set_step_target(text, "s1", {"role": "button", "name": "Go"}, path="f.yaml")
    flow = flow_from_mapping(yaml.safe_load(out), "f.yaml")
    assert flow.steps[0].target.name == "Go" and flow.steps[0].selector == "#go"


def test_an_unknown_step_or_a_file_that_is_not_a_flow_is_refused() -> None:
    with pytest.raises(FlowEditError, match="no step with id 's9'"):
        set_step_target(FLOW, "s9", {"role": "button"}, path="f.yaml")
    with pytest.raises(FlowEditError, match="not a flow file"):
        set_step_target("- just a list\n", "s1", {"role": "button"}, path="f.yaml")


def test_an_edit_whose_result_would_not_load_is_refused() -> None:
    with pytest.raises(ProjectError):
        set_step_target(FLOW, "s2", {"role": "button", "bbox": "not a box"}, path="f.yaml")


def test_the_diff_is_a_unified_diff_labelled_with_the_file() -> None:
    out = set_step_target(FLOW, "s2", NEW.to_mapping(), path="f.yaml")
    diff = unified_diff(FLOW, out, "flows/f.yaml")
    assert diff.startswith("--- a/flows/f.yaml\n+++ b/flows/f.yaml\n@@ ")
    assert unified_diff(FLOW, FLOW, "flows/f.yaml") == ""


# --- what a heal line says changed ------------------------------------------------------------


def test_a_heal_line_names_the_fields_that_changed_when_the_label_reads_the_same() -> None:
    from core.heal.identity import change_label

    old = {"tag": "button", "role": "button", "name": "Sign in", "id": "login-btn", "test_id": "login"}
    assert change_label(old, {**old, "id": "signin"}) == "button 'Sign in' (id login-btn -> signin)"
    assert change_label(old, {**old, "test_id": ""}) == "button 'Sign in' (test id login -> (none))"
    assert change_label(old, {**old, "label": "Sign in now"}) == "button 'Sign in' (label (none) -> 'Sign in now')"
    many = {**old, "id": "a", "test_id": "b", "text": "Sign in", "title": "t", "type": "submit"}
    assert change_label(old, many) == ("button 'Sign in' (id login-btn -> a; test id login -> b; "
                                       "text (none) -> 'Sign in'; 2 more)")
    assert change_label(old, {**old, "css_path": "div > button"}) == "button 'Sign in' (no field it is named by changed)"
    # another label: both said, as before
    assert change_label(old, {**old, "name": "Log in"}) == "button 'Sign in' -> button 'Log in'"
