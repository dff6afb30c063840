"""Property-based fuzzing of project files (steadyhand.yaml) and flow files (hypothesis).

Whatever the bytes, loading a project gives a project or one :class:`ProjectError` in one line that starts with
the file's path and, when the file parsed as a mapping, names the field; never another exception (no KeyError,
TypeError, AttributeError, ...), and the project folder is left byte for byte as it was (no partial write).
Documents come three ways: valid files with one field replaced, removed or added; random YAML values; raw
bytes and truncations of valid files.
"""
from __future__ import annotations

import copy
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from core.project import ProjectError, load_project
from core.project.loader import load_flow

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "projects" / "demo"
SETTINGS = (DEMO / "steadyhand.yaml").read_text(encoding="utf-8")
#: A short flow of every kind of field: a typed parameter, a click with its descriptor, an assertion, the state
#: after, a compensation (the first three steps of the demo's lockout flow, and one undo).
_doc = yaml.safe_load((DEMO / "flows" / "login_lockout.yaml").read_text(encoding="utf-8"))
_doc["steps"] = _doc["steps"][:3]
_doc["steps"][2]["compensations"] = [{"name": "Back", "action": "back"}]
FLOW = yaml.safe_dump(_doc, allow_unicode=True)
_LOAD = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMP = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = (st.none() | st.booleans() | st.integers(-10**12, 10**12) | st.floats(allow_nan=True)
           | st.text(max_size=12) | st.sampled_from(["", "{user}", "../../etc/passwd", "click", "-1", "1e400"]))
values = st.recursive(scalars, lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c, max_size=4),
                      max_leaves=12)


def _paths(doc: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix] if prefix else []
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, prefix + (i,))
    return out


@st.composite
def mutated(draw: st.DrawFn, text: str) -> str:
    """``text`` (a valid YAML file) with one to three fields replaced, removed or added."""
    doc = copy.deepcopy(_parsed(text))
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(doc)
        path = draw(st.sampled_from(paths))
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        op = draw(st.sampled_from(["replace", "remove", "add"]))
        if op == "replace":
            parent[path[-1]] = draw(values)
        elif op == "remove":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=8))] = draw(values)
        else:
            parent.append(draw(values))
        if not _paths(doc):
            break
    return _dump(doc)


_PARSED: dict[str, Any] = {}


def _parsed(text: str) -> Any:
    if text not in _PARSED:
        _PARSED[text] = yaml.load(text, Loader=_LOAD)
    return _PARSED[text]


def _dump(value: Any) -> str:
    return yaml.dump(value, Dumper=_DUMP, allow_unicode=True)


@st.composite
def truncated(draw: st.DrawFn, text: str) -> bytes:
    data = text.encode()
    return data[:draw(st.integers(0, len(data)))]


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _check_error(exc: ProjectError, file: Path, parsed_mapping: bool) -> None:
    text = str(exc)
    assert "\n" not in text, text
    assert text.startswith(str(file)), text
    assert exc.detail, text
    if parsed_mapping and "YAML" not in exc.detail:
        assert exc.location or "top level" in exc.detail, f"no field named: {text}"


def _load_project_with(settings_bytes: bytes, flow_bytes: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "flows").mkdir()
        (root / "steadyhand.yaml").write_bytes(settings_bytes)
        (root / "flows" / "f.yaml").write_bytes(flow_bytes)
        before = _snapshot(root)
        try:
            load_project(root)
        except ProjectError as exc:
            bad = root / ("steadyhand.yaml" if exc.path.endswith("steadyhand.yaml") else "flows/f.yaml")
            data = (settings_bytes if bad.name == "steadyhand.yaml" else flow_bytes)
            try:
                parsed = isinstance(yaml.load(data, Loader=_LOAD), dict)
            except (yaml.YAMLError, ValueError):
                parsed = False
            _check_error(exc, bad.resolve(), parsed)
        assert _snapshot(root) == before  # nothing written, nothing removed


@FUZZ
@given(mutated(SETTINGS))
def test_mutated_project_file(text: str) -> None:
    _load_project_with(text.encode(), FLOW.encode())


@FUZZ
@given(mutated(FLOW))
def test_mutated_flow_file(text: str) -> None:
    _load_project_with(SETTINGS.encode(), text.encode())


@FUZZ
@given(values)
def test_random_yaml_as_project_or_flow(value: Any) -> None:
    doc = _dump(value).encode()
    _load_project_with(doc, FLOW.encode())
    _load_project_with(SETTINGS.encode(), doc)


@FUZZ
@given(st.binary(max_size=300) | truncated(SETTINGS) | truncated(FLOW))
def test_raw_bytes_and_truncated_files(data: bytes) -> None:
    _load_project_with(data, FLOW.encode())
    _load_project_with(SETTINGS.encode(), data)


@FUZZ
@given(mutated(FLOW))
def test_a_flow_loaded_alone(text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "f.yaml"
        path.write_text(text, encoding="utf-8")
        try:
            load_flow(path)
        except ProjectError as exc:
            _check_error(exc, path, isinstance(yaml.load(text, Loader=_LOAD), dict))


def test_the_mutations_reach_valid_files_too() -> None:
    """Not every mutation is an error: the fuzzing also walks loadable files (a sanity check of the strategy)."""
    doc = yaml.safe_load(FLOW)
    doc2 = copy.deepcopy(doc)
    doc2["description"] = "changed"
    _load_project_with(SETTINGS.encode(), yaml.safe_dump(doc2).encode())
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "flows").mkdir()
        (root / "steadyhand.yaml").write_text(SETTINGS)
        (root / "flows" / "f.yaml").write_text(yaml.safe_dump(doc2))
        assert load_project(root).flows["login_lockout"].description == "changed"
