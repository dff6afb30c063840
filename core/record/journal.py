"""The journal of a recording: steps spooled to disk as they are recorded, versioned, and rebuilt after a crash.

A journal is a folder (``<project>/.steadyhand/recordings/<flow>-<timestamp>``):

- ``steps.jsonl``: a header line ``{"op": "journal", "schema_version": n}``,
  then one JSON object per line: ``{"op": "step", "step": {...}}`` or
  ``{"op": "remove", "index": n}``;
- ``meta.json``: ``{"schema_version": n, "flow": ..., "start_url": ...}``;
- ``<step id>.png``: element crops; ``files/``: uploaded files.

Every persisted file carries a schema version (architecture rule 4).  A
journal written before versions existed (no header, no key) reads as
version 1; a journal of a newer version than :data:`JOURNAL_SCHEMA_VERSION`
is refused with :class:`JournalVersionError`, never half read.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Mapping

from core.domain import Flow, Step
from core.project.loader import ProjectError, flow_from_mapping, flow_to_mapping
from core.project.params import is_placeholder, placeholder_name

__all__ = ["JOURNAL_SCHEMA_VERSION", "JournalVersionError", "RecordingSpool", "recover_journal"]

#: Schema version of the journal files this code writes and the newest it reads.
JOURNAL_SCHEMA_VERSION = 1


class JournalVersionError(ProjectError):
    """A journal file was written by a newer Steadyhand (its ``schema_version`` is above ours)."""


def _check_version(path: Path, version: Any) -> None:
    """Raise :class:`JournalVersionError` unless ``version`` (None: 1, written before versions) can be read."""
    v = 1 if version is None else version
    if not isinstance(v, int) or isinstance(v, bool) or v < 1:
        raise ProjectError(path, f"schema_version {version!r} is not a version number", location="journal header")
    if v > JOURNAL_SCHEMA_VERSION:
        raise JournalVersionError(
            path, f"journal schema_version {v} is newer than this Steadyhand reads (expected "
                  f"{JOURNAL_SCHEMA_VERSION} or older); upgrade Steadyhand", location="journal header")


class RecordingSpool:
    """Append-only journal of recorded steps and their crops on disk.

    Opening a folder that holds a journal appends to it (its version is
    checked first); a new journal starts with its header line.

    Parameters
    ----------
    folder : Path
        The journal's folder (created when missing).

    Raises
    ------
    JournalVersionError
        When the folder holds a journal of a newer schema version.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / "steps.jsonl"
        fresh = not path.is_file() or path.stat().st_size == 0
        if not fresh:
            self._header_version(path)
        self._fh = open(path, "a", encoding="utf-8")
        if fresh:
            self._fh.write(json.dumps({"op": "journal", "schema_version": JOURNAL_SCHEMA_VERSION}) + "\n")
            self._fh.flush()

    @staticmethod
    def _header_version(path: Path) -> int:
        """The schema version of ``steps.jsonl`` (1 without a header line); raises on a newer one."""
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except ValueError:
                    raise ProjectError(path, "the first line is not JSON", location="line 1") from None
                version = rec.get("schema_version") if isinstance(rec, dict) and rec.get("op") == "journal" else None
                _check_version(path, version)
                return 1 if version is None else int(version)
        return JOURNAL_SCHEMA_VERSION

    def add(self, step: Step, crop: bytes) -> None:
        """Append ``step`` (and write its crop)."""
        if crop:
            (self.folder / f"{step.id}.png").write_bytes(crop)
        else:
            (self.folder / f"{step.id}.png").unlink(missing_ok=True)
        data = flow_to_mapping(Flow("spool", "/", (step,)))["steps"][0]
        self._fh.write(json.dumps({"op": "step", "step": data}) + "\n")
        self._fh.flush()

    def write_meta(self, meta: Mapping[str, Any]) -> None:
        """Write ``meta.json`` (flow name, start URL): enough to rebuild the flow from the journal."""
        data = {"schema_version": JOURNAL_SCHEMA_VERSION, **dict(meta)}
        (self.folder / "meta.json").write_text(json.dumps(data), encoding="utf-8")

    def read_meta(self) -> dict[str, Any]:
        """``meta.json`` as written by :meth:`write_meta` (``{}`` when missing or unreadable).

        Raises
        ------
        JournalVersionError
            When ``meta.json`` is of a newer schema version.
        """
        path = self.folder / "meta.json"
        try:
            data = dict(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            return {}
        _check_version(path, data.pop("schema_version", None))
        return data

    def remove(self, index: int) -> None:
        """Record that step ``index`` (0-based) was withdrawn."""
        self._fh.write(json.dumps({"op": "remove", "index": index}) + "\n")
        self._fh.flush()

    def read(self) -> tuple[list[Step], dict[str, bytes]]:
        """All steps in order and their crops by step id.

        Raises
        ------
        JournalVersionError
            When ``steps.jsonl`` is of a newer schema version.
        core.project.ProjectError
            When a step in it is invalid.
        """
        if not self._fh.closed:
            self._fh.flush()
        path = self.folder / "steps.jsonl"
        self._header_version(path)
        raw: list[dict[str, Any]] = []
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    continue
                rec = json.loads(line)
                if rec["op"] == "step":
                    raw.append(rec["step"])
                elif rec["op"] == "remove" and 0 <= rec["index"] < len(raw):
                    del raw[rec["index"]]
        flow = flow_from_mapping({"name": "spool", "steps": raw}, path)
        crops = {}
        for s in flow.steps:
            p = self.folder / f"{s.id}.png"
            if p.is_file():
                crops[s.id] = p.read_bytes()
        return list(flow.steps), crops

    def close(self, *, delete: bool = False) -> None:
        """Close the journal; remove the folder when ``delete``."""
        try:
            self._fh.close()
        except Exception:
            pass
        if delete:
            shutil.rmtree(self.folder, ignore_errors=True)


def recover_journal(folder: Path) -> tuple[Flow, dict[str, bytes], dict[str, bytes]] | None:
    """Rebuild a recording from a journal left by a process that was killed.

    Returns ``(flow, crops, files)`` or None when the folder holds no step.
    Secret parameters are the ``{name}`` placeholders of password fields.

    Raises
    ------
    JournalVersionError
        When the journal is of a newer schema version (the message names the
        file and the version expected).
    core.project.ProjectError
        When the journal is corrupt.
    """
    spool = RecordingSpool(folder)
    try:
        steps, crops = spool.read()
        meta = spool.read_meta()
    finally:
        spool.close()
    if not steps:
        return None
    name = str(meta.get("flow") or folder.name.rsplit("-", 2)[0])
    secrets = sorted({placeholder_name(s.action.value) for s in steps
                      if s.action.kind == "input" and s.target.type == "password" and is_placeholder(s.action.value)})
    files = {}
    for f in sorted((folder / "files").glob("*")) if (folder / "files").is_dir() else []:
        files[f"{name}.files/{f.name}"] = f.read_bytes()
    flow = Flow(name=name, start_url=str(meta.get("start_url") or "/"), steps=tuple(steps), secrets=tuple(secrets),
                description="Recorded by demonstration (recovered from the journal of an interrupted recording).")
    return flow, crops, files
