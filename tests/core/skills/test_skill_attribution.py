"""Attribution (K3): segments where the state really changed, the window of 3, causes by rules, a model's
refinement with a fixed schema (a scripted server), which never makes things worse when it fails."""
from __future__ import annotations

import json

from core.plan.model import ModelClient, ModelConfig
from core.plan.scripted_server import Reply, ScriptedModelServer
from core.skills.attribution import attribute, refine, segments, unexpected_dialogs, window
from skill_records import CONTINUE, EMAIL, FORM, NAME, entry, record, snap


def test_segments_end_where_the_state_really_changed_and_the_window_is_three_each_side() -> None:
    traj = [entry(0, "a", "click", NAME, before="A", after="B"), entry(1, "b", "click", NAME, before="B", after="B"),
            entry(2, "c", "click", NAME, before="B", after="B"), entry(3, "d", "click", NAME, before="B", after="C"),
            entry(4, "e", "click", NAME, before="C", after="C"), entry(5, "f", "click", NAME, before="C", after="",
                                                                       status="failed")]
    assert segments(traj) == [(0, 0), (1, 3), (4, 5)]
    later = [{"action": "click", "step_id": "x"}, {"action": "input", "step_id": "y"}]
    before, after = window(traj, 5, later)
    assert [e["step_id"] for e in before] == ["c", "d", "e"] and [e["step_id"] for e in after] == ["x", "y"]


def test_causes_by_rules() -> None:
    popup = attribute(record())
    assert (popup.cause, popup.confidence, popup.unexpected) == ("unexpected_state", 0.9, ("Autofill?",))
    lost = attribute(record(error_type="locator", message="locator abstained", before=snap(FORM, sig="s")))
    assert (lost.cause, lost.confidence) == ("locator_failure", 0.75)
    model = attribute(record(error_type="verify_mismatch", message="unchanged", before=snap(FORM), source="model"))
    assert model.cause == "wrong_decision"
    traj = [entry(0, "s1", "input", NAME, before="A", after="B"),
            entry(1, "s2", "click", CONTINUE, status="failed", before="Z")]
    drift = attribute(record(error_type="verify_mismatch", message="changed unexpectedly", before=snap(FORM),
                             trajectory=traj, step_index=1, step_id="s2", state="Z"))
    assert drift.cause == "state_drift" and "with nobody acting" in drift.reasons[0]
    stuck = attribute(record(error_type="stagnation", message="3 rounds", before=snap(FORM)))
    assert stuck.cause == "wrong_decision"
    assert attribute(record()).to_mapping()["cause"] == "unexpected_state"


def test_a_dialog_the_recording_had_is_not_unexpected() -> None:
    assert unexpected_dialogs(("Confirm",), {"after_previous": {"dialog": True, "dialog_name": "Confirm"}}) == ()
    assert unexpected_dialogs(("Confirm", "Autofill?"), {"after_previous": {"dialog": True, "dialog_name": ""}}) == (
        "Autofill?",)
    assert unexpected_dialogs(("Autofill?",), {}) == ()  # nothing known of the recording: nothing called unexpected


def test_a_model_refines_the_cause_with_a_fixed_schema_and_a_failing_model_changes_nothing() -> None:
    rec = record(error_type="locator", message="locator abstained", before=snap(FORM, sig="s"))
    rules = attribute(rec)
    with ScriptedModelServer() as srv:
        srv.queue(Reply(json.dumps({"cause": "state_drift", "confidence": 0.95, "why": "the list re-rendered"})))
        client = ModelClient(ModelConfig(srv.base_url, "scripted", retries=0))
        try:
            better = refine(rules, rec, client)
            assert (better.cause, better.source) == ("state_drift", "model") and better.confidence == 0.95
            sent = json.dumps(srv.requests)
            assert "locator abstained" in sent and "Rules said: locator_failure" in sent
            srv.queue(Reply(json.dumps({"cause": "state_drift", "confidence": 0.2})))
            assert refine(rules, rec, client) == rules  # less sure than the rules: kept
            srv.queue(Reply("not json at all"), Reply("", status=500))
            assert refine(rules, rec, client) == rules
        finally:
            client.close()
    assert EMAIL  # the shared shapes are importable
