"""The studio's skill review uses the project's skills settings and secrets exactly as `steadyhand skills`."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from core.domain import Action, ElementDescriptor
from core.domain.skill import ElementCondition, Skill, SkillAction, SkillScope, SkillTrigger, SkillValidation
from core.store import Store, store_path
from core.store.skills import SkillConflictError, SkillTable
from studio.views.skill_review import SkillSource

SECRET = "hunter2-SECRET"


def popup_skill(skill_id: str, *, product: str, passed: int = 5, cases: int = 5) -> Skill:
    return Skill(id=skill_id, description="Cancel the autofill popup",
                 trigger=SkillTrigger(required=(ElementCondition(role="button", name="Cancel", in_dialog=True),),
                                      dialog=True),
                 actions=(SkillAction(Action("click"), ElementDescriptor(role="button", name="Cancel")),),
                 scope=SkillScope(product=product),
                 validation=SkillValidation(cases=cases, passed=passed, reproduced=True), quality=passed / cases)


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.delenv("STEADYHAND_SECRET_PASSWORD", raising=False)
    root = tmp_path / "proj"
    root.mkdir()
    (root / "steadyhand.yaml").write_text(
        "schema_version: 1\nname: Shipping\nsite: demo\nsecrets:\n  password:\n    default: " + SECRET
        + "\nskills:\n  validation_threshold: 0.9\n", encoding="utf-8")
    with Store.open(store_path(root)) as store:
        table = SkillTable(store)
        table.put(popup_skill("sk-dddddddddd01", product="Shipping", passed=2, cases=3))
        table.put(popup_skill("sk-dddddddddd02", product="Shipping"))
    return root


def _item(root: Path, sid: str):
    return next(i for i in SkillSource(root, "Shipping").items() if i.skill.id == sid)


def test_the_approval_threshold_is_the_projects(project):
    item = _item(project, "sk-dddddddddd01")
    assert "67% (2/3) is below 90%" in item.approval_problem()
    with pytest.raises(SkillConflictError, match="below 90%"):
        item.approve()
    assert _item(project, "sk-dddddddddd01").approve(force=True).state == "approved"


def test_a_declared_secret_typed_in_an_edit_is_refused_as_on_the_command_line(project):
    item = _item(project, "sk-dddddddddd02")
    s = item.skill
    typed = replace(s, actions=(replace(s.actions[0], action=Action("input", SECRET)),), params=())
    with pytest.raises(ValueError, match="declared secret in clear"):
        item.edit(typed)
    placeholder = replace(typed, actions=(replace(s.actions[0], action=Action("input", "{password}")),),
                          params=("password",))
    with pytest.raises(ValueError, match=r"secret parameter \{password\}"):
        item.edit(placeholder)
    with Store.open(store_path(project), read_only=True) as store:
        stored = SkillTable(store).get("sk-dddddddddd02")
    assert stored.actions == s.actions and SECRET not in repr(stored)
    assert _item(project, "sk-dddddddddd02").approve().state == "approved"  # the skill as it was stays approvable
