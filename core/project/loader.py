"""Load, validate and save project folders and flow files.

A project folder holds ``steadyhand.yaml`` (settings) and ``flows/*.yaml``
(one flow per file).  Run data lives in ``.steadyhand/`` inside the project
(git-ignored).  Files are validated on load; a bad file raises one
:class:`ProjectError` naming the file, the step and the field.
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import yaml
from pydantic import ValidationError

from core.progress import counted
from core.act.space import needs_target, spec
from core.domain import (
    Action, AfterState, Assertion, BreakerSettings, BrowserSettings, ElementDescriptor, EngineSettings, EpisodeSpec, Flow,
    LocatorConfig, Step, StepEvidence, UntrustedValue, WaitSettings,
)

from .schema import SCHEMA_VERSION, FlowModel, ProjectModel

__all__ = [
    "ProjectError", "Project", "SETTINGS_FILE", "FLOWS_DIR", "DATA_DIR",
    "load_project", "load_flow", "flow_from_mapping", "flow_to_mapping", "flow_text", "check_flow_text", "save_flow",
    "run_data_dir", "check_run_data_dir", "MAX_FILE_BYTES", "check_size", "yaml_location",
    "engine_settings_of",
]

SETTINGS_FILE = "steadyhand.yaml"
FLOWS_DIR = "flows"
DATA_DIR = ".steadyhand"


class ProjectError(Exception):
    """A project or flow file is missing or invalid.

    The message names the file, the location (step and field) and what was
    expected, in one line.
    """

    def __init__(self, path: Path | str, message: str, *, location: str = "") -> None:
        self.path = str(path)
        self.location = _one_line(location)
        self.detail = _one_line(message)
        where = f" at {self.location}" if self.location else ""
        super().__init__(f"{self.path}{where}: {self.detail}")


def _one_line(text: str) -> str:
    """``text`` with its line breaks and other control characters escaped (``\\n``): an error is one line, even
    when it quotes a field name or a value taken from the file."""
    return text if text.isprintable() else "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


@dataclass(frozen=True, slots=True)
class Project:
    """A loaded project.

    Attributes
    ----------
    root : Path
        Project folder.
    settings : ProjectModel
        Validated settings file (read-only use): name, site, params, secrets.
    flows : Mapping[str, Flow]
        Flows by name, in file-name order.
    engine_settings : EngineSettings
        The run settings (browser, locator, breaker, waits, max_steps) built
        once from ``settings`` (:func:`engine_settings_of`); what the engine,
        the driver and the recorder read.
    invalid : Mapping[str, ProjectError]
        Flow files that did not load, by file path, each with its error
        (file, step, field, what was expected); empty unless loaded with
        ``skip_invalid=True``.
    """

    root: Path
    settings: ProjectModel
    flows: Mapping[str, Flow] = field(default_factory=dict)
    invalid: Mapping[str, ProjectError] = field(default_factory=dict)
    engine_settings: EngineSettings = field(init=False)

    def __post_init__(self) -> None:
        settings = engine_settings_of(self.settings)
        if self.settings.browser.executable_path:  # runs a program: only in a project trusted on this machine
            from dataclasses import replace

            from .trust import untrusted_setting

            err = untrusted_setting(self.root, self.settings, "browser.executable_path")
            if err is not None:
                settings = replace(settings, browser=replace(settings.browser, executable_path=UntrustedValue(
                    self.settings.browser.executable_path, str(err))))
        object.__setattr__(self, "engine_settings", settings)

    @property
    def name(self) -> str:
        return self.settings.name

    @property
    def data_dir(self) -> Path:
        """``<root>/.steadyhand`` (created on demand)."""
        return run_data_dir(self.root)

    @property
    def secret_names(self) -> tuple[str, ...]:
        return tuple(self.settings.secrets)

    def invalid_flow(self, name: str) -> ProjectError | None:
        """The error of the invalid flow file that defines flow ``name`` (its ``name`` field, or its file stem
        when the file cannot be read that far), else ``None``."""
        for file, err in self.invalid.items():
            if name in _declared_names(Path(file)):
                return err
        return None


def _declared_names(file: Path) -> tuple[str, ...]:
    """The flow names a flow file may stand for: its file stem and, when it reads as YAML, its ``name``."""
    names = [file.stem]
    try:
        check_size(file)
        data = yaml.load(file.read_text(encoding="utf-8"), Loader=_YAML_LOADER)  # noqa: S506 - a safe loader
    except (OSError, UnicodeDecodeError, yaml.YAMLError, ProjectError, RecursionError, MemoryError):
        data = None
    if isinstance(data, dict) and isinstance(data.get("name"), str):
        names.append(data["name"])
    return tuple(names)


def engine_settings_of(model: ProjectModel) -> EngineSettings:
    """The frozen run settings of a validated settings file.

    Sections missing from the file hold the defaults of
    :mod:`core.domain.settings`; the viewport's ``width`` / ``height`` (CSS
    px) become ``viewport_width`` / ``viewport_height``.
    """
    browser = model.browser.model_dump(exclude={"viewport"})
    return EngineSettings(
        browser=BrowserSettings(**browser, viewport_width=model.browser.viewport.width,
                                viewport_height=model.browser.viewport.height),
        locator=LocatorConfig(**model.locator.model_dump()),
        breaker=BreakerSettings(**model.breaker.model_dump()),
        waits=WaitSettings(**model.waits.model_dump()),
        max_steps=model.max_steps,
        evidence=model.evidence,
    )


def run_data_dir(root: Path) -> Path:
    """Return (and create) the git-ignored run-data folder of a project.

    Raises
    ------
    ProjectError
        The folder, or an entry in it (the store, its media folder), is a symbolic link that leads out of the
        project: the store, screenshots and reports stay inside the project (issue 21 item 2).
    """
    d = Path(root) / DATA_DIR
    check_run_data_dir(root)
    d.mkdir(parents=True, exist_ok=True)
    gi = d / ".gitignore"
    if not gi.exists():
        gi.write_text("*\n", encoding="utf-8")
    return d


def check_run_data_dir(root: Path) -> None:
    """Refuse a run-data folder (``<root>/.steadyhand``) that is, or holds, a symbolic link leading out of the
    project; creates nothing.

    Raises
    ------
    ProjectError
        Naming the link.
    """
    d = Path(root) / DATA_DIR
    _refuse_link_out(Path(root), d)
    try:
        entries = list(d.iterdir()) if d.is_dir() else []
    except OSError:
        entries = []
    for entry in entries:
        _refuse_link_out(Path(root), entry)


def _refuse_link_out(root: Path, path: Path) -> None:
    """Raise :class:`ProjectError` when ``path`` is a symbolic link that resolves outside ``root`` (or loops)."""
    if not path.is_symlink():
        return
    try:
        path.resolve(strict=False).relative_to(root.resolve())
        return
    except (ValueError, OSError, RuntimeError):
        pass
    raise ProjectError(path, "a symbolic link leads out of the project; the store, screenshots and reports stay "
                             "inside the project folder: refused (replace the link with a folder or file)")


#: YAML's safe loader, libyaml's C one when PyYAML has it (the same documents, ~8x faster on flow files).
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


#: Largest project, flow or import file read, bytes (4 MiB).  Checked on the file's size before it is read or
#: parsed, so a file of 200,000 steps is refused at once.  The largest flow bundled with Steadyhand is 12 KB;
#: a recorded flow of 1,000 steps with full targets and after-states is about 2 MB.
MAX_FILE_BYTES = 4 * 1024 * 1024


def check_size(path: Path | str, *, limit: int = MAX_FILE_BYTES, what: str = "file") -> None:
    """Refuse a file larger than ``limit`` bytes before it is read (a missing file is left to the reader).

    Raises
    ------
    ProjectError
        Naming the file, its size and the limit.
    """
    try:
        size = Path(path).stat().st_size
    except OSError:
        return
    if size > limit:
        raise ProjectError(path, f"{size:,} bytes, more than a {what} may have ({limit:,} bytes): not read")


def yaml_location(exc: BaseException, text: str = "") -> str:
    """``"line L, column C"`` (1-based) of a YAML error, on the line a person has to fix.

    The parser reports where it *noticed* the problem; for an unclosed quote or bracket, or a line without
    its ``:``, that is the start of the next line or the end of the file - one line after the real one.
    Then the place where the construct began (the error's context mark) is given, or else the end of the
    last line that holds text.  "" when the error has no position.
    """
    mark = getattr(exc, "problem_mark", None)
    if mark is None:
        return ""
    line, col = mark.line, mark.column
    if "tab" in str(getattr(exc, "problem", "") or ""):
        return f"line {line + 1}, column {col + 1}"  # the tab itself is the mistake, where it was found
    context = getattr(exc, "context_mark", None)
    at_eof = bool(text) and not text[getattr(mark, "index", len(text)):].strip()
    noticed_late = (col == 0 and line > 0) or at_eof
    if context is not None and context.line < line and (noticed_late or context.line == line - 1):
        line, col = context.line, context.column  # an unclosed quote or bracket, a key without its ':'
    elif noticed_late and text:
        lines = text.splitlines()
        prev = min(line, len(lines)) - 1
        while prev > 0 and not lines[prev].strip():
            prev -= 1
        if 0 <= prev < line:
            line, col = prev, len(lines[prev].rstrip())
    return f"line {line + 1}, column {col + 1}"


def _read_yaml(path: Path) -> Any:
    check_size(path, what="project or flow file")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ProjectError(path, "file not found") from None
    except OSError as exc:
        raise ProjectError(path, f"cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ProjectError(path, f"not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {exc.start})",
                           location=f"byte {exc.start}") from None
    try:
        return yaml.load(text, Loader=_YAML_LOADER)  # noqa: S506 - a safe loader (libyaml's when built with it)
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or str(exc)
        raise ProjectError(path, f"not valid YAML: {problem}", location=yaml_location(exc, text)) from None
    except (RecursionError, MemoryError):
        raise ProjectError(path, "not readable YAML: nested too deeply") from None


def _location(err: Mapping[str, Any], data: Any) -> str:
    """Human location like ``step 's3' (#3), field 'action'``."""
    loc = list(err.get("loc", ()))
    parts: list[str] = []
    if len(loc) >= 2 and loc[0] == "steps" and isinstance(loc[1], int):
        idx = loc[1]
        sid = ""
        try:
            sid = str(data["steps"][idx].get("id", ""))
        except Exception:
            pass
        parts.append(f"step {sid!r} (#{idx + 1})" if sid else f"step #{idx + 1}")
        loc = loc[2:]
    if loc:
        parts.append("field '" + ".".join(str(p) for p in loc) + "'")
    return ", ".join(parts)


def _validation_error(path: Path, exc: ValidationError, data: Any) -> ProjectError:
    errors = exc.errors()
    # an unknown key is named first: it is usually the misspelling of the field reported missing beside it
    err = next((e for e in errors if e.get("type") == "extra_forbidden"), errors[0])
    msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
    if err.get("type") == "extra_forbidden":
        parent = tuple(err.get("loc", ()))[:-1]
        missing = [str(e["loc"][-1]) for e in errors
                   if e.get("type") == "missing" and tuple(e.get("loc", ()))[:-1] == parent and e.get("loc")]
        said = " and ".join(repr(m) for m in missing)
        msg = "unknown field (check the spelling" + (
            f"; {said} {'are' if len(missing) > 1 else 'is'} missing)" if missing else ")")
    elif err.get("type") == "missing":
        msg = "required field is missing"
    more = f" (and {counted(len(exc.errors()) - 1, 'more problem')})" if len(exc.errors()) > 1 else ""
    return ProjectError(path, f"{msg}{more}", location=_location(err, data))


def _check_version(path: Path, data: Mapping[str, Any]) -> None:
    v = data.get("schema_version", SCHEMA_VERSION)
    if isinstance(v, int) and v > SCHEMA_VERSION:
        raise ProjectError(
            path, f"schema_version {v} is newer than this Steadyhand supports ({SCHEMA_VERSION}); upgrade Steadyhand",
            location="field 'schema_version'")


def load_flow(path: Path | str) -> Flow:
    """Load and validate one flow file.

    Raises
    ------
    ProjectError
        Naming the file, the step and the field when the file is invalid.
    """
    path = Path(path)
    return flow_from_mapping(_read_yaml(path), path)


def flow_from_mapping(data: Any, path: Path | str) -> Flow:
    """Validate a flow given as a plain mapping (as read from YAML); ``path`` names it in errors.

    Raises
    ------
    ProjectError
        Naming the file, the step and the field when the data is invalid.
    """
    path = Path(path)
    if not isinstance(data, dict):
        raise ProjectError(path, "expected a mapping with 'name' and 'steps' at the top level")
    _check_version(path, data)
    try:
        model = FlowModel.model_validate(data)
    except ValidationError as exc:
        raise _validation_error(path, exc, data) from None
    seen: set[str] = set()
    steps: list[Step] = []
    for i, sm in enumerate(model.steps):
        where = f"step {sm.id!r} (#{i + 1})"
        if sm.id in seen:
            raise ProjectError(path, f"duplicate step id {sm.id!r}", location=f"{where}, field 'id'")
        if "/" in sm.id or "\\" in sm.id or sm.id.strip(".") == "" or not sm.id.isprintable():
            raise ProjectError(path, f"step id {sm.id!r} cannot name a file (no '/', '\\', control characters, "
                               "or dots alone); its crop is saved as <id>.png", location=f"{where}, field 'id'")
        seen.add(sm.id)
        try:
            target = ElementDescriptor.from_mapping(sm.target)
        except (TypeError, ValueError, KeyError, IndexError) as exc:
            raise ProjectError(path, f"invalid element descriptor: {exc}", location=f"{where}, field 'target'") from None
        comps = []
        for j, cm in enumerate(sm.compensations):
            try:
                ctarget = ElementDescriptor.from_mapping(cm.target)
            except (TypeError, ValueError, KeyError, IndexError) as exc:
                raise ProjectError(path, f"invalid element descriptor: {exc}",
                                   location=f"{where}, field 'compensations' #{j + 1}") from None
            comp = Step(id=f"{sm.id}.c{j + 1}", name=cm.name, selector=cm.selector, target=ctarget,
                        action=Action(kind=cm.action, value=cm.value, direction=cm.direction,  # type: ignore[arg-type]
                                      distance=cm.distance, timeout_ms=cm.timeout_ms))
            if needs_target(comp) and cm.action != "press" and not comp.selector and ctarget.is_empty:
                raise ProjectError(path, f"compensation action {cm.action!r} needs a 'selector' or a 'target'",
                                   location=f"{where}, field 'compensations' #{j + 1}")
            comps.append(comp)
        after = AfterState(**sm.after.model_dump()) if sm.after is not None else None
        evidence = (StepEvidence(sm.recorded.state_before, sm.recorded.state_after, tuple(sm.recorded.observed),
                                 after) if sm.recorded else (StepEvidence(after=after) if after else None))
        step = Step(
            id=sm.id, name=sm.name,
            action=Action(kind=sm.action, value=sm.value, direction=sm.direction,  # type: ignore[arg-type]
                          distance=sm.distance, timeout_ms=sm.timeout_ms),
            selector=sm.selector, target=target,
            assertions=tuple(Assertion(kind=a.kind, expected=a.expected, selector=a.selector) for a in sm.assertions),
            expect=sm.expect, read_only=sm.read_only, optional=sm.optional,
            reversible=spec(sm.action).reversible if sm.reversible is None else sm.reversible,
            reversible_declared=sm.reversible is not None, compensations=tuple(comps), recorded=evidence,
            goal=sm.goal, allow_irreversible=sm.allow_irreversible, key=sm.key,
            allow=tuple((a.role, a.name) for a in sm.allow),
        )
        if needs_target(step) and not step.selector and target.is_empty:
            raise ProjectError(path, f"action {sm.action!r} needs a 'selector' or a 'target'", location=where)
        if spec(sm.action).value == "required" and sm.value == "":
            raise ProjectError(path, f"action {sm.action!r} needs a 'value'", location=f"{where}, field 'value'")
        steps.append(step)
    _check_paths(path, model)
    episode = (EpisodeSpec(model.episode.task, model.episode.utterance_regex, tuple(model.episode.fields))
               if model.episode else None)
    return Flow(
        name=model.name, start_url=model.start_url, steps=tuple(steps), params=dict(model.params),
        secrets=tuple(model.secrets), episode=episode, description=model.description, source=str(path),
        base_path=model.base_path,
    )


def _check_paths(path: Path, model: FlowModel) -> None:
    """Upload files and crops named by the flow (literally or as a parameter's default) stay in the project."""
    from .params import placeholder_name, placeholders
    from .paths import check_flow_paths

    uploads: dict[str, str] = {}
    crops: dict[str, str] = {}
    for i, sm in enumerate(model.steps):
        where = f"step {sm.id!r} (#{i + 1})"
        if sm.action == "upload" and sm.value:
            name = placeholder_name(sm.value)
            if not placeholders(sm.value):
                uploads[f"{where}, field 'value'"] = sm.value
            elif name in model.params:
                uploads[f"field 'params.{name}'"] = model.params[name]
        crop = sm.target.get("crop") if isinstance(sm.target, dict) else None
        if isinstance(crop, str):
            crops[f"{where}, field 'target.crop'"] = crop
    check_flow_paths(path, uploads, crops)


def load_project(path: Path | str, *, skip_invalid: bool = False) -> Project:
    """Load a project folder (settings and every flow).

    A flow file's length is not limited: ``max_steps`` is a budget of the
    run (:meth:`core.domain.EngineSettings.run_budget`).

    Parameters
    ----------
    skip_invalid : bool
        ``False``: an invalid flow file raises.  ``True``: it is left out of
        ``flows`` and listed in ``Project.invalid`` with its error, and the
        other flows load (what a command on the project wants: one broken
        file never locks the project).

    Raises
    ------
    ProjectError
        When the folder or its settings file is missing or invalid, or (unless
        ``skip_invalid``) a flow file is invalid or reuses another file's flow
        name.
    """
    root = Path(path).expanduser().resolve()
    if not root.is_dir():
        raise ProjectError(root, "project folder not found")
    settings_path = root / SETTINGS_FILE
    data = _read_yaml(settings_path)
    if not isinstance(data, dict):
        raise ProjectError(settings_path, "expected a mapping of settings at the top level")
    _check_version(settings_path, data)
    try:
        settings = ProjectModel.model_validate(data)
    except ValidationError as exc:
        raise _validation_error(settings_path, exc, data) from None
    if not settings.site and not settings.base_url:
        raise ProjectError(settings_path, "set either 'site' (bundled) or 'base_url'", location="field 'base_url'")
    flows: dict[str, Flow] = {}
    invalid: dict[str, ProjectError] = {}
    flow_dir = root / FLOWS_DIR
    for fp in sorted(flow_dir.glob("*.yaml")) if flow_dir.is_dir() else []:
        try:
            flow = load_flow(fp)
            if flow.name in flows:
                raise ProjectError(fp, f"flow name {flow.name!r} is already used by another file",
                                   location="field 'name'")
        except ProjectError as exc:
            if not skip_invalid:
                raise
            invalid[str(fp)] = exc
            continue
        except Exception as exc:  # noqa: BLE001 - any unreadable file is one flow's problem, not the project's
            if not skip_invalid:
                raise
            invalid[str(fp)] = ProjectError(fp, f"cannot be loaded: {type(exc).__name__}: {exc}")
            continue
        flows[flow.name] = flow
    return Project(root=root, settings=settings, flows=flows, invalid=invalid)


def flow_to_mapping(flow: Flow) -> dict[str, Any]:
    """Serialize a flow with stable key order (readable diffs, architecture rule 9)."""
    out: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "name": flow.name}
    if flow.description:
        out["description"] = flow.description
    out["start_url"] = flow.start_url
    if flow.base_path:
        out["base_path"] = flow.base_path
    if flow.params:
        out["params"] = dict(flow.params)
    if flow.secrets:
        out["secrets"] = list(flow.secrets)
    if flow.episode:
        ep: dict[str, Any] = {"task": flow.episode.task}
        if flow.episode.fields:
            ep["fields"] = list(flow.episode.fields)
        if flow.episode.utterance_regex:
            ep["utterance_regex"] = flow.episode.utterance_regex
        out["episode"] = ep
    steps = []
    for s in flow.steps:
        d: dict[str, Any] = {"id": s.id}
        if s.name:
            d["name"] = s.name
        if s.goal:
            d["goal"] = s.goal
        else:
            d["action"] = s.action.kind
        if s.action.value:
            d["value"] = s.action.value
        if s.action.kind == "scroll":
            d["direction"] = s.action.direction
            d["distance"] = s.action.distance
        if s.action.timeout_ms:
            d["timeout_ms"] = s.action.timeout_ms
        if s.selector:
            d["selector"] = s.selector
        if not s.target.is_empty:
            d["target"] = s.target.to_mapping()
        if s.assertions:
            d["assertions"] = [
                {k: v for k, v in (("kind", a.kind), ("expected", a.expected), ("selector", a.selector)) if v}
                for a in s.assertions
            ]
        if s.expect != "auto":
            d["expect"] = s.expect
        if s.reversible_declared or not s.reversible:
            d["reversible"] = s.reversible
        if s.compensations:
            d["compensations"] = [_compensation_mapping(c) for c in s.compensations]
        if s.allow_irreversible:
            d["allow_irreversible"] = True
        if s.allow:
            d["allow"] = [{"role": r, "name": n} for r, n in s.allow]
        if s.key:
            d["key"] = True
        if s.read_only:
            d["read_only"] = True
        if s.optional:
            d["optional"] = True
        after = s.recorded.after if s.recorded is not None else None
        if after is not None and (not after.is_empty or after.download):
            d["after"] = {k: v for k, v in (
                ("url_pattern", after.url_pattern), ("title", after.title), ("heading", after.heading),
                ("dialog", after.dialog), ("dialog_name", after.dialog_name), ("field_changed", after.field_changed),
                ("field_appeared", after.field_appeared), ("response_status", after.response_status),
                ("list_kind", after.list_kind), ("list_delta", after.list_delta if after.list_kind else 0),
                ("landmark", after.landmark), ("region", after.region), ("target_state", after.target_state),
                ("download", after.download))
                if v not in ("", None) and not (k == "list_delta" and v == 0) and not (k == "download" and not v)}
        if s.recorded is not None and (s.recorded.state_before or s.recorded.state_after or s.recorded.observed):
            d["recorded"] = {"state_before": s.recorded.state_before, "state_after": s.recorded.state_after,
                             "observed": list(s.recorded.observed)}
        steps.append(d)
    out["steps"] = steps
    return out


def _compensation_mapping(c: Step) -> dict[str, Any]:
    """One compensation as written in the flow file (stable key order)."""
    d: dict[str, Any] = {}
    if c.name:
        d["name"] = c.name
    d["action"] = c.action.kind
    if c.action.value:
        d["value"] = c.action.value
    if c.action.kind == "scroll":
        d["direction"], d["distance"] = c.action.direction, c.action.distance
    if c.action.timeout_ms:
        d["timeout_ms"] = c.action.timeout_ms
    if c.selector:
        d["selector"] = c.selector
    if not c.target.is_empty:
        d["target"] = c.target.to_mapping()
    return d


class _FlowDumper(yaml.SafeDumper):
    """Lists of numbers (boxes, viewport sizes) on one line: shorter, readable diffs."""


def _represent_list(dumper: yaml.SafeDumper, data: list) -> yaml.Node:
    flow_style = bool(data) and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow_style)


_FlowDumper.add_representer(list, _represent_list)


def flow_text(flow: Flow) -> str:
    """The YAML text :func:`save_flow` writes for ``flow`` (stable key order, number lists on one line)."""
    return yaml.dump(flow_to_mapping(flow), Dumper=_FlowDumper, sort_keys=False, allow_unicode=True, width=100)


def check_flow_text(text: str, path: Path | str) -> None:
    """Load ``text`` as the flow file ``path`` would be loaded (:func:`load_flow`), writing nothing.

    Raises
    ------
    ProjectError
        What the loader would say of that file (file, step, field, what was expected).
    """
    try:
        data = yaml.load(text, Loader=_YAML_LOADER)  # noqa: S506 - a safe loader (libyaml's when built with it)
    except yaml.YAMLError as exc:
        raise ProjectError(path, f"the written text would not be valid YAML: {exc}") from None
    flow_from_mapping(data, path)


def save_flow(flow: Flow, path: Path | str) -> Path:
    """Write a flow file atomically (temp file + rename); returns the path.

    The text is first loaded as :func:`load_flow` would load the file: a flow
    file its own loader refuses is never written.

    Raises
    ------
    ProjectError
        The loader would refuse the file (nothing is written; the file on
        disk, if any, is unchanged).
    OSError
        The file cannot be written.
    """
    path = Path(path)
    text = flow_text(flow)
    check_flow_text(text, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text.encode("utf-8"))
    return path


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temp file in the same folder and a rename.

    A reader never sees half a file, and a crash leaves the old file whole.
    The file gets the mode of an ordinary new file (:func:`regular_file_mode`).
    """
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=path.suffix, dir=str(path.parent))
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, regular_file_mode())  # mkstemp makes 0600
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def regular_file_mode() -> int:
    """Mode of an ordinary new file: 0o666 less the process umask.

    The umask is read from /proc (setting it to read it would race other
    threads); 0o022 is assumed where /proc is missing.
    """
    return 0o666 & ~_umask()


def _umask() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022
