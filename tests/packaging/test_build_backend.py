"""The wheel's build backend (packaging/steadyhand_build.py): import relocation and its refusals (pure)."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "packaging"))
import steadyhand_build as sb  # noqa: E402


def test_absolute_imports_of_core_and_studio_move_under_steadyhand() -> None:
    src = ("from __future__ import annotations\nimport os, core.cli as cli\nfrom core.engine.step import (\n"
           "    RunState,\n)\nfrom studio import app\nfrom . import sibling\nfrom ..domain import Flow\n"
           "from corex import y\nimport studio.views.x as v  # from core.x import z in a comment\n"
           "if True:\n    from core import domain\ns = 'from core.x import y'\n")
    out = sb.relocate_imports(src)
    assert out == src.replace("import os, core.cli", "import os, steadyhand.core.cli") \
        .replace("from core.engine.step", "from steadyhand.core.engine.step") \
        .replace("from studio import app", "from steadyhand.studio import app") \
        .replace("import studio.views.x", "import steadyhand.studio.views.x") \
        .replace("    from core import domain", "    from steadyhand.core import domain")
    ast.parse(out)


def test_an_import_that_binds_core_itself_is_refused() -> None:
    with pytest.raises(sb.BuildError, match="binds the name 'core'"):
        sb.relocate_imports("import core.engine.step\n", "x.py")


@pytest.mark.parametrize("src", ["importlib.import_module('studio.app')\n", "find_spec('core.heal')\n",
                                 "runpy.run_module('core.cli')\n", "cmd = [sys.executable, '-m', 'core.cli']\n"])
def test_a_module_name_spelled_as_a_literal_is_refused(src: str) -> None:
    with pytest.raises(sb.BuildError, match="module_name"):
        sb.check_dynamic_imports(src, "x.py")


def test_the_repository_sources_relocate_cleanly() -> None:
    files = dict(sb.wheel_files(ROOT))
    assert "steadyhand/__init__.py" in files and "steadyhand/core/cli.py" in files
    for path, data in files.items():
        if path.endswith(".py"):
            tree = ast.parse(data.decode("utf-8"), filename=path)
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    assert node.module.split(".")[0] not in ("core", "studio"), f"{path}:{node.lineno}"


def test_the_sdist_builds_the_same_wheel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tarfile

    monkeypatch.chdir(ROOT)
    name = sb.build_sdist(str(tmp_path))
    with tarfile.open(tmp_path / name) as tf:
        tf.extractall(tmp_path / "x", filter="data")
    unpacked = tmp_path / "x" / name.removesuffix(".tar.gz")
    assert (unpacked / "PKG-INFO").read_text().startswith("Metadata-Version: 2.1\nName: steadyhand\n")
    assert dict(sb.wheel_files(unpacked)) == dict(sb.wheel_files(ROOT))
