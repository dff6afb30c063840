"""Saving a recorded flow into a project: the flow file plus its element crops."""
from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Mapping

from core.domain import Flow
from core.project.loader import FLOWS_DIR, ProjectError, flow_text, run_data_dir, save_flow, write_atomic
from core.project.paths import FLOW_NAME, valid_flow_name  # a flow name is a file stem (defined there, once)

__all__ = ["FLOW_NAME", "valid_flow_name", "crops_dir_name", "flow_path", "save_recording", "RecordingNotSaved",
           "UNSAVED_DIR"]

#: Where a recording the loader would refuse is kept, under the project's run-data folder.
UNSAVED_DIR = "unsaved"


class RecordingNotSaved(ProjectError):
    """The loader would refuse the recorded flow file: it was not written to ``flows/``.

    Attributes
    ----------
    kept : Path
        The recording's text, kept in ``<project>/.steadyhand/unsaved/`` (the
        message says where); its crops stay in ``flows/<name>.crops/``.
    """

    def __init__(self, path: Path | str, message: str, *, location: str = "", kept: Path) -> None:
        super().__init__(path, message, location=location)
        self.kept = kept


def crops_dir_name(flow_name: str) -> str:
    """Folder (next to the flow file) holding the flow's PNG crops: ``"<name>.crops"``."""
    return f"{flow_name}.crops"


def flow_path(project_root: Path | str, flow_name: str) -> Path:
    """``<project>/flows/<flow_name>.yaml``."""
    return Path(project_root) / FLOWS_DIR / f"{flow_name}.yaml"


def save_recording(project_root: Path | str, flow: Flow, crops: Mapping[str, bytes],
                   files: Mapping[str, bytes] | None = None) -> Path:
    """Write ``flow`` to ``flows/<name>.yaml`` and its crops to ``flows/<name>.crops/<step id>.png``.

    Each step's ``target.crop`` is set to the relative path of its crop
    (steps without a crop keep ``""``).  Crops of steps no longer in the
    flow are removed.  Every file is written atomically (temp file + rename).

    ``files`` (uploaded files, by path relative to the flows folder) are
    written beside the flow so that its upload steps replay with them.

    Returns
    -------
    Path
        The flow file.

    Raises
    ------
    ValueError
        When a file path of ``files`` leaves the flows folder.
    RecordingNotSaved
        When the project's loader would refuse the flow file: nothing is
        written to ``flows/<name>.yaml`` (a file there is left as it was);
        the recording is kept in ``.steadyhand/unsaved/`` and the error says
        where and why.
    """
    root = Path(project_root)
    path = flow_path(root, flow.name)
    cdir = path.parent / crops_dir_name(flow.name)
    from core.project.paths import inside

    if not inside(root, cdir.parent) or (cdir.is_symlink() and not inside(root, cdir)):  # crops stay in the project
        kept = _keep_unsaved(root, flow)
        raise RecordingNotSaved(cdir, f"a symbolic link leads out of the project; crops stay inside the project "
                                      f"folder: refused, the recording is kept in {kept}", kept=kept)
    for rel, data in (files or {}).items():
        dest = (path.parent / rel).resolve()
        if path.parent.resolve() not in dest.parents:
            raise ValueError(f"uploaded file path {rel!r} leaves the flows folder")
        dest.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(dest, data)
    steps = []
    keep: set[str] = set()
    for s in flow.steps:
        png = crops.get(s.id, b"")
        if png:
            cdir.mkdir(parents=True, exist_ok=True)
            write_atomic(cdir / f"{s.id}.png", png)
            keep.add(f"{s.id}.png")
            rel = f"{crops_dir_name(flow.name)}/{s.id}.png"
            s = replace(s, target=s.target.with_(crop=rel))
        elif s.target.crop and not (path.parent / s.target.crop).is_file():
            s = replace(s, target=s.target.with_(crop=""))
        elif s.target.crop:
            keep.add(Path(s.target.crop).name)
        steps.append(s)
    final = replace(flow, steps=tuple(steps))
    try:
        out = save_flow(final, path)
    except ProjectError as exc:
        kept = _keep_unsaved(root, final)
        raise RecordingNotSaved(path, f"{exc.detail}; the flow file was not written, the recording is kept in "
                                      f"{kept}", location=exc.location, kept=kept) from None
    if cdir.is_dir():
        for f in cdir.glob("*.png"):
            if f.name not in keep:
                f.unlink(missing_ok=True)
    return out



def _keep_unsaved(root: Path, flow: Flow) -> Path:
    """Write ``flow`` as text to ``<root>/.steadyhand/unsaved/<name>-<UTC time>.yaml`` (never over another one)."""
    folder = run_data_dir(root) / UNSAVED_DIR
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    dest = folder / f"{flow.name}-{stamp}.yaml"
    n = 1
    while dest.exists():
        n += 1
        dest = folder / f"{flow.name}-{stamp}-{n}.yaml"
    write_atomic(dest, flow_text(flow).encode("utf-8"))
    return dest
