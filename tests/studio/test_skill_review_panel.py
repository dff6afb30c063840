"""Skill proposals in the review queue, over a real SQLite store (skills, a failure record, a correction).

The store is written by :func:`studio.skill_samples.skill_store` through the
real store classes; every review goes through the panel's buttons and is
checked in the store afterwards (a fresh open), never in the widget alone.
"""
from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTableWidgetItem

from core.store import Store, store_path
from core.store.skills import SkillTable
from studio.heal_samples import SampleHealSource
from studio.skill_samples import SAMPLE_APPROVED_ID, SAMPLE_PROPOSED_ID, skill_store
from studio.views.heal_review import HealReviewPanel
from studio.views.skill_review import SkillItem, SkillSource


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:  # noqa: ANN001
    root = tmp_path_factory.mktemp("skill-space")
    skill_store(root)
    return root


@pytest.fixture
def root(template: Path, tmp_path: Path) -> Path:
    """A copy of the sample skill space per test (every review writes to it)."""
    dst = tmp_path / "p"
    shutil.copytree(template, dst)
    return dst


def _stored(root: Path, skill_id: str):  # noqa: ANN202
    with Store.open(store_path(root), read_only=True) as store:
        return SkillTable(store).get(skill_id)


def _panel(qtbot, root: Path, reasons: list[str | None] | None = None, heals: bool = False) -> HealReviewPanel:  # noqa: ANN001
    answers = list(reasons or [])
    sources = [SkillSource(root, "demo")] + ([SampleHealSource()] if heals else [])
    panel = HealReviewPanel(sources, root=root, ask_reason=lambda _p, _t: answers.pop(0) if answers else None)
    qtbot.addWidget(panel)
    panel.resize(1280, 700)
    panel.show()
    return panel


def _select(panel: HealReviewPanel, key: str) -> None:
    assert panel.select_key(key), [it.key for it in panel.items]


def test_skill_proposals_share_the_queue_with_heals_and_show_their_own_view(qtbot, root: Path) -> None:  # noqa: ANN001
    panel = _panel(qtbot, root, heals=True)
    kinds = [it.kind for it in panel.items]
    assert kinds.count("skill") == 1 and kinds.count("heal") == 2  # only the proposed skill waits for review
    _select(panel, f"skill:{SAMPLE_PROPOSED_ID}")
    assert panel.stack.currentWidget() is panel.skill_view
    heal_row = next(i for i, it in enumerate(panel.items) if it.kind == "heal")
    panel.queue.setCurrentRow(heal_row)
    assert panel.stack.currentWidget() is panel.detail
    assert panel.accept_button.isEnabled()


def test_failed_segment_and_correction_side_by_side_with_boxes_steps_and_validation(qtbot, root: Path) -> None:  # noqa: ANN001
    panel = _panel(qtbot, root)
    _select(panel, f"skill:{SAMPLE_PROPOSED_ID}")
    v = panel.skill_view
    # the failure record's screenshot with the failing element boxed, the correction's with the element acted on
    assert v.failure_shot.image is not None and v.correction_shot.image is not None
    assert [(b, label) for b, label, _c, _d in v.failure_shot.boxes] == [((472.0, 290.0, 336.0, 40.0), "failed here")]
    assert [(b, label) for b, label, _c, _d in v.correction_shot.boxes] == [((560.0, 360.0, 130.0, 40.0), "1")]
    steps = [v.failure_steps.item(i).text() for i in range(v.failure_steps.count())]
    assert steps[-1].startswith("3. input textbox \u2018Password\u2019 \u2014 failed: action error")  # no code
    assert [v.correction_steps.item(i).text() for i in range(v.correction_steps.count())] == [
        "1. click button \u2018Cancel\u2019"]
    assert v.crops.isVisibleTo(v)  # the correction's element crop
    html = v.validation.text()
    assert "passed <b>4</b> of <b>5</b>" in html and "80%" in html and "reproduced" in html
    assert "the field stayed covered after Cancel" in html
    # the form holds the skill as stored
    f = v.form
    assert f.description.text().startswith("Cancel the 'Save this address?' popup")
    assert f.dialog.currentData() is True and f.dialog_name.text() == "Save this address"
    assert f.required.item(0, 0).text() == "button" and f.required.item(0, 1).text() == "Cancel"
    assert f.required.item(0, 6).checkState() == Qt.CheckState.Checked
    assert [f.actions.item(0, c).text() for c in (0, 2, 3)] == ["click", "button", "Cancel"]
    assert f.task_type.text() == "login" and f.url_prefix.text() == "/login"


def test_approve_button_approves_in_the_store(qtbot, root: Path) -> None:  # noqa: ANN001
    panel = _panel(qtbot, root)
    _select(panel, f"skill:{SAMPLE_PROPOSED_ID}")
    with qtbot.waitSignal(panel.reviewed) as sig:
        qtbot.mouseClick(panel.skill_view.approve_button, Qt.MouseButton.LeftButton)
    assert sig.args == [f"skill:{SAMPLE_PROPOSED_ID}", "approved"]
    assert _stored(root, SAMPLE_PROPOSED_ID).state == "approved"
    assert panel.wait_read()  # read again off the GUI thread
    qtbot.waitUntil(lambda: all(it.key != f"skill:{SAMPLE_PROPOSED_ID}" for it in panel.items))  # out of the queue


def test_reject_without_a_reason_is_refused_then_stored_with_one(qtbot, root: Path) -> None:  # noqa: ANN001
    panel = _panel(qtbot, root, reasons=["   ", None, "it presses Cancel on every dialog"])
    _select(panel, f"skill:{SAMPLE_PROPOSED_ID}")
    v = panel.skill_view
    qtbot.mouseClick(v.reject_button, Qt.MouseButton.LeftButton)  # a blank reason
    assert v.error.isVisibleTo(v) and "a reason is required" in v.error.text()
    assert _stored(root, SAMPLE_PROPOSED_ID).state == "proposed"
    qtbot.mouseClick(v.reject_button, Qt.MouseButton.LeftButton)  # cancelled
    assert _stored(root, SAMPLE_PROPOSED_ID).state == "proposed"
    qtbot.mouseClick(v.reject_button, Qt.MouseButton.LeftButton)
    s = _stored(root, SAMPLE_PROPOSED_ID)
    assert (s.state, s.review_reason) == ("rejected", "it presses Cancel on every dialog")


def test_edit_saves_the_form_through_the_library_and_refuses_a_foreign_action(qtbot, root: Path) -> None:  # noqa: ANN001
    with Store.open(store_path(root)) as store:  # a proposal that has been used once: its counters must stay
        t = SkillTable(store)
        t.put(replace(t.get(SAMPLE_PROPOSED_ID), successes=2, failures=1))
    panel = _panel(qtbot, root)
    _select(panel, f"skill:{SAMPLE_PROPOSED_ID}")
    v = panel.skill_view
    assert not v.edit_button.isEnabled()  # nothing edited yet
    v.form.description.setText("Cancel the autofill popup before typing")
    v.form.description.textEdited.emit("x")
    v.form.actions.setItem(0, 0, QTableWidgetItem("eval"))  # not one of the engine's actions
    qtbot.mouseClick(v.edit_button, Qt.MouseButton.LeftButton)
    assert "action 1, kind: 'eval'" in v.error.text()
    assert _stored(root, SAMPLE_PROPOSED_ID).description.startswith("Cancel the 'Save this address?'")
    v.form.actions.setItem(0, 0, QTableWidgetItem("click"))
    v.form.actions.setItem(0, 3, QTableWidgetItem("Not now"))
    v.form.task_type.setText("sign-in")
    v.form.max_ms.setValue(8000)
    with qtbot.waitSignal(panel.reviewed) as sig:
        qtbot.mouseClick(v.edit_button, Qt.MouseButton.LeftButton)
    assert sig.args[1] == "edited"
    s = _stored(root, SAMPLE_PROPOSED_ID)
    assert s.description == "Cancel the autofill popup before typing"
    assert (s.actions[0].action.kind, s.actions[0].target.name, s.actions[0].target.role) == ("click", "Not now",
                                                                                             "button")
    assert (s.scope.task_type, s.max_ms, s.state) == ("sign-in", 8000, "proposed")
    assert (s.successes, s.failures, s.validation.passed) == (2, 1, 4)  # counters and validation kept
    assert panel.skill_view.item.skill.description == s.description  # the queue shows the stored edit


def test_retire_an_approved_skill_from_the_queue_needs_a_reason(qtbot, root: Path) -> None:  # noqa: ANN001
    panel = _panel(qtbot, root, reasons=["", "the cookie banner is gone for good"])
    _select(panel, f"skill:{SAMPLE_APPROVED_ID}")  # a reviewed one: shown with the reviewed ones
    v = panel.skill_view
    assert not v.approve_button.isEnabled() and not v.reject_button.isEnabled() and v.retire_button.isEnabled()
    qtbot.mouseClick(v.retire_button, Qt.MouseButton.LeftButton)
    assert _stored(root, SAMPLE_APPROVED_ID).state == "approved"
    assert "a reason is required" in v.error.text()
    qtbot.mouseClick(v.retire_button, Qt.MouseButton.LeftButton)
    s = _stored(root, SAMPLE_APPROVED_ID)
    assert (s.state, s.review_reason) == ("retired", "the cookie banner is gone for good")


def test_a_skill_whose_failure_did_not_reproduce_is_approved_only_when_confirmed(qtbot, root: Path) -> None:  # noqa: ANN001
    with Store.open(store_path(root)) as store:
        t = SkillTable(store)
        t.put(replace(t.get(SAMPLE_PROPOSED_ID), validation=replace(t.get(SAMPLE_PROPOSED_ID).validation,
                                                                    reproduced=False)))
    panel = _panel(qtbot, root)
    _select(panel, f"skill:{SAMPLE_PROPOSED_ID}")
    v = panel.skill_view
    assert "did not reproduce" in v.validation.text() and v.approve_button.text() == "Approve anyway\u2026"
    asked: list[str] = []
    v.confirm_force = lambda _p, text: asked.append(text) is not None and False
    qtbot.mouseClick(v.approve_button, Qt.MouseButton.LeftButton)
    assert asked and "did not reproduce" in asked[0]
    assert _stored(root, SAMPLE_PROPOSED_ID).state == "proposed"
    v.confirm_force = lambda _p, _text: True
    qtbot.mouseClick(v.approve_button, Qt.MouseButton.LeftButton)
    s = _stored(root, SAMPLE_PROPOSED_ID)
    assert s.state == "approved" and "without a passing validation" in s.review_reason


def test_skill_source_reads_only_its_product_and_nothing_without_a_store(tmp_path: Path, root: Path) -> None:
    assert SkillSource(tmp_path / "empty").items() == []
    assert not store_path(tmp_path / "empty").exists()  # no store created just to say so
    assert [i.skill.id for i in SkillSource(root, "demo").items()] == [SAMPLE_PROPOSED_ID]
    assert SkillSource(root, "another product").items() == []
    assert isinstance(SkillSource(root, "demo").items(all_states=True)[0], SkillItem)
    assert len(SkillSource(root, "demo").items(all_states=True)) == 6


def test_approval_for_the_irreversible_step_it_was_learnt_on_is_a_choice_of_the_reviewer(qtbot, root: Path) -> None:  # noqa: ANN001
    panel = _panel(qtbot, root)
    _select(panel, f"skill:{SAMPLE_PROPOSED_ID}")
    v = panel.skill_view
    assert v.form.irreversible.isEnabled() and not v.form.irreversible.isChecked()
    assert v.form.irreversible.text() == "may act on s3"
    v.form.irreversible.setChecked(True)
    v.form.description.setText("Cancel the address popup, then type")  # an edit, saved before approving
    v.form.description.textEdited.emit("x")
    assert v.approve_button.text() == "Approve edited"
    qtbot.mouseClick(v.approve_button, Qt.MouseButton.LeftButton)
    s = _stored(root, SAMPLE_PROPOSED_ID)
    assert s.state == "approved" and s.irreversible_ok and s.provenance.step_ids == ("s3",)
    assert s.description == "Cancel the address popup, then type"
    # a skill that names no step it was learnt on cannot get it; a deny rule says what it holds back
    _select(panel, "skill:sk-deny0de1ete")
    assert not v.form.irreversible.isEnabled()
    assert v.form.actions_box.title() == "Elements not to touch (deny rule)"
