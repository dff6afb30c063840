"""``steadyhand --version`` prints the installed version, the same one pyproject.toml declares."""
from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_version_is_the_declared_one() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    r = subprocess.run([sys.executable, "-m", "core.cli", "--version"], cwd=ROOT, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == f"steadyhand {declared}"
