"""Skills: structured experience extracted from failures and their corrections (K1).

A skill is data, never code: a trigger checkable against a live
:class:`~core.domain.Observation`, a short sequence of the engine's own
actions whose targets are semantic descriptors (role, accessible name,
label, placeholder, text, test id, anchor - never an absolute XPath, a CSS
path or coordinates), verify rules, error recovery, a scope, parameters,
provenance, counters and a review state.  The in-memory model is these
frozen dataclasses; files are validated at the edge (:mod:`core.skills.files`)
and rows are kept by :mod:`core.store.skills`.

Placeholders ``{name}`` in trigger texts and action values are bound at run
time from the flow's parameters and from the current flow step's target
(``{target.label}``, ``{target.name}``, ``{target.text}``,
``{target.placeholder}``, ``{target.role}``), so a skill learnt on one field
applies to another field with the same trouble.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Mapping

from .element import Anchor, ElementDescriptor
from .flow import Action

__all__ = [
    "SKILL_SCHEMA_VERSION", "SKILL_STATES", "SKILL_KINDS", "FAILURE_CAUSES", "SkillState", "SkillKind",
    "ElementCondition", "SkillTrigger", "SkillAction", "VerifyRule", "RecoveryRule", "SkillScope",
    "SkillProvenance", "SkillValidation", "Skill", "TARGET_FIELDS", "SEMANTIC_TARGET_FIELDS",
    "skill_to_mapping", "skill_from_mapping", "QUALITY_SUCCESS_DELTA", "QUALITY_FAILURE_DELTA",
    "SkillSettings",
]

#: Version of the skill schema (files and rows); a newer file is refused, never half-read.
SKILL_SCHEMA_VERSION = 1
SkillState = Literal["proposed", "approved", "rejected", "retired"]
#: Review states (K1): proposed (waits for review), approved (fires), rejected, retired (stopped firing).
SKILL_STATES: tuple[str, ...] = SkillState.__args__  # type: ignore[attr-defined]
SkillKind = Literal["do", "deny"]
#: ``do``: run the actions when the trigger holds; ``deny``: an element the agent must not touch then (K4).
SKILL_KINDS: tuple[str, ...] = SkillKind.__args__  # type: ignore[attr-defined]
#: Failure causes of attribution (K3).
FAILURE_CAUSES = ("locator_failure", "unexpected_state", "state_drift", "wrong_decision")
#: Descriptor fields an element condition or a skill target may name (semantic only, K4).
SEMANTIC_TARGET_FIELDS = ("role", "name", "label", "text", "placeholder", "test_id", "title", "alt")
#: Fields of the current flow step's target a placeholder may name (``{target.label}``).
TARGET_FIELDS = ("role", "name", "label", "text", "placeholder", "test_id")


@dataclass(frozen=True, slots=True)
class ElementCondition:
    """An element that must be (or must not be) on the page, by meaning.

    Every non-empty field must match the element (normalised text: case,
    punctuation and whitespace ignored; ``role`` exactly); an empty
    condition matches nothing.  ``in_dialog`` requires the element to be
    inside an open dialog (its container is a modal's title).

    Attributes
    ----------
    role, name, label, text, placeholder, test_id : str
        As in :class:`~core.domain.ElementDescriptor`; may hold placeholders.
    in_dialog : bool
        Only elements inside an open dialog count.
    """

    role: str = ""
    name: str = ""
    label: str = ""
    text: str = ""
    placeholder: str = ""
    test_id: str = ""
    in_dialog: bool = False

    @property
    def is_empty(self) -> bool:
        """True when no field is set (such a condition never holds)."""
        return not any((self.role, self.name, self.label, self.text, self.placeholder, self.test_id))

    def describe(self) -> str:
        """Short human text: ``button 'Cancel' (in a dialog)``."""
        words = self.name or self.label or self.text or self.placeholder or self.test_id
        s = f"{self.role or 'element'} {words!r}" if words else (self.role or "element")
        return s + (" (in a dialog)" if self.in_dialog else "")


@dataclass(frozen=True, slots=True)
class SkillTrigger:
    """When a skill applies, checkable against one observation (K1, K6).

    Every part that is set must hold; a trigger with nothing set never
    holds.  ``step_action`` restricts it to flow steps of that action kind
    (``"input"``); ``step_target`` to flow steps whose target has these
    fields (placeholders allowed).

    Attributes
    ----------
    required : tuple[ElementCondition, ...]
        Elements that must be present, visible and enabled.
    absent : tuple[ElementCondition, ...]
        Elements that must not be present (what the recording showed and the
        failure did not, or the reverse).
    url_pattern : str
        ``fnmatch`` glob over the page URL (``"*/requests/new*"``), or "".
    title : str
        Substring the page title must contain (normalised), or "".
    dialog : bool | None
        True: a dialog must be open; False: none may be; None: either.
    dialog_name : str
        Substring one open dialog's title must contain, or "".
    step_action : str
        Action kind of the current flow step, or "" for any.
    step_target : ElementCondition | None
        Fields the current flow step's recorded target must match, or None.
    popup : str
        The kind of popup the skill answers, by meaning (issue 25 item 2: ``"consent"`` - a dialog or layer that
        mentions cookies or consent, covers the page and offers a choice; :data:`core.skills.kinds.KINDS`), or
        "" for a skill of elements.  A kind skill's action names the person's choice by role
        (:attr:`SkillAction.choice`), never a control's words.
    """

    required: tuple[ElementCondition, ...] = ()
    absent: tuple[ElementCondition, ...] = ()
    url_pattern: str = ""
    title: str = ""
    dialog: bool | None = None
    dialog_name: str = ""
    step_action: str = ""
    step_target: ElementCondition | None = None
    popup: str = ""

    @property
    def is_empty(self) -> bool:
        """True when nothing is set: such a trigger never holds."""
        return not (self.required or self.absent or self.url_pattern or self.title or self.dialog is not None
                    or self.dialog_name or self.popup)


@dataclass(frozen=True, slots=True)
class SkillAction:
    """One action of a skill: the engine's own action on a semantic target.

    Attributes
    ----------
    action : Action
        Kind and value (values may hold ``{param}`` placeholders).
    target : ElementDescriptor
        Semantic fields only (:data:`SEMANTIC_TARGET_FIELDS`, ``tag``,
        ``anchor``); empty for actions without a target (``press``).
    note : str
        What the action is for, in words ("cancel the autofill popup").
    choice : str
        For a skill of a popup kind (:attr:`SkillTrigger.popup`): the person's choice by role in that kind
        (``accept`` / ``reject`` / ``settings`` / ``close``), pressed on the one control whose meaning it is
        (:mod:`core.skills.kinds`); "" otherwise.
    """

    action: Action
    target: ElementDescriptor = field(default_factory=ElementDescriptor)
    note: str = ""
    choice: str = ""


@dataclass(frozen=True, slots=True)
class VerifyRule:
    """What must hold after the skill ran (K1).

    Attributes
    ----------
    kind : str
        ``"absent"`` / ``"present"`` (``element`` gone / there), ``"url"``
        (glob over the URL), ``"title"`` (substring), ``"no_dialog"``.
    element : ElementCondition | None
        For ``absent`` / ``present``.
    expected : str
        For ``url`` / ``title``.
    """

    kind: Literal["absent", "present", "url", "title", "no_dialog"]
    element: ElementCondition | None = None
    expected: str = ""


@dataclass(frozen=True, slots=True)
class RecoveryRule:
    """Error recovery of a skill (K1): ``on`` an error kind, ``action``, at most ``max_tries``.

    ``on``: ``"not_found"`` (a target is not on the page), ``"verify_failed"``,
    ``"action_error"``, ``"any"``; ``action``: ``"retry"`` (the same action
    again), ``"skip"`` (the next action), ``"abort"`` (the skill fails and the
    chain falls back to the flow / model / person).
    """

    on: Literal["not_found", "verify_failed", "action_error", "any"] = "any"
    action: Literal["retry", "skip", "abort"] = "abort"
    max_tries: int = 1


@dataclass(frozen=True, slots=True)
class SkillScope:
    """Where a skill belongs (K1, K7): the product (one skill space each), task type, page features.

    ``product`` is the project's name; ``task_type`` a word such as
    ``"login"``, ``"upload"``, ``"export"`` (the rule channel of K6) or "";
    ``url_prefix``, ``title`` and ``component`` describe the page.  A narrower
    scope (more fields set) wins a conflict (K7).
    """

    product: str = ""
    task_type: str = ""
    url_prefix: str = ""
    title: str = ""
    component: str = ""

    @property
    def width(self) -> int:
        """How many page features are set (a narrower scope has more)."""
        return sum(bool(x) for x in (self.task_type, self.url_prefix, self.title, self.component))


@dataclass(frozen=True, slots=True)
class SkillProvenance:
    """Where a skill came from (K1).

    ``source``: ``"correction"`` (a takeover's correction), ``"heal"`` (an
    accepted heal), ``"manual"`` (made by hand), ``"import"``; ``run_id``,
    ``flow``, ``step_ids`` and ``step_index`` name the failure;
    ``correction_id`` / ``heal_id`` the fix contrasted with it (0 if none);
    ``failure_id`` the failure record; ``cause`` and ``cause_confidence`` the
    attribution (K3); ``extracted_at`` is UTC.
    """

    source: str = "manual"
    run_id: str = ""
    flow: str = ""
    step_ids: tuple[str, ...] = ()
    step_index: int = -1
    correction_id: int = 0
    heal_id: int = 0
    failure_id: int = 0
    cause: str = ""
    cause_confidence: float = 0.0
    extractor: str = ""
    extracted_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class SkillValidation:
    """Result of validation before review (K5).

    ``cases`` is how many stored states or live variants the skill was
    replayed on; ``passed`` how many it passed; ``reproduced`` says the
    failure it comes from happened again (a failure that does not reproduce
    never becomes a skill); ``reasons`` explain each failed check.
    """

    cases: int = 0
    passed: int = 0
    reproduced: bool = False
    reasons: tuple[str, ...] = ()
    checked_at: datetime | None = None

    @property
    def pass_rate(self) -> float:
        """``passed / cases`` (0.0 with no case)."""
        return self.passed / self.cases if self.cases else 0.0


@dataclass(frozen=True, slots=True)
class Skill:
    """One skill (K1).

    Attributes
    ----------
    id : str
        Stable id (``"sk-<12 hex>"``), unique in a skill space.
    description : str
        What it does and when, in one sentence.
    kind : SkillKind
        ``do`` or ``deny``.
    trigger : SkillTrigger
        When it applies.
    actions : tuple[SkillAction, ...]
        What it does (``do``), or for ``deny`` the element(s) not to touch.
    verify : tuple[VerifyRule, ...]
        What must hold afterwards.
    recovery : tuple[RecoveryRule, ...]
        Error recovery.
    scope : SkillScope
        Product, task type, page features.
    params : tuple[str, ...]
        Placeholder names the skill uses (bound at run time).
    provenance : SkillProvenance
        Source run, steps, correction, extraction time.
    validation : SkillValidation
        K5 result.
    successes, failures : int
        Uses that passed / failed (a failed precondition counts as a failure, K6).
    quality : float
        0..1; starts at the validation pass rate, +0.1 per success, -0.5 per
        failure (K7), clamped to 0..1.
    state : SkillState
        Review state.
    review_reason : str
        Why it was rejected or retired.
    irreversible_ok : bool
        Approved to act on an irreversible step (only for exactly the step
        it was learnt on, :attr:`SkillProvenance.step_ids`).
    max_steps : int
        Step limit of one use (default: the number of actions).
    max_ms : int
        Time limit of one use in ms (default 15000).
    last_used_at, created_at, updated_at : datetime | None
        UTC.
    schema_version : int
        :data:`SKILL_SCHEMA_VERSION`.
    """

    id: str
    description: str
    trigger: SkillTrigger
    actions: tuple[SkillAction, ...] = ()
    kind: SkillKind = "do"
    verify: tuple[VerifyRule, ...] = ()
    recovery: tuple[RecoveryRule, ...] = ()
    scope: SkillScope = field(default_factory=SkillScope)
    params: tuple[str, ...] = ()
    provenance: SkillProvenance = field(default_factory=SkillProvenance)
    validation: SkillValidation = field(default_factory=SkillValidation)
    successes: int = 0
    failures: int = 0
    quality: float = 0.0
    state: SkillState = "proposed"
    review_reason: str = ""
    irreversible_ok: bool = False
    max_steps: int = 0
    max_ms: int = 15000
    last_used_at: datetime | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    schema_version: int = SKILL_SCHEMA_VERSION

    @property
    def action_types(self) -> tuple[str, ...]:
        """The action-type sequence (``("click", "input", "click")``) merging compares (K7)."""
        return tuple(a.action.kind for a in self.actions)

    @property
    def step_limit(self) -> int:
        """Steps one use may take: ``max_steps`` or, unset, the number of actions."""
        return self.max_steps or len(self.actions)


# --- plain mappings (the store's JSON and the files' shape; pydantic checks files at the edge) -------------


def _cond_map(c: ElementCondition | None) -> dict[str, Any] | None:
    if c is None:
        return None
    d = {k: getattr(c, k) for k in ("role", "name", "label", "text", "placeholder", "test_id") if getattr(c, k)}
    if c.in_dialog:
        d["in_dialog"] = True
    return d


def _cond(d: Mapping[str, Any] | None) -> ElementCondition | None:
    if d is None:
        return None
    return ElementCondition(**{k: (bool(v) if k == "in_dialog" else str(v)) for k, v in d.items()})


def _target_map(t: ElementDescriptor) -> dict[str, Any]:
    d: dict[str, Any] = {k: getattr(t, k) for k in ("tag", *SEMANTIC_TARGET_FIELDS) if getattr(t, k)}
    if t.anchor is not None:
        d["anchor"] = {"text": t.anchor.text, "role": t.anchor.role, "dx": t.anchor.dx, "dy": t.anchor.dy}
    return d


def _target(d: Mapping[str, Any]) -> ElementDescriptor:
    kw: dict[str, Any] = {k: str(v) for k, v in d.items() if k != "anchor"}
    if d.get("anchor"):
        a = d["anchor"]
        kw["anchor"] = Anchor(text=str(a.get("text", "")), role=str(a.get("role", "")),
                              dx=float(a.get("dx", 0.0)), dy=float(a.get("dy", 0.0)))
    return ElementDescriptor(**kw)


def _dt(v: Any) -> datetime | None:
    if v is None or v == "":
        return None
    return v if isinstance(v, datetime) else datetime.fromisoformat(str(v))


def _iso(v: datetime | None) -> str | None:
    return v.isoformat() if v is not None else None


def skill_to_mapping(s: Skill) -> dict[str, Any]:
    """The skill as plain JSON-able data (the file and store shape; datetimes as ISO 8601 strings)."""
    t = s.trigger
    return {
        "schema_version": s.schema_version, "id": s.id, "description": s.description, "kind": s.kind,
        "trigger": {
            "required": [_cond_map(c) for c in t.required], "absent": [_cond_map(c) for c in t.absent],
            "url_pattern": t.url_pattern, "title": t.title, "dialog": t.dialog, "dialog_name": t.dialog_name,
            "step_action": t.step_action, "step_target": _cond_map(t.step_target),
            **({"popup": t.popup} if t.popup else {}),
        },
        "actions": [{"kind": a.action.kind, "value": a.action.value, "target": _target_map(a.target),
                     **({"note": a.note} if a.note else {}), **({"choice": a.choice} if a.choice else {})}
                    for a in s.actions],
        "verify": [{"kind": v.kind, "element": _cond_map(v.element), "expected": v.expected} for v in s.verify],
        "recovery": [{"on": r.on, "action": r.action, "max_tries": r.max_tries} for r in s.recovery],
        "scope": {"product": s.scope.product, "task_type": s.scope.task_type, "url_prefix": s.scope.url_prefix,
                  "title": s.scope.title, "component": s.scope.component},
        "params": list(s.params),
        "provenance": {
            "source": s.provenance.source, "run_id": s.provenance.run_id, "flow": s.provenance.flow,
            "step_ids": list(s.provenance.step_ids), "step_index": s.provenance.step_index,
            "correction_id": s.provenance.correction_id, "heal_id": s.provenance.heal_id,
            "failure_id": s.provenance.failure_id, "cause": s.provenance.cause,
            "cause_confidence": s.provenance.cause_confidence, "extractor": s.provenance.extractor,
            "extracted_at": _iso(s.provenance.extracted_at),
        },
        "validation": {"cases": s.validation.cases, "passed": s.validation.passed,
                       "reproduced": s.validation.reproduced, "reasons": list(s.validation.reasons),
                       "checked_at": _iso(s.validation.checked_at)},
        "successes": s.successes, "failures": s.failures, "quality": s.quality, "state": s.state,
        "review_reason": s.review_reason, "irreversible_ok": s.irreversible_ok, "max_steps": s.max_steps,
        "max_ms": s.max_ms, "last_used_at": _iso(s.last_used_at), "created_at": _iso(s.created_at),
        "updated_at": _iso(s.updated_at),
    }


def skill_from_mapping(d: Mapping[str, Any]) -> Skill:
    """The inverse of :func:`skill_to_mapping` for data already validated (store rows, checked files).

    Raises
    ------
    KeyError, TypeError, ValueError
        On data of the wrong shape (files are checked first by
        :mod:`core.skills.files`, which names the file and field).
    """
    t = d.get("trigger") or {}
    p = d.get("provenance") or {}
    v = d.get("validation") or {}
    sc = d.get("scope") or {}
    return Skill(
        id=str(d["id"]), description=str(d.get("description", "")), kind=d.get("kind", "do"),
        trigger=SkillTrigger(
            required=tuple(c for c in (_cond(x) for x in t.get("required") or ()) if c is not None),
            absent=tuple(c for c in (_cond(x) for x in t.get("absent") or ()) if c is not None),
            url_pattern=str(t.get("url_pattern") or ""), title=str(t.get("title") or ""),
            dialog=t.get("dialog"), dialog_name=str(t.get("dialog_name") or ""),
            step_action=str(t.get("step_action") or ""), step_target=_cond(t.get("step_target")),
            popup=str(t.get("popup") or ""),
        ),
        actions=tuple(SkillAction(Action(a["kind"], str(a.get("value", ""))), _target(a.get("target") or {}),
                                  str(a.get("note", "")), str(a.get("choice", ""))) for a in d.get("actions") or ()),
        verify=tuple(VerifyRule(x["kind"], _cond(x.get("element")), str(x.get("expected") or ""))
                     for x in d.get("verify") or ()),
        recovery=tuple(RecoveryRule(x.get("on", "any"), x.get("action", "abort"), int(x.get("max_tries", 1)))
                       for x in d.get("recovery") or ()),
        scope=SkillScope(**{k: str(sc.get(k) or "") for k in ("product", "task_type", "url_prefix", "title",
                                                               "component")}),
        params=tuple(str(x) for x in d.get("params") or ()),
        provenance=SkillProvenance(
            source=str(p.get("source", "manual")), run_id=str(p.get("run_id", "")), flow=str(p.get("flow", "")),
            step_ids=tuple(str(x) for x in p.get("step_ids") or ()), step_index=int(p.get("step_index", -1)),
            correction_id=int(p.get("correction_id", 0)), heal_id=int(p.get("heal_id", 0)),
            failure_id=int(p.get("failure_id", 0)), cause=str(p.get("cause", "")),
            cause_confidence=float(p.get("cause_confidence", 0.0)), extractor=str(p.get("extractor", "")),
            extracted_at=_dt(p.get("extracted_at")),
        ),
        validation=SkillValidation(cases=int(v.get("cases", 0)), passed=int(v.get("passed", 0)),
                                   reproduced=bool(v.get("reproduced", False)),
                                   reasons=tuple(str(x) for x in v.get("reasons") or ()),
                                   checked_at=_dt(v.get("checked_at"))),
        successes=int(d.get("successes", 0)), failures=int(d.get("failures", 0)),
        quality=float(d.get("quality", 0.0)), state=d.get("state", "proposed"),
        review_reason=str(d.get("review_reason", "")), irreversible_ok=bool(d.get("irreversible_ok", False)),
        max_steps=int(d.get("max_steps", 0)), max_ms=int(d.get("max_ms", 15000)),
        last_used_at=_dt(d.get("last_used_at")), created_at=_dt(d.get("created_at")),
        updated_at=_dt(d.get("updated_at")), schema_version=int(d.get("schema_version", SKILL_SCHEMA_VERSION)),
    )


#: Quality moves of one use (K7): +0.1 per success, -0.5 per failure (a failed precondition is a failure, K6).
QUALITY_SUCCESS_DELTA = 0.1
QUALITY_FAILURE_DELTA = -0.5


@dataclass(frozen=True, slots=True)
class SkillSettings:
    """The skill library's settings (K7), read from the project file's ``skills:`` section.

    Attributes
    ----------
    success_delta, failure_delta : float
        Quality moves of one use (+0.1 / -0.5, K7).
    review_quality : float
        A skill below this quality goes to the review area (0.3, K7).
    review_unused_days : int
        A skill not used for this many days goes to the review area (14, K7).
    merge_similarity : float
        Two skills whose action-type sequences are more similar than this
        (0..1, Indel ratio over the kinds) and whose triggers are the same are merged (0.9, K7).
    daily_proposals : int
        Most new proposals of one product in 24 hours (50, K7); imports do not count.
    validation_threshold : float
        Validation pass rate below which a candidate is dropped before review
        (K5 sets no figure: 0.6, 3 of 5 replays) and which an approval without
        ``force`` needs (the same number: what reached review passed).
    """

    success_delta: float = QUALITY_SUCCESS_DELTA
    failure_delta: float = QUALITY_FAILURE_DELTA
    review_quality: float = 0.3
    review_unused_days: int = 14
    merge_similarity: float = 0.9
    daily_proposals: int = 50
    validation_threshold: float = 0.6
