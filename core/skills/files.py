"""Skill files: JSON (or YAML) export and import, validated with pydantic at the edge (K1).

A skill file is one mapping::

    {"format": "steadyhand-skills", "schema_version": 1, "product": "demo",
     "exported_at": "2026-12-02T08:00:00+00:00", "skills": [<skill>, ...]}

where each ``<skill>`` has the shape of :func:`core.domain.skill.skill_to_mapping`.
Reading checks the whole file before anything is returned, so an import is
all or nothing: a malformed, foreign or newer-schema file raises one
:class:`SkillFileError` that names the file, the field and what was
expected, and no skill of it is stored.

Skills are data, never code.  What a file may hold is narrower than what
the store may hold:

- actions are the ones the skill runtime runs (:data:`ALLOWED_ACTIONS`: the
  model's actions :data:`core.plan.guard.MODEL_ACTIONS` without ``back``; so
  never ``navigate``, ``upload``, ``back``, ``assert`` or ``screenshot`` - a
  shared file must not move the browser to another page nor hand a local
  file of its choosing to a page, and a kind the runtime would not run is
  refused here rather than at the decision);
- no action value may hold a placeholder naming a secret parameter (a name
  the project or a flow declares secret, or one that reads like a secret:
  :data:`SECRET_PARAM`): a skill that fires on a page-state trigger could
  type the secret into any field of that page, and a page logs what is typed;
- targets and element conditions name semantic fields only (role,
  accessible name, label, text, placeholder, test id, title, alt, tag,
  anchor): an absolute XPath, a CSS path, a bounding box or coordinates are
  refused with the field named;
- every ``{placeholder}`` is ``{target.<field>}``, ``{step.action}`` or a
  name listed in the skill's ``params``;
- no string may hold the value of a declared secret of the project in clear
  (nor URL-encoded): such a file is refused, and on export the values are
  replaced by a ``{<secret name>}`` placeholder (and anything still matching
  by the store's mask).

Limits: a file of at most :data:`MAX_FILE_BYTES` bytes (read and written) and
:data:`MAX_SKILLS` skills; at most :data:`MAX_ACTIONS` actions per skill.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Literal, Mapping, Optional, Sequence

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from core.progress import counted
from core.domain.flow import ACTION_KINDS
from core.domain.skill import (
    FAILURE_CAUSES, SEMANTIC_TARGET_FIELDS, SKILL_KINDS, SKILL_SCHEMA_VERSION, SKILL_STATES, TARGET_FIELDS, Skill,
    SkillValidation, skill_from_mapping, skill_to_mapping,
)
from core.plan.guard import MODEL_ACTIONS
from core.project.loader import yaml_location
from core.domain.text import printable
from core.project.loader import write_atomic
from core.secrets import Redactor

__all__ = [
    "FILE_FORMAT", "ALLOWED_ACTIONS", "MAX_FILE_BYTES", "MAX_SKILLS", "MAX_ACTIONS", "SkillFileError",
    "ImportReport", "export_skills", "read_skill_file", "read_one_skill", "import_skills", "check_skill",
    "skill_file_mapping", "TARGETLESS_ACTIONS", "SECRET_PARAM", "IMPORTED_QUALITY", "NOT_VALIDATED_HERE",
]

#: The ``format`` value of a skill file (anything else is a foreign file).
FILE_FORMAT = "steadyhand-skills"
#: Action kinds a skill may hold: what the skill runtime runs (the model's actions) without ``back`` (see above).
ALLOWED_ACTIONS: tuple[str, ...] = tuple(k for k in MODEL_ACTIONS if k != "back")
#: Kinds that act on no element (every other allowed kind needs a semantic target).
TARGETLESS_ACTIONS = ("press", "scroll", "wait")
#: A parameter name that reads like a secret (refused in an action value even when no project declares it).
SECRET_PARAM = re.compile(r"pass(word|wd|phrase|code)?|secret|token|pin|otp|api_?key|credentials?|private_?key",
                          re.I)


def _secret_like(name: str, declared: frozenset[str]) -> bool:
    """True when the parameter ``name`` is a declared secret or reads like one (a whole word of it matches)."""
    if name in declared:
        return True
    words = [w for w in re.split(r"[^A-Za-z]+", re.sub(r"([a-z])([A-Z])", r"\1_\2", name)) if w]
    return bool(SECRET_PARAM.fullmatch(name)) or any(SECRET_PARAM.fullmatch(w) for w in words)
#: Largest skill file read or written, bytes (32 MiB: 5000 skills of a few actions take about 10 MiB).
MAX_FILE_BYTES = 32 * 1024 * 1024
#: Most skills in one file.
MAX_SKILLS = 5000
#: Most actions of one skill (a skill is a short fix, not a flow).
MAX_ACTIONS = 20
#: Provenance sources a skill may name.
SOURCES = ("correction", "heal", "manual", "import")

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$")
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_SPECIAL = {f"target.{f}" for f in TARGET_FIELDS} | {"step.action"}
# Descriptor fields a recording stores that a skill must not: why each is refused.
_FORBIDDEN_TARGET = {
    "xpath": "an absolute XPath is not allowed in a skill",
    "css_path": "an absolute CSS path is not allowed in a skill",
    "selector": "a selector is not allowed in a skill",
    "bbox": "coordinates (a bounding box) are not allowed in a skill",
    "coordinates": "coordinates are not allowed in a skill",
    "x": "coordinates are not allowed in a skill", "y": "coordinates are not allowed in a skill",
    "viewport": "coordinates (a viewport size) are not allowed in a skill",
    "scroll": "coordinates (a scroll offset) are not allowed in a skill",
    "device_pixel_ratio": "coordinates (a pixel ratio) are not allowed in a skill",
}
_SEMANTIC = ", ".join(("tag", *SEMANTIC_TARGET_FIELDS, "anchor"))
_COND_FIELDS = ("role", "name", "label", "text", "placeholder", "test_id", "in_dialog")


class SkillFileError(ValueError):
    """A skill file that cannot be read or used; one line naming the file, the field and what was expected.

    Attributes
    ----------
    path : str
        The file.
    field : str
        Where in it (``skills[2] 'sk-0a1b2c3d4e5f', field 'actions[0].kind'``), or "".
    expected : str
        What was expected there.
    """

    def __init__(self, path: Path | str, field: str, expected: str) -> None:
        field, expected = _one_line(field), _one_line(expected)  # a key or text of the file may hold line breaks
        self.path, self.field, self.expected = str(path), field, expected
        where = f" at {field}" if field else ""
        super().__init__(f"{self.path}{where}: {expected}")


def _one_line(text: str) -> str:
    return "".join(c if c.isprintable() else json.dumps(c)[1:-1] for c in text)


# --- the file's schema (pydantic, at the edge only) ------------------------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


def _refuse_forbidden(data: Any) -> Any:
    if isinstance(data, dict):
        for k in data:
            if k in _FORBIDDEN_TARGET:
                raise ValueError(f"field {k!r}: {_FORBIDDEN_TARGET[k]} (semantic fields only: {_SEMANTIC})")
    return data


class _Condition(_Strict):
    role: str = Field("", max_length=200)
    name: str = Field("", max_length=500)
    label: str = Field("", max_length=500)
    text: str = Field("", max_length=500)
    placeholder: str = Field("", max_length=500)
    test_id: str = Field("", max_length=200)
    in_dialog: bool = False

    _no_coords = model_validator(mode="before")(classmethod(lambda cls, d: _refuse_forbidden(d)))


class _Anchor(_Strict):
    text: str = Field(max_length=200)
    role: str = Field("", max_length=100)
    dx: float = Field(0.0, ge=-10000, le=10000, description="offset from the anchor's centre, CSS px")
    dy: float = Field(0.0, ge=-10000, le=10000, description="offset from the anchor's centre, CSS px")


class _Target(_Strict):
    tag: str = Field("", max_length=50)
    role: str = Field("", max_length=200)
    name: str = Field("", max_length=500)
    label: str = Field("", max_length=500)
    text: str = Field("", max_length=500)
    placeholder: str = Field("", max_length=500)
    test_id: str = Field("", max_length=200)
    title: str = Field("", max_length=500)
    alt: str = Field("", max_length=500)
    anchor: Optional[_Anchor] = None

    _no_coords = model_validator(mode="before")(classmethod(lambda cls, d: _refuse_forbidden(d)))


class _Trigger(_Strict):
    required: list[_Condition] = Field(default_factory=list, max_length=50)
    absent: list[_Condition] = Field(default_factory=list, max_length=50)
    url_pattern: str = Field("", max_length=1000)
    title: str = Field("", max_length=500)
    dialog: Optional[bool] = None
    dialog_name: str = Field("", max_length=500)
    step_action: str = ""
    step_target: Optional[_Condition] = None
    popup: str = Field("", max_length=40)

    @field_validator("step_action")
    @classmethod
    def _kind(cls, v: str) -> str:
        if v and v not in ACTION_KINDS:
            raise ValueError(f"{v!r} is not an action of the engine; expected '' or one of {', '.join(ACTION_KINDS)}")
        return v


class _Action(_Strict):
    kind: str
    value: str = Field("", max_length=2000)
    target: _Target = Field(default_factory=_Target)
    note: str = Field("", max_length=500)
    choice: Literal["", "accept", "reject", "settings", "close"] = ""

    @field_validator("kind")
    @classmethod
    def _kind(cls, v: str) -> str:
        if v not in ALLOWED_ACTIONS:
            raise ValueError(f"{v!r} is not an action a skill may run; expected one of {', '.join(ALLOWED_ACTIONS)}")
        return v


class _Verify(_Strict):
    kind: Literal["absent", "present", "url", "title", "no_dialog"]
    element: Optional[_Condition] = None
    expected: str = Field("", max_length=1000)


class _Recovery(_Strict):
    on: Literal["not_found", "verify_failed", "action_error", "any"] = "any"
    action: Literal["retry", "skip", "abort"] = "abort"
    max_tries: int = Field(1, ge=1, le=5)


class _Scope(_Strict):
    product: str = Field("", max_length=200)
    task_type: str = Field("", max_length=100)
    url_prefix: str = Field("", max_length=1000)
    title: str = Field("", max_length=500)
    component: str = Field("", max_length=200)


class _Provenance(_Strict):
    source: str = "manual"
    run_id: str = Field("", max_length=64)
    flow: str = Field("", max_length=200)
    step_ids: list[str] = Field(default_factory=list, max_length=100)
    step_index: int = Field(-1, ge=-1, le=100000)
    correction_id: int = Field(0, ge=0)
    heal_id: int = Field(0, ge=0)
    failure_id: int = Field(0, ge=0)
    cause: str = ""
    cause_confidence: float = Field(0.0, ge=0, le=1)
    extractor: str = Field("", max_length=100)
    extracted_at: Optional[datetime] = None

    @field_validator("source")
    @classmethod
    def _source(cls, v: str) -> str:
        if v not in SOURCES:
            raise ValueError(f"expected one of {', '.join(SOURCES)}")
        return v

    @field_validator("cause")
    @classmethod
    def _cause(cls, v: str) -> str:
        if v and v not in FAILURE_CAUSES:
            raise ValueError(f"expected '' or one of {', '.join(FAILURE_CAUSES)}")
        return v


class _Validation(_Strict):
    cases: int = Field(0, ge=0, le=1000)
    passed: int = Field(0, ge=0, le=1000)
    reproduced: bool = False
    reasons: list[str] = Field(default_factory=list, max_length=100)
    checked_at: Optional[datetime] = None

    @model_validator(mode="after")
    def _passed_le_cases(self) -> "_Validation":
        if self.passed > self.cases:
            raise ValueError(f"'passed' ({self.passed}) is more than 'cases' ({self.cases})")
        return self


class _Skill(_Strict):
    schema_version: int = Field(SKILL_SCHEMA_VERSION, ge=1, le=SKILL_SCHEMA_VERSION)
    id: str
    description: str = Field(min_length=1, max_length=2000)
    kind: str = "do"

    @field_validator("description")
    @classmethod
    def _printable_description(cls, v: str) -> str:
        return printable(v)
    trigger: _Trigger
    actions: list[_Action] = Field(default_factory=list, max_length=MAX_ACTIONS)
    verify: list[_Verify] = Field(default_factory=list, max_length=50)
    recovery: list[_Recovery] = Field(default_factory=list, max_length=10)
    scope: _Scope = Field(default_factory=_Scope)
    params: list[str] = Field(default_factory=list, max_length=50)
    provenance: _Provenance = Field(default_factory=_Provenance)
    validation: _Validation = Field(default_factory=_Validation)
    successes: int = Field(0, ge=0)
    failures: int = Field(0, ge=0)
    quality: float = Field(0.0, ge=0, le=1)
    state: str = "proposed"
    review_reason: str = Field("", max_length=2000)
    irreversible_ok: bool = False
    max_steps: int = Field(0, ge=0, le=MAX_ACTIONS * 5)
    max_ms: int = Field(15000, ge=100, le=120000, description="time limit of one use, ms")
    last_used_at: Optional[datetime] = None
    created_at: Optional[datetime] = None
    updated_at: Optional[datetime] = None

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        if not _ID.match(v):
            raise ValueError("expected 1-64 letters, digits, '_', '.', ':' or '-' (such as 'sk-0a1b2c3d4e5f')")
        return v

    @field_validator("kind")
    @classmethod
    def _kind(cls, v: str) -> str:
        if v not in SKILL_KINDS:
            raise ValueError(f"expected one of {', '.join(SKILL_KINDS)}")
        return v

    @field_validator("state")
    @classmethod
    def _state(cls, v: str) -> str:
        if v not in SKILL_STATES:
            raise ValueError(f"expected one of {', '.join(SKILL_STATES)}")
        return v

    @field_validator("params")
    @classmethod
    def _params(cls, v: list[str]) -> list[str]:
        for p in v:
            if not p.isidentifier() and p not in _SPECIAL:  # {target.label}...: the step's target, bound at run time
                raise ValueError(f"parameter name {p!r} is not a name (letters, digits and '_')")
        return v

    @model_validator(mode="after")
    def _whole(self) -> "_Skill":
        t = self.trigger
        if not (t.required or t.absent or t.url_pattern or t.title or t.dialog is not None or t.dialog_name
                or t.popup):
            raise ValueError("field 'trigger': a trigger with nothing set never holds; set 'required', 'absent', "
                             "'url_pattern', 'title', 'dialog' or 'dialog_name'")
        if not self.actions:
            raise ValueError("field 'actions': a skill needs at least one action (for a deny skill: the element "
                             "not to touch)")
        for i, a in enumerate(self.actions):
            needs_target = a.kind not in TARGETLESS_ACTIONS and not (a.choice and t.popup)  # a kind skill: by role
            if needs_target and not any(getattr(a.target, f) for f in ("tag", *SEMANTIC_TARGET_FIELDS)):
                raise ValueError(f"field 'actions[{i}].target': action {a.kind!r} needs a target with at least one "
                                 f"semantic field ({_SEMANTIC})")
        return self


class _File(_Strict):
    format: str
    schema_version: int = Field(ge=1)
    product: str = Field("", max_length=200)
    exported_at: Optional[datetime] = None
    skills: list[Any] = Field(max_length=MAX_SKILLS)


# --- checks outside the schema --------------------------------------------------------------------------


def _strings(d: Any, loc: str = "") -> Iterable[tuple[str, str]]:
    """Every string of a JSON-like value with its location (``actions[0].value``); dict keys too."""
    if isinstance(d, str):
        yield loc, d
    elif isinstance(d, dict):
        for k, v in d.items():
            sub = f"{loc}.{k}" if loc else str(k)
            if isinstance(k, str):
                yield sub, k
            yield from _strings(v, sub)
    elif isinstance(d, (list, tuple)):
        for i, v in enumerate(d):
            yield from _strings(v, f"{loc}[{i}]")


def _collect(d: Any, out: list[str]) -> list[str]:
    """Every string of a JSON-like value, dict keys too, without locations (the fast path of the checks)."""
    if isinstance(d, str):
        out.append(d)
    elif isinstance(d, dict):
        for k, v in d.items():
            if isinstance(k, str):
                out.append(k)
            _collect(v, out)
    elif isinstance(d, (list, tuple)):
        for v in d:
            _collect(v, out)
    return out


def _placeholder_problem(data: Mapping[str, Any]) -> tuple[str, str] | None:
    if not any("{" in t for t in _collect([data.get(k) for k in ("trigger", "actions", "verify")], [])):
        return None
    declared = set(data.get("params") or ())
    for loc, text in _strings({k: data.get(k) for k in ("trigger", "actions", "verify")}):
        for name in _PLACEHOLDER.findall(text.replace("{{", "").replace("}}", "")):
            if name in _SPECIAL or name in declared:
                continue
            return loc, (f"placeholder {{{name}}} is neither listed in 'params' nor one of "
                         f"{', '.join(sorted('{' + s + '}' for s in _SPECIAL))}")
    return None


def _secret_problem(data: Any, redactor: Redactor) -> str:
    if not redactor or not redactor.contains_secret("\x00".join(_collect(data, []))):
        return ""  # the strings joined by a separator no secret spans: none holds one
    for loc, text in _strings(data):
        if redactor.contains_secret(text):
            return loc or "(top level)"
    return ""


_KEY = re.compile(r"^[A-Za-z0-9_]{1,64}$")


def _error_location(err: Mapping[str, Any]) -> str:
    out = ""
    for p in err.get("loc", ()):
        if isinstance(p, int):
            out += f"[{p}]"
            continue
        p = str(p)
        if not _KEY.match(p):  # a foreign key: quoted, escaped and cut short
            p = json.dumps(p[:40] + ("..." if len(p) > 40 else ""))
        out += f".{p}" if out else p
    return out


def _secret_param_problem(data: Mapping[str, Any], declared: frozenset[str]) -> tuple[str, str] | None:
    for i, a in enumerate(data.get("actions") or ()):
        for name in _PLACEHOLDER.findall(str(a.get("value") or "").replace("{{", "").replace("}}", "")):
            if name not in _SPECIAL and _secret_like(name, declared):
                return f"actions[{i}].value", (
                    f"types the secret parameter {{{name}}}: a skill fires on what a page shows, so it could type "
                    f"the secret into any field of that page (a page records what is typed); secrets are typed "
                    f"by flow steps only")
    return None


def _validate_skill(data: Any, redactor: Redactor,
                    secret_names: frozenset[str] = frozenset()) -> tuple[_Skill | None, str, str]:
    """(model, "", "") or (None, field, expected) for one skill mapping."""
    if not isinstance(data, dict):
        return None, "", f"expected a mapping (a skill), got {type(data).__name__}"
    v = data.get("schema_version", SKILL_SCHEMA_VERSION)
    if isinstance(v, int) and not isinstance(v, bool) and v > SKILL_SCHEMA_VERSION:
        return None, "schema_version", (f"schema_version {v} is newer than this Steadyhand reads "
                                        f"({SKILL_SCHEMA_VERSION}); upgrade Steadyhand")
    try:
        model = _Skill.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = _error_location(err)
        msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        if err.get("type") == "extra_forbidden":
            msg = "unknown field (check the spelling)"
        elif err.get("type") == "missing":
            msg = "required field is missing"
        m = re.match(r"field '([^']+)': (.*)", msg) or re.match(r"field ([^ :]+): (.*)", msg)
        if m:  # a model-level check names its own field
            inner = m.group(1).strip("'")
            loc, msg = (f"{loc}.{inner}" if loc else inner), m.group(2)
        more = f" (and {counted(len(exc.errors()) - 1, 'more problem')})" if len(exc.errors()) > 1 else ""
        return None, loc, msg + more
    dumped = model.model_dump(mode="json")
    problem = _placeholder_problem(dumped) or _secret_param_problem(dumped, secret_names)
    if problem is not None:
        return None, problem[0], problem[1]
    where = _secret_problem(dumped, redactor)
    if where:
        return None, where, ("holds the value of a declared secret in clear; a skill never carries a secret "
                             "(use a {placeholder} listed in 'params')")
    return model, "", ""


def _utc(dt: datetime | None) -> datetime | None:
    if dt is None:
        return None
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=timezone.utc)


def _to_skill(model: _Skill) -> Skill:
    s = skill_from_mapping(model.model_dump(mode="json"))
    p = s.provenance
    return replace(s, last_used_at=_utc(s.last_used_at), created_at=_utc(s.created_at),
                   updated_at=_utc(s.updated_at),
                   provenance=replace(p, extracted_at=_utc(p.extracted_at)),
                   validation=replace(s.validation, checked_at=_utc(s.validation.checked_at)))


def check_skill(skill: Skill, *, secrets: Iterable[str] = (), redactor: Redactor | None = None,
                secret_names: Iterable[str] = ()) -> str:
    """"" when ``skill`` is legal as a skill file would be checked, else ``"field: what was expected"``.

    The same rules as reading a file: the engine's own actions only, semantic
    targets only, declared placeholders, no secret value in clear.  Library
    operations (approve, edit) use it so nothing the store holds can fire
    unless a file holding it could be imported.
    """
    data = skill_to_mapping(skill)
    _, where, expected = _validate_skill(data, Redactor(secrets), frozenset(secret_names))
    if not expected and redactor is not None:
        found = _secret_problem(data, redactor)
        if found:
            where, expected = found, "holds the value of a declared secret in clear"
    return f"{where}: {expected}" if where else expected


# --- reading ---------------------------------------------------------------------------------------------


def _load(path: Path) -> Any:
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise SkillFileError(path, "", "file not found") from None
    except OSError as exc:
        raise SkillFileError(path, "", f"cannot read: {exc.strerror or exc}") from None
    if not path.is_file():
        raise SkillFileError(path, "", "expected a file, found a folder or a device")
    if size > MAX_FILE_BYTES:
        raise SkillFileError(path, "", f"{size} bytes, more than a skill file may have ({MAX_FILE_BYTES})")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise SkillFileError(path, "", "expected UTF-8 text (JSON or YAML)") from None
    except OSError as exc:
        raise SkillFileError(path, "", f"cannot read: {exc.strerror or exc}") from None
    try:
        if path.suffix.lower() in (".yaml", ".yml"):
            for event in yaml.parse(text, Loader=yaml.SafeLoader):
                if isinstance(event, yaml.AliasEvent):  # a few aliases can stand for billions of nodes
                    mark = event.start_mark
                    raise SkillFileError(path, f"line {mark.line + 1}, column {mark.column + 1}",
                                         "YAML aliases (*name) are not allowed in a skill file; write the text out")
            return yaml.safe_load(text)
        return json.loads(text)
    except SkillFileError:
        raise
    except json.JSONDecodeError as exc:
        raise SkillFileError(path, f"line {exc.lineno}, column {exc.colno}", f"not valid JSON: {exc.msg}") from None
    except yaml.YAMLError as exc:
        raise SkillFileError(path, yaml_location(exc, text),
                             f"not valid YAML: {getattr(exc, 'problem', None) or exc}") from None
    except (RecursionError, ValueError) as exc:  # nesting too deep, numbers too long
        raise SkillFileError(path, "", f"cannot be read as JSON/YAML: {type(exc).__name__}") from None


def _skill_where(i: int, data: Any, field: str) -> str:
    sid = data.get("id") if isinstance(data, dict) else None
    head = f"skills[{i}]" + (f" {sid!r}" if isinstance(sid, str) and sid and len(sid) <= 64 else "")
    return f"{head}, field '{field}'" if field else head


def read_skill_file(path: Path | str, *, secrets: Iterable[str] = (), secret_names: Iterable[str] = ()) -> list[Skill]:
    """Every skill of a skill file, all checked before any is returned.

    Parameters
    ----------
    path : Path | str
        A ``.json`` file (``.yaml`` / ``.yml``: YAML) in the shape of the module docstring.
    secrets : Iterable[str]
        The project's declared secret values; a file holding one in clear is refused.
    secret_names : Iterable[str]
        The names of the project's (and its flows') secret parameters; an
        action typing one (``{password}``) is refused.

    Raises
    ------
    SkillFileError
        A file that is missing, too large, not JSON/YAML, foreign (no
        ``format: steadyhand-skills``), of a newer schema, holds a skill that
        breaks a rule, a secret in clear, or the same id twice; one line
        naming the file, the field and what was expected.
    """
    path = Path(path)
    data = _load(path)
    if not isinstance(data, dict) or data.get("format") != FILE_FORMAT:
        got = f"format {data.get('format')!r}" if isinstance(data, dict) and "format" in data else (
            "a mapping without 'format'" if isinstance(data, dict) else f"a {type(data).__name__}")
        raise SkillFileError(path, "field 'format'", f"not a Steadyhand skill file: expected a mapping with format "
                                             f"{FILE_FORMAT!r}, got {got}")
    v = data.get("schema_version")
    if not isinstance(v, int) or isinstance(v, bool) or v < 1:
        raise SkillFileError(path, "field 'schema_version'", f"expected a whole number from 1 to {SKILL_SCHEMA_VERSION}")
    if v > SKILL_SCHEMA_VERSION:
        raise SkillFileError(path, "field 'schema_version'", f"schema_version {v} is newer than this Steadyhand reads "
                                                     f"({SKILL_SCHEMA_VERSION}); upgrade Steadyhand")
    try:
        envelope = _File.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        msg = {"extra_forbidden": "unknown field (check the spelling)", "missing": "required field is missing"}.get(
            str(err.get("type")), str(err.get("msg")))
        raise SkillFileError(path, f"field '{_error_location(err)}'", msg) from None
    redactor = Redactor(secrets)
    names = frozenset(secret_names)
    out: list[Skill] = []
    seen: set[str] = set()
    for i, raw in enumerate(envelope.skills):
        model, where, expected = _validate_skill(raw, redactor, names)
        if model is None:
            raise SkillFileError(path, _skill_where(i, raw, where), expected)
        if model.id in seen:
            raise SkillFileError(path, _skill_where(i, raw, "id"), f"id {model.id!r} is used by another skill "
                                                                    f"of this file")
        seen.add(model.id)
        out.append(_to_skill(model))
    where = _secret_problem({k: v for k, v in data.items() if k != "skills"}, redactor)
    if where:
        raise SkillFileError(path, f"field '{where}'", "holds the value of a declared secret in clear")
    return out


def read_one_skill(path: Path | str, *, secrets: Iterable[str] = (), secret_names: Iterable[str] = ()) -> Skill:
    """One skill from a file: a skill file holding exactly one, a bare skill mapping, or ``skills show --json``'s output.

    Raises
    ------
    SkillFileError
        As :func:`read_skill_file`, or when the file holds more or fewer than one skill.
    """
    path = Path(path)
    data = _load(path)
    if isinstance(data, dict) and "format" in data:
        skills = read_skill_file(path, secrets=secrets, secret_names=secret_names)
        if len(skills) != 1:
            raise SkillFileError(path, "field 'skills'", f"expected exactly one skill, found {len(skills)}")
        return skills[0]
    if isinstance(data, dict) and set(data) == {"skill", "uses"}:  # as `skills show --json` prints it
        data = data["skill"]
    if not isinstance(data, dict):
        raise SkillFileError(path, "", f"expected a mapping (one skill), got a {type(data).__name__}")
    model, where, expected = _validate_skill(data, Redactor(secrets), frozenset(secret_names))
    if model is None:
        raise SkillFileError(path, f"field '{where}'" if where else "", expected)
    return _to_skill(model)


# --- writing ---------------------------------------------------------------------------------------------


def _hide_secrets(d: Any, secrets: Mapping[str, str], redactor: Redactor) -> Any:
    if isinstance(d, str):
        for name, value in sorted(secrets.items(), key=lambda kv: -len(kv[1])):
            if value and len(value) >= 4 and value in d:
                d = d.replace(value, "{" + name + "}")
        return redactor.text(d)
    if isinstance(d, dict):
        return {k: _hide_secrets(v, secrets, redactor) for k, v in d.items()}
    if isinstance(d, list):
        return [_hide_secrets(v, secrets, redactor) for v in d]
    return d


def skill_file_mapping(skills: Sequence[Skill], *, product: str = "", secrets: Mapping[str, str] | None = None,
                       now: datetime | None = None) -> dict[str, Any]:
    """The file content of ``skills`` (see the module docstring), secrets hidden.

    ``secrets`` maps declared secret names to values: a value found in a
    skill becomes the ``{name}`` placeholder (added to its ``params``), and
    anything still holding a value in any form the store masks is masked.
    """
    secrets = {k: v for k, v in (secrets or {}).items() if v}
    redactor = Redactor(secrets.values())
    items = []
    for s in skills:
        m = _hide_secrets(skill_to_mapping(s), secrets, redactor)
        used = {n for _, t in _strings({k: m.get(k) for k in ("trigger", "actions", "verify")})
                for n in _PLACEHOLDER.findall(t) if n in secrets}
        m["params"] = list(m.get("params") or []) + sorted(used - set(m.get("params") or []))
        items.append(m)
    return {"format": FILE_FORMAT, "schema_version": SKILL_SCHEMA_VERSION, "product": product,
            "exported_at": (now or datetime.now(timezone.utc)).isoformat(), "skills": items}


def export_skills(skills: Sequence[Skill], path: Path | str, *, product: str = "",
                  secrets: Mapping[str, str] | None = None) -> Path:
    """Write ``skills`` to a JSON file (atomically, keys in a stable order); returns the path.

    Raises
    ------
    SkillFileError
        The file cannot be written (names the path), or it would hold more
        than :data:`MAX_SKILLS` skills or :data:`MAX_FILE_BYTES` bytes (nothing written).
    """
    path = Path(path)
    if len(skills) > MAX_SKILLS:
        raise SkillFileError(path, "field 'skills'", f"{len(skills)} skills, more than one file may hold "
                                                     f"({MAX_SKILLS}); export them in parts (by state or id)")
    text = json.dumps(skill_file_mapping(skills, product=product, secrets=secrets), indent=2, ensure_ascii=False)
    if len(text.encode("utf-8")) > MAX_FILE_BYTES:
        raise SkillFileError(path, "", f"the file would be more than {MAX_FILE_BYTES} bytes; export the skills "
                                       f"in parts (by state or id)")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, (text + "\n").encode("utf-8"))
    except OSError as exc:
        raise SkillFileError(path, "", f"cannot write: {exc.strerror or exc}") from None
    return path


# --- importing -------------------------------------------------------------------------------------------


#: Quality an imported skill starts with: no use here yet (the middle of 0..1, above the review area's 0.3).
IMPORTED_QUALITY = 0.5
#: The validation reason every imported skill arrives with (approving it needs ``force``, said in its reason).
NOT_VALIDATED_HERE = "not validated here: imported, so the file's validation, quality and counters are not kept"


@dataclass(frozen=True)
class ImportReport:
    """What an import did.

    ``added``: new ids; ``replaced``: ids that existed (proposed, or
    reviewed and ``replace_approved``); ``skipped``: ``(id, reason)`` for
    reviewed skills (approved, rejected, retired) left as they were;
    ``changed``: one line per replaced skill saying what changed in it
    (a replaced approved skill is proposed again and needs a new approval).
    """

    added: tuple[str, ...] = ()
    replaced: tuple[str, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()
    moved_from: tuple[str, ...] = field(default=())
    changed: tuple[str, ...] = ()

    def lines(self) -> list[str]:
        """Human summary, one line each."""
        out = [f"added {len(self.added)}, replaced {len(self.replaced)}, skipped {len(self.skipped)}"]
        out += [f"skipped {sid}: {why}" for sid, why in self.skipped]
        out += list(self.changed)
        if self.moved_from:
            out.append(f"skills of {'product' if len(self.moved_from) == 1 else 'products'} {', '.join(self.moved_from)} were put in this project's skill space")
        if self.added or self.replaced:
            out.append("imported skills are not validated here: approving one needs --force (said in its reason)")
        return out


#: Fields a replacement may change, as the import's report names them.
_DIFF_FIELDS = ("description", "kind", "trigger", "actions", "verify", "recovery", "params", "max_steps", "max_ms")


def _what_changed(old: Skill, new: Skill) -> str:
    if old.actions != new.actions:
        def acts(s: Skill) -> str:
            return "; ".join(f"{a.action.kind}{' ' + repr(a.action.value) if a.action.value else ''} on "
                             f"{a.target.role or 'element'} {a.target.label_text!r}" for a in s.actions)
        return f"actions {acts(old)} -> {acts(new)}"
    names = [f for f in _DIFF_FIELDS if getattr(old, f) != getattr(new, f)]
    return ", ".join(names) + " changed" if names else "nothing of its behaviour changed"


def import_skills(table: Any, path: Path | str, *, product: str, replace_approved: bool = False,
                  keep_state: bool = False, secrets: Iterable[str] = (),
                  secret_names: Iterable[str] = ()) -> ImportReport:
    """Read a skill file and store its skills in ``product``'s skill space, all in one transaction.

    Every skill is checked first (:func:`read_skill_file`); nothing is stored
    when one fails.  An id that names an approved skill is skipped and
    reported unless ``replace_approved`` - and so is one a person here
    rejected or retired (a shared file does not bring back what was turned
    down here).  A replaced skill is ``proposed`` again whatever it was (it
    needs a new approval here) and the report says what changed in it.

    Nothing a file says about how good a skill is is trusted: every
    imported skill arrives with the validation :data:`NOT_VALIDATED_HERE`
    (no case: approving it needs ``force``, and the approval's reason says
    so), zero successes and failures, no last use and the quality
    :data:`IMPORTED_QUALITY`.  Imported skills arrive as ``proposed``;
    ``keep_state`` keeps a file's ``rejected`` or ``retired`` (a team's
    "do not use") but never ``approved`` - an approved skill there is
    proposed here (a person of this project approves what fires here).
    Their provenance source becomes ``import`` (imports do not count against
    the daily cap), their scope's product ``product``.  No import keeps
    ``irreversible_ok``: acting on an irreversible step is approved here,
    for the step, by ``approve --irreversible-ok``.

    Parameters
    ----------
    table : core.store.skills.SkillTable
        The project's skill table.
    secrets, secret_names : Iterable[str]
        The project's secret values and secret parameter names (:func:`read_skill_file`).

    Raises
    ------
    SkillFileError
        The file is not a usable skill file.
    """
    skills = read_skill_file(path, secrets=secrets, secret_names=secret_names)
    moved = sorted({s.scope.product for s in skills if s.scope.product and s.scope.product != product})
    ready: list[Skill] = []
    added: list[str] = []
    replaced: list[str] = []
    skipped: list[tuple[str, str]] = []
    changed: list[str] = []
    stored = {x.id: x for x in table.list()}  # one read: ids are unique in the store
    name = Path(path).name
    for s in skills:
        old = stored.get(s.id)
        if old is not None and old.state != "proposed" and not replace_approved:
            why = f" ({old.review_reason})" if old.review_reason and old.state != "approved" else ""
            article = "an" if old.state == "approved" else "a"
            skipped.append((s.id, f"{article} {old.state} skill has this id{why}; --replace-approved replaces it"))
            continue
        was = f" (it was {s.state} there)" if s.state != "proposed" else ""
        if keep_state and s.state in ("rejected", "retired"):
            state, reason = s.state, f"kept from {name}: " + (s.review_reason or f"{s.state} there")
        else:
            state, reason = "proposed", f"imported from {name}{was}"
        new = replace(s, state=state, review_reason=reason, scope=replace(s.scope, product=product),  # type: ignore[arg-type]
                      irreversible_ok=False, provenance=replace(s.provenance, source="import"),
                      validation=SkillValidation(reasons=(NOT_VALIDATED_HERE,)), successes=0, failures=0,
                      quality=IMPORTED_QUALITY, last_used_at=None,
                      created_at=None if old is None else old.created_at)
        ready.append(new)
        if old is None:
            added.append(s.id)
        else:
            replaced.append(s.id)
            again = ", and needs a new approval" if old.state == "approved" and state == "proposed" else ""
            changed.append(f"replaced {s.id} ({old.state} here, now {state}{again}): {_what_changed(old, new)}")
    table.put_many(ready, replace_approved=replace_approved)
    return ImportReport(tuple(added), tuple(replaced), tuple(skipped), tuple(moved), tuple(changed))
