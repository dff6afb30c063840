"""When the engine stops on its own: breaker by risk and its context (R4, kind 8), anti-loop (P8), stagnation
(K2) and bounded waits (S7) - on the scripted FakeDriver, no browser."""
from __future__ import annotations

from typing import Any

from core.domain import EngineSettings, Escalation, Flow, WaitSettings
from core.engine.control import Answer, HeadlessControl
from core.engine.events import BreakerChanged, EscalationRaised, VerdictReached
from core.engine.executor import FlowExecutor
from core.recover.waits import WaitLearner
from event_log import EventLog
from core.perception.fake import FakeDriver, FakePage, change_text, fail, nothing, set_page
from test_executor import button, click, execute, settings


class Answers(HeadlessControl):
    """Answers escalations from a script: ``by_kind`` first, else ``default``; remembers what it was asked."""

    def __init__(self, default: str = "stop", **by_kind: str) -> None:
        self.default, self.by_kind = default, by_kind
        self.asked: list[Escalation] = []

    def escalate(self, escalation: Escalation) -> Answer:
        self.asked.append(escalation)
        return Answer(self.by_kind.get(escalation.kind, self.default))  # type: ignore[arg-type]


def dead_buttons(n: int, reaction: Any = None) -> FakeDriver:
    ids = [f"b{i}" for i in range(n)]
    return FakeDriver(pages={"/": [button(i, f"Button {i}") for i in ids]},
                      reactions={("/", i, "click"): reaction or nothing() for i in ids})


def no_retries(**kw: Any) -> EngineSettings:
    return settings(retries=0, **kw)


# --- kind 8: the same failure repeating forever opens the breaker ---------------------------------


def test_the_same_failure_across_steps_opens_the_breaker_with_its_r4_context() -> None:
    fake = dead_buttons(5, fail("element is covered by .modal-backdrop"))
    control = Answers(default="skip", breaker_open="stop")  # a human who skips each failing step
    steps = [click(f"s{i + 1}", f"Button b{i}") for i in range(5)]
    result, rec = execute(fake, steps, control=control, config=no_retries())
    assert len(fake.actions) == 3  # three steps tried, then the breaker stopped the fourth before it began
    kinds = [e.kind for e in control.asked]
    assert kinds == ["failed", "failed", "breaker_open"]
    esc = control.asked[-1]
    assert esc.index == 2 and esc.breaker is not None
    assert (esc.breaker.state, esc.breaker.failures, esc.breaker.threshold) == ("open", 3, 3)
    assert [(f.index, f.step_title) for f in esc.breaker.failures_seen] == [
        (0, "click Button b0"), (1, "click Button b1"), (2, "click Button b2")]
    assert esc.breaker.seconds_to_half_open is not None and 299.0 < esc.breaker.seconds_to_half_open <= 300.0
    assert esc.reason.startswith("circuit breaker open after 3 consecutive failures (limit 3): step 1 'click Button "
                                 "b0' attempt 1: element is covered by .modal-backdrop; step 2")
    assert "side effects so far: none" in esc.reason and "half-opens by itself in 300 s" in esc.reason
    assert result.status == "escalated" and result.stop_kind == "breaker_open" and result.stopped_at == 2
    assert max(b.consecutive_failures for b in rec.of(BreakerChanged)) == 3


def test_after_the_breaker_opened_a_skipped_step_is_refused_and_the_refusal_is_not_counted() -> None:
    fake = dead_buttons(5, fail("element is covered"))
    control = Answers(default="skip")  # skips even the breaker's escalations: every later step is refused
    result, rec = execute(fake, [click(f"s{i + 1}", f"Button b{i}") for i in range(5)], control=control,
                          config=no_retries())
    assert len(fake.actions) == 3
    assert [e.kind for e in control.asked] == ["failed", "failed", "breaker_open", "breaker_open", "breaker_open"]
    assert all(b.consecutive_failures <= b.threshold for b in rec.of(BreakerChanged))  # never "4/3"
    assert [o.status for o in result.steps] == ["skipped"] * 5


def test_the_same_failure_across_retries_opens_the_breaker_and_headless_ends_with_the_reason() -> None:
    fake = dead_buttons(1, fail("element is covered"))
    result, rec = execute(fake, [click("s1", "Button b0")], control=HeadlessControl(), config=settings(retries=10))
    assert len(fake.actions) == 3
    (esc,) = rec.of(EscalationRaised)
    assert esc.kind == "breaker_open" and [f.attempt for f in esc.breaker.failures_seen] == [1, 2, 3]
    assert result.status == "escalated" and result.error_kind == "escalated" and result.stop_kind == "breaker_open"
    assert result.error.startswith("circuit breaker open after 3 consecutive failures")


def test_a_write_opens_the_breaker_after_two_failures() -> None:
    fake = dead_buttons(3, fail("element is covered"))
    control = Answers(default="skip", breaker_open="stop")
    steps = [click("s1", "Button b0"), click("s2", "Button b1", reversible=False)]
    result, _ = execute(fake, steps, control=control, config=no_retries())
    assert [e.kind for e in control.asked] == ["failed", "breaker_open"]
    assert control.asked[-1].breaker is not None and control.asked[-1].breaker.threshold == 2


def test_failed_probes_are_limited_so_a_script_answering_retry_forever_still_ends() -> None:
    fake = dead_buttons(1, fail("element is covered"))
    control = Answers(default="retry")
    result, rec = execute(fake, [click("s1", "Button b0")], control=control, config=settings(retries=10))
    assert len(fake.actions) == 3 + 3  # three failures open it, then three failed probes
    assert "retry" in control.asked[-2].answers and "retry" not in control.asked[-1].answers
    assert control.asked[-1].breaker is not None and control.asked[-1].breaker.failed_probes == 3
    assert result.status == "escalated"
    assert [(b.state, b.consecutive_failures) for b in rec.of(BreakerChanged)][-2:] == [("half_open", 3),
                                                                                         ("open", 3)]


# --- P8 and K2 -------------------------------------------------------------------------------------


def test_the_same_action_on_the_same_state_a_fourth_time_is_a_loop() -> None:
    fake = dead_buttons(1)
    steps = [click(f"s{i + 1}", "Button b0", expect="none") for i in range(5)]  # each "passes": nothing expected
    result, rec = execute(fake, steps)
    assert len(fake.actions) == 3
    (esc,) = rec.of(EscalationRaised)
    assert esc.kind == "loop" and esc.index == 3
    assert "already done 3 times on this same page state" in esc.reason and "P8" not in esc.reason
    assert result.stop_kind == "loop" and result.stopped_at == 3
    assert [o.status for o in result.steps] == ["passed", "passed", "passed", "escalated"]


def test_a_button_that_toggles_between_two_states_stagnates() -> None:
    state = {"on": False}

    def toggle(d: FakeDriver, el: Any, value: str) -> None:
        state["on"] = not state["on"]
        change_text("Light is on" if state["on"] else "Light is off")(d, el, value)

    fake = FakeDriver(pages={"/": FakePage([button("t", "Toggle light")], text="Light is off")},
                      reactions={("/", "t", "click"): toggle})
    result, rec = execute(fake, [click(f"s{i + 1}", "Toggle light") for i in range(8)])
    assert len(fake.actions) == 4  # off->on (new), on->off, off->on, on->off: three revisits in a row
    (esc,) = rec.of(EscalationRaised)
    assert esc.kind == "stagnation" and esc.index == 4  # each step passed; the fifth click is refused
    assert "back to a page state seen before" in esc.reason and "K2" not in esc.reason
    assert result.stop_kind == "stagnation" and result.status == "escalated"
    assert all(v.verdict.kind == "as_expected" for v in rec.of(VerdictReached))  # each click "worked"
    assert [o.status for o in result.steps] == ["passed"] * 4 + ["escalated"]


def test_after_a_toggle_cycle_another_action_still_leads_out() -> None:
    state = {"on": False}

    def toggle(d: FakeDriver, el: Any, value: str) -> None:
        state["on"] = not state["on"]
        change_text("Light is on" if state["on"] else "Light is off")(d, el, value)

    fake = FakeDriver(pages={"/": FakePage([button("t", "Toggle light"), button("s", "Save")], text="Light is off")},
                      reactions={("/", "t", "click"): toggle, ("/", "s", "click"): change_text("Saved")})
    steps = [click(f"t{i}", "Toggle light") for i in range(4)] + [click("s1", "Save")]
    result, rec = execute(fake, steps)
    assert result.status == "passed", result.error
    assert rec.of(EscalationRaised) == []


def test_a_dead_button_retried_stagnates_and_opens_the_breaker_at_once() -> None:
    fake = dead_buttons(1)
    result, rec = execute(fake, [click("s1", "Button b0")])
    assert len(fake.actions) == 3
    (esc,) = rec.of(EscalationRaised)
    assert esc.kind == "breaker_open"  # the breaker outranks; the stagnation is part of the reason
    assert "stagnation: 3 rounds in a row" in esc.reason


def test_a_flow_through_new_states_is_neither_a_loop_nor_stagnation() -> None:
    count = {"n": 0}

    def count_up(d: FakeDriver, el: Any, value: str) -> None:
        count["n"] += 1
        change_text(f"Clicked {count['n']} times")(d, el, value)

    fake = FakeDriver(pages={"/": [button("go", "Add one")]}, reactions={("/", "go", "click"): count_up})
    steps = [click(f"s{i + 1}", "Add one") for i in range(6)]
    result, _ = execute(fake, steps)
    assert result.status == "passed", result.error
    assert len(fake.actions) == 6


# --- S7: bounded waits ----------------------------------------------------------------------------


def test_a_wait_that_hits_its_bound_is_a_reason_in_the_verdict_and_the_escalation() -> None:
    fake = FakeDriver(pages={"/": [button("go", "Go")]}, reactions={("/", "go", "click"): set_page(loading=True)})
    config = EngineSettings(waits=WaitSettings(retries=0, retry_delay_ms=0, loading_max_ms=4000))
    result, rec = execute(fake, [click("s1", "Go")], config=config)
    (verdict,) = [v.verdict for v in rec.of(VerdictReached)]
    assert verdict.kind == "unchanged"  # only the spinner changed (noise, S5)
    assert "the wait hit its bound of 4 s" in verdict.reason
    assert "the wait hit its bound of 4 s" in rec.of(EscalationRaised)[0].reason
    assert result.status == "escalated"


def test_a_submit_waits_twice_as_long() -> None:
    fake = FakeDriver(pages={"/": [button("go", "Send")]}, reactions={("/", "go", "click"): set_page(loading=True)})
    config = EngineSettings(waits=WaitSettings(retries=0, retry_delay_ms=0, loading_max_ms=4000))
    _, rec = execute(fake, [click("s1", "Send", reversible=False)], config=config)
    assert "bound of 8 s" in rec.of(VerdictReached)[0].verdict.reason


# --- what a run reports ---------------------------------------------------------------------------


def test_a_run_reports_its_total_steps_abstentions_and_where_it_stopped() -> None:
    fake = FakeDriver(pages={"/": [button("go", "Go"), button("d1", "Delete"), button("d2", "Delete")]},
                      reactions={("/", "go", "click"): change_text("went")})
    result, _ = execute(fake, [click("s1", "Go"), click("s2", "Delete"), click("s3", "Go")])
    assert (result.total_steps, result.abstentions) == (3, 1)
    assert (result.stop_kind, result.stopped_at) == ("abstained", 1)
    passed, _ = execute(FakeDriver(pages={"/": [button("go", "Go")]},
                                   reactions={("/", "go", "click"): change_text("x")}), [click("s1", "Go")])
    assert (passed.stop_kind, passed.stopped_at, passed.total_steps) == ("", None, 1)


def test_repeated_read_only_steps_are_not_a_loop() -> None:
    from core.domain import Action, Step

    fake = FakeDriver(pages={"/": [button("go", "Go")]})
    steps = [Step(f"a{i}", Action("assert")) for i in range(5)] + [Step(f"w{i}", Action("wait")) for i in range(5)]
    result, rec = execute(fake, steps)
    assert result.status == "passed", result.error
    assert rec.of(EscalationRaised) == []


class BlindWaitFake(FakeDriver):
    """A page whose settle wait sees no change (as a real wait sees no DOM mutation when a value is typed)."""

    def wait_settled(self, **kw: Any) -> dict[str, Any]:
        return {"ms": kw.get("idle_ms", 500.0), "changed": False, "timed_out": False}


def learn_from(fake: FakeDriver, steps: list[Any]) -> WaitLearner:
    learner = WaitLearner(WaitSettings())
    ex = FlowExecutor(fake, emit=EventLog(), settings=settings(), screenshots=False, wait_learner=learner)
    result = ex.run_flow(Flow("f", "/", tuple(steps)), params={})
    assert result.status == "passed", result.error
    return learner


def test_a_typed_value_the_wait_cannot_see_teaches_no_longer_wait() -> None:
    from test_executor import textbox, type_into

    learner = learn_from(BlindWaitFake(pages={"/": [textbox("n", "Name")]}),
                         [type_into(f"s{i}", "Name", f"value {i}") for i in range(4)])
    assert learner.estimates == {}  # a value delta is not a change the wait missed
    assert learner.budget("/", "input").idle_ms == 500.0


def test_a_change_the_wait_missed_is_learnt() -> None:
    learner = learn_from(BlindWaitFake(pages={"/": [button("go", "Go")]},
                                       reactions={("/", "go", "click"): change_text("answered")}),
                         [click("s1", "Go")])
    (est,) = learner.estimates.values()
    assert est.n == 1  # one sample: the time from the start of the wait to the observation that saw it


def test_the_studios_resume_after_the_breaker_opened_is_one_half_open_probe_and_never_4_of_3() -> None:
    import queue

    from core.engine.events import Resume, Stop
    from core.engine.runner import _ThreadControl

    class Runner:  # what the engine thread's control needs of EngineRunner: its command queue
        def __init__(self) -> None:
            self._commands: queue.Queue[object] = queue.Queue()
            self._closing = False

        def _emit(self, event: Any) -> None:
            pass

    class Studio(_ThreadControl):
        """The user presses Resume on the first escalation and Stop on the second (each when it is shown)."""

        def __init__(self) -> None:
            super().__init__(Runner())
            self.presses = [Resume(), Stop()]

        def escalate(self, escalation: Escalation) -> Answer:
            self.runner._commands.put(self.presses.pop(0))
            return super().escalate(escalation)

    fake = dead_buttons(1)
    result, rec = execute(fake, [click("s1", "Button b0")], control=Studio(), config=settings(retries=10))
    assert len(fake.actions) == 4  # 3 until it opened, then exactly one probe for the Resume
    shown = [(b.state, b.consecutive_failures, b.threshold) for b in rec.of(BreakerChanged)]
    assert shown[-3:] == [("open", 3, 3), ("half_open", 3, 3), ("open", 3, 3)]
    assert all(n <= limit for _, n, limit in shown)
    first, second = rec.of(EscalationRaised)
    assert (first.kind, second.kind) == ("breaker_open", "breaker_open")
    assert second.breaker is not None and second.breaker.failed_probes == 1
    assert "then 1 failed probe" in second.reason
    assert result.status == "escalated"
