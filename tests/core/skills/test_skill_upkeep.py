"""Upkeep (K7): quality per use, review area, merges, conflicts, daily cap, settings from the project file."""
from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
from library_samples import T0, open_table, popup_skill

from core.domain import Action, ElementDescriptor
from core.domain.skill import (
    QUALITY_FAILURE_DELTA, QUALITY_SUCCESS_DELTA, ElementCondition, SkillAction, SkillScope, SkillSettings,
    SkillTrigger,
)
from core.project import ProjectError, load_project
from core.skills.upkeep import (
    action_similarity, apply_use, find_conflicts, merge_similar, proposals_left, quality_after, resolve_conflicts,
    review_area, run_upkeep, settings_of, under_daily_cap, use_effect,
)
from core.store.skills import SkillUseRecord

CLICK = SkillAction(Action("click"), ElementDescriptor(role="button", name="Cancel"))
TYPE = SkillAction(Action("input", "{target.label}"), ElementDescriptor(role="textbox", label="{target.label}"))


def _acts(*kinds):
    return tuple(CLICK if k == "click" else TYPE if k == "input" else SkillAction(Action(k, "Escape")) for k in kinds)


def test_quality_moves_by_the_k7_constants_and_stays_in_range():
    assert (QUALITY_SUCCESS_DELTA, QUALITY_FAILURE_DELTA) == (0.1, -0.5)
    assert use_effect("passed").count == "success" and use_effect("passed").quality_delta == 0.1
    assert use_effect("precondition").count == "failure" and use_effect("failed").quality_delta == -0.5
    assert use_effect("half").count == "" and use_effect("denied").quality_delta == 0.0
    assert quality_after(0.95, "passed") == 1.0 and quality_after(0.3, "failed") == 0.0
    assert quality_after(0.5, "passed", SkillSettings(success_delta=0.2)) == pytest.approx(0.7)
    with pytest.raises(ValueError):
        use_effect("crashed")


def test_apply_use_moves_counters_in_the_store(tmp_path):
    store, table = open_table(tmp_path)
    with store:
        table.put(popup_skill(quality=0.8, state="approved"))
        apply_use(table, "sk-000000000001", outcome="passed", run_id="r1", flow="f", step_index=2, step_id="s3",
                  ms=120.0)
        apply_use(table, "sk-000000000001", outcome="precondition", run_id="r2", flow="f", step_index=2,
                  step_id="s3", reason="dialog gone")
        s = table.get("sk-000000000001")
        assert (s.successes, s.failures) == (1, 1) and s.quality == pytest.approx(0.4)
        assert [u.outcome for u in table.uses(skill_id=s.id)] == ["precondition", "passed"]


def _use(skill_id, at):
    return SkillUseRecord(1, skill_id, "r", "f", 0, "s1", "passed", "", 1.0, at)


def test_review_area_holds_low_quality_and_unused_approved_skills():
    now = T0 + timedelta(days=30)
    fresh = popup_skill("sk-fresh", state="approved", quality=0.9, created_at=now - timedelta(days=2))
    poor = popup_skill("sk-poor", state="approved", quality=0.2, created_at=now - timedelta(days=1))
    idle = popup_skill("sk-idle", state="approved", quality=0.9, created_at=T0, last_used_at=T0 + timedelta(days=1))
    used = popup_skill("sk-used", state="approved", quality=0.9, created_at=T0, last_used_at=T0)
    never = popup_skill("sk-never", state="approved", quality=0.9, created_at=T0, updated_at=T0)
    proposed = popup_skill("sk-prop", quality=0.1, created_at=T0)
    items = review_area([fresh, poor, idle, used, never, proposed], [_use("sk-used", now - timedelta(days=1))], now)
    got = {i.skill.id: i.reasons for i in items}
    assert set(got) == {"sk-poor", "sk-idle", "sk-never"}
    assert got["sk-poor"] == ("quality 0.20 below 0.30",)
    assert got["sk-idle"] == ("unused for 29 days",) and got["sk-never"] == ("never used in 30 days",)
    assert items[0].skill.id == "sk-poor"
    lenient = SkillSettings(review_quality=0.1, review_unused_days=40)
    assert review_area([fresh, poor, idle, used, never], [], now, lenient) == []


def test_similarity_is_over_the_action_kinds():
    a = popup_skill("a", actions=_acts("click", "input", "click"))
    assert action_similarity(a, popup_skill("b", actions=_acts("click", "input", "click"))) == 1.0
    assert action_similarity(a, popup_skill("c", actions=_acts("click", "input"))) == pytest.approx(0.8)


def test_merge_takes_true_duplicates_only_and_chooses_by_this_stores_uses():
    long = _acts(*(["click", "input"] * 5 + ["click"]))  # 11 actions
    longer = _acts(*(["click", "input"] * 5 + ["click", "click"]))  # 22/23 alike by kinds: not a duplicate
    a = popup_skill("sk-a", state="approved", successes=90, actions=long)  # a counter of the row, not a use
    b = popup_skill("sk-b", state="approved", actions=longer)
    dup = popup_skill("sk-dup", state="approved", actions=long, description="the same, learnt twice")
    c = popup_skill("sk-c", state="proposed", actions=_acts("click", "input"))
    banner = popup_skill("sk-banner", state="approved", actions=long,
                         trigger=SkillTrigger(required=(ElementCondition(role="button", name="Accept cookies"),)))
    other_product = popup_skill("sk-other", product="shop", state="approved", actions=long)
    retired = popup_skill("sk-old", state="retired", actions=long)
    skills = [a, b, dup, c, banner, other_product, retired]
    uses = {"sk-dup": {"passed": 3}, "sk-a": {"passed": 1, "failed": 2}}
    merges = merge_similar(skills, uses=uses)
    assert [(m.kept.id, m.dropped.id) for m in merges] == [("sk-dup", "sk-a")]  # more passed uses here
    assert merges[0].similarity == 1.0 and "merged into sk-dup" in merges[0].reason
    assert [(m.kept.id, m.dropped.id) for m in merge_similar(skills)] == [("sk-a", "sk-dup")]  # no uses: older/id
    same_words = replace(a, id="sk-a2", trigger=replace(a.trigger, dialog_name="  AUTOFILL! "))
    assert [(m.kept.id, m.dropped.id) for m in merge_similar([a, same_words])] == [("sk-a", "sk-a2")]
    other_value = replace(a, id="sk-a3", actions=(replace(long[0], target=ElementDescriptor(role="button",
                                                                                          name="OK")),) + long[1:])
    assert merge_similar([a, other_value]) == []  # another target is another skill


def test_an_approved_skill_is_never_retired_for_one_nobody_reviewed():
    ours = popup_skill("sk-ours", state="approved")
    theirs = popup_skill("sk-theirs", state="proposed", successes=40, quality=1.0)
    assert [(m.kept.id, m.dropped.id) for m in merge_similar([theirs, ours], uses={"sk-theirs": {"passed": 40}})] \
        == [("sk-ours", "sk-theirs")]
    other = replace(theirs, actions=(SkillAction(Action("click"), ElementDescriptor(role="button",
                                                                                   name="Use saved details")),))
    assert merge_similar([ours, other]) == []
    conflicts = find_conflicts([other, ours])
    assert [(c.winner.id, [x.id for x in c.losers]) for c in conflicts] == [("sk-ours", ["sk-theirs"])]


def test_conflicts_are_resolved_by_scope_narrower_first():
    wide = popup_skill("sk-wide", state="approved", quality=0.9)
    narrow = popup_skill("sk-narrow", state="approved", quality=0.5,
                         scope=SkillScope(product="demo", task_type="leave", url_prefix="/requests"))
    mid = popup_skill("sk-mid", state="approved", quality=0.95, scope=SkillScope(product="demo", task_type="leave"))
    assert [s.id for s in resolve_conflicts([wide, narrow, mid])] == ["sk-narrow", "sk-mid", "sk-wide"]
    twin = popup_skill("sk-twin", state="approved", quality=0.4, actions=_acts("press"))
    conflicts = find_conflicts([wide, narrow, twin, mid])
    assert [(c.winner.id, [x.id for x in c.losers]) for c in conflicts] == [("sk-wide", ["sk-twin"])]
    assert find_conflicts([wide, replace(twin, actions=wide.actions)]) == []
    assert find_conflicts([replace(wide, state="proposed"), replace(twin, state="proposed")]) == []


def test_daily_cap_counts_new_proposals_of_one_product_not_imports(tmp_path):
    store, table = open_table(tmp_path)
    with store:
        now = T0 + timedelta(hours=10)
        for i in range(3):
            table.put(popup_skill(f"sk-{i}", created_at=T0 + timedelta(hours=i)))
        table.put(popup_skill("sk-imp", created_at=T0, provenance=replace(popup_skill().provenance,
                                                                          source="import")))
        table.put(popup_skill("sk-old", created_at=T0 - timedelta(days=2)))
        table.put(popup_skill("sk-shop", product="shop", created_at=T0))
        cap = SkillSettings(daily_proposals=4)
        assert proposals_left(table, "demo", cap, now) == 1 and under_daily_cap(table, "demo", cap, now)
        table.put(popup_skill("sk-3", created_at=T0 + timedelta(hours=3)))
        assert not under_daily_cap(table, "demo", cap, now)
        assert under_daily_cap(table, "demo", cap, now + timedelta(hours=23))  # the window rolls on
        assert under_daily_cap(table, "demo", None, now)  # 50 by default


def test_run_upkeep_retires_duplicates_and_records_why(tmp_path):
    store, table = open_table(tmp_path)
    long = _acts("click", "input", "click")
    with store:
        table.put(popup_skill("sk-a", state="approved", successes=50, actions=long, created_at=T0))
        table.put(popup_skill("sk-b", state="approved", actions=long, created_at=T0))
        for _ in range(2):
            apply_use(table, "sk-b", outcome="passed", run_id="r1", flow="f", step_index=0, step_id="s1")
        dry = run_upkeep(table, "demo", now=T0 + timedelta(days=1), apply=False)
        assert [m.dropped.id for m in dry.merges] == ["sk-a"] and table.get("sk-a").state == "approved"
        rep = run_upkeep(table, "demo", now=T0 + timedelta(days=1))
        a = table.get("sk-a")
        assert a.state == "retired" and a.review_reason.startswith("merged into sk-b")
        assert rep.to_json_dict()["merges"][0] == {"kept": "sk-b", "dropped": "sk-a", "similarity": 1.0}
        assert any("merged sk-a (approved) into sk-b (approved)" in line for line in rep.lines())
        from core.skills.library import approve
        back = approve(table, "sk-a", restore=True)  # a person brings it back, under the approval rules
        assert back.state == "approved" and back.review_reason.startswith("restored by a person (retired: merged")


def test_the_reviewers_upkeep_case_keeps_the_approved_skill_and_reports_a_conflict(tmp_path):
    from core.skills.files import import_skills
    from core.skills.library import approve

    review = Path(__file__).resolve().parents[2] / "fixtures" / "skills_review"
    store, table = open_table(tmp_path)
    with store:
        import_skills(table, review / "up-a.json", product="Shipping")
        approve(table, "sk-a0a0a0a0a0a0", force=True)
        import_skills(table, review / "up-b.json", product="Shipping")  # claims 40 successes
        rep = run_upkeep(table, "Shipping", now=T0)
        assert rep.merges == () and table.get("sk-a0a0a0a0a0a0").state == "approved"
        assert [(c.winner.id, [x.id for x in c.losers]) for c in rep.conflicts] == [
            ("sk-a0a0a0a0a0a0", ["sk-b0b0b0b0b0b0"])]
        assert any(line.startswith("conflict for a person: sk-a0a0a0a0a0a0 (approved) and sk-b0b0b0b0b0b0 "
                                   "(proposed)") for line in rep.lines())


def _project(tmp_path: Path, skills_yaml: str) -> Path:
    (tmp_path / "steadyhand.yaml").write_text("schema_version: 1\nname: demo\nsite: demo\n" + skills_yaml,
                                              encoding="utf-8")
    return tmp_path


def test_settings_come_from_the_project_file_with_k7_defaults(tmp_path):
    assert settings_of(load_project(_project(tmp_path, ""))) == SkillSettings()
    s = settings_of(load_project(_project(tmp_path, "skills:\n  daily_proposals: 5\n  review_unused_days: 7\n")))
    assert (s.daily_proposals, s.review_unused_days, s.review_quality, s.merge_similarity) == (5, 7, 0.3, 0.9)
    with pytest.raises(ProjectError, match="skills.merge_similarity"):
        load_project(_project(tmp_path, "skills:\n  merge_similarity: 2\n"))
    with pytest.raises(ProjectError, match="unknown field"):
        load_project(_project(tmp_path, "skills:\n  daily_cap: 5\n"))
