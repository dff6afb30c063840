"""The command line: bad input and a broken environment give one clear message, never a traceback."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str, env: dict | None = None, timeout: int = 180) -> subprocess.CompletedProcess:
    e = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "core.cli", *args], cwd=ROOT, env=e, capture_output=True,
                          text=True, timeout=timeout)


def _project(tmp_path: Path, base_url: str, steps: list[dict]) -> Path:
    (tmp_path / "flows").mkdir()
    (tmp_path / "steadyhand.yaml").write_text(yaml.safe_dump({"name": "T", "base_url": base_url}))
    (tmp_path / "flows" / "f.yaml").write_text(yaml.safe_dump({"name": "f", "start_url": "/", "steps": steps}))
    return tmp_path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_malformed_flow_names_file_step_and_field(tmp_path):
    p = _project(tmp_path, "http://127.0.0.1:1", [{"id": "a", "action": "click", "selector": "#x"},
                                                  {"id": "b", "action": "clack", "selector": "#x"}])
    r = _run("run", str(p), "--headless")
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1
    assert "f.yaml" in lines[0] and "step 'b' (#2)" in lines[0] and "field 'action'" in lines[0]
    assert "unknown action 'clack'" in lines[0]


def test_unreachable_target_url_is_one_clear_message(tmp_path):
    port = _free_port()
    p = _project(tmp_path, f"http://127.0.0.1:{port}", [{"id": "a", "action": "click", "selector": "#x"}])
    r = _run("run", str(p), "--headless", "-q")
    assert r.returncode == 4
    assert "Traceback" not in r.stderr + r.stdout
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1
    assert f"cannot load http://127.0.0.1:{port}/" in lines[0] and "ERR_CONNECTION_REFUSED" in lines[0]


def test_bad_params_and_json_path_are_input_errors(tmp_path):
    demo = str(ROOT / "projects" / "demo")
    r = _run("run", demo, "--param", "user", "--headless")
    assert r.returncode == 2 and "--param expects NAME=VALUE" in r.stderr and "Traceback" not in r.stderr
    p = _project(tmp_path, "http://127.0.0.1:1", [{"id": "a", "action": "input", "value": "{usr}", "selector": "#x"}])
    r = _run("run", str(p), "--headless")
    assert r.returncode == 2 and "step 'a' (#1)" in r.stderr and "{usr}" in r.stderr
    r = _run("run", demo, "--headless", "--json", "/proc/no/such.json")
    assert r.returncode == 2 and "cannot write" in r.stderr and "Traceback" not in r.stderr


def test_missing_chromium_is_one_clear_message(tmp_path):
    p = _project(tmp_path, "http://127.0.0.1:1", [{"id": "a", "action": "click", "selector": "#x"}])
    r = _run("run", str(p), "--headless", env={"STEADYHAND_CHROMIUM": str(tmp_path / "no-such-chromium")})
    assert r.returncode == 4
    assert "Traceback" not in r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Chromium not found" in lines[0] and "apt-get install chromium" in lines[0]


def test_unknown_flow_and_missing_project(tmp_path):
    r = _run("run", str(tmp_path / "nope"), "--headless")
    assert r.returncode == 2 and "project folder not found" in r.stderr and "Traceback" not in r.stderr
    r = _run("run", str(ROOT / "projects" / "miniwob"), "--flow", "no-such-flow")
    assert r.returncode == 2 and "no flow named no-such-flow" in r.stderr


def test_miniwob_episodes_json(tmp_path):
    out = tmp_path / "m.json"
    r = _run("run", str(ROOT / "projects" / "miniwob"), "--flow", "click-test", "--flow", "enter-text",
             "--episodes", "3", "--headless", "--no-store", "--json", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(out.read_text())
    assert doc["passed"] is True
    tasks = {t["task"]: t for t in doc["tasks"]}
    assert set(tasks) == {"click-test", "enter-text"}
    for t in tasks.values():
        assert t["episodes"] == 3 and t["success_rate"] == 1.0 and t["wrong_clicks"] == 0
        assert t["mean_raw_reward"] == 1.0
        assert set(t) == {"task", "episodes", "success_rate", "mean_raw_reward", "heals_by_strategy", "wrong_clicks"}
    for f in doc["flows"]:
        assert set(f) == {"flow", "passed", "error_kind", "steps", "heals", "invalid_actions", "seconds",
                          "steps_passed", "steps_total", "heals_by_strategy", "abstentions", "stop",
                          "runs", "retries", "trace", "by_hand", "result"}  # each run's id (and retry), its trace (None: --trace off)
        assert f["error_kind"] == "" and f["stop"] is None and f["steps_passed"] == f["steps_total"] == f["steps"]
