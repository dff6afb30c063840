"""Upkeep of the skill library (K7): quality per use, the review area, merges, conflicts, the daily cap.

Defaults (K7), configurable in the project file's ``skills:`` section
(:class:`~core.domain.skill.SkillSettings`, :func:`settings_of`):

- quality +0.1 per success, -0.5 per failure (a failed precondition is a
  failure, K6), clamped to 0..1 (:func:`use_effect`, :func:`apply_use`);
- the review area holds approved skills with quality < 0.3 or unused for
  14 days (never used: counted from their approval / creation)
  (:func:`review_area`);
- only true duplicates are merged: two skills of one product and kind
  with the same trigger *and the same actions* (kinds, values, every
  target field), so retiring one changes nothing that fires.  The kept one
  is an approved skill before any that is not (a reviewed skill is never
  retired for an unreviewed one), then the one with more passed uses
  recorded in this store (never a file's counters), fewer failed ones, the
  older; the other is retired with a reason naming the kept one
  (:func:`merge_similar`, :func:`apply_merges`) and a person can bring it
  back (``skills approve --restore``).  Same action kinds are not enough:
  "click Cancel on the autofill popup" and "click Accept on the cookie
  banner" are both one click, and "click 'Type them myself'" and "click
  'Use saved details'" under one trigger do opposite things - the latter is
  a conflict for a person, never a merge;
- skills that hold at the same time are ordered by scope: the narrower
  (more of task type, URL prefix, title, component set) first, then quality,
  successes and id (:func:`resolve_conflicts`); skills with the same
  trigger and scope but different actions (an approved one and another
  approved one or a proposal) are a conflict the weekly review reports for
  a person (:func:`find_conflicts`), never merged;
- one skill space per product (the project's name): every function here
  takes or filters by one product;
- at most 50 new proposals per product in 24 hours, imports not counted
  (:func:`under_daily_cap`).

The weekly review is :func:`run_upkeep` (``steadyhand skills upkeep``).
Everything but :func:`apply_use`, :func:`apply_merges`, :func:`under_daily_cap`
and :func:`run_upkeep` is pure logic.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from rapidfuzz.distance import Indel

from core.progress import counted
from core.domain.skill import ElementCondition, Skill, SkillSettings, SkillTrigger
from core.locate.textsim import normalize

if TYPE_CHECKING:
    from core.project import Project
    from core.store.skills import SkillTable, SkillUseRecord

__all__ = [
    "SkillSettings", "settings_of", "UseEffect", "use_effect", "apply_use", "ReviewItem", "review_area",
    "Merge", "action_similarity", "trigger_key", "actions_key", "merge_similar", "apply_merges", "Conflict", "resolve_conflicts",
    "find_conflicts", "proposals_left", "under_daily_cap", "UpkeepReport", "run_upkeep", "CAP_WINDOW",
]

#: The window of the daily cap on new proposals (rolling, not a calendar day).
CAP_WINDOW = timedelta(hours=24)


def settings_of(project: "Project | Any") -> SkillSettings:
    """The :class:`SkillSettings` of a loaded project (its ``skills:`` section; defaults when absent)."""
    section = getattr(getattr(project, "settings", None), "skills", None)
    if section is None:
        return SkillSettings()
    return SkillSettings(**section.model_dump())


# --- quality per use ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class UseEffect:
    """What one use does to a skill: which counter goes up (``"success"``, ``"failure"``, ``""``) and the quality move."""

    count: str
    quality_delta: float


def use_effect(outcome: str, settings: SkillSettings | None = None) -> UseEffect:
    """The effect of a use's outcome (outcomes of :data:`core.store.skills.USE_OUTCOMES`).

    ``passed``: a success (+0.1); ``failed`` and ``precondition`` (the trigger
    did not hold when it was about to act: a negative sample, K6): a failure
    (-0.5); ``half`` (it did not fire) and ``denied`` (a deny rule kept the
    agent off an element): no move.

    Raises
    ------
    ValueError
        An unknown outcome.
    """
    s = settings or SkillSettings()
    if outcome == "passed":
        return UseEffect("success", s.success_delta)
    if outcome in ("failed", "precondition"):
        return UseEffect("failure", s.failure_delta)
    if outcome in ("half", "denied"):
        return UseEffect("", 0.0)
    raise ValueError(f"unknown skill use outcome {outcome!r}; expected passed, failed, precondition, half or denied")


def quality_after(quality: float, outcome: str, settings: SkillSettings | None = None) -> float:
    """``quality`` after one use of ``outcome``, clamped to 0..1 (what the store computes)."""
    return min(1.0, max(0.0, quality + use_effect(outcome, settings).quality_delta))


def apply_use(table: "SkillTable", skill_id: str, *, outcome: str, run_id: str, flow: str, step_index: int,
              step_id: str, reason: str = "", ms: float = 0.0,
              settings: SkillSettings | None = None) -> "SkillUseRecord":
    """Record one use and move the skill's counters and quality by :func:`use_effect`, in one transaction.

    ``ms`` is the use's wall time in ms.  Raises ``ValueError`` on an unknown outcome.
    """
    eff = use_effect(outcome, settings)
    return table.record_use(skill_id, run_id=run_id, flow=flow, step_index=step_index, step_id=step_id,
                            outcome=outcome, reason=reason, ms=ms, quality_delta=eff.quality_delta, count=eff.count)


# --- review area ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReviewItem:
    """An approved skill the weekly review shows a person, and why (one or both reasons)."""

    skill: Skill
    reasons: tuple[str, ...]


def _aware(dt: datetime | None) -> datetime | None:
    if dt is None:
        return None
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=timezone.utc)


def last_use(skill: Skill, uses: Iterable["SkillUseRecord"] = ()) -> datetime | None:
    """The latest of the skill's ``last_used_at`` and its uses' times (None: never used)."""
    times = [t for t in [_aware(skill.last_used_at)] + [_aware(u.at) for u in uses if u.skill_id == skill.id]
             if t is not None]
    return max(times) if times else None


def review_area(skills: Iterable[Skill], uses: Iterable["SkillUseRecord"], now: datetime,
                settings: SkillSettings | None = None) -> list[ReviewItem]:
    """Approved skills with quality below ``review_quality`` or unused for ``review_unused_days`` (K7).

    A skill never used counts from its creation (or last update, when later:
    an approval or edit restarts the clock).  Worst quality first.
    """
    s = settings or SkillSettings()
    uses = list(uses)
    now = _aware(now) or datetime.now(timezone.utc)
    limit = timedelta(days=s.review_unused_days)
    out: list[ReviewItem] = []
    for sk in skills:
        if sk.state != "approved":
            continue
        reasons: list[str] = []
        if sk.quality < s.review_quality:
            reasons.append(f"quality {sk.quality:.2f} below {s.review_quality:.2f}")
        last = last_use(sk, uses)
        since = last or max((t for t in (_aware(sk.created_at), _aware(sk.updated_at)) if t is not None),
                            default=None)
        if since is not None and now - since > limit:
            days = (now - since).days
            reasons.append(f"unused for {days} days" if last else f"never used in {days} days")
        if reasons:
            out.append(ReviewItem(sk, tuple(reasons)))
    out.sort(key=lambda r: (r.skill.quality, r.skill.id))
    return out


# --- merges ---------------------------------------------------------------------------------------------


def action_similarity(a: Skill, b: Skill) -> float:
    """Similarity 0..1 of two skills' action-type sequences (Indel normalized similarity over the kinds)."""
    if not a.action_types and not b.action_types:
        return 1.0
    return float(Indel.normalized_similarity(list(a.action_types), list(b.action_types)))


def _cond_key(c: ElementCondition | None) -> tuple[str, ...] | None:
    if c is None:
        return None
    return (c.role, normalize(c.name), normalize(c.label), normalize(c.text), normalize(c.placeholder),
            normalize(c.test_id), "dialog" if c.in_dialog else "")


def trigger_key(t: SkillTrigger) -> tuple[Any, ...]:
    """A trigger with its texts normalised and its condition lists as sets: equal keys hold on the same pages."""
    return (frozenset(_cond_key(c) for c in t.required), frozenset(_cond_key(c) for c in t.absent),
            t.url_pattern, normalize(t.title), t.dialog, normalize(t.dialog_name), t.step_action,
            _cond_key(t.step_target))


@dataclass(frozen=True)
class Merge:
    """``dropped`` is a duplicate of ``kept``: the same trigger and the same actions (``similarity`` of the
    action types: 1.0)."""

    kept: Skill
    dropped: Skill
    similarity: float

    @property
    def reason(self) -> str:
        return f"merged into {self.kept.id} (same trigger and the same actions: a duplicate)"


def _passes(uses: Mapping[str, Mapping[str, int]] | None, s: Skill) -> tuple[int, int]:
    counts = (uses or {}).get(s.id, {})
    return counts.get("passed", 0), counts.get("failed", 0) + counts.get("precondition", 0)


def _keep_rank(s: Skill, uses: Mapping[str, Mapping[str, int]] | None = None) -> tuple[Any, ...]:
    created = _aware(s.created_at) or datetime.max.replace(tzinfo=timezone.utc)
    passed, failed = _passes(uses, s)
    return (s.state != "approved", -passed, failed, created, s.id)


def merge_similar(skills: Iterable[Skill], settings: SkillSettings | None = None,
                  uses: Mapping[str, Mapping[str, int]] | None = None) -> list[Merge]:
    """The merges the weekly review makes among approved and proposed skills: true duplicates only.

    Two skills are merged when they are of one product and kind, their
    triggers are the same (:func:`trigger_key`) and their actions are the
    same - kinds, values and every target field (:func:`actions_key`) - so
    retiring one changes nothing that fires.  Skills with the same trigger
    and different actions are never merged: that is a conflict for a person
    (:func:`find_conflicts`).  The one kept is an approved skill before any
    that is not (a reviewed skill is never retired for an unreviewed one),
    then the one with more passed uses recorded in this store (``uses``:
    :meth:`core.store.skills.SkillTable.use_counts`; a file's counters count
    for nothing), fewer failed ones, the older, the id.
    ``settings.merge_similarity`` is kept as a floor on the action types'
    similarity (same actions: 1.0).
    """
    s = settings or SkillSettings()
    groups: dict[tuple[Any, ...], list[Skill]] = {}
    live = (x for x in skills if x.state in ("approved", "proposed"))
    for x in sorted(live, key=lambda k: _keep_rank(k, uses)):
        groups.setdefault((x.scope.product, x.kind, trigger_key(x.trigger), actions_key(x)), []).append(x)
    merges: list[Merge] = []
    for group in groups.values():  # best first in each group
        keep = group[0]
        for other in group[1:]:
            sim = action_similarity(keep, other)
            if sim >= s.merge_similarity:
                merges.append(Merge(keep, other, sim))
    merges.sort(key=lambda m: _keep_rank(m.kept, uses))
    return merges


def apply_merges(table: "SkillTable", merges: Sequence[Merge]) -> list[Skill]:
    """Retire each merge's dropped skill with the reason naming the kept one (its uses stay); returns them.

    A retired skill is brought back by a person: :func:`core.skills.library.approve` with ``restore``
    (``steadyhand skills approve --restore``)."""
    out = []
    for m in merges:
        out.append(table.set_state(m.dropped.id, "retired", reason=m.reason, expect=("approved", "proposed")))
    return out


# --- conflicts ------------------------------------------------------------------------------------------


def _scope_rank(s: Skill) -> tuple[Any, ...]:
    return (-s.scope.width, -s.quality, -s.successes, s.id)


def resolve_conflicts(candidates: Iterable[Skill]) -> list[Skill]:
    """Skills whose triggers hold at one decision, in the order to try them: narrower scope first (K7).

    Ties: the better quality, then more successes, then the id (stable).
    """
    return sorted(candidates, key=_scope_rank)


@dataclass(frozen=True)
class Conflict:
    """Skills with the same trigger and scope width that do different things; a person decides.

    ``winner`` is the one that fires first (an approved one before a proposal, then
    :func:`resolve_conflicts`); ``losers`` the others.  Nothing is merged or retired for it.
    """

    winner: Skill
    losers: tuple[Skill, ...]


def actions_key(s: Skill) -> tuple[Any, ...]:
    """A skill's actions with their texts normalised: kind, value and every target field (equal keys do
    the same thing)."""
    return tuple((a.action.kind, normalize(a.action.value), a.target.tag, a.target.role, normalize(a.target.name),
                  normalize(a.target.label), normalize(a.target.text), normalize(a.target.placeholder),
                  normalize(a.target.test_id), normalize(a.target.title), normalize(a.target.alt),
                  a.target.anchor) for a in s.actions)


def find_conflicts(skills: Iterable[Skill]) -> list[Conflict]:
    """Groups of ``do`` skills of one product (approved, and proposals beside them) with the same trigger
    and the same scope width but different actions: scope cannot tell them apart, so the review shows them
    for a person (the winner fires until a person decides; a proposal does not fire).  A group of
    proposals only is not a conflict yet (nothing of it fires)."""
    groups: dict[tuple[Any, ...], list[Skill]] = {}
    for s in skills:
        if s.state in ("approved", "proposed") and s.kind == "do":
            groups.setdefault((s.scope.product, trigger_key(s.trigger), s.scope.width), []).append(s)
    out = []
    for group in groups.values():
        if any(s.state == "approved" for s in group) and len({actions_key(s) for s in group}) > 1:
            ranked = sorted(resolve_conflicts(group), key=lambda s: s.state != "approved")
            out.append(Conflict(ranked[0], tuple(ranked[1:])))
    out.sort(key=lambda c: c.winner.id)
    return out


# --- daily cap ------------------------------------------------------------------------------------------


def proposals_left(table: "SkillTable", product: str, settings: SkillSettings | None = None,
                   now: datetime | None = None) -> int:
    """How many more proposals ``product`` may get in the 24 hours before ``now`` (imports not counted)."""
    s = settings or SkillSettings()
    now = _aware(now) or datetime.now(timezone.utc)
    return max(0, s.daily_proposals - table.created_since(product, now - CAP_WINDOW))


def under_daily_cap(table: "SkillTable", product: str, settings: SkillSettings | None = None,
                    now: datetime | None = None) -> bool:
    """True while ``product`` has had fewer than ``daily_proposals`` new proposals in the last 24 hours (K7)."""
    return proposals_left(table, product, settings, now) > 0


# --- the weekly review ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class UpkeepReport:
    """What one upkeep pass found (and, applied, did): merges, the review area, conflicts."""

    product: str
    merges: tuple[Merge, ...]
    review: tuple[ReviewItem, ...]
    conflicts: tuple[Conflict, ...]
    applied: bool

    def lines(self) -> list[str]:
        """Human summary, one line per finding."""
        verb = "merged" if self.applied else "would merge"
        out = [f"skill space {self.product!r}: {counted(len(self.merges), 'merge')}, {len(self.review)} in the review "
               f"area, {counted(len(self.conflicts), 'conflict')}"]
        out += [f"{verb} {m.dropped.id} ({m.dropped.state}) into {m.kept.id} ({m.kept.state}): same trigger "
                f"and the same actions" for m in self.merges]
        out += [f"review {r.skill.id}: {'; '.join(r.reasons)} - {r.skill.description}" for r in self.review]
        out += [f"conflict for a person: {c.winner.id} ({c.winner.state}) and "
                f"{', '.join(f'{x.id} ({x.state})' for x in c.losers)} have the same trigger and scope but do "
                f"different things; nothing was merged (retire or edit one)" for c in self.conflicts]
        return out

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "product": self.product, "applied": self.applied,
            "merges": [{"kept": m.kept.id, "dropped": m.dropped.id, "similarity": round(m.similarity, 3)}
                       for m in self.merges],
            "review": [{"id": r.skill.id, "reasons": list(r.reasons), "quality": r.skill.quality}
                       for r in self.review],
            "conflicts": [{"winner": c.winner.id, "losers": [x.id for x in c.losers],
                           "states": {x.id: x.state for x in (c.winner, *c.losers)}} for c in self.conflicts],
        }


def run_upkeep(table: "SkillTable", product: str, settings: SkillSettings | None = None, *,
               now: datetime | None = None, apply: bool = True) -> UpkeepReport:
    """The weekly review of one skill space: merge (applied when ``apply``), then the review area and conflicts.

    The review area and conflicts are computed after the merges, over what is left.
    """
    s = settings or SkillSettings()
    now = _aware(now) or datetime.now(timezone.utc)
    skills = table.list(product=product)
    merges = merge_similar(skills, s, table.use_counts())  # this store's uses, never a file's counters
    if apply:
        apply_merges(table, merges)
        skills = table.list(product=product)
    else:
        dropped = {m.dropped.id for m in merges}
        skills = [x for x in skills if x.id not in dropped]
    # last_used_at is moved by every recorded use (SkillTable.record_use): no use rows need reading
    return UpkeepReport(product, tuple(merges), tuple(review_area(skills, (), now, s)),
                        tuple(find_conflicts(skills)), apply)
