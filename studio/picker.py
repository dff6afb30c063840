"""Pick an element on a step's stored page and make it the step's target, written like an accepted heal.

The pure part (no Qt): :func:`check_pick` says what picking ``element`` on
an observation of a stored step would do - the step's descriptor in the
flow file and the picked element's side by side (fields that change), the
Playwright locator the engine would use for it (the recorded locator of
:func:`core.engine.fastpath.recorded_locator`: test id, role and exact name,
or label) and how many elements of that observation it names, and the
engine's own identity check: the locator chain
(:func:`core.locate.resolve`) run with the new descriptor on that
observation's elements must find exactly the picked element, with the
agreement of two levels on an irreversible step, as for any heal.  It also
prepares the flow file's new text (:func:`core.heal.flowfile.set_step_target`:
only the step's ``target`` changes, comments and layout stay; a stale
``selector`` goes) and the unified diff.

:func:`apply_pick` writes it through the reviewed path heals take: the pick
becomes a heal proposal of the store (strategy ``picked``, score 1.0: a
person's choice, with the screenshot it was picked on), accepted at once by
:meth:`core.heal.review.HealReview.accept`, which refuses when the flow
file changed since the check (SHA-256) or the step's target is not the one
checked, records the diff, cuts the step's crop anew and keeps the other
pending heals of the file valid.  :func:`undo_pick` puts the file (and
the crop) back byte for byte, only while the file is still the one the
pick wrote.

:class:`PickPanel` is the widget: what was picked, the diff of the
descriptor, the locator and whether it is unique, the engine's check, a
confirmation for an irreversible step or another kind of element, *Set as
the step's target* and *Undo*.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from html import escape as _escape
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView, QCheckBox, QHBoxLayout, QHeaderView, QLabel, QPlainTextEdit, QPushButton, QTableWidget,
    QTableWidgetItem, QVBoxLayout, QWidget,
)

from core.act.space import spec
from core.domain import ElementDescriptor, Flow, LocatorConfig, Resolution, Step
from core.engine.fastpath import recorded_locator
from core.heal.book import flow_file_name, new_descriptor
from core.heal.flowfile import FlowEditError, digest, set_step_target, unified_diff
from core.heal.identity import IDENTITY_FIELDS, old_key, proposal_key, same_identity
from core.heal.review import HealReview, HealReviewError
from core.locate import resolve
from core.project.loader import load_flow, write_atomic
from core.project.params import TARGET_FIELDS, placeholders
from core.store import Store, store_path
from core.store.heals import HealTable

from .step_record import ObservationSnapshot, StoredElement
from .theme import COLORS

__all__ = ["PICKED_STRATEGY", "PickError", "PickCheck", "PickResult", "check_pick", "apply_pick", "undo_pick",
           "locator_words", "PickPanel"]

#: Strategy of a heal proposal made by picking an element in the studio (the heal review lists it so).
PICKED_STRATEGY = "picked"
#: Descriptor fields the diff shows first (the identity, then where it was).
_SHOWN_FIELDS = IDENTITY_FIELDS + ("css_path", "bbox")
_OK, _BAD, _WARN = "#3fb96b", "#f0524f", "#f5a524"


class PickError(RuntimeError):
    """A pick could not be checked, written or undone; the message says why in plain words."""


@dataclass(frozen=True)
class PickCheck:
    """What setting ``element`` as the target of step ``step_id`` would do (see the module doc).

    ``changes`` are ``(field, in the flow file, picked)`` for the shown
    fields that differ; ``matches`` the number of elements of the
    observation the ``locator`` names (-1: no locator); ``finds`` whether the
    engine's locator chain finds exactly the picked element with the new
    descriptor; ``blocking`` the reasons it cannot be set (empty: it can),
    ``confirm`` the reasons a person must confirm first.
    """

    flow: Flow
    step: Step
    index: int
    element: StoredElement
    new_target: ElementDescriptor
    changes: tuple[tuple[str, str, str], ...]
    locator: str
    matches: int
    resolution: Resolution
    finds: bool
    blocking: tuple[str, ...]
    confirm: tuple[str, ...]
    path: Path
    old_text: str
    new_text: str
    diff: str

    @property
    def file_digest(self) -> str:
        return digest(self.old_text)

    @property
    def unchanged(self) -> bool:
        """The picked element is the target the file already names (nothing to write)."""
        return self.old_text == self.new_text


@dataclass(frozen=True)
class PickResult:
    """A pick written: the proposal id, the diff applied, the file's text before and after, the crop's old bytes."""

    proposal_id: int
    path: Path
    diff: str
    old_text: str
    new_text: str
    crop: Path | None = None
    old_crop: bytes | None = None


def _show(v: Any) -> str:
    if v in (None, "", (), []):
        return ""
    if isinstance(v, (list, tuple)):
        return ", ".join(f"{x:g}" if isinstance(x, float) else str(x) for x in v)
    return str(v)


def _value(d: ElementDescriptor, f: str) -> str:
    v = getattr(d, f, "")
    if f == "bbox" and v is not None:
        return f"{v.x:.0f}, {v.y:.0f}, {v.width:.0f} \u00d7 {v.height:.0f} px"
    return _show(v)


def escape(text: str) -> str:
    """``text`` for a rich-text label (quotes kept as they are: they are not in an attribute)."""
    return _escape(text, quote=False)


def locator_words(locator: str) -> str:
    """A recorded locator in plain words: ``button named "Save"``, ``test id "save"``, ``field labelled "Email"``."""
    if locator.startswith("internal:testid="):
        return f"test id {locator.split('=', 2)[-1].rstrip(']').rstrip('s')}"
    if locator.startswith("internal:role="):
        role, _, rest = locator[len("internal:role="):].partition("[name=")
        return f"{role} named {rest.rstrip(']').rstrip('s')}"
    if locator.startswith("internal:label="):
        return f"field labelled {locator[len('internal:label='):].rstrip('s')}"
    return locator


def _locator_matches(locator: str, target: ElementDescriptor, obs: ObservationSnapshot) -> int:
    """How many visible elements of ``obs`` the recorded locator of ``target`` names (-1 without a locator)."""
    if not locator:
        return -1
    shown = [e.descriptor for e in obs.elements if e.visible]
    if locator.startswith("internal:testid="):
        return sum(d.test_id == target.test_id for d in shown)
    if locator.startswith("internal:role="):
        return sum(d.role == target.role and d.name == target.name for d in shown)
    return sum(d.label == target.label for d in shown)


def _flow_step(flow: Flow, step_id: str) -> tuple[Flow, Step, int]:
    """The flow as its file is now (a stale copy in memory could name another target) and the step in it."""
    if not flow.source:
        raise PickError(f"The flow \u2018{flow.name}\u2019 has no file to write the target into.")
    try:
        fresh = load_flow(flow.source)
    except Exception as exc:  # noqa: BLE001 - said, never written
        raise PickError(f"The flow file {flow.source} does not load ({exc}); nothing can be set.") from None
    for i, s in enumerate(fresh.steps):
        if s.id == step_id:
            return fresh, s, i
    raise PickError(f"The flow file {flow.source} has no step \u2018{step_id}\u2019 any more; nothing can be set.")


def check_pick(flow: Flow, step_id: str, element: StoredElement, obs: ObservationSnapshot,
               config: LocatorConfig | None = None) -> PickCheck:
    """What making ``element`` (of observation ``obs``) the target of step ``step_id`` would do; nothing is written.

    Raises
    ------
    PickError
        The flow has no file, the file does not load, or has no such step.
    """
    fresh, step, index = _flow_step(flow, step_id)
    new = new_descriptor(step.target, element.descriptor)
    changes = tuple((f, _value(step.target, f), _value(new, f)) for f in _SHOWN_FIELDS
                    if _value(step.target, f) != _value(new, f))
    locator = recorded_locator(replace(step, target=new, selector=""))
    matches = _locator_matches(locator, new, obs)
    irreversible = not step.reversible
    res = resolve(new, obs.candidates(), config=config or LocatorConfig(), irreversible=irreversible,
                  anchors=obs.anchors)
    finds = not res.abstained and res.ref == element.ref
    blocking: list[str] = []
    confirm: list[str] = []
    if any(placeholders(getattr(step.target, f)) for f in TARGET_FIELDS):
        blocking.append("This step's target has parameters (a {name} in it): each run names another element, so "
                        "one picked element cannot stand for it; edit the flow file by hand.")
    if spec(step.action.kind).target in ("none", "selector"):
        blocking.append(f"A \u2018{step.action.kind}\u2019 step acts on no element: it has no target to set.")
    if not finds:
        if res.abstained:
            blocking.append(f"With this target the engine would not find the element on this page: {res.reason}")
        else:
            other = obs.element(res.ref or "")
            blocking.append("With this target the engine would act on another element"
                            + (f" ({other.words()})" if other else "") + " on this page.")
    if matches > 1:
        confirm.append(f"The locator names {matches} elements on this page; the engine tells them apart by "
                       "their place and neighbours.")
    if irreversible:
        confirm.append("This step sends data that cannot be taken back (it is irreversible): make sure this is "
                       "the element it must use.")
    old_kind = step.target.role or step.target.tag
    new_kind = new.role or new.tag
    if old_kind and new_kind and old_kind != new_kind:
        confirm.append(f"The picked element is another kind of element ({old_kind} \u2192 {new_kind}).")
    path = Path(fresh.source)
    try:
        old_text = path.read_text(encoding="utf-8")
        # the element the file names already: nothing to write (a refreshed box is no fix)
        new_text = old_text if same_identity(step.target, new) else set_step_target(
            old_text, step.id, new.to_mapping(), path=path, drop_selector=bool(step.selector))
    except (OSError, FlowEditError) as exc:
        raise PickError(f"The flow file {path} cannot be edited: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - a result that would not load is refused
        raise PickError(f"The flow file {path} would not load with this target: {exc}") from None
    diff = unified_diff(old_text, new_text, path.name)
    return PickCheck(fresh, step, index, element, new, changes, locator, matches, res, finds, tuple(blocking),
                     tuple(confirm), path, old_text, new_text, diff)


def apply_pick(check: PickCheck, project_root: Path | str, *, run_id: str, screenshot: str | None,
               project_name: str = "", store: Store | None = None) -> PickResult:
    """Write ``check``'s target into the flow file through the heal review (see the module doc).

    ``screenshot`` is the store path of the image the element was picked on
    (the new crop is cut from it); ``store`` an open writable store (None:
    the project's, opened and closed here).

    Raises
    ------
    PickError
        The check has blocking reasons, the flow file changed since the
        check, or the step's target is not the one checked; nothing written.
    """
    if check.blocking:
        raise PickError(" ".join(check.blocking))
    if check.unchanged:
        raise PickError("The flow file already names this element; nothing to write.")
    root = Path(project_root).expanduser().resolve()
    try:
        now = check.path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PickError(f"The flow file {check.path} cannot be read ({exc.strerror or exc}); nothing written.") from None
    if now != check.old_text:
        raise PickError(f"{check.path.name} changed on disk since the element was picked; nothing written. "
                        "Pick it again to see the change against the file as it is now.")
    own = store is None
    st = store if store is not None else Store.open(store_path(root))
    crop_path = None
    old_crop = None
    if check.step.target.crop:
        crop_path = (check.path.resolve().parent / check.step.target.crop).resolve()
        try:
            old_crop = crop_path.read_bytes()
        except OSError:
            old_crop = None
    try:
        flow, step, new = check.flow, check.step, check.new_target
        res = check.resolution
        rec, _created = HealTable(st).propose(dict(
            # a person's pick is a decision of its own: a new row each time (a pick undone may be picked again)
            key=proposal_key(flow.name, step.id, step.target, new, kind=f"picked {uuid.uuid4().hex}"),
            old_key=old_key(flow.name, step.id, step.target), project=project_name, flow=flow.name,
            flow_file=flow_file_name(check.path, root), step_id=step.id, step_index=check.index,
            step_title=step.title, kind="heal", status="pending", old_target=step.target.to_mapping(),
            new_target=new.to_mapping(), strategy=PICKED_STRATEGY, score=1.0, margin=float(res.margin),
            top=[{"ref": c.ref, "score": float(c.score), "label": c.label} for c in res.top],
            resolution_reason=f"picked by a person in the studio on run {run_id[:8]}, step {check.index + 1}; "
                              f"the locator chain then said: {res.reason}",
            before_screenshot=screenshot, after_screenshot=None, run_id=run_id, last_run_id=run_id,
            flow_digest=check.file_digest))
        try:
            diff = HealReview(root, st).accept(rec.id)
        except HealReviewError as exc:
            try:
                HealTable(st).review(rec.id, "rejected", reason=f"not written: {exc}")
            except Exception:  # noqa: BLE001 - the row says pending then; the message below says why
                pass
            raise PickError(str(exc)) from None
        new_text = check.path.read_text(encoding="utf-8")
        return PickResult(rec.id, check.path, diff, check.old_text, new_text, crop_path, old_crop)
    finally:
        if own:
            st.close()


def undo_pick(result: PickResult) -> str:
    """Put the flow file (and the step's crop) back as they were before ``result``; returns the diff undone.

    Raises
    ------
    PickError
        The file changed since the pick wrote it (someone edited or a heal
        was accepted): nothing is undone.
    """
    try:
        now = result.path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PickError(f"The flow file {result.path} cannot be read ({exc.strerror or exc}); nothing undone.") from None
    if now != result.new_text:
        raise PickError(f"{result.path.name} changed since the target was set; nothing undone (edit it by hand, "
                        "or set the target again).")
    write_atomic(result.path, result.old_text.encode("utf-8"))
    if result.crop is not None and result.old_crop is not None:
        write_atomic(result.crop, result.old_crop)
    return unified_diff(result.new_text, result.old_text, result.path.name)


# --- the widget -------------------------------------------------------------------------------------------------


def _cell(text: str, color: str | None = None) -> QTableWidgetItem:
    it = QTableWidgetItem(text)
    it.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
    if color:
        it.setForeground(QBrush(QColor(color)))
    it.setToolTip(text)
    return it


class PickPanel(QWidget):
    """The picked element, what setting it as the step's target changes, and Set / Undo (see the module doc).

    :meth:`show_check` fills it from a :class:`PickCheck`; the owner calls
    :meth:`set_context` with the project folder, run id and the picked
    image's store path.  ``applied`` carries the :class:`PickResult`,
    ``undone`` the flow file's path.
    """

    applied = Signal(object)
    undone = Signal(object)

    _FIELD_WORDS = {"tag": "tag", "role": "role", "name": "accessible name", "label": "label", "text": "text",
                    "placeholder": "placeholder", "id": "id", "name_attr": "name attribute", "type": "type",
                    "href": "link", "test_id": "test id", "alt": "alt text", "title": "title", "frame": "frame",
                    "shadow": "shadow host", "container": "in dialog or form", "css_path": "CSS path",
                    "bbox": "box (CSS px)"}

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("pickPanel")
        self.check: PickCheck | None = None
        self.result: PickResult | None = None
        self.project_root: Path | None = None
        self.project_name = ""
        self.run_id = ""
        self.screenshot: str | None = None
        self.heading = QLabel("Press Pick, then click an element on the screenshot to make it this step's target.")
        self.heading.setObjectName("pickHeading")
        self.heading.setWordWrap(True)
        self.table = QTableWidget(0, 3)
        self.table.setObjectName("pickDiff")
        self.table.setHorizontalHeaderLabels(["Field", "In the flow file", "Picked"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        hh = self.table.horizontalHeader()
        hh.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        hh.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        hh.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.locator_label = QLabel("")
        self.locator_label.setObjectName("pickLocator")
        self.locator_label.setWordWrap(True)
        self.locator_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.engine_label = QLabel("")
        self.engine_label.setObjectName("pickEngineCheck")
        self.engine_label.setWordWrap(True)
        self.confirm_text = QLabel("")
        self.confirm_text.setObjectName("pickConfirmText")
        self.confirm_text.setWordWrap(True)
        self.confirm_box = QCheckBox("I checked: this is the element the step must use")
        self.confirm_box.setObjectName("pickConfirm")
        self.confirm_box.toggled.connect(lambda _on: self._update_buttons())
        self.set_button = QPushButton("Set as the step's target")
        self.set_button.setObjectName("pickSet")
        self.set_button.clicked.connect(self.apply)
        self.undo_button = QPushButton("Undo")
        self.undo_button.setObjectName("pickUndo")
        self.undo_button.setToolTip("Put the flow file back as it was before the target was set")
        self.undo_button.clicked.connect(self.undo)
        self.result_label = QLabel("")
        self.result_label.setObjectName("pickResult")
        self.result_label.setWordWrap(True)
        self.result_label.setMinimumHeight(44)  # two lines: a refusal says why and what to do
        self.diff_view = QPlainTextEdit()
        self.diff_view.setObjectName("pickFileDiff")
        self.diff_view.setReadOnly(True)
        self.diff_view.setMinimumHeight(120)
        self.diff_view.setStyleSheet("font-family: monospace;")
        buttons = QHBoxLayout()
        buttons.addWidget(self.set_button)
        buttons.addWidget(self.undo_button)
        buttons.addStretch(1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.heading)
        lay.addWidget(self.table)
        lay.addWidget(self.locator_label)
        lay.addWidget(self.engine_label)
        lay.addWidget(self.confirm_text)
        lay.addWidget(self.confirm_box)
        lay.addLayout(buttons)
        lay.addWidget(self.result_label)
        lay.addWidget(QLabel("Change to the flow file:"))
        lay.addWidget(self.diff_view, 1)
        self.clear()

    def set_context(self, project_root: Path | None, run_id: str, screenshot: str | None,
                    project_name: str = "") -> None:
        self.project_root, self.run_id, self.screenshot = project_root, run_id, screenshot
        self.project_name = project_name

    def clear(self, note: str = "") -> None:
        """Nothing picked (``note``: why, in plain words)."""
        self.check = None
        self.heading.setText(note or "Press Pick, then click an element on the screenshot to make it this step's "
                                     "target.")
        self.table.setRowCount(0)
        self.locator_label.setText("")
        self.engine_label.setText("")
        self.confirm_box.hide()
        self.confirm_text.hide()
        self.confirm_box.setChecked(False)
        self.diff_view.setPlainText("")
        self._update_buttons()

    def show_check(self, check: PickCheck) -> None:
        """Show what setting the picked element as the target would do."""
        self.check = check
        self.result_label.setText("")
        self.heading.setText(f"<b>Picked:</b> {escape(check.element.words())} \u00b7 step {check.index + 1} "
                             f"\u2018{escape(check.step.title)}\u2019 of {escape(check.flow.name)}")
        self.table.setRowCount(len(check.changes))
        for row, (f, old, new) in enumerate(check.changes):
            self.table.setItem(row, 0, _cell(self._FIELD_WORDS.get(f, f)))
            self.table.setItem(row, 1, _cell(old or "\u2014", COLORS["muted"] if not old else None))
            self.table.setItem(row, 2, _cell(new or "\u2014", _WARN if f in IDENTITY_FIELDS else None))
        self.table.resizeRowsToContents()
        rows = sum(self.table.rowHeight(r) for r in range(self.table.rowCount()))
        self.table.setFixedHeight(min(self.table.horizontalHeader().height() + rows + 6, 320))
        if check.unchanged:
            self.heading.setText(self.heading.text() + " \u00b7 <i>this is already the step's target</i>")
        if check.locator:
            unique = ("unique on this page" if check.matches == 1 else
                      f"names {check.matches} elements on this page" if check.matches > 1 else
                      "names no visible element on this page")
            color = _OK if check.matches == 1 else _WARN
            self.locator_label.setText(
                f"Locator: <b>{escape(locator_words(check.locator))}</b> \u2014 "
                f"<span style='color:{color}'>{unique}</span><br><span style='color:{COLORS['muted']}'>"
                f"{escape(check.locator)}</span>")
        else:
            self.locator_label.setText(
                "Locator: none that Playwright could use alone (no test id, no role with a name, no label); the "
                "engine finds it by the recorded details and its place.")
        if check.finds and not check.blocking:
            level = "as recorded" if check.resolution.strategy == "exact" else \
                f"by its {check.resolution.strategy.replace('_', ' ')} level"
            self.engine_label.setText(f"<span style='color:{_OK}'>\u2714 The engine finds exactly this element "
                                      f"on this page with the new target ({level}).</span>")
        else:
            self.engine_label.setText("<span style='color:%s'>\u2718 %s</span>"
                                      % (_BAD, escape(" ".join(check.blocking))))
        if check.confirm and not check.blocking:
            self.confirm_text.setText(f"<span style='color:{_WARN}'>\u26a0 {escape(' '.join(check.confirm))}</span>")
            self.confirm_text.show()
            self.confirm_box.show()
        else:
            self.confirm_text.hide()
            self.confirm_box.hide()
        self.confirm_box.setChecked(False)
        self.diff_view.setPlainText(check.diff or "(no change)")
        self._update_buttons()

    def _update_buttons(self) -> None:
        c = self.check
        ok = (c is not None and not c.blocking and not c.unchanged
              and (not c.confirm or self.confirm_box.isChecked()) and self.project_root is not None)
        self.set_button.setEnabled(ok)
        if c is not None and c.confirm and not c.blocking and not self.confirm_box.isChecked():
            self.set_button.setToolTip("Tick the check box first")
        else:
            self.set_button.setToolTip("Write the picked element into the flow file as this step's target "
                                       "(recorded in the heal history)")
        self.undo_button.setEnabled(self.result is not None)

    def apply(self) -> PickResult | None:
        """Write the pick (the button); the result or None, with the reason shown."""
        if self.check is None or not self.set_button.isEnabled() or self.project_root is None:
            return None
        try:
            result = apply_pick(self.check, self.project_root, run_id=self.run_id, screenshot=self.screenshot,
                                project_name=self.project_name)
        except PickError as exc:
            self.result_label.setText(f"<span style='color:{_BAD}'>Not written: {escape(str(exc))}</span>")
            return None
        self.result = result
        self.result_label.setText(f"<span style='color:{_OK}'>Written to {escape(result.path.name)} (heal "
                                  f"#{result.proposal_id}, accepted). Undo puts the file back.</span>")
        self.diff_view.setPlainText(result.diff)
        self.check = None  # written: a second press would write nothing new
        self._update_buttons()
        self.applied.emit(result)
        return result

    def undo(self) -> bool:
        """Undo the last pick written here (the button); False with the reason shown when it cannot."""
        if self.result is None:
            return False
        try:
            undo_pick(self.result)
        except PickError as exc:
            self.result_label.setText(f"<span style='color:{_BAD}'>{escape(str(exc))}</span>")
            return False
        path = self.result.path
        self.result = None
        self.result_label.setText(f"Undone: {escape(path.name)} is as it was before.")
        self._update_buttons()
        self.undone.emit(path)
        return True


def descriptor_rows(d: ElementDescriptor) -> list[tuple[str, str]]:
    """``(field in words, value)`` of a descriptor's non-empty shown fields (the elements list's tooltip)."""
    return [(PickPanel._FIELD_WORDS.get(f, f), _value(d, f)) for f in _SHOWN_FIELDS if _value(d, f)]
