"""Heals as reviewed proposals (issue 9 part 4, failure kind 9).

* :class:`HealBook` - the engine's side: reuse pending heals, record a run's
  heals as proposals, fill in selector-only steps (reported as filled in).
* :class:`HealReview` - list, show, accept, reject (CLI today, the studio later).
* :mod:`core.heal.flowfile` - write one step's target into a flow file in place.
* :mod:`core.heal.identity` - what makes two proposals the same one.
"""
from .book import PENDING_HEAL, HealBook, new_descriptor
from .flowfile import FlowEditError, set_step_target, unified_diff
from .identity import IDENTITY_FIELDS, identity, old_key, proposal_key
from .review import (
    AlreadyReviewedError, FlowChangedError, HealEvidence, HealReview, HealReviewError, UnknownHealError,
)

__all__ = [
    "HealBook", "PENDING_HEAL", "new_descriptor", "FlowEditError", "set_step_target", "unified_diff",
    "IDENTITY_FIELDS", "identity", "old_key", "proposal_key", "HealReview", "HealEvidence", "HealReviewError",
    "UnknownHealError", "AlreadyReviewedError", "FlowChangedError",
]
