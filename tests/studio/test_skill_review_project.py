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


# --- how the review screen reads (a long description, a narrow window, an imported skill) -----------------


def test_a_long_description_reads_from_its_start_and_the_in_dialog_column_is_in_view(qtbot, project) -> None:  # noqa: ANN001
    from studio.views.heal_review import HealReviewPanel

    long = "Cancel the 'Save this address?' popup that covers the password field whenever it gets focus, " * 2
    with Store.open(store_path(project)) as store:
        table = SkillTable(store)
        table.put(replace(table.get("sk-dddddddddd02"), description=long.strip()))
    panel = HealReviewPanel([SkillSource(project, "Shipping")], root=project, ask_reason=lambda _p, _t: None)
    qtbot.addWidget(panel)
    panel.resize(760, 560)  # a window below 800 px
    panel.show()
    assert panel.select_key("skill:sk-dddddddddd02")
    qtbot.wait(20)
    view = panel.skill_view
    assert view.form.description.cursorPosition() == 0  # the start of the text, not its end
    shown = view.heading.text()
    assert "\u2026" in shown and long.strip() not in shown and long.strip() in view.heading.toolTip()
    assert view.heading.fontMetrics().horizontalAdvance("Cancel the 'Save") < view.heading.width()
    for t in (view.form.required, view.form.absent):
        h = t.horizontalHeader()
        assert h.visualIndex(t.columnCount() - 1) == 0 and t.horizontalHeaderItem(t.columnCount() - 1).text() == \
            "in dialog"
    assert panel.queue.width() >= 170  # a few words a line, not one


def test_the_library_marks_imported_skills_nobody_reviewed_here(qtbot, project, tmp_path) -> None:  # noqa: ANN001
    import json

    from core.skills.files import import_skills
    from studio.views.skill_library import SkillLibraryPanel

    f = tmp_path / "team.json"
    f.write_text(json.dumps({"format": "steadyhand-skills", "schema_version": 1, "skills": [
        {"id": "sk-eeeeeeeeee01", "description": "Cookie banner: reject all", "state": "approved",
         "trigger": {"required": [{"role": "button", "name": "Reject all"}]},
         "actions": [{"kind": "click", "target": {"role": "button", "name": "Reject all"}}]}]}), encoding="utf-8")
    with Store.open(store_path(project)) as store:
        import_skills(SkillTable(store), f, product="Shipping", keep_state=True)
    panel = SkillLibraryPanel(project, "Shipping")
    qtbot.addWidget(panel)
    states = {panel.table.item(r, 0).text(): panel.table.item(r, 1).text() for r in range(panel.table.rowCount())}
    assert states["Cookie banner: reject all"] == "proposed \u00b7 imported, not reviewed here"
    assert states["Cancel the autofill popup"] == "proposed"
