"""Recorder dock: record a new flow by demonstration, edit its steps, save it, replay it.

The dock owns a :class:`~studio.recorder_bridge.RecorderBridge` (the
recorder runs on its own thread, Chromium headless); the main window shows
the recorder's live frames in its live view and forwards clicks, wheel turns
and keys typed there (:meth:`RecorderDock.forward_click` ...).

Editing never talks to the recorder: the table model keeps each step as the
recorder reported it plus the user's edits (name, deletion, order, parameter,
flags) and applies them again to the recorder's final flow when the
recording stops (:meth:`RecordedStepsModel.finish`).  What is saved is
:meth:`RecordedStepsModel.edited_flow`.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlsplit

from PySide6.QtCore import (
    QAbstractTableModel, QItemSelectionModel, QModelIndex, QPersistentModelIndex, QSize, Qt, QTimer, Signal,
)
from PySide6.QtGui import QAction, QBrush, QColor, QFont, QImage, QKeySequence, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView, QComboBox, QDockWidget, QFrame, QHBoxLayout, QHeaderView, QInputDialog,
    QLabel, QLineEdit, QMessageBox, QPushButton, QSizePolicy, QStyle, QTableView, QToolButton,
    QVBoxLayout, QWidget,
)

from core.progress import counted
from core.act.space import spec
from core.domain import Flow, Step
from core.engine.events import (
    EngineEvent, EscalationRaised, FlowFinished, FlowStarted, RunFinished, StepFinished, StepStarted,
    TargetResolved, VerdictReached,
)
from core.project.loader import ProjectError, load_flow
from core.project.params import bind, is_placeholder, placeholder, placeholder_name, placeholders
from core.engine.report import result_label
from core.record.events import (
    AddAssertion, ElementPicked, ForwardClick, ForwardKey, ForwardMove, ForwardScroll, ForwardType, LiveFrame, RecorderError,
    RecordingStarted, RecordingStopped, SetInspect, StepRecorded, StepRemoved,
)
from core.record.review import ReviewFlag, review_flags
from core.record.save import FLOW_NAME, RecordingNotSaved, flow_path, save_recording, valid_flow_name
from core.record.steps import ASSERTION_LABELS, slug

from ..bridge import ProjectLike
from ..recorder_bridge import RecorderBridge, RecorderFactory, default_recorder_factory
from ..theme import COLORS, STATUS_COLORS

__all__ = [
    "RecorderState", "RecordedRow", "ReplayResult", "RecordedStepsModel", "AssertionPanel", "RecorderDock",
    "FLOW_NAME_RE", "PARAM_NAME_RE", "valid_flow_name", "param_slug", "ASSERTION_KINDS", "THUMB_SIZE",
]

#: A flow name is a file stem: letters, digits, ``_`` and ``-`` (no dots, no separators), 1..64 chars.
FLOW_NAME_RE = FLOW_NAME
#: A parameter name as ``{name}`` placeholders accept it.
PARAM_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: Assertion kinds offered for a picked element, when the recorder suggests none.
ASSERTION_KINDS = ("visible", "hidden", "text_equals", "text_contains", "enabled", "disabled", "value", "count")
_PAGE_KINDS = ("text_appears", "text_absent")
_TEXT_KINDS = ("text_equals", "text_contains", "text_appears", "text_absent")
_NO_EXPECTED = ("visible", "hidden", "enabled", "disabled")
#: Size of the element thumbnails in the steps table.
THUMB_SIZE = QSize(112, 34)

_GREEN, _AMBER, _RED = STATUS_COLORS["passed"], STATUS_COLORS["escalated"], STATUS_COLORS["failed"]


def param_slug(label: str, default: str = "value") -> str:
    """A parameter name from a field label: ``"User name"`` -> ``"user_name"`` (:func:`core.record.steps.slug`)."""
    return slug(label, default)


class RecorderState(Enum):
    """Where the dock is in its record -> edit -> save -> replay cycle."""

    IDLE = "idle"
    STARTING = "starting"
    RECORDING = "recording"
    STOPPING = "stopping"
    STOPPED = "stopped"
    SAVED = "saved"


@dataclass(slots=True)
class ReplayResult:
    """The replay of one step: engine status, verdict and heal (GUI thread only)."""

    status: str = "pending"
    verdict: str = ""
    verdict_reason: str = ""
    healed: bool = False
    strategy: str = ""
    error: str = ""

    def text(self) -> str:
        if self.status == "running":
            return "running\u2026"
        verdict = self.verdict.replace("_", " ")  # words, as the timeline says it
        main = verdict or self.status
        if self.status in ("escalated", "skipped", "stopped") and self.verdict != "failed":
            main = self.status if not self.verdict else f"{verdict} \u00b7 {self.status}"
        if self.healed:
            main += f" \u00b7 healed ({self.strategy})" if self.strategy else " \u00b7 healed"
        return main

    def color(self) -> str:
        if self.status in ("pending", "running"):
            return COLORS["muted"]
        if self.status == "passed" and self.verdict in ("", "as_expected"):
            return _AMBER if self.healed else _GREEN
        if self.status == "escalated" or self.verdict in ("unchanged", "changed_unexpectedly"):
            return _AMBER
        return _RED


@dataclass(slots=True)
class RecordedRow:
    """One recorded step: the recorder's step, its crop, and the user's edits (GUI thread only).

    ``name`` / ``reversible`` / ``read_only`` are None while not edited;
    ``param`` is the parameter name replacing the recorded literal value;
    ``target_param`` the one replacing the clicked element's accessible name
    ("click the button the task names"); ``same_named`` counts the other elements of the page with the target's
    role and name at record time (``StepRecorded.same_named``).
    """

    step: Step
    crop_png: bytes = b""
    thumb: QPixmap | None = None
    name: str | None = None
    reversible: bool | None = None
    read_only: bool | None = None
    param: str | None = None
    target_param: str | None = None
    replay: ReplayResult | None = None
    same_named: int = 0

    @property
    def id(self) -> str:
        return self.step.id

    def review(self) -> list[ReviewFlag]:
        """What to check about this step's name (the same flags ``steadyhand record`` prints)."""
        return review_flags([self.step], {self.step.id: self.same_named})

    def effective(self) -> Step:
        """The step with the user's edits applied."""
        s = self.step
        changes: dict[str, Any] = {}
        if self.name is not None:
            changes["name"] = self.name
        if self.reversible is not None:
            changes["reversible"] = self.reversible
        if self.read_only is not None:
            changes["read_only"] = self.read_only
        if self.param:
            changes["action"] = replace(s.action, value=placeholder(self.param))
        if self.target_param:
            ph, t = placeholder(self.target_param), s.target
            same = lambda v: ph if v == t.name else v  # noqa: E731 - the fields that held the name
            changes["target"] = t.with_(name=ph, text=same(t.text), label=same(t.label), title=same(t.title))
            if self.name is None and s.name:
                changes["name"] = s.name.replace(self.target_default, ph)
        return replace(s, **changes) if changes else s

    @property
    def target_default(self) -> str:
        """The element's name as the page showed it (the default of a name parameter)."""
        return bind(self.step.target.name, {})

    def can_parametrize(self) -> bool:
        """True when the step's value is user data (the action table's ``parametrizable``: input, select)
        and a literal (no placeholder) typed into a non-secret field."""
        s = self.step
        return (self.param is None and spec(s.action.kind).parametrizable and bool(s.action.value)
                and not placeholders(s.action.value) and s.target.type != "password")

    def can_parametrize_target(self) -> bool:
        """True when the step has no value to parametrize but acts on an element with a literal name."""
        s = self.step
        return (self.target_param is None and not self.can_parametrize() and spec(s.action.kind).target != "none"
                and bool(s.target.name) and not placeholders(s.target.name) and s.target.type != "password")


#: Thumbnails of wide, flat elements (text fields) are cut rather than shrunk below this height.
_THUMB_MIN_HEIGHT = 24


def _thumb(crop_png: bytes, image: QImage | None = None, *, left: bool = False) -> QPixmap | None:
    """A thumbnail of an element crop that fits :data:`THUMB_SIZE`.

    Shrunk with its aspect kept; a wide, flat crop (a text field) that would
    end up lower than 24 px is shrunk to 24 px high instead and cut to the
    thumbnail's width - at its left end for fields (``left``: where the text
    is), around its centre otherwise (a button's label).
    """
    img = image if image is not None and not image.isNull() else (
        QImage.fromData(crop_png, "PNG") if crop_png else QImage())
    if img.isNull():
        return None
    tw, th = THUMB_SIZE.width(), THUMB_SIZE.height()
    k = min(1.0, tw / img.width(), th / img.height())
    if img.height() * k < _THUMB_MIN_HEIGHT <= img.height():
        k = _THUMB_MIN_HEIGHT / img.height()
    if k < 1.0:
        img = img.scaled(max(1, round(img.width() * k)), max(1, round(img.height() * k)),
                         Qt.AspectRatioMode.IgnoreAspectRatio, Qt.TransformationMode.SmoothTransformation)
    if img.width() > tw:
        img = img.copy(0 if left else (img.width() - tw) // 2, 0, tw, img.height())
    return QPixmap.fromImage(img)


def _left_aligned(step: Step) -> bool:
    """Cut a too-wide thumbnail at its left end (text starts there), except for buttons (centred labels)."""
    t = step.target
    return not (t.tag == "button" or t.role == "button")


_Index = QModelIndex | QPersistentModelIndex


class RecordedStepsModel(QAbstractTableModel):
    """The live list of recorded steps, editable; tracks the recorder's own indices.

    The recorder numbers steps in its own list (``StepRecorded.index``,
    ``StepRemoved.index``); the user may delete and reorder rows meanwhile,
    so rows are matched by step id.

    Signals
    -------
    edited()
        The user changed a step (rename, delete, move, parameter, flags).
    """

    COLUMNS = ("#", "Element", "Step", "Action", "Value", "Expect", "Irrev.", "Read-only", "Replay")
    (COL_INDEX, COL_THUMB, COL_TITLE, COL_ACTION, COL_VALUE, COL_EXPECT, COL_IRREVERSIBLE, COL_READ_ONLY,
     COL_REPLAY) = range(9)
    #: Role returning the :class:`RecordedRow` of a row.
    RowRole = Qt.ItemDataRole.UserRole + 1
    #: Role returning the review flags of a row (:meth:`RecordedRow.review`); the title shows them in amber.
    ReviewRole = Qt.ItemDataRole.UserRole + 2

    edited = Signal()

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: list[RecordedRow] = []
        self._recorder_ids: list[str] = []
        self._deleted: set[str] = set()
        self._base: Flow | None = None
        self._secrets: tuple[str, ...] = ()

    # --- reading --------------------------------------------------------------------------

    def rows(self) -> list[RecordedRow]:
        return list(self._rows)

    def row(self, i: int) -> RecordedRow:
        return self._rows[i]

    def steps(self) -> list[Step]:
        """The edited steps, in order."""
        return [r.effective() for r in self._rows]

    @property
    def base_flow(self) -> Flow | None:
        """The recorder's final flow (after :meth:`finish`), else None."""
        return self._base

    def params(self) -> dict[str, str]:
        """The flow's parameters: the recorder's, plus each parametrized literal."""
        out = dict(self._base.params) if self._base is not None else {}
        for r in self._rows:
            if r.param:
                out.setdefault(r.param, r.step.action.value)
            if r.target_param:
                out.setdefault(r.target_param, r.target_default)
        return out

    def edited_flow(self, name: str, *, start_url: str = "/") -> Flow:
        """The flow to save under ``name``: the recorder's flow with every edit applied."""
        base = self._base or Flow(name, start_url, ())
        return replace(base, name=name, steps=tuple(self.steps()), params=self.params(), source="")

    def crops(self) -> dict[str, bytes]:
        """Element crops by step id (steps without a crop left out)."""
        return {r.id: r.crop_png for r in self._rows if r.crop_png}

    # --- recorder events ------------------------------------------------------------------

    def clear(self) -> None:
        self.beginResetModel()
        self._rows.clear()
        self._recorder_ids.clear()
        self._deleted.clear()
        self._base = None
        self.endResetModel()

    def set_secrets(self, names: tuple[str, ...]) -> None:
        """Names of secret parameters (their placeholders are shown locked)."""
        self._secrets = tuple(names)

    def add_recorded(self, index: int, step: Step, crop_png: bytes = b"", image: QImage | None = None,
                     same_named: int = 0) -> int:
        """Apply ``StepRecorded``: append, or replace the recorder's step ``index``; returns the row or -1."""
        if 0 <= index < len(self._recorder_ids):
            old = self._recorder_ids[index]
            self._recorder_ids[index] = step.id
            if old in self._deleted:
                if old == step.id:
                    return -1
                self._deleted.discard(old)  # a different step took its place: show it at the end
            else:
                i = self._find(old)
                if i >= 0:
                    row = self._rows[i]
                    if old != step.id:  # another step: the user's edits were for the old one
                        self._rows[i] = row = RecordedRow(step)
                    row.step, row.same_named = step, same_named
                    if crop_png or old != step.id:
                        row.crop_png, row.thumb = crop_png, _thumb(crop_png, image, left=_left_aligned(step))
                    self._changed(i)
                    return i
        else:
            self._recorder_ids.append(step.id)
        i = len(self._rows)
        self.beginInsertRows(QModelIndex(), i, i)
        self._rows.append(RecordedRow(step, crop_png, _thumb(crop_png, image, left=_left_aligned(step)),
                                      same_named=same_named))
        self.endInsertRows()
        return i

    def remove_recorded(self, index: int) -> None:
        """Apply ``StepRemoved``: the recorder withdrew its step ``index``."""
        if not 0 <= index < len(self._recorder_ids):
            return
        sid = self._recorder_ids.pop(index)
        self._deleted.discard(sid)
        i = self._find(sid)
        if i >= 0:
            self.beginRemoveRows(QModelIndex(), i, i)
            del self._rows[i]
            self.endRemoveRows()

    def finish(self, flow: Flow, crops: dict[str, bytes]) -> None:
        """Apply ``RecordingStopped``: take the recorder's final steps, keep the user's edits and order.

        Rows of steps the final flow no longer holds are dropped (unless it
        holds none at all, e.g. after an error); steps never announced are
        appended in flow order; steps the user deleted stay deleted.
        """
        final = {s.id: s for s in flow.steps}
        self.beginResetModel()
        if final:
            kept: list[RecordedRow] = []
            for row in self._rows:
                step = final.get(row.id)
                if step is None:
                    continue
                row.step = step
                png = crops.get(row.id)
                if png and png != row.crop_png:
                    row.crop_png, row.thumb = png, _thumb(png, left=_left_aligned(step))
                kept.append(row)
            known = {r.id for r in kept} | self._deleted
            for s in flow.steps:
                if s.id not in known:
                    png = crops.get(s.id, b"")
                    kept.append(RecordedRow(s, png, _thumb(png, left=_left_aligned(s))))
            self._rows = kept
        self._recorder_ids = [s.id for s in flow.steps]
        self._base = flow
        self.endResetModel()

    def load_saved(self, flow: Flow, crops: dict[str, bytes]) -> None:
        """Show ``flow`` as its file holds it, without edits (a reload from disk); ``crops`` by step id."""
        self.beginResetModel()
        self._rows = [RecordedRow(st, crops.get(st.id, b""), _thumb(crops.get(st.id, b""), left=_left_aligned(st)))
                      for st in flow.steps]
        self._recorder_ids = [st.id for st in flow.steps]
        self._deleted.clear()
        self._base = replace(flow, source="")
        self.endResetModel()

    def merge_onto(self, flow: Flow, crops: dict[str, bytes]) -> list[str]:
        """Apply the user's edits to ``flow`` (the file as it is on disk now) and show the result.

        The file's steps and order are kept: a step the user edited gets the same edits (name, irreversible,
        read-only, parameters), a step the user deleted is deleted; steps the file gained (an accepted
        correction, a hand edit) stay.  Returns what could not be applied, in words (an edit of a step the
        file no longer holds, a parameter whose literal changed, a reordering).
        """
        mine = {r.id: r for r in self._rows}
        order = [r.id for r in self._rows]
        lost: list[str] = []
        rows: list[RecordedRow] = []
        for st in flow.steps:
            if st.id in self._deleted:
                continue
            png = crops.get(st.id, b"")
            row = RecordedRow(st, png, _thumb(png, left=_left_aligned(st)))
            old = mine.get(st.id)
            if old is not None:
                row.name, row.reversible, row.read_only = old.name, old.reversible, old.read_only
                row.same_named = old.same_named
                if old.param:
                    if row.can_parametrize() and st.action.value == old.step.action.value:
                        row.param = old.param
                    else:
                        lost.append(f"parameter {{{old.param}}} of step {st.id} (its value changed on disk)")
                if old.target_param:
                    if row.can_parametrize_target() and st.target.name == old.step.target.name:
                        row.target_param = old.target_param
                    else:
                        lost.append(f"parameter {{{old.target_param}}} of step {st.id} (its element changed on disk)")
            rows.append(row)
        kept = {r.id for r in rows}
        for sid in order:
            r = mine[sid]
            if sid not in kept and (r.name is not None or r.reversible is not None or r.read_only is not None
                                    or r.param or r.target_param):
                lost.append(f"your edits of step {sid} (the file no longer holds it)")
        common = [sid for sid in order if sid in kept]
        if common != [r.id for r in rows if r.id in set(common)]:
            lost.append("your reordering of the steps (the file's order is kept)")
        self.beginResetModel()
        self._rows = rows
        self._recorder_ids = [st.id for st in flow.steps]
        self._base = replace(flow, source="")
        self.endResetModel()
        return lost

    # --- edits ----------------------------------------------------------------------------

    def rename(self, i: int, name: str) -> None:
        row = self._rows[i]
        name = name.strip()
        if name == row.effective().name:
            return
        row.name = name
        self._edited(i)

    def delete(self, i: int) -> None:
        row = self._rows[i]
        self._deleted.add(row.id)
        self.beginRemoveRows(QModelIndex(), i, i)
        del self._rows[i]
        self.endRemoveRows()
        self._clear_replay()
        self.edited.emit()

    def move(self, i: int, delta: int) -> int:
        """Move row ``i`` by ``delta`` (-1 up, +1 down); returns its new row (``i`` when it cannot move)."""
        j = i + delta
        if not (0 <= i < len(self._rows) and 0 <= j < len(self._rows)) or delta == 0:
            return i
        dest = j + 1 if delta > 0 else j  # Qt's destination is the row BEFORE which it lands
        self.beginMoveRows(QModelIndex(), i, i, QModelIndex(), dest)
        self._rows.insert(j, self._rows.pop(i))
        self.endMoveRows()
        self._clear_replay()
        self.dataChanged.emit(self.index(min(i, j), self.COL_INDEX), self.index(max(i, j), self.COL_INDEX))
        self.edited.emit()
        return j

    def make_parameter(self, i: int, name: str) -> None:
        """Replace the literal value of step ``i`` by ``{name}`` - or, for a step without a value (a click),
        its element's accessible name; the literal becomes the parameter's default.

        Raises
        ------
        ValueError
            When the step has neither a literal value nor an element name to
            parametrize, the name is not an identifier, is a secret, or
            already holds another value.
        """
        row = self._rows[i]
        on_target = not row.can_parametrize() and row.can_parametrize_target()
        if not row.can_parametrize() and not on_target:
            raise ValueError(f"step {i + 1} has no literal value or element name to turn into a parameter")
        name = name.strip()
        if not PARAM_NAME_RE.match(name):
            raise ValueError(f"{name!r} is not a parameter name (letters, digits and '_', not starting with a digit)")
        secrets = set(self._secrets) | set(self._base.secrets if self._base else ())
        if name in secrets:
            raise ValueError(f"{name!r} is a secret; pick another name")
        literal = row.target_default if on_target else row.step.action.value
        held = self.params().get(name)
        if held is not None and held != literal:
            raise ValueError(f"parameter {{{name}}} already stands for {held!r}")
        if on_target:
            row.target_param = name
        else:
            row.param = name
        self._edited(i)

    def clear_parameter(self, i: int) -> None:
        """Give step ``i`` its recorded literal value back."""
        if self._rows[i].param is not None or self._rows[i].target_param is not None:
            self._rows[i].param = self._rows[i].target_param = None
            self._edited(i)

    def set_irreversible(self, i: int, on: bool) -> None:
        """Mark step ``i`` irreversible (``reversible: false``); clears read-only (a write is not read-only)."""
        row = self._rows[i]
        eff = row.effective()
        if (not eff.reversible) == on:
            return
        row.reversible = not on
        if on and eff.read_only:
            row.read_only = False
        self._edited(i)

    def set_read_only(self, i: int, on: bool) -> None:
        """Mark step ``i`` read-only (``read_only: true``); clears irreversible."""
        row = self._rows[i]
        eff = row.effective()
        if eff.read_only == on:
            return
        row.read_only = on
        if on and not eff.reversible:
            row.reversible = True
        self._edited(i)

    # --- replay ---------------------------------------------------------------------------

    def start_replay(self) -> None:
        for r in self._rows:
            r.replay = ReplayResult()
        self._all_changed(self.COL_REPLAY)

    def replay_result(self, i: int) -> ReplayResult | None:
        if not 0 <= i < len(self._rows):
            return None
        row = self._rows[i]
        if row.replay is None:
            row.replay = ReplayResult()
        return row.replay

    def replay_changed(self, i: int) -> None:
        if 0 <= i < len(self._rows):
            self.dataChanged.emit(self.index(i, self.COL_REPLAY), self.index(i, self.COL_REPLAY))

    def finish_replay(self) -> None:
        for r in self._rows:
            if r.replay is not None and r.replay.status in ("pending", "running"):
                r.replay.status = "stopped" if r.replay.status == "running" else "not run"
        self._all_changed(self.COL_REPLAY)

    def _clear_replay(self) -> None:
        if any(r.replay is not None for r in self._rows):
            for r in self._rows:
                r.replay = None
            self._all_changed(self.COL_REPLAY)

    # --- helpers --------------------------------------------------------------------------

    def _find(self, sid: str) -> int:
        for i, r in enumerate(self._rows):
            if r.id == sid:
                return i
        return -1

    def _changed(self, i: int) -> None:
        self.dataChanged.emit(self.index(i, 0), self.index(i, len(self.COLUMNS) - 1))

    def _all_changed(self, col: int) -> None:
        if self._rows:
            self.dataChanged.emit(self.index(0, col), self.index(len(self._rows) - 1, col))

    def _edited(self, i: int) -> None:
        self._clear_replay()
        self._changed(i)
        self.edited.emit()

    # --- Qt model -------------------------------------------------------------------------

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802, B008 - Qt API
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802, B008 - Qt API
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802 - Qt API
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self.COLUMNS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return {
                self.COL_THUMB: "The element as recorded (its crop is saved beside the flow)",
                self.COL_TITLE: "Step name (double-click or F2 to rename)",
                self.COL_VALUE: "Typed / chosen value; {name} is a parameter (locked: a secret)",
                self.COL_EXPECT: "Effect the replay must see after the action (recorded delta)",
                self.COL_IRREVERSIBLE: "Irreversible (a network write): a failed check stops the run, no retry",
                self.COL_READ_ONLY: "Read-only (no side effects): the breaker tolerates more failures",
                self.COL_REPLAY: "Verdict of the last replay of the saved flow",
            }.get(section)
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        f = super().flags(index)
        if not index.isValid():
            return f
        if index.column() == self.COL_TITLE:
            f |= Qt.ItemFlag.ItemIsEditable
        elif index.column() in (self.COL_IRREVERSIBLE, self.COL_READ_ONLY):
            f |= Qt.ItemFlag.ItemIsUserCheckable
        return f

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = self._rows[index.row()]
        col = index.column()
        if role == self.RowRole:
            return row
        if role == self.ReviewRole:
            return row.review()
        step = row.effective()
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return self._display(index.row(), row, step, col, edit=role == Qt.ItemDataRole.EditRole)
        if role == Qt.ItemDataRole.DecorationRole and col == self.COL_THUMB:
            return row.thumb
        if role == Qt.ItemDataRole.CheckStateRole:
            if col == self.COL_IRREVERSIBLE:
                return Qt.CheckState.Checked if not step.reversible else Qt.CheckState.Unchecked
            if col == self.COL_READ_ONLY:
                return Qt.CheckState.Checked if step.read_only else Qt.CheckState.Unchecked
            return None
        if role == Qt.ItemDataRole.TextAlignmentRole:
            if col == self.COL_INDEX:
                return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if col == self.COL_THUMB:
                return int(Qt.AlignmentFlag.AlignCenter)
            return int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole:
            if col == self.COL_VALUE and is_placeholder(step.action.value):
                return QBrush(QColor(COLORS["accent"]))
            if col == self.COL_REPLAY and row.replay is not None:
                return QBrush(QColor(row.replay.color()))
            if col == self.COL_TITLE and row.review():
                return QBrush(QColor(STATUS_COLORS["escalated"]))  # a name to check
            if col in (self.COL_INDEX, self.COL_EXPECT):
                return QBrush(QColor(COLORS["muted"]))
            return None
        if role == Qt.ItemDataRole.FontRole and col == self.COL_TITLE and row.name is not None:
            f = QFont()
            f.setItalic(True)  # renamed by the user
            return f
        if role == Qt.ItemDataRole.SizeHintRole and col == self.COL_THUMB:
            return QSize(THUMB_SIZE.width() + 10, THUMB_SIZE.height() + 8)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(row, step, col)
        return None

    def setData(self, index: _Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:  # noqa: N802
        if not index.isValid():
            return False
        i, col = index.row(), index.column()
        if col == self.COL_TITLE and role == Qt.ItemDataRole.EditRole:
            self.rename(i, str(value))
            return True
        if role == Qt.ItemDataRole.CheckStateRole and col in (self.COL_IRREVERSIBLE, self.COL_READ_ONLY):
            on = Qt.CheckState(value) == Qt.CheckState.Checked if not isinstance(value, bool) else value
            if col == self.COL_IRREVERSIBLE:
                self.set_irreversible(i, on)
            else:
                self.set_read_only(i, on)
            return True
        return False

    def _display(self, i: int, row: RecordedRow, step: Step, col: int, *, edit: bool) -> Any:
        if col == self.COL_INDEX:
            return str(i + 1)
        if col == self.COL_TITLE:
            return step.name if edit else step.title
        if col == self.COL_ACTION:
            return step.action.kind
        if col == self.COL_VALUE:
            return _value_text(step)
        if col == self.COL_EXPECT:
            return step.expect
        if col == self.COL_REPLAY:
            return row.replay.text() if row.replay is not None else ""
        return None

    def _tooltip(self, row: RecordedRow, step: Step, col: int) -> str | None:
        t = step.target
        if col in (self.COL_THUMB, self.COL_TITLE):
            what = f"{t.role or t.tag} \u201c{t.label_text}\u201d" if not t.is_empty else "no target element"
            lines = [step.title, what]
            if t.anchor is not None:
                lines.append(f"anchor: {t.anchor.role} \u201c{t.anchor.text}\u201d")
            if t.container:
                lines.append(f"in: {t.container}")
            lines += [f"check: {f.message}" for f in row.review()]
            return "\n".join(lines)
        if col == self.COL_VALUE:
            name = placeholder_name(step.action.value)
            if name:
                if name in self._secrets or (self._base and name in self._base.secrets):
                    return f"secret {{{name}}}: its value is never recorded"
                default = self.params().get(name)
                return f"parameter {{{name}}}" + (f", default {default!r}" if default is not None else "")
            if row.can_parametrize():
                return "literal value; \u201cMake parameter\u201d turns it into {name}"
            return None
        if col == self.COL_EXPECT:
            observed = ", ".join(step.recorded.observed) if step.recorded and step.recorded.observed else "nothing"
            return f"expect {step.expect}; observed while recording: {observed}"
        if col == self.COL_REPLAY and row.replay is not None:
            return row.replay.verdict_reason or row.replay.error or row.replay.text()
        return None


def _value_text(step: Step) -> str:
    a = step.action
    if a.kind == "assert" and step.assertions:
        return "; ".join(f"{x.kind} \u201c{x.expected}\u201d" if x.expected else x.kind for x in step.assertions)
    if a.kind == "scroll":
        return f"{a.direction} {a.distance} px"
    if spec(a.kind).parametrizable and step.target.type == "password" and a.value and not is_placeholder(a.value):
        return "\u2022" * 6  # a secret never shows (the recorder should not even send it)
    return a.value


class AssertionPanel(QFrame):
    """Inline form shown when an element is picked in Assert mode: kind, expected value, Add.

    Signals
    -------
    add_requested(int, str, str)
        ``(pick_id, kind, expected)``.
    dismissed()
    """

    add_requested = Signal(int, str, str)
    dismissed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("assertionPanel")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.pick: ElementPicked | None = None
        self.title = QLabel()
        self.title.setObjectName("panelTitle")
        self.subject = QLabel()
        self.subject.setWordWrap(True)
        self.subject.setTextFormat(Qt.TextFormat.RichText)
        self.kind_combo = QComboBox()
        self.expected_edit = QLineEdit()
        self.add_button = QPushButton("Add assertion")
        self.add_button.setDefault(True)
        self.cancel_button = QPushButton("Dismiss")
        self.subject.setMaximumWidth(340)
        self.subject.setWordWrap(False)
        # the strip never sets the dock's width: a long subject is cut (whole in its tooltip), the fields shrink
        self.subject.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.subject.setMinimumWidth(120)
        self.kind_combo.setMinimumWidth(90)
        self.kind_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.kind_combo.setMinimumContentsLength(10)
        self.expected_edit.setMinimumWidth(80)
        lay = QHBoxLayout(self)  # one strip above the steps: the table keeps its width
        lay.setContentsMargins(10, 4, 8, 4)
        lay.setSpacing(8)
        lay.addWidget(self.title)
        lay.addWidget(self.subject)
        lay.addWidget(self.kind_combo)
        lay.addWidget(self.expected_edit, 1)
        lay.addWidget(self.cancel_button)
        lay.addWidget(self.add_button)
        self.kind_combo.currentIndexChanged.connect(self._on_kind)
        self.add_button.clicked.connect(self._on_add)
        self.expected_edit.returnPressed.connect(self._on_add)
        self.cancel_button.clicked.connect(self._on_dismiss)
        self.title.setText("Assert")
        self.setStyleSheet(f"QFrame#assertionPanel {{ background: #1e2a40; border: 1px solid {COLORS['accent']};"
                           " border-radius: 4px; }")
        self.hide()

    def show_pick(self, pick: ElementPicked) -> None:
        """Offer the kinds suggested for ``pick`` (best first), the expected value prefilled."""
        self.pick = pick
        d = pick.descriptor
        if pick.page_text or d.is_empty:
            what = f"selected text \u201c{_esc(_short(pick.text))}\u201d"
        else:
            what = f"<b>{_esc(d.role or d.tag or 'element')}</b> \u201c{_esc(_short(d.label_text or pick.text))}\u201d"
        state = [s for s, on in (("disabled", not pick.enabled), ("hidden", not pick.visible)) if on]
        self.subject.setText(what + (f" <span style='color:{COLORS['muted']}'>({', '.join(state)})</span>"
                                     if state else ""))
        self.subject.setToolTip(pick.text or d.label_text)
        kinds = list(pick.suggested) or list(_PAGE_KINDS if pick.page_text else ASSERTION_KINDS)
        self.kind_combo.blockSignals(True)
        self.kind_combo.clear()
        for kind in kinds:  # a plain-words label; the kind itself travels as the item's data
            self.kind_combo.addItem(ASSERTION_LABELS.get(kind, kind), kind)
        self.kind_combo.setCurrentIndex(0)
        self.kind_combo.blockSignals(False)
        self._on_kind()
        self.show()
        self.kind_combo.setFocus()

    @property
    def kind(self) -> str:
        """The assertion kind chosen (``"text_equals"``, ``"hidden"``...), "" when none."""
        return str(self.kind_combo.currentData() or "")

    def select_kind(self, kind: str) -> None:
        """Choose ``kind`` among the offered ones."""
        self.kind_combo.setCurrentIndex(self.kind_combo.findData(kind))

    def expected_for(self, kind: str) -> str:
        """The expected value ``kind`` checks, from the pick: its text, value or count."""
        p = self.pick
        if p is None or kind in _NO_EXPECTED:
            return ""
        if kind == "value":
            return p.value
        if kind == "count":
            return str(p.count)
        return p.text

    @property
    def hint(self) -> str:
        """What the chosen kind checks (the expected field's tooltip)."""
        return self.expected_edit.toolTip()

    def _on_kind(self, *_args: Any) -> None:
        kind = self.kind
        self.expected_edit.setText(self.expected_for(kind))
        self.expected_edit.setCursorPosition(0)
        self.expected_edit.setEnabled(kind not in _NO_EXPECTED)
        hints = {
            "count": f"elements matching {self.pick.count_selector}" if self.pick and self.pick.count_selector
            else "elements like this one",
            "text_contains": "the element's text contains this",
            "text_equals": "the element's whole text",
            "text_appears": "this text is on the page after the step",
            "text_absent": "this text is NOT on the page once your next action is done",
            "hidden": "checked once your next action is done: the element is gone or hidden",
            "value": "the field's current value",
        }
        hint = hints.get(kind, "no expected value needed")
        self.expected_edit.setToolTip(hint)
        self.expected_edit.setPlaceholderText(hint)
        self.kind_combo.setToolTip(hint)

    def _on_add(self) -> None:
        if self.pick is None or not self.kind:
            return
        self.add_requested.emit(self.pick.pick_id, self.kind, self.expected_edit.text())
        self.pick = None
        self.hide()

    def _on_dismiss(self) -> None:
        self.pick = None
        self.hide()
        self.dismissed.emit()


class _StepsTable(QTableView):
    def __init__(self, model: RecordedStepsModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setModel(model)
        self.setObjectName("recordedSteps")
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                             | QAbstractItemView.EditTrigger.EditKeyPressed)
        self.setAlternatingRowColors(True)
        self.setShowGrid(False)
        self.setWordWrap(False)
        self.setIconSize(THUMB_SIZE)
        self.verticalHeader().hide()
        self.verticalHeader().setDefaultSectionSize(THUMB_SIZE.height() + 10)
        h = self.horizontalHeader()
        h.setHighlightSections(False)
        h.setMinimumSectionSize(28)
        h.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        h.setSectionResizeMode(RecordedStepsModel.COL_TITLE, QHeaderView.ResizeMode.Stretch)
        M = RecordedStepsModel  # noqa: N806
        for col, width in ((M.COL_INDEX, 30), (M.COL_THUMB, THUMB_SIZE.width() + 14), (M.COL_ACTION, 66),
                           (M.COL_VALUE, 140), (M.COL_EXPECT, 92), (M.COL_IRREVERSIBLE, 56),
                           (M.COL_READ_ONLY, 78), (M.COL_REPLAY, 260)):
            self.setColumnWidth(col, width)


class RecorderDock(QDockWidget):
    """Record a flow by demonstration: start URL, flow name, Record/Stop, Assert, steps, Save, Replay.

    Parameters
    ----------
    project : ProjectLike
        Where recordings are saved (``project.root``) and what the recorder opens.
    recorder_factory : RecorderFactory | None
        ``factory(project, flow_name, url, on_event, headless)``; default the
        real ``RecorderRunner``.
    headless : bool
        Record on a headless Chromium (input comes from the live view).
    close_timeout : float
        Seconds to wait for the recorder thread when closing it.

    Attributes
    ----------
    replay_handler : Callable[[str], bool] | None
        Called with the saved flow's name by Replay; True when a run started
        (the main window reloads the project and starts the flow).  Replay is
        disabled without one.

    Signals
    -------
    recording_changed(bool)
        Recording started (the live view should forward input) or ended.
    inspect_changed(bool)
        Assert (inspect) mode on / off.
    flow_saved(str, str)
        ``(flow name, path of the flow file)`` after a save.
    state_changed(str)
        The :class:`RecorderState` value after each change.
    """

    recording_changed = Signal(bool)
    inspect_changed = Signal(bool)
    flow_saved = Signal(str, str)
    state_changed = Signal(str)

    def __init__(self, project: ProjectLike, *, recorder_factory: RecorderFactory | None = None,
                 headless: bool = True, close_timeout: float = 10.0, parent: QWidget | None = None) -> None:
        super().__init__("Recorder", parent)
        self.setObjectName("recorderDock")
        self.project = project
        self.headless = headless
        self.replay_handler: Callable[[str], bool] | None = None
        self._factory = recorder_factory or default_recorder_factory
        self._close_timeout = close_timeout
        self._state = RecorderState.IDLE
        self._dirty = False
        self._run_active = False
        self._recording_name = ""
        self._started_url = ""
        self._saved_name = ""
        self._replay_flow = ""
        self._replay_running = False
        self._last_move = 0.0
        self.last_saved: Path | None = None
        #: The flow file as the dock last wrote or read it: ``(path, bytes)``; a change on disk since is never
        #: overwritten silently (an accepted correction, a heal accepted on the command line, a hand edit).
        self._disk: tuple[Path, bytes] | None = None
        #: The "changed on disk" question while it is open, and its buttons by choice (tests click them).
        self.conflict_box: QMessageBox | None = None
        self.conflict_buttons: dict[str, Any] = {}
        self._stop_timer = QTimer(self)
        self._stop_timer.setSingleShot(True)
        self._stop_timer.timeout.connect(self._on_stop_timeout)
        self.bridge = RecorderBridge(self)
        self.model = RecordedStepsModel(self)
        self.model.set_secrets(_project_secrets(project))
        self._build()
        self._connect()
        self.name_edit.setText(self._unused_name())
        self._update()

    # --- building -------------------------------------------------------------------------

    def _build(self) -> None:
        sp = QStyle.StandardPixmap
        style = self.style()
        self.url_edit = QLineEdit()
        self.url_edit.setObjectName("recorderUrl")
        self.url_edit.setPlaceholderText(f"empty: {_site_text(self.project)} \u00b7 or a URL or /path")
        self.url_edit.setClearButtonEnabled(True)
        self.name_edit = QLineEdit()
        self.name_edit.setObjectName("recorderFlowName")
        self.name_edit.setPlaceholderText("flow name (file stem)")
        self.name_edit.setMinimumWidth(170)
        self.name_edit.setMaximumWidth(240)
        self.record_button = QPushButton("\u25cf Record")
        self.record_button.setObjectName("recordButton")
        self.record_button.setToolTip("Open Chromium on the start URL and record what you do in the live view")
        self.record_button.setStyleSheet(f"QPushButton:enabled {{ color: {_RED}; font-weight: bold; }}")
        self.stop_button = QPushButton(style.standardIcon(sp.SP_MediaStop), "Stop")
        self.stop_button.setToolTip("Stop recording (pending typing is kept) and close the browser")
        self.assert_button = QPushButton("\u25ce Assert")
        self.assert_button.setCheckable(True)
        self.assert_button.setStyleSheet(f"QPushButton:checked {{ background: #2f3a52; border: 1px solid "
                                         f"{COLORS['accent']}; color: #ffffff; }}")
        self.assert_button.setToolTip("Pick an element (or select text) in the live view to add a check "
                                      "(Alt+Shift+A in the page turns it on and off too)")
        self.save_button = QPushButton(style.standardIcon(sp.SP_DialogSaveButton), "Save")
        self.save_button.setToolTip("Save the edited flow (and its element crops) into the project's flows/")
        self.replay_button = QPushButton(style.standardIcon(sp.SP_MediaPlay), "Replay")
        self.replay_button.setToolTip("Run the saved flow with the engine; each step's verdict shows in Replay")

        top = QHBoxLayout()
        top.setContentsMargins(8, 6, 8, 2)
        top.setSpacing(6)
        for text, w, stretch in (("URL", self.url_edit, 3), ("Flow", self.name_edit, 1)):
            label = QLabel(text)
            label.setObjectName("panelTitle")
            top.addWidget(label)
            top.addWidget(w, stretch)
        for b in (self.record_button, self.stop_button, self.assert_button):
            top.addWidget(b)
        sep = QFrame()
        sep.setFrameShape(QFrame.Shape.VLine)
        sep.setStyleSheet(f"color: {COLORS['border']}")
        top.addWidget(sep)
        top.addWidget(self.save_button)
        top.addWidget(self.replay_button)

        self.message = QLabel()
        self.message.setObjectName("recorderMessage")
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.TextFormat.RichText)
        self.message.setContentsMargins(10, 0, 4, 0)
        self.message.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        # two lines, always: a message that comes, goes or grows never moves the table (trial-14); a longer
        # one is whole in its tooltip
        self.message.setFixedHeight(2 * self.message.fontMetrics().lineSpacing())
        self.message.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.name_hint = QLabel()
        self.name_hint.setObjectName("recorderNameHint")
        self.name_hint.setTextFormat(Qt.TextFormat.RichText)
        self.name_hint.setContentsMargins(4, 0, 10, 0)
        self.name_hint.hide()
        note = QHBoxLayout()
        note.setContentsMargins(0, 0, 0, 0)
        note.addWidget(self.message, 1)
        note.addWidget(self.name_hint, 0, Qt.AlignmentFlag.AlignRight)

        def tool(text: str, tip: str, key: str = "", checkable: bool = False) -> QToolButton:
            b = QToolButton()
            a = QAction(text, self)
            a.setToolTip(tip + (f" ({QKeySequence(key).toString()})" if key else ""))
            if key:
                a.setShortcut(QKeySequence(key))
                a.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
                self.addAction(a)
            a.setCheckable(checkable)
            b.setDefaultAction(a)
            b.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
            return b

        self.rename_button = tool("Rename", "Rename the step", "F2")
        self.delete_button = tool("Delete", "Delete the step", "Delete")
        self.up_button = tool("\u25b2 Up", "Move the step up", "Alt+Up")
        self.down_button = tool("\u25bc Down", "Move the step down", "Alt+Down")
        self.param_button = tool("{x} Make parameter\u2026",
                                 "Turn the typed / chosen value - or, for a click, the element's name - into a "
                                 "{parameter}; the recorded text becomes its default")
        self.irreversible_button = tool("Irreversible", "The step writes data: no retry when its check fails",
                                        checkable=True)
        self.read_only_button = tool("Read-only", "The step has no side effects", checkable=True)
        self.count_label = QLabel()
        self.count_label.setObjectName("panelTitle")
        edit = QHBoxLayout()
        edit.setContentsMargins(6, 0, 8, 0)
        edit.setSpacing(2)
        for b in (self.rename_button, self.delete_button, self.up_button, self.down_button, self.param_button,
                  self.irreversible_button, self.read_only_button):
            edit.addWidget(b)
        edit.addStretch(1)
        edit.addWidget(self.count_label)

        self.table = _StepsTable(self.model)
        self.assertion_panel = AssertionPanel()
        keep = self.assertion_panel.sizePolicy()
        keep.setRetainSizeWhenHidden(True)  # its room is kept: the bar appearing never pushes the table (trial-24)
        self.assertion_panel.setSizePolicy(keep)
        strip = QHBoxLayout()
        strip.setContentsMargins(6, 0, 6, 0)
        strip.addWidget(self.assertion_panel)

        body = QWidget()
        body.setObjectName("recorderBody")
        lay = QVBoxLayout(body)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        lay.addLayout(top)
        lay.addLayout(note)
        lay.addLayout(edit)
        lay.addLayout(strip)
        lay.addWidget(self.table, 1)
        body.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Expanding)
        self.setWidget(body)

    def _connect(self) -> None:
        b = self.bridge
        b.recording_started.connect(self._on_started)
        b.step_recorded.connect(self._on_step_recorded)
        b.step_removed.connect(self._on_step_removed)
        b.element_picked.connect(self._on_picked)
        b.inspect_changed.connect(self._on_page_inspect)
        b.live_frame.connect(self._on_live_frame)
        b.recording_stopped.connect(self._on_stopped)
        b.recorder_error.connect(self._on_error)
        self.record_button.clicked.connect(self.start_recording)
        self.stop_button.clicked.connect(self.stop_recording)
        self.assert_button.toggled.connect(self.set_inspect)
        self.save_button.clicked.connect(self._on_save_clicked)
        self.replay_button.clicked.connect(self.replay)
        self.name_edit.textChanged.connect(lambda _t: self._update())
        self.rename_button.defaultAction().triggered.connect(self._on_rename)
        self.delete_button.defaultAction().triggered.connect(self.delete_selected)
        self.up_button.defaultAction().triggered.connect(lambda: self.move_selected(-1))
        self.down_button.defaultAction().triggered.connect(lambda: self.move_selected(1))
        self.param_button.defaultAction().triggered.connect(self._on_make_parameter)
        self.irreversible_button.defaultAction().triggered.connect(
            lambda on: self._on_flag(self.model.set_irreversible, on))
        self.read_only_button.defaultAction().triggered.connect(lambda on: self._on_flag(self.model.set_read_only, on))
        self.assertion_panel.add_requested.connect(self.add_assertion)
        self.model.edited.connect(self._on_edited)
        self.model.rowsInserted.connect(self._on_rows_inserted)
        self.model.rowsRemoved.connect(lambda *_a: self._update())
        self.model.modelReset.connect(self._update)
        self.model.dataChanged.connect(lambda *_a: self._update_edit_buttons())
        self.table.selectionModel().currentRowChanged.connect(lambda *_a: self._update_edit_buttons())

    # --- public API -----------------------------------------------------------------------

    @property
    def state(self) -> RecorderState:
        return self._state

    @property
    def is_recording(self) -> bool:
        """True from Record until the recorder reported the end (the live view forwards input)."""
        return self._state in (RecorderState.STARTING, RecorderState.RECORDING, RecorderState.STOPPING)

    @property
    def inspecting(self) -> bool:
        return self.assert_button.isChecked()

    @property
    def dirty(self) -> bool:
        """Steps recorded or edited since the last save."""
        return self._dirty

    def flow_name(self) -> str:
        return self.name_edit.text().strip()

    def set_project(self, project: ProjectLike) -> None:
        """Use ``project`` (reloaded) for the next recording, saves and name checks.

        When the flow file the dock saved changed on disk meanwhile, the dock reloads it if nothing was edited
        since, else says so (Save then asks: :meth:`save`)."""
        self.project = project
        self.model.set_secrets(_project_secrets(project))
        self.url_edit.setPlaceholderText(f"empty: {_site_text(project)} \u00b7 or a URL or /path")
        self.sync_with_disk()
        self._update()

    def disk_changed(self) -> bool:
        """True when the flow file the dock last wrote or read differs on disk now (or is gone)."""
        if self._disk is None:
            return False
        path, data = self._disk
        try:
            return path.read_bytes() != data
        except OSError:
            return True

    def sync_with_disk(self) -> None:
        """Reload the saved flow's file when it changed on disk and nothing was edited here; else only say so."""
        if self.is_recording or not self.disk_changed():
            return
        assert self._disk is not None
        rel = _esc(_rel(self._disk[0], self.project.root))
        if not self._disk[0].is_file():
            self._say(f"{rel} was removed on disk; Save writes it again.", _AMBER)
        elif not self._dirty:
            self.reload_from_disk()
        else:
            self._say(f"{rel} changed on disk since your last save (a correction, a heal or a hand edit); "
                      "Save will not overwrite it silently.", _AMBER)

    def reload_from_disk(self) -> bool:
        """Show the saved flow's file as it is on disk, dropping the edits here; False when it does not load."""
        if self._disk is None:
            return False
        path = self._disk[0]
        try:
            flow, crops, data = _read_flow_file(path)
        except (ProjectError, OSError) as exc:
            self._say(f"{_esc(_rel(path, self.project.root))} changed on disk and does not load: {_esc(str(exc))}",
                      _RED)
            return False
        self.model.load_saved(flow, crops)
        self._disk = (path, data)
        self._dirty = False
        self._saved_name = path.stem
        self.last_saved = path
        self.name_edit.setText(path.stem)
        self._set_state(RecorderState.SAVED)
        self._update()
        self._say(f"Reloaded {_esc(_rel(path, self.project.root))} from disk ({len(flow.steps)} steps): it changed "
                  "there since the last save.", _AMBER)
        return True

    def set_run_active(self, active: bool) -> None:
        """An engine run is in progress: no new recording, no replay meanwhile."""
        self._run_active = bool(active)
        self._update()

    def start_recording(self) -> bool:
        """Start recording into the flow named in the name field; False when it cannot start."""
        name = self.flow_name()
        if self.is_recording or self._run_active or not valid_flow_name(name):
            return False
        if self._dirty and self.model.rowCount() and not self._confirm_discard():
            return False
        url = self.url_edit.text().strip() or None
        self.model.clear()
        self.assertion_panel.hide()
        self._dirty = False
        self._saved_name = ""
        self._disk = None
        self._recording_name = name
        self._started_url = url or ""
        self._set_state(RecorderState.STARTING)
        self.recording_changed.emit(True)
        self._say(f"Starting Chromium for <b>{_esc(name)}</b>\u2026")
        try:
            self.bridge.open(self.project, name, url, self._factory, headless=self.headless,
                             close_timeout=self._close_timeout)
        except Exception as exc:  # noqa: BLE001 - any recorder start failure is shown, not raised
            self.bridge.release(timeout=self._close_timeout)
            self._set_state(RecorderState.IDLE)
            self.recording_changed.emit(False)
            self._say(f"Could not start the recorder: {_esc(type(exc).__name__)}: {_esc(str(exc))}", _RED)
            return False
        return True

    def stop_recording(self) -> None:
        """Ask the recorder to finish; the steps become saveable when it reports ``RecordingStopped``."""
        if self._state not in (RecorderState.STARTING, RecorderState.RECORDING):
            return
        self._uncheck_inspect()
        self._set_state(RecorderState.STOPPING)
        if not self.bridge.stop():
            self._finish_without_recorder("the recorder is gone")
        else:
            self._say("Stopping\u2026 (flushing pending typing, closing the browser)")
            self._stop_timer.start(round(max(self._close_timeout, 1.0) * 1000))

    def set_inspect(self, on: bool) -> None:
        """Assert mode: clicks in the live view pick an element instead of acting on it."""
        on = bool(on) and self._state is RecorderState.RECORDING
        if self.assert_button.isChecked() != on:
            self.assert_button.blockSignals(True)
            self.assert_button.setChecked(on)
            self.assert_button.blockSignals(False)
        self.bridge.send(SetInspect(on))
        if not on:
            self._keep_pending_check()
        self.inspect_changed.emit(on)
        if on:
            self._say("Assert mode: click an element (or select text) in the live view to check it.")

    def _on_page_inspect(self, on: bool) -> None:
        """The page turned assert mode on or off itself (Alt+Shift+A, Escape): the button shows it, checked or
        not, and the live view picks or acts accordingly; nothing is sent back (the page is already there)."""
        on = bool(on) and self._state is RecorderState.RECORDING
        if self.assert_button.isChecked() != on:
            self.assert_button.blockSignals(True)
            self.assert_button.setChecked(on)
            self.assert_button.blockSignals(False)
        pending = False if on else self._keep_pending_check()
        self.inspect_changed.emit(on)
        if not pending:
            self._say("Assert mode (Alt+Shift+A): click an element (or select text) in the live view to check it."
                      if on else "Assert mode off: clicks act on the page again.")

    def _keep_pending_check(self) -> bool:
        """Leaving assert mode (the button, Alt+Shift+A or Escape in the page) never drops a picked check
        silently: its bar stays until Add assertion or Dismiss, and the message says so (True then)."""
        panel = self.assertion_panel
        if panel.pick is None or panel.isHidden():
            panel.hide()
            return False
        self._say("Assert mode off: clicks act on the page again. <b>Your check is not added yet</b> \u2014 "
                  "Add assertion or Dismiss in the bar below.", _AMBER)
        return True

    def forward_click(self, x: float, y: float, double: bool = False) -> bool:
        """Forward a click of the live view (CSS px); False when not recording."""
        return self._forward(ForwardClick(x, y, double))

    def forward_move(self, x: float, y: float) -> bool:
        """Forward the pointer position (CSS px), at most every 100 ms, so hover menus open."""
        now = time.monotonic()
        if now - self._last_move < 0.1:
            return False
        self._last_move = now
        return self._forward(ForwardMove(x, y))

    def forward_scroll(self, x: float, y: float, dx: float, dy: float) -> bool:
        return self._forward(ForwardScroll(x, y, dx, dy))

    def forward_text(self, text: str) -> bool:
        return self._forward(ForwardType(text))

    def forward_key(self, key: str) -> bool:
        return self._forward(ForwardKey(key))

    def add_assertion(self, pick_id: int, kind: str, expected: str) -> bool:
        """Ask the recorder for an assert step on pick ``pick_id``."""
        sent = self._forward(AddAssertion(pick_id, kind, expected))
        if sent:
            what = ASSERTION_LABELS.get(kind, kind.replace("_", " "))
            self._say(f"Check added: <b>{_esc(what)}</b>; pick another element or turn Assert off.")
        return sent

    def selected_row(self) -> int:
        idx = self.table.selectionModel().currentIndex()
        return idx.row() if idx.isValid() else -1

    def select_row(self, i: int) -> None:
        if 0 <= i < self.model.rowCount():
            self.table.selectionModel().setCurrentIndex(
                self.model.index(i, RecordedStepsModel.COL_TITLE),
                QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)

    def delete_selected(self) -> None:
        i = self.selected_row()
        if i >= 0:
            self.model.delete(i)
            self.select_row(min(i, self.model.rowCount() - 1))

    def move_selected(self, delta: int) -> None:
        i = self.selected_row()
        if i >= 0:
            self.select_row(self.model.move(i, delta))

    def make_parameter(self, i: int, name: str) -> bool:
        """Parametrize step ``i`` as ``{name}``; shows and returns False when refused."""
        try:
            self.model.make_parameter(i, name)
        except ValueError as exc:
            self._say(_esc(str(exc)), _RED)
            return False
        row = self.model.row(i)
        if row.target_param:
            self._say(f"Step {i + 1} now acts on the element named <b>{{{_esc(name)}}}</b> "
                      f"(default {_esc(repr(row.target_default))}).")
        else:
            self._say(f"Step {i + 1} now types <b>{{{_esc(name)}}}</b> (default {_esc(repr(row.step.action.value))}).")
        return True

    def can_save(self) -> bool:
        """Recording over, steps to save, a valid name, and something new (edits or another name)."""
        return (self._state in (RecorderState.STOPPED, RecorderState.SAVED) and self.model.rowCount() > 0
                and valid_flow_name(self.flow_name())
                and (self._dirty or self._state is RecorderState.STOPPED or self.flow_name() != self._saved_name))

    def edited_flow(self) -> Flow:
        """The flow Save writes: the recorder's flow with the user's edits, named by the name field."""
        return self.model.edited_flow(self.flow_name(), start_url=_path_of(self._started_url))

    def save(self) -> Path | None:
        """Save the edited flow and its crops into the project; the flow file, or None when refused."""
        if not self.can_save():
            return None
        name = self.flow_name()
        note = ""
        if self._disk is not None and _same_file(flow_path(self.project.root, name), self._disk[0]) \
                and self.disk_changed() and self._disk[0].is_file():
            # the file changed on disk since the dock wrote it: never write the stale copy over it
            if not self._dirty:
                self.reload_from_disk()
                if not self.can_save():
                    return None
            else:
                choice = self._ask_conflict(self._disk[0])
                if choice == "reload":
                    self.reload_from_disk()
                    return None
                if choice == "merge":
                    try:
                        flow, crops, _data = _read_flow_file(self._disk[0])
                    except (ProjectError, OSError) as exc:
                        self._say(f"Not saved: {_esc(str(exc))}", _RED)
                        return None
                    lost = self.model.merge_onto(flow, crops)
                    note = (" Not applied: " + _esc("; ".join(lost)) + ".") if lost else ""
                elif choice == "save_as":
                    name = self._unused_variant(name)
                    self.name_edit.setText(name)
                else:
                    self._say(f"Not saved: {_esc(_rel(self._disk[0], self.project.root))} changed on disk; your "
                              "edits are kept here.", _AMBER)
                    return None
        try:
            path = save_recording(self.project.root, self.edited_flow(), self.model.crops())
        except RecordingNotSaved as exc:  # the loader would refuse the file: kept aside, the edits are kept too
            self._say(f"Not saved: {_esc(str(exc))}", _RED)
            return None
        except Exception as exc:  # noqa: BLE001 - a failed save is reported, the edits are kept
            self._say(f"Could not save: {_esc(type(exc).__name__)}: {_esc(str(exc))}", _RED)
            return None
        self.last_saved = path
        self._saved_name = name
        self._dirty = False
        try:
            self._disk = (path, path.read_bytes())
        except OSError:
            self._disk = None
        self._set_state(RecorderState.SAVED)
        self._update()
        self._say(f"Saved <b>{_esc(name)}</b> to {_esc(_rel(path, self.project.root))}"
                  + (" \u2014 Replay runs it now." if self.replay_handler else ".") + note, _AMBER if note else _GREEN)
        self.flow_saved.emit(name, str(path))
        return path

    def replay(self) -> bool:
        """Run the saved flow through the main window's engine (``replay_handler``)."""
        if not self._can_replay():
            return False
        assert self.replay_handler is not None
        name = self._saved_name
        self._replay_flow = name
        self.model.start_replay()
        self._replay_running = True
        if not self.replay_handler(name):
            self._replay_running = False
            self.model.finish_replay()
            self._say(f"Could not start a replay of <b>{_esc(name)}</b> (see the status bar).", _RED)
            self._update()
            return False
        self._say(f"Replaying <b>{_esc(name)}</b>\u2026")
        self._update()
        return True

    def apply_engine_event(self, event: EngineEvent) -> None:
        """Feed engine events (GUI thread); those of the replayed flow fill the Replay column."""
        if not self._replay_flow:
            return
        if isinstance(event, RunFinished):
            if self._replay_running:
                self._replay_running = False
                self.model.finish_replay()
                self._update()
            return
        if isinstance(event, FlowStarted):
            if event.flow == self._replay_flow and not self._dirty:
                self._replay_running = True
                self.model.start_replay()
            return
        if isinstance(event, FlowFinished):
            if event.result.flow == self._replay_flow and self._replay_running:
                self._replay_running = False
                self.model.finish_replay()
                r = event.result
                color = _GREEN if r.status == "passed" else _RED if r.status == "failed" else _AMBER
                self._say(f"Replay of <b>{_esc(r.flow)}</b>: <span style='color:{color}'>{_esc(result_label(r))}</span>"
                          f" \u00b7 {counted(r.heals, 'heal')} \u00b7 {counted(r.invalid_actions, 'invalid action')}"
                          f" \u00b7 {r.seconds:.1f} s")
                self._update()
            return
        if not self._replay_running or getattr(event, "flow", None) != self._replay_flow:
            return
        i = getattr(event, "index", -1)
        res = self.model.replay_result(i)
        if res is None:
            return
        if isinstance(event, StepStarted):
            res.status = "running"
        elif isinstance(event, TargetResolved):
            r = event.resolution
            res.healed, res.strategy = r.healed, ("abstained" if r.abstained else r.strategy)
        elif isinstance(event, VerdictReached):
            res.verdict, res.verdict_reason = event.verdict.kind, event.verdict.reason
        elif isinstance(event, StepFinished):
            res.status, res.error = event.status, event.error
            res.healed = res.healed or event.healed
        elif isinstance(event, EscalationRaised):
            res.status, res.error = "escalated", event.reason
        else:
            return
        self.model.replay_changed(i)

    def shutdown(self, timeout: float | None = None) -> None:
        """Stop and join the recorder (window closing). Idempotent."""
        self.bridge.close(timeout=self._close_timeout if timeout is None else timeout)
        if self.is_recording:
            self._state = RecorderState.STOPPED
            self.recording_changed.emit(False)

    # --- recorder events ------------------------------------------------------------------

    def _on_started(self, event: RecordingStarted) -> None:
        self._started_url = self._started_url or event.start_url or event.url
        if self._state is RecorderState.STARTING:
            self._set_state(RecorderState.RECORDING)
        self._say(f"<span style='color:{_RED}'>\u25cf</span> Recording <b>{_esc(event.flow)}</b> on "
                  f"{_esc(event.url)} \u2014 click, scroll and type in the live view; Assert adds a check; "
                  "Stop when done.")

    def _on_step_recorded(self, event: StepRecorded, crop: QImage) -> None:
        if self._state is RecorderState.STARTING:
            self._set_state(RecorderState.RECORDING)
        self._dirty = True
        self.model.add_recorded(event.index, event.step, event.crop_png, crop, event.same_named)

    def _on_step_removed(self, event: StepRemoved) -> None:
        self.model.remove_recorded(event.index)

    def _on_picked(self, event: ElementPicked) -> None:
        self.assertion_panel.show_pick(event)

    def _on_live_frame(self, _event: LiveFrame, _image: QImage) -> None:
        if self._state is RecorderState.STARTING:
            self._set_state(RecorderState.RECORDING)

    def _on_stopped(self, event: RecordingStopped) -> None:
        self._stop_timer.stop()
        self.model.finish(event.flow, dict(event.crops))
        self._dirty = self.model.rowCount() > 0
        self.bridge.release(timeout=self._close_timeout, wait=False)  # the GUI never waits for the site to close
        self._uncheck_inspect()
        self.assertion_panel.hide()
        was_recording = self.is_recording
        self._set_state(RecorderState.STOPPED)
        if was_recording:
            self.recording_changed.emit(False)
        n = self.model.rowCount()
        reason = "" if event.reason == "stopped" else f" ({_esc(event.reason)})"
        color = _RED if event.reason.startswith("error") else None
        if n:
            self._say(f"Recording stopped{reason}: {counted(n, 'step')}. Edit them, then Save.", color)
        else:
            self._say(f"Recording stopped{reason}: nothing was recorded.", color)

    def _on_error(self, event: RecorderError) -> None:
        self._say(f"Recorder error: {_esc(event.message)}", _RED)
        if event.fatal and self.is_recording:
            # The recorder stopped; a RecordingStopped may still follow (and is applied if it does).
            self._uncheck_inspect()
            self._set_state(RecorderState.STOPPED)
            self._dirty = self.model.rowCount() > 0
            self.recording_changed.emit(False)

    def _on_stop_timeout(self) -> None:
        if self._state is RecorderState.STOPPING:
            self.bridge.release(timeout=1.0)
            self._finish_without_recorder("the recorder did not answer Stop in time; the steps seen so far are kept")

    def _finish_without_recorder(self, why: str) -> None:
        self._set_state(RecorderState.STOPPED)
        self._dirty = self.model.rowCount() > 0
        self.recording_changed.emit(False)
        self._say(f"Recording ended: {_esc(why)}.", _RED)

    # --- handlers -------------------------------------------------------------------------

    def _forward(self, command: Any) -> bool:
        if self._state is not RecorderState.RECORDING:
            return False
        return self.bridge.send(command)

    def _uncheck_inspect(self) -> None:
        if self.assert_button.isChecked():
            self.assert_button.blockSignals(True)
            self.assert_button.setChecked(False)
            self.assert_button.blockSignals(False)
            self.inspect_changed.emit(False)

    def _on_rows_inserted(self, _parent: QModelIndex, first: int, _last: int) -> None:
        self.table.scrollToBottom()
        self._update()

    def _on_edited(self) -> None:
        self._dirty = True
        if self._state is RecorderState.SAVED:
            self._set_state(RecorderState.STOPPED)
            self._say("Edited since the last save \u2014 Save again to replay the changes.")
        self._update()

    def _on_rename(self) -> None:
        i = self.selected_row()
        if i >= 0:
            idx = self.model.index(i, RecordedStepsModel.COL_TITLE)
            self.table.setCurrentIndex(idx)
            self.table.edit(idx)

    def _on_make_parameter(self) -> None:
        i = self.selected_row()
        if i < 0 or not (self.model.row(i).can_parametrize() or self.model.row(i).can_parametrize_target()):
            return
        row = self.model.row(i)
        if row.can_parametrize():
            default = param_slug(row.step.target.label or row.step.target.label_text)
            what = f"the value {row.step.action.value!r}"
        else:
            default = param_slug(row.step.target.role or "target", "target")
            what = f"the element name {row.target_default!r}"
        name, ok = QInputDialog.getText(self, "Make parameter", f"Parameter name for {what}:",
                                        QLineEdit.EchoMode.Normal, default)
        if ok:
            self.make_parameter(i, name)

    def _on_flag(self, setter: Callable[[int, bool], None], on: bool) -> None:
        i = self.selected_row()
        if i >= 0:
            setter(i, on)
        self._update_edit_buttons()

    def _on_save_clicked(self) -> None:
        self.save()

    def _ask_conflict(self, path: Path) -> str:
        """Ask what to do with edits made here while ``path`` changed on disk: ``"merge"`` (apply them to the file
        as it is now), ``"save_as"`` (save them as another flow), ``"reload"`` (drop them) or ``"cancel"``."""
        rel = _rel(path, self.project.root)
        try:
            on_disk = f"it has {len(_read_flow_file(path)[0].steps)} steps"
            loads = True
        except (ProjectError, OSError) as exc:
            on_disk, loads = f"it does not load ({exc})", False
        alt = self._unused_variant(self.flow_name())
        box = QMessageBox(QMessageBox.Icon.Warning, "Flow file changed on disk",
                          f"{rel} changed on disk since you saved it (an accepted correction, a heal or a hand "
                          f"edit): {on_disk}; here you have {self.model.rowCount()} steps with your edits. Saving "
                          "them as they are would drop that change.", parent=self)
        box.setObjectName("recorderConflict")
        box.setInformativeText("Apply your edits to the file as it is now, save them as another flow, or reload "
                               "the file and drop your edits.")
        buttons: dict[str, Any] = {}
        if loads:
            buttons["merge"] = box.addButton("Apply my edits to the file", QMessageBox.ButtonRole.AcceptRole)
        buttons["save_as"] = box.addButton(f"Save mine as {alt}", QMessageBox.ButtonRole.ActionRole)
        buttons["reload"] = box.addButton("Reload the file (drop my edits)", QMessageBox.ButtonRole.DestructiveRole)
        buttons["cancel"] = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(buttons["cancel"])
        self.conflict_box, self.conflict_buttons = box, buttons
        try:
            box.exec()
            clicked = box.clickedButton()
        finally:
            self.conflict_box, self.conflict_buttons = None, {}
        return next((k for k, b in buttons.items() if b is clicked), "cancel")

    def _unused_variant(self, name: str) -> str:
        """``name_2``, ``name_3``...: the first that names no flow of the project."""
        n = 2
        while self._flow_exists(f"{name[:75]}_{n}"):
            n += 1
        return f"{name[:75]}_{n}"

    def _confirm_discard(self) -> bool:
        answer = QMessageBox.question(
            self, "Discard the recording?",
            f"{counted(self.model.rowCount(), 'recorded step')} {'is' if self.model.rowCount() == 1 else 'are'} not saved. Discard them and record again?")
        return answer == QMessageBox.StandardButton.Yes

    # --- state ----------------------------------------------------------------------------

    def _set_state(self, state: RecorderState) -> None:
        if state is self._state:
            return
        self._state = state
        self._update()
        self.state_changed.emit(state.value)

    def _can_replay(self) -> bool:
        return (self._state is RecorderState.SAVED and bool(self._saved_name) and not self._dirty
                and self.replay_handler is not None and not self._run_active and not self._replay_running)

    def _update(self) -> None:
        s = self._state
        name = self.flow_name()
        idle = s in (RecorderState.IDLE, RecorderState.STOPPED, RecorderState.SAVED)
        self.record_button.setEnabled(idle and not self._run_active and valid_flow_name(name))
        self.stop_button.setEnabled(s in (RecorderState.STARTING, RecorderState.RECORDING))
        self.assert_button.setEnabled(s is RecorderState.RECORDING)
        self.url_edit.setEnabled(idle)
        self.save_button.setEnabled(self.can_save())
        exists = bool(name) and self._flow_exists(name) and name != self._saved_name
        self.save_button.setText("Replace" if exists else "Save")
        self.replay_button.setEnabled(self._can_replay())
        self._validate_name(name, exists)
        n = self.model.rowCount()
        status = {RecorderState.IDLE: "", RecorderState.STARTING: "starting", RecorderState.RECORDING: "recording",
                  RecorderState.STOPPING: "stopping", RecorderState.STOPPED: "unsaved" if self._dirty else "",
                  RecorderState.SAVED: "saved"}[s]
        self.count_label.setText(f"{n} step{'s' if n != 1 else ''}" + (f" \u00b7 {status}" if status else ""))
        self._update_edit_buttons()

    def _validate_name(self, name: str, exists: bool) -> None:
        if not name:
            tip, color = "Name the flow: letters, digits, '_' or '-'", _RED
        elif not valid_flow_name(name):
            tip = "Not a file name: use letters, digits, '_' or '-' (no spaces, dots or slashes), up to 64"
            color = _RED
        elif exists:
            tip, color = f"flows/{name}.yaml exists: saving replaces it", _AMBER
        else:
            tip, color = f"saved as flows/{name}.yaml", ""
        self.name_edit.setToolTip(tip)
        self.name_edit.setStyleSheet(f"QLineEdit {{ border: 1px solid {color}; }}" if color else "")
        self.name_hint.setText(f"\u26a0 {_esc(tip)}" if color else "")
        self.name_hint.setStyleSheet(f"color: {color}" if color else "")
        self.name_hint.setVisible(bool(color))

    def _update_edit_buttons(self) -> None:
        i = self.selected_row()
        row = self.model.row(i) if 0 <= i < self.model.rowCount() else None
        has = row is not None
        self.rename_button.setEnabled(has)
        self.delete_button.setEnabled(has)
        self.up_button.setEnabled(has and i > 0)
        self.down_button.setEnabled(has and i < self.model.rowCount() - 1)
        self.param_button.setEnabled(has and (row.can_parametrize() or row.can_parametrize_target()))
        for button, on in ((self.irreversible_button, has and not row.effective().reversible),
                           (self.read_only_button, has and row.effective().read_only)):
            button.setEnabled(has)
            button.defaultAction().blockSignals(True)
            button.defaultAction().setChecked(bool(on))
            button.defaultAction().blockSignals(False)

    def _flow_exists(self, name: str) -> bool:
        if name in getattr(self.project, "flows", {}):
            return True
        try:
            return flow_path(self.project.root, name).exists()
        except OSError:
            return False

    def _unused_name(self) -> str:
        n = 1
        while self._flow_exists(f"recording_{n}"):
            n += 1
        return f"recording_{n}"

    def _say(self, html: str, color: str | None = None) -> None:
        self.message.setText(f"<span style='color:{color}'>{html}</span>" if color and html else html)
        self.message.setToolTip(self.message.text() if html else "")


def _same_file(a: Path, b: Path) -> bool:
    """True when ``a`` and ``b`` name one file (compared with their links resolved)."""
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return a == b


def _read_flow_file(path: Path) -> tuple[Flow, dict[str, bytes], bytes]:
    """``(flow, crops by step id, the file's bytes)`` of a flow file as it is on disk.

    Raises
    ------
    ProjectError
        The file does not load.
    OSError
        It cannot be read.
    """
    data = path.read_bytes()
    flow = load_flow(path)
    crops: dict[str, bytes] = {}
    for st in flow.steps:
        if st.target.crop:
            try:
                crops[st.id] = (path.parent / st.target.crop).read_bytes()
            except OSError:
                pass
    return flow, crops, data


def _project_secrets(project: ProjectLike) -> tuple[str, ...]:
    names = getattr(project, "secret_names", ())
    return tuple(names) if isinstance(names, (tuple, list)) else ()


def _site_text(project: ProjectLike) -> str:
    settings = getattr(project, "settings", None)
    site = getattr(settings, "site", None)
    base = getattr(settings, "base_url", None)
    if site:
        return f"the bundled {site} site"
    if base:
        return f"the base URL {base}"
    return "the project's site"


def _path_of(url: str) -> str:
    if not url:
        return "/"
    parts = urlsplit(url)
    if not parts.scheme:
        return url if url.startswith("/") else f"/{url}"
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def _rel(path: Path, root: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path(root).resolve()))
    except ValueError:
        return str(path)


def _short(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[: n - 1] + "\u2026"


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
