"""Flow names, upload files and crops never lead out of the project: by '..', an absolute path or a symbolic link.

Each command that writes a flow (record --flow, import-codegen --flow, import-side --prefix, explore --save) and
run --flow refuse such a name with exit 2 and one line naming it, before any browser starts and without writing
anything; a flow file whose upload file or crop leaves the project does not load (the error names the step and the
field); an upload parameter bound at run time to a file outside the project stops the step before it acts.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from core.cli import main
from core.project import ProjectError, load_project
from core.project.params import ParameterError
from core.project.paths import flow_file, upload_path
from core.record.command import CHILD_ENV

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """``steadyhand ARGS`` in this process (record too: as the child it would start) -> (code, stdout, stderr)."""
    monkeypatch.setenv(CHILD_ENV, "1")

    def run(*args: str) -> tuple[int, str, str]:
        code = main(list(args))
        out = capsys.readouterr()
        return code, out.out, out.err
    return run


def _project(tmp_path: Path, steps: list[dict] | None = None, params: dict | None = None) -> Path:
    root = tmp_path / "proj"
    (root / "flows").mkdir(parents=True)
    (root / "steadyhand.yaml").write_text(yaml.safe_dump({"name": "P", "base_url": "http://127.0.0.1:9"}))
    if steps is not None:
        doc = {"name": "f", "start_url": "/", "steps": steps, **({"params": params} if params else {})}
        (root / "flows" / "f.yaml").write_text(yaml.safe_dump(doc))
    return root


def _files(top: Path) -> set[str]:
    return {str(p.relative_to(top)) for p in top.rglob("*")}


@pytest.fixture
def escape(tmp_path: Path) -> tuple[Path, Path]:
    """A project whose flows/ is a symbolic link to a folder outside it."""
    root = _project(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "flows").rmdir()
    (root / "flows").symlink_to(outside, target_is_directory=True)
    return root, outside


TRAVERSING = ["../../evil", "../x", "a/b", "/tmp/abs", "..", ""]


@pytest.mark.parametrize("name", TRAVERSING)
def test_flow_file_refuses_names_that_are_not_file_stems(tmp_path: Path, name: str) -> None:
    with pytest.raises(ProjectError) as exc:
        flow_file(_project(tmp_path), name)
    assert "--flow" in str(exc.value) and "\n" not in str(exc.value)


def test_a_flows_folder_linked_out_of_the_project_is_refused(escape: tuple[Path, Path]) -> None:
    root, _ = escape
    with pytest.raises(ProjectError, match="symbolic link leads out of the project"):
        flow_file(root, "ok")


def test_cli_commands_refuse_traversing_flow_names_and_write_nothing(tmp_path: Path, cli) -> None:
    root = _project(tmp_path, [{"id": "a", "action": "click", "selector": "#x"}])
    script = tmp_path / "codegen.py"
    script.write_text("page.goto('http://127.0.0.1:9/')\npage.click('#go')\n")
    side = tmp_path / "t.side"
    side.write_text(json.dumps({"url": "http://127.0.0.1:9", "tests": [
        {"name": "smoke", "commands": [{"command": "open", "target": "/", "value": ""},
                                       {"command": "click", "target": "id=go", "value": ""}]}]}))
    before = _files(tmp_path)
    cases = [
        ("run", str(root), "--flow", "../../etc/passwd", "--headless"),
        ("record", "--project", str(root), "--flow", "../../evil", "--headless"),
        ("import-codegen", str(script), "--project", str(root), "--flow", "../evil"),
        ("import-side", str(side), "--project", str(root), "--prefix", "../../"),
        ("explore", str(root), "--save", "../evil", "--no-model"),
    ]
    for args in cases:
        code, out, err = cli(*args)
        assert code == 2, (args, out, err)
        assert len(err.strip().splitlines()) == 1, (args, err)
        assert "evil" in err or "passwd" in err or "'../../" in err, (args, err)
    assert _files(tmp_path) == before  # nothing written anywhere (no flow, no run data, no journal)


def test_cli_commands_refuse_a_flows_folder_linked_out_of_the_project(escape: tuple[Path, Path],
                                                                      tmp_path: Path, cli) -> None:
    root, outside = escape
    script = tmp_path / "codegen.py"
    script.write_text("page.goto('http://127.0.0.1:9/')\npage.click('#go')\n")
    side = tmp_path / "t.side"
    side.write_text(json.dumps({"url": "http://127.0.0.1:9", "tests": [
        {"name": "smoke", "commands": [{"command": "open", "target": "/", "value": ""},
                                       {"command": "click", "target": "id=go", "value": ""}]}]}))
    for args in (("import-codegen", str(script), "--project", str(root), "--flow", "ok"),
                 ("import-side", str(side), "--project", str(root)),
                 ("record", "--project", str(root), "--flow", "ok", "--headless")):
        code, _, err = cli(*args)
        assert code == 2 and "symbolic link leads out of the project" in err, (args, err)
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("step, field", [
    ({"id": "u", "action": "upload", "selector": "#f", "value": "../../etc/passwd"}, "step 'u' (#1), field 'value'"),
    ({"id": "u", "action": "upload", "selector": "#f", "value": "/etc/passwd"}, "step 'u' (#1), field 'value'"),
    ({"id": "c", "action": "click", "selector": "#x", "target": {"tag": "button", "crop": "../../../x.png"}},
     "step 'c' (#1), field 'target.crop'"),
])
def test_flow_files_whose_upload_or_crop_leaves_the_project_do_not_load(tmp_path: Path, step: dict,
                                                                        field: str, cli) -> None:
    root = _project(tmp_path, [step])
    with pytest.raises(ProjectError) as exc:
        load_project(root)
    assert exc.value.location == field and str(exc.value).startswith(str(root / "flows" / "f.yaml"))
    code, _, err = cli("run", str(root), "--headless")
    assert code == 2 and field in err


def test_an_upload_default_and_a_linked_upload_file_out_of_the_project_are_refused(tmp_path: Path) -> None:
    root = _project(tmp_path, [{"id": "u", "action": "upload", "selector": "#f", "value": "{attachment}"}],
                    params={"attachment": "../../secret.txt"})
    with pytest.raises(ProjectError) as exc:
        load_project(root)
    assert exc.value.location == "field 'params.attachment'"
    secret = tmp_path / "secret.txt"
    secret.write_text("not the project's")
    (root / "flows" / "f.files").mkdir()
    (root / "flows" / "f.files" / "note.txt").symlink_to(secret)
    doc = yaml.safe_load((root / "flows" / "f.yaml").read_text())
    doc["params"]["attachment"] = "f.files/note.txt"
    (root / "flows" / "f.yaml").write_text(yaml.safe_dump(doc))
    with pytest.raises(ProjectError, match="leaves the project folder"):
        load_project(root)
    (root / "flows" / "f.files" / "note.txt").unlink()
    (root / "flows" / "f.files" / "note.txt").write_text("mine")
    assert load_project(root).flows["f"].params["attachment"] == "f.files/note.txt"


def test_an_upload_bound_at_run_time_stays_in_the_project(tmp_path: Path) -> None:
    root = _project(tmp_path)
    source = str(root / "flows" / "f.yaml")
    (root / "flows" / "f.files").mkdir()
    (root / "flows" / "f.files" / "a.txt").write_text("a")
    assert upload_path(source, "f.files/a.txt") == str(root / "flows" / "f.files" / "a.txt")
    assert upload_path(source, str(root / "flows" / "f.files" / "a.txt")).endswith("a.txt")
    for bad in ("/etc/passwd", "../../outside.txt", "f.files/../../../x"):
        with pytest.raises(ParameterError, match="outside the project folder"):
            upload_path(source, bad, where="f: step 'u' (#1)")
