"""`steadyhand bench overhead` on one flow and one generated page: the command runs and its tables have their rows.

The figures depend on the machine; nothing here asserts a time or a ratio.
"""
from __future__ import annotations

import json

import pytest

from core.bench.overhead import scale_page
from core.cli import main

pytestmark = pytest.mark.browser


def test_overhead_prints_ratio_phases_floor_and_scale(tmp_path, capsys) -> None:
    out = tmp_path / "overhead.json"
    rc = main(["bench", "overhead", "--flows", "sort_table", "--rounds", "1", "--sizes", "100",
               "--latency-ms", "100", "--json", str(out)])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "ratio (Steadyhand / script, all runs):" in printed
    for row in ("sort_table", "observe", "settle", "verify", "whole step", "floor: bare Playwright click"):
        assert row in printed, row
    doc = json.loads(out.read_text())
    (flow,) = doc["flows"]
    assert flow["flow"] == "sort_table" and flow["steps"] == 5
    assert flow["steadyhand_passed"] == 1 and flow["script_passed"] == 1  # both sides pass the unchanged app
    assert doc["steadyhand_s"] > 0 and doc["script_s"] > 0 and doc["ratio"] is not None
    assert {p["phase"] for p in doc["phases"]} >= {"observe", "resolve", "act", "settle", "verify"}
    assert all(p["steps"] == 5 for p in doc["phases"] if p["phase"] in ("act", "settle", "verify"))
    assert doc["floor_ms"][0] > 0
    (scale,) = doc["scale"]
    assert scale["elements"] == 100 and scale["passed"] and scale["candidates"] >= 30


def test_overhead_refuses_a_bad_round_count(capsys) -> None:
    assert main(["bench", "overhead", "--rounds", "0"]) == 2
    assert "--rounds must be at least 1" in capsys.readouterr().err


def test_the_generated_page_has_about_the_asked_number_of_elements() -> None:
    for n in (100, 1000, 10000):
        html = scale_page(n)
        assert abs(html.count("<") // 2 - n) <= n // 5 + 30  # open + close tags, about n elements
