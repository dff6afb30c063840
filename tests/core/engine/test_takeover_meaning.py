"""Where a hand-back goes on by its meaning, and what is said of the manual segment, on a FakeDriver.

The FakeDriver has no real page, so nothing can be recorded: the correction
is "kept" with a note (the recording on a real page is in
tests/e2e/test_takeover_cdp.py and tests/studio/test_takeover_live.py).
"""
from __future__ import annotations

from core.domain import Action, ElementDescriptor, EngineSettings, Escalation, Flow, Step, WaitSettings
from core.engine.control import Answer, HeadlessControl
from core.engine.events import CorrectionOffered, HandedBack
from core.engine.executor import FlowExecutor
from core.perception.fake import FakeDriver, change_text, navigate, nothing
from event_log import EventLog


def _click(step_id: str, label: str) -> Step:
    return Step(step_id, Action("click"), target=ElementDescriptor(tag="button", role="button", name=label, text=label))


class HandsBack(HeadlessControl):
    def __init__(self, back: Answer, fake: FakeDriver) -> None:
        self.back, self.fake, self.asked = back, fake, 0

    def escalate(self, escalation: Escalation) -> Answer:
        self.asked += 1
        return Answer("take_over") if self.asked == 1 else Answer("stop")

    def take_over(self, run_id: str, flow: str, index: int) -> Answer:
        self.fake.goto("/three")  # the human did step 2's work by hand
        return self.back


def _run(back: Answer):  # noqa: ANN202
    fake = FakeDriver(
        pages={"/": [{"id": "n1", "role": "button", "text": "Next"}], "/two": [{"id": "n2", "role": "button",
                                                                                  "text": "Next"}],
               "/three": [{"id": "d", "role": "button", "text": "Done"}]},
        reactions={("/", "n1", "click"): navigate("/two"), ("/two", "n2", "click"): nothing(),
                   ("/three", "d", "click"): change_text("finished")})
    events = EventLog()
    ex = FlowExecutor(fake, emit=events, control=HandsBack(back, fake), screenshots=False,
                      settings=EngineSettings(waits=WaitSettings(retries=0, retry_delay_ms=0)))
    steps = (_click("s1", "Next"), _click("s2", "Next"), _click("s3", "Done"))
    return ex.run_flow(Flow("f", "/", steps), params={}), events


def test_replace_and_done_go_on_with_the_next_step() -> None:
    for meaning in ("replace", "done"):
        result, events = _run(Answer("take_over", meaning=meaning))
        assert result.status == "passed", result.error
        assert [o.status for o in result.steps] == ["passed", "manual", "passed"]
        (back,) = events.of(HandedBack)
        assert (back.continue_from, back.meaning) == (2, meaning)
        (offer,) = events.of(CorrectionOffered)
        assert (offer.index, offer.meaning, offer.state, offer.correction_id) == (1, meaning, "kept", 0)
        assert offer.note == ("the step was done by hand; the flow file stays as it is" if meaning == "done"
                              else "no action was recorded during the takeover")


def test_insert_runs_the_same_step_after_the_manual_actions() -> None:
    result, events = _run(Answer("take_over", meaning="insert"))
    # the same step again, on the page as the human left it: /three has no "Next", so it cannot pass
    assert [e.continue_from for e in events.of(HandedBack)] == [1]
    assert result.steps[1].attempts == 2 and result.steps[1].status == "escalated"


def test_a_takeover_that_timed_out_says_so() -> None:
    result, events = _run(Answer("stop", reason="no hand-back within 600 s"))
    assert result.status == "escalated"
    assert result.steps[1].error == "the takeover ended without a hand-back: no hand-back within 600 s"
    assert not events.of(CorrectionOffered)


class HandsBackIdle(HandsBack):
    def take_over(self, run_id: str, flow: str, index: int) -> Answer:
        return self.back  # the human did nothing on the page


def test_done_with_nothing_done_on_the_page_is_never_passed() -> None:
    fake = FakeDriver(
        pages={"/": [{"id": "n1", "role": "button", "text": "Next"}], "/two": [{"id": "n2", "role": "button",
                                                                                  "text": "Next"}]},
        reactions={("/", "n1", "click"): navigate("/two"), ("/two", "n2", "click"): nothing()})
    events = EventLog()
    ex = FlowExecutor(fake, emit=events, control=HandsBackIdle(Answer("take_over", meaning="done"), fake),
                      screenshots=False, settings=EngineSettings(waits=WaitSettings(retries=0, retry_delay_ms=0)))
    result = ex.run_flow(Flow("f", "/", (_click("s1", "Next"), _click("s2", "Next"))), params={})
    assert result.status == "escalated" and [o.status for o in result.steps] == ["passed", "escalated"]
    assert "no action was recorded on the page" in result.steps[1].error
