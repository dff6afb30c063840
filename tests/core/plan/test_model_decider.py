"""The model decider's paths on the fake driver (pure engine logic), behind the scripted server.

Every way a model can fail - malformed JSON, a timeout, a cell outside the
grid, a disabled element, a conflicting answer, a budget that runs out -
escalates with the reason and nothing is acted on; the judge, the
cross-check, the cache and the rules-before-the-model are counted.
"""
from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest

from core.domain import Action, Assertion, EngineSettings, Flow, Step
from core.engine.events import ModelUsage
from core.engine.executor import FlowExecutor
from core.perception.fake import FakeDriver, FakePage, navigate
from core.plan.agent import GOAL_BUDGET, ModelAgent
from core.plan.config import ModelSetup
from core.plan.model import ModelClient, ModelConfig
from core.plan.scripted_server import Reply, ScriptedModelServer, last_user_text
from core.project.schema import ModelModel

# 1280 x 800, 10 x 10 grid: cells are 128 x 80 CSS px
FORM = [
    {"id": "note", "role": "textbox", "label": "Note", "bbox": [140, 90, 200, 40]},           # B2
    {"id": "save", "role": "button", "text": "Go", "bbox": [400, 330, 100, 40]},              # E4
    {"id": "off", "role": "button", "text": "Archive all", "enabled": False, "bbox": [660, 650, 100, 40]},  # I6
]
DONE = FakePage([{"id": "back", "role": "link", "text": "Home", "bbox": [10, 10, 80, 30]}], title="Done",
                text="All done")


def _driver() -> FakeDriver:
    return FakeDriver(pages={"/form": FORM, "/done": DONE}, reactions={("/form", "save", "click"): navigate("/done")})


def _ids(text: str) -> dict[str, tuple[str, str]]:
    return {m.group(2): (m.group(1), m.group(3))
            for m in re.finditer(r"^(e\d+) \| [^|]+ \| '([^']*)' \| [^|]* \| ([A-J]\d+)$", text, re.M)}


def click(name: str, **over):
    def rule(req):
        e, cell = _ids(last_user_text(req))[name]
        return json.dumps({"grid": cell, "element_id": e, "element_desc": name, "action": "click", "reason": "r",
                           "confidence": 0.9, **over})
    return rule


def acted(d: FakeDriver) -> list:
    """What the run did on the page (the goal's own assert is no action on it)."""
    return [a.element for a in d.actions if a.kind != "assert"]


# the flow file allows the model to press Go (allow: [{role: button, name: Go}]); nothing else is allowed
GOAL = Step("g1", Action("assert"), goal="Finish the form", assertions=(Assertion("text_appears", "All done"),),
            allow=(("button", "Go"),))


def run(rule=None, *, queue=(), step=GOAL, cross=None, driver=None, agent=None, settings=None, timeout=5.0,
        flow_steps=None):
    with ScriptedModelServer(rule=rule) as srv, ScriptedModelServer(rule=cross) as srv2:
        srv.queue(*queue)
        d = driver or _driver()
        d.open()
        setup = ModelSetup(ModelClient(ModelConfig(srv.base_url, "scripted", timeout_s=timeout, retries=1)),
                           ModelClient(ModelConfig(srv2.base_url, "second", role="cross_check", retries=0))
                           if cross else None, ModelModel(base_url=srv.base_url, name="scripted"))
        agent = agent or ModelAgent(setup)
        agent.setup, agent.check_assertion = setup, (lambda a: d.check_assertion(a, None, a.expected))
        events = []
        ex = FlowExecutor(d, emit=events.append, deciders=(agent.decider,), settings=settings, screenshots=False)
        try:
            result = ex.run_flow(Flow("f", "/form", tuple(flow_steps or (step,))), params={})
        finally:
            setup.close()
        return result, srv.requests, d, agent


def test_agreeing_answer_reaches_the_goal():
    result, reqs, d, agent = run(click("Go"))
    assert result.status == "passed" and acted(d) == ["save"] and len(reqs) == 1
    c = agent.counters()
    assert c["calls"] == 1 and c["goals_passed"] == 1 and c["goals_judged"] == 0


@pytest.mark.parametrize("answer, why", [
    ("I think you should press Go", "is not JSON"),
    ('{"grid": "E4", "action": "fly", "element_desc": "Go"}', "does not fit GroundAnswer"),
])
def test_malformed_answer_escalates(answer, why):
    result, reqs, d, _ = run(queue=(answer, answer))
    assert result.status == "escalated" and why in result.error and "nothing is guessed" in result.error
    assert acted(d) == [] and len(reqs) == 2  # one retry, then the reason


def test_timeout_escalates():
    slow = Reply('{"grid": "E4", "action": "click", "element_desc": "Go"}', delay_s=1.0)
    result, _, d, _ = run(queue=(slow, slow), timeout=0.3)
    assert result.status == "escalated" and "no answer within 0.3 s" in result.error and acted(d) == []


def test_cell_outside_the_page_escalates():
    result, _, d, _ = run(click("Go", grid="K12", element_id=None))
    assert result.status == "escalated" and "outside the 10x10 grid" in result.error and acted(d) == []


def test_disabled_element_is_not_acted_on():
    result, _, d, _ = run(click("Archive all"))
    assert result.status == "escalated" and "which is disabled: not acted on" in result.error and acted(d) == []


def test_conflict_the_rules_cannot_settle_escalates():
    # the id says Go but the cell is the Note field's, and the description names neither
    result, _, d, _ = run(click("Go", grid="B2", element_desc="the round thing"))
    assert result.status == "escalated" and "not in the cell B2" in result.error and acted(d) == []


def test_conflict_settled_by_rules():
    result, _, d, _ = run(click("Go", grid="A10"))  # the cell is off, the id and the name agree
    assert result.status == "passed" and acted(d) == ["save"]


def test_budget_runs_out():
    n = {"i": 0}

    def typer(req):
        n["i"] += 1
        e, cell = _ids(last_user_text(req))["Note"]
        return json.dumps({"grid": cell, "element_id": e, "element_desc": "Note", "action": "input",
                           "value": f"try {n['i']}", "reason": "r"})
    result, reqs, d, _ = run(typer, settings=EngineSettings(max_steps=200))
    assert result.status == "escalated" and f"not reached after {GOAL_BUDGET} actions" in result.error
    assert "(the step's budget)" in result.error and "P6" not in result.error  # it said "(P6 step budget)"
    assert len(acted(d)) == GOAL_BUDGET


def test_judge_passes_a_goal_without_assertion_and_the_share_alarms():
    def rule(req):
        if "judge whether" in json.dumps(req):
            return json.dumps({"reached": True, "confidence": 0.9, "evidence": "All done is shown"})
        return click("Go")(req)
    step = Step("g1", Action("assert"), goal="Finish the form", allow=(("button", "Go"),))
    result, reqs, _, agent = run(rule, step=step)
    assert result.status == "passed" and len(reqs) == 2
    share, alarm = agent.judge_stats()
    assert agent.goals_judged == 1 and share == 1.0 and alarm  # above 30% (P7)


def test_cross_check_disagreeing_escalates_a_key_goal():
    step = Step("g1", Action("assert"), goal="Finish the form", key=True,
                assertions=(Assertion("text_appears", "All done"),), allow=(("button", "Go"),))
    no = lambda req: json.dumps({"reached": False, "confidence": 0.8, "evidence": "an error banner"})  # noqa: E731
    result, _, _, agent = run(click("Go"), step=step, cross=no)
    assert result.status == "escalated" and "cross-check model does not confirm" in result.error
    assert agent.cross_checks == 1 and agent.cross_disagreements == 1
    yes = lambda req: json.dumps({"reached": True, "confidence": 0.9, "evidence": "All done"})  # noqa: E731
    result, _, _, agent = run(click("Go"), step=step, cross=yes)
    assert result.status == "passed" and agent.cross_checks == 1 and agent.cross_disagreements == 0


def test_decisions_cached_by_state_and_goal():
    d = _driver()
    result, reqs, _, agent = run(click("Go"), driver=d)
    assert result.status == "passed" and len(reqs) == 1
    result2, reqs2, _, agent2 = run(click("Go"), driver=_driver(), agent=agent)  # same page, same goal
    assert result2.status == "passed" and reqs2 == [] and agent.counters()["cache_hits"] == 1


def test_rules_before_the_model_for_the_only_button():
    lone = FakeDriver(pages={"/form": [{"id": "ok", "role": "button", "text": "Finish"}], "/done": DONE},
                      reactions={("/form", "ok", "click"): navigate("/done")})
    step = Step("g1", Action("assert"), goal="Finish the form", assertions=(Assertion("text_appears", "All done"),),
                allow=(("button", "Finish"),))
    result, reqs, d, agent = run(None, driver=lone, step=step)
    assert result.status == "passed" and reqs == [] and agent.rule_decisions == 1
    # the same lone button the flow does not allow: its effect is unknown, the rule does not click it
    lone = FakeDriver(pages={"/form": [{"id": "ok", "role": "button", "text": "Finish"}], "/done": DONE},
                      reactions={("/form", "ok", "click"): navigate("/done")})
    result, reqs, d, agent = run(None, driver=lone, step=replace(step, allow=()))
    assert result.status == "escalated" and agent.rule_decisions == 0 and not acted(d)


def test_the_only_button_is_not_clicked_by_rule_when_it_is_not_what_the_goal_asks_or_may_write():
    for text in ("OK", "Erase all data", "Save"):  # unrelated to "Finish the form", destructive, a write
        lone = FakeDriver(pages={"/form": [{"id": "ok", "role": "button", "text": text}], "/done": DONE},
                          reactions={("/form", "ok", "click"): navigate("/done")})
        result, reqs, d, agent = run(None, driver=lone)
        assert agent.rule_decisions == 0 and not d.actions, text


def test_batched_fill_and_events():
    page = [{"id": "a", "role": "textbox", "label": "First", "bbox": [140, 90, 200, 40]},
            {"id": "b", "role": "textbox", "label": "Second", "bbox": [140, 170, 200, 40]},
            {"id": "go", "role": "button", "text": "Go", "bbox": [400, 330, 100, 40]}]
    d = FakeDriver(pages={"/form": page, "/done": DONE}, reactions={("/form", "go", "click"): navigate("/done")})

    def rule(req):
        ids = _ids(last_user_text(req))
        if "value 'x1'" not in last_user_text(req):
            return json.dumps({"grid": ids["First"][1], "element_id": ids["First"][0], "element_desc": "First",
                               "action": "input", "value": "x1", "fills": [{"element_id": ids["Second"][0],
                                                                            "value": "x2"}]})
        return click("Go")(req)
    result, reqs, d, agent = run(rule, driver=d)
    assert result.status == "passed", result.error
    assert [(a.element, a.value) for a in d.actions if a.kind != "assert"] == [("a", "x1"), ("b", "x2"), ("go", "")]
    assert len(reqs) == 2  # the second field came from the first answer (P9)


def test_without_a_model_a_goal_step_escalates_and_recorded_steps_still_run():
    d = _driver()
    d.open()
    ex = FlowExecutor(d, emit=lambda e: None, screenshots=False)
    recorded = Step("s1", Action("click"), selector="#save")
    assert ex.run_flow(Flow("f", "/form", (recorded,)), params={}).status == "passed"
    result = ex.run_flow(Flow("f", "/form", (GOAL,)), params={})
    assert result.status == "escalated" and "is a goal step and no model is configured" in result.error


def test_usage_event_type():
    e = ModelUsage("r", "f", "m", {"calls": 1}, 0.0, False)
    assert e.counters["calls"] == 1


def test_semantic_tie_break_in_the_engine():
    """A recorded step whose element now has a twin: the engine asks the model, the step passes by SEMANTIC."""
    page = [{"id": "o1", "role": "button", "text": "Open", "container": "Requests", "bbox": [600, 140, 80, 30]},
            {"id": "o2", "role": "button", "text": "Open", "container": "Requests", "bbox": [600, 180, 80, 30]}]
    d = FakeDriver(pages={"/form": page, "/done": DONE}, reactions={("/form", "o2", "click"): navigate("/done")})
    from core.domain import ElementDescriptor

    target = ElementDescriptor(tag="button", role="button", name="Open", text="Open", container="Requests")
    step = Step("s1", Action("click"), target=target, assertions=(Assertion("text_appears", "All done"),))

    def rule(req):
        ids = re.findall(r"^(c\d+) \|", last_user_text(req), re.M)
        return json.dumps({"element_id": ids[-1], "confidence": 0.9, "reason": "the lower one"})

    with ScriptedModelServer(rule=rule) as srv:
        setup = ModelSetup(ModelClient(ModelConfig(srv.base_url, "scripted", retries=0)), None,
                           ModelModel(base_url=srv.base_url, name="scripted"))
        agent = ModelAgent(setup)
        d.open()
        ex = FlowExecutor(d, emit=lambda e: None, deciders=(agent.decider,), screenshots=False)
        ex.tie_breaker = agent.tie_break
        result = ex.run_flow(Flow("f", "/form", (step,)), params={})
        setup.close()
    assert result.status == "passed", result.error
    res = result.steps[0].resolution
    assert res.strategy == "semantic" and "the model chose it" in res.reason and len(srv.requests) == 1
    assert acted(d) == ["o2"]


def test_unreachable_model_escalates_with_the_reason():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    d = _driver()
    d.open()
    setup = ModelSetup(ModelClient(ModelConfig(f"http://127.0.0.1:{port}/v1", "gone", retries=0)), None,
                       ModelModel(base_url=f"http://127.0.0.1:{port}/v1", name="gone"))
    agent = ModelAgent(setup, check_assertion=lambda a: d.check_assertion(a, None, a.expected))
    ex = FlowExecutor(d, emit=lambda e: None, deciders=(agent.decider,), screenshots=False)
    result = ex.run_flow(Flow("f", "/form", (GOAL,)), params={})
    setup.close()
    assert result.status == "escalated" and "unreachable" in result.error and f"127.0.0.1:{port}" in result.error
    assert acted(d) == [] and agent.counters()["errors"] == 1


def test_cache_expires_after_its_ttl():
    now = {"t": 0.0}
    with ScriptedModelServer() as srv:
        setup = ModelSetup(ModelClient(ModelConfig(srv.base_url, "s")), None,
                           ModelModel(base_url=srv.base_url, name="s"))
        agent = ModelAgent(setup, clock=lambda: now["t"])
        from core.plan.grounding import GroundAnswer

        agent.remember("state1", "goal", GroundAnswer(grid="A1", action="click", element_desc="x"))
        now["t"] = 299.0
        assert agent.cached("state1", "goal") is not None and agent.cached("state1", "other goal") is None
        now["t"] = 301.0  # P9: 5 minutes
        assert agent.cached("state1", "goal") is None
        setup.close()


def test_a_secret_goes_into_a_password_field_only():
    def leak(req):
        e, cell = _ids(last_user_text(req))["Note"]
        return json.dumps({"grid": cell, "element_id": e, "element_desc": "Note", "action": "input",
                           "value": "{pin}", "reason": "r"})
    with ScriptedModelServer(rule=leak) as srv:
        d = _driver()
        d.open()
        setup = ModelSetup(ModelClient(ModelConfig(srv.base_url, "s", retries=0)), None,
                           ModelModel(base_url=srv.base_url, name="s"))
        agent = ModelAgent(setup, check_assertion=lambda a: d.check_assertion(a, None, a.expected),
                           secret_names=lambda: {"pin"})
        ex = FlowExecutor(d, emit=lambda e: None, deciders=(agent.decider,), screenshots=False)
        result = ex.run_flow(Flow("f", "/form", (GOAL,)), params={"pin": "4242"})
        setup.close()
    assert result.status == "escalated" and "would type a secret into 'Note'" in result.error
    assert acted(d) == [] and "4242" not in json.dumps(srv.requests)


def test_targetless_scroll_then_the_goal():
    page = FORM + [{"id": "more", "role": "button", "text": "Go", "bbox": [400, 330, 100, 40]}]
    d = FakeDriver(pages={"/form": page[:2], "/done": DONE}, reactions={("/form", "save", "click"): navigate("/done")})
    answers = [json.dumps({"grid": "A1", "action": "scroll", "direction": "down", "element_desc": "", "reason": "look"})]

    def rule(req):
        return answers.pop(0) if answers else click("Go")(req)
    result, reqs, d, _ = run(rule, driver=d)
    assert result.status == "passed", result.error
    assert [a.kind for a in d.actions if a.kind != "assert"] == ["scroll", "click"]


def test_a_model_that_keeps_choosing_what_is_already_done_is_stopped_by_the_anti_loop_rule():
    page = [{"id": "note", "role": "textbox", "label": "Note", "value": "Family trip", "bbox": [140, 90, 200, 40]},
            {"id": "save", "role": "button", "text": "Go", "bbox": [400, 330, 100, 40]}]
    d = FakeDriver(pages={"/form": page, "/done": DONE}, reactions={("/form", "save", "click"): navigate("/done")})

    def same_fill(req):
        e, cell = _ids(last_user_text(req))["Note"]
        return json.dumps({"grid": cell, "element_id": e, "element_desc": "Note", "action": "input",
                           "value": "Family trip", "reason": "r", "confidence": 0.9})

    result, reqs, d, agent = run(same_fill, driver=d)
    assert result.status == "escalated" and ("P8" in result.error or "loop" in result.error.lower()), result.error
    assert len(reqs) <= 5 and acted(d) == []  # stopped by P8 (3 in 5), not by the 30-step budget
