"""``steadyhand run`` with the habits of pytest and Playwright: -k, -x / --maxfail, --headed, --retries, --json -,
an unknown --param, defaults from STEADYHAND_* and [tool.steadyhand], shell completion.

Every test runs the command line in a subprocess against a real page in real Chromium: a static page served on
127.0.0.1 that says whether the browser that shows it is headless (``navigator.userAgent``), so ``--headed``
is judged by what the page saw, not by a flag passed along.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]

PAGE = """<!doctype html><html><head><title>Mode</title></head><body><main>
<h1 id="mode">mode unknown</h1>
<script>document.getElementById('mode').textContent =
  navigator.userAgent.includes('Headless') ? 'mode headless' : 'mode headed';</script>
</main></body></html>
"""


def _assert_step(expected: str) -> dict:
    return {"id": "s1", "name": f"See {expected}", "action": "assert",
            "assertions": [{"kind": "text_appears", "expected": expected}]}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("mode-site")
    (root / "index.html").write_text(PAGE, encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "http.server", "0", "--bind", "127.0.0.1"], cwd=root,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    line = proc.stdout.readline()  # "Serving HTTP on 127.0.0.1 port N (http://127.0.0.1:N/) ..."
    port = line.split(" port ")[1].split()[0]
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture
def project(tmp_path: Path, site: str) -> Path:
    p = tmp_path / "proj"
    (p / "flows").mkdir(parents=True)
    (p / "steadyhand.yaml").write_text(yaml.safe_dump({"name": "Modes", "base_url": site,
                                                       "params": {"user": "ada"},
                                                       "browser": {"headless": True}}), encoding="utf-8")
    flows = {"alpha_ok": "mode", "beta_ok": "mode", "gamma_fail": "a text this page never shows",
             "headed_only": "mode headed"}
    for name, expected in flows.items():
        (p / "flows" / f"{name}.yaml").write_text(yaml.safe_dump(
            {"name": name, "start_url": "/", "steps": [_assert_step(expected)]}), encoding="utf-8")
    return p


def _run(*args: str, env: dict[str, str] | None = None, xvfb: bool = False, timeout: float = 240
         ) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if not k.startswith("STEADYHAND_")}
    e["PYTHONPATH"] = str(ROOT)
    e.pop("DISPLAY", None)
    e.update(env or {})
    cmd = [sys.executable, "-m", "core.cli", *args]
    if xvfb:
        cmd = [shutil.which("xvfb-run") or "xvfb-run", "-a", *cmd]
    return subprocess.run(cmd, cwd=ROOT, env=e, capture_output=True, text=True, timeout=timeout)


def test_k_selects_by_name_and_json_dash_keeps_stdout_for_the_document(project: Path) -> None:
    r = _run("run", str(project), "-k", "alpha or (beta and not gamma)", "--json", "-", "-q")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)  # nothing but the JSON on stdout: the table went to stderr
    assert [f["flow"] for f in doc["flows"]] == ["alpha_ok", "beta_ok"] and doc["passed"]
    assert "alpha_ok" in r.stderr and not (project / "-").exists()
    bad = _run("run", str(project), "-k", "alpha and", "-q")
    assert bad.returncode == 2 and "-k 'alpha and'" in bad.stderr
    none = _run("run", str(project), "-k", "zeta", "-q")
    assert none.returncode == 2 and "no flow matches" in none.stderr and "alpha_ok" in none.stderr


def test_exitfirst_stops_and_reports_the_rest_as_skipped(project: Path, tmp_path: Path) -> None:
    out, junit = tmp_path / "r.json", tmp_path / "j.xml"
    r = _run("run", str(project), "--flow", "gamma_fail", "--flow", "alpha_ok", "-x", "--json", str(out),
             "--junit", str(junit), "-q")
    assert r.returncode == 1, r.stderr
    doc = json.loads(out.read_text())
    flows = {f["flow"]: f for f in doc["flows"]}
    assert not flows["gamma_fail"]["passed"] and flows["alpha_ok"]["skipped"] and "error" not in doc
    assert "maxfail" in flows["alpha_ok"]["stop"]["reason"]
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    assert cases["gamma_fail"].find("failure") is not None
    assert cases["alpha_ok"].find("skipped") is not None and cases["alpha_ok"].find("error") is None
    two = _run("run", str(project), "--flow", "gamma_fail", "--flow", "alpha_ok", "--maxfail", "2", "--json", "-",
               "-q")
    assert two.returncode == 1 and [f["flow"] for f in json.loads(two.stdout)["flows"]] == ["gamma_fail", "alpha_ok"]


def test_retries_rerun_a_run_that_wrote_nothing_and_mark_each_retry(project: Path, tmp_path: Path) -> None:
    out, junit = tmp_path / "r.json", tmp_path / "j.xml"
    r = _run("run", str(project), "--flow", "gamma_fail", "--retries", "2", "--json", str(out), "--junit",
             str(junit), "--html", str(tmp_path / "h.html"))
    assert r.returncode == 1, r.stderr
    assert "retry 1 of 2" in r.stderr and "retry 2 of 2" in r.stderr
    entry = json.loads(out.read_text())["flows"][0]
    assert [run["retry"] for run in entry["runs"]] == [0, 1, 2] and entry["retries"] == 2
    assert [run["retried"] for run in entry["runs"]] == [True, True, False]
    case = next(ET.parse(junit).getroot().iter("testcase"))
    assert len(case.findall("rerunFailure")) == 2 and case.find("failure") is not None
    assert {p.get("name"): p.get("value") for p in case.iter("property")}["steadyhand.retry"] == "2"
    index = (tmp_path / "h.html").read_text()
    assert "(retry 1)" in index and "(retry 2)" in index and "(retried)" in index
    nostore = _run("run", str(project), "--flow", "gamma_fail", "--retries", "1", "--no-store", "-q")
    assert nostore.returncode == 2 and "--no-store" in nostore.stderr


def test_an_unknown_param_is_refused_with_the_names_that_exist(project: Path) -> None:
    r = _run("run", str(project), "--param", "usr=bob", "-q")
    assert r.returncode == 2
    assert "--param usr" in r.stderr and "user" in r.stderr and "Traceback" not in r.stderr
    ok = _run("run", str(project), "--flow", "alpha_ok", "--param", "user=bob", "-q")
    assert ok.returncode == 0, ok.stderr


def test_headed_shows_a_window_from_the_flag_the_environment_or_pyproject(project: Path) -> None:
    assert _run("run", str(project), "--flow", "headed_only", "--headless", "-q").returncode == 1
    flag = _run("run", str(project), "--flow", "headed_only", "--headed", "-q", xvfb=True)
    assert flag.returncode == 0, flag.stderr
    env = _run("run", str(project), "--flow", "headed_only", "-q", env={"STEADYHAND_HEADLESS": "0"}, xvfb=True)
    assert env.returncode == 0, env.stderr
    (project / "pyproject.toml").write_text("[tool.steadyhand]\nheadless = false\n", encoding="utf-8")
    conf = _run("run", str(project), "--flow", "headed_only", "-q", xvfb=True)
    assert conf.returncode == 0, conf.stderr
    # the command line wins over the file, the environment over the file
    assert _run("run", str(project), "--flow", "headed_only", "--headless", "-q").returncode == 1
    assert _run("run", str(project), "--flow", "headed_only", "-q", env={"STEADYHAND_HEADLESS": "1"}).returncode == 1


def test_defaults_that_cannot_be_used_are_refused_by_name(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.steadyhand]\nretrys = 1\n", encoding="utf-8")
    r = _run("run", str(project), "-q")
    assert r.returncode == 2 and "retrys" in r.stderr and "retries" in r.stderr
    (project / "pyproject.toml").write_text("[tool.steadyhand]\nretries = 1\n", encoding="utf-8")
    r = _run("run", str(project), "-q", env={"STEADYHAND_MAXFAIL": "some"})
    assert r.returncode == 2 and "STEADYHAND_MAXFAIL" in r.stderr
    r = _run("run", str(project), "--flow", "gamma_fail", "--json", "-")
    assert r.returncode == 1 and "retries=1 from" in r.stderr  # the file's default is used, and said
    assert json.loads(r.stdout)["flows"][0]["retries"] == 1


def _complete(script: str, words: list[str]) -> list[str]:
    body = (f"{script}\nCOMP_WORDS=({' '.join(repr(w) for w in words)}); COMP_CWORD={len(words) - 1}\n"
            "_steadyhand; printf '%s\\n' \"${COMPREPLY[@]}\"\n")
    r = subprocess.run(["bash", "-c", body], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return [w for w in r.stdout.splitlines() if w]


def test_bash_completion_of_commands_options_and_flow_names(project: Path) -> None:
    r = _run("completion", "bash")
    assert r.returncode == 0 and "complete -o default -F _steadyhand steadyhand" in r.stdout
    script = r.stdout
    assert "bench" in _complete(script, ["steadyhand", "ben"])
    assert {"--flow", "--flows"} & set(_complete(script, ["steadyhand", "run", str(project), "--fl"])) == {"--flow"}
    assert set(_complete(script, ["steadyhand", "run", str(project), "-k", ""])) == {
        "alpha_ok", "beta_ok", "gamma_fail", "headed_only"}
    assert _complete(script, ["steadyhand", "run", str(project), "--flow", "gam"]) == ["gamma_fail"]
    assert "table" in _complete(script, ["steadyhand", "bench", "ta"])
    zsh = _run("completion", "zsh")
    assert zsh.returncode == 0 and "bashcompinit" in zsh.stdout
