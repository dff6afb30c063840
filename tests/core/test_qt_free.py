"""``core/`` never imports Qt or the studio, and the headless path never loads Qt (see also ``.importlinter``)."""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "core"
FORBIDDEN = ("PySide6", "shiboken6", "studio")


def core_modules() -> list[Path]:
    return sorted(p for p in CORE.rglob("*.py") if "__pycache__" not in p.parts)


def imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, module)`` for every absolute import in a module (nested ones included)."""
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module))
    return out


def is_forbidden(module: str) -> bool:
    return module.split(".")[0] in FORBIDDEN


def test_core_has_modules_to_check() -> None:
    names = {p.relative_to(CORE).as_posix() for p in core_modules()}
    assert {"cli.py", "engine/executor.py", "engine/runner.py", "perception/fake.py"} <= names


def test_the_import_check_recognises_forbidden_imports() -> None:
    tree = ast.parse("import PySide6.QtCore\nfrom studio.app import main\ndef f():\n    from shiboken6 import isValid\n"
                     "from core.domain import Flow\nimport studious\nfrom . import studio\n")
    assert [m for _, m in imported_modules(tree) if is_forbidden(m)] == ["PySide6.QtCore", "studio.app", "shiboken6"]


def test_no_core_module_imports_qt_or_the_studio() -> None:
    offenders = []
    for path in core_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        offenders += [f"{path.relative_to(ROOT)}:{line}: {mod}" for line, mod in imported_modules(tree)
                      if is_forbidden(mod)]
    assert offenders == [], "core/ must not import Qt or the studio:\n" + "\n".join(offenders)


@pytest.mark.parametrize("modules", [
    "core.cli, core.engine.runner",
    "core.engine.executor, core.engine.session, core.perception.driver, core.perception.fake",
])
def test_the_headless_path_does_not_load_qt(modules: str) -> None:
    code = (
        f"import sys, json\nimport {modules}\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'studio'))))"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []
