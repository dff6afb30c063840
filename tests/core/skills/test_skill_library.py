"""Review operations on the real store: approve, reject, retire, edit."""
from __future__ import annotations

import re
from dataclasses import replace

import pytest
from library_samples import SECRET, open_table, popup_skill

from core.domain import Action, ElementDescriptor
from core.domain.skill import ElementCondition, SkillAction, SkillScope, SkillSettings, SkillTrigger
from core.skills import library
from core.store.skills import SkillConflictError


@pytest.fixture
def table(tmp_path):
    store, table = open_table(tmp_path, secrets=(SECRET,))
    with store:
        yield table


def test_approve_needs_a_passing_validation_or_force(table):
    table.put(popup_skill("sk-a", passed=5, cases=5))
    table.put(popup_skill("sk-low", passed=2, cases=5))
    table.put(popup_skill("sk-transient", reproduced=False))
    table.put(popup_skill("sk-hand", cases=0, passed=0))
    assert library.approve(table, "sk-a").state == "approved"
    assert table.get("sk-a").review_reason == ""
    for sid, why in (("sk-low", "40% (2/5) is below 60%"), ("sk-transient", "did not reproduce"),
                     ("sk-hand", "never replayed")):
        with pytest.raises(SkillConflictError, match=re.escape(why)):
            library.approve(table, sid)
        assert table.get(sid).state == "proposed"
    assert library.approve(table, "sk-low", settings=SkillSettings(validation_threshold=0.4)).state == "approved"
    forced = library.approve(table, "sk-hand", force=True)
    assert forced.state == "approved" and "without a passing validation" in forced.review_reason
    with pytest.raises(SkillConflictError, match="only a proposed skill"):
        library.approve(table, "sk-a")
    with pytest.raises(KeyError):
        library.approve(table, "sk-none")


def test_approve_never_forces_an_illegal_skill(table):
    table.put(popup_skill("sk-nav", actions=(SkillAction(Action("navigate", "https://example.org/x")),)))
    with pytest.raises(ValueError, match="actions\\[0\\].kind"):
        library.approve(table, "sk-nav", force=True)
    assert table.get("sk-nav").state == "proposed"


def test_approve_for_an_irreversible_step_needs_the_step_it_was_learnt_on(table):
    table.put(popup_skill("sk-a"))
    s = library.approve(table, "sk-a", irreversible_ok=True)
    assert s.irreversible_ok and s.state == "approved"
    table.put(popup_skill("sk-b", provenance=replace(popup_skill().provenance, step_ids=())))
    with pytest.raises(ValueError, match="names no step"):
        library.approve(table, "sk-b", irreversible_ok=True)


def test_reject_and_retire_need_a_reason_and_the_right_state(table):
    table.put(popup_skill("sk-a"))
    table.put(popup_skill("sk-b"))
    with pytest.raises(ValueError, match="needs a reason"):
        library.reject(table, "sk-a", "  ")
    assert library.reject(table, "sk-a", "pressed Save").review_reason == "pressed Save"
    with pytest.raises(SkillConflictError):
        library.retire(table, "sk-a", "gone")
    library.approve(table, "sk-b")
    with pytest.raises(SkillConflictError, match="retire it instead"):
        library.reject(table, "sk-b", "no")
    with pytest.raises(ValueError, match="needs a reason"):
        library.retire(table, "sk-b", "")
    retired = library.retire(table, "sk-b", "the popup is gone")
    assert retired.state == "retired" and table.list(state="approved") == []


def test_edit_keeps_counters_and_sends_a_changed_approved_skill_back_to_review(table):
    table.put(popup_skill("sk-a", successes=4, failures=1, quality=0.7))
    library.approve(table, "sk-a", irreversible_ok=True)
    base = table.get("sk-a")
    worded = replace(base, description="Cancel the autofill popup (never confirm it)", successes=0, quality=0.0,
                     actions=(replace(base.actions[0], note="cancel it"),))
    s = library.edit(table, worded)
    assert s.state == "approved" and s.irreversible_ok and s.successes == 4 and s.quality == pytest.approx(0.7)
    changed = replace(s, actions=(SkillAction(Action("click"), ElementDescriptor(role="button", name="Close")),),
                      scope=SkillScope(product="other", task_type="leave"))
    s = library.edit(table, changed)
    assert s.state == "proposed" and not s.irreversible_ok and "review it again" in s.review_reason
    assert s.scope.product == "demo" and s.scope.task_type == "leave" and s.failures == 1
    with pytest.raises(ValueError, match="declared secret"):
        library.edit(table, replace(s, description=f"types {SECRET}"))
    library.reject(table, "sk-a", "no")
    with pytest.raises(SkillConflictError):
        library.edit(table, s)


def test_a_retire_is_seen_at_once_by_another_connection(tmp_path):
    """The runner holds its own store open; a retire from the command line or the studio reaches its next read."""
    runner_store, runner = open_table(tmp_path)
    cli_store, cli = open_table(tmp_path)
    with runner_store, cli_store:
        runner.put(popup_skill("sk-a"))
        library.approve(cli, "sk-a")
        assert [s.id for s in runner.list(product="demo", state="approved")] == ["sk-a"]
        library.retire(cli, "sk-a", "the popup is gone")
        assert runner.list(product="demo", state="approved") == []
        assert runner.get("sk-a").state == "retired"


def test_a_skill_held_below_the_review_quality_is_renewed_only_by_restore(table):
    table.put(popup_skill("sk-held", passed=4, cases=5, state="approved", quality=0.1))
    table.put(popup_skill("sk-fine", passed=4, cases=5, state="approved", quality=0.9))
    with pytest.raises(SkillConflictError, match="only a proposed skill"):
        library.approve(table, "sk-held")  # without restore it stays held: it does not fire
    renewed = library.approve(table, "sk-held", restore=True)
    assert renewed.state == "approved" and renewed.quality == pytest.approx(0.8)
    assert "renewed by a person (quality 0.10 was below 0.30)" in renewed.review_reason
    with pytest.raises(SkillConflictError):
        library.approve(table, "sk-fine", restore=True)  # nothing to renew: it fires already


def test_a_skill_the_run_time_guard_would_refuse_is_refused_at_approval(table):
    """Issue 25: "click 'deny cookies'" (its accessible name) whose visible text "Decline" is a guarded word the
    trigger does not name was approved, then refused at every run; approval now applies the run's rules."""
    deny = ElementCondition(role="button", name="deny cookies", in_dialog=True)
    skill = popup_skill("sk-deny", trigger=SkillTrigger(required=(deny,), dialog=True, dialog_name="Cookies"),
                        actions=(SkillAction(Action("click"), ElementDescriptor(role="button", name="deny cookies",
                                                                                text="Decline")),))
    table.put(skill)
    with pytest.raises(ValueError, match="text 'Decline'"):
        library.approve(table, "sk-deny")
    assert table.get("sk-deny").state == "proposed"
    both = (deny, ElementCondition(role="button", text="Decline"))
    table.put(replace(skill, id="sk-deny2", trigger=replace(skill.trigger, required=both)))
    assert library.approve(table, "sk-deny2").state == "approved"  # named by both its words: the run allows it
