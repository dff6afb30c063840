"""A button renamed only in punctuation or case is a heal, reported as one - never an exact match.

Found by a new user on a page of their own: the recorded button "Sign in" became "Sign-in".  The replay took it
as an exact match (score 0.90, strategy exact): no heal proposed, none in the progress line nor in ``heals
list``.  A name that differs only by punctuation, hyphen or case is a changed name: the replay may still act on
it when it is confidently the same control (the only one so named, same role, same place) - even for a step
that writes - but it reports the heal (``button 'Sign in' -> button 'Sign-in'``).

``fixtures/renamed/signin_v1/v2.html``: the target is the observer's descriptor of the button on v1 (as
recorded); the flow runs on v2 through ``steadyhand run`` and through the session it uses, in Chromium; the page
counts the clicks on each button.
"""
from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from browser_fixtures import open_driver
from core.domain import Action, Flow, Step
from core.engine.session import ProjectSession
from core.project import load_flow, load_project, save_flow
from core.sites.server import StaticSite

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures" / "renamed"

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def site():
    s = StaticSite(FIXTURES)
    s.start()
    yield s
    s.stop()


def _project(tmp_path: Path, site: StaticSite, *, reversible: bool) -> Path:
    with open_driver(site.base_url) as d:
        d.goto("/signin_v1.html")
        found = [c.descriptor for c in d.observe(screenshot=False).candidates if c.descriptor.label_text == "Sign in"]
    assert len(found) == 1, found
    root = tmp_path / "acme"
    (root / "flows").mkdir(parents=True)
    (root / "steadyhand.yaml").write_text(yaml.safe_dump({"name": "acme", "base_url": site.base_url}))
    step = Step(id="s1", name="Click Sign in", action=Action("click"), target=found[0])
    step = replace(step, reversible=reversible, reversible_declared=not reversible)
    save_flow(Flow("sign_in", "/signin_v2.html", (step,)), root / "flows" / "sign_in.yaml")
    return root


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "core.cli", *args], cwd=ROOT, env=dict(os.environ),
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("reversible", [True, False])
def test_a_button_renamed_sign_in_to_sign_hyphen_in_is_clicked_once_as_a_heal(reversible: bool, site, tmp_path):
    root = _project(tmp_path, site, reversible=reversible)
    with ProjectSession(load_project(root), headless=True) as session:
        result = session.run_flow(load_flow(root / "flows" / "sign_in.yaml"))
        clicks = session.driver.page.evaluate("() => window.__clicks")
    step = result.steps[0]
    assert step.status == "passed", (step.status, step.error, step.resolution)
    assert clicks == ["signin"]  # the renamed button, once; never "Sign up"
    res = step.resolution
    assert res is not None and res.strategy != "exact" and res.healed, res
    assert res.score < 1.0 and "'Sign in' -> 'Sign-in'" in res.reason, res.reason
    assert result.heals == 1


def test_the_heal_line_and_heals_list_name_the_change_of_name(site, tmp_path):
    root = _project(tmp_path, site, reversible=True)
    r = _cli("run", str(root), "--headless", "--no-screenshots")
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "button 'Sign in' -> button 'Sign-in'" in out, out
    listed = _cli("heals", "list", str(root))
    assert listed.returncode == 0, listed.stderr
    assert "button 'Sign in' -> button 'Sign-in'" in listed.stdout, listed.stdout
    history = _cli("history", "list", str(root))
    assert history.returncode == 0, history.stderr
    assert " 1 heal " in history.stdout and "heal(s)" not in history.stdout, history.stdout
