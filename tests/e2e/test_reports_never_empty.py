"""CI reads a report even when the environment breaks: `steadyhand run --junit --json` with the app down or
Chromium missing writes an `<error>` case per flow and a JSON document saying why (exit 4), never a file of
0 bytes; a JUnit of a run that ran has a timestamp, the hostname, `[[ATTACHMENT|path]]` lines to screenshots
on disk and marks a pass that needed a heal (real `steadyhand run` subprocesses, real Chromium)."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from core.sites.server import StaticSite

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures" / "stops"
HEALED = {"id": "s1", "action": "input", "value": "Grace",  # recorded before the label lost its suffix: a heal
          "target": {"tag": "input", "role": "textbox", "name": "Display name (required)",
                     "label": "Display name (required)"}}


def _project(root: Path, base_url: str, flows: dict[str, dict]) -> Path:
    (root / "flows").mkdir(parents=True)
    (root / "steadyhand.yaml").write_text(yaml.safe_dump({"name": "Reports", "base_url": base_url,
                                                          "waits": {"retry_delay_ms": 0}}))
    for name, flow in flows.items():
        (root / "flows" / f"{name}.yaml").write_text(yaml.safe_dump({"name": name, **flow}))
    return root


def _run(project: Path, tmp_path: Path, *extra: str, env: dict[str, str] | None = None):
    junit, out = tmp_path / "junit.xml", tmp_path / "run.json"
    r = subprocess.run([sys.executable, "-m", "core.cli", "run", str(project), "--headless", "-q", "--junit",
                        str(junit), "--json", str(out), *extra], cwd=ROOT, env={**os.environ, **(env or {})},
                       capture_output=True, text=True, timeout=240)
    return r, junit, out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _two_flows() -> dict[str, dict]:
    return {"first": {"start_url": "/dead.html", "steps": [HEALED]},
            "second": {"start_url": "/dead.html", "steps": [HEALED]}}


def _check_error_report(junit: Path, out: Path, kind: str, words: str) -> None:
    assert junit.stat().st_size > 0 and out.stat().st_size > 0
    suite = ET.parse(junit).getroot().find("testsuite")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert set(cases) == {"first", "second"}
    assert suite.get("errors") == "2" and suite.get("tests") == "2"
    assert suite.get("timestamp") and suite.get("hostname") == socket.gethostname()
    for case in cases.values():
        err = case.find("error")
        assert err is not None and words in err.get("message"), ET.tostring(case, encoding="unicode")
    doc = json.loads(out.read_text())
    assert doc["passed"] is False and doc["error"]["kind"] == kind and words in doc["error"]["reason"]
    assert {f["flow"]: f["passed"] for f in doc["flows"]} == {"first": False, "second": False}
    assert all(f["error_kind"] == kind for f in doc["flows"])


def test_the_app_down_gives_an_error_case_per_flow_and_a_json_that_says_why(tmp_path: Path) -> None:
    port = _free_port()
    project = _project(tmp_path / "p", f"http://127.0.0.1:{port}", _two_flows())
    html = tmp_path / "report.html"
    r, junit, out = _run(project, tmp_path, "--html", str(html))
    assert r.returncode == 4, r.stdout + r.stderr
    _check_error_report(junit, out, "unreachable", f"127.0.0.1:{port}")
    index = html.read_text()  # the index at the --html path: the flow that ran, and the one not run with why
    assert 'href="report-first-1.html' in index and "not run (unreachable)" in index and f"127.0.0.1:{port}" in index


def test_chromium_missing_gives_an_error_case_per_flow_and_a_json_that_says_why(tmp_path: Path) -> None:
    project = _project(tmp_path / "p", "http://127.0.0.1:1", _two_flows())
    r, junit, out = _run(project, tmp_path, env={"STEADYHAND_CHROMIUM": str(tmp_path / "no-such-chromium")})
    assert r.returncode == 4, r.stdout + r.stderr
    _check_error_report(junit, out, "browser", "no-such-chromium")


def test_a_pass_that_needed_a_heal_is_marked_and_links_its_screenshots(tmp_path: Path) -> None:
    site = StaticSite(FIXTURES)
    site.start()
    try:
        project = _project(tmp_path / "p", site.base_url, {"profile": {"start_url": "/dead.html",
                                                                       "steps": [HEALED]}})
        r, junit, out = _run(project, tmp_path)
    finally:
        site.stop()
    assert r.returncode == 0, r.stdout + r.stderr
    case = ET.parse(junit).getroot().find("testsuite").find("testcase")
    props = {p.get("name"): p.get("value") for p in case.find("properties")}
    assert props["steadyhand.heals"] == "1" and props["steadyhand.healed_steps"].startswith("s1 ")
    text = case.find("system-out").text
    assert text.startswith("passed with 1 heal: s1 ")
    shots = [line[len("[[ATTACHMENT|"):-2] for line in text.splitlines() if line.startswith("[[ATTACHMENT|")]
    assert shots and all(Path(s).is_absolute() and Path(s).is_file() for s in shots), text
    assert json.loads(out.read_text())["flows"][0]["heals"] == 1


def test_html_index_over_the_runs_links_each_report_and_its_failing_step(tmp_path: Path) -> None:
    """`--html PATH` with two flows: PATH is the index (the same name for one flow or ten), linking each run's
    report and the step a failed run stopped at; the report shows that step's received text, the URL, readable
    screenshots that enlarge on click (no script), and the browser and environment."""
    site = StaticSite(FIXTURES)
    site.start()
    try:
        flows = {"healed": {"start_url": "/dead.html", "steps": [HEALED]},
                 "checked": {"start_url": "/dead.html", "steps": [
                     {"id": "s1", "action": "input", "value": "Grace", "selector": "#displayName",
                      "assertions": [{"kind": "value", "expected": "Ada Lovelace", "selector": "#displayName"}]}]}}
        base = site.base_url
        project = _project(tmp_path / "p", base, flows)
        html = tmp_path / "out" / "report.html"
        r, _, _ = _run(project, tmp_path, "--html", str(html))
    finally:
        site.stop()
    assert r.returncode == 1, r.stdout + r.stderr
    index = html.read_text()
    runs = sorted(p.name for p in html.parent.glob("report-*.html"))
    assert runs == ["report-checked-1.html", "report-healed-2.html"]  # flows run in name order
    assert 'href="report-healed-2.html"' in index and 'href="report-checked-1.html#step-1"' in index
    assert "1 of 2 passed" in index and "<script" not in index
    page = (html.parent / "report-checked-1.html").read_text()
    assert 'id="step-1"' in page and 'href="#step-1"' in page and 'href="report.html"' in page
    assert "received" in page and "Grace" in page and "Ada Lovelace" in page
    assert f"{base}/dead.html" in page
    assert 'type="checkbox"' in page and 'width="1280"' in page and "<script" not in page
    env = page.split("<h2>Environment</h2>", 1)[1]
    assert "chromium" in env.lower() and socket.gethostname() in env and "playwright" in env
