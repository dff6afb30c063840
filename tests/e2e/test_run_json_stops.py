"""``steadyhand run --json`` says, per flow, where and why it stopped, steps passed / total, heals by strategy
and abstentions; the table's steps column says passed / total (a small project on loopback pages)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from core.sites.server import StaticSite

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures" / "stops"

pytestmark = pytest.mark.browser


def switch(sid: str) -> dict:
    return {"id": sid, "action": "click", "target": {"tag": "button", "role": "switch", "name": "Wi-Fi"}}


FLOWS = {
    "toggle": {"start_url": "/toggle.html", "steps": [switch(f"s{i}") for i in range(1, 9)]},
    "profile": {"start_url": "/dead.html", "steps": [
        {"id": "s1", "action": "input", "value": "Grace",
         # recorded before the label lost its suffix: a heal (not exact)
         "target": {"tag": "input", "role": "textbox", "name": "Display name (required)",
                    "label": "Display name (required)"}},
        {"id": "s2", "action": "click", "target": {"tag": "button", "role": "button", "name": "Remove account",
                                                   "text": "Remove account"}},
    ]},
    "settings": {"start_url": "/toggle.html", "steps": [switch("s1"), switch("s2")]},
    "save": {"start_url": "/dead.html", "steps": [  # kind 8: a Save that never does anything
        {"id": "s1", "action": "click", "target": {"tag": "button", "role": "button", "name": "Save changes",
                                                   "text": "Save changes"}}]},
}


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    site = StaticSite(FIXTURES)
    site.start()
    root = tmp_path_factory.mktemp("stops")
    (root / "flows").mkdir()
    (root / "steadyhand.yaml").write_text(yaml.safe_dump({"name": "Stops", "base_url": site.base_url,
                                                          "waits": {"retry_delay_ms": 0}}))
    for name, flow in FLOWS.items():
        (root / "flows" / f"{name}.yaml").write_text(yaml.safe_dump({"name": name, **flow}))
    yield root
    site.stop()


def test_run_json_says_where_and_why_each_flow_stopped(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    r = subprocess.run([sys.executable, "-m", "core.cli", "run", str(project), "--headless", "--no-store",
                        "--no-screenshots", "-q", "--json", str(out), "--junit", str(tmp_path / "junit.xml")],
                       cwd=ROOT, env=dict(os.environ),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 3, r.stdout + r.stderr  # escalated, none failed
    doc = json.loads(out.read_text())
    flows = {f["flow"]: f for f in doc["flows"]}
    old_keys = {"flow", "passed", "error_kind", "steps", "heals", "invalid_actions", "seconds"}
    new_keys = {"steps_passed", "steps_total", "heals_by_strategy", "abstentions", "stop", "runs", "retries", "trace",
                "by_hand", "result"}
    assert all(set(f) == old_keys | new_keys for f in doc["flows"])

    toggle = flows["toggle"]
    assert (toggle["passed"], toggle["error_kind"]) == (False, "escalated")
    assert toggle["stop"]["kind"] == "stagnation" and "(at most 3)" in toggle["stop"]["reason"]
    assert "K2" not in toggle["stop"]["reason"]  # plain words, no mechanism id
    assert toggle["stop"]["step"] == {"index": 4, "id": "s5", "title": "click Wi-Fi"}
    assert (toggle["steps_passed"], toggle["steps_total"], toggle["steps"]) == (4, 8, 5)

    profile = flows["profile"]
    assert profile["stop"]["kind"] == "abstained" and profile["stop"]["step"]["id"] == "s2"
    assert profile["abstentions"] == 1
    assert (profile["steps_passed"], profile["steps_total"]) == (1, 2)
    assert profile["heals"] == 1 and sum(profile["heals_by_strategy"].values()) == 1
    assert "exact" not in profile["heals_by_strategy"]

    settings = flows["settings"]
    assert settings["passed"] is True and settings["stop"] is None
    assert (settings["steps_passed"], settings["steps_total"], settings["abstentions"]) == (2, 2, 0)

    save = flows["save"]
    assert save["stop"]["kind"] == "breaker_open" and save["stop"]["step"]["index"] == 0
    assert save["stop"]["reason"].startswith("circuit breaker open after 3 consecutive failures (limit 3)")
    assert (save["steps_passed"], save["steps_total"], save["invalid_actions"]) == (0, 1, 3)

    rows = {line.split()[0]: line.split() for line in r.stdout.splitlines()[2:6]}
    assert rows["save"][1:3] == ["escalated", "0/1"]
    assert rows["toggle"][1:3] == ["escalated", "4/8"]
    assert rows["profile"][1:3] == ["escalated", "1/2"]
    assert rows["settings"][1:3] == ["passed", "2/2"]

    # the same stops, as CI systems read them: one test case per flow, failures with the step and the reason
    suite = ET.parse(tmp_path / "junit.xml").getroot().find("testsuite")
    assert (suite.get("name"), suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("Stops", "4", "3", "0")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert set(cases) == set(FLOWS) and cases["settings"].find("failure") is None
    toggle_failure = cases["toggle"].find("failure")
    assert toggle_failure.get("type") == "stagnation"
    assert toggle_failure.get("message").startswith('escalated at step 5 (s5 "click Wi-Fi"): ')
    assert "(at most 3)" in toggle_failure.get("message") and "K2" not in toggle_failure.get("message")
    assert cases["save"].find("failure").get("type") == "breaker_open"
    assert "  5. s5" in cases["toggle"].find("system-out").text
