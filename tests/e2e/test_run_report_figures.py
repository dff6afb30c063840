"""One refused sign-in run through ``steadyhand run --retries 1 --json --junit --html`` on the bundled demo project:
every surface (the console, the JSON, the JUnit, the HTML index) says the same kind and the same numbers.

The demo's leave_request signs in with the ``password`` secret; a wrong one makes the server answer the sign-in
with 401 and the page show the refusal, nothing kept: the flow fails at step 3 of 11 (2 passed), its run wrote
nothing, so ``--retries 1`` runs it once more.  One subprocess in real Chromium; each test reads one surface.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def refused(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("refused")
    project = tmp / "demo"
    shutil.copytree(ROOT / "projects" / "demo", project, ignore=shutil.ignore_patterns(".steadyhand"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("STEADYHAND_")}
    env.update(PYTHONPATH=str(ROOT), STEADYHAND_SECRET_PASSWORD="wrong-" + "pass")
    env.pop("DISPLAY", None)
    r = subprocess.run([sys.executable, "-m", "core.cli", "run", str(project), "--flow", "leave_request", "--headless",
                        "--retries", "1", "--json", str(tmp / "r.json"), "--junit", str(tmp / "j.xml"),
                        "--html", str(tmp / "h.html")], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 1, r.stdout + r.stderr  # a failed flow, not an escalation
    assert "POST /api/login 401" in r.stdout + r.stderr and "retry 1 of 1" in r.stdout + r.stderr
    return {"console": r.stdout + r.stderr, "json": json.loads((tmp / "r.json").read_text()),
            "junit": ET.parse(tmp / "j.xml").getroot(), "index": (tmp / "h.html").read_text(encoding="utf-8")}


def test_a_refused_sign_in_is_said_to_be_refused_on_every_surface(refused: dict) -> None:
    # it was "failed (assertion)": no check failed, the server said no
    assert "failed (refused)" in refused["console"] and "(assertion)" not in refused["console"]
    flow = refused["json"]["flows"][0]
    assert flow["error_kind"] == "refused" and flow["stop"]["kind"] == "refused"
    assert [run["error_kind"] for run in flow["runs"]] == ["refused", "refused"]
    case = next(refused["junit"].iter("testcase"))
    assert case.find("failure").get("type") == "refused"
    assert [f.get("type") for f in case.findall("rerunFailure")] == ["refused"]
    assert "failed (refused) (retry 1)" in refused["index"] and "assertion" not in refused["index"]


def test_one_refused_step_is_one_invalid_action(refused: dict) -> None:
    # it was 2: the look again without acting (the step is not done again) counted the same click once more
    assert refused["json"]["flows"][0]["invalid_actions"] == 1
    row = next(line for line in refused["console"].splitlines() if line.startswith("leave_request  failed"))
    assert row.split()[2:5] == ["2/11", "0", "1"], row  # steps, heals, invalid actions


def test_the_progress_line_gives_the_tables_steps(refused: dict) -> None:
    # it said "(3 steps, ...)" (the steps run) beside the table's 2/11 (the steps passed of the flow's)
    flow = refused["json"]["flows"][0]
    assert (flow["steps_passed"], flow["steps_total"]) == (2, 11)
    progress = re.findall(r"leave_request: failed \(refused\) \((\d+)/(\d+) steps passed, ", refused["console"])
    assert progress == [("2", "11")], refused["console"]
    assert "2 of 11" in refused["index"]


def test_the_html_index_counts_a_retried_flow_once(refused: dict) -> None:
    # it said "0 of 2 passed": the retried run and its retry counted as two runs of one flow
    index = refused["index"]
    assert "<title>Demo · 0 of 1 passed · Steadyhand</title>" in index
    assert ">0 of 1 passed</span>" in index and "1 earlier run retried (listed, not counted)" in index
    assert index.count("<tr><td><a href=") == 2  # both runs are listed
    assert len(refused["json"]["flows"]) == 1 and int(refused["junit"].get("tests")) == 1
