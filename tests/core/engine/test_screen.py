"""The R1 run glue on a scripted page: when a previous after-observation may stand as the next before.

The page token and page facts that the real page returns from
:data:`core.engine.screen.TOKEN_JS` / :data:`FACTS_JS` are scripted here
(:class:`~core.perception.fake.FakeDriver` ``scripts``), so every "something
happened" signal is tested on its own.
"""
from __future__ import annotations

from typing import Any

import pytest

from core.domain import Action, BBox, ElementDescriptor, Flow, RunResult, Step
from core.domain.change import BaselineAlert, ChangeReport, ElementChange
from core.engine.events import BaselineAlertRaised, FlowFinished, ObservationMade, ScreenChanged, StepFinished, TargetResolved
from core.engine.executor import FlowExecutor
from core.engine.screen import FACTS_JS, TOKEN_JS, ChangeLines, change_line
from core.perception.fake import FakeDriver, FakePage, set_page


class Page:
    """What the scripted page reports: its token fields and facts."""

    def __init__(self, driver: FakeDriver) -> None:
        self.d = driver
        self.events = 0
        self.frames = 0
        self.animations = 0
        self.shadow = 0
        self.extra_mutations_on_observe = 0
        self.origin = 1764000000000.5  # performance.timeOrigin of the document (ms since the epoch)

    def token(self, _arg: Any = None) -> list:
        return [self.d.url, self.d.mutations, self.events, 0, 0, self.frames, self.animations, "complete",
                self.origin]

    def facts(self, _arg: Any = None) -> dict:
        self.d.mutations += self.extra_mutations_on_observe  # the page changed while it was observed
        return {"heading": "Form", "headings": [], "landmarks": [], "shadow": self.shadow, "editable": 0,
                "token": self.token()}


def _fields() -> FakePage:
    return FakePage([{"id": f"f{i}", "role": "textbox", "label": f"Field {i}"} for i in range(3)], title="Form")


def _flow() -> Flow:
    return Flow("fill", "/form", tuple(
        Step(f"s{i}", Action("input", f"v{i}"), target=ElementDescriptor(tag="input", role="textbox",
                                                                       name=f"Field {i}", label=f"Field {i}"))
        for i in range(3)))


def _run(setup=lambda page: None, on_event=lambda e, page: None, runs: int = 1):
    fake = FakeDriver(pages={"/form": _fields()})
    page = Page(fake)
    fake.scripts = {TOKEN_JS: page.token, FACTS_JS: page.facts}
    setup(page)
    events: list = []

    def emit(e: Any) -> None:
        events.append(e)
        on_event(e, page)

    ex = FlowExecutor(fake, emit=emit, screenshots=False)
    results = [ex.run_flow(_flow(), params={}) for _ in range(runs)]
    return results[-1], events


def _reused(events) -> dict[int, bool]:
    return {e.index: e.reused for e in events if isinstance(e, ObservationMade) and e.when == "before"}


def test_nothing_happened_between_steps_so_each_before_is_the_previous_after():
    result, events = _run()
    assert result.status == "passed"
    assert _reused(events) == {0: False, 1: True, 2: True}
    afters = {e.index: e.observation for e in events if isinstance(e, ObservationMade) and e.when == "after"}
    befores = {e.index: e.observation for e in events if isinstance(e, ObservationMade) and e.when == "before"}
    assert befores[1] is afters[0] and befores[2] is afters[1]


def test_an_event_on_the_page_between_two_steps_means_observe_again():
    def bump(e, page):
        if isinstance(e, StepFinished) and e.index == 0:
            page.events += 1  # e.g. the user scrolled or typed in the live view

    _, events = _run(on_event=bump)
    assert _reused(events) == {0: False, 1: False, 2: True}


def test_a_reload_of_the_same_url_between_two_steps_is_another_document():
    def reload(e, page):
        if isinstance(e, StepFinished) and e.index == 1:
            page.origin += 2500.0  # same URL, same mutation count, new document

    _, events = _run(on_event=reload)
    assert _reused(events) == {0: False, 1: True, 2: False}


@pytest.mark.parametrize("signal", ["frames", "animations", "shadow", "extra_mutations_on_observe"])
def test_pages_whose_changes_the_token_cannot_see_are_always_observed_again(signal):
    _, events = _run(setup=lambda page: setattr(page, signal, 1))
    assert _reused(events) == {0: False, 1: False, 2: False}


def test_a_page_that_breaks_our_read_is_observed_every_time():
    fake = FakeDriver(pages={"/form": _fields()})  # no scripts: evaluate raises
    events: list = []
    result = FlowExecutor(fake, emit=events.append, screenshots=False).run_flow(_flow(), params={})
    assert result.status == "passed" and _reused(events) == {0: False, 1: False, 2: False}


def test_second_run_of_an_unchanged_page_resolves_by_the_fast_path_alone():
    _, events = _run(runs=2)  # one executor: the first run's baselines stay in memory without a store
    resolved = [e.resolution for e in events if isinstance(e, TargetResolved)]
    assert [r.strategy for r in resolved[-3:]] == ["exact"] * 3
    assert all(r.reason.startswith("fast path, screen unchanged since its baseline") for r in resolved[-3:])
    assert not [e for e in events if isinstance(e, ScreenChanged)]


def test_change_lines_for_the_command_line():
    report = ChangeReport("/login | Sign in |  | ", "changed", 0.9, False,
                          (ElementChange("moved", "button|#go", "button", "Sign in", "Sign in", 28, 0, 28),),
                          28.0, ("key elements: 1 moved",))
    line = change_line(ScreenChanged("r", "login", 0, report))
    assert line == ("  login step 1: screen changed since its baseline: key elements: 1 moved; "
                    "button 'Sign in' moved by 28 px (dx +28, dy +0)")
    lines = ChangeLines()
    assert lines(ScreenChanged("r", "login", 0, report)) == [line]
    assert lines(BaselineAlertRaised("r", BaselineAlert("login", "s1", report.screen_key, report))) == []
    assert lines(BaselineAlertRaised("r", BaselineAlert("login", "s2", report.screen_key, report))) == []
    (summary,) = lines(FlowFinished("r", RunResult("r", "login", "passed", (), 0, 0, 1.0)))
    assert summary == ("  login: 2 baselines kept and flagged, changed more than a passing run refreshes (steps "
                       "'s1', 's2'; `steadyhand baselines reset` forgets them after a real change)")
    alert = change_line(BaselineAlertRaised("r", BaselineAlert("login", "s1", report.screen_key, report)))
    assert alert is not None and "alert raised" in alert and "s1" in alert
    assert change_line(object()) is None


def test_when_exact_alone_does_not_find_the_target_on_an_unchanged_screen_the_full_chain_runs():
    def page(y: float) -> FakePage:
        return FakePage([{"id": "go", "role": "button", "text": "Go", "bbox": [10, y, 100, 30]},
                         {"id": "other", "role": "button", "text": "Cancel", "bbox": [300, 400, 100, 30]}],
                        title="Form")

    flow = Flow("go", "/form", (Step("s1", Action("click"), target=ElementDescriptor(
        tag="button", role="button", name="Go", text="Go", bbox=BBox(10, 100, 100, 30))),))
    fake = FakeDriver(pages={"/form": page(100)}, reactions={("/form", "go", "click"): set_page(text="Saved")})
    events: list = []
    ex = FlowExecutor(fake, emit=events.append, screenshots=False)
    assert ex.run_flow(flow, params={}).status == "passed"
    fake.pages = {"/form": page(112)}  # 12 px: within R1's 20 px, beyond EXACT's 5 px (R2)
    events.clear()
    assert ex.run_flow(flow, params={}).status == "passed"
    (res,) = [e.resolution for e in events if isinstance(e, TargetResolved)]
    assert not [e for e in events if isinstance(e, ScreenChanged)]
    assert not res.reason.startswith("fast path") and res.ref is not None and res.strategy != "exact"
