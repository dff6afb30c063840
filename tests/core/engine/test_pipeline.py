"""The step pipeline on a FakeDriver: every phase in order, a crash in any phase still records the step,
pause points between any two phases, and what each answer to an escalation does.

No browser and no Qt: the page is scripted with :mod:`core.perception.fake`.
"""
from __future__ import annotations

from typing import Any, Callable

import pytest

import core.engine.pipeline as pipeline
from core.domain import (
    Action, Assertion, ElementDescriptor, EngineSettings, Escalation, Flow, RunResult, Step, WaitSettings,
)
from core.engine.control import Answer, HeadlessControl, StopRequested, TakeoverRequested
from core.engine.events import (
    PHASES, ActionPerformed, EscalationRaised, HandedBack, PhaseChanged, StepFinished,
    TakeoverStarted,
)
from core.engine.executor import FlowExecutor
from event_log import EventLog
from core.perception.fake import FakeDriver, change_text, navigate, nothing
from core.plan import DecideContext, Decision

PHASES_BEFORE_RECORD = tuple(p for p in PHASES if p != "record")


def button(element_id: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"id": element_id, "role": "button", "text": text, **extra}


def click(step_id: str, label: str, **kw: Any) -> Step:
    return Step(id=step_id, action=Action("click"), target=ElementDescriptor(tag="button", role="button", name=label,
                                                                             text=label), **kw)


def three_pages() -> FakeDriver:
    """/ -Next-> /two -Next-> /three -Done-> text 'finished'."""
    return FakeDriver(
        pages={"/": [button("n1", "Next")], "/two": [button("n2", "Next")], "/three": [button("d", "Done")]},
        reactions={("/", "n1", "click"): navigate("/two"), ("/two", "n2", "click"): navigate("/three"),
                   ("/three", "d", "click"): change_text("finished")})


FLOW3 = (click("s1", "Next"), click("s2", "Next"), click("s3", "Done"))


def run(fake: FakeDriver, steps: tuple[Step, ...], *, control: Any = None, retries: int = 2,
        max_steps: int = 30, deciders: tuple = ()) -> tuple[RunResult, EventLog]:
    events = EventLog()
    ex = FlowExecutor(fake, emit=events, control=control, screenshots=False, deciders=deciders,
                      settings=EngineSettings(waits=WaitSettings(retries=retries, retry_delay_ms=0),
                                              max_steps=max_steps))
    return ex.run_flow(Flow("f", "/", steps), params={}), events


# --- a crash in any phase still records the step -------------------------------------------------


@pytest.mark.parametrize("phase", PHASES_BEFORE_RECORD)
def test_a_crash_in_any_phase_records_the_step_and_ends_the_run(phase: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def crash(ex: Any, ctx: Any) -> None:
        raise RuntimeError(f"boom in {phase}")

    monkeypatch.setattr(pipeline, "PHASE_FUNCTIONS",
                        tuple((n, crash if n == phase else f) for n, f in pipeline.PHASE_FUNCTIONS))
    fake = three_pages()
    result, events = run(fake, FLOW3)

    assert result.status == "error" and result.error_kind == "internal"
    assert result.error == f"RuntimeError: boom in {phase}"
    (outcome,) = result.steps  # the step is recorded although its phase crashed
    assert (outcome.index, outcome.status, outcome.error) == (0, "error", f"RuntimeError: boom in {phase}")
    assert [p for p, _ in outcome.phase_ms][-1] == phase
    (finished,) = events.of(StepFinished)
    assert (finished.index, finished.status) == (0, "error")
    assert [e.phase for e in events.of(PhaseChanged)][-1] == "record"
    if PHASES.index(phase) <= PHASES.index("act"):
        assert fake.actions == []  # nothing was done after the crash
    assert events.of(EscalationRaised) == []  # a crash aborts: nobody is asked to retry a dead browser


def test_a_browser_that_dies_mid_action_is_a_browser_error_and_the_step_is_recorded() -> None:
    dead = type("TargetClosedError", (Exception,), {"__module__": "playwright._impl._errors"})

    def die(d: FakeDriver, el: Any, value: str) -> None:
        raise dead("Target page, context or browser has been closed")

    fake = FakeDriver(pages={"/": [button("go", "Go")]}, reactions={("/", "go", "click"): die})
    result, events = run(fake, (click("s1", "Go"),))
    assert (result.status, result.error_kind) == ("error", "browser")
    assert "has been closed" in result.error
    assert [o.status for o in result.steps] == ["error"]
    assert [e.status for e in events.of(StepFinished)] == ["error"]


# --- pause points ---------------------------------------------------------------------------------


class PauseAt(HeadlessControl):
    """Looks at the run at one pause point: what had happened before it."""

    def __init__(self, events: EventLog, fake: FakeDriver, index: int, phase: str) -> None:
        self.events, self.fake, self.index, self.phase = events, fake, index, phase
        self.seen: list[tuple[int, str]] = []
        self.snapshot: dict[str, Any] = {}

    def pause_point(self, run_id: str, flow: str, index: int, phase: str) -> None:
        self.seen.append((index, phase))
        if (index, phase) == (self.index, self.phase):
            phases = [e.phase for e in self.events.of(PhaseChanged) if e.index == index]
            self.snapshot = {"phases": phases, "actions": len(self.fake.actions)}


@pytest.mark.parametrize("phase", PHASES_BEFORE_RECORD)
def test_the_run_can_pause_before_every_phase(phase: str) -> None:
    fake = three_pages()
    events = EventLog()
    control = PauseAt(events, fake, 1, phase)
    ex = FlowExecutor(fake, emit=events, control=control, screenshots=False)
    result = ex.run_flow(Flow("f", "/", FLOW3), params={})

    assert result.status == "passed", result.error
    assert control.seen[0] == (-1, "start")
    assert [p for i, p in control.seen if i == 1] == list(PHASES_BEFORE_RECORD)
    before = list(PHASES_BEFORE_RECORD[:PHASES_BEFORE_RECORD.index(phase)])
    assert control.snapshot["phases"] == before  # paused between the previous phase and this one
    acted_before = PHASES.index(phase) > PHASES.index("act")
    assert control.snapshot["actions"] == (2 if acted_before else 1)


def test_a_stop_at_a_pause_point_records_the_step_as_stopped() -> None:
    class StopBeforeAct(HeadlessControl):
        def pause_point(self, run_id: str, flow: str, index: int, phase: str) -> None:
            if (index, phase) == (1, "act"):
                raise StopRequested()

    fake = three_pages()
    result, events = run(fake, FLOW3, control=StopBeforeAct())
    assert (result.status, result.error_kind) == ("stopped", "stopped")
    assert [(o.step_id, o.status) for o in result.steps] == [("s1", "passed"), ("s2", "stopped")]
    assert [a.element for a in fake.actions] == ["n1"]
    assert [e.status for e in events.of(StepFinished)] == ["passed", "stopped"]


# --- answers to an escalation -----------------------------------------------------------------------


class Answering(HeadlessControl):
    """Answers escalations from a list; a takeover hands back with ``back``."""

    def __init__(self, *answers: Answer, back: Answer | None = None,
                 during_takeover: Callable[[], None] | None = None) -> None:
        self.answers = list(answers)
        self.back = back or Answer("take_over")
        self.during_takeover = during_takeover
        self.escalations: list[Escalation] = []
        self.takeovers: list[int] = []

    def escalate(self, escalation: Escalation) -> Answer:
        self.escalations.append(escalation)
        return self.answers.pop(0) if self.answers else Answer("stop")

    def take_over(self, run_id: str, flow: str, index: int) -> Answer:
        self.takeovers.append(index)
        if self.during_takeover:
            self.during_takeover()
        return self.back


def stuck_second_step() -> FakeDriver:
    """Step 2's Next does nothing: it escalates after its retries."""
    fake = three_pages()
    fake.reactions[("/two", "n2", "click")] = nothing()
    return fake


def test_skip_leaves_the_step_skipped_and_goes_on() -> None:
    fake = FakeDriver(pages={"/": [button("a", "Apply"), button("b", "Save")]},
                      reactions={("/", "a", "click"): nothing(), ("/", "b", "click"): change_text("saved")})
    control = Answering(Answer("skip"))
    result, _ = run(fake, (click("s1", "Apply"), click("s2", "Save")), control=control, retries=0)
    assert result.status == "passed", result.error
    assert [o.status for o in result.steps] == ["skipped", "passed"]
    assert result.steps[0].error.startswith("skipped by the user")
    assert [a.element for a in fake.actions] == ["a", "b"]


def test_stop_ends_the_run_as_escalated() -> None:
    fake = stuck_second_step()
    control = Answering(Answer("stop"))
    result, _ = run(fake, FLOW3, control=control, retries=0)
    assert (result.status, result.error_kind) == ("escalated", "escalated")
    assert [o.status for o in result.steps] == ["passed", "escalated"]
    assert len(control.escalations) == 1


def test_retry_tries_the_step_again() -> None:
    fake = stuck_second_step()

    def fixed_after_asking(d: FakeDriver, el: Any, value: str) -> None:
        if control.escalations:
            navigate("/three")(d, el, value)

    fake.reactions[("/two", "n2", "click")] = fixed_after_asking
    control = Answering(Answer("retry"))
    result, _ = run(fake, FLOW3, control=control, retries=0)
    assert result.status == "passed", result.error
    assert result.steps[1].attempts == 2
    assert [a.element for a in fake.actions] == ["n1", "n2", "n2", "d"]


def test_take_over_then_hand_back_continues_from_the_named_step() -> None:
    fake = stuck_second_step()
    # the human does step 2 by hand, then hands back: continue from step 3 (index 2)
    control = Answering(Answer("take_over"), back=Answer("take_over", continue_from=2),
                        during_takeover=lambda: fake.goto("/three"))
    result, events = run(fake, FLOW3, control=control, retries=0)
    assert result.status == "passed", result.error
    assert [(o.step_id, o.status) for o in result.steps] == [("s1", "passed"), ("s2", "manual"), ("s3", "passed")]
    assert control.takeovers == [1]
    assert [(e.index) for e in events.of(TakeoverStarted)] == [1]
    assert [e.continue_from for e in events.of(HandedBack)] == [2]
    assert [a.element for a in fake.actions] == ["n1", "n2", "d"]


def test_hand_back_to_the_same_step_tries_it_on_the_page_as_the_human_left_it() -> None:
    fake = stuck_second_step()

    def human_fixes_the_page() -> None:
        fake.reactions[("/two", "n2", "click")] = navigate("/three")

    control = Answering(Answer("take_over"), back=Answer("take_over", continue_from=None),
                        during_takeover=human_fixes_the_page)
    result, _ = run(fake, FLOW3, control=control, retries=0)
    assert result.status == "passed", result.error
    assert [o.status for o in result.steps] == ["passed", "passed", "passed"]
    assert result.steps[1].attempts == 2


def test_a_takeover_asked_for_at_a_pause_point_hands_the_page_to_the_human() -> None:
    class TakeOverBeforeAct(Answering):
        def pause_point(self, run_id: str, flow: str, index: int, phase: str) -> None:
            if (index, phase) == (0, "act") and not self.takeovers:
                raise TakeoverRequested()

    fake = three_pages()
    control = TakeOverBeforeAct(back=Answer("take_over", continue_from=1), during_takeover=lambda: fake.goto("/two"))
    result, _ = run(fake, FLOW3, control=control)
    assert result.status == "passed", result.error
    assert [o.status for o in result.steps] == ["manual", "passed", "passed"]
    assert [a.element for a in fake.actions] == ["n2", "d"]  # step 1 was done by hand, not by the engine


def test_a_takeover_that_ends_without_a_hand_back_escalates() -> None:
    fake = stuck_second_step()
    control = Answering(Answer("take_over"), back=Answer("stop"))
    result, _ = run(fake, FLOW3, control=control, retries=0)
    assert (result.status, result.steps[-1].status) == ("escalated", "escalated")


def test_an_irreversible_step_offers_no_retry_and_an_unoffered_answer_stops() -> None:
    fake = FakeDriver(pages={"/": [button("s", "Submit")]}, reactions={("/", "s", "click"): nothing()})
    control = Answering(Answer("retry"))
    result, _ = run(fake, (click("s1", "Submit", reversible=False),), control=control)
    (esc,) = control.escalations
    assert esc.kind == "irreversible" and "retry" not in esc.answers
    assert [a.element for a in fake.actions] == ["s"]  # performed once, never again
    assert result.status == "escalated"


def test_the_step_budget_ends_a_run_that_keeps_going_back() -> None:
    fake = stuck_second_step()
    # every takeover hands back to step 1: the run would loop for ever without max_steps (P6)
    control = Answering(*[Answer("take_over")] * 50, back=Answer("take_over", continue_from=0),
                        during_takeover=lambda: fake.goto("/"))
    # the budget is each of the 3 steps once plus max_steps 3 more (a flow's length is not limited)
    result, _ = run(fake, FLOW3, control=control, retries=0, max_steps=3)
    assert (result.status, result.error_kind) == ("escalated", "budget")
    assert len(result.steps) == 7 and result.steps[-1].status == "escalated"
    assert control.escalations[-1].kind == "budget" and control.escalations[-1].answers == ("stop",)


# --- the decide seam ----------------------------------------------------------------------------------


class SkillLike:
    """A decider ranked before the flow: answers for step 2 only."""

    name = "skill"

    def decide(self, ctx: DecideContext) -> Decision | None:
        if ctx.index != 1:
            return None
        assert ctx.history[-1].step_id == "s1" and ctx.observation.url.endswith("/two")
        return Decision(Step(id="s2", action=Action("navigate", "/three")), "skill", "jump straight to /three")


def test_a_decider_ranked_before_the_flow_step_wins_and_its_source_is_recorded() -> None:
    fake = three_pages()
    result, events = run(fake, FLOW3, deciders=(SkillLike(),))
    assert result.status == "passed", result.error
    assert [o.source for o in result.steps] == ["flow", "skill", "flow"]
    assert [e.source for e in events.of(StepFinished)] == ["flow", "skill", "flow"]
    assert [a.kind for a in fake.actions] == ["click", "navigate", "click"]


def test_when_no_decider_chooses_the_human_is_asked() -> None:
    class Nobody:
        name = "flow"

        def decide(self, ctx: DecideContext) -> Decision | None:
            return None

    control = Answering(Answer("stop"))
    result, events = run(three_pages(), FLOW3, control=control, deciders=(Nobody(),))
    (esc,) = control.escalations
    assert esc.kind == "no_decision" and "no decider chose an action" in esc.reason
    assert result.status == "escalated" and events.of(ActionPerformed) == []


def test_assertion_on_a_pinned_target_after_the_pipeline() -> None:
    fake = FakeDriver(pages={"/": [button("go", "Go")]}, reactions={("/", "go", "click"): change_text("Saved")})
    step = click("s1", "Go", assertions=(Assertion("text_appears", "Saved"),))
    result, _ = run(fake, (step,))
    assert result.status == "passed", result.error
    assert dict(result.steps[0].phase_ms).keys() == set(PHASES_BEFORE_RECORD)


def test_a_takeover_after_an_irreversible_action_never_does_it_again() -> None:
    class TakeOverBeforeSettle(Answering):
        def pause_point(self, run_id: str, flow: str, index: int, phase: str) -> None:
            if (index, phase) == (0, "settle") and not self.takeovers:
                raise TakeoverRequested()

    fake = FakeDriver(pages={"/": [button("s", "Submit")], "/done": [button("d", "Done")]},
                      reactions={("/", "s", "click"): navigate("/done"), ("/done", "d", "click"): change_text("ok")})
    control = TakeOverBeforeSettle(back=Answer("take_over", continue_from=None))  # "the same step again"
    result, events = run(fake, (click("s1", "Submit", reversible=False), click("s2", "Done")), control=control)
    assert [a.element for a in fake.actions] == ["s", "d"]  # Submit once: it may have written data
    assert [o.status for o in result.steps] == ["manual", "passed"]
    assert "not done again" in result.steps[0].error
    assert events.of(TakeoverStarted)[0].acted is True
    assert [e.continue_from for e in events.of(HandedBack)] == [1]
