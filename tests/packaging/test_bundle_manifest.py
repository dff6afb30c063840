"""The PyInstaller spec ships every resource the code reads at run time (packaging/steadyhand.spec).

The code is scanned (AST) for the three ways it reaches read-only files:
``resource_path("folder", ...)`` and ``bundled_project("name")`` of
:mod:`core.domain.resources`, and package data next to a module
(``Path(__file__).with_name("file")``).  Each must be in the spec's ``DATAS``
list at the same relative path.  A path built by hand from ``Path(__file__)``
above its package, or joined to a ``"resources"``/``"projects"`` literal,
bypasses the frozen-aware helper and fails the scan.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from core.domain.resources import RESOURCE_FOLDERS

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "packaging" / "steadyhand.spec"
SOURCES = ("core", "studio")
#: The frozen-aware helper itself: the one place that builds these paths.
HELPER = "core/domain/resources.py"

#: Paths built from Path(__file__) above a package, kept on purpose (file -> why it is not a bundled resource).
ALLOWED_CLIMBS = {
    "core/cli.py": "bench studio's child process runs in the source tree; --version falls back to pyproject.toml "
                   "when no distribution metadata exists (the bundle carries the metadata)",
    "core/bench/drift_record.py": "records datasette flows in a source checkout (needs a datasette install)",
    "core/bench/drift_app_env.py": "bench drift --app runs in a source checkout: its app servers (drift_servers/) run "
                                   "in each app's own virtual environment, and the cache must lie outside the checkout",
}
#: Calls of the helpers whose argument is not a literal (file -> what it names and why that is shipped or not).
DYNAMIC_CALLS = {
    "core/bench/ab.py": "bench ab: projects 'demo' (shipped) and 'miniwob' (needs the MiniWoB++ package: "
                        "a development benchmark, not bundled; it fails with a clear message)",
}


@dataclass
class Uses:
    """What a source tree reads: resource folders, bundled projects, package data; and the violations."""

    resources: set[str] = field(default_factory=set)        # "resources/prompts"
    projects: set[str] = field(default_factory=set)         # "projects/demo"
    package_data: set[str] = field(default_factory=set)     # "core/perception/page_lib.js"
    climbs: set[str] = field(default_factory=set)           # files building paths above their package
    literal_joins: list[str] = field(default_factory=list)  # "file:line" joining "resources"/"projects"
    dynamic: set[str] = field(default_factory=set)          # files calling a helper with a non-literal


def _is_path_file(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Path"
            and len(node.args) == 1 and isinstance(node.args[0], ast.Name) and node.args[0].id == "__file__")


def _under_main_guard(tree: ast.Module) -> set[int]:
    """Line numbers inside ``if __name__ == "__main__":`` blocks (developer tools, not run in a bundle)."""
    lines: set[int] = set()
    for node in tree.body:
        if (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
                and isinstance(node.test.left, ast.Name) and node.test.left.id == "__name__"):
            for sub in ast.walk(node):
                if hasattr(sub, "lineno"):
                    lines.add(sub.lineno)
    return lines


def scan_source(text: str, rel: str, uses: Uses) -> None:
    """Add what the module at ``rel`` (repository-relative, ``/``-separated) reads to ``uses``."""
    tree = ast.parse(text, filename=rel)
    guarded = _under_main_guard(tree)
    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    folder = rel.rsplit("/", 1)[0]
    for node in ast.walk(tree):
        if getattr(node, "lineno", 0) in guarded:
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in (
                "resource_path", "bundled_project"):
            if not node.args or not all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args):
                uses.dynamic.add(rel)
            elif node.func.id == "resource_path":
                uses.resources.add(f"resources/{node.args[0].value}")
            else:
                uses.projects.add(f"projects/{node.args[0].value}")
        elif _is_path_file(node):
            up = parents.get(node)
            if isinstance(up, ast.Attribute) and up.attr == "resolve":  # Path(__file__).resolve()
                call = parents.get(up)
                up = parents.get(call) if isinstance(call, ast.Call) else None
            if isinstance(up, ast.Attribute) and up.attr == "with_name":
                call = parents.get(up)
                if isinstance(call, ast.Call) and call.args and isinstance(call.args[0], ast.Constant):
                    uses.package_data.add(f"{folder}/{call.args[0].value}")
            elif isinstance(up, ast.Attribute) and up.attr in ("parents", "parent"):
                grand = parents.get(up)
                if up.attr == "parents" or (isinstance(grand, ast.Attribute) and grand.attr == "parent"):
                    uses.climbs.add(rel)
        elif (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and isinstance(node.right, ast.Constant)
              and node.right.value in ("resources", "projects")):
            uses.literal_joins.append(f"{rel}:{node.lineno}")


def scan_tree(root: Path) -> Uses:
    """Scan every module of :data:`SOURCES` under ``root``."""
    uses = Uses()
    for pkg in SOURCES:
        for path in sorted((root / pkg).rglob("*.py")):
            if path.relative_to(root).as_posix() == HELPER:
                continue
            scan_source(path.read_text(encoding="utf-8"), path.relative_to(root).as_posix(), uses)
    return uses


def spec_datas(spec_text: str) -> list[tuple[str, str]]:
    """The spec's ``DATAS = [(source, destination), ...]`` literal."""
    for node in ast.parse(spec_text).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "DATAS" for t in node.targets):
            return [tuple(pair) for pair in ast.literal_eval(node.value)]
    raise AssertionError(f"{SPEC}: no DATAS list")


def shipped(datas: list[tuple[str, str]], rel: str) -> bool:
    """True when ``rel`` (a file or folder) is copied to the same relative path in the bundle."""
    for src, dest in datas:
        if (ROOT / src).is_file():
            if rel == src and f"{dest}/{Path(src).name}" == rel:
                return True
        elif (rel == src or rel.startswith(src + "/")) and f"{dest}{rel[len(src):]}" == rel:
            return True
    return False


@pytest.fixture(scope="module")
def uses() -> Uses:
    return scan_tree(ROOT)


@pytest.fixture(scope="module")
def datas() -> list[tuple[str, str]]:
    return spec_datas(SPEC.read_text(encoding="utf-8"))


def test_the_scan_finds_what_the_engine_reads(uses: Uses) -> None:
    assert {"resources/sites", "resources/prompts"} <= uses.resources
    assert "projects/demo" in uses.projects
    assert {"core/perception/page_lib.js", "core/record/recorder_lib.js", "core/store/schema"} <= uses.package_data


def test_every_resource_the_code_reads_is_in_the_spec(uses: Uses, datas: list[tuple[str, str]]) -> None:
    needed = uses.resources | uses.projects | uses.package_data | {f"resources/{f}" for f in RESOURCE_FOLDERS}
    missing = sorted(r for r in needed if not shipped(datas, r))
    assert not missing, f"{SPEC.name}: DATAS does not ship {missing}"


def test_every_spec_entry_exists(datas: list[tuple[str, str]]) -> None:
    assert [src for src, _ in datas if not (ROOT / src).exists()] == []


def test_no_path_bypasses_the_frozen_aware_helper(uses: Uses) -> None:
    assert uses.literal_joins == [], "join resources/ and projects/ with core.domain.resources, not by hand"
    assert sorted(uses.climbs - set(ALLOWED_CLIMBS)) == [], "use core.domain.resources.bundle_root()"
    assert sorted(uses.dynamic - set(DYNAMIC_CALLS)) == []
    # an allowance that no longer matches code is removed, not kept
    assert sorted(set(ALLOWED_CLIMBS) - uses.climbs) == []
    assert sorted(set(DYNAMIC_CALLS) - uses.dynamic) == []


def test_the_scan_catches_a_missing_or_hand_built_path() -> None:
    u = Uses()
    scan_source('from pathlib import Path\nfrom core.domain.resources import resource_path\n'
                'A = resource_path("fonts", "x.ttf")\n'
                'B = Path(__file__).with_name("lib.js").read_text()\n'
                'C = Path(__file__).resolve().parents[2] / "resources" / "sites"\n'
                'D = resource_path(name)\n'
                'if __name__ == "__main__":\n    E = Path(__file__).parents[1] / "projects"\n',
                "core/x/mod.py", u)
    assert u.resources == {"resources/fonts"}
    assert u.package_data == {"core/x/lib.js"}
    assert u.climbs == {"core/x/mod.py"} and u.literal_joins == ["core/x/mod.py:5"]
    assert u.dynamic == {"core/x/mod.py"}
    datas = [("resources/sites", "resources/sites"), ("core/perception/page_lib.js", "core/perception")]
    assert not shipped(datas, "resources/fonts")
    assert shipped(datas, "resources/sites/demo") and shipped(datas, "core/perception/page_lib.js")
    assert not shipped([("resources/sites", "sites")], "resources/sites")  # copied, but to the wrong place


def test_the_spec_bundles_the_playwright_driver_and_qt_platforms_through_their_hooks() -> None:
    """Playwright's own PyInstaller hook collects its driver; the build script checks node, xcb and offscreen."""
    import playwright

    hooks = Path(playwright.__file__).parent / "_impl" / "__pyinstaller"
    assert (hooks / "hook-playwright.sync_api.py").is_file()
    script = (ROOT / "packaging" / "build_bundle.sh").read_text(encoding="utf-8")
    for needed in ("playwright/driver/node", "platforms/libqxcb.so", "platforms/libqoffscreen.so",
                   "ms-playwright", "packaging/steadyhand.spec"):
        assert needed in script, needed
