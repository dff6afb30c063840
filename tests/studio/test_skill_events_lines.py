"""The skill runtime's and learner's events as the studio says them: event log lines and timeline details."""
from __future__ import annotations

from core.engine.events import (
    FlowStarted, RunStarted, SkillConsidered, SkillDropped, SkillFinished, SkillFired, SkillProposed, StepStarted,
)
from studio.skill_events import describe_skill_event, is_skill_event
from studio.views.event_log import EventLog, describe_event
from studio.views.timeline import TimelinePanel, timeline_details_html

FIRED = SkillFired("r1", "address", 2, "sk-1", "Cancel the autofill popup", 0, 2)


def test_each_skill_event_has_its_line_and_others_are_left_alone() -> None:
    assert describe_event(FIRED) == "skill \u201cCancel the autofill popup\u201d fired at step 3 (action 1 of 2)"
    assert describe_event(SkillFinished("r1", "address", 2, "sk-1", "passed", "", 412.0)) == \
        "skill sk-1 passed at step 3 in 412 ms"
    assert describe_event(SkillConsidered("r1", "address", 0, "sk-1", False, True, "button 'Cancel' missing")) == \
        "skill sk-1 considered at step 1: trigger half holds (button 'Cancel' missing)"
    assert describe_event(SkillProposed("r1", "address", "sk-2", "Keep my own address", 0.75, 4)) == \
        "skill proposed from address: \u201cKeep my own address\u201d (validation 75%) \u2014 in the review queue"
    assert describe_event(SkillDropped("r1", "address", "did not reproduce: a transient failure")) == \
        "no skill learnt from address: did not reproduce: a transient failure"
    step = StepStarted("r1", "address", 0, "Fill Full name", 1)
    assert not is_skill_event(step) and describe_skill_event(step) is None
    assert describe_event(step) == "Step 1 started: Fill Full name"


def test_a_fired_skill_is_in_the_event_log_and_in_its_step_on_the_timeline(qtbot) -> None:  # noqa: ANN001
    log = EventLog()
    qtbot.addWidget(log)
    log.apply(FIRED)
    assert "skill \u201cCancel the autofill popup\u201d fired at step 3" in log.toPlainText()
    panel = TimelinePanel()
    qtbot.addWidget(panel)
    for e in (RunStarted("r1", "Delivery", ("address",)), FlowStarted("r1", "address", ("a", "b", "c")), FIRED,
              SkillFinished("r1", "address", 2, "sk-1", "passed", "", 412.0)):
        panel.apply(e)
    step = panel.live_model.step(2)
    assert step.extra["skills"] == ["skill \u201cCancel the autofill popup\u201d fired at step 3 (action 1 of 2)",
                                    "skill sk-1 passed at step 3 in 412 ms"]
    html = timeline_details_html(step)
    assert "Skills" in html and "fired at step 3" in html
    assert "autofill" in step.haystack()  # the search box finds the step by its skill
