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
  undeclared placeholder, a secret in clear, given or known to the store, an action typing a secret
  parameter; :func:`core.skills.files.check_skill`) is refused, and so is one that breaks the safety bar
  of validation (:func:`core.skills.validate.legality`: a control that may confirm, delete or submit,
  whatever the action kind, that the trigger does not name).  ``irreversible_ok=True`` approves it to act on an
  irreversible step, and only on the step(s) it was learnt on
  (``provenance.step_ids``), so a skill without them cannot have it.
- **reject** a ``proposed`` skill, with a reason (required).
- **retire** an ``approved`` (or still ``proposed``) skill, with a reason
  (required); it stops firing at once - the runtime reads the state at each
  run, and a retire during a run is seen at the next decision.
- **restore** (``approve`` with ``restore=True``, ``skills approve --restore``)
  approves a ``retired`` skill again - a skill an upkeep merge or a person
  retired - under the same rules as a proposed one (validation or ``force``,
  legality); its review reason says it was restored and why it had been
  retired.  A rejected skill is never restored (import or make a new one).
- **edit** replaces a ``proposed`` or ``approved`` skill by a person's
  version: id, counters, quality, provenance, validation and times are kept
  from the stored one; when an approved skill's behaviour changes (trigger,
  actions, verify, recovery, scope, kind, limits) it goes back to
  ``proposed`` and loses ``irreversible_ok`` - what fires has been reviewed
  as it is.

The command line and the studio reach these through one
:class:`ReviewContext` (:func:`review_context`): the project's skill space,
its ``skills:`` settings (the approval threshold), its secret values and
secret parameter names, and a store opened with the project's redactor -
so a review in the studio refuses exactly what the command line refuses.

Every operation raises :class:`~core.store.skills.SkillConflictError` (a
:class:`RuntimeError`) when the skill is not in a state it may leave that way,
:class:`KeyError` for an unknown id and :class:`ValueError` for a missing
reason or an illegal skill.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Mapping

from core.domain.skill import Skill, SkillSettings
from core.secrets import Redactor
from core.store.skills import SkillConflictError, SkillTable

from .files import NOT_VALIDATED_HERE, check_skill
from .validate import legality
from .runtime import runtime_problem

__all__ = ["reviewed_here", "approve", "reject", "retire", "edit", "approval_problem", "KIND_CASES", "BEHAVIOUR_FIELDS", "ReviewContext",
           "review_context", "secret_values", "secret_names"]

#: Fields whose change makes an edited approved skill a proposal again (an action's note does not).
BEHAVIOUR_FIELDS = ("kind", "trigger", "actions", "verify", "recovery", "scope", "params", "max_steps", "max_ms")


def _behaviour(skill: Skill, name: str) -> object:
    if name == "actions":  # an action's note is words for people, not behaviour
        return tuple((a.action, a.target) for a in skill.actions)
    return getattr(skill, name)


def reviewed_here(skill: Skill) -> bool:
    """False for an imported skill no person of this project has reviewed: one still proposed, a state
    kept from its file (``import --keep-state``), or an approved one that arrived approved (an import made
    before imports arrived proposed: its validation is the file's).  True for everything else."""
    if skill.provenance.source != "import":
        return True
    if skill.state == "proposed" or skill.review_reason.startswith("kept from "):
        return False
    if skill.state == "approved":
        return NOT_VALIDATED_HERE in skill.validation.reasons  # approved here: imports arrive not validated
    return True


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


#: Distinct failures of its kind a skill of a popup kind is replayed on before approval (seed 001 K5: 3-5 cases).
KIND_CASES = 3


def approval_problem(skill: Skill, settings: SkillSettings | None = None) -> str:
    """Why ``skill``'s validation does not allow approving it without ``force``, or "" when it does."""
    settings = settings or SkillSettings()
    v = skill.validation
    if v.cases == 0 and NOT_VALIDATED_HERE in v.reasons:
        return "it was imported and not validated here (a file's own validation is not trusted)"
    if v.cases == 0:
        return "it was never replayed (no validation case)"
    if not v.reproduced:
        return "the failure it comes from did not reproduce (a transient failure never becomes a skill)"
    if skill.trigger.popup and v.cases < KIND_CASES:
        return (f"a skill of a popup kind is replayed on at least {KIND_CASES} distinct failures of its kind before "
                f"approval; it was on {v.cases}")
    if v.pass_rate < settings.validation_threshold:
        return (f"its validation pass rate {v.pass_rate:.0%} ({v.passed}/{v.cases}) is below "
                f"{settings.validation_threshold:.0%}")
    return ""


def approve(table: SkillTable, skill_id: str, *, irreversible_ok: bool = False, force: bool = False,
            settings: SkillSettings | None = None, secrets: Iterable[str] = (), secret_names: Iterable[str] = (),
            restore: bool = False) -> Skill:
    """Approve a proposed skill - or, with ``restore``, a retired one or an approved one held below the review
    quality (it stopped firing, K7; renewed, its quality restarts at its validation pass rate, at least 0.5)
    (see the module docstring); returns it as stored.

    Raises
    ------
    KeyError
        Unknown id.
    SkillConflictError
        Not ``proposed`` (nor ``retired`` with ``restore``); or its validation did not pass and ``force``
        is False.
    ValueError
        The skill is not legal, or ``irreversible_ok`` without the step it was learnt on.
    """
    skill = _get(table, skill_id)
    review_quality = (settings or SkillSettings()).review_quality
    held = skill.state == "approved" and skill.quality < review_quality  # it stopped firing (K7): a person may renew it
    allowed = ("proposed", "retired", *(("approved",) if held else ())) if restore else ("proposed",)
    if skill.state not in allowed:
        hint = "; approve --restore brings a retired skill back" if skill.state == "retired" else ""
        raise SkillConflictError(f"skill {skill_id} is {skill.state}; only a proposed skill can be approved"
                                 + (" (or a retired one restored)" if restore else hint))
    illegal = (check_skill(skill, secrets=secrets, redactor=table.store.redactor, secret_names=secret_names)
               or "; ".join(legality(replace(skill, irreversible_ok=False)))  # the safety bar of validation too
               or runtime_problem(skill, secret_names=secret_names))  # and the run's: what it would refuse at once
    if illegal:
        raise ValueError(f"skill {skill_id} cannot be approved: {illegal}")
    if irreversible_ok and not skill.provenance.step_ids:
        raise ValueError(f"skill {skill_id} names no step it was learnt on; it cannot be approved for an "
                         f"irreversible step")
    problem = approval_problem(skill, settings)
    if problem and not force:
        raise SkillConflictError(f"skill {skill_id} cannot be approved: {problem}; to take it anyway: "
                                 f"steadyhand skills approve PROJECT {skill_id} --force")
    reason = f"approved without a passing validation: {problem}" if problem else ""
    if skill.state == "retired":
        was = f" (retired: {skill.review_reason})" if skill.review_reason else ""
        reason = "; ".join(x for x in (f"restored by a person{was}", reason) if x)
    if held:  # renewed: its quality starts again where a validated skill starts (K7), at least the neutral 0.5
        reason = "; ".join(x for x in (f"renewed by a person (quality {skill.quality:.2f} was below "
                                       f"{review_quality:.2f})", reason) if x)
        table.put(replace(skill, quality=max(skill.validation.pass_rate, 0.5)), replace_approved=True)
        skill = _get(table, skill_id)
    if irreversible_ok != skill.irreversible_ok:
        table.put(replace(skill, irreversible_ok=irreversible_ok), replace_approved=True)
    return table.set_state(skill_id, "approved", reason=reason, expect=allowed)


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


def edit(table: SkillTable, skill: Skill, *, secrets: Iterable[str] = (), secret_names: Iterable[str] = ()) -> Skill:
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
    illegal = check_skill(skill, secrets=secrets, redactor=table.store.redactor, secret_names=secret_names)
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


# --- one context for the command line and the studio --------------------------------------------------------


def secret_names(project: Any) -> tuple[str, ...]:
    """Names of the secrets the project and its flows declare (``secrets:`` of the project and flow files)."""
    names = list(project.settings.secrets)
    for flow in project.flows.values():
        names += [n for n in flow.secrets if n not in names]
    return tuple(names)


def secret_values(project: Any) -> dict[str, str]:
    """Declared secrets of the project and its flows that have a value (environment, keyring, default)."""
    from core.secrets import MissingSecretError, resolve_secret  # noqa: PLC0415

    out: dict[str, str] = {}
    for name in secret_names(project):
        spec = project.settings.secrets.get(name)
        try:
            out[name] = resolve_secret(name, project=project.name, default=spec.default if spec else None)
        except MissingSecretError:
            continue
    return out


@dataclass(frozen=True)
class ReviewContext:
    """What every review of one project's skills uses: its skill space, settings and secrets.

    ``product`` is the project's name (its skill space); ``settings`` its
    ``skills:`` section; ``secrets`` maps declared secret names to their
    values (those that have one); ``names`` are every declared secret name.
    Build it with :func:`review_context`.
    """

    root: Path
    product: str
    settings: SkillSettings
    secrets: Mapping[str, str] = field(default_factory=dict)
    names: tuple[str, ...] = ()

    @property
    def redactor(self) -> Redactor:
        """The project's redactor (its secret values)."""
        return Redactor(self.secrets.values())

    def open_store(self, *, read_only: bool = False) -> Any:
        """The project's store, opened with the project's redactor (caller closes it).

        Raises ``core.store.StoreError`` / ``OSError`` as :meth:`core.store.Store.open`."""
        from core.store import Store, store_path  # noqa: PLC0415

        return Store.open(store_path(self.root), redactor=self.redactor, read_only=read_only)

    def approval_problem(self, skill: Skill) -> str:
        """:func:`approval_problem` with the project's settings."""
        return approval_problem(skill, self.settings)

    def approve(self, table: SkillTable, skill_id: str, *, irreversible_ok: bool = False, force: bool = False,
                restore: bool = False) -> Skill:
        """:func:`approve` with the project's settings, secrets and secret names."""
        return approve(table, skill_id, irreversible_ok=irreversible_ok, force=force, settings=self.settings,
                       secrets=self.secrets.values(), secret_names=self.names, restore=restore)

    def edit(self, table: SkillTable, skill: Skill) -> Skill:
        """:func:`edit` with the project's secrets and secret names."""
        return edit(table, skill, secrets=self.secrets.values(), secret_names=self.names)

    def hide(self, text: str) -> str:
        """``text`` with every secret value of the project masked (what ``skills show`` prints)."""
        return self.redactor.text(text)


def review_context(root: Path | str, *, product_without_project: str | None = None) -> ReviewContext:
    """The :class:`ReviewContext` of the project in ``root`` (a broken flow file does not hide the skills).

    ``product_without_project``: for a folder that holds a store but no
    ``steadyhand.yaml`` (a bare store, as a preview writes), the context of
    that skill space with the default settings and no secret - such a
    folder declares none.  Without it, such a folder is an error.

    Raises
    ------
    core.project.ProjectError
        No project there (and no ``product_without_project``), or its settings file is invalid.
    """
    from core.project.lenient import load_project_lenient  # noqa: PLC0415

    from .upkeep import settings_of  # noqa: PLC0415

    if product_without_project is not None and not (Path(root) / "steadyhand.yaml").exists():
        return ReviewContext(Path(root), product_without_project, SkillSettings())
    project, _problems = load_project_lenient(Path(root))
    return ReviewContext(Path(root), project.name, settings_of(project), secret_values(project),
                         secret_names(project))
