"""A base URL from the environment (STEADYHAND_BASE_URL, which an exported plain script asks for) left exported
does not break ``steadyhand run`` of a project on its bundled site: it is ignored there with one note on stderr.
The same URL given as ``--base-url`` on the command line is refused with a plain reason (exit 2)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OTHER = "http://127.0.0.1:9/app/"  # never reached: a bundled site runs on its own port

pytestmark = pytest.mark.browser


def cli(*args: str, **extra: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STEADYHAND_")} | extra
    return subprocess.run([sys.executable, "-m", "core.cli", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


@pytest.fixture()
def demo(tmp_path: Path) -> Path:
    project = tmp_path / "demo"
    shutil.copytree(ROOT / "projects" / "demo", project, ignore=shutil.ignore_patterns(".steadyhand"))
    return project


def test_an_exported_base_url_is_ignored_for_the_bundled_site(demo: Path) -> None:
    run = cli("run", str(demo), "--flow", "leave_request", "--headless", "--no-store", STEADYHAND_BASE_URL=OTHER)
    assert run.returncode == 0, run.stdout + run.stderr
    notes = [line for line in run.stderr.splitlines() if OTHER in line]
    assert notes == [f"steadyhand: this project runs its bundled demo site; the base URL {OTHER} from "
                     "STEADYHAND_BASE_URL is ignored"], run.stderr
    assert "another base URL" not in run.stderr


def test_a_base_url_on_the_command_line_is_refused_plainly(demo: Path) -> None:
    run = cli("run", str(demo), "--flow", "leave_request", "--headless", "--no-store", "--base-url", OTHER)
    assert run.returncode == 2, run.stdout + run.stderr
    assert ("this project runs its bundled demo site; --base-url applies only to projects with a base_url"
            in run.stderr), run.stderr
    assert "Traceback" not in run.stderr
