"""An invalid flow never leaves CI without a report: `steadyhand run --junit --json --html` on a copy of the demo
project lists every invalid flow file - one the loader refuses (`action: clik`) and one whose `{name}` has no
value (edited by hand, or imported from a Selenium IDE test that uses a variable never stored) - as an `<error>`
case of the JUnit named by its file, under `invalid` in the JSON and as a row of the HTML index, and the other
flows still run (exit 2 when they passed).  A flow that meets the app down after others ran still gets the
summary table of those on standard output (real `steadyhand run` subprocesses, real Chromium)."""
from __future__ import annotations

import json
import os
import shutil
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
UNSET = "parameter {nobody} has no value (known: password, user)"


def _demo(tmp: Path) -> Path:
    project = tmp / "demo"
    shutil.copytree(ROOT / "projects" / "demo", project, ignore=shutil.ignore_patterns(".steadyhand"))
    return project


def _cli(*args: str, tmp: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STEADYHAND_")}
    env["PYTHONPATH"] = str(ROOT)
    env.pop("DISPLAY", None)
    return subprocess.run([sys.executable, "-m", "core.cli", *args], cwd=tmp, env=env, capture_output=True,
                          text=True, timeout=300)


def _run(project: Path, tmp: Path, *extra: str) -> tuple[subprocess.CompletedProcess, ET.Element, dict, str]:
    r = _cli("run", str(project), "--headless", "-q", "--junit", str(tmp / "r.xml"), "--json", str(tmp / "r.json"),
             "--html", str(tmp / "r.html"), *extra, tmp=tmp)
    assert (tmp / "r.xml").is_file() and (tmp / "r.json").is_file() and (tmp / "r.html").is_file(), r.stderr
    return (r, ET.parse(tmp / "r.xml").getroot().find("testsuite"), json.loads((tmp / "r.json").read_text()),
            (tmp / "r.html").read_text(encoding="utf-8"))


def _cases(suite: ET.Element) -> dict[str, ET.Element]:
    return {c.get("name"): c for c in suite.findall("testcase")}


def test_a_placeholder_with_no_value_is_an_invalid_flow_and_the_others_run(tmp_path: Path) -> None:
    # it was: exit 2, one error line, no flow run and no report file at all
    project = _demo(tmp_path)
    flow = project / "flows" / "sort_table.yaml"
    flow.write_text(flow.read_text().replace("'{user}'", "'{nobody}'", 1))
    r, suite, doc, html = _run(project, tmp_path, "-k", "sort or lockout")
    assert r.returncode == 2, r.stdout + r.stderr
    cases = _cases(suite)
    assert set(cases) == {"login_lockout", "flows/sort_table.yaml"}
    assert cases["login_lockout"].find("error") is None and cases["login_lockout"].find("failure") is None
    err = cases["flows/sort_table.yaml"].find("error")
    assert err is not None and err.get("type") == "invalid"
    assert str(flow) in err.get("message") and "field 'value'" in err.get("message") and UNSET in err.get("message")
    assert suite.get("tests") == "2" and suite.get("errors") == "1" and suite.get("failures") == "0"
    assert doc["passed"] is False and [f["flow"] for f in doc["flows"]] == ["login_lockout"]
    assert doc["flows"][0]["passed"] is True
    assert doc["invalid"] == [{"file": str(flow), "location": "step 's1' (#1), field 'value'", "error": UNSET}]
    assert "1 of 2 passed" in html and "flows/sort_table.yaml" in html and "invalid flow file, not run" in html
    assert "{nobody}" in html
    assert "login_lockout  passed" in r.stdout and UNSET in r.stdout


def test_an_invalid_flow_file_is_an_error_case_in_the_junit_and_a_row_of_the_html(tmp_path: Path) -> None:
    # it was: JUnit tests="1" errors="0" and the HTML "sort_table · passed", while the JSON and exit code said 2
    project = _demo(tmp_path)
    broken = project / "flows" / "broken.yaml"
    broken.write_text(yaml.safe_dump({"name": "broken", "start_url": "/login",
                                      "steps": [{"id": "s1", "action": "clik", "selector": "#username"}]}))
    r, suite, doc, html = _run(project, tmp_path, "-k", "sort")
    assert r.returncode == 2, r.stdout + r.stderr
    cases = _cases(suite)
    assert set(cases) == {"sort_table", "flows/broken.yaml"}
    assert suite.get("tests") == "2" and suite.get("errors") == "1"
    message = cases["flows/broken.yaml"].find("error").get("message")
    assert [i["file"] for i in doc["invalid"]] == [str(broken)]
    loader = f"{doc['invalid'][0]['file']} at {doc['invalid'][0]['location']}: {doc['invalid'][0]['error']}"
    assert message == f"invalid flow file, not run: {loader}" and "action" in message and "clik" in message
    title = html.split("<title>", 1)[1].split("</title>", 1)[0]
    assert "passed" in title and "1 of 2 passed" in title, title  # not "sort_table · passed"
    assert "flows/broken.yaml" in html and "clik" in html


def test_an_imported_test_with_a_variable_never_stored_is_reported_and_the_others_run(tmp_path: Path) -> None:
    project = _demo(tmp_path)
    side = tmp_path / "greet.side"
    side.write_text(json.dumps({
        "id": "p1", "version": "2.0", "name": "greet", "url": "http://127.0.0.1:1", "suites": [], "urls": [],
        "plugins": [], "tests": [{"id": "t1", "name": "greet", "commands": [
            {"id": "c1", "comment": "", "command": "open", "target": "/login", "targets": [], "value": ""},
            {"id": "c2", "comment": "", "command": "type", "target": "id=username",
             "targets": [["id=username", "id"]], "value": "${nobody}"}]}]}))
    imp = _cli("import-side", str(side), "--project", str(project), tmp=tmp_path)
    assert imp.returncode == 0, imp.stdout + imp.stderr
    written = sorted(p.name for p in (project / "flows").glob("greet*.yaml"))
    assert len(written) == 1, written
    r, suite, doc, html = _run(project, tmp_path, "-k", "greet or lockout")
    assert r.returncode == 2, r.stdout + r.stderr
    cases = _cases(suite)
    assert set(cases) == {"login_lockout", f"flows/{written[0]}"}
    err = cases[f"flows/{written[0]}"].find("error")
    assert err is not None and "parameter {nobody} has no value" in err.get("message")
    assert [f["flow"] for f in doc["flows"]] == ["login_lockout"] and doc["flows"][0]["passed"] is True
    assert [Path(i["file"]).name for i in doc["invalid"]] == written
    assert "1 of 2 passed" in html and f"flows/{written[0]}" in html


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_app_down_after_a_flow_ran_still_prints_the_summary_table(tmp_path: Path) -> None:
    # it was: the error line alone on stderr, nothing on stdout although a_first had run and passed
    site = StaticSite(Path(__file__).parent / "fixtures" / "stops")
    site.start()
    try:
        root = tmp_path / "p"
        (root / "flows").mkdir(parents=True)
        (root / "steadyhand.yaml").write_text(yaml.safe_dump({"name": "Down", "base_url": site.base_url,
                                                              "waits": {"retry_delay_ms": 0}}))
        step = {"id": "s1", "action": "input", "value": "Grace", "selector": "#displayName"}
        down = f"http://127.0.0.1:{_free_port()}/dead.html"  # the app gone by the second flow
        for name, url in (("a_first", "/dead.html"), ("b_second", down), ("c_third", "/dead.html")):
            (root / "flows" / f"{name}.yaml").write_text(yaml.safe_dump({"name": name, "start_url": url,
                                                                         "steps": [step]}))
        r = _cli("run", str(root), "--headless", "-q", "--junit", str(tmp_path / "j.xml"), tmp=tmp_path)
    finally:
        site.stop()
    assert r.returncode == 4, r.stdout + r.stderr
    rows = {line.split()[0]: line.split()[1] for line in r.stdout.splitlines()
            if line.split() and line.split()[0] in ("a_first", "b_second", "c_third")}
    assert rows == {"a_first": "passed", "b_second": "error"}, r.stdout
    assert "not run (unreachable): c_third" in r.stdout
    cases = _cases(ET.parse(tmp_path / "j.xml").getroot().find("testsuite"))
    assert cases["c_third"].find("error").get("message").startswith("not run: ")


def test_when_every_flow_is_invalid_the_three_reports_still_say_so(tmp_path: Path) -> None:
    # it was: exit 2 and no report file (a CI job then reads none, or a stale one)
    root = tmp_path / "p"
    (root / "flows").mkdir(parents=True)
    (root / "steadyhand.yaml").write_text(yaml.safe_dump({"name": "Bad", "base_url": "http://127.0.0.1:1"}))
    (root / "flows" / "f.yaml").write_text(yaml.safe_dump({"name": "f", "start_url": "/", "steps": [
        {"id": "a", "action": "input", "value": "{usr}", "selector": "#x"}]}))
    (root / "flows" / "g.yaml").write_text(yaml.safe_dump({"name": "g", "start_url": "/", "steps": [
        {"id": "a", "action": "clik", "selector": "#x"}]}))
    r, suite, doc, html = _run(root, tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert set(_cases(suite)) == {"flows/f.yaml", "flows/g.yaml"} and suite.get("errors") == "2"
    assert doc["passed"] is False and doc["flows"] == [] and len(doc["invalid"]) == 2
    assert "0 of 2 passed" in html and "{usr}" in html and "clik" in html
