"""A step's selector that now matches another control is no exact match (a release reused the id).

The reviewer's case: ``export_report``'s step s4 keeps its recorded element (button "Export
report", id ``export-report``) but its selector is edited to ``#save-report`` - the id of the
"Save report" button next to it.  The selector matches exactly one element, which contradicts the
recorded one: the engine must not press it.  The locator chain decides instead (it finds "Export
report"), and the demo server's log shows that "Save report" was never written.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from core.domain import ElementDescriptor
from core.locate import selector_contradicts

ROOT = Path(__file__).resolve().parents[2]


def test_a_selector_match_that_contradicts_the_recorded_element_is_not_taken() -> None:
    export = ElementDescriptor(tag="button", role="button", name="Export report", id="export-report")
    assert selector_contradicts(export, ElementDescriptor(tag="button", role="button", name="Save report"))
    assert selector_contradicts(export, ElementDescriptor(tag="a", role="link", name="Export report"))
    assert not selector_contradicts(export, ElementDescriptor(tag="button", role="button", name="Export report (E)"))
    assert not selector_contradicts(ElementDescriptor(), ElementDescriptor(tag="a", role="link", name="Delete"))


@pytest.mark.browser
def test_an_id_reused_by_the_neighbouring_button_does_not_press_it(tmp_path) -> None:
    project = tmp_path / "demo"
    shutil.copytree(ROOT / "projects" / "demo", project, ignore=shutil.ignore_patterns(".steadyhand"))
    flow = project / "flows" / "export_report.yaml"
    text = flow.read_text()
    assert "selector: '#export-report'" in text
    flow.write_text(text.replace("selector: '#export-report'", "selector: '#save-report'"))
    out = tmp_path / "run.json"
    r = subprocess.run([sys.executable, "-m", "core.cli", "run", str(project), "--flow", "export_report",
                        "--headless", "--json", str(out)], cwd=ROOT, env=dict(os.environ),
                       capture_output=True, text=True, timeout=300)
    (result,) = json.loads(out.read_text())["flows"]
    # "Save report" is the demo's one write of this page (op save_report): the server saw none
    assert "export_report: 6 activations, 0 writes, 0 duplicate writes" in r.stdout, r.stdout + r.stderr
    assert result["passed"] and result["steps_passed"] == result["steps_total"], r.stdout + r.stderr
