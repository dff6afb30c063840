"""A step's ms is its active time: time paused between phases or waiting for a human's answer is left out."""
from __future__ import annotations

import time

import pytest

from core.domain import Action, ElementDescriptor, EngineSettings, Flow, Step, WaitSettings
from core.engine.control import Answer, HeadlessControl
from core.engine.events import StepEvidenceRecorded, StepFinished
from core.engine.executor import FlowExecutor
from core.perception.fake import FakeDriver, FakePage, navigate

PAGES = {"/": FakePage([{"id": "go", "role": "button", "text": "Sign in"}], title="Login", text="Please sign in"),
         "/home": FakePage([{"id": "q", "role": "button", "text": "Query"}], title="Home", text="Welcome")}
WAIT_S = 0.4


class SlowHuman(HeadlessControl):
    """Pauses WAIT_S at step 1's act phase and takes WAIT_S to answer an escalation (with skip)."""

    def pause_point(self, run_id: str, flow: str, index: int, phase: str) -> None:
        if index == 0 and phase == "act":
            time.sleep(WAIT_S)

    def escalate(self, escalation) -> Answer:  # noqa: ANN001
        time.sleep(WAIT_S)
        return Answer("skip")


def _click(sid: str, name: str) -> Step:
    return Step(id=sid, action=Action("click"), target=ElementDescriptor(tag="button", role="button", name=name,
                                                                         text=name))


def test_paused_and_waiting_time_is_not_the_steps_time() -> None:
    events: list[object] = []
    ex = FlowExecutor(FakeDriver(pages=PAGES, reactions={("/", "go", "click"): navigate("/home")}), emit=events.append, control=SlowHuman(), screenshots=False,
                      settings=EngineSettings(waits=WaitSettings(retries=0)))
    result = ex.run_flow(Flow("f", "/", (_click("s1", "Sign in"), _click("s2", "Quarterly report"))), params={})
    assert [o.status for o in result.steps] == ["passed", "skipped"]
    evidence = {e.index: e.evidence for e in events if isinstance(e, StepEvidenceRecorded)}
    finished = {e.index: e for e in events if isinstance(e, StepFinished)}
    for i in (0, 1):
        ev = evidence[i]
        assert ev.wall_ms >= WAIT_S * 1000 - 5, ev
        assert ev.paused_ms >= WAIT_S * 1000 - 5, ev  # the pause (step 1) and the wait for an answer (step 2)
        assert finished[i].ms == result.steps[i].ms == pytest.approx(ev.active_ms, abs=0.1)
        assert ev.active_ms < ev.wall_ms - WAIT_S * 1000 + 5
        assert ev.diff is None  # no screenshots in this run: nothing to compare
