"""Accepting a heal removes the step's stale selector with the old descriptor (in place, comments kept)."""
from __future__ import annotations

import yaml

from core.heal import set_step_target, unified_diff
from core.project.loader import flow_from_mapping

FLOW = """\
# header comment
schema_version: 1
name: f
start_url: /login
steps:
- id: s1
  name: Sign in
  action: click
  selector: '#signin'   # the author's
  target:
    tag: button
    role: button
    name: Sign in
    id: signin
  expect: navigation   # keep me
- selector: '#go'
  id: s2
  action: click
  target: {role: button, name: Go}
"""
NEW = {"tag": "button", "role": "button", "name": "Sign in", "id": "btn-login"}


def test_the_selector_goes_with_the_old_target_and_nothing_else_changes() -> None:
    out = set_step_target(FLOW, "s1", NEW, path="flows/f.yaml", drop_selector=True)
    step = yaml.safe_load(out)["steps"][0]
    assert "selector" not in step and step["target"] == NEW and step["expect"] == "navigation"
    diff = unified_diff(FLOW, out, "flows/f.yaml").splitlines()
    removed = [line[1:] for line in diff if line.startswith("-") and not line.startswith("---")]
    assert "  selector: '#signin'   # the author's" in removed and "    id: signin" in removed
    assert "# header comment" in out and "  expect: navigation   # keep me" in out
    assert yaml.safe_load(out)["steps"][1] == yaml.safe_load(FLOW)["steps"][1]
    assert flow_from_mapping(yaml.safe_load(out), "flows/f.yaml").steps[0].selector == ""


def test_kept_by_default_and_a_selector_carrying_the_list_dash_is_rewritten_from_data() -> None:
    kept = set_step_target(FLOW, "s1", NEW, path="f.yaml")
    assert yaml.safe_load(kept)["steps"][0]["selector"] == "#signin"
    out = set_step_target(FLOW, "s2", {"role": "button", "name": "Go now"}, path="f.yaml", drop_selector=True)
    assert yaml.safe_load(out)["steps"][1] == {"id": "s2", "action": "click",
                                               "target": {"role": "button", "name": "Go now"}}
    assert flow_from_mapping(yaml.safe_load(out), "f.yaml").steps[1].target.name == "Go now"


def test_a_step_without_a_selector_is_left_alone() -> None:
    text = FLOW.replace("  selector: '#signin'   # the author's\n", "")
    assert set_step_target(text, "s1", NEW, path="f.yaml", drop_selector=True) == \
        set_step_target(text, "s1", NEW, path="f.yaml")
