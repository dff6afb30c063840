"""The engine stops on its own in real Chromium, on pages that imitate third-party markup (Bootstrap, Django
admin, Material, datasette): the same failure repeating forever opens the breaker (kind 8, R4), a button that
does nothing or toggles forever is a loop (P8) or stagnation (K2), and settle waits learn from the page (S7).
Every run ends with a reason; none hangs."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.domain import Action, ElementDescriptor, EngineSettings, Escalation, Flow, Step, WaitSettings
from core.engine.control import Answer, HeadlessControl
from core.engine.events import EscalationRaised, StepStarted, VerdictReached
from core.engine.executor import FlowExecutor
from core.perception.driver import PlaywrightDriver
from core.recover.waits import WaitLearner
from core.sites.server import StaticSite
from browser_fixtures import open_driver

FIXTURES = Path(__file__).parent / "fixtures" / "stops"

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def site():
    s = StaticSite(FIXTURES)
    s.start()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def driver(site):
    with open_driver(site.base_url) as d:
        yield d


class Answers(HeadlessControl):
    """Answers escalations by kind (else ``default``) and remembers them."""

    def __init__(self, default: str = "stop", **by_kind: str) -> None:
        self.default, self.by_kind = default, by_kind
        self.asked: list[Escalation] = []

    def escalate(self, escalation: Escalation) -> Answer:
        self.asked.append(escalation)
        return Answer(self.by_kind.get(escalation.kind, self.default))  # type: ignore[arg-type]


def run(driver: PlaywrightDriver, page: str, steps: list[Step], *, control: Any = None, retries: int = 2,
        learner: WaitLearner | None = None) -> tuple[Any, list[Any]]:
    events: list[Any] = []
    ex = FlowExecutor(driver, emit=events.append, control=control or HeadlessControl(), screenshots=False,
                      settings=EngineSettings(waits=WaitSettings(retries=retries, retry_delay_ms=0)),
                      wait_learner=learner)
    return ex.run_flow(Flow("f", page, tuple(steps)), params={}), events


def button(sid: str, name: str, role: str = "button", **kw: Any) -> Step:
    return Step(sid, Action("click"), target=ElementDescriptor(tag="button", role=role, name=name, text=name), **kw)


def submit(sid: str, value: str) -> Step:
    return Step(sid, Action("click"), target=ElementDescriptor(tag="input", role="button", name=value, type="submit",
                                                               name_attr={"Save": "_save"}.get(value, "")))


# --- kind 8 -------------------------------------------------------------------------------------


def test_a_save_that_does_nothing_opens_the_breaker_within_a_step_and_headless_ends_with_why(driver) -> None:
    result, events = run(driver, "/dead.html", [button("s1", "Save changes")], retries=10)
    attempts = [e.attempt for e in events if isinstance(e, StepStarted)]
    assert attempts == [1, 2, 3]  # 10 retries allowed; the breaker (and K2) stopped it at 3
    (esc,) = [e for e in events if isinstance(e, EscalationRaised)]
    assert esc.kind == "breaker_open" and esc.breaker is not None
    assert [f.attempt for f in esc.breaker.failures_seen] == [1, 2, 3]
    assert result.status == "escalated" and result.stop_kind == "breaker_open" and result.stopped_at == 0
    assert result.error.startswith("circuit breaker open after 3 consecutive failures (limit 3)")
    assert "stagnation" in result.error  # the volatile timestamp did not count as a change (S2/P4)


def test_the_same_failure_on_every_step_opens_the_breaker_across_steps(driver) -> None:
    control = Answers(default="skip", breaker_open="stop")  # a human skipping each failing step
    steps = [submit("s1", "Save"), submit("s2", "Save and add another"), submit("s3", "Save and continue editing"),
             Step("s4", Action("click"), target=ElementDescriptor(tag="a", role="link", name="Delete", text="Delete"))]
    result, events = run(driver, "/covered.html", steps, control=control, retries=0)
    kinds = [e.kind for e in control.asked]
    # the backdrop makes every click fail alike: refused by the pre-check (covered, S4) or timed out by Playwright
    assert kinds[2:] == ["breaker_open"] and len(set(kinds[:2])) == 1 and kinds[0] in ("precondition", "failed")
    esc = control.asked[-1]
    assert esc.breaker is not None and [f.index for f in esc.breaker.failures_seen] == [0, 1, 2]
    assert len({f.reason for f in esc.breaker.failures_seen}) == 1  # the same failure, three times
    assert "half-opens by itself in 300 s" in esc.reason
    assert [o.status for o in result.steps] == ["skipped", "skipped", "escalated"]  # Delete never reached
    assert result.stop_kind == "breaker_open" and result.stopped_at == 2


# --- P8 and K2 ------------------------------------------------------------------------------------


def test_clicking_a_button_that_does_nothing_again_and_again_is_a_loop(driver) -> None:
    steps = [button(f"s{i}", "Cancel", expect="none") for i in range(1, 6)]  # nothing expected: each "passes"
    result, events = run(driver, "/dead.html", steps)
    (esc,) = [e for e in events if isinstance(e, EscalationRaised)]
    assert esc.kind == "loop" and esc.index == 3
    assert [o.status for o in result.steps] == ["passed", "passed", "passed", "escalated"]
    assert result.stop_kind == "loop"


def test_a_switch_that_toggles_between_two_states_forever_stagnates(driver) -> None:
    steps = [button(f"s{i}", "Wi-Fi", role="switch") for i in range(1, 9)]
    result, events = run(driver, "/toggle.html", steps)
    (esc,) = [e for e in events if isinstance(e, EscalationRaised)]
    # off->on, then back, forth, back: three revisits; each click "worked", so the fifth is refused
    assert esc.kind == "stagnation" and esc.index == 4
    assert "back to a page state seen before" in esc.reason
    assert [o.status for o in result.steps] == ["passed"] * 4 + ["escalated"]
    assert result.stop_kind == "stagnation" and result.stopped_at == 4


# --- S7 -------------------------------------------------------------------------------------------


def test_settle_waits_learn_a_page_that_answers_late(driver) -> None:
    learner = WaitLearner(WaitSettings())
    load_more = Step("s1", Action("click"), target=ElementDescriptor(tag="button", role="button", name="Load more",
                                                                     text="Load more"))
    learner.learn(learner.budget("http://x/slow.html", "click"), {"changed": False}, late_change_ms=1300.0)
    budget = learner.budget(driver.base_url + "slow.html", "click")
    assert budget.idle_ms > 900.0 and budget.limit_ms == 30000.0
    result, events = run(driver, "/slow.html", [load_more, load_more], learner=learner)
    assert result.status == "passed", result.error
    assert [e.attempt for e in events if isinstance(e, StepStarted)] == [1, 1]  # no click repeated
    assert driver.evaluate("() => document.querySelectorAll('#rows tr').length") == 5  # 3 + one row per click
    assert learner.budget(driver.base_url + "slow.html", "click").samples >= 3


def test_a_spinner_that_never_ends_hits_the_wait_bound_and_says_so(driver) -> None:
    events: list[Any] = []
    ex = FlowExecutor(driver, emit=events.append, screenshots=False,
                      settings=EngineSettings(waits=WaitSettings(retries=0, retry_delay_ms=0, loading_max_ms=1500)))
    export = Step("s1", Action("click"), target=ElementDescriptor(tag="button", role="button", name="Export CSV",
                                                                  text="Export CSV"), expect="overlay_open")
    result = ex.run_flow(Flow("f", "/spinner.html", (export,)), params={})
    (verdict,) = [e.verdict for e in events if isinstance(e, VerdictReached)]
    bound = "the page was still loading when the wait hit its bound of 2 s"  # 1.5 s, rounded
    assert verdict.kind == "changed_unexpectedly" and bound in verdict.reason
    (esc,) = [e for e in events if isinstance(e, EscalationRaised)]
    assert bound in esc.reason
    assert result.status == "escalated" and "ms waited)" in result.error and "S7" not in result.error
