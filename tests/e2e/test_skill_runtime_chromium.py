"""Approved skills at run time in real Chromium (K6), on a page we did not script for the engine.

``fixtures/skills/checkout.html`` imitates a shop's consent wall: a fixed
layer over the whole page, no dialog role, and one way out - "Accept all
cookies".  The engine's own popup handling never presses a confirming
control, so the flow escalates; a hand-made approved skill that names the
button in its trigger accepts it and the flow passes.  A skill whose
trigger only half holds, one that would press "Delete draft" (which its
trigger does not name) and a retired one do not fire.  The page's own log
of activations is the ground truth of what was pressed.
"""
from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from core.domain import Action, Assertion, ElementDescriptor, EngineSettings, Flow, Step, WaitSettings
from core.domain.skill import ElementCondition, Skill, SkillAction, SkillScope, SkillTrigger, VerifyRule
from core.engine.events import EscalationRaised, SkillConsidered, SkillFinished, SkillFired
from core.engine.executor import FlowExecutor
from core.engine.skilled import skill_decider
from core.sites.server import StaticSite
from core.store import Store
from core.store.skills import SkillTable
from browser_fixtures import open_driver

pytestmark = pytest.mark.browser

FIXTURES = Path(__file__).parent / "fixtures" / "skills"
ROOT = Path(__file__).resolve().parents[2]
PRODUCT = "corner-shop"
ACCEPT = ElementCondition(role="button", name="Accept all cookies")


def accept_skill(sid: str = "sk-0000000000a1", **kw: Any) -> Skill:
    return Skill(id=sid, description="accept the consent wall that covers the page",
                 trigger=kw.pop("trigger", SkillTrigger(required=(ACCEPT,))),
                 actions=kw.pop("actions", (SkillAction(Action("click"), ElementDescriptor(
                     role="button", name="Accept all cookies"), note="accept the cookies"),)),
                 verify=(VerifyRule("absent", ACCEPT),), scope=SkillScope(product=PRODUCT),
                 state=kw.pop("state", "approved"), quality=0.6, **kw)


REVIEW = Flow("review_order", "/checkout.html", (
    Step("s1", Action("click"), name="Review the order",
         target=ElementDescriptor(tag="button", role="button", name="Review order", text="Review order",
                                  type="button"),
         assertions=(Assertion("text_appears", "Order reviewed"),)),
))


@pytest.fixture(scope="module")
def site():
    s = StaticSite(FIXTURES)
    s.start()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def driver(site):
    with open_driver(site.base_url) as d:
        yield d


@pytest.fixture
def store(tmp_path):
    s = Store.open(tmp_path / "store.sqlite")
    yield s
    s.close()


def run(driver: Any, store: Store) -> tuple[Any, list[Any], list[str]]:
    events: list[Any] = []
    dec = skill_decider(store, PRODUCT, events.append)
    ex = FlowExecutor(driver, emit=events.append, store=store, screenshots=False, project_name=PRODUCT,
                      settings=EngineSettings(waits=WaitSettings(retries=1, retry_delay_ms=0)),
                      deciders=(dec,) if dec is not None else ())
    result = ex.run_flow(REVIEW, params={})
    ex.finish(result)
    return result, events, list(driver.page.evaluate("window.activations"))


def of(events: list[Any], kind: type) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def test_without_a_skill_the_consent_wall_escalates_and_is_never_accepted(driver, store) -> None:
    result, events, pressed = run(driver, store)
    assert result.status == "escalated"
    assert "accept" not in pressed and "review" not in pressed
    assert of(events, EscalationRaised)


def test_an_approved_hand_made_skill_accepts_the_wall_and_the_flow_passes(driver, store) -> None:
    table = SkillTable(store)
    table.put(accept_skill())
    result, events, pressed = run(driver, store)
    assert result.status == "passed", result.error
    assert pressed == ["accept", "review"]
    assert [(o.source, o.status) for o in result.steps] == [("skill", "passed"), ("flow", "passed")]
    (fired,) = of(events, SkillFired)
    assert fired.skill_id == "sk-0000000000a1" and fired.actions == 1
    (done,) = of(events, SkillFinished)
    assert done.outcome == "passed" and done.ms > 0
    (use,) = table.uses(skill_id="sk-0000000000a1")
    assert use.outcome == "passed" and use.ms > 0
    assert table.get("sk-0000000000a1").successes == 1
    (row,) = store.run_detail(result.run_id).steps
    assert row.step_id == "s1" and row.status == "passed"


def test_a_trigger_that_half_holds_does_not_fire(driver, store) -> None:
    table = SkillTable(store)
    table.put(accept_skill(trigger=SkillTrigger(required=(ACCEPT,), dialog=True)))  # the wall is no dialog
    result, events, pressed = run(driver, store)
    assert result.status == "escalated" and "accept" not in pressed
    assert not of(events, SkillFired)
    assert any(e.half and not e.holds for e in of(events, SkillConsidered))
    assert [u.outcome for u in table.uses(skill_id="sk-0000000000a1")] == ["half"]


def test_a_skill_that_would_press_delete_its_trigger_does_not_name_is_refused(driver, store) -> None:
    table = SkillTable(store)
    table.put(accept_skill(actions=(
        SkillAction(Action("click"), ElementDescriptor(role="button", name="Accept all cookies")),
        SkillAction(Action("click"), ElementDescriptor(role="button", name="Delete draft")),
    )))
    result, events, pressed = run(driver, store)
    assert "delete" not in pressed and "accept" not in pressed and not of(events, SkillFired)
    assert result.status == "escalated"
    refused = [e for e in of(events, SkillConsidered) if e.reason.startswith("refused")]
    assert refused and "'Delete draft'" in refused[0].reason and "trigger does not name" in refused[0].reason


def test_a_retired_skill_does_not_fire(driver, store) -> None:
    table = SkillTable(store)
    table.put(accept_skill())
    table.set_state("sk-0000000000a1", "retired", reason="the shop dropped its consent wall")
    result, events, pressed = run(driver, store)
    assert result.status == "escalated" and "accept" not in pressed
    assert not of(events, SkillFired) and not of(events, SkillConsidered)


def test_the_command_line_runs_the_skill_and_its_reports_show_it(site, tmp_path) -> None:
    """The project's own store holds the approved skill; ``steadyhand run`` registers it and prints its use."""
    project = tmp_path / "shop"
    (project / "flows").mkdir(parents=True)
    (project / "steadyhand.yaml").write_text(
        f"schema_version: 1\nname: {PRODUCT}\nbase_url: {site.base_url}\nbrowser:\n  headless: true\n",
        encoding="utf-8")
    (project / "flows" / "review_order.yaml").write_text(
        "schema_version: 1\nname: review_order\nstart_url: /checkout.html\nsteps:\n"
        "- id: s1\n  name: Review the order\n  action: click\n  target:\n    tag: button\n    role: button\n"
        "    name: Review order\n    text: Review order\n  assertions:\n  - kind: text_appears\n    expected: Order reviewed\n",
        encoding="utf-8")
    (project / ".steadyhand").mkdir()
    with Store.open(project / ".steadyhand" / "store.sqlite") as s:
        SkillTable(s).put(accept_skill())
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    junit, html = tmp_path / "junit.xml", tmp_path / "run.html"
    proc = subprocess.run([sys.executable, "-m", "core.cli", "run", str(project), "--headless", "--junit",
                           str(junit), "--html", str(html)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=180)
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if "skill sk-0000000000a1" in ln]
    assert len(lines) == 1 and "review_order step 1: skill sk-0000000000a1 passed" in lines[0], proc.stderr
    suite = ET.parse(junit).getroot()
    assert suite.find(".//testcase") is not None and suite.find(".//failure") is None
    page = html.read_text(encoding="utf-8")
    assert "Review the order" in page and "<h2>Skills</h2>" in page
    assert "<td>sk-0000000000a1</td>" in page and "1 action done" in page
    with Store.open(project / ".steadyhand" / "store.sqlite") as s:
        (use,) = SkillTable(s).uses(skill_id="sk-0000000000a1")
        assert use.outcome == "passed" and use.flow == "review_order"
