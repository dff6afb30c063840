"""core.domain.resources finds resources/ and projects/ from source and inside a frozen bundle."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from core.domain import resources
from core.domain.resources import bundle_root, bundled_project, is_frozen, resource_path

ROOT = Path(__file__).resolve().parents[2]


def test_from_source_the_root_is_the_repository() -> None:
    assert not is_frozen()
    assert bundle_root() == ROOT
    assert (resource_path("prompts") / "explore.v1.md").is_file()
    assert (bundled_project("demo") / "steadyhand.yaml").is_file()


def test_frozen_the_root_is_meipass(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    assert is_frozen()
    assert bundle_root() == tmp_path.resolve()
    assert resource_path("sites", "demo") == tmp_path.resolve() / "resources" / "sites" / "demo"
    assert bundled_project("demo") == tmp_path.resolve() / "projects" / "demo"


def test_frozen_without_meipass_the_root_is_the_executables_folder(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.delattr(sys, "_MEIPASS", raising=False)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "steadyhand"))
    assert bundle_root() == tmp_path.resolve()


def test_names_that_climb_out_are_refused() -> None:
    for bad in (("..", "x"), ("/etc",), ()):
        with pytest.raises(ValueError, match="resource_path"):
            resource_path(*bad)
    for bad in ("../demo", "a/b", "", ".."):
        with pytest.raises(ValueError, match="bundled_project"):
            bundled_project(bad)
    assert resources.RESOURCE_FOLDERS == ("sites", "prompts", "schemas", "benchmarks")


def test_the_engine_reads_its_resources_from_the_bundle_when_frozen(tmp_path: Path) -> None:
    """A fresh interpreter with sys.frozen/_MEIPASS set: the demo site, the prompts and the studio's project
    come from the bundle folder (a copy), not from the source tree."""
    meipass = tmp_path / "_internal"
    shutil.copytree(ROOT / "resources" / "prompts", meipass / "resources" / "prompts")
    shutil.copytree(ROOT / "resources" / "sites", meipass / "resources" / "sites")
    code = (
        "import sys; sys.frozen = True; sys._MEIPASS = sys.argv[1]\n"
        "from core.sites.demo import DEMO_ROOT\n"
        "from core.plan.prompts import PROMPTS_DIR, load_prompt\n"
        "print(DEMO_ROOT); print(PROMPTS_DIR); print(load_prompt('explore', 1).path)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    res = subprocess.run([sys.executable, "-c", code, str(meipass)], capture_output=True, text=True, env=env,
                         timeout=60, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    demo, prompts, explore = res.stdout.split()
    assert Path(demo) == meipass.resolve() / "resources" / "sites" / "demo"
    assert Path(prompts) == meipass.resolve() / "resources" / "prompts"
    assert Path(explore).is_relative_to(meipass.resolve())


def test_the_entry_script_runs_only_steadyhands_own_modules() -> None:
    """Frozen, sys.executable is the bundle: ``-m core.cli`` (the recorder's child) must still work."""
    script = ROOT / "packaging" / "steadyhand_main.py"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    ok = subprocess.run([sys.executable, str(script), "-m", "core.cli", "--version"], capture_output=True,
                        text=True, env=env, timeout=60)
    assert ok.returncode == 0 and ok.stdout.startswith("steadyhand ")
    refused = subprocess.run([sys.executable, str(script), "-m", "http.server"], capture_output=True, text=True,
                             env=env, timeout=60)
    assert refused.returncode == 2 and "only modules of core, studio" in refused.stderr
    direct = subprocess.run([sys.executable, str(script), "--version"], capture_output=True, text=True, env=env,
                            timeout=60)
    assert direct.returncode == 0 and direct.stdout == ok.stdout
