"""`steadyhand bench tweaks` on one variant and one flow: the JSON's shape, and counts from the activation log."""
from __future__ import annotations

import json

import pytest

from core.cli import main

pytestmark = pytest.mark.browser


def test_bench_on_one_variant_and_one_flow(tmp_path, capsys) -> None:
    out = tmp_path / "tweaks.json"
    rc = main(["bench", "tweaks", "--variants", "suffix", "--flows", "export_report", "--latency-ms", "100",
               "--json", str(out)])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "latency 100 ms on both sides" in printed and "suffix" in printed
    doc = json.loads(out.read_text())
    assert set(doc) >= {"variants", "baseline", "overhead_ratio", "latency_ms"}
    assert doc["overhead_ratio"] is None  # no run on the unchanged app, no ratio
    (v,) = doc["variants"]
    assert set(v) >= {"variant", "flows", "passed", "wrong_clicks", "abstained", "heals_by_strategy",
                      "double_writes", "invalid_ratio", "steps", "seconds"}
    assert (v["variant"], v["flows"]) == ("suffix", 1)
    (b,) = doc["baseline"]
    assert set(b) >= {"variant", "passed"} and b["variant"] == "suffix"
    (run,) = v["runs"]
    # counts come from the demo server's activation log of that run
    acts = run["activations_by_gt"]
    assert acts.get("login.submit", 0) >= 1
    if run["reported_passed"]:
        assert acts.get("requests.export") == 1 and acts.get("dialog.export.confirm") == 1
    assert v["wrong_clicks"] == run["wrong_clicks"] <= len(run["wrong_activations"])
    assert v["passed"] == int(run["reported_passed"] and not run["wrong_activations"] and not run["double_writes"])
    # the plain script's codegen locator for "User name" cannot find "User’s name": it never signs in
    (script,) = b["runs"]
    assert script["reported_passed"] is False and b["passed"] == 0
    assert "login.submit" not in script["activations_by_gt"] and "User name" in script["reason"]


def test_bench_refuses_an_unknown_variant(capsys) -> None:
    assert main(["bench", "tweaks", "--variants", "sideways"]) == 2
    assert "unknown variant 'sideways'" in capsys.readouterr().err
