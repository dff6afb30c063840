"""Property-based fuzzing of recording journals (steps.jsonl, meta.json) as ``recover_journal`` reads them.

A journal is what a killed recording leaves behind, so anything may be in it: every outcome is a recovered flow,
None (nothing recorded), or one ProjectError in one line naming the file (and, for a bad line, the line); never
another exception, and the journal folder is left byte for byte as it was (reading writes nothing).  A torn last
line (the process killed mid-write) loses that step only.
"""
from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings, strategies as st

from core.domain import Action, ElementDescriptor, Flow, Step
from core.project import ProjectError
from core.project.loader import flow_to_mapping
from core.record.journal import recover_journal

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CLICK = Step("s1", Action("click"), name="Click Save", target=ElementDescriptor(tag="button", role="button", name="Save"))
TYPE = Step("s2", Action("input", "{password}"), name="Fill Password",
            target=ElementDescriptor(tag="input", role="textbox", name="Password", type="password"))
STEPS = [flow_to_mapping(Flow("x", "/", (s,)))["steps"][0] for s in (CLICK, TYPE)]
HEADER = {"op": "journal", "schema_version": 1}

scalars = st.none() | st.booleans() | st.integers(-5, 10**6) | st.floats(allow_nan=True) | st.text(max_size=10)
values = st.recursive(scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=6), c, max_size=3),
                      max_leaves=10)


def _mutate(draw: st.DrawFn, rec: dict[str, Any]) -> dict[str, Any]:
    rec = json.loads(json.dumps(rec))
    target = rec["step"] if "step" in rec and isinstance(rec["step"], dict) and draw(st.booleans()) else rec
    key = draw(st.sampled_from(sorted(target) + ["extra"]))
    if draw(st.booleans()) and key in target:
        del target[key]
    else:
        target[key] = draw(values)
    return rec


@st.composite
def journals(draw: st.DrawFn) -> tuple[bytes, bytes]:
    """(steps.jsonl, meta.json) bytes: valid records, mutated ones, random JSON, garbage and torn lines."""
    records: list[Any] = [HEADER] if draw(st.booleans()) else []
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["step", "mutated", "remove", "random"]))
        base = {"op": "step", "step": draw(st.sampled_from(STEPS))}
        if kind == "step":
            records.append(base)
        elif kind == "mutated":
            records.append(_mutate(draw, base))
        elif kind == "remove":
            records.append({"op": "remove", "index": draw(st.integers(-2, 4) | values)})
        else:
            records.append(draw(values))
    text = "".join(json.dumps(r) + "\n" for r in records).encode()
    tail = draw(st.sampled_from(["none", "torn", "garbage", "bytes"]))
    if tail == "torn" and text:
        text = text[:draw(st.integers(0, len(text) - 1))]
    elif tail == "garbage":
        text += draw(st.text(max_size=20)).encode()
    elif tail == "bytes":
        text += draw(st.binary(max_size=20))
    meta = draw(st.sampled_from([
        json.dumps({"schema_version": 1, "flow": "save", "start_url": "/form"}).encode(),
        json.dumps({"schema_version": 1, "flow": draw(values), "start_url": draw(values)}).encode(),
        json.dumps({"flow": "../../escape"}).encode(),
        draw(st.binary(max_size=30)),
    ]))
    return text, meta


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@FUZZ
@given(journals())
def test_any_journal_recovers_or_is_one_clear_error_and_is_left_untouched(journal: tuple[bytes, bytes]) -> None:
    steps_bytes, meta_bytes = journal
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "save-20260101-120000"
        folder.mkdir()
        (folder / "steps.jsonl").write_bytes(steps_bytes)
        (folder / "meta.json").write_bytes(meta_bytes)
        before = _snapshot(folder)
        try:
            got = recover_journal(folder)
        except ProjectError as exc:
            text = str(exc)
            assert "\n" not in text and text.startswith(str(folder)), text
            assert exc.location or "not a" in exc.detail, text
        else:
            if got is not None:
                flow, _, _ = got
                assert flow.name and "/" not in flow.name and flow.steps
        assert _snapshot(folder) == before


def test_a_torn_last_line_loses_only_that_step(tmp_path: Path) -> None:
    folder = tmp_path / "save-20260101-120000"
    folder.mkdir()
    lines = [json.dumps(HEADER), json.dumps({"op": "step", "step": STEPS[0]}), json.dumps({"op": "step", "step": STEPS[1]})]
    (folder / "steps.jsonl").write_text("\n".join(lines[:2]) + "\n" + lines[2][:40], encoding="utf-8")
    flow, _, _ = recover_journal(folder)
    assert [s.id for s in flow.steps] == ["s1"]


def test_a_bad_line_in_the_middle_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "save-20260101-120000"
    folder.mkdir()
    (folder / "steps.jsonl").write_text(json.dumps(HEADER) + "\n{oops\n" + json.dumps({"op": "step", "step": STEPS[0]})
                                        + "\n", encoding="utf-8")
    try:
        recover_journal(folder)
    except ProjectError as exc:
        assert exc.location == "line 2" and str(exc).startswith(str(folder / "steps.jsonl"))
    else:
        raise AssertionError("a corrupt line was read")


def test_a_flow_name_that_leaves_the_project_and_linked_files_are_refused(tmp_path: Path) -> None:
    folder = tmp_path / "save-20260101-120000"
    folder.mkdir()
    (folder / "steps.jsonl").write_text(json.dumps({"op": "step", "step": STEPS[0]}) + "\n", encoding="utf-8")
    (folder / "meta.json").write_text(json.dumps({"flow": "../../../home/x"}), encoding="utf-8")
    try:
        recover_journal(folder)
        raise AssertionError("a traversing flow name was accepted")
    except ProjectError as exc:
        assert exc.location == "field 'flow'" and "meta.json" in exc.path
    (folder / "meta.json").write_text(json.dumps({"flow": "save"}), encoding="utf-8")
    outside = tmp_path / "secret.txt"
    outside.write_text("not yours")
    (folder / "files").mkdir()
    (folder / "files" / "note.txt").symlink_to(outside)
    try:
        recover_journal(folder)
        raise AssertionError("a symbolic link out of the journal was read")
    except ProjectError as exc:
        assert "symbolic link" in str(exc)
    (folder / "files" / "note.txt").unlink()
    (folder / "s1.png").symlink_to(outside)
    try:
        recover_journal(folder)
        raise AssertionError("a linked crop was read")
    except ProjectError as exc:
        assert "symbolic link" in str(exc) and exc.location == "step 's1'"
