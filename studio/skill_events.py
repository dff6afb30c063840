"""How the studio says what the skill runtime and the learner did: one line per skill event (K6, K8).

The events are the engine's (:mod:`core.engine.events`: ``SkillConsidered``,
``SkillFired``, ``SkillFinished``, ``SkillProposed``, ``SkillDropped``);
:func:`describe_skill_event` turns one into the event log's line, e.g.
``skill "Cancel the popup" fired at step 3 (action 1 of 1)``.
An engine without these event classes simply never sends them.
"""
from __future__ import annotations

from typing import Any

from core.engine import events as _events

__all__ = ["SKILL_EVENT_NAMES", "skill_event_classes", "describe_skill_event", "is_skill_event"]

#: The skill events, by class name.
SKILL_EVENT_NAMES = ("SkillConsidered", "SkillFired", "SkillFinished", "SkillProposed", "SkillDropped")


def skill_event_classes() -> tuple[type, ...]:
    """The skill event classes the engine defines (some may not exist in an older engine)."""
    return tuple(c for c in (getattr(_events, n, None) for n in SKILL_EVENT_NAMES) if isinstance(c, type))


def is_skill_event(event: Any) -> bool:
    """True for one of the engine's skill events."""
    classes = skill_event_classes()
    return bool(classes) and isinstance(event, classes)


def _action_of(event: Any) -> str:
    n = getattr(event, "actions", 0)
    if isinstance(n, int) and n:
        return f" (action {int(getattr(event, 'action_index', 0)) + 1} of {n})"
    return ""


def describe_skill_event(event: Any) -> str | None:
    """The event log's line for a skill event; None for any other event."""
    if not is_skill_event(event):
        return None
    name = type(event).__name__
    step = f"step {int(getattr(event, 'index', -1)) + 1}"
    desc = str(getattr(event, "description", "") or getattr(event, "skill_id", ""))
    if name == "SkillFired":
        return f"skill \u201c{desc}\u201d fired at {step}{_action_of(event)}"
    if name == "SkillFinished":
        reason = getattr(event, "reason", "")
        return (f"skill {event.skill_id} {getattr(event, 'outcome', '')} at {step} in "
                f"{float(getattr(event, 'ms', 0.0)):,.0f} ms" + (f": {reason}" if reason else ""))
    if name == "SkillConsidered":
        holds = "holds" if getattr(event, "holds", False) else "half holds" if getattr(event, "half", False) \
            else "does not hold"
        reason = getattr(event, "reason", "")
        return f"skill {event.skill_id} considered at {step}: trigger {holds}" + (f" ({reason})" if reason else "")
    if name == "SkillProposed":
        rate = float(getattr(event, "pass_rate", 0.0))
        return (f"skill proposed from {getattr(event, 'flow', '')}: \u201c{desc}\u201d (validation {rate:.0%}) "
                "\u2014 in the review queue")
    reason = getattr(event, "reason", "")
    return f"no skill learnt from {getattr(event, 'flow', '')}: {reason}"
