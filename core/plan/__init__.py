"""The decide chain: where the next action comes from (skill > flow step > model > human)."""
from .decider import RANK, DecideChain, DecideContext, Decider, Decision, NeedsApproval, NeedsHuman
from .flow_step import FlowStepDecider
from .human import HumanDecider

__all__ = ["RANK", "DecideChain", "DecideContext", "Decider", "Decision", "NeedsHuman", "NeedsApproval", "FlowStepDecider",
           "HumanDecider"]
