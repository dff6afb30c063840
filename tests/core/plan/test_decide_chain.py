"""The decide chain asks in the fixed order skill > flow > model > human, whatever the order given."""
from __future__ import annotations

import pytest

from core.domain import Action, Escalation, Flow, Observation, StateSignature, Step
from core.plan import RANK, DecideChain, DecideContext, Decision, FlowStepDecider, HumanDecider, NeedsHuman


def observation() -> Observation:
    sig = StateSignature(url="http://127.0.0.1/", title="t", interactive_count=0, modal_count=0, text_digest="",
                         elements_digest="", values_digest="", focus="", loading=False, error_count=0, digest="d")
    return Observation(url="http://127.0.0.1/", title="t", signature=sig, viewport=(1280, 800),
                       device_pixel_ratio=1.0, scroll=(0.0, 0.0), candidates=(), visible_text="")


FLOW = Flow("f", "/", (Step("s1", Action("click")), Step("s2", Action("back"))))


class Fixed:
    def __init__(self, name: str, answer: bool = True) -> None:
        self.name = name
        self.answer = answer
        self.asked = 0

    def decide(self, ctx: DecideContext) -> Decision | None:
        self.asked += 1
        return Decision(Step(f"{self.name}-{ctx.index}", Action("wait")), self.name) if self.answer else None  # type: ignore[arg-type]


def ctx(index: int = 0) -> DecideContext:
    return DecideContext(FLOW, index, observation())


def test_order_is_fixed_by_rank_not_by_registration() -> None:
    chain = DecideChain([Fixed("human"), Fixed("model"), FlowStepDecider(), Fixed("skill")])
    assert chain.names == ("skill", "flow", "model", "human")
    assert chain.names == tuple(sorted(RANK, key=RANK.get))  # type: ignore[arg-type]
    assert chain.decide(ctx()).source == "skill"


def test_a_decider_that_passes_hands_over_to_the_next() -> None:
    skill, model = Fixed("skill", answer=False), Fixed("model")
    chain = DecideChain([skill, FlowStepDecider(), model])
    d = chain.decide(ctx(1))
    assert (d.source, d.step.id, skill.asked, model.asked) == ("flow", "s2", 1, 0)
    past_the_end = chain.decide(ctx(2))  # the flow step decider passes past the end
    assert past_the_end.source == "model" and model.asked == 1


def test_the_human_decider_never_guesses() -> None:
    asked: list[Escalation] = []
    chain = DecideChain([HumanDecider(asked.append)])
    with pytest.raises(NeedsHuman, match="no decider chose an action for step 1 'click'"):
        chain.decide(ctx())
    with pytest.raises(NeedsHuman, match="no decider chose an action at step 1"):
        DecideChain([]).decide(ctx())


def test_a_later_decider_of_the_same_name_replaces_the_first_and_unknown_names_are_refused() -> None:
    first, second = Fixed("model"), Fixed("model")
    chain = DecideChain([first]).with_decider(second)
    assert chain.get("model") is second and len(chain.deciders) == 1
    with pytest.raises(ValueError, match="unknown decider 'oracle'"):
        DecideChain([Fixed("oracle")])
