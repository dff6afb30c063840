"""The flow file's recovery fields: after-state, declared reversibility and compensations (R3, S5, S6)."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from core.domain import AfterState
from core.project.loader import ProjectError, flow_from_mapping, flow_to_mapping, load_flow, save_flow

FLOW = {
    "schema_version": 1, "name": "orders", "start_url": "/orders",
    "steps": [
        {"id": "s1", "action": "click", "selector": "#archive",
         "after": {"url_pattern": "/orders/{n}", "heading": "Order", "dialog": False},
         "compensations": [{"name": "Unarchive", "action": "click", "selector": "#unarchive"},
                           {"action": "press", "value": "Escape"}]},
        {"id": "s2", "action": "click", "selector": "#search", "reversible": True},
        {"id": "s3", "action": "click", "selector": "#pay", "reversible": False},
        {"id": "s4", "action": "click", "selector": "#plain"},
    ],
}


def test_the_new_fields_load_and_round_trip(tmp_path: Path) -> None:
    flow = flow_from_mapping(FLOW, "orders.yaml")
    s1, s2, s3, s4 = flow.steps
    assert s1.recorded is not None and s1.recorded.after == AfterState(url_pattern="/orders/{n}", heading="Order",
                                                                       dialog=False)
    assert [c.action.kind for c in s1.compensations] == ["click", "press"] and s1.compensations[0].id == "s1.c1"
    assert (s2.reversible, s2.reversible_declared) == (True, True)
    assert (s3.reversible, s3.reversible_declared) == (False, True)
    assert (s4.reversible, s4.reversible_declared) == (True, False)  # the action's default; replay may infer
    path = save_flow(flow, tmp_path / "orders.yaml")
    again = load_flow(path)
    assert again.steps == flow.steps
    assert flow_to_mapping(again) == flow_to_mapping(flow)
    written = yaml.safe_load(path.read_text())["steps"]
    assert written[0]["after"] == {"url_pattern": "/orders/{n}", "heading": "Order", "dialog": False}
    assert "reversible" not in written[3] and written[1]["reversible"] is True


def test_a_compensation_outside_the_action_space_or_without_target_is_refused() -> None:
    bad = {**FLOW, "steps": [{"id": "s1", "action": "click", "selector": "#x",
                              "compensations": [{"action": "teleport"}]}]}
    with pytest.raises(ProjectError, match="teleport"):
        flow_from_mapping(bad, "bad.yaml")
    bad = {**FLOW, "steps": [{"id": "s1", "action": "click", "selector": "#x", "compensations": [{"action": "click"}]}]}
    with pytest.raises(ProjectError, match="compensation action 'click' needs a 'selector' or a 'target'"):
        flow_from_mapping(bad, "bad.yaml")
