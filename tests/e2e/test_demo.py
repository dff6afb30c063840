"""The demo project replayed in real Chromium against the bundled demo app.

The server's ground-truth log (never read by the engine) is the judge of wrong
clicks and double submits.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from core.engine.session import ProjectSession
from core.project import load_project

ROOT = Path(__file__).resolve().parents[2]

#: The controls each flow may activate (fnmatch patterns of the demo's data-gt ids).
EXPECTED = {
    "login_lockout": ["login.*"],
    "leave_request": ["login.*", "requests.new", "new.type", "new.start*", "new.end*", "new.reason", "new.form",
                      "new.submit", "new.type.option.*"],
    "export_report": ["login.*", "requests.export", "dialog.export.confirm"],
    "sort_table": ["login.*", "requests.sort.employee"],
}


def _copy_project(tmp_path: Path, variant: str) -> Path:
    dst = tmp_path / f"demo-{variant}"
    shutil.copytree(ROOT / "projects" / "demo", dst, ignore=shutil.ignore_patterns(".steadyhand"))
    settings = yaml.safe_load((dst / "steadyhand.yaml").read_text())
    settings["site_options"]["variant"] = variant
    (dst / "steadyhand.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))
    return dst


@pytest.fixture(scope="module", params=["baseline", "tweaked"])
def demo(request, tmp_path_factory):
    path = _copy_project(tmp_path_factory.mktemp("demo"), request.param)
    project = load_project(path)
    with ProjectSession(project, headless=True) as session:
        yield request.param, session


@pytest.mark.parametrize("flow", list(EXPECTED))
def test_flow_passes_without_wrong_activation_or_double_write(demo, flow):
    variant, session = demo
    result = session.run_flow(session.project.flows[flow])
    assert result.status == "passed", (variant, result.error, [(o.step_id, o.status, o.error) for o in result.steps])
    gt = session.site.site.ground_truth_report(EXPECTED[flow])
    assert gt["wrong"] == [] or gt["wrong_activations"] == 0, gt
    assert gt["duplicate_writes"] == 0, gt
    if flow == "leave_request":
        assert gt["writes_by_op"] == {"create_request": 1}
    if flow == "login_lockout":
        assert gt["failed_logins"] == 3
    if variant == "tweaked" and flow in ("export_report", "leave_request"):
        assert result.heals > 0  # ids changed / label gained a suffix: found by meaning, counted as heals
    if variant == "baseline":
        assert result.heals == 0 and result.invalid_actions == 0


def test_store_holds_the_runs_and_no_password(demo):
    variant, session = demo
    session.evidence = "full"  # every step keeps its screenshots (the default, "failures", keeps a failure's)
    try:
        session.run_flow(session.project.flows["export_report"])
    finally:
        session.evidence = "failures"
    db = session.project.data_dir / "store.sqlite"
    runs = session.store.list_runs(limit=50)
    assert any(r.flow == "export_report" and r.status == "passed" for r in runs)
    raw = db.read_bytes() + b"".join(p.read_bytes() for p in session.project.data_dir.glob("store.sqlite*"))
    assert b"demo-pass" not in raw
    for f in (session.project.root / "flows").glob("*.yaml"):
        assert "demo-pass" not in f.read_text()
    shots = list((session.project.data_dir / "screenshots").rglob("*.png"))
    assert shots, "observations reference screenshot files"
