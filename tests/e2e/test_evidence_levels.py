"""Evidence levels through the session `steadyhand run` uses, on the demo app in Chromium (issue 20 item 2).

At ``failures`` (the default) a step that passes at its first attempt keeps no screenshot; a step whose
assertion fails gets its full look (the page after its action, stored with its screenshot) and so does the
step healed on a tweaked variant; at ``full`` every step has its before and after screenshots.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from core.engine.session import ProjectSession
from core.project import load_project

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]


def _project(tmp_path: Path, *, evidence: str | None = None, variant: str = "baseline", failing: bool = False):
    dst = tmp_path / f"demo-{evidence}-{variant}-{failing}"
    shutil.copytree(ROOT / "projects" / "demo", dst, ignore=shutil.ignore_patterns(".steadyhand"))
    settings = yaml.safe_load((dst / "steadyhand.yaml").read_text())
    settings["site_options"].update({"variant": variant, "latency_ms": "100"})
    if evidence:
        settings["evidence"] = evidence
    (dst / "steadyhand.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))
    if failing:  # the last step asserts a text the app never shows: the flow fails there (an assertion)
        path = dst / "flows" / "sort_table.yaml"
        flow = yaml.safe_load(path.read_text())
        flow["steps"][-1]["assertions"] = [{"kind": "text_appears", "expected": "No such text anywhere"}]
        path.write_text(yaml.safe_dump(flow, sort_keys=False))
    return load_project(dst)


def _shots(project, run_id: str) -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    for p in (project.data_dir / "screenshots" / run_id).glob("*.png"):
        index, when, _ = p.stem.split("_")
        out.setdefault(int(index), set()).add(when)
    return out


def test_failures_level_keeps_no_screenshot_of_a_passing_run(tmp_path) -> None:
    project = _project(tmp_path)
    assert project.engine_settings.evidence == "failures"  # the default
    with ProjectSession(project, headless=True) as session:
        result = session.run_flow(project.flows["sort_table"])
    assert result.status == "passed", result.error
    assert _shots(project, result.run_id) == {}


def test_a_failing_step_gets_its_full_look_at_failures(tmp_path) -> None:
    project = _project(tmp_path, failing=True)
    with ProjectSession(project, headless=True) as session:
        result = session.run_flow(project.flows["sort_table"])
        evidence = session.store.step_evidence(result.run_id)
    last = len(project.flows["sort_table"].steps) - 1
    assert result.status == "failed" and result.steps[-1].index == last, result.error
    shots = _shots(project, result.run_id)
    assert set(shots) == {last}, shots  # only the failing step
    assert "after" in shots[last]
    assert any(r.index == last and r.after_screenshot for r in evidence)


def test_a_healed_step_is_looked_at_in_full(tmp_path) -> None:
    project = _project(tmp_path, variant="tweaked")
    with ProjectSession(project, headless=True) as session:
        result = session.run_flow(project.flows["export_report"])
    assert result.status == "passed" and result.heals > 0, result.error
    healed = {o.index for o in result.steps if o.resolution is not None and o.resolution.healed}
    shots = _shots(project, result.run_id)
    assert healed and healed <= set(shots), (healed, shots)
    assert all(shots[i] == {"before", "after"} for i in healed)


def test_full_level_keeps_every_step(tmp_path) -> None:
    project = _project(tmp_path, evidence="full")
    with ProjectSession(project, headless=True) as session:
        result = session.run_flow(project.flows["sort_table"])
    assert result.status == "passed", result.error
    shots = _shots(project, result.run_id)
    assert set(shots) == set(range(len(project.flows["sort_table"].steps)))
    assert all("after" in w for w in shots.values())
