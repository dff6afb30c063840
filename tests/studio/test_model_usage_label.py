"""The status bar's model label: hidden without a model, the run's figures and the judge alarm with one."""
from __future__ import annotations

from core.engine.events import ModelUsage, StepStarted
from studio.theme import STATUS_COLORS
from studio.views.model_usage import ModelUsageLabel


def test_label_shows_the_runs_figures_and_the_alarm(qtbot) -> None:  # noqa: ANN001
    lab = ModelUsageLabel()
    qtbot.addWidget(lab)
    assert lab.isHidden() and lab.text() == ""
    lab.apply(StepStarted("r1", "f", 0, "t", 1))  # other events are ignored
    assert lab.isHidden()
    lab.apply(ModelUsage("r1", "f", "scripted", {"calls": 2, "cache_hits": 1, "rule_decisions": 0,
                                                 "prompt_tokens": 2400, "completion_tokens": 60, "latency_ms": 321.4},
                         0.0, False))
    assert not lab.isHidden()
    assert lab.text() == "Model scripted \u00b7 2 calls \u00b7 1 cached \u00b7 0 by rules \u00b7 2.4k+60 tokens \u00b7 321 ms"
    lab.apply(ModelUsage("r2", "f", "scripted", {"calls": 1}, 0.5, True))
    assert "judged 50% of goals (above 30%)" in lab.text() and STATUS_COLORS["escalated"] in lab.styleSheet()
    lab.reset()
    assert lab.isHidden()


def test_main_window_shows_it_in_the_status_bar(qtbot) -> None:  # noqa: ANN001
    from studio.preview import build_panel

    w = build_panel("window")
    qtbot.addWidget(w)
    assert w.model_usage.isHidden()
    w._on_event(ModelUsage("r1", "f", "scripted", {"calls": 3}, 0.0, False))
    assert not w.model_usage.isHidden() and "3 calls" in w.model_usage.text()
