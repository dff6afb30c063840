"""A project is untrusted until trusted (issue 21 item 2): settings that run a program or reach the environment
take effect only in a project the user trusted on this machine; api_key_env names only key variables; only http
and https URLs; the store stays inside the project.

Ran on the command line (``python -m core.cli``) with the trust file in a temporary $XDG_CONFIG_HOME.  A project
file once ran a script as ``browser.executable_path``, sent AWS_SECRET_ACCESS_KEY as a bearer token, and
screenshotted /etc/passwd through a ``file://`` start URL.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from core.domain import UntrustedValue
from core.perception.browser import BrowserLaunchError, find_chromium
from core.project import ProjectError, load_project
from core.project.trust import guarded_settings, trust_project, untrusted_setting

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    monkeypatch.delenv("STEADYHAND_CHROMIUM", raising=False)
    return home


def cli(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STEADYHAND_")}
    return subprocess.run([sys.executable, "-m", "core.cli", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def project(tmp_path: Path, **extra: object) -> Path:
    root = tmp_path / "proj"
    shutil.copytree(ROOT / "projects" / "demo", root, ignore=shutil.ignore_patterns(".steadyhand"))
    data = yaml.safe_load((root / "steadyhand.yaml").read_text())
    for key, value in extra.items():
        data[key] = {**data.get(key, {}), **value} if isinstance(value, dict) else value
    (root / "steadyhand.yaml").write_text(yaml.safe_dump(data))
    return root


def evil_script(tmp_path: Path) -> tuple[Path, Path]:
    marker = tmp_path / "ran"
    script = tmp_path / "evil.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    script.chmod(0o755)
    return script, marker


def test_an_executable_path_runs_only_in_a_trusted_project_and_a_change_needs_trusting_again(
        tmp_path: Path, config_home: Path) -> None:
    script, marker = evil_script(tmp_path)
    root = project(tmp_path, browser={"executable_path": str(script)})
    res = cli("run", str(root), "--flow", "export_report", "--headless", "--no-store")
    assert res.returncode != 0 and not marker.exists(), res.stderr
    assert "setting 'browser.executable_path'" in res.stderr and "it runs a program" in res.stderr
    assert f"steadyhand trust {root}" in res.stderr and "Traceback" not in res.stderr

    trusted = cli("trust", str(root))
    assert trusted.returncode == 0, trusted.stderr
    assert f"browser.executable_path: {script}" in trusted.stdout
    assert (config_home / "steadyhand" / "trusted.json").is_file() and not list(root.rglob("trusted.json"))
    res = cli("run", str(root), "--flow", "export_report", "--headless", "--no-store")
    assert marker.exists(), res.stderr  # trusted: the setting takes effect (here a script that is no Chromium)
    marker.unlink()

    (tmp_path / "x").mkdir()
    other, _ = evil_script(tmp_path / "x")
    data = yaml.safe_load((root / "steadyhand.yaml").read_text())
    data["browser"]["executable_path"] = str(other)
    (root / "steadyhand.yaml").write_text(yaml.safe_dump(data))
    res = cli("run", str(root), "--flow", "export_report", "--headless", "--no-store")
    assert res.returncode != 0 and not (tmp_path / "x" / "ran").exists() and not marker.exists()
    assert "changed since you trusted this project" in res.stderr

    listed = cli("trust", "--list")
    assert str(root.resolve()) in listed.stdout and "1 trusted project in" in listed.stdout
    assert cli("trust", str(root), "--revoke").returncode == 0
    assert "no trusted projects" in cli("trust", "--list").stdout


def test_the_environment_overrides_an_untrusted_setting_without_an_error(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    script, _ = evil_script(tmp_path)
    p = load_project(project(tmp_path, browser={"executable_path": str(script)}))
    configured = p.engine_settings.browser.executable_path
    assert isinstance(configured, UntrustedValue) and configured == str(script)
    with pytest.raises(BrowserLaunchError, match="browser.executable_path"):
        find_chromium(configured)
    monkeypatch.setenv("STEADYHAND_CHROMIUM", "/usr/bin/chromium")
    assert find_chromium(configured) == "/usr/bin/chromium"


@pytest.mark.parametrize("name", ["AWS_SECRET_ACCESS_KEY", "HOME", "GITHUB_TOKEN", "openai_api_key", "X_API_KEYS"])
def test_api_key_env_names_only_model_key_variables(tmp_path: Path, name: str) -> None:
    root = project(tmp_path, model={"base_url": "http://127.0.0.1:9/v1", "name": "m", "api_key_env": name})
    res = cli("run", str(root), "--flow", "export_report", "--headless", "--no-store")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "model.api_key_env" in res.stderr and "is not a model key variable" in res.stderr


def test_a_key_from_the_environment_or_a_remote_model_server_needs_trust(tmp_path: Path) -> None:
    root = project(tmp_path, model={"base_url": "http://127.0.0.1:9/v1", "name": "m", "api_key_env": "OPENAI_API_KEY"})
    p = load_project(root)
    assert guarded_settings(p.settings) == {"model.api_key_env": "OPENAI_API_KEY",
                                            "model.base_url": "http://127.0.0.1:9/v1"}
    err = untrusted_setting(root, p.settings)
    assert err is not None and err.location == "field 'model.api_key_env'"
    trust_project(root, p.settings)
    assert untrusted_setting(root, p.settings) is None
    remote = load_project(project(tmp_path / "r", model={"base_url": "https://models.example/v1", "name": "m"}))
    assert untrusted_setting(remote.root, remote.settings).location == "field 'model.base_url'"  # type: ignore[union-attr]
    local = load_project(project(tmp_path / "l", model={"base_url": "http://localhost:8000/v1", "name": "m"}))
    assert guarded_settings(local.settings) == {}  # a model server on this machine: nothing leaves it


def test_a_run_with_an_untrusted_remote_model_is_one_clear_error(tmp_path: Path) -> None:
    root = project(tmp_path, model={"base_url": "https://models.example/v1", "name": "m"})
    res = cli("run", str(root), "--flow", "export_report", "--headless", "--no-store")
    assert res.returncode == 2, res.stderr
    assert "setting 'model.base_url'" in res.stderr and "steadyhand trust" in res.stderr
    assert "Traceback" not in res.stderr


@pytest.mark.parametrize("field,value", [("base_url", "file:///etc"), ("base_url", "javascript:alert(1)"),
                                         ("base_url", "ftp://h/")])
def test_only_http_base_urls(tmp_path: Path, field: str, value: str) -> None:
    root = project(tmp_path, site=None, **{field: value})
    with pytest.raises(ProjectError, match="only http and https URLs"):
        load_project(root)


@pytest.mark.parametrize("start", ["file:///etc/passwd", "FILE:///etc/passwd", "data:text/html,x", "//evil"])
def test_only_http_start_and_navigation_urls(tmp_path: Path, start: str) -> None:
    root = project(tmp_path)
    flow = yaml.safe_load((root / "flows" / "export_report.yaml").read_text())
    flow["start_url"] = start
    (root / "flows" / "export_report.yaml").write_text(yaml.safe_dump(flow))
    if start == "//evil":
        load_project(root)  # a network-path reference: http(s) to another host, allowed
        return
    with pytest.raises(ProjectError, match="only http and https URLs"):
        load_project(root)
    flow["start_url"] = "/"
    flow["steps"].insert(0, {"id": "nav", "action": "navigate", "value": start})
    (root / "flows" / "export_report.yaml").write_text(yaml.safe_dump(flow))
    with pytest.raises(ProjectError, match="only http and https URLs"):
        load_project(root)


def test_an_importer_refuses_a_file_url(tmp_path: Path) -> None:
    root = project(tmp_path)
    side = tmp_path / "t.side"
    for url, target in (("file:///etc", "/passwd"), ("http://127.0.0.1:9", "file:///etc/passwd"),
                        ("http://127.0.0.1:9", "javascript:alert(1)")):
        side.write_text(json.dumps({"url": url, "tests": [{"name": "peek", "commands": [
            {"command": "open", "target": "/", "value": ""}, {"command": "open", "target": target, "value": ""}]}]}))
        res = cli("import-side", str(side), "--project", str(root))
        assert res.returncode == 2, res.stdout + res.stderr
        assert "only http and https URLs" in res.stderr and "Traceback" not in res.stderr
        assert not list((root / "flows").glob("peek*.yaml"))
    script = tmp_path / "codegen.py"
    script.write_text("def run(page):\n    page.goto('http://127.0.0.1:9/')\n    page.goto('file:///etc/passwd')\n")
    res = cli("import-codegen", str(script), "--project", str(root), "--flow", "peek")
    assert res.returncode == 2, res.stdout + res.stderr
    assert "only http and https URLs" in res.stderr and "Traceback" not in res.stderr
    assert not list((root / "flows").glob("peek*.yaml"))


def test_a_store_linked_out_of_the_project_is_refused(tmp_path: Path) -> None:
    root = project(tmp_path)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (root / ".steadyhand").symlink_to(outside)
    res = cli("run", str(root), "--flow", "export_report", "--headless")
    assert res.returncode == 2, res.stderr
    assert "a symbolic link leads out of the project" in res.stderr and "Traceback" not in res.stderr
    assert list(outside.iterdir()) == []
    (root / ".steadyhand").unlink()
    (root / ".steadyhand").mkdir()
    (root / ".steadyhand" / "store.sqlite").symlink_to(outside / "store.sqlite")
    res = cli("run", str(root), "--flow", "export_report", "--headless")
    assert res.returncode == 2 and "store.sqlite: a symbolic link leads out" in res.stderr
    assert list(outside.iterdir()) == []


def test_crops_linked_out_of_the_project_are_refused(tmp_path: Path) -> None:
    from core.domain import Action, Flow, Step
    from core.record.save import RecordingNotSaved, save_recording

    root = project(tmp_path)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (root / "flows" / "peek.crops").symlink_to(outside)
    flow = Flow(name="peek", start_url="/", steps=(Step(id="s1", action=Action("click"), selector="#a"),))
    with pytest.raises(RecordingNotSaved, match="a symbolic link leads out of the project"):
        save_recording(root, flow, {"s1": b"\x89PNG fake"})
    assert list(outside.iterdir()) == [] and not (root / "flows" / "peek.yaml").exists()
