"""Paths a project's files name, kept inside the project: flow names, upload files and crops.

A flow name becomes a file (``flows/<name>.yaml``, ``flows/<name>.crops/``),
so it is a file stem (:data:`FLOW_NAME`); an upload step's file and a
target's crop are paths relative to the flow file's folder.  None of them
may leave the project folder, neither by ``..``, by an absolute path nor by
a symbolic link (paths are compared after resolving links).  Every refusal
is a :class:`~core.project.loader.ProjectError` naming the file and the field.
"""
from __future__ import annotations

import re
from pathlib import Path

from .loader import FLOWS_DIR, ProjectError
from .params import ParameterError

__all__ = ["FLOW_NAME", "valid_flow_name", "flow_file", "inside", "check_flow_paths", "upload_path"]

#: A flow name is a file stem: letters, digits, ``_`` and ``-``; it starts with a letter or digit; 80 chars at most.
FLOW_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,79}$")


def valid_flow_name(name: object) -> bool:
    """True when ``name`` can be a flow's file stem (:data:`FLOW_NAME`)."""
    return isinstance(name, str) and bool(FLOW_NAME.match(name))


def inside(root: Path, path: Path) -> bool:
    """True when ``path``, its symbolic links resolved, is ``root`` or under it (``root`` resolved too)."""
    try:
        Path(path).resolve().relative_to(Path(root).resolve())
        return True
    except (ValueError, OSError, RuntimeError):  # RuntimeError: a symlink loop
        return False


def flow_file(root: Path | str, name: str, *, option: str = "--flow") -> Path:
    """``<root>/flows/<name>.yaml`` for a flow to be written, after checking that it stays in the project.

    Raises
    ------
    ProjectError
        ``name`` is not a file stem (``../x``, ``a/b``, empty, too long), or the flows folder or the file is a
        symbolic link that leads out of the project (``option`` names the source of the name in the message).
    """
    root = Path(root)
    if not valid_flow_name(name):
        raise ProjectError(root / FLOWS_DIR, f"{option} {name!r}: a flow name is a file stem (letters, digits, '_' "
                                             "and '-', at most 80 characters); refused", location=option)
    path = root / FLOWS_DIR / f"{name}.yaml"
    if not inside(root, path.parent) or (path.is_symlink() and not inside(root, path)):
        raise ProjectError(path, "a symbolic link leads out of the project; refused", location=option)
    return path


def check_flow_paths(flow_path: Path, uploads: dict[str, str], crops: dict[str, str]) -> None:
    """Refuse upload files and crops of a flow file that leave its project.

    ``uploads`` and ``crops`` map a location (``"step 's3' (#3), field 'value'"``) to the path given there,
    relative to the flow file's folder.  The project is the folder above ``flows/`` (for a flow file elsewhere:
    the flow file's own folder).

    Raises
    ------
    ProjectError
        Naming the flow file and the location of the first path that is absolute, climbs out with ``..`` or
        follows a symbolic link out of the project.
    """
    base, root = _project_of(Path(flow_path))
    for what, paths in (("upload file", uploads), ("crop", crops)):
        for where, value in paths.items():
            if not value:
                continue
            if Path(value).is_absolute() or not inside(root, base / value):
                raise ProjectError(flow_path, f"{what} {value!r} leaves the project folder (a path relative to "
                                              "the flow file, inside the project, is expected); refused",
                                   location=where)


def _project_of(flow_source: Path) -> tuple[Path, Path]:
    base = Path(flow_source).parent
    return base, (base.parent if base.name == FLOWS_DIR else base)


def upload_path(flow_source: str, value: str, *, where: str = "") -> str:
    """The file an upload step sends, its parameters bound: ``value`` relative to the flow file's folder.

    Raises
    ------
    ParameterError
        The file is absolute or lies (after resolving symbolic links) outside the project folder: the run stops
        before the step, nothing is sent (``where`` names the step).
    """
    base, root = _project_of(Path(flow_source))
    path = Path(value) if Path(value).is_absolute() else base / value
    if not inside(root, path):
        raise ParameterError(f"{where}: upload file {value!r} is outside the project folder {root}; refused (a "
                             "step uploads only files of its project)")
    return str(path)
