"""The check for a dialog still fading in after a step that passed (core/engine/motion.py) costs no page call
when the step's settle wait ended with nothing animating (its answer's ``moving``): on the demo, whose pages
animate nothing, no step asks.  A page that animates a dialog in is asked, and the step meets the dialog:
``test_skills_where_failures_happen.py`` (sweetalert2's fade-in)."""
from __future__ import annotations

import shutil

import pytest

import core.recover.motion as motion
from core.engine.session import ProjectSession
from core.project import load_project

pytestmark = pytest.mark.browser


def test_no_page_call_when_nothing_animated_as_the_page_settled(monkeypatch, tmp_path) -> None:
    asked: list[int] = []
    real = motion.dialog_arriving

    def counting(driver):
        asked.append(1)
        return real(driver)

    monkeypatch.setattr(motion, "dialog_arriving", counting)
    shutil.copytree("projects/demo", tmp_path / "demo", ignore=shutil.ignore_patterns(".steadyhand"))
    project = load_project(tmp_path / "demo")
    with ProjectSession(project, headless=True) as session:
        result = session.run_flow(project.flows["sort_table"])
    assert result.status == "passed", result.error
    assert asked == []
