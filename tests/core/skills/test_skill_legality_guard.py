"""validate.legality and the skill files: every action kind with a target meets the confirm/delete/submit
guard, and kinds the skill runtime does not run are refused (the reviewer's files in tests/fixtures)."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from library_samples import popup_skill

from core.domain import Action, ElementDescriptor
from core.domain.skill import ElementCondition, SkillAction, SkillTrigger
from core.skills.files import SkillFileError, read_skill_file
from core.skills.validate import legality

_REVIEW = Path(__file__).resolve().parents[2] / "fixtures" / "skills_review"


_DIALOG_BUTTON = (ElementCondition(role="button", name="Type them myself", in_dialog=True),)


def _skill(*actions, required=_DIALOG_BUTTON):
    return replace(popup_skill(), actions=tuple(actions), trigger=SkillTrigger(required=required, dialog=True))


def test_check_on_a_deleting_checkbox_is_illegal_naming_the_action_and_field():
    check = SkillAction(Action("check"), ElementDescriptor(role="checkbox", label="Also delete all saved addresses"))
    problems = legality(_skill(check))
    assert problems == ["action 1 (check) on checkbox 'Also delete all saved addresses': label 'Also delete all "
                        "saved addresses' may confirm, delete or submit, and the trigger does not name it among "
                        "its required elements"]
    named = (ElementCondition(role="checkbox", label="Also delete all saved addresses"),)
    assert legality(_skill(check, required=named)) == []


def test_select_of_a_deleting_option_is_illegal_unless_the_trigger_names_the_option():
    sel = SkillAction(Action("select", "Delete all saved addresses"), ElementDescriptor(role="combobox",
                                                                                       label="Saved addresses"))
    [problem] = legality(_skill(sel))
    assert problem.startswith("action 1 (select) on combobox 'Saved addresses': option 'Delete all saved "
                              "addresses' (its value) may confirm")
    field_only = (ElementCondition(role="combobox", label="Saved addresses"),)
    assert legality(_skill(sel, required=field_only)) != []  # the field named, the option not
    both = field_only + (ElementCondition(role="option", name="Delete all saved addresses"),)
    assert legality(_skill(sel, required=both)) == []
    keep = SkillAction(Action("select", "Home"), ElementDescriptor(role="combobox", label="Saved addresses"))
    assert legality(_skill(keep)) == []


@pytest.mark.parametrize("kind", ["hover", "dblclick", "uncheck", "input"])
def test_every_kind_with_a_target_meets_the_guard(kind):
    act = SkillAction(Action(kind, "x" if kind == "input" else ""), ElementDescriptor(role="button",
                                                                                      name="Delete account"))
    assert any(p.startswith(f"action 1 ({kind}) on button 'Delete account': name 'Delete account'")
               for p in legality(_skill(act)))


def test_a_key_pressed_in_a_field_may_submit_it():
    act = SkillAction(Action("press", "Enter"), ElementDescriptor(role="textbox", label="Full name"))
    assert any("a key pressed in a field (Enter submits its form)" in p for p in legality(_skill(act)))


@pytest.mark.parametrize("kind", ["back", "assert", "screenshot", "navigate", "upload"])
def test_kinds_the_runtime_does_not_run_are_illegal(kind):
    assert any(p.startswith(f"action 1: a skill may not {kind}") for p in legality(_skill(SkillAction(Action(kind)))))


@pytest.mark.parametrize("name, field", [("check.json", None), ("sel.json", "actions[1].kind")])
def test_the_reviewers_files(name, field):
    if field is None:  # the file itself is well formed; legality refuses it before any approval
        [skill] = read_skill_file(_REVIEW / name)
        assert any("(check) on checkbox 'Also delete all saved addresses'" in p for p in legality(skill))
    else:
        with pytest.raises(SkillFileError) as exc:
            read_skill_file(_REVIEW / name)
        assert exc.value.field.endswith(f"field '{field}'")


def test_approve_refuses_what_legality_refuses_even_with_force(tmp_path):
    from library_samples import open_table

    from core.skills.files import import_skills
    from core.skills.library import approve

    store, table = open_table(tmp_path)
    with store:
        import_skills(table, _REVIEW / "check.json", product="demo")
        with pytest.raises(ValueError, match=r"cannot be approved: action 1 \(check\) on checkbox 'Also delete"):
            approve(table, "sk-ffffffffff01", force=True)
        assert table.get("sk-ffffffffff01").state == "proposed"
