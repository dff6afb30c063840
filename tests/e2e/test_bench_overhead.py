"""`steadyhand bench overhead` on a tiny configuration, end to end in real Chromium: one demo flow, one round,
the Flask-Admin flow of `bench drift`, the demo's 'tweaked' variant for the run with heals, pages of 100 and 300
elements.

The figures depend on the machine: nothing here asserts a time or a ratio.  What is asserted: the JSON holds
every figure, each verdict is the one its figures give against its bar (recomputed here from the JSON), and the
exit code says whether the bars held.  The first run on a new machine installs Flask-Admin 1.6.1 from PyPI into
the drift cache (~/.cache/steadyhand/drift); after that the test takes about 45 s.
"""
from __future__ import annotations

import json
import math

import pytest

from core.bench.overhead import HEAL_BAR, LINEAR_BAR, LINEAR_TOLERANCE, UNCHANGED_BAR, scale_page
from core.cli import main

pytestmark = pytest.mark.browser


def test_overhead_measures_every_section_and_judges_each_bar_from_its_figures(tmp_path, capsys) -> None:
    out = tmp_path / "overhead.json"
    rc = main(["bench", "overhead", "--flows", "sort_table", "--rounds", "1", "--sizes", "100", "300",
               "--latency-ms", "100", "--json", str(out)])
    printed = capsys.readouterr().out
    doc = json.loads(out.read_text())

    # the demo flow, both sides, unchanged UI
    (flow,) = doc["flows"]
    assert flow["flow"] == "sort_table" and flow["steps"] == 5 and flow["site"] == "demo"
    assert flow["steadyhand_passed"] == 1 and flow["script_passed"] == 1  # both sides pass the unchanged app
    assert doc["steadyhand_s"] > 0 and doc["script_s"] > 0
    assert doc["ratio"] == pytest.approx(doc["steadyhand_s"] / doc["script_s"])
    # the third-party app's flow, both sides, in the same run
    app = doc["app"]
    assert app["site"].startswith("flask-admin 1.6.1") and app["flow"] == "items_crud" and app["steps"] == 8
    assert app["steadyhand_passed"] == 1 and app["script_passed"] == 1
    assert doc["app_ratio"] == pytest.approx(doc["app_steadyhand_s"] / doc["app_script_s"])
    # the run with heals: Steadyhand healed on the tweaked page, against the script on the unchanged UI
    (heal,) = doc["heal"]
    assert heal["variant"] == doc["heal_variant"] == "tweaked" and heal["flow"] == "sort_table"
    assert heal["heals"] >= 1 and heal["steadyhand_passed"] == 1
    assert heal["script_s"] > 0 and heal["script_tweaked_s"] > 0  # the script on both UIs, in the same rotation
    assert doc["heal_ratio"] == pytest.approx(doc["heal_steadyhand_s"] / doc["heal_script_s"])
    # phases (unchanged UI: the demo's 5 steps and the app's 8) beside the floor
    assert {p["phase"] for p in doc["phases"]} >= {"observe", "resolve", "act", "settle", "verify"}
    assert all(p["steps"] == 13 for p in doc["phases"] if p["phase"] in ("act", "settle", "verify"))
    assert all(p["steps"] == 5 for p in doc["heal_phases"] if p["phase"] in ("act", "settle", "verify"))
    assert doc["step_ms"]["steps"] == 13 and doc["heal_step_ms"]["steps"] == 5
    assert 0 < doc["floor_ms"][0] <= doc["floor_ms"][1]
    # the generated pages and the growth exponent (two sizes: both exponents are the one slope between them)
    small, large = doc["scale"]
    assert (small["elements"], large["elements"]) == (100, 300)
    assert small["steadyhand_passed"] == large["steadyhand_passed"] == small["rounds"] == 1
    assert large["candidates"] > small["candidates"] >= 30
    slope = math.log(large["steadyhand_ms"] / small["steadyhand_ms"]) / math.log(3)
    assert doc["scale_exponent"] == pytest.approx(slope, abs=1e-3) == doc["scale_steepest"]

    # every verdict follows from the figures above
    verdicts = {v["name"]: v for v in doc["verdicts"]}
    assert set(verdicts) == {"unchanged UI, demo", f"unchanged UI, {app['site']}", "with heals", "linear scaling"}
    demo = verdicts["unchanged UI, demo"]
    assert demo["bar"] == UNCHANGED_BAR and demo["figure"] == pytest.approx(doc["ratio"], abs=1e-3)
    assert demo["held"] == (doc["ratio"] <= UNCHANGED_BAR)
    on_app = verdicts[f"unchanged UI, {app['site']}"]
    assert on_app["figure"] == pytest.approx(doc["app_ratio"], abs=1e-3)
    assert on_app["held"] == (doc["app_ratio"] <= UNCHANGED_BAR)
    healed = verdicts["with heals"]
    assert healed["bar"] == HEAL_BAR and healed["held"] == (doc["heal_ratio"] <= HEAL_BAR)
    linear = verdicts["linear scaling"]
    assert linear["figure"] == pytest.approx(slope, abs=1e-3)
    assert linear["held"] == (slope <= LINEAR_BAR + LINEAR_TOLERANCE)
    held = all(v["held"] for v in verdicts.values())
    assert doc["bars_held"] is held
    assert rc == (0 if held else 1)

    # the text has each figure beside its bar
    for row in ("sort_table", "flask-admin 1.6.1", "observe", "settle", "whole step", "floor: bare Playwright click",
                "x floor", "ratio with heals:", "fitted exponent", "bar <= 1.25x:", "bar <= 2x:", "bar exponent <= 1:"):
        assert row in printed, row
    assert ("every measured bar held" in printed) is held


def test_overhead_help_says_the_bars_and_the_exit_codes(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["bench", "overhead", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "Exit codes: 0 no bar was missed" in text and "1 a bar was missed" in text
    assert "at most 1.25x the script on an unchanged UI, at most 2x with heals" in text
    assert "--app" in text and "--heal-variant" in text


def test_overhead_refuses_a_bad_round_count(capsys) -> None:
    assert main(["bench", "overhead", "--rounds", "0"]) == 2
    assert "--rounds must be at least 1" in capsys.readouterr().err


def test_the_generated_page_has_about_the_asked_number_of_elements() -> None:
    for n in (100, 1000, 10000):
        html = scale_page(n)
        assert abs(html.count("<") // 2 - n) <= n // 5 + 30  # open + close tags, about n elements
