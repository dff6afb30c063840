"""Review operations of the skill library: approve, reject, retire, edit (K1, K7, issue "skill review").

The rules, in one place for the command line and the studio:

- **approve** moves a ``proposed`` skill to ``approved`` (it fires from the
  next decision of any run: the runtime reads the library each run).  It
  needs a validation that passed: the failure reproduced, at least one
  replay case, and a pass rate of at least ``SkillSettings.validation_threshold``
  (0.6, the bar of validation itself).  ``force=True`` approves without that (a skill made or imported by
  hand has no replay yet) and says so in the review reason.  Legality is
  never forced: a skill that a skill file could not hold (an action outside
  the engine's own, a target with an XPath, CSS path or coordinates, an
  undeclared placeholder, a secret in clear, given or known to the store; :func:`core.skills.files.check_skill`)
  is refused.  ``irreversible_ok=True`` approves it to act on an
  irreversible step, and only on the step(s) it was learnt on
  (``provenance.step_ids``), so a skill without them cannot have it.
- **reject** a ``proposed`` skill, with a reason (required).
- **retire** an ``approved`` (or still ``proposed``) skill, with a reason
  (required); it stops firing at once - the runtime reads the state at each
  run, and a retire during a run is seen at the next decision.
- **edit** replaces a ``proposed`` or ``approved`` skill by a person's
  version: id, counters, quality, provenance, validation and times are kept
  from the stored one; when an approved skill's behaviour changes (trigger,
  actions, verify, recovery, scope, kind, limits) it goes back to
  ``proposed`` and loses ``irreversible_ok`` - what fires has been reviewed
  as it is.

Every operation raises :class:`~core.store.skills.SkillConflictError` (a
:class:`RuntimeError`) when the skill is not in a state it may leave that way,
:class:`KeyError` for an unknown id and :class:`ValueError` for a missing
reason or an illegal skill.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Iterable

from core.domain.skill import Skill, SkillSettings
from core.store.skills import SkillConflictError, SkillTable

from .files import check_skill

__all__ = ["approve", "reject", "retire", "edit", "approval_problem", "BEHAVIOUR_FIELDS"]

#: Fields whose change makes an edited approved skill a proposal again (an action's note does not).
BEHAVIOUR_FIELDS = ("kind", "trigger", "actions", "verify", "recovery", "scope", "params", "max_steps", "max_ms")


def _behaviour(skill: Skill, name: str) -> object:
    if name == "actions":  # an action's note is words for people, not behaviour
        return tuple((a.action, a.target) for a in skill.actions)
    return getattr(skill, name)


def _get(table: SkillTable, skill_id: str) -> Skill:
    skill = table.get(skill_id)
    if skill is None:
        raise KeyError(f"no skill {skill_id!r} in this project")
    return skill


def _reason(reason: str, what: str) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise ValueError(f"{what} needs a reason (kept with the skill)")
    return reason


def approval_problem(skill: Skill, settings: SkillSettings | None = None) -> str:
    """Why ``skill``'s validation does not allow approving it without ``force``, or "" when it does."""
    settings = settings or SkillSettings()
    v = skill.validation
    if v.cases == 0:
        return "it was never replayed (no validation case)"
    if not v.reproduced:
        return "the failure it comes from did not reproduce (a transient failure never becomes a skill)"
    if v.pass_rate < settings.validation_threshold:
        return (f"its validation pass rate {v.pass_rate:.0%} ({v.passed}/{v.cases}) is below "
                f"{settings.validation_threshold:.0%}")
    return ""


def approve(table: SkillTable, skill_id: str, *, irreversible_ok: bool = False, force: bool = False,
            settings: SkillSettings | None = None, secrets: Iterable[str] = ()) -> Skill:
    """Approve a proposed skill (see the module docstring); returns it as stored.

    Raises
    ------
    KeyError
        Unknown id.
    SkillConflictError
        Not ``proposed``; or its validation did not pass and ``force`` is False.
    ValueError
        The skill is not legal, or ``irreversible_ok`` without the step it was learnt on.
    """
    skill = _get(table, skill_id)
    if skill.state != "proposed":
        raise SkillConflictError(f"skill {skill_id} is {skill.state}; only a proposed skill can be approved")
    illegal = check_skill(skill, secrets=secrets, redactor=table.store.redactor)
    if illegal:
        raise ValueError(f"skill {skill_id} cannot be approved: {illegal}")
    if irreversible_ok and not skill.provenance.step_ids:
        raise ValueError(f"skill {skill_id} names no step it was learnt on; it cannot be approved for an "
                         f"irreversible step")
    problem = approval_problem(skill, settings)
    if problem and not force:
        raise SkillConflictError(f"skill {skill_id} cannot be approved: {problem}; approve with force to "
                                 f"take it anyway")
    reason = f"approved without a passing validation: {problem}" if problem else ""
    if irreversible_ok != skill.irreversible_ok:
        table.put(replace(skill, irreversible_ok=irreversible_ok))
    return table.set_state(skill_id, "approved", reason=reason, expect=("proposed",))


def reject(table: SkillTable, skill_id: str, reason: str) -> Skill:
    """Reject a proposed skill with a reason; returns it as stored.

    Raises
    ------
    KeyError, SkillConflictError, ValueError
        Unknown id; not ``proposed``; an empty reason.
    """
    why = _reason(reason, "rejecting a skill")
    skill = _get(table, skill_id)
    if skill.state != "proposed":
        hint = "; retire it instead" if skill.state == "approved" else ""
        raise SkillConflictError(f"skill {skill_id} is {skill.state}; only a proposed skill can be rejected{hint}")
    return table.set_state(skill_id, "rejected", reason=why, expect=("proposed",))


def retire(table: SkillTable, skill_id: str, reason: str) -> Skill:
    """Retire an approved (or proposed) skill with a reason: it stops firing at once; returns it as stored.

    Raises
    ------
    KeyError, SkillConflictError, ValueError
        Unknown id; already rejected or retired; an empty reason.
    """
    why = _reason(reason, "retiring a skill")
    skill = _get(table, skill_id)
    if skill.state not in ("approved", "proposed"):
        raise SkillConflictError(f"skill {skill_id} is {skill.state} already; it does not fire")
    return table.set_state(skill_id, "retired", reason=why, expect=("approved", "proposed"))


def edit(table: SkillTable, skill: Skill, *, secrets: Iterable[str] = ()) -> Skill:
    """Store a person's edit of a proposed or approved skill (see the module docstring); returns it as stored.

    Raises
    ------
    KeyError
        No skill with ``skill.id``.
    SkillConflictError
        The stored skill is rejected or retired.
    ValueError
        The edited skill is not legal (:func:`core.skills.files.check_skill`).
    """
    old = _get(table, skill.id)
    if old.state not in ("proposed", "approved"):
        raise SkillConflictError(f"skill {skill.id} is {old.state}; only a proposed or approved skill can be edited")
    illegal = check_skill(skill, secrets=secrets, redactor=table.store.redactor)
    if illegal:
        raise ValueError(f"skill {skill.id} cannot be stored: {illegal}")
    changed = any(_behaviour(skill, f) != _behaviour(old, f) for f in BEHAVIOUR_FIELDS)
    product = old.scope.product  # one skill space per product: an edit does not move a skill to another
    state, irreversible, why = old.state, skill.irreversible_ok and old.irreversible_ok, old.review_reason
    if old.state == "approved" and changed:
        state, irreversible, why = "proposed", False, "edited after approval: review it again"
    new = replace(skill, scope=replace(skill.scope, product=product), state=state, irreversible_ok=irreversible,
                  review_reason=why, successes=old.successes, failures=old.failures, quality=old.quality,
                  provenance=old.provenance, validation=old.validation, last_used_at=old.last_used_at,
                  created_at=old.created_at, schema_version=old.schema_version)
    stored, _ = table.put(new, replace_approved=True)
    return stored
