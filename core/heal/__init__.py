"""Heals as reviewed proposals (issue 9 part 4, failure kind 9).

* :class:`HealBook` - the engine's side: reuse pending heals, record a run's
  heals as proposals, fill in selector-only steps (reported as filled in).
* :class:`HealReview` - list, show, accept, reject (CLI today, the studio later).
* :mod:`core.heal.flowfile` - write one step's target into a flow file in place.
* :mod:`core.heal.identity` - what makes two proposals the same one.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .flowfile import FlowEditError, set_step_target, unified_diff
from .identity import IDENTITY_FIELDS, identity, old_key, proposal_key

if TYPE_CHECKING:
    from .book import PENDING_HEAL, HealBook, new_descriptor
    from .review import (
        AlreadyReviewedError, FlowChangedError, HealEvidence, HealReview, HealReviewError, UnknownHealError,
    )

__all__ = [
    "HealBook", "PENDING_HEAL", "new_descriptor", "FlowEditError", "set_step_target", "unified_diff",
    "IDENTITY_FIELDS", "identity", "old_key", "proposal_key", "HealReview", "HealEvidence", "HealReviewError",
    "UnknownHealError", "AlreadyReviewedError", "FlowChangedError",
]


def __getattr__(name: str) -> Any:
    """:class:`HealBook` and :class:`HealReview` (and their names), imported on first use: the CLI's parser and
    ``steadyhand corrections`` load this package without the store and the locator chain behind them (about
    1.5 s of imports for every command)."""
    if name in ("HealBook", "PENDING_HEAL", "new_descriptor"):
        from . import book as module
    elif name in ("HealReview", "HealEvidence", "HealReviewError", "UnknownHealError", "AlreadyReviewedError",
                  "FlowChangedError"):
        from . import review as module
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(module, name)
