"""The learning bench's figures from its runs (pure): rates, goals, the false-trigger action check, versions."""
from __future__ import annotations

from core.bench.learn import LearnReport, RunFigures, VersionFigures, _same_actions, _versions, format_report
from core.bench.learn_correct import DEMO_SCRIPTS
from core.domain import Action, ElementDescriptor
from core.domain.skill import Skill, SkillAction, SkillTrigger


def _run(version: str, flow: str, **kw) -> RunFigures:  # noqa: ANN003
    return RunFigures(version=version, variant=version, flow=flow, status="passed", passed=True, **kw)


def test_rates_and_goals_come_from_the_runs() -> None:
    v2 = VersionFigures("v2", "focus-popup", [
        _run("v2", "a", takeovers=1, takeover_kinds=["focus-popup"], actions_ok=5, actions_failed=1, steps=6),
        _run("v2", "b", skill_fired=1, skill_passed=1, hits=1, actions_ok=6, steps=7)])
    v3 = VersionFigures("v3", "learn-all", [
        _run("v3", "a", skill_fired=2, skill_passed=2, hits=2, actions_ok=7, steps=7),
        _run("v3", "b", takeovers=1, takeover_kinds=["focus-popup"], misses=1, actions_ok=4, actions_failed=2,
             steps=6, wrong_clicks=1)])
    rows = [v.row() for v in (v2, v3)]
    assert rows[0]["takeovers"] == 1 and rows[0]["skill_hit_rate"] == 1.0 and rows[0]["steps"] == 13
    assert rows[0]["action_success_rate"] == round(11 / 12, 3)
    assert rows[1]["skill_hit_rate"] == round(2 / 3, 3) and rows[1]["wrong_clicks"] == 1
    report = LearnReport([v2, v3])
    goals = report.goals()
    assert goals["first_takeover_version"] == {"focus-popup": "v2"}
    assert goals["takeovers_again"] == {"focus-popup": ["v3"]} and not goals["no_takeover_after_first"]
    assert goals["hit_rate_overall"] == 0.75 and not goals["hit_rate_at_least_0_9"] and goals["wrong_clicks"] == 1
    doc = report.to_json_dict()
    assert set(doc["versions"][0]) >= {"version", "takeovers", "skill_hit_rate", "action_success_rate",
                                       "false_triggers", "wrong_clicks", "steps"}
    text = format_report(report)
    assert "NO ({'focus-popup': ['v3']})" in text and "67% (2/3)" in text


def test_no_skill_applies_gives_no_hit_rate() -> None:
    row = VersionFigures("v1", "baseline", [_run("v1", "a", actions_ok=3, steps=3)]).row()
    assert row["skill_hit_rate"] is None and row["action_success_rate"] == 1.0


def test_a_skill_doing_what_the_correction_did_is_told_from_one_that_does_not() -> None:
    popup = next(s for s in DEMO_SCRIPTS if s.kind == "focus-popup")
    inline = next(s for s in DEMO_SCRIPTS if s.kind == "inline-edit")

    def skill(kind: str, **target: str) -> Skill:
        return Skill("sk-1", "d", SkillTrigger(), actions=(SkillAction(Action(kind), ElementDescriptor(**target)),))

    assert _same_actions(skill("click", role="button", name="Start empty"), popup)
    assert not _same_actions(skill("click", role="button", name="Fill it in"), popup)
    assert not _same_actions(skill("dblclick", role="button", name="Start empty"), popup)
    assert _same_actions(skill("dblclick", tag="label", text="Reason"), inline)
    assert _same_actions(skill("dblclick", tag="label", text="{target.label}"), inline)  # bound at run time


def test_versions_from_the_command_line() -> None:
    assert _versions(["a=baseline", "cookie-banner"]) == [("a", "baseline"), ("v2", "cookie-banner")]
    assert _versions(None)[0] == ("v1", "baseline")
