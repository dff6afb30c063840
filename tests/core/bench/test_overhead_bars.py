"""The verdicts of `bench overhead` (pure logic): each bar follows its figure, and the growth exponents.

The end-to-end run is tests/e2e/test_bench_overhead.py; here hand-made reports move one figure across its bar.
"""
from __future__ import annotations

import pytest

from core.bench.overhead import (
    HEAL_BAR, LINEAR_TOLERANCE, UNCHANGED_BAR, FlowRow, HealRow, OverheadReport, ScaleRow, judge_bars,
    scaling_exponents,
)


def _report(*, demo_ratio: float = 1.1, app_ratio: float | None = 1.1, heal_ratio: float | None = 1.5,
            heals: int = 2, sh_passed: int = 1, heal_passed: int = 1,
            scale: tuple[tuple[int, float], ...] = ((100, 100.0), (1000, 110.0), (10000, 200.0))) -> OverheadReport:
    r = OverheadReport(rounds=1, latency_ms=100)
    r.flows = [FlowRow("sort_table", 5, demo_ratio, 1.0, sh_passed, 1, 1)]
    r.steadyhand_s, r.script_s = demo_ratio, 1.0
    if app_ratio is not None:
        r.app = FlowRow("items_crud", 8, app_ratio, 1.0, 1, 1, 1, "flask-admin 1.6.1-bootstrap3")
        r.app_steadyhand_s, r.app_script_s = app_ratio, 1.0
    if heal_ratio is not None:
        r.heal_variant = "tweaked"
        r.heal = [HealRow("sort_table", "tweaked", 5, heal_ratio, 1.0, 5.3, heal_passed, 0, heals, 1)]
        r.heal_steadyhand_s, r.heal_script_s = heal_ratio, 1.0
    r.scale = [ScaleRow(n, n // 3, ms, ms, 1.0, 50.0, True, 1, 1, 1) for n, ms in scale]
    r.scale_exponent, r.scale_steepest = scaling_exponents(scale)
    r.verdicts = judge_bars(r)
    return r


def _held(report: OverheadReport) -> dict[str, bool | None]:
    return {v.name: v.held for v in report.verdicts}


def test_every_bar_holds_on_figures_under_it() -> None:
    r = _report()
    assert _held(r) == {"unchanged UI, demo": True, "unchanged UI, flask-admin 1.6.1-bootstrap3": True,
                        "with heals": True, "linear scaling": True}
    assert r.bars_held and r.to_json_dict()["bars_held"] is True


@pytest.mark.parametrize("ratio, held", [(UNCHANGED_BAR - 0.01, True), (UNCHANGED_BAR, True),
                                         (UNCHANGED_BAR + 0.01, False), (2.9, False)])
def test_the_unchanged_ui_bar_follows_the_ratio(ratio: float, held: bool) -> None:
    demo = _report(demo_ratio=ratio)
    assert _held(demo)["unchanged UI, demo"] is held and demo.bars_held is held
    app = _report(app_ratio=ratio)
    assert _held(app)["unchanged UI, flask-admin 1.6.1-bootstrap3"] is held and app.bars_held is held


def test_a_faster_failure_is_no_saving() -> None:
    r = _report(demo_ratio=0.8, sh_passed=0)
    (demo,) = [v for v in r.verdicts if v.name == "unchanged UI, demo"]
    assert demo.held is False and "failed where the script passed" in demo.why and not r.bars_held


@pytest.mark.parametrize("ratio, heals, passed, held", [(HEAL_BAR - 0.1, 2, 1, True), (HEAL_BAR + 0.1, 2, 1, False),
                                                       (1.2, 0, 1, False), (1.2, 2, 0, False)])
def test_the_heal_bar_needs_a_passing_run_that_healed_under_the_bar(ratio: float, heals: int, passed: int,
                                                                     held: bool) -> None:
    r = _report(heal_ratio=ratio, heals=heals, heal_passed=passed)
    assert _held(r)["with heals"] is held and r.bars_held is held


def test_sections_not_run_are_not_measured_and_miss_no_bar() -> None:
    r = _report(app_ratio=None, heal_ratio=None, scale=((100, 100.0),))
    held = _held(r)
    assert held["unchanged UI, third-party app"] is None and held["with heals"] is None
    assert held["linear scaling"] is None and r.bars_held


def test_growth_faster_than_linear_misses_the_bar() -> None:
    quadratic = tuple((n, 50.0 + n * n / 10_000) for n in (100, 1000, 10000))
    r = _report(scale=quadratic)
    (linear,) = [v for v in r.verdicts if v.name == "linear scaling"]
    assert linear.held is False and linear.figure is not None and linear.figure > 1 + LINEAR_TOLERANCE


def test_scaling_exponents() -> None:
    # cost = 300 ms + 0.03 ms an element: linear above a fixed part, exponents under 1
    fitted, steepest = scaling_exponents([(n, 300 + 0.03 * n) for n in (100, 1000, 10000)])
    assert fitted is not None and steepest is not None and 0 < fitted < steepest < 1
    assert scaling_exponents([(100, 1.0), (1000, 10.0), (10000, 100.0)]) == (1.0, 1.0)  # proportional
    assert scaling_exponents([(100, 1.0), (1000, 100.0), (10000, 10000.0)]) == (2.0, 2.0)  # quadratic
    assert scaling_exponents([(1000, 10.0), (100, 1.0)]) == (1.0, 1.0)  # order does not matter
    assert scaling_exponents([(100, 5.0)]) == (None, None)
    assert scaling_exponents([(100, 5.0), (100, 6.0)]) == (None, None)
    assert scaling_exponents([(100, 0.0), (1000, 6.0)]) == (None, None)


def test_a_failed_steadyhand_run_on_a_page_misses_the_scaling_bar_and_a_failed_script_does_not() -> None:
    r = _report()
    r.scale[-1] = ScaleRow(10000, 3337, 200.0, 200.0, 1.0, 50.0, False, 1, 0, 1, "script: TimeoutError: ...")
    r.verdicts = judge_bars(r)
    assert _held(r)["linear scaling"] is True
    r.scale[-1] = ScaleRow(10000, 3337, 200.0, 200.0, 1.0, 50.0, False, 0, 1, 1, "steadyhand escalated: ...")
    r.verdicts = judge_bars(r)
    assert _held(r)["linear scaling"] is False and not r.bars_held
