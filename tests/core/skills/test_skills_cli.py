"""`steadyhand skills ...` through the real command line and the real store (SQLite)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from library_samples import popup_skill

from core.cli import main
from core.domain import Action, ElementDescriptor
from core.domain.skill import SkillAction
from core.skills.files import export_skills
from core.store import Store, store_path
from core.store.skills import SkillTable

SECRET = "Tr0ub4dor&3"


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("STEADYHAND_SECRET_PASSWORD", SECRET)
    root = tmp_path / "proj"
    root.mkdir()
    (root / "steadyhand.yaml").write_text(
        "schema_version: 1\nname: demo\nsite: demo\nsecrets:\n  password: {}\nskills:\n  validation_threshold: 0.9\n",
        encoding="utf-8")
    return root


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(["skills", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def _seed(root: Path, *skills) -> None:
    store = Store.open(store_path(root))
    with store:
        for s in skills:
            SkillTable(store).put(s)


def test_list_and_show_without_a_store(project, capsys):
    assert run(capsys, "list", project) == (0, "no skills (no run of this project was recorded yet)\n", "")
    assert run(capsys, "list", project, "--json")[1] == "[]\n"
    code, _, err = run(capsys, "show", project, "sk-1")
    assert code == 2 and "no run was recorded yet" in err
    assert not store_path(project).exists()


def test_review_cycle(project, capsys):
    _seed(project, popup_skill("sk-aaaa00000001"), popup_skill("sk-aaaa00000002", passed=4, cases=5),
          popup_skill("sk-bbbb00000003", product="other"))
    code, out, _ = run(capsys, "list", project)
    assert code == 0 and out.count("\n") == 2 and "sk-bbbb" not in out  # one skill space per product
    listed = json.loads(run(capsys, "list", project, "--json", "--state", "proposed")[1])
    assert [s["id"] for s in listed] == ["sk-aaaa00000001", "sk-aaaa00000002"] and listed[0]["uses"] == {}
    # --json PATH as on every other command: the same document in a file, nothing on stdout
    code, out, _ = run(capsys, "list", project, "--state", "proposed", "--json", project.parent / "out" / "s.json")
    assert code == 0 and out == ""
    assert json.loads((project.parent / "out" / "s.json").read_text()) == listed

    code, _, err = run(capsys, "approve", project, "sk-aaaa")
    assert code == 2 and "names 2 skills" in err
    assert run(capsys, "approve", project, "sk-aaaa00000001")[0] == 0
    code, _, err = run(capsys, "approve", project, "sk-aaaa00000002")
    assert code == 2 and "80% (4/5) is below 90%" in err  # the project file's skills: validation_threshold
    code, out, _ = run(capsys, "approve", project, "sk-aaaa00000002", "--force")
    assert code == 0 and "without a passing validation" in out

    code, out, _ = run(capsys, "show", project, "sk-aaaa00000001")
    assert code == 0 and "present: a button with accessible name 'Cancel', in a dialog" in out
    assert "fired: never" in out
    shown = json.loads(run(capsys, "show", project, "sk-aaaa00000001", "--json")[1])
    assert shown["skill"]["state"] == "approved" and shown["uses"] == []

    with pytest.raises(SystemExit):
        main(["skills", "reject", str(project), "sk-aaaa00000002"])  # --reason is required
    capsys.readouterr()
    code, _, err = run(capsys, "reject", project, "sk-aaaa00000002", "--reason", "no")
    assert code == 2 and "retire it instead" in err
    code, out, _ = run(capsys, "retire", project, "sk-aaaa00000002", "--reason", "the popup is gone")
    assert code == 0 and "no longer fires" in out
    assert [s["id"] for s in json.loads(run(capsys, "list", project, "--json", "--state", "approved")[1])] == [
        "sk-aaaa00000001"]


def test_export_import_and_edit(project, tmp_path, capsys):
    typing = popup_skill("sk-cccc00000001", state="approved", actions=(
        SkillAction(Action("input", SECRET), ElementDescriptor(role="textbox", label="Password")),))
    _seed(project, popup_skill("sk-aaaa00000001", state="approved"), typing, popup_skill("sk-dddd00000001"))
    out_file = tmp_path / "team.json"
    code, out, _ = run(capsys, "export", project, out_file)
    assert code == 0 and "exported 2 skills" in out
    text = out_file.read_text(encoding="utf-8")
    assert SECRET not in text and "{password}" in text

    other = tmp_path / "other"
    other.mkdir()
    (other / "steadyhand.yaml").write_text((project / "steadyhand.yaml").read_text(encoding="utf-8"),
                                           encoding="utf-8")
    code, out, err = run(capsys, "import", other, out_file)
    assert code == 2 and "types the secret parameter {password}" in err and "nothing imported" in err
    code, out, _ = run(capsys, "export", project, out_file, "--id", "sk-aaaa00000001")
    code, out, _ = run(capsys, "import", other, out_file)
    assert code == 0 and "added 1" in out and "approving one needs --force" in out
    listed = json.loads(run(capsys, "list", other, "--json")[1])
    assert [(s["state"], s["successes"], s["validation"]["cases"]) for s in listed] == [("proposed", 0, 0)]
    code, _, err = run(capsys, "approve", other, "sk-aaaa00000001")
    assert code == 2 and "not validated here" in err  # the file's 5/5 is not trusted here
    code, out, _ = run(capsys, "approve", other, "sk-aaaa00000001", "--force")
    assert code == 0 and "approved without a passing validation" in out
    code, out, _ = run(capsys, "import", other, out_file)
    assert code == 1 and "skipped sk-aaaa00000001: an approved skill has this id" in out
    assert run(capsys, "import", other, out_file, "--replace-approved")[0] == 0

    leaked = tmp_path / "leaked.json"
    export_skills([typing], leaked)  # written without the project's secrets: the value is in clear
    code, out, err = run(capsys, "import", other, leaked)
    assert code == 2 and "declared secret in clear" in err and "nothing imported" in err and SECRET not in err
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "steadyhand-skills", "schema_version": 9, "skills": []}', encoding="utf-8")
    code, _, err = run(capsys, "import", other, bad)
    assert code == 2 and err.count("\n") == 1 and "bad.json at field 'schema_version'" in err

    shown = tmp_path / "edit.json"
    shown.write_text(run(capsys, "show", project, "sk-aaaa00000001", "--json")[1].replace(
        '"name": "Cancel"', '"name": "Close"'), encoding="utf-8")
    code, out, _ = run(capsys, "edit", project, shown)
    assert code == 0 and "now proposed (edited after approval" in out


def test_show_and_list_say_where_a_skill_fired(project, capsys):
    from core.skills.upkeep import apply_use

    _seed(project, popup_skill("sk-aaaa00000001", state="approved", quality=0.5))
    store = Store.open(store_path(project))
    with store:
        table = SkillTable(store)
        apply_use(table, "sk-aaaa00000001", outcome="passed", run_id="run-7f3a", flow="leave_request",
                  step_index=3, step_id="s4", ms=310.0)
        apply_use(table, "sk-aaaa00000001", outcome="precondition", run_id="run-8b21", flow="leave_request",
                  step_index=3, step_id="s4", reason="no dialog open")
    code, out, _ = run(capsys, "show", project, "sk-aaaa")
    assert code == 0 and "run run-7f3a leave_request step 4 (s4): passed" in out
    assert "run run-8b21 leave_request step 4 (s4): precondition - no dialog open" in out
    assert "1 success, 1 failure" in out and "quality 0.10" in out
    code, out, _ = run(capsys, "list", project)
    assert "hits 1/2" in out and "last never" not in out
    shown = json.loads(run(capsys, "show", project, "sk-aaaa00000001", "--json")[1])
    assert [(u["run_id"], u["step_id"], u["outcome"]) for u in shown["uses"]] == [
        ("run-8b21", "s4", "precondition"), ("run-7f3a", "s4", "passed")]


def test_upkeep_and_help(project, tmp_path, capsys):
    _seed(project, popup_skill("sk-aaaa00000001", state="approved", quality=0.1))
    code, out, _ = run(capsys, "upkeep", project, "--json", tmp_path / "up.json")
    assert code == 0 and "review sk-aaaa00000001: quality 0.10 below 0.30" in out
    assert json.loads((tmp_path / "up.json").read_text())["review"][0]["id"] == "sk-aaaa00000001"
    for sub in ("list", "show", "approve", "reject", "retire", "edit", "export", "import", "upkeep"):
        with pytest.raises(SystemExit):
            main(["skills", sub, "--help"])
        assert f"Example:\n  steadyhand skills {sub}" in capsys.readouterr().out


def test_another_module_can_add_a_skills_subcommand(project, capsys):
    import argparse

    from core.skills.command import add_skills_parser, skills_command, skills_subparsers

    parser = argparse.ArgumentParser(prog="steadyhand")
    sub = parser.add_subparsers(dest="command", required=True)
    skills = add_skills_parser(sub)
    skills.set_defaults(func=skills_command)
    extra = skills_subparsers(skills).add_parser("count", help="how many skills")
    extra.add_argument("project")
    extra.set_defaults(skills_handler=lambda a: print(f"counted {a.project}") or 0)
    args = parser.parse_args(["skills", "count", str(project)])
    assert args.func(args) == 0 and capsys.readouterr().out == f"counted {project}\n"
    args = parser.parse_args(["skills", "list", str(project)])
    assert args.func(args) == 0 and "no skills" in capsys.readouterr().out


def test_show_says_what_a_condition_is_and_never_prints_a_secret(project, capsys):
    from core.domain.skill import ElementCondition, SkillTrigger

    field = popup_skill("sk-ffff00000001", description=f"retype {SECRET} in the field", trigger=SkillTrigger(
        required=(ElementCondition(label="{target.label}"),), absent=(ElementCondition(role="button", name="Cancel"),),
        step_action="input"))
    store = Store.open(store_path(project))  # no redactor: a secret stored in clear before it was declared
    with store:
        SkillTable(store).put(field)
    code, out, _ = run(capsys, "show", project, "sk-ffff")
    assert code == 0 and "present: an element with label '{target.label}' (the label of the flow step's field)" in out
    assert "absent:  a button with accessible name 'Cancel'" in out and "requires element" not in out
    assert SECRET not in out
    for argv in (("show", project, "sk-ffff", "--json"), ("list", project), ("list", project, "--json")):
        code, out, _ = run(capsys, *argv)
        assert code == 0 and "sk-ffff00000001" in out and SECRET not in out


def test_a_retired_skill_is_restored_by_approve_restore(project, capsys):
    _seed(project, popup_skill("sk-aaaa00000001", state="retired", review_reason="merged into sk-b"))
    code, _, err = run(capsys, "approve", project, "sk-aaaa00000001")
    assert code == 2 and "approve --restore brings a retired skill back" in err
    code, out, _ = run(capsys, "approve", project, "sk-aaaa00000001", "--restore")
    assert code == 0 and "restored by a person (retired: merged into sk-b)" in out
    rejected = popup_skill("sk-bbbb00000001", state="rejected", review_reason="no")
    _seed(project, rejected)
    code, _, err = run(capsys, "approve", project, "sk-bbbb00000001", "--restore")
    assert code == 2 and "is rejected" in err


def test_skills_help_lists_learn_and_learn_help_has_its_example(capsys):
    with pytest.raises(SystemExit):
        main(["skills", "--help"])
    out = capsys.readouterr().out
    assert "  steadyhand skills learn projects/demo" in out.split("Example:")[1]
    with pytest.raises(SystemExit):
        main(["skills", "learn", "--help"])
    out = capsys.readouterr().out
    assert out.rstrip().endswith("Example:\n  steadyhand skills learn projects/demo 3f2a9c")
    assert "project folder (holds steadyhand.yaml)" in out


def test_a_closed_pipe_ends_a_command_quietly(project, tmp_path):
    import subprocess
    import sys

    store = Store.open(store_path(project))
    with store:  # more rows than a pipe holds (64 KiB), so `head` leaves while the list is still written
        SkillTable(store).put_many(popup_skill(f"sk-{i:012x}") for i in range(800))
    root = Path(__file__).resolve().parents[3]
    proc = subprocess.run(f"{sys.executable} -m core.cli skills list {project} | head -n 1", shell=True,
                          cwd=root, env={**__import__("os").environ, "PYTHONPATH": str(root)},
                          capture_output=True, text=True, timeout=120)
    assert proc.stdout.count("\n") == 1 and "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr


def test_show_says_which_popups_a_kind_skill_answers_and_what_it_presses(project, capsys):
    """A consent-kind skill names no element: `show` says the kind and the person's choice in words, where it
    used to print an empty trigger and "click on element '-'"; approve's refusal names the command's flag."""
    from core.skills.kinds import propose

    popup = {"name": "We use cookies", "text": "We use cookies to measure the audience.", "modal": True,
             "controls": [{"name": "Accept all"}, {"name": "Reject all"}]}
    skill = propose(popup, "Reject all", product="demo")
    _seed(project, skill)
    code, out, _ = run(capsys, "show", project, skill.id)
    assert code == 0
    assert "answers every consent popup" in out and "means 'reject'" in out and "you are asked" in out, out
    assert "click on the popup's control that means 'reject'" in out and "element '-'" not in out, out
    code, _, err = run(capsys, "approve", project, skill.id)
    assert code == 2 and f"steadyhand skills approve PROJECT {skill.id} --force" in err, err
