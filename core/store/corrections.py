"""Takeover corrections in the store: add, list, review (see :mod:`core.store.correction_models`).

:class:`CorrectionTable` works on an open :class:`~core.store.Store` (its
sessions, its redactor): every text and JSON written is redacted like the
rest of the store, so a secret a person typed during a takeover never lands
here in clear (the recorder already turned it into a ``{name}``
placeholder; the redactor is the second net).  What an edit of the flow
file *is* lives in :mod:`core.heal.corrections`; this module only persists.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Mapping

from sqlalchemy import select

from .correction_models import CorrectionRow
from .media import PNG_MAGIC, write_atomic
from .models import utcnow

if TYPE_CHECKING:
    from .repository import Store

__all__ = ["CorrectionRecord", "CorrectionTable", "CORRECTION_STATES", "CORRECTION_MEANINGS",
           "CorrectionConflictError", "CORRECTIONS_DIR"]

#: Review states of a correction (``kept``: stored, nothing offered to edit).
CORRECTION_STATES = ("offered", "accepted", "rejected", "kept")
#: What the manual actions were for, as the hand-back said.
CORRECTION_MEANINGS = ("replace", "insert", "done")
#: Folder of the media root holding each correction's screenshot and crops (``corrections/<id>/``).
CORRECTIONS_DIR = "corrections"


class CorrectionConflictError(RuntimeError):
    """A review of a correction that is no longer offered (another review came first)."""


def _utc(dt: datetime | None) -> datetime | None:
    if dt is None:
        return None
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=timezone.utc)


@dataclass(frozen=True)
class CorrectionRecord:
    """One stored correction, as read back (fields: :class:`~core.store.correction_models.CorrectionRow`).

    ``steps`` are flow-file step mappings (stable key order); ``page`` holds
    ``url``, ``title``, ``signature`` (the light state signature digest) and
    ``viewport`` ``[w, h]`` CSS px of the page when the takeover began;
    ``screenshot`` and the values of ``crops`` are relative to the store's
    media folder (``Store.media_path`` makes them absolute).
    """

    id: int
    run_id: str
    project: str
    flow: str
    flow_file: str
    step_index: int
    step_id: str
    step_title: str
    reason: str
    page: Mapping[str, Any]
    screenshot: str | None
    steps: tuple[Mapping[str, Any], ...]
    crops: Mapping[str, str]
    params: Mapping[str, str]
    secrets: tuple[str, ...]
    meaning: str
    continue_from: int
    state: str
    flow_digest: str
    diff: str
    review_reason: str
    created_at: datetime | None = None
    reviewed_at: datetime | None = None


def _record(r: CorrectionRow) -> CorrectionRecord:
    return CorrectionRecord(
        id=r.id, run_id=r.run_id, project=r.project, flow=r.flow, flow_file=r.flow_file, step_index=r.step_index,
        step_id=r.step_id, step_title=r.step_title, reason=r.reason, page=dict(r.page or {}), screenshot=r.screenshot,
        steps=tuple(dict(s) for s in r.steps or ()), crops=dict(r.crops or {}), params=dict(r.params or {}),
        secrets=tuple(r.secrets or ()), meaning=r.meaning, continue_from=r.continue_from, state=r.state,
        flow_digest=r.flow_digest, diff=r.diff, review_reason=r.review_reason, created_at=_utc(r.created_at),
        reviewed_at=_utc(r.reviewed_at))


_TEXT = ("run_id", "project", "flow", "flow_file", "step_id", "step_title", "reason", "diff")
_JSON = ("page", "steps", "params", "secrets")


class CorrectionTable:
    """Read and write ``corrections`` through an open store.

    Raises (every method): :class:`~core.store.StoreClosedError`, and for
    writes on a read-only store :class:`~core.store.StoreReadOnlyError`.
    """

    def __init__(self, store: "Store") -> None:
        self.store = store

    def add(self, values: Mapping[str, Any], *, screenshot_png: bytes = b"",
            crops: Mapping[str, bytes] | None = None) -> CorrectionRecord:
        """Insert one correction; write its screenshot and crops under ``corrections/<id>/``.

        ``values`` holds the row's fields (``meaning`` one of
        :data:`CORRECTION_MEANINGS`, ``state`` one of :data:`CORRECTION_STATES`);
        ``screenshot_png`` (already masked) and ``crops`` (step id -> PNG
        bytes, device px) must be PNGs; others are left out.

        Raises
        ------
        ValueError
            An unknown field, meaning or state.
        """
        clean: dict[str, Any] = {}
        for k, v in values.items():
            if k in _TEXT:
                clean[k] = self.store._t(str(v))
            elif k in _JSON:
                clean[k] = self.store._j(list(v) if isinstance(v, (tuple, list)) else dict(v))
            elif k in ("step_index", "continue_from"):
                clean[k] = int(v)
            elif k in ("meaning", "state", "flow_digest"):
                clean[k] = str(v)
            else:
                raise ValueError(f"unknown correction field {k!r}")
        if clean.get("meaning", "replace") not in CORRECTION_MEANINGS:
            raise ValueError(f"bad meaning {clean.get('meaning')!r}; expected one of {CORRECTION_MEANINGS}")
        if clean.get("state", "offered") not in CORRECTION_STATES:
            raise ValueError(f"bad state {clean.get('state')!r}; expected one of {CORRECTION_STATES}")
        with self.store._write() as s:
            row = CorrectionRow(**clean, created_at=utcnow())
            s.add(row)
            s.flush()
            folder = f"{CORRECTIONS_DIR}/{row.id}"
            if screenshot_png.startswith(PNG_MAGIC):
                write_atomic(self.store.media_root, f"{folder}/page.png", screenshot_png)
                row.screenshot = f"{folder}/page.png"
            stored: dict[str, str] = {}
            for step_id, png in (crops or {}).items():
                safe = "".join(c for c in str(step_id) if c.isalnum() or c in "_-")[:80]
                if safe and png.startswith(PNG_MAGIC):
                    write_atomic(self.store.media_root, f"{folder}/{safe}.png", png)
                    stored[str(step_id)] = f"{folder}/{safe}.png"
            row.crops = stored
            return _record(row)

    def get(self, correction_id: int) -> CorrectionRecord | None:
        """One correction, None when unknown."""
        with self.store._read() as s:
            row = s.get(CorrectionRow, int(correction_id))
            return _record(row) if row is not None else None

    def list(self, *, state: str | None = None, flow: str | None = None,
             project: str | None = None) -> list[CorrectionRecord]:
        """Corrections, newest first, optionally filtered by state, flow and project name."""
        q = select(CorrectionRow).order_by(CorrectionRow.id.desc())
        if state is not None:
            q = q.where(CorrectionRow.state == state)
        if flow is not None:
            q = q.where(CorrectionRow.flow == flow)
        if project is not None:
            q = q.where(CorrectionRow.project == project)
        with self.store._read() as s:
            return [_record(r) for r in s.scalars(q)]

    def review(self, correction_id: int, state: str, *, reason: str = "", diff: str | None = None) -> CorrectionRecord:
        """Mark an offered correction ``accepted`` or ``rejected`` (with the reason, and the diff applied).

        Raises
        ------
        KeyError
            Unknown id.
        CorrectionConflictError
            The correction is not offered any more.
        """
        if state not in ("accepted", "rejected"):
            raise ValueError(f"a review accepts or rejects, not {state!r}")
        with self.store._write() as s:
            row = s.get(CorrectionRow, int(correction_id))
            if row is None:
                raise KeyError(correction_id)
            if row.state != "offered":
                raise CorrectionConflictError(f"correction #{correction_id} is {row.state}, not offered")
            row.state, row.review_reason = state, self.store._t(reason)
            if diff is not None:
                row.diff = self.store._t(diff)
            row.reviewed_at = utcnow()
            return _record(row)
