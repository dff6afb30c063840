"""The recorder never writes a flow file its own loader refuses (issue 19, section 4).

``save_recording`` loads the text it is about to write as ``load_flow`` would; a flow the loader refuses is not
written to ``flows/`` (a file already there is left as it was) and is kept whole in ``.steadyhand/unsaved/``, the
error saying where and why.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from core.domain import Action, ElementDescriptor, Flow, Step
from core.project import ProjectError, load_flow, save_flow
from core.record.save import RecordingNotSaved, save_recording


def _step(sid: str, value: str = "x") -> Step:
    return Step(id=sid, action=Action("input", value=value), selector="#q",
                target=ElementDescriptor(tag="input", role="textbox", name="Query"))


def test_a_flow_the_loader_refuses_is_kept_aside_and_the_old_file_stays(tmp_path: Path) -> None:
    root = tmp_path / "p"
    old = save_recording(root, Flow("f", "/", (_step("s1"),)), {})
    before = old.read_bytes()
    refused = Flow("f", "/", (_step("s1", "a"), _step("s1", "b")))  # two steps with one id: the loader refuses
    with pytest.raises(RecordingNotSaved) as info:
        save_recording(root, refused, {})
    err = info.value
    assert old.read_bytes() == before  # nothing written over the flow file
    assert err.kept.parent == root / ".steadyhand" / "unsaved" and err.kept.name.startswith("f-")
    assert str(err.kept) in str(err) and "duplicate step id 's1'" in str(err) and err.location.endswith("field 'id'")
    kept = yaml.safe_load(err.kept.read_text(encoding="utf-8"))
    assert [s["value"] for s in kept["steps"]] == ["a", "b"]  # the recording is whole
    assert load_flow(old).steps[0].action.value == "x"


def test_save_flow_writes_nothing_the_loader_refuses(tmp_path: Path) -> None:
    path = tmp_path / "flows" / "g.yaml"
    with pytest.raises(ProjectError, match="duplicate step id"):
        save_flow(Flow("g", "/", (_step("a"), _step("a"))), path)
    assert not path.exists()
    save_flow(Flow("g", "/", (_step("a"), _step("b"))), path)
    assert [s.id for s in load_flow(path).steps] == ["a", "b"]
