"""Load a project whose flow files may be broken: the valid flows load, each invalid file is reported.

A thin form of :func:`core.project.load_project` with ``skip_invalid=True``
(what the studio and every command on a project use): the project opens
with the valid flows, and each invalid file is listed with its error.  The
settings file must still be valid (without it nothing can run).
"""
from __future__ import annotations

from pathlib import Path

from .loader import Project, ProjectError, load_project

__all__ = ["load_project_lenient"]


def load_project_lenient(path: Path | str) -> tuple[Project, dict[str, ProjectError]]:
    """``(project with the valid flows, {flow file path: its error})``.

    Raises
    ------
    ProjectError
        When the folder or its settings file is missing or invalid (a flow
        file's error is returned, not raised).
    """
    project = load_project(path, skip_invalid=True)
    return project, dict(project.invalid)


def load_project_settings_only(root: Path) -> Project:
    """The project's settings through :func:`load_project`, flows left out (an empty ``flows`` folder view)."""
    import shutil  # noqa: PLC0415
    import tempfile  # noqa: PLC0415

    settings = root / "steadyhand.yaml"
    if not root.is_dir():
        raise ProjectError(root, "project folder not found")
    with tempfile.TemporaryDirectory(prefix="steadyhand-settings-") as tmp:
        if settings.is_file():
            shutil.copyfile(settings, Path(tmp) / "steadyhand.yaml")
        try:
            project = load_project(tmp)
        except ProjectError as exc:
            raise ProjectError(settings, exc.detail, location=exc.location) from None
    return Project(root=root, settings=project.settings, flows={})
