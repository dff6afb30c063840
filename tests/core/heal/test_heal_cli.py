"""``steadyhand heals list | show | accept | reject`` in process, on a project whose store holds proposals.

The proposals are written through the real store (as a run would leave
them); the browser-driven path is in ``tests/e2e/test_heals.py``.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from core.cli import main
from core.domain import Action, ElementDescriptor, Flow, Step
from core.heal import old_key, proposal_key
from core.heal.flowfile import digest
from core.project import load_flow, save_flow
from core.store import HealTable, Store, store_path

OLD = ElementDescriptor(tag="button", role="button", name="Export report", text="Export report", id="export")
NEW = OLD.with_(name="Export report (E)", text="Export report (E)", id="btn-export")


@pytest.fixture
def project(tmp_path) -> tuple[Path, list[int]]:
    root = tmp_path / "p"
    (root / "flows").mkdir(parents=True)
    (root / "steadyhand.yaml").write_text("name: T\nbase_url: http://127.0.0.1:9\n")
    flow = Flow("f", "/", (Step(id="s1", name="Export", action=Action("click"), target=OLD),
                           Step(id="s2", name="Save", action=Action("click"),
                                target=OLD.with_(name="Save", text="Save", id="save"))))
    path = save_flow(flow, root / "flows" / "f.yaml")
    store = Store.open(store_path(root))
    ids = []
    for step, new in ((flow.steps[0], NEW), (flow.steps[1], flow.steps[1].target.with_(name="Save draft"))):
        rec, _ = HealTable(store).propose(dict(
            key=proposal_key("f", step.id, step.target, new), old_key=old_key("f", step.id, step.target),
            project="T", flow="f", flow_file="flows/f.yaml", step_id=step.id, step_title=step.title, kind="heal",
            old_target=step.target.to_mapping(), new_target=new.to_mapping(), strategy="fuzzy_text", score=0.95,
            margin=0.3, top=[{"ref": "0:1", "score": 0.95, "label": new.name}], run_id="r1", last_run_id="r1",
            flow_digest=digest(path.read_bytes())))
        ids.append(rec.id)
    store.close()
    return root, ids


def test_list_show_accept_reject(project, capsys) -> None:
    root, (export, save) = project
    assert main(["heals", "list", str(root)]) == 0
    out = capsys.readouterr().out
    assert f"#{export}  pending  heal  f / s1" in out and "button 'Export report' -> button 'Export report (E)'" in out

    assert main(["heals", "show", str(root), str(export)]) == 0
    shown = capsys.readouterr().out
    assert "old (flow file)" in shown and "new (acted on)" in shown
    assert "*  name (id)" in shown and "fuzzy_text, score 0.95, margin 0.30" in shown
    assert "--- a/flows/f.yaml" in shown and "+    name: Export report (E)" in shown

    before = (root / "flows" / "f.yaml").read_text()
    assert main(["heals", "accept", str(root), str(export)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("--- a/flows/f.yaml") and f"accepted heal #{export}" in out
    assert "+    name: Export report (E)" in out and out.split("accepted")[0] in shown
    after = (root / "flows" / "f.yaml").read_text()
    assert after != before and load_flow(root / "flows" / "f.yaml").steps[0].target.id == "btn-export"

    # the other proposal of the same file is not made stale by a change the reviewer accepted
    assert main(["heals", "reject", str(root), str(save), "--reason", "Save draft is another control"]) == 0
    assert f"rejected heal #{save}" in capsys.readouterr().out
    assert (root / "flows" / "f.yaml").read_text() == after

    assert main(["heals", "list", str(root)]) == 0
    assert capsys.readouterr().out.strip() == "no heal proposals"
    assert main(["heals", "list", str(root), "--all"]) == 0
    listed = capsys.readouterr().out
    assert f"#{export}  accepted" in listed and f"#{save}  rejected" in listed


def test_errors_say_what_is_wrong_and_write_nothing(project, capsys) -> None:
    root, (export, save) = project
    flow_file = root / "flows" / "f.yaml"
    assert main(["heals", "show", str(root), "77"]) == 2
    assert "no heal proposal #77" in capsys.readouterr().err
    assert main(["heals", "reject", str(root), str(save)]) == 0
    capsys.readouterr()
    assert main(["heals", "accept", str(root), str(save)]) == 2
    assert f"heal #{save} was already rejected" in capsys.readouterr().err
    flow_file.write_text(flow_file.read_text().replace("name: Export\n", "name: Export it\n"))
    edited = flow_file.read_text()
    assert main(["heals", "accept", str(root), str(export)]) == 2
    assert "flows/f.yaml changed on disk since heal" in capsys.readouterr().err
    assert flow_file.read_text() == edited
    assert main(["heals", "show", str(root), str(export)]) == 0  # still shown, with why there is no diff
    assert "(no diff: flows/f.yaml changed on disk" in capsys.readouterr().out
    assert main(["heals", "list", str(root.parent)]) == 2
    assert "not a project folder" in capsys.readouterr().err


def test_a_project_without_runs_has_no_proposals_and_gets_no_store(tmp_path, capsys) -> None:
    (tmp_path / "steadyhand.yaml").write_text("name: T\nbase_url: http://127.0.0.1:9\n")
    assert main(["heals", "list", str(tmp_path)]) == 0
    assert "no heal proposals" in capsys.readouterr().out
    assert main(["heals", "accept", str(tmp_path), "1"]) == 2
    assert not store_path(tmp_path).exists()
