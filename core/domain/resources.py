"""Where the read-only files that ship with Steadyhand live, in a source tree and in a frozen bundle.

Two kinds of files are read at run time:

* the *resource folders* at the top of the source tree: ``resources/``
  (``sites/`` pages of the demo app, ``prompts/`` templates, ``schemas/``
  JSON schemas, ``benchmarks/`` data) and ``projects/`` (the bundled demo
  projects);
* package data next to a module (``core/perception/page_lib.js``,
  ``core/store/schema/``): found with ``Path(__file__).with_name(...)``,
  which a PyInstaller bundle keeps valid when the spec collects the file at
  the same relative path.

In a PyInstaller bundle (``sys.frozen`` is true) the top of the source tree
is ``sys._MEIPASS`` (the bundle's ``_internal/`` folder of a one-folder
build); ``packaging/steadyhand.spec`` copies the folders there under the
same names.  Every path the code reads from the resource folders goes
through :func:`resource_path` or :func:`bundled_project`, so one place
decides; ``tests/packaging/test_bundle_manifest.py`` checks the spec lists
each of them.
"""
from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["RESOURCE_FOLDERS", "PACKAGE_PREFIX", "is_frozen", "bundle_root", "resource_path", "bundled_project",
           "module_name", "source_tree"]

#: What comes before ``core.`` in this copy's module names: ``""`` in the repository and a frozen bundle,
#: ``"steadyhand."`` in an installed wheel (``packaging/steadyhand_build.py`` moves ``core`` under ``steadyhand``).
PACKAGE_PREFIX = __name__[: -len("core.domain.resources")]

#: The sub-folders of ``resources/`` shipped in the bundle (``packaging/steadyhand.spec``).
RESOURCE_FOLDERS = ("sites", "prompts", "schemas", "benchmarks")


def is_frozen() -> bool:
    """True inside a PyInstaller (or similar) bundle: ``sys.frozen`` is set."""
    return bool(getattr(sys, "frozen", False))


def bundle_root() -> Path:
    """The folder holding ``resources/`` and ``projects/``: an absolute path.

    Frozen: ``sys._MEIPASS`` (PyInstaller's data folder), or the executable's
    folder when a freezer sets no ``_MEIPASS``.  From source: the repository
    root (two folders above this package).
    """
    if is_frozen():
        meipass = getattr(sys, "_MEIPASS", None)
        return Path(meipass).resolve() if meipass else Path(sys.executable).resolve().parent
    return Path(__file__).resolve().parents[2]


def resource_path(*parts: str) -> Path:
    """``resources/<parts...>`` under :func:`bundle_root` (not checked for existence).

    Example: ``resource_path("sites", "demo")`` -> ``<root>/resources/sites/demo``.

    Raises
    ------
    ValueError
        No part given, or a part that is absolute or climbs out (``..``):
        resource names are fixed strings of the code, never user input.
    """
    if not parts:
        raise ValueError("resource_path: give at least the resource folder's name")
    for part in parts:
        if Path(part).is_absolute() or ".." in Path(part).parts:
            raise ValueError(f"resource_path: {part!r} is not a relative path inside resources/")
    return bundle_root() / "resources" / Path(*parts)


def bundled_project(name: str) -> Path:
    """``projects/<name>`` under :func:`bundle_root`: a project that ships with Steadyhand (``"demo"``).

    The folder may be read-only in an installed bundle: copy it before
    running it (a run writes its store into the project's ``.steadyhand/``).

    Raises
    ------
    ValueError
        ``name`` is not a single folder name.
    """
    if not name or Path(name).name != name or name in (".", ".."):
        raise ValueError(f"bundled_project: {name!r} is not a project folder name")
    return bundle_root() / "projects" / name


def module_name(dotted: str) -> str:
    """The importable name of the module the repository calls ``dotted`` (``"core.cli"``, ``"studio.app"``).

    For a name Python imports at run time (``python -m``, ``importlib.import_module``): ``"core.cli"`` in the
    repository, ``"steadyhand.core.cli"`` once installed from the wheel.  The wheel's build refuses such a name
    spelled as a bare literal (``packaging/steadyhand_build.py``).

    Raises
    ------
    ValueError
        ``dotted`` is not under ``core`` or ``studio``.
    """
    if dotted.split(".")[0] not in ("core", "studio"):
        raise ValueError(f"module_name: {dotted!r} is not a module of core or studio")
    return PACKAGE_PREFIX + dotted


def source_tree() -> Path | None:
    """The repository checkout this copy runs from (holds ``pyproject.toml``), or None when installed or frozen.

    A child process started with ``python -m`` from a checkout needs this folder on ``PYTHONPATH``; an
    installed copy is importable already.
    """
    if is_frozen() or PACKAGE_PREFIX:
        return None
    root = Path(__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() else None
