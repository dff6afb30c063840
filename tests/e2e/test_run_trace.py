"""``steadyhand run --trace``: a Playwright trace per flow run of the demo project, kept without its secret and
linked from the JSON, JUnit and HTML reports (issue 22 item 3); ``--retries`` and the exit code of a sign-in the
server refused (401: nothing written, so a failure that may be retried, not an escalation)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
SECRET = "demo-pass"  # the demo project's declared password (projects/demo/steadyhand.yaml)


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    target = tmp_path / "demo"
    shutil.copytree(ROOT / "projects" / "demo", target, ignore=shutil.ignore_patterns(".steadyhand"))
    return target


def _run(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if not k.startswith("STEADYHAND_")}
    e["PYTHONPATH"] = str(ROOT)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "core.cli", *args], cwd=ROOT, env=e, capture_output=True,
                          text=True, timeout=timeout)


def _entries(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as z:
        return {info.filename: z.read(info) for info in z.infolist()}


def test_trace_on_keeps_a_clean_zip_linked_from_every_report(demo: Path, tmp_path: Path) -> None:
    out, junit, page = tmp_path / "r.json", tmp_path / "j.xml", tmp_path / "r.html"
    r = _run("run", str(demo), "--flow", "leave_request", "--headless", "--trace", "on", "--json", str(out),
             "--junit", str(junit), "--html", str(page))
    assert r.returncode == 0, r.stderr
    entry = json.loads(out.read_text())["flows"][0]
    trace = Path(entry["trace"])
    assert trace == Path(entry["runs"][-1]["trace"]) and trace.is_file()
    assert trace.parent == (demo / ".steadyhand" / "traces").resolve() and trace.stem == entry["runs"][-1]["run_id"]
    files = _entries(trace)
    assert "trace.trace" in files and "trace.network" in files
    events = [json.loads(line) for line in files["trace.trace"].decode("utf-8").splitlines() if line.strip()]
    assert any(e.get("type") == "screencast-frame" for e in events)  # the password field is drawn as dots
    assert any(e.get("type") == "frame-snapshot" for e in events)
    assert any(name.startswith("resources/") for name in files)
    for name, data in files.items():  # typed, in the DOM's field value and in the sign-in's POST body: masked
        assert SECRET.encode() not in data, name
    assert "••••••".encode() in files["trace.trace"]  # the fill of the password was recorded, masked
    case = next(ET.parse(junit).getroot().iter("testcase"))
    assert f"[[ATTACHMENT|{trace}]]" in case.findtext("system-out")
    html = page.read_text(encoding="utf-8")
    assert trace.as_uri() in html and f"playwright show-trace {trace}" in html


def test_retain_on_failure_keeps_only_the_run_that_did_not_pass(demo: Path, tmp_path: Path) -> None:
    ok = _run("run", str(demo), "--flow", "sort_table", "--headless", "--trace", "retain-on-failure", "--json",
              "-", "-q")
    assert ok.returncode == 0, ok.stderr
    doc = json.loads(ok.stdout)
    assert doc["flows"][0]["trace"] is None and doc["flows"][0]["runs"][0]["run_id"]
    assert not list((demo / ".steadyhand").glob("traces/*.zip"))
    env = {"STEADYHAND_TRACE": "retain-on-failure"}  # the environment's default, as run's other options
    bad = _run("run", str(demo), "--flow", "leave_request", "--headless", "--param", "password=wrong-pass",
               "--json", "-", "-q", env=env)
    assert bad.returncode == 1, bad.stderr
    entry = json.loads(bad.stdout)["flows"][0]
    kept = Path(entry["trace"])
    assert kept.is_file() and list((demo / ".steadyhand").glob("traces/*.zip")) == [kept]
    for name, data in _entries(kept).items():
        assert b"wrong-pass" not in data, name  # a --param for a secret's name is a secret too
    refused = _run("run", str(demo), "--flow", "sort_table", "--trace", "always", "-q")
    assert refused.returncode == 2 and "always" in refused.stderr
    refused = _run("run", str(demo), "--flow", "sort_table", "-q", env={"STEADYHAND_TRACE": "always"})
    assert refused.returncode == 2 and "STEADYHAND_TRACE" in refused.stderr and "retain-on-failure" in refused.stderr


def _fail_at_the_end(demo: Path, flow: str) -> None:
    """Append a step whose assertion never holds to the demo's ``flow`` (the run fails after all its steps)."""
    import yaml

    path = demo / "flows" / f"{flow}.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc["steps"].append({"id": "s99", "name": "See a text never shown", "action": "assert",
                         "assertions": [{"kind": "text_appears", "expected": "a text this app never shows"}]})
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")


def test_a_refused_sign_in_fails_exit_1_and_is_retried_each_retry_marked(demo: Path, tmp_path: Path) -> None:
    out, junit = tmp_path / "r.json", tmp_path / "j.xml"
    r = _run("run", str(demo), "--flow", "leave_request", "--headless", "--param", "password=wrong-pass",
             "--retries", "1", "--json", str(out), "--junit", str(junit))
    assert r.returncode == 1, r.stderr  # failed (the server said no), not escalated (3): nothing was written
    assert "0 writes" in r.stdout and "retry 1 of 1" in r.stderr
    entry = json.loads(out.read_text())["flows"][0]
    assert [(run["retry"], run["retried"], run["status"]) for run in entry["runs"]] == [
        (0, True, "failed"), (1, False, "failed")] and entry["retries"] == 1
    assert all(run["run_id"] for run in entry["runs"]) and entry["runs"][0]["run_id"] != entry["runs"][1]["run_id"]
    assert "401" in entry["stop"]["reason"] and entry["stop"]["kind"] == "refused"  # the server said no: no check failed
    case = next(ET.parse(junit).getroot().iter("testcase"))
    assert case.find("failure") is not None and len(case.findall("rerunFailure")) == 1
    assert {p.get("name"): p.get("value") for p in case.iter("property")}["steadyhand.retry"] == "1"
    assert case.findtext("system-out").startswith("retry 1")


def test_a_run_that_wrote_is_not_retried(demo: Path) -> None:
    _fail_at_the_end(demo, "leave_request")  # submits a leave request (POST 201), then fails
    wrote = _run("run", str(demo), "--flow", "leave_request", "--headless", "--retries", "2", "--json", "-")
    assert wrote.returncode == 1, wrote.stderr
    assert "1 writes, 0 duplicate writes" in wrote.stderr  # the server's own log: written once, never again
    entry = json.loads(wrote.stdout)["flows"][0]
    assert len(entry["runs"]) == 1 and entry["runs"][0]["retry"] == 0 and entry["retries"] == 0
    assert "not_retried" in entry["runs"][0] and "not retried" in wrote.stderr


def test_a_run_that_only_signed_in_is_retried(demo: Path) -> None:
    _fail_at_the_end(demo, "sort_table")  # signs in (POST 200: a session, not data), sorts, then fails
    r = _run("run", str(demo), "--flow", "sort_table", "--headless", "--retries", "1", "--json", "-")
    assert r.returncode == 1, r.stderr
    entry = json.loads(r.stdout)["flows"][0]
    assert [(run["retry"], run["status"]) for run in entry["runs"]] == [(0, "failed"), (1, "failed")], entry
    assert entry["retries"] == 1 and "retry 1 of 1" in r.stderr


def test_k_matching_no_flow_still_writes_a_json_document(demo: Path) -> None:
    r = _run("run", str(demo), "-k", "nosuch", "--json", "-", "-q")
    assert r.returncode == 2 and "no flow matches" in r.stderr
    doc = json.loads(r.stdout)
    assert doc["passed"] is False and doc["flows"] == [] and "nosuch" in doc["error"]["reason"]
