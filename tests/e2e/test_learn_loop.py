"""The learning loop in real Chromium: a failure corrected once through the takeover path, learnt, approved,
and not needing a person again (two UI versions after a run on the unchanged app) - on the demo's next UI version, and on a third-party-style shop whose
consent bar has other wording and markup, on a page the skill was not learnt on.

* The scripted correction acts on the engine's own page while the recording listener records; the
  correction is stored by the engine at the hand-back with the full descriptor, as a person's is.
* A page no script fits gets no correction: the takeover ends without a hand-back and the step escalates.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from core.bench.learn import LearningLoop, _demo_judge, _demo_switch, _set_variant
from core.bench.learn_correct import CorrectionAction, CorrectionScript, ScriptedCorrection
from core.engine.session import ProjectSession
from core.heal.corrections import list_corrections
from core.project import load_project
from core.sites.server import StaticSite
from core.store import Store
from core.store.skills import SkillTable
from takeover_project import ROOT, broken_demo

pytestmark = pytest.mark.browser

THIRD_PARTY = Path(__file__).parent / "fixtures" / "learn_thirdparty"


def test_two_versions_one_flow_the_second_needs_no_takeover_and_makes_no_wrong_click(tmp_path: Path) -> None:
    with LearningLoop(ROOT / "projects" / "demo", tmp_path / "demo", judge=_demo_judge, switch=_demo_switch) as loop:
        _demo_loop(loop)


def _demo_loop(loop: LearningLoop) -> None:
    # the unchanged app once: the store knows what the flow's pages showed (the screen baselines), so
    # what a later page shows and the recording did not can be told
    (base,) = loop.run_version("v0", "baseline", flows=["export_report"],
                               prepare=lambda root: _set_variant(root, "baseline", 0)).runs
    assert base.passed and base.takeovers == 0
    first = loop.run_version("v1", "focus-popup", flows=["export_report"],
                             prepare=lambda root: _set_variant(root, "focus-popup", 0))
    (run,) = first.runs
    assert run.passed and run.takeover_kinds == ["focus-popup"], run
    assert run.wrong_clicks == 0 and run.unexpected_writes == {}  # the popup was dismissed, never confirmed
    # the correction is the engine's own, stored at the hand-back with the recorded descriptor
    store = Store.open(loop.root / ".steadyhand" / "store.sqlite")
    try:
        (corr,) = list_corrections(store, None)
        assert corr.meaning == "insert" and corr.step_id == "s2"
        (step,) = corr.steps
        target = step["target"]
        assert step["action"] == "click" and target["role"] == "button" and target["name"] == "Start empty"
        assert target["bbox"] and target.get("container") == "Use your last entry?" and corr.crops
        assert corr.page["url"].endswith("/login") and store.media_path(corr.screenshot).is_file()
        skills = SkillTable(store).list()
    finally:
        store.close()
    assert run.approved and [s.id for s in skills] == run.approved
    assert loop.skill_kinds[run.approved[0]] == "focus-popup"

    second = loop.run_version("v2", "popup-renamed", flows=["export_report"],
                              prepare=lambda root: _set_variant(root, "popup-renamed", 0))
    (again,) = second.runs
    assert again.passed, again
    assert again.takeovers == 0 and again.skill_passed >= 1 and again.hits == again.skill_passed
    assert again.false_triggers == 0 and again.wrong_clicks == 0 and again.wrong_activations == []
    assert second.row()["skill_hit_rate"] == 1.0


def test_a_page_no_script_fits_gets_no_correction_and_the_step_escalates(tmp_path: Path) -> None:
    project = load_project(broken_demo(tmp_path / "broken"))  # step 4 names a control the page does not have
    control = ScriptedCorrection()
    with ProjectSession(project, headless=True, control=control, use_store=False) as session:
        result = session.run_flow(project.flows["export_report"])
    assert result.status != "passed"
    (log,) = control.takeovers
    assert log.index == 3 and not log.handed_back and log.error == "no scripted correction fits this page"
    assert result.steps[-1].status == "escalated" and "without a hand-back" in result.steps[-1].error


def _shop_project(root: Path, base_url: str) -> Path:
    (root / "flows").mkdir(parents=True)
    (root / "steadyhand.yaml").write_text(yaml.safe_dump({
        "schema_version": 1, "name": "Corner shop", "base_url": base_url,
        "browser": {"headless": True, "viewport": {"width": 1280, "height": 800}}}), encoding="utf-8")
    flows = {
        "basket": ("/v1/shop.html", [
            {"id": "s1", "name": "Add to basket", "action": "click",
             "target": {"tag": "button", "role": "button", "name": "Add to basket", "text": "Add to basket",
                        "classes": ["buy"]},
             "assertions": [{"kind": "text_appears", "expected": "Added to your basket"}]}]),
        "profile": ("/v1/profile.html", [
            {"id": "s1", "name": "Type the display name", "action": "input", "value": "Robin",
             "target": {"tag": "input", "role": "textbox", "name": "Display name", "label": "Display name",
                        "id": "display-name", "name_attr": "display"}},
            {"id": "s2", "name": "Save profile", "action": "click",
             "target": {"tag": "button", "role": "button", "name": "Save profile", "text": "Save profile",
                        "type": "submit"},
             "assertions": [{"kind": "text_appears", "expected": "Profile saved for Robin"}]}]),
    }
    for name, (start, steps) in flows.items():
        (root / "flows" / f"{name}.yaml").write_text(yaml.safe_dump(
            {"schema_version": 1, "name": name, "start_url": start, "steps": steps}, sort_keys=False),
            encoding="utf-8")
    return root


def _release(version: str):  # noqa: ANN202
    def prepare(root: Path) -> None:
        for path in (root / "flows").glob("*.yaml"):
            text = path.read_text(encoding="utf-8")
            path.write_text(text.replace("start_url: /v1/", f"start_url: /{version}/"), encoding="utf-8")
    return prepare


def _page_truth(flow: str, session: Any) -> dict[str, Any]:
    """The shop page's own log of consent controls pressed: anything but "Got it!" is a wrong click."""
    clicks = session.driver.page.evaluate("() => window.__clicks || []")
    wrong = [c for c in clicks if c != "accept"]
    return {"wrong_clicks": len(wrong), "wrong_activations": wrong, "accepted": clicks.count("accept")}


def test_a_consent_skill_learnt_on_one_third_party_page_serves_another_by_its_trigger(tmp_path: Path) -> None:
    site = StaticSite(THIRD_PARTY)
    site.start()
    try:
        project = _shop_project(tmp_path / "src", site.base_url)
        got_it = CorrectionScript("consent", when=CorrectionAction("click", role="dialog", name="cookieconsent"),
                                  actions=(CorrectionAction("click", role="button", name="Got it!",
                                                            within_role="dialog", within_name="cookieconsent"),))
        with LearningLoop(project, tmp_path / "shop", scripts=(got_it,), judge=_page_truth,
                          switch=lambda session, version: None) as loop:  # the flows' URLs name the release
            before = loop.run_version("v1", "no consent bar", flows=["basket", "profile"])
            assert [(r.passed, r.takeovers) for r in before.runs] == [(True, 0), (True, 0)], before.runs
            after = loop.run_version("v2", "consent bar", flows=["basket", "profile"], prepare=_release("v2"))
    finally:
        site.stop()
    basket, profile = after.runs
    assert basket.passed and basket.takeover_kinds == ["consent"] and basket.approved, basket
    # the other page: other ids and classes on the bar, another form - the skill fires by its trigger
    assert profile.passed and profile.takeovers == 0, profile
    assert profile.skill_passed == 1 and profile.false_triggers == 0 and profile.wrong_clicks == 0
    assert basket.wrong_clicks == 0
