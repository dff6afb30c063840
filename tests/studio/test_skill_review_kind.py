"""A skill of a popup kind ("answer a consent popup: accept") in the review queue, over a real SQLite store.

Its action names no element: what it presses is the person's choice by role (``SkillAction.choice``), which
the form has no column for.  Saving an edit of its description must keep that choice (the form used to drop
it, and the store then refused the edit: "action 'click' needs a target with at least one semantic field"),
and the form must say in words what approving it lets the engine press.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from core.skills.kinds import propose
from core.store import Store, store_path
from core.store.skills import SkillTable
from studio.views.heal_review import HealReviewPanel
from studio.views.skill_review import SkillSource

POPUP = {"name": "We use cookies", "text": "We use cookies to measure the audience. Accept them all or not.",
         "modal": True, "controls": [{"name": "Accept all"}, {"name": "Reject all"}]}


def _root(tmp_path: Path) -> tuple[Path, str]:
    skill = propose(POPUP, "Accept all", product="demo", run_id="r1", flow="leave_request", step_ids=("s2",))
    assert skill is not None and skill.actions[0].choice == "accept"
    with Store.open(store_path(tmp_path)) as store:
        SkillTable(store).put(skill)
    return tmp_path, skill.id


def test_an_edit_of_a_consent_skill_keeps_the_persons_choice_and_the_form_says_what_it_presses(
        qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    root, sid = _root(tmp_path)
    panel = HealReviewPanel([SkillSource(root, "demo")], root=root, ask_reason=lambda _p, _t: None)
    qtbot.addWidget(panel)
    panel.resize(1280, 700)
    panel.show()
    assert panel.select_key(f"skill:{sid}"), [it.key for it in panel.items]
    v = panel.skill_view
    said = v.form.kind.text()
    assert "consent popup" in said and "'accept'" in said and "you are asked" in said, said
    v.form.description.setText("Accept the cookie banner, as the team agreed")
    v.form.description.textEdited.emit("x")
    with qtbot.waitSignal(panel.reviewed) as sig:
        qtbot.mouseClick(v.edit_button, Qt.MouseButton.LeftButton)
    assert sig.args[1] == "edited"
    with Store.open(store_path(root), read_only=True) as store:
        s = SkillTable(store).get(sid)
    assert s.description == "Accept the cookie banner, as the team agreed"
    assert (s.trigger.popup, s.actions[0].choice) == ("consent", "accept")
