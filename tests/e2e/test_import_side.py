"""A Selenium IDE project (.side, in the file format Selenium IDE writes) imported and replayed in real
Chromium against pages served on loopback: every supported command becomes a step, every other one a note;
the first run fills the descriptors in; on a later release whose ids changed, the targets list's hints find
the renamed button and the heal is proposed, never written."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from secrets_audit import planted

from core.project import load_flow
from core.sites.server import StaticSite

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures" / "side"

pytestmark = pytest.mark.browser


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    extra = env if env is not None else {"STEADYHAND_SECRET_PASSWORD": "hunter" + "22"}
    env = {k: v for k, v in os.environ.items() if not k.startswith("STEADYHAND_")} | extra
    return subprocess.run([sys.executable, "-m", "core.cli", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def project(root: Path, base_url: str) -> Path:
    root.mkdir()
    (root / "flows").mkdir()
    (root / "steadyhand.yaml").write_text(yaml.safe_dump({
        "schema_version": 1, "name": "Chamber", "base_url": base_url,
        "secrets": {"password": {"description": "member password"}}}))
    return root


@pytest.fixture(scope="module")
def sites():
    v1, v2 = StaticSite(FIXTURES / "v1"), StaticSite(FIXTURES / "v2")
    v1.start()
    v2.start()
    yield v1, v2
    v1.stop()
    v2.stop()


def test_imported_tests_replay_green_and_fill_their_descriptors_in(sites, tmp_path: Path) -> None:
    root = project(tmp_path / "chamber", sites[0].base_url)
    imp = cli("import-side", str(FIXTURES / "chamber.side"), "--project", str(root))
    assert imp.returncode == 0, imp.stdout + imp.stderr
    assert "imported 10 steps into flows/join_the_chamber.yaml" in imp.stdout
    assert "imported 6 steps into flows/directory_views.yaml" in imp.stdout
    for unsupported in ("(assertTitle): not supported: the action space has no title assertion",
                        "(executeScript): not supported: a flow never runs a script",
                        "(storeText): variables are built at run time", "(pause): dropped"):
        assert unsupported in imp.stdout
    assert "hunter" not in (root / "flows" / "join_the_chamber.yaml").read_text()  # the typed password
    join = load_flow(root / "flows" / "join_the_chamber.yaml")
    assert [s.action.kind for s in join.steps] == [
        "assert", "assert", "click", "input", "input", "input", "select", "check", "click", "assert"]
    assert join.steps[5].action.value == "{password}" and join.secrets == ("password",)
    assert join.steps[3].target.imported and join.steps[3].target.name_attr == "fname"

    run = cli("run", str(root), "--headless", "--param", "surname=Lovelace")
    assert run.returncode == 0, run.stdout + run.stderr
    for name in ("join_the_chamber", "directory_views"):
        flow = load_flow(root / "flows" / f"{name}.yaml")
        clicks = [s for s in flow.steps if s.action.kind != "assert"]
        assert clicks and all(not s.target.imported and s.target.role for s in clicks), name
    button = load_flow(root / "flows" / "directory_views.yaml").steps[3].target
    assert (button.role, button.name, button.id) == ("button", "GRID", "directory-grid")


def test_on_a_release_with_renamed_ids_the_hints_find_the_button_and_the_heal_is_proposed(sites, tmp_path) -> None:
    root = project(tmp_path / "chamber", sites[1].base_url)
    assert cli("import-side", str(FIXTURES / "chamber.side"), "--project", str(root),
               "--test", "Directory views").returncode == 0
    before = (root / "flows" / "directory_views.yaml").read_text()
    run = cli("run", str(root), "--headless")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "heal proposed" in run.stderr, run.stderr
    after = load_flow(root / "flows" / "directory_views.yaml")
    # the healed steps keep their hints until a person accepts the heal; the rest were filled in
    assert after.steps[1].target.imported and after.steps[3].target.imported
    assert not after.steps[0].target.imported
    assert before != (root / "flows" / "directory_views.yaml").read_text()
    heals = cli("heals", "list", str(root))
    assert "directory-list" in heals.stdout or "LIST" in heals.stdout, heals.stdout


def test_a_malformed_side_file_names_the_file_and_the_field(tmp_path: Path) -> None:
    root = project(tmp_path / "p", "http://127.0.0.1:9")
    bad = tmp_path / "bad.side"
    bad.write_text('{"name": "x", "tests": [{"name": "t", "commands": {"command": "open"}}]}')
    r = cli("import-side", str(bad), "--project", str(root))
    assert r.returncode == 2 and "bad.side" in r.stderr and "tests[0].commands" in r.stderr
    assert not any((root / "flows").iterdir())
    shutil.copy(FIXTURES / "chamber.side", tmp_path / "ok.side")
    r = cli("import-side", str(tmp_path / "ok.side"), "--project", str(root), "--test", "nope")
    assert r.returncode == 2 and "no test named 'nope'" in r.stderr and "Join the chamber" in r.stderr


def test_the_clicks_selenium_ide_records_before_typing_are_dropped_and_the_demo_login_replays(tmp_path: Path) -> None:
    """Selenium IDE records ``click id=username`` before ``type id=username``: imported as a click step, the replay
    escalated at step 1 (the click changes nothing but the focus). The importer drops such a click when the very
    next command types into the same target, says so, and keeps the click on Sign in."""
    from core.sites.demo import DEMO_PASSWORD

    root = tmp_path / "demo"
    shutil.copytree(ROOT / "projects" / "demo", root, ignore=shutil.ignore_patterns(".steadyhand"))
    side = tmp_path / "login.side"
    cmds = [("open", "/login", ""), ("click", "id=username", ""), ("type", "id=username", "${user}"),
            ("click", "id=password", ""), ("type", "id=password", DEMO_PASSWORD), ("click", "id=signin", ""),
            ("assertTextPresent", "Leave requests", "")]
    planted(side).write_text(json.dumps({"id": "p", "version": "2.0", "name": "LeaveDesk", "url": "http://127.0.0.1:41234",
                                "tests": [{"id": "t", "name": "Sign in", "commands": [
                                    {"id": str(i), "command": c, "target": t, "value": v,
                                     "targets": [[t, "id"]] if t.startswith("id=") else []}
                                    for i, (c, t, v) in enumerate(cmds)]}]}))
    env = {"STEADYHAND_SECRET_PASSWORD": DEMO_PASSWORD}
    imp = cli("import-side", str(side), "--project", str(root), env=env)
    assert imp.returncode == 0, imp.stdout + imp.stderr
    assert "dropped 2 clicks that only focus a field before typing (commands 2, 4)" in imp.stdout, imp.stdout
    flow = load_flow(root / "flows" / "sign_in.yaml")
    assert [s.action.kind for s in flow.steps] == ["input", "input", "click", "assert"]
    assert flow.steps[1].action.value == "{password}"
    run = cli("run", str(root), "--flow", "sign_in", "--headless", env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    assert re.search(r"sign_in\s+passed\s+4/4", run.stdout), run.stdout
