"""The whole loop in real Chromium: a failure, a person's correction, a proposed skill, its approval, and the
next run that needs nobody (K2-K6).

The shipping form of ``test_skills_learn_real`` (version 2: an "Autofill?"
dialog with no close or cancel control covers it, and "Use saved details"
is a wrong click the server counts).  A scripted person fixes the first run
by hand; the proposal is approved through the library; a new browser (the
dialog is shown again) runs the flow with a person who would stop the run if
asked: the skill presses "Type them myself" before step 1 and the run passes.
Retired, the skill stops firing and the run escalates again.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.engine.events import EscalationRaised, SkillFinished, SkillFired, SkillProposed
from core.engine.session import ProjectSession
from core.project import load_project
from core.skills.library import approve, retire
from core.store import Store
from core.store.skills import SkillTable
from test_skills_learn_real import ScriptedPerson, Site, _project

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def site():  # noqa: ANN201
    s = Site()
    yield s
    s.close()


def test_a_learnt_and_approved_skill_makes_the_next_run_need_no_person(tmp_path: Path, site) -> None:
    root = _project(tmp_path / "ship", site.base_url)
    project = load_project(root)
    events: list[Any] = []
    with ProjectSession(project, emit=events.append, headless=True,
                        control=ScriptedPerson(("Type them myself", "insert"))) as session:
        site.version = 1
        assert session.run_flow(project.flows["ship"]).status == "passed"
        site.version = 2
        fixed = session.run_flow(project.flows["ship"])
        assert fixed.status == "passed", fixed.error
    (proposed,) = [e for e in events if isinstance(e, SkillProposed)]
    with Store.open(root / ".steadyhand" / "store.sqlite") as store:
        approve(SkillTable(store), proposed.skill_id)

    events.clear()
    nobody = ScriptedPerson()  # stops the run if it is asked anything
    with ProjectSession(project, emit=events.append, headless=True, control=nobody) as session:
        again = session.run_flow(project.flows["ship"])
    assert again.status == "passed", again.error
    assert nobody.escalations == [] and site.wrong_clicks == 0
    (fired,) = [e for e in events if isinstance(e, SkillFired)]
    assert fired.skill_id == proposed.skill_id and fired.index == 0
    (done,) = [e for e in events if isinstance(e, SkillFinished)]
    assert done.outcome == "passed"
    assert [(o.index, o.source) for o in again.steps][:2] == [(0, "skill"), (0, "flow")]

    with Store.open(root / ".steadyhand" / "store.sqlite") as store:
        table = SkillTable(store)
        assert table.get(proposed.skill_id).successes == 1
        retire(table, proposed.skill_id, "the form dropped its autofill dialog")
    events.clear()
    with ProjectSession(project, emit=events.append, headless=True, control=ScriptedPerson()) as session:
        last = session.run_flow(project.flows["ship"])
    assert last.status == "escalated" and not any(isinstance(e, SkillFired) for e in events)
    assert any(isinstance(e, EscalationRaised) for e in events) and site.wrong_clicks == 0
