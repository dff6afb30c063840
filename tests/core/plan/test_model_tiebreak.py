"""SEMANTIC's tie-break by the model (R2): accepted above 0.7 only, never over a safety rule."""
from __future__ import annotations

import json
import re

from core.domain import BBox, Candidate, ElementDescriptor
from core.locate import resolve
from core.locate.tiebreak import TieChoice
from core.plan.agent import ModelAgent
from core.plan.config import ModelSetup
from core.plan.model import ModelClient, ModelConfig
from core.plan.scripted_server import ScriptedModelServer, last_user_text, texts_of
from core.project.schema import ModelModel


def row_button(row: int, **kw) -> Candidate:
    d = ElementDescriptor(tag="button", role="button", name="Open", text="Open",
                          bbox=BBox(600, 100 + 40 * row, 80, 30), container="Requests")
    return Candidate(ref=f"0:{row}", descriptor=d, **kw)


TARGET = ElementDescriptor(tag="button", role="button", name="Open", text="Open", container="Requests",
                           neighbours=("Request 2", "Pending"))
PAGE = [row_button(1), row_button(2), row_button(3)]


def _tb(ref: str, conf: float, calls: list | None = None):
    def tie_breaker(target, tied):
        if calls is not None:
            calls.append([c.ref for c in tied])
        return TieChoice(ref, conf, "its row says Request 2")
    return tie_breaker


def test_without_a_tie_breaker_the_chain_abstains():
    res = resolve(TARGET, PAGE)
    assert res.abstained and "tie" in res.reason


def test_choice_above_07_wins_among_the_tied():
    calls: list = []
    res = resolve(TARGET, PAGE, tie_breaker=_tb("0:2", 0.9, calls))
    assert (res.ref, res.strategy, res.abstained) == ("0:2", "semantic", False)
    assert "the model chose it (confidence 0.90" in res.reason
    assert sorted(calls[0]) == ["0:1", "0:2", "0:3"]


def test_choice_at_or_below_07_abstains():
    res = resolve(TARGET, PAGE, tie_breaker=_tb("0:2", 0.7))
    assert res.abstained and "needs above 0.7" in res.reason


def test_choice_outside_the_tied_abstains():
    res = resolve(TARGET, PAGE, tie_breaker=_tb("0:99", 0.99))
    assert res.abstained and "chose none of them" in res.reason


def test_never_over_a_safety_rule():
    # a disabled choice: the chain refuses it and never falls back to the runner-up (kind 3)
    page = [row_button(1), row_button(2, enabled=False), row_button(3)]
    res = resolve(TARGET, page, tie_breaker=_tb("0:2", 0.95))
    assert res.abstained and "disabled" in res.reason
    # an irreversible step needs a second independent level; the model is none
    res = resolve(TARGET, PAGE, tie_breaker=_tb("0:2", 0.95), irreversible=True)
    assert res.abstained and "irreversible" in res.reason


def _agent(srv):
    setup = ModelSetup(ModelClient(ModelConfig(srv.base_url, "scripted", retries=0)), None,
                       ModelModel(base_url=srv.base_url, name="scripted"))
    return ModelAgent(setup), setup


def test_model_tie_break_through_the_scripted_server():
    def rule(req):
        text = last_user_text(req)
        ids = re.findall(r"^(c\d+) \|", text, re.M)
        return json.dumps({"element_id": ids[1], "confidence": 0.88, "reason": "second row"})

    with ScriptedModelServer(rule=rule) as srv:
        agent, setup = _agent(srv)
        try:
            res = resolve(TARGET, PAGE, tie_breaker=agent.tie_break)
        finally:
            setup.close()
    assert not res.abstained and res.strategy == "semantic" and "model chose" in res.reason
    sent = "\n".join(texts_of(srv.requests[0]))
    assert "Recorded element: button | 'Open' | in 'Requests' | near 'Request 2, Pending'" in sent
    assert sent.count(" | button | 'Open' | enabled") == 3 and "<page_data>" in sent


def test_model_tie_break_unsure_or_broken_abstains():
    with ScriptedModelServer() as srv:
        srv.queue(json.dumps({"element_id": "c1", "confidence": 0.5, "reason": "maybe"}), "not json at all")
        agent, setup = _agent(srv)
        try:
            unsure = resolve(TARGET, PAGE, tie_breaker=agent.tie_break)
            broken = resolve(TARGET, PAGE, tie_breaker=agent.tie_break)
        finally:
            setup.close()
    assert unsure.abstained and "confidence 0.50" in unsure.reason
    assert broken.abstained and "tie" in broken.reason  # the model failed: abstain as without it
