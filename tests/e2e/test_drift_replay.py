"""The drift bench's replay reads the live page itself: a step the engine passes but that lands on another
page than the intended action's is a (silent) wrong click.  Real Chromium, a static site on loopback, no
datasette venvs.  (Its own file: the engine's session runs its own Playwright, one per thread at a time.)"""
from __future__ import annotations

import pytest

from core.bench.drift_truth import TruthStep, state_of
from core.sites.server import StaticSite

pytestmark = pytest.mark.browser



def test_the_replay_counts_a_click_that_lands_elsewhere_as_a_silent_wrong_click(tmp_path):
    """A flow step that clicks link B (a selector, which the engine trusts) while the intended action
    clicks link A: the engine passes the step, the bench reads the live page and counts a wrong click."""
    from core.bench.drift import VersionReport, _replay
    from core.project import load_project
    from core.project.init import init_project

    site_dir = tmp_path / "site"
    site_dir.mkdir()
    (site_dir / "index.html").write_text('<h1>start</h1><p><a id="a" href="/a.html">Open A</a> '
                                         '<a id="b" href="/b.html">Open B</a></p>', encoding="utf-8")
    for name in ("a", "b"):
        (site_dir / f"{name}.html").write_text(f"<h1>page {name}</h1>", encoding="utf-8")
    with StaticSite(site_dir) as site:
        init_project(tmp_path / "p", url=site.base_url)
        (tmp_path / "p" / "flows" / "one.yaml").write_text(
            "schema_version: 1\nname: one\nstart_url: /index.html\nsteps:\n"
            "- id: s1\n  name: Open B\n  action: click\n  selector: '#b'\n  expect: navigation\n", encoding="utf-8")
        # what the intended action (click A) reaches; one Playwright per process at a time, so written here
        truth = [TruthStep(state_of("/index.html", "start", None), state_of("/a.html", "page a", None), "")]
        report = VersionReport(version="static", steps=1)
        _replay(load_project(tmp_path / "p"), site.base_url, "one", truth, report, isolated=False)
    step = report.step_details[0]
    assert step.status == "passed" and step.acted == 1 and step.on_track
    assert step.wrong and report.wrong_clicks == 1 and report.silent_wrong == 1
    assert step.reached["path"] == "/b.html" and step.intended["path"] == "/a.html"
