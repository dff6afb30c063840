"""Guard rails: the import contracts of ``.importlinter`` and the lint rules of ``ruff.toml`` hold.

Both tools run as the commands ``.ci/run`` runs, from the virtual environment of the
interpreter running the tests (the pyproject ``test`` extras install them).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent  # the venv's bin; not resolved (that would leave the venv)
TIMEOUT_S = 120


def _run(tool: str, *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    exe = BIN / tool
    assert exe.is_file(), f"{tool} is not installed next to {sys.executable} (pyproject test extras)"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(cwd), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([str(exe), *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT_S, check=False)


def test_import_contracts_hold() -> None:
    r = _run("lint-imports", "--no-cache")
    assert r.returncode == 0, f"lint-imports failed:\n{r.stdout}\n{r.stderr}"


def test_ruff_check_passes() -> None:
    r = _run("ruff", "check", "--no-cache", "--output-format", "concise", ".")
    assert r.returncode == 0, f"ruff check . failed:\n{r.stdout}\n{r.stderr}"


def test_the_contracts_catch_type_hint_lazy_and_qt_imports(tmp_path: Path) -> None:
    """A copy of the tree with three planted wrong arrows breaks the contracts it should."""
    for name in ("core", "studio"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / ".importlinter", tmp_path / ".importlinter")
    (tmp_path / "core" / "domain" / "_planted.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from core.engine import events\n"
    )
    (tmp_path / "core" / "state" / "_planted.py").write_text(
        "def later():\n"
        "    import PySide6\n"
        "    import sqlalchemy\n"
    )
    r = _run("lint-imports", "--no-cache", cwd=tmp_path)
    out = r.stdout + r.stderr
    assert r.returncode != 0, out
    assert "core.domain._planted -> core.engine.events" in out  # counted although under TYPE_CHECKING
    assert "core.state._planted -> PySide6" in out  # counted although inside a function
    assert "core.state._planted -> sqlalchemy" in out


def test_the_contracts_catch_the_old_kernel_circle(tmp_path: Path) -> None:
    """A copy of the tree where the kernel reaches a feature again and a plugin reaches the executor (the circle
    of issue 20: pipeline -> aware -> executor -> pipeline) breaks both kernel contracts."""
    for name in ("core", "studio"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / ".importlinter", tmp_path / ".importlinter")
    pipeline = tmp_path / "core" / "engine" / "pipeline.py"
    pipeline.write_text(pipeline.read_text(encoding="utf-8") + "\n\ndef _planted():\n"
                        "    from core.engine import aware  # noqa: F401\n", encoding="utf-8")
    aware = tmp_path / "core" / "engine" / "aware.py"
    aware.write_text(aware.read_text(encoding="utf-8") + "\n\nfrom typing import TYPE_CHECKING as _TC\nif _TC:\n"
                     "    from core.engine.executor import FlowExecutor  # noqa: F401\n", encoding="utf-8")
    r = _run("lint-imports", "--no-cache", cwd=tmp_path)
    out = r.stdout + r.stderr
    assert r.returncode != 0, out
    assert "The step kernel knows no feature" in out and "core.engine.pipeline -> core.engine.aware" in out
    assert "Plugins do not reach the executor" in out and "core.engine.aware -> core.engine.executor" in out
