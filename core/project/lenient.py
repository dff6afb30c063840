"""Load a project whose flow files may be broken: the valid flows load, each invalid file is reported.

:func:`core.project.load_project` refuses the whole project when one flow
file is invalid (right for a run from the command line: the batch would be
wrong).  An editor wants the project open with that one flow marked invalid
and its error shown: :func:`load_project_lenient`.  The settings file must
still be valid (without it nothing can run).
"""
from __future__ import annotations

from pathlib import Path

from .loader import FLOWS_DIR, Project, ProjectError, load_flow, load_project, max_steps_problem

__all__ = ["load_project_lenient"]


def load_project_lenient(path: Path | str) -> tuple[Project, dict[str, ProjectError]]:
    """``(project with the valid flows, {flow file path: its error})``.

    Raises
    ------
    ProjectError
        When the folder or its settings file is missing or invalid (a flow
        file's error is returned, not raised).
    """
    root = Path(path).expanduser().resolve()
    empty = load_project_settings_only(root)
    flows = {}
    problems: dict[str, ProjectError] = {}
    flow_dir = root / FLOWS_DIR
    for fp in sorted(flow_dir.glob("*.yaml")) if flow_dir.is_dir() else []:
        try:
            flow = load_flow(fp)
            if flow.name in flows:
                raise ProjectError(fp, f"flow name {flow.name!r} is already used by another file",
                                   location="field 'name'")
            too_long = max_steps_problem(flow, empty.settings.max_steps)
            if too_long:
                raise ProjectError(fp, too_long, location="field 'steps'")
        except ProjectError as exc:
            problems[str(fp)] = exc
            continue
        except Exception as exc:  # noqa: BLE001 - any unreadable file is one flow's problem, not the project's
            problems[str(fp)] = ProjectError(fp, f"{type(exc).__name__}: {exc}")
            continue
        flows[flow.name] = flow
    return Project(root=root, settings=empty.settings, flows=flows), problems


def load_project_settings_only(root: Path) -> Project:
    """The project's settings through :func:`load_project`, flows left out (an empty ``flows`` folder view)."""
    import tempfile  # noqa: PLC0415
    import shutil  # noqa: PLC0415

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
