"""The TodoMVC case of ``bench drift`` (issue 19, row 1): its pure parts - the judgement of the app's own list,
the implementations found in the package's layout and the table."""
from __future__ import annotations

from pathlib import Path

from core.bench.drift_todomvc import ITEM, ImplResult, TodoReport, format_todomvc, implementations, judge_items


def test_the_list_afterwards_is_the_ground_truth() -> None:
    assert judge_items([ITEM]) == (False, 0, True)
    assert judge_items([ITEM, ITEM, ITEM]) == (False, 2, False)  # Enter pressed three times: two repeated
    assert judge_items(["Buy milkBuy milk"]) == (True, 0, False)  # typed twice into one item: wrong
    assert judge_items([]) == (False, 0, False)  # nothing added: missed, neither wrong nor repeated


def test_implementations_are_the_example_folders_with_a_page(tmp_path: Path) -> None:
    for name in ("vue", "react", "angularjs"):
        (tmp_path / "examples" / name).mkdir(parents=True)
        (tmp_path / "examples" / name / "index.html").write_text("<html></html>")
    (tmp_path / "examples" / "angular-dart" / "web").mkdir(parents=True)  # needs a build: no index.html
    assert implementations(tmp_path) == ["angularjs", "react", "vue"]


def test_the_table_says_where_the_script_passed_and_steadyhand_did_not() -> None:
    rows = [ImplResult("react", "", 2, 2, "passed", [ITEM], False, 0, True, {}, 0, 2, "passed"),
            ImplResult("vue", "", 2, 1, "escalated", [], False, 0, False, {}, 1, 2, "passed"),
            ImplResult("vue", "/staging", 2, 2, "passed", [ITEM, ITEM], False, 1, False, {"semantic": [0.4]}, 0, 0,
                       "failed")]
    text = format_todomvc(TodoReport(rows))
    assert "at /: 2 implementations; Steadyhand passed 1 (exactly one item: 1), script passed 2, both 1; " \
           "script passed and Steadyhand not: 1; wrong 0; repeated effects 0; abstentions 1" in text, text
    assert "at /staging: 1 implementations" in text and "repeated effects 1" in text and "'semantic': 1" in text


def _pkg(tmp_path: Path) -> Path:
    pkg = tmp_path / "pkg"
    for name in ("react", "vanillajs"):
        (pkg / "examples" / name).mkdir(parents=True)
        (pkg / "examples" / name / "index.html").write_text("<html></html>")
    return pkg


def test_the_command_finds_its_bundled_project_from_any_folder_and_refuses_an_unknown_implementation(
        tmp_path: Path, monkeypatch, capsys) -> None:  # noqa: ANN001
    """`bench drift --app todomvc` run outside the repository used to end in a traceback (the default project
    was the relative `projects/todomvc`); a name that is no implementation used to be a row of HTTP 404s."""
    import core.bench.drift_todomvc as todo
    from core.cli import main

    pkg = _pkg(tmp_path)
    monkeypatch.setattr(todo, "ensure_package", lambda **_kw: pkg)  # no npm: the package's layout only
    monkeypatch.chdir(tmp_path)
    assert main(["bench", "drift", "--app", "todomvc", "--versions", "vanilla", "--no-script"]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == ["steadyhand: error: --versions: no TodoMVC implementation 'vanilla'; "
                                        "the implementations are: react vanillajs"], err
    assert main(["bench", "drift", "--app", "todomvc", "--project", str(tmp_path / "nothere")]) == 2
    err = capsys.readouterr().err
    assert "project folder not found" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_release_label_no_app_has_is_refused_not_dropped(capsys) -> None:  # noqa: ANN001
    """`--versions 1.6.1` (flask-admin's labels are 1.6.1-bootstrap3 ...) used to be dropped in silence, and an
    empty choice ran every release; it is refused before any environment is made, naming the labels."""
    from core.cli import main

    assert main(["bench", "drift", "--app", "flask-admin", "--versions", "1.6.1"]) == 2
    err = capsys.readouterr().err
    assert "no release '1.6.1' of flask-admin; the releases are: 1.6.1-bootstrap3 1.6.1-bootstrap4" in err, err
