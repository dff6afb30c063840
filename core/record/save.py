"""Saving a recorded flow into a project: the flow file plus its element crops."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Mapping

from core.domain import Flow
from core.project.loader import FLOWS_DIR, save_flow, write_atomic
from core.project.paths import FLOW_NAME, valid_flow_name  # a flow name is a file stem (defined there, once)

__all__ = ["FLOW_NAME", "valid_flow_name", "crops_dir_name", "flow_path", "save_recording"]


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
    """
    root = Path(project_root)
    path = flow_path(root, flow.name)
    for rel, data in (files or {}).items():
        dest = (path.parent / rel).resolve()
        if path.parent.resolve() not in dest.parents:
            raise ValueError(f"uploaded file path {rel!r} leaves the flows folder")
        dest.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(dest, data)
    cdir = path.parent / crops_dir_name(flow.name)
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
    out = save_flow(replace(flow, steps=tuple(steps)), path)
    if cdir.is_dir():
        for f in cdir.glob("*.png"):
            if f.name not in keep:
                f.unlink(missing_ok=True)
    return out

