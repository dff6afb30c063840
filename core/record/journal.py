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

Reading a journal writes nothing.  A torn last line (the process was killed
while writing it: no newline at its end, not JSON) is left out, since that
step was never complete; any other bad line is a
:class:`~core.project.ProjectError` naming the file, the line and the field.
Crops and uploaded files that are symbolic links are refused, and the flow
name of ``meta.json`` must be a file stem (it becomes a path).
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Mapping

from core.domain import Flow, Step
from core.project.loader import ProjectError, flow_from_mapping, flow_to_mapping
from core.project.params import is_placeholder, placeholder_name

from .save import valid_flow_name

__all__ = ["JOURNAL_SCHEMA_VERSION", "JournalVersionError", "RecordingSpool", "read_journal", "recover_journal"]

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
        for _, line in _lines(path):
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
        return _read_meta(self.folder)

    def remove(self, index: int) -> None:
        """Record that step ``index`` (0-based) was withdrawn."""
        self._fh.write(json.dumps({"op": "remove", "index": index}) + "\n")
        self._fh.flush()

    def read(self) -> tuple[list[Step], dict[str, bytes]]:
        """All steps in order and their crops by step id (:func:`read_journal`)."""
        if not self._fh.closed:
            self._fh.flush()
        return read_journal(self.folder)

    def close(self, *, delete: bool = False) -> None:
        """Close the journal; remove the folder when ``delete``."""
        try:
            self._fh.close()
        except Exception:
            pass
        if delete:
            shutil.rmtree(self.folder, ignore_errors=True)


def _lines(path: Path) -> list[tuple[int, str]]:
    """The non-blank lines of ``path`` with their 1-based numbers; a torn last line (no newline at its end and not
    JSON: the process was killed while writing it) is left out.

    Raises ProjectError when the file cannot be read or is not UTF-8.
    """
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise ProjectError(path, f"cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ProjectError(path, f"not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {exc.start})",
                           location=f"line {text_line(exc.object, exc.start)}") from None
    lines = [(n, line) for n, line in enumerate(text.split("\n"), 1) if line.strip()]
    if lines and not text.endswith("\n"):
        try:
            json.loads(lines[-1][1])
        except ValueError:
            lines.pop()  # torn: never completed, so never part of the recording
    return lines


def text_line(data: bytes, offset: int) -> int:
    """1-based line number of byte ``offset`` of ``data``."""
    return data.count(b"\n", 0, offset) + 1


def _records(path: Path) -> list[dict[str, Any]]:
    """The steps of ``steps.jsonl`` after its ``remove`` records, as mappings; raises ProjectError naming the line."""
    raw: list[dict[str, Any]] = []
    for n, line in _lines(path):
        where = f"line {n}"
        try:
            rec = json.loads(line)
        except ValueError as exc:
            raise ProjectError(path, f"not JSON ({exc.msg})", location=where) from None
        if not isinstance(rec, dict):
            raise ProjectError(path, "expected a JSON object with 'op'", location=where)
        op = rec.get("op")
        if op == "journal":
            continue
        if op == "step":
            if not isinstance(rec.get("step"), dict):
                raise ProjectError(path, "expected the step as a JSON object", location=f"{where}, field 'step'")
            raw.append(rec["step"])
        elif op == "remove":
            index = rec.get("index")
            if not isinstance(index, int) or isinstance(index, bool):
                raise ProjectError(path, f"expected a step index, got {index!r}", location=f"{where}, field 'index'")
            if 0 <= index < len(raw):
                del raw[index]
        else:
            raise ProjectError(path, f"unknown op {op!r}; expected 'journal', 'step' or 'remove'",
                               location=f"{where}, field 'op'")
    return raw


def _regular_file(path: Path, folder: Path) -> bool:
    """True for a regular file of the journal ``folder`` (a symbolic link, even to a file inside, is refused)."""
    return path.is_file() and not path.is_symlink() and path.resolve().parent == folder.resolve()


def read_journal(folder: Path) -> tuple[list[Step], dict[str, bytes]]:
    """The steps of the journal in ``folder``, in order, and their crops by step id; nothing is written.

    Raises
    ------
    JournalVersionError
        When ``steps.jsonl`` is of a newer schema version.
    core.project.ProjectError
        When a line or a step in it is invalid (the message names the file, the line and the field), or a crop
        is a symbolic link.
    """
    folder = Path(folder)
    path = folder / "steps.jsonl"
    if not path.is_file():
        return [], {}
    RecordingSpool._header_version(path)
    flow = flow_from_mapping({"name": "spool", "steps": _records(path)}, path)
    crops = {}
    for s in flow.steps:
        p = folder / f"{s.id}.png"
        if p.is_symlink():
            raise ProjectError(p, "a crop is a symbolic link; refused (it may point out of the project)",
                               location=f"step {s.id!r}")
        if _regular_file(p, folder):
            crops[s.id] = p.read_bytes()
    return list(flow.steps), crops


def _read_meta(folder: Path) -> dict[str, Any]:
    """``meta.json`` (``{}`` when missing or not a JSON object); raises JournalVersionError on a newer version."""
    path = folder / "meta.json"
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    _check_version(path, data.pop("schema_version", None))
    return data


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
    folder = Path(folder)
    steps, crops = read_journal(folder)  # read only: a journal that fails to load is left as it was
    meta = _read_meta(folder)
    if not steps:
        return None
    name = meta.get("flow") or folder.name.rsplit("-", 2)[0]
    if not isinstance(name, str) or not valid_flow_name(name):
        raise ProjectError(folder / "meta.json", f"flow name {name!r} is not a file stem (letters, digits, '_' and "
                           "'-'); refused (it becomes a path in the project)", location="field 'flow'")
    start_url = meta.get("start_url") or "/"
    if not isinstance(start_url, str):
        raise ProjectError(folder / "meta.json", f"expected a URL string, got {start_url!r}",
                           location="field 'start_url'")
    secrets = sorted({placeholder_name(s.action.value) for s in steps
                      if s.action.kind == "input" and s.target.type == "password" and is_placeholder(s.action.value)})
    files = {}
    up = folder / "files"
    for f in sorted(up.glob("*")) if up.is_dir() and not up.is_symlink() else []:
        if f.is_symlink():
            raise ProjectError(f, "an uploaded file is a symbolic link; refused (it may point out of the project)",
                               location="files/")
        if f.is_file():
            files[f"{name}.files/{f.name}"] = f.read_bytes()
    flow = Flow(name=name, start_url=start_url, steps=tuple(steps), secrets=tuple(secrets),
                description="Recorded by demonstration (recovered from the journal of an interrupted recording).")
    return flow, crops, files
