"""An abstention names the true best candidate and the runner-up, in order, with their real scores.

Found by a new user: an abstention's explanation said a lower score "leads" a higher one ("best button
'Quarterly report, PDF' 0.55 leads button 'Download' 0.73 by 0.00 < margin 0.10") and listed candidates scored
0.00 instead of the real second-best button.  On the next release of a page (``fixtures/renamed/reports_v1/v2``)
the recorded "Download the quarterly report" button is gone: a "Download" button took its place (a higher score,
but not enough agreement with the recorded name to be chosen) and the recorded id moved to a "Quarterly report,
PDF" button elsewhere.  The step must abstain (nothing clicked), and say so in plain words, best first.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from browser_fixtures import open_driver
from core.domain import Action, Flow, Step
from core.engine.session import ProjectSession
from core.project import load_flow, load_project, save_flow
from core.sites.server import StaticSite

FIXTURES = Path(__file__).parent / "fixtures" / "renamed"

pytestmark = pytest.mark.browser


def test_an_abstention_names_the_best_then_the_runner_up_and_no_zero_scores(tmp_path) -> None:
    site = StaticSite(FIXTURES)
    site.start()
    try:
        with open_driver(site.base_url) as d:
            d.goto("/reports_v1.html")
            (target,) = [c.descriptor for c in d.observe(screenshot=False).candidates if c.descriptor.id == "dl-q"]
        root = tmp_path / "reports"
        (root / "flows").mkdir(parents=True)
        (root / "steadyhand.yaml").write_text(yaml.safe_dump({"name": "reports", "base_url": site.base_url}))
        step = Step(id="s1", name="Download the report", action=Action("click"), target=target)
        path = save_flow(Flow("report", "/reports_v2.html", (step,)), root / "flows" / "report.yaml")
        with ProjectSession(load_project(root), headless=True) as session:
            result = session.run_flow(load_flow(path))
            clicks = session.driver.page.evaluate("() => window.__clicks")
    finally:
        site.stop()
    assert clicks == []
    res = result.steps[0].resolution
    assert res is not None and res.abstained, res
    top = [(c.label, c.score) for c in res.top]
    assert [label for label, _ in top[:2]] == ["Download", "Quarterly report, PDF"], top
    assert all(score > 0.0 for _, score in top), top  # no 0.00 listed beside candidates that scored
    assert top == sorted(top, key=lambda c: -c[1])
    semantic = next(part for part in res.reason.split("; ") if part.startswith("semantic:"))
    assert " leads " not in res.reason and "<" not in res.reason, res.reason
    assert semantic.index("'Download'") < semantic.index("'Quarterly report, PDF'"), semantic
    (hi, lo) = (score for _, score in top[:2])
    assert f"scored higher ({hi:.2f})" in semantic and f"({lo:.2f})" in semantic, semantic
    said = result.steps[0].error or ""
    assert "Download" in said and "0.00" not in said, said
