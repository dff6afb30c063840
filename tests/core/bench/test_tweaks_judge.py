"""Pure logic of the tweak bench: what the demo server's logs say about one run."""
from __future__ import annotations

from core.bench.tweaks import DEFAULT_VARIANTS, FLOW_EXPECTED, TweaksReport, FlowRun, judge
from core.sites.demo import VARIANTS


def _act(gt: str, kind: str = "click", source: str = "page") -> dict:
    return {"gt": gt, "kind": kind, "source": source}


def _write(op: str, ok: bool = True, duplicate: bool = False) -> dict:
    return {"op": op, "ok": ok, "duplicate": duplicate}


def test_a_clean_export_run() -> None:
    acts = [_act("login.username", "input-commit"), _act("login.submit"), _act("login.form", "submit"),
            _act("api.login", "login", "server"), _act("popup.close"), _act("requests.export"),
            _act("dialog.export.confirm"), _act("api.export", "export", "server")]
    j = judge("export_report", acts, [])
    assert j["clean"] and j["wrong_clicks"] == 0 and j["wrong_activations"] == []
    assert j["activations_by_gt"]["requests.export"] == 1 and "api.login" not in j["activations_by_gt"]


def test_wrong_clicks_double_and_unexpected_writes_come_from_the_logs() -> None:
    acts = [_act("login.submit"), _act("popup.tour"), _act("requests.save"), _act("new.notify", "change")]
    writes = [_write("save_report")]
    j = judge("export_report", acts, writes)
    assert j["wrong_activations"] == ["popup.tour", "requests.save", "new.notify"]
    assert j["wrong_clicks"] == 2  # the checkbox change is a wrong activation, not a click
    assert j["unexpected_writes"] == {"save_report": 1} and not j["clean"]
    j = judge("leave_request", [_act("new.submit")] * 2,
              [_write("create_request"), _write("create_request", duplicate=True)])
    assert j["double_writes"] == 1 and j["unexpected_writes"] == {"create_request": 1}
    j = judge("leave_request", [_act("new.submit")], [_write("create_request", ok=False)])
    assert j["missing_writes"] == {"create_request": 1} and not j["clean"]


def test_passed_needs_the_log_to_agree_and_the_overhead_uses_the_unchanged_app() -> None:
    rep = TweaksReport(latency_ms=200, variants=["baseline", "popup"], flows=["sort_table"])
    rep.runs = [
        FlowRun("baseline", "sort_table", "steadyhand", "passed", True, True, 3.0, 5, 5),
        FlowRun("baseline", "sort_table", "script", "passed", True, True, 2.0, 0, 5),
        FlowRun("popup", "sort_table", "steadyhand", "passed", False, True, 4.0, 5, 5, wrong_clicks=1,
                wrong_activations=["popup.tour"]),
        FlowRun("popup", "sort_table", "script", "failed", False, False, 6.0, 0, 5),
    ]
    doc = rep.to_json_dict()
    assert doc["overhead_ratio"] == 1.5
    popup = doc["variants"][1]
    assert (popup["variant"], popup["passed"], popup["reported_passed"], popup["wrong_clicks"]) == ("popup", 0, 1, 1)
    assert [b["passed"] for b in doc["baseline"]] == [1, 0]


def test_every_flow_has_expected_ids_and_the_default_variants_skip_the_alias() -> None:
    assert set(FLOW_EXPECTED) == {"login_lockout", "leave_request", "export_report", "sort_table"}
    assert "tweaked" not in DEFAULT_VARIANTS and set(DEFAULT_VARIANTS) == set(VARIANTS) - {"tweaked"}
