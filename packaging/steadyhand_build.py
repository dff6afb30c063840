"""Steadyhand's build backend (PEP 517 and PEP 660): the installed distribution lives under ``steadyhand``.

The repository keeps its top-level folders ``core/`` and ``studio/`` and their absolute imports
(``from core.engine.step import ...``).  A wheel that installed them under those names would collide with a
user's own ``core`` package, so the *wheel* is a relocated copy:

======================================  =================================================
repository                              wheel (site-packages)
======================================  =================================================
``core/...``                            ``steadyhand/core/...``
``studio/...``                          ``steadyhand/studio/...``
``resources/...``                       ``steadyhand/resources/...``
``projects/demo``, ``projects/miniwob`` ``steadyhand/projects/demo``, ``.../miniwob``
``packaging/icons``                     ``steadyhand/packaging/icons``
(generated)                             ``steadyhand/__init__.py``
======================================  =================================================

Every absolute import of ``core`` or ``studio`` in the copied sources is rewritten at build time
(``from core.x import y`` -> ``from steadyhand.core.x import y``; found with :mod:`ast`, so strings and
comments are left alone).  Module names spelled as strings (``python -m core.cli``, ``import_module``) go
through :func:`core.domain.resources.module_name` in the sources; a literal one left behind stops the build
(:func:`check_dynamic_imports`).  ``core.domain.resources.bundle_root`` finds ``resources/`` and
``projects/`` two folders above itself in both layouts, so package data needs no other change.

The *editable* install (``pip install -e .``, what ``packaging/setup.sh`` does for the repository's own
virtual environment) is the repository as it is: a ``.pth`` file puts the checkout on ``sys.path`` and the
command is ``core.cli:main``; that layout is for working on Steadyhand itself, not for users' environments.

No build requirement (``requires = []`` in ``pyproject.toml``): the backend uses the standard library only,
so a build never reaches the network.  Formats: wheel 1.0 (PEP 427, RECORD with sha256), core metadata 2.1
(PEP 566) read from ``pyproject.toml`` ``[project]`` (PEP 621), sdist (PEP 517: ``NAME-VERSION/`` with
``PKG-INFO``).
"""
from __future__ import annotations

import ast
import base64
import hashlib
import io
import os
import re
import tarfile
import tomllib
import zipfile
from pathlib import Path
from typing import Iterator

__all__ = ["build_wheel", "build_sdist", "build_editable", "get_requires_for_build_wheel",
           "get_requires_for_build_sdist", "get_requires_for_build_editable", "relocate_imports",
           "check_dynamic_imports", "wheel_files", "BuildError", "PACKAGE"]

#: The one top-level import package of the installed distribution.
PACKAGE = "steadyhand"
#: The repository's top-level import packages, installed under :data:`PACKAGE`.
ROOTS = ("core", "studio")
#: Data folders copied next to the packages (repository path -> path under :data:`PACKAGE`).
DATA = ("resources", "projects/demo", "projects/miniwob", "projects/todomvc", "packaging/icons")
#: Names never copied: caches and a project's local run data (``.steadyhand/`` holds stores and screenshots).
_SKIP_DIRS = {"__pycache__", ".steadyhand", ".pytest_cache", ".mypy_cache", ".ruff_cache"}
_SKIP_SUFFIXES = (".pyc", ".pyo", ".swp", "~")
#: The sdist also carries what building a wheel from it needs.
_SDIST_EXTRA = ("pyproject.toml", "README.md", "packaging/steadyhand_build.py")
#: Fixed timestamp of archive members (1980-01-01, the zip format's first), so two builds are byte-identical.
_EPOCH = (1980, 1, 1, 0, 0, 0)


class BuildError(Exception):
    """The tree cannot be built into a wheel that works once installed (the message names file and line)."""


# ---------------------------------------------------------------------------------------------- project data
def _root() -> Path:
    """The source tree: the current folder (a PEP 517 frontend runs the hooks there)."""
    return Path.cwd()


def _project(root: Path) -> dict:
    """``[project]`` of ``root/pyproject.toml``."""
    return tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _dist_name(project: dict) -> str:
    """The distribution name normalised for file names (PEP 427: runs of ``-_.`` become ``_``)."""
    return re.sub(r"[-_.]+", "_", project["name"]).lower()


def _with_extra(req: str, extra: str) -> str:
    """``req`` limited to ``extra`` (a marker the requirement already has is kept, and-ed)."""
    spec, _, marker = req.partition(";")
    if marker.strip():
        return f'{spec.strip()}; ({marker.strip()}) and extra == "{extra}"'
    return f'{spec.strip()}; extra == "{extra}"'


def metadata(root: Path) -> str:
    """Core metadata 2.1 (the wheel's ``METADATA``, the sdist's ``PKG-INFO``) from ``[project]``."""
    p = _project(root)
    lines = ["Metadata-Version: 2.1", f"Name: {p['name']}", f"Version: {p['version']}"]
    if p.get("description"):
        lines.append(f"Summary: {p['description']}")
    if p.get("requires-python"):
        lines.append(f"Requires-Python: {p['requires-python']}")
    for key, url in (p.get("urls") or {}).items():
        lines.append(f"Project-URL: {key}, {url}")
    for req in p.get("dependencies", []):
        lines.append(f"Requires-Dist: {req}")
    for extra, reqs in (p.get("optional-dependencies") or {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines.extend(f"Requires-Dist: {_with_extra(r, extra)}" for r in reqs)
    body = ""
    readme = p.get("readme")
    if isinstance(readme, str) and (root / readme).is_file():
        lines.append("Description-Content-Type: text/markdown" if readme.endswith(".md") else
                     "Description-Content-Type: text/plain")
        body = (root / readme).read_text(encoding="utf-8")
    return "\n".join(lines) + "\n\n" + body


def _entry_points(root: Path, relocated: bool) -> str:
    """``entry_points.txt``: each ``[project.scripts]`` target, under :data:`PACKAGE` when ``relocated``."""
    scripts = _project(root).get("scripts") or {}
    out = ["[console_scripts]"]
    for name, target in scripts.items():
        top = target.split(".", 1)[0].split(":", 1)[0]
        out.append(f"{name} = {PACKAGE}.{target}" if relocated and top in ROOTS else f"{name} = {target}")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------- import relocation
def relocate_imports(source: str, filename: str = "<source>", package: str = PACKAGE) -> str:
    """``source`` with every absolute import of a :data:`ROOTS` package moved under ``package``.

    ``from core.x import y`` -> ``from steadyhand.core.x import y``; ``import core.x as z`` ->
    ``import steadyhand.core.x as z``.  Relative imports, strings and comments are not touched.

    Raises
    ------
    BuildError
        ``import core.x`` without ``as``: it binds the name ``core``, which the relocated copy would not
        have (write ``from core import x`` or ``import core.x as x``).
    """
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as exc:
        raise BuildError(f"{filename}:{exc.lineno}: not valid Python: {exc.msg}") from None
    lines = source.splitlines(keepends=True)
    edits: list[tuple[int, int, int]] = []  # (line index, byte start, byte end) of a module name to prefix
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and node.module.split(".")[0] in ROOTS:
            raw = lines[node.lineno - 1].encode("utf-8")
            m = re.compile(rb"from\s+").match(raw, node.col_offset)
            if m is None or not raw[m.end():].startswith(node.module.split(".")[0].encode()):
                raise BuildError(f"{filename}:{node.lineno}: cannot find the module name of this import "
                                 f"(keep 'from {node.module}' on one line)")
            edits.append((node.lineno - 1, m.end(), m.end()))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] not in ROOTS:
                    continue
                if alias.asname is None:
                    raise BuildError(f"{filename}:{alias.lineno}: 'import {alias.name}' binds the name "
                                     f"{alias.name.split('.')[0]!r}, which the installed copy does not have; "
                                     f"write 'from {alias.name.rpartition('.')[0] or alias.name} import ...' "
                                     f"or 'import {alias.name} as ...'")
                edits.append((alias.lineno - 1, alias.col_offset, alias.col_offset))
    prefix = f"{package}.".encode()
    for index, start, _end in sorted(edits, reverse=True):  # right to left: earlier offsets stay valid
        raw = lines[index].encode("utf-8")
        lines[index] = (raw[:start] + prefix + raw[start:]).decode("utf-8")
    return "".join(lines)


def check_dynamic_imports(source: str, filename: str = "<source>") -> None:
    """Refuse a module of :data:`ROOTS` named by a literal string where Python imports it at run time.

    Looked for: the first argument of ``import_module``, ``find_spec`` and ``run_module``, and the item after
    ``"-m"`` in a list or tuple (a command line).  Such a name is right in the repository and wrong once
    installed; the sources spell it ``module_name("core.cli")`` (:mod:`core.domain.resources`).

    Raises
    ------
    BuildError
        Naming every offending file and line.
    """
    tree = ast.parse(source, filename=filename)
    bad: list[str] = []

    def literal_module(node: ast.AST) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and node.value.split(".")[0] in ROOTS and re.fullmatch(r"[\w.]+", node.value):
            return node.value
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else ""
            if name in ("import_module", "find_spec", "run_module") and literal_module(node.args[0]):
                bad.append(f"{filename}:{node.lineno}: {name}({node.args[0].value!r})")  # type: ignore[attr-defined]
        elif isinstance(node, (ast.List, ast.Tuple)):
            for a, b in zip(node.elts, node.elts[1:], strict=False):
                if isinstance(a, ast.Constant) and a.value == "-m" and literal_module(b):
                    bad.append(f"{filename}:{node.lineno}: '-m {b.value}'")  # type: ignore[attr-defined]
    if bad:
        raise BuildError("module names that break once installed (use core.domain.resources.module_name): "
                         + "; ".join(bad))


# ------------------------------------------------------------------------------------------------ file lists
def _walk(root: Path, rel: str) -> Iterator[str]:
    """Files under ``root/rel`` (POSIX paths relative to ``root``), sorted, without caches and run data."""
    base = root / rel
    if base.is_file():
        yield rel
        return
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for f in sorted(filenames):
            if not f.endswith(_SKIP_SUFFIXES):
                yield Path(dirpath, f).relative_to(root).as_posix()


def wheel_files(root: Path) -> Iterator[tuple[str, bytes]]:
    """``(path in the wheel, content)`` of every file of the relocated distribution (no ``.dist-info``).

    Raises
    ------
    BuildError
        A source file that cannot be relocated (:func:`relocate_imports`, :func:`check_dynamic_imports`).
    """
    version = _project(root)["version"]
    yield f"{PACKAGE}/__init__.py", (
        f'"""Steadyhand, installed: the engine is ``{PACKAGE}.core``, the studio ``{PACKAGE}.studio``, the '
        f'command ``steadyhand``."""\n__version__ = "{version}"\n').encode()
    for top in ROOTS:
        for rel in _walk(root, top):
            data = (root / rel).read_bytes()
            if rel.endswith(".py"):
                text = data.decode("utf-8")
                check_dynamic_imports(text, rel)
                data = relocate_imports(text, rel).encode("utf-8")
            yield f"{PACKAGE}/{rel}", data
    for folder in DATA:
        if not (root / folder).exists():
            raise BuildError(f"{folder}: missing from the source tree (it is package data of the wheel)")
        for rel in _walk(root, folder):
            yield f"{PACKAGE}/{rel}", (root / rel).read_bytes()


# ----------------------------------------------------------------------------------------------- archives
def _hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _write_wheel(directory: str, root: Path, files: Iterator[tuple[str, bytes]], relocated: bool) -> str:
    """Write ``NAME-VERSION-py3-none-any.whl`` holding ``files`` and its ``.dist-info``; return its file name."""
    project = _project(root)
    name, version = _dist_name(project), project["version"]
    info = f"{name}-{version}.dist-info"
    filename = f"{name}-{version}-py3-none-any.whl"
    record: list[str] = []
    with zipfile.ZipFile(Path(directory) / filename, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        def add(path: str, data: bytes) -> None:
            zi = zipfile.ZipInfo(path, date_time=_EPOCH)
            zi.external_attr = 0o644 << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(zi, data)
            record.append(f"{path},{_hash(data)},{len(data)}")

        for path, data in files:
            add(path, data)
        add(f"{info}/METADATA", metadata(root).encode("utf-8"))
        add(f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: steadyhand_build\nRoot-Is-Purelib: true\n"
                             b"Tag: py3-none-any\n")
        add(f"{info}/entry_points.txt", _entry_points(root, relocated).encode())
        add(f"{info}/top_level.txt", (f"{PACKAGE}\n" if relocated else "".join(f"{t}\n" for t in ROOTS)).encode())
        record.append(f"{info}/RECORD,,")
        zi = zipfile.ZipInfo(f"{info}/RECORD", date_time=_EPOCH)
        zi.external_attr = 0o644 << 16
        zf.writestr(zi, "\n".join(record) + "\n")
    return filename


# ------------------------------------------------------------------------------------------ PEP 517 / 660
def get_requires_for_build_wheel(config_settings: dict | None = None) -> list[str]:
    """Nothing: the backend is the standard library."""
    return []


get_requires_for_build_sdist = get_requires_for_build_wheel
get_requires_for_build_editable = get_requires_for_build_wheel


def build_wheel(wheel_directory: str, config_settings: dict | None = None,
                metadata_directory: str | None = None) -> str:
    """The relocated wheel (see the module's table) in ``wheel_directory``; returns its file name.

    Raises
    ------
    BuildError
        A source that cannot be relocated, or a data folder missing.
    """
    root = _root()
    return _write_wheel(wheel_directory, root, wheel_files(root), relocated=True)


def build_editable(wheel_directory: str, config_settings: dict | None = None,
                   metadata_directory: str | None = None) -> str:
    """An editable wheel of the checkout as it is: a ``.pth`` with the source tree's path; command ``core.cli``."""
    root = _root()
    pth = (f"__editable__.{_dist_name(_project(root))}.pth", (str(root.resolve()) + "\n").encode())
    return _write_wheel(wheel_directory, root, iter([pth]), relocated=False)


def build_sdist(sdist_directory: str, config_settings: dict | None = None) -> str:
    """``NAME-VERSION.tar.gz``: the sources a wheel is built from (the repository layout) and ``PKG-INFO``."""
    root = _root()
    project = _project(root)
    base = f"{_dist_name(project)}-{project['version']}"
    filename = f"{base}.tar.gz"

    def add(tf: tarfile.TarFile, rel: str, data: bytes) -> None:
        ti = tarfile.TarInfo(f"{base}/{rel}")
        ti.size, ti.mode, ti.mtime = len(data), 0o644, 315532800  # 1980-01-01, as the wheel's members
        tf.addfile(ti, io.BytesIO(data))

    with tarfile.open(Path(sdist_directory) / filename, "w:gz", format=tarfile.PAX_FORMAT) as tf:
        add(tf, "PKG-INFO", metadata(root).encode("utf-8"))
        for rel in _SDIST_EXTRA:
            add(tf, rel, (root / rel).read_bytes())
        for folder in (*ROOTS, *DATA):
            for rel in _walk(root, folder):
                add(tf, rel, (root / rel).read_bytes())
    return filename
