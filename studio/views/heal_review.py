"""Heal review: one queue of proposed flow edits, each with its evidence, accepted only after its diff is shown.

A queue item is anything that follows :class:`ReviewItem` - today the heal
proposals of the store (:class:`HealItem`, over
:class:`core.heal.review.HealReview`); another kind (a flow edit offered
after a takeover) plugs in as another :class:`ReviewSource`.  The panel shows
the selected item's old and new descriptor side by side (``*`` marks a
changed field), the evidence (before/after screenshots with both elements
boxed, the level that won, score and margin, the locator's best candidates)
and the unified diff accepting would make.  **Accept** shows that diff once
more and writes the flow file only when confirmed; **Reject** asks for a
reason (kept with the proposal: the change is never proposed again);
**Edit** lets the reviewer change the new descriptor (YAML), with the diff
recomputed as they type, and accepts the edited one.

No engine logic here: everything comes from :class:`HealReview` (which
checks the flow file did not change since the run, and that the result
loads).  Errors are shown in the panel, never raised into Qt.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol, Sequence

import yaml
from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QImage, QPainter, QPen
from PySide6.QtWidgets import (
    QAbstractItemView, QDialog, QDialogButtonBox, QHBoxLayout, QHeaderView, QInputDialog, QLabel, QListWidget,
    QListWidgetItem, QMenu, QPlainTextEdit, QPushButton, QSizePolicy, QSplitter, QStackedWidget, QTableWidget,
    QTableWidgetItem, QTextEdit, QVBoxLayout, QWidget,
)

from core.progress import counted
from core.domain import ElementDescriptor
from core.domain.resources import module_name

from ..offthread import OffThreadReads, ReadsOffThread
from ..plain_words import strategy_short

__all__ = [
    "ReviewEvidence", "ReviewItem", "ReviewSource", "HealItem", "HealSource", "CorrectionItem", "CorrectionSource",
    "HealReviewPanel", "DiffDialog",
    "EditDialog", "diff_html",
]

#: Box colours: the descriptor the flow file holds (recorded) and the element acted on (found).
OLD_COLOR, NEW_COLOR = "#f0524f", "#3ecf8e"


@dataclass(frozen=True)
class ReviewEvidence:
    """What an item rests on.

    ``old_box`` / ``new_box`` are ``(x, y, w, h)`` in CSS px of the page,
    drawn on the screenshots times ``device_pixel_ratio`` (device px);
    ``score`` / ``margin`` are 0..1; ``top`` holds ``{"ref", "score", "label"}``.
    """

    before: Path | None = None
    after: Path | None = None
    old_box: tuple[float, float, float, float] | None = None
    new_box: tuple[float, float, float, float] | None = None
    device_pixel_ratio: float = 1.0
    strategy: str = ""
    score: float = 0.0
    margin: float = 0.0
    top: tuple[Mapping[str, Any], ...] = ()
    reason: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)


class ReviewItem(Protocol):
    """One proposed flow edit in the queue.

    ``diff``/``accept`` take an optional edited new descriptor (a flow
    file's ``target`` mapping); they raise an exception whose message says
    why nothing can be written.  ``accept`` returns the diff it applied.
    """

    key: str
    kind: str  # "heal", "filled in", "correction"...
    title: str
    subtitle: str
    status: str
    old: Mapping[str, Any]
    new: Mapping[str, Any]
    editable: bool

    def evidence(self) -> ReviewEvidence: ...

    def diff(self, new: Mapping[str, Any] | None = None) -> str: ...

    def accept(self, new: Mapping[str, Any] | None = None) -> str: ...

    def reject(self, reason: str) -> None: ...


class ReviewSource(Protocol):
    """Where queue items come from (re-read on every refresh)."""

    def items(self, *, all_states: bool = False) -> list[ReviewItem]: ...


def _box(target: Mapping[str, Any]) -> tuple[float, float, float, float] | None:
    b = target.get("bbox")
    if isinstance(b, (list, tuple)) and len(b) == 4:
        return tuple(float(v) for v in b)  # type: ignore[return-value]
    return None


def _label(d: Mapping[str, Any]) -> str:
    name = d.get("name") or d.get("label") or d.get("text") or d.get("placeholder") or d.get("id") or ""
    return f"{d.get('role') or d.get('tag') or '-'} \u2018{str(name)[:40]}\u2019" if d else "(none)"


class HealItem:
    """A heal proposal of the store as a queue item (every call opens the store briefly)."""

    editable = True

    def __init__(self, root: Path, rec: Any) -> None:
        self.root, self.rec = root, rec
        self.id = int(rec.id)
        self.key = f"heal:{rec.id}"
        self.kind = "filled in" if rec.kind == "filled_in" else "heal"
        self.status = rec.status
        # "Heal #1" and "Correction #1" are two numberings: each says which (trial: both read "#1")
        self.title = f"Heal #{rec.id} \u00b7 {rec.flow} \u00b7 step {rec.step_index + 1} {rec.step_title}"
        self.subtitle = (f"{_label(rec.old_target)} \u2192 {_label(rec.new_target)} \u00b7 "
                         f"{strategy_short(rec.strategy)} "
                         f"{rec.score:.2f} \u00b7 seen {rec.seen}, reused {rec.reused}")
        self.old: Mapping[str, Any] = dict(rec.old_target)
        self.new: Mapping[str, Any] = dict(rec.new_target)
        self.flow_file = rec.flow_file

    def _review(self) -> Any:
        from core.heal.review import HealReview  # noqa: PLC0415 - the panel imports without the store

        return HealReview(self.root)

    def evidence(self) -> ReviewEvidence:
        with self._review() as r:
            ev = r.evidence(self.id)
        dpr = float(self.new.get("device_pixel_ratio") or self.old.get("device_pixel_ratio") or 1.0)
        notes = (f"first seen in run {ev.run_id}; seen {ev.seen}, reused {ev.reused}, reuse failed "
                 f"{ev.reuse_failed}",)
        if self.rec.reason:
            notes += (f"review: {self.rec.reason}",)
        return ReviewEvidence(ev.before_screenshot, ev.after_screenshot, _box(self.old), _box(self.new), dpr,
                              ev.strategy, ev.score, ev.margin, tuple(ev.top), ev.reason, notes)

    def diff(self, new: Mapping[str, Any] | None = None) -> str:
        if self.status != "pending":
            return self.rec.diff or ""
        with self._review() as r:
            return r.diff(self.id, new)

    def accept(self, new: Mapping[str, Any] | None = None) -> str:
        with self._review() as r:
            return r.accept(self.id, new)

    def reject(self, reason: str) -> None:
        with self._review() as r:
            r.reject(self.id, reason)


class HealSource:
    """The heal proposals of a project's store (pending ones; ``all_states`` adds reviewed ones)."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    def items(self, *, all_states: bool = False) -> list[ReviewItem]:
        from core.heal.review import HealReview  # noqa: PLC0415
        from core.store import store_path  # noqa: PLC0415

        if not store_path(self.root).is_file():
            return []  # no run yet: do not create a store just to say so
        with HealReview(self.root) as r:
            return [HealItem(self.root, rec) for rec in r.list(None if all_states else "pending")]


class CorrectionItem:
    """A flow edit offered after a takeover (``core.heal.corrections``) as a queue item; not editable."""

    editable = False
    kind = "correction"

    def __init__(self, root: Path, rec: Any) -> None:
        self.root, self.rec = root, rec
        self.id = int(rec.id)
        self.key = f"correction:{rec.id}"
        self.status = "pending" if rec.state == "offered" else rec.state
        what = {"replace": "replace the step", "insert": "insert before the step"}.get(rec.meaning, rec.meaning)
        self.title = f"Correction #{rec.id} \u00b7 {rec.flow} \u00b7 step {rec.step_index + 1} {rec.step_title} (by hand)"
        self.subtitle = f"{counted(len(rec.steps), 'manual step')}: {what} \u00b7 run {rec.run_id}"
        self.old: Mapping[str, Any] = {"step": rec.step_id, "title": rec.step_title, "escalated": rec.reason}
        self.new: Mapping[str, Any] = {"meaning": rec.meaning, **{
            f"step {i + 1}": f"{s.get('action', '')} {s.get('name', '')}".strip() for i, s in enumerate(rec.steps)}}
        self.flow_file = rec.flow_file

    def _store(self) -> Any:
        from core.store import Store, store_path  # noqa: PLC0415

        return Store.open(store_path(self.root))

    def evidence(self) -> ReviewEvidence:
        store = self._store()
        try:
            shot = store.media_path(self.rec.screenshot) if self.rec.screenshot else None
        finally:
            store.close()
        page = dict(self.rec.page or {})
        return ReviewEvidence(before=shot, strategy="takeover", reason=self.rec.reason,
                              notes=(f"page: {page.get('url', '')} \u00b7 {page.get('title', '')}",
                                     f"continues from step {self.rec.continue_from + 1}"))

    def diff(self, new: Mapping[str, Any] | None = None) -> str:
        from core.heal import corrections  # noqa: PLC0415

        if self.status != "pending":
            return self.rec.diff or ""
        store = self._store()
        try:
            return corrections.correction_diff(store, self.id, project_root=self.root).diff
        finally:
            store.close()

    def accept(self, new: Mapping[str, Any] | None = None) -> str:
        from core.heal import corrections  # noqa: PLC0415

        store = self._store()
        try:
            return corrections.accept_correction(store, self.id, project_root=self.root)
        finally:
            store.close()

    def reject(self, reason: str) -> None:
        from core.heal import corrections  # noqa: PLC0415

        store = self._store()
        try:
            corrections.reject_correction(store, self.id, reason or "rejected by the reviewer")
        finally:
            store.close()


class CorrectionSource:
    """The takeover corrections of a project's store (``offered`` ones; ``all_states`` adds reviewed ones).

    Empty when the engine has no ``core.heal.corrections`` (no takeover corrections are stored then).
    """

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    def items(self, *, all_states: bool = False) -> list[ReviewItem]:
        import importlib.util  # noqa: PLC0415

        from core.store import Store, store_path  # noqa: PLC0415

        if importlib.util.find_spec(module_name("core.heal.corrections")) is None or not store_path(self.root).is_file():
            return []
        from core.heal import corrections  # noqa: PLC0415

        store = Store.open(store_path(self.root))
        try:
            recs = corrections.list_corrections(store, None if all_states else "offered")
        finally:
            store.close()
        return [CorrectionItem(self.root, r) for r in recs]


# --- widgets -----------------------------------------------------------------------------------------


class ShotView(QWidget):
    """A screenshot scaled to fit, with the old (red, dashed) and new (green) element boxes drawn on it."""

    def __init__(self, caption: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.caption = caption
        self.image: QImage | None = None
        self.boxes: list[tuple[tuple[float, float, float, float], str, str, bool]] = []
        self.dpr = 1.0
        self.whole = False
        self.setToolTip("Around both elements; double-click for the whole page")
        self.setMinimumSize(160, 110)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    def set_shot(self, path: Path | None, boxes: Sequence[tuple[tuple[float, float, float, float] | None, str, str,
                                                                bool]], dpr: float) -> None:
        img = QImage(str(path)) if path is not None and Path(path).is_file() else None
        self.image = img if img is not None and not img.isNull() else None
        self.boxes = [(b, label, color, dashed) for b, label, color, dashed in boxes if b is not None]
        self.dpr = dpr or 1.0
        self.update()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt API
        return QSize(320, 210)

    def source_rect(self) -> QRectF:
        """The part of the screenshot shown (device px): around both boxes (double-click: the whole page)."""
        assert self.image is not None
        full = QRectF(0, 0, self.image.width(), self.image.height())
        if self.whole or not self.boxes:
            return full
        d = self.dpr
        x0 = min(b[0] for b, *_ in self.boxes) * d
        y0 = min(b[1] for b, *_ in self.boxes) * d
        x1 = max(b[0] + b[2] for b, *_ in self.boxes) * d
        y1 = max(b[1] + b[3] for b, *_ in self.boxes) * d
        w = max(x1 - x0 + 160 * d, 520 * d)  # the boxes and some of their neighbourhood (CSS px)
        h = max(y1 - y0 + 100 * d, w * 0.6)
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        r = QRectF(cx - w / 2, cy - h / 2, w, h)
        r.moveLeft(max(0.0, min(r.left(), full.width() - r.width())))
        r.moveTop(max(0.0, min(r.top(), full.height() - r.height())))
        return r.intersected(full)

    def mouseDoubleClickEvent(self, _event: object) -> None:  # noqa: N802 - Qt API
        self.whole = not self.whole
        self.update()

    def paintEvent(self, _event: object) -> None:  # noqa: N802 - Qt API
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.fillRect(self.rect(), QColor("#15171c"))
        p.setPen(QColor("#9aa3b2"))
        p.drawText(QRectF(6, 2, self.width() - 12, 18), Qt.AlignmentFlag.AlignLeft, self.caption)
        area = QRectF(4, 22, self.width() - 8, self.height() - 26)
        if self.image is None:
            p.drawText(area, Qt.AlignmentFlag.AlignCenter, "no screenshot")
            p.end()
            return
        src = self.source_rect()
        s = min(area.width() / src.width(), area.height() / src.height())
        dst = QRectF(area.x() + (area.width() - src.width() * s) / 2, area.y(), src.width() * s, src.height() * s)
        p.drawImage(dst, self.image, src)
        p.setClipRect(dst)
        for (x, y, w, h), label, color, dashed in self.boxes:
            k = s * self.dpr
            r = QRectF(dst.x() + x * k - src.x() * s, dst.y() + y * k - src.y() * s, max(w * k, 3), max(h * k, 3))
            pen = QPen(QColor(color), 2)
            if dashed:
                pen.setStyle(Qt.PenStyle.DashLine)
            p.setPen(pen)
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRect(r)
            if dst.width() >= 420:  # room for the labels; the legend says which is which anyway
                p.drawText(QPointF(r.x(), max(dst.y() + 10, r.y() - 3) if not dashed else r.bottom() + 12), label)
        p.end()


def diff_html(diff: str) -> str:
    """A unified diff as HTML: removed lines red, added green, hunk headers dimmed (for a QTextEdit)."""
    out = []
    for line in diff.splitlines():
        esc = line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        if line.startswith(("+++", "---")):
            out.append(f"<span style='color:#9aa3b2'><b>{esc}</b></span>")
        elif line.startswith("@@"):
            out.append(f"<span style='color:#7aa2f7'>{esc}</span>")
        elif line.startswith("+"):
            out.append(f"<span style='color:#3ecf8e'>{esc}</span>")
        elif line.startswith("-"):
            out.append(f"<span style='color:#f0524f'>{esc}</span>")
        else:
            out.append(f"<span style='color:#c8cdd6'>{esc}</span>")
    return "<pre style='margin:0'>" + "<br>".join(out) + "</pre>"


def _diff_view() -> QTextEdit:
    v = QTextEdit()
    v.setReadOnly(True)
    v.setLineWrapMode(QTextEdit.LineWrapMode.NoWrap)
    f = QFont("monospace")
    f.setStyleHint(QFont.StyleHint.TypeWriter)
    v.setFont(f)
    return v


class DiffDialog(QDialog):
    """"Write this change to <file>?" with the diff, buttons Write flow file / Cancel."""

    def __init__(self, title: str, diff: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setObjectName("healDiffDialog")
        lay = QVBoxLayout(self)
        lay.addWidget(QLabel("The flow file will change exactly like this:"))
        self.view = _diff_view()
        self.view.setHtml(diff_html(diff))
        lay.addWidget(self.view, 1)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.write_button = self.buttons.addButton("Write flow file", QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        lay.addWidget(self.buttons)
        self.resize(760, 460)


class EditDialog(QDialog):
    """Edit the new descriptor as YAML; the diff below follows every change (or says what is wrong)."""

    def __init__(self, item: ReviewItem, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.item = item
        self.setWindowTitle(f"Edit the new descriptor \u2014 {item.title}")
        self.setObjectName("healEditDialog")
        self.target: dict[str, Any] | None = None
        lay = QVBoxLayout(self)
        lay.addWidget(QLabel("New descriptor (YAML, the fields of a step's target):"))
        self.editor = QPlainTextEdit(yaml.safe_dump(dict(item.new), sort_keys=False, allow_unicode=True))
        self.editor.setFont(QFont("monospace"))
        lay.addWidget(self.editor, 2)
        self.problem = QLabel()
        self.problem.setObjectName("errorText")
        self.problem.setWordWrap(True)
        lay.addWidget(self.problem)
        self.diff_view = _diff_view()
        lay.addWidget(self.diff_view, 2)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.ok = self.buttons.addButton("Accept edited\u2026", QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        lay.addWidget(self.buttons)
        self.editor.textChanged.connect(self._recompute)
        self._recompute()
        self.resize(760, 620)

    def _recompute(self) -> None:
        self.target, self.diff = None, ""
        try:
            data = yaml.safe_load(self.editor.toPlainText())
            if not isinstance(data, dict):
                raise ValueError("expected a mapping of descriptor fields")
            self.diff = self.item.diff(data)
            self.target = data
            self.problem.setText("")
        except Exception as exc:  # noqa: BLE001 - shown to the reviewer, who fixes the text
            self.problem.setText(f"Cannot accept this: {exc}")
        self.diff_view.setHtml(diff_html(self.diff) if self.diff else "")
        self.ok.setEnabled(self.target is not None)


class HealReviewPanel(ReadsOffThread, QWidget):
    """The review queue and the selected item's comparison, evidence, diff and answers.

    Parameters
    ----------
    sources : Sequence[ReviewSource]
        Where items come from (heals first; corrections plug in here).
    confirm : Callable[[QWidget, str, str], bool] | None
        ``confirm(parent, title, diff) -> write?``; default a :class:`DiffDialog`.
    ask_reason : Callable[[QWidget, str], str | None] | None
        ``ask_reason(parent, title) -> reason or None (cancelled)``; default a QInputDialog.

    Signals
    -------
    flow_written(str)
        A flow file (absolute path) was written by an accept.
    reviewed(str, str)
        ``(item key, "accepted" | "rejected")``; for a skill proposal
        (:mod:`studio.views.skill_review`, shown by its own view in the same
        queue) ``"approved" | "rejected" | "edited" | "retired"``.
    """

    flow_written = Signal(str)
    reviewed = Signal(str, str)
    _read_done = Signal(object)  # (items, problems, key to select) from the reading thread

    def __init__(self, sources: Sequence[ReviewSource] = (), *, root: Path | None = None,
                 confirm: Callable[[QWidget, str, str], bool] | None = None,
                 ask_reason: Callable[[QWidget, str], str | None] | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("healReview")
        self.sources = list(sources)
        self.root = root
        self._confirm = confirm or _confirm_with_dialog
        self._ask_reason = ask_reason or _ask_reason_with_dialog
        self._items: list[ReviewItem] = []
        self._diff = ""
        self.show_reviewed = False
        self._reads = OffThreadReads("studio-review-read", self._read_done.emit)
        self._read_again: tuple[str | None] | None = None
        self._read_done.connect(self._on_read, Qt.ConnectionType.QueuedConnection)

        self.queue = QListWidget()
        self.queue.setObjectName("healQueue")
        self.queue.setWordWrap(True)
        self.queue.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.queue.currentRowChanged.connect(self._show)
        self.queue.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.queue.customContextMenuRequested.connect(self._queue_menu)

        self.heading = QLabel()
        self.heading.setObjectName("panelTitle")
        self.heading.setWordWrap(True)
        self.accept_button = QPushButton("Accept\u2026")
        self.accept_button.setToolTip("Show the change to the flow file, then write it")
        self.reject_button = QPushButton("Reject\u2026")
        self.reject_button.setToolTip("Never propose this change again (asks for a reason)")
        self.edit_button = QPushButton("Edit\u2026")
        self.edit_button.setToolTip("Change the new descriptor before accepting it")
        self.refresh_button = QPushButton("Refresh")
        self.accept_button.clicked.connect(lambda: self.accept_current())
        self.reject_button.clicked.connect(lambda: self.reject_current())
        self.edit_button.clicked.connect(lambda: self.edit_current())
        self.refresh_button.clicked.connect(lambda: self.refresh())
        head = QHBoxLayout()
        head.addWidget(self.heading, 1)
        for b in (self.accept_button, self.reject_button, self.edit_button, self.refresh_button):
            head.addWidget(b)

        self.fields = QTableWidget(0, 3)
        self.fields.setObjectName("healFields")
        self.fields.setHorizontalHeaderLabels(["field", "old (flow file)", "new (acted on)"])
        self.fields.verticalHeader().hide()
        self.fields.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.fields.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.fields.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.fields.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.fields.verticalHeader().setDefaultSectionSize(22)
        self.fields.setWordWrap(False)
        self.before = ShotView("before the step")
        self.after = ShotView("after the step")
        self.scores = QLabel()
        self.scores.setWordWrap(True)
        self.scores.setTextFormat(Qt.TextFormat.RichText)
        self.scores.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.scores.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.diff_view = _diff_view()
        self.diff_view.setObjectName("healDiff")
        self.error = QLabel()
        self.error.setObjectName("errorText")
        self.error.setWordWrap(True)
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error.hide()
        self.feedback = QLabel()  # what the last Accept / Approve / Reject did (the item leaves the queue)
        self.feedback.setObjectName("reviewFeedback")
        self.feedback.setWordWrap(True)
        self.feedback.setTextFormat(Qt.TextFormat.RichText)
        self.feedback.hide()

        shots = QSplitter(Qt.Orientation.Horizontal)
        shots.addWidget(self.before)
        shots.addWidget(self.after)
        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(self.fields)
        top.addWidget(shots)
        top.setStretchFactor(0, 1)
        top.setStretchFactor(1, 1)
        top.setSizes([440, 560])
        evidence = QWidget()
        ev_lay = QVBoxLayout(evidence)
        ev_lay.setContentsMargins(0, 0, 0, 0)
        ev_lay.addWidget(self.scores)
        bottom = QSplitter(Qt.Orientation.Horizontal)
        bottom.addWidget(evidence)
        bottom.addWidget(self.diff_view)
        bottom.setStretchFactor(0, 2)
        bottom.setStretchFactor(1, 3)
        body = QSplitter(Qt.Orientation.Vertical)
        body.addWidget(top)
        body.addWidget(bottom)
        body.setStretchFactor(0, 3)
        body.setStretchFactor(1, 2)

        self.empty = QLabel("Nothing to review.\nA step healed by any level but exact leaves a proposal here "
                            "after a run that passed; a takeover's manual steps leave a proposed flow edit; "
                            "a failure corrected by hand leaves a proposed skill.")
        self.empty.setObjectName("emptyState")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)

        self.detail = QWidget()
        d_lay = QVBoxLayout(self.detail)
        d_lay.setContentsMargins(6, 0, 0, 0)
        d_lay.addLayout(head)
        d_lay.addWidget(self.error)
        d_lay.addWidget(body, 1)

        split = QSplitter(Qt.Orientation.Horizontal)
        split.setObjectName("healSplit")
        split.addWidget(self.queue)
        from .skill_review import SkillProposalView  # noqa: PLC0415 - it draws with this module's ShotView

        self.skill_view = SkillProposalView(lambda parent, title: self._ask_reason(parent, title))
        self.skill_view.reviewed.connect(self._on_skill_reviewed)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.detail)
        self.stack.addWidget(self.skill_view)
        split.addWidget(self.stack)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 4)
        self.queue.setMinimumWidth(170)  # narrower, its titles wrap a word a line (a window below 800 px)
        split.setCollapsible(0, False)
        split.setSizes([230, 900])
        self.splitter = split
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.feedback)
        lay.addWidget(split, 1)
        lay.addWidget(self.empty, 1)
        self.refresh()

    # --- data -------------------------------------------------------------------------------------

    def set_sources(self, sources: Sequence[ReviewSource], root: Path | None = None) -> None:
        """Replace the sources (another project was opened) and refresh."""
        self.sources, self.root = list(sources), root
        self.refresh()

    @property
    def items(self) -> list[ReviewItem]:
        return list(self._items)

    def current(self) -> ReviewItem | None:
        row = self.queue.currentRow()
        return self._items[row] if 0 <= row < len(self._items) else None

    def refresh(self, select: str | None = None) -> None:
        """Re-read every source; keep (or move to) the item ``select`` / the current one when still there.

        Reads on the calling thread; after a review move the panel uses :meth:`refresh_later`."""
        keep = select or (self.current().key if self.current() is not None else None)
        items, problems = self._read(self.sources, self.show_reviewed, keep, prefetch=False)
        self._apply(items, problems, keep)

    def refresh_later(self, select: str | None = None) -> None:
        """Re-read the sources on a thread of its own and show them when read (the GUI thread never waits
        for the store, nor for the evidence of the item shown next); a request made while a read goes is
        served by one more read after it."""
        keep = select or (self.current().key if self.current() is not None else None)
        if self._reads.busy():
            self._read_again = (keep,)
            return
        self._read_again = None
        self._reads.start(self._read_for_hand_over, list(self.sources), self.show_reviewed, keep)

    @staticmethod
    def _read(sources: Sequence[ReviewSource], all_states: bool, keep: str | None, *,
              prefetch: bool) -> tuple[list[ReviewItem], list[str]]:
        """The items of ``sources`` (any thread); ``prefetch`` reads the evidence of the item to be shown too."""
        items: list[ReviewItem] = []
        problems: list[str] = []
        for s in sources:
            try:
                items += s.items(all_states=all_states)
            except Exception as exc:  # noqa: BLE001 - a broken store is shown, not raised
                problems.append(f"{type(exc).__name__}: {exc}")
        if prefetch and items:
            shown = next((it for it in items if it.key == keep), items[0])
            fetch = getattr(shown, "prefetch", None)
            if callable(fetch):
                fetch()
        return items, problems

    @classmethod
    def _read_for_hand_over(cls, sources: Sequence[ReviewSource], all_states: bool,
                            keep: str | None) -> tuple[list[ReviewItem], list[str], str | None]:
        items, problems = cls._read(sources, all_states, keep, prefetch=True)
        return items, problems, keep

    def _on_read(self, result: object) -> None:
        items, problems, keep = result  # type: ignore[misc]
        if self._read_again is not None:
            again, self._read_again = self._read_again[0], None
            self.refresh_later(again)
            return
        current = self.current()
        self._apply(items, problems, current.key if current is not None and keep is None else keep)

    def _apply(self, items: list[ReviewItem], problems: list[str], keep: str | None) -> None:
        self._items = items
        self.queue.blockSignals(True)
        self.queue.clear()
        for it in items:
            li = QListWidgetItem(f"{it.title}\n{it.kind} \u00b7 {it.status}")
            li.setToolTip(it.subtitle)
            li.setData(Qt.ItemDataRole.UserRole, it.key)
            self.queue.addItem(li)
        self.queue.blockSignals(False)
        has = bool(items)
        self.splitter.setVisible(has)
        self.empty.setVisible(not has)
        if problems:
            self.empty.setText("Could not read the review queue:\n" + "\n".join(problems))
        row = next((i for i, it in enumerate(items) if it.key == keep), 0 if has else -1)
        self.queue.setCurrentRow(row)
        self._show(row)

    def _show(self, row: int) -> None:
        item = self._items[row] if 0 <= row < len(self._items) else None
        self._diff = ""
        self.error.hide()
        if item is not None and item.kind == "skill":
            self.stack.setCurrentWidget(self.skill_view)
            self.skill_view.show_item(item)  # type: ignore[arg-type]
            for b in (self.accept_button, self.reject_button, self.edit_button):
                b.setEnabled(False)
            return
        self.stack.setCurrentWidget(self.detail)
        self.skill_view.show_item(None)
        if item is None:
            self.heading.setText("")
            self.fields.setRowCount(0)
            self.diff_view.clear()
            self.scores.clear()
            self.before.set_shot(None, [], 1.0)
            self.after.set_shot(None, [], 1.0)
            for b in (self.accept_button, self.reject_button, self.edit_button):
                b.setEnabled(False)
            return
        pending = item.status == "pending"
        self.heading.setText(f"<b>{_esc(item.title)}</b><br>{_esc(item.kind)} \u00b7 {_esc(item.status)}")
        self.heading.setTextFormat(Qt.TextFormat.RichText)
        self._fill_fields(item.old, item.new)
        try:
            ev = item.evidence()
        except Exception as exc:  # noqa: BLE001
            ev = ReviewEvidence(notes=(f"evidence unavailable: {exc}",))
        boxes = [(ev.old_box, "recorded", OLD_COLOR, True), (ev.new_box, "acted on", NEW_COLOR, False)]
        self.before.set_shot(ev.before, boxes, ev.device_pixel_ratio)
        self.after.set_shot(ev.after, boxes, ev.device_pixel_ratio)
        self.scores.setText(_evidence_html(ev))
        try:
            self._diff = item.diff()
            self.diff_view.setHtml(diff_html(self._diff) if self._diff else "<i>no change to the flow file</i>")
        except Exception as exc:  # noqa: BLE001 - e.g. the flow file changed on disk since the run
            self.diff_view.clear()
            self._error(str(exc))
        for b in (self.accept_button, self.edit_button):
            b.setEnabled(pending and bool(self._diff))
        self.edit_button.setEnabled(pending and item.editable and bool(self._diff))
        self.reject_button.setEnabled(pending)

    def _fill_fields(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        order = [f.name for f in fields(ElementDescriptor)]
        names = [n for n in order if n in old or n in new] + sorted(k for k in {*old, *new} if k not in order)
        self.fields.setRowCount(len(names))
        for r, n in enumerate(names):
            a, b = _value(old.get(n)), _value(new.get(n))
            changed = a != b
            cells = [QTableWidgetItem(("* " if changed else "  ") + n), QTableWidgetItem(a), QTableWidgetItem(b)]
            for c, cell in enumerate(cells):
                cell.setToolTip(cell.text())
                if changed:
                    cell.setForeground(QColor(OLD_COLOR if c == 1 else NEW_COLOR if c == 2 else "#e6c07b"))
                self.fields.setItem(r, c, cell)

    def _error(self, text: str) -> None:
        self.error.setText(text)
        self.error.show()

    # --- answers ----------------------------------------------------------------------------------

    def accept_current(self, new: Mapping[str, Any] | None = None) -> bool:
        """Show the diff (confirm), then write it; True when written.  Errors go to the panel."""
        item = self.current()
        if item is not None and item.kind == "skill":
            return self.skill_view.approve()
        if item is None or item.status != "pending":
            return False
        try:
            diff = item.diff(new)
        except Exception as exc:  # noqa: BLE001
            self._error(f"Nothing written: {exc}")
            return False
        if not self._confirm(self, f"Accept {item.title}", diff):
            return False
        try:
            item.accept(new)
        except Exception as exc:  # noqa: BLE001
            self._error(f"Nothing written: {exc}")
            return False
        self._mark(item, "accepted")
        self.reviewed.emit(item.key, "accepted")
        self.say_done(item.title, "accepted")
        path = getattr(item, "flow_file", "")
        if path:
            self.flow_written.emit(str((self.root / path) if self.root and not Path(path).is_absolute() else path))
        self.refresh_later()
        return True

    def reject_current(self, reason: str | None = None) -> bool:
        """Reject with ``reason`` (asked for when None); True when stored."""
        item = self.current()
        if item is not None and item.kind == "skill":
            return self.skill_view.reject(reason)
        if item is None or item.status != "pending":
            return False
        if reason is None:
            reason = self._ask_reason(self, f"Reject {item.title}")
            if reason is None:
                return False
        try:
            item.reject(reason)
        except Exception as exc:  # noqa: BLE001
            self._error(f"Not rejected: {exc}")
            return False
        self._mark(item, "rejected")
        self.reviewed.emit(item.key, "rejected")
        self.say_done(item.title, "rejected", reason)
        self.refresh_later()
        return True

    def edit_current(self) -> bool:
        """Open the editor on the new descriptor; accept the edited one when confirmed."""
        item = self.current()
        if item is None or not item.editable or item.status != "pending":
            return False
        dlg = EditDialog(item, self)
        if dlg.exec() != QDialog.DialogCode.Accepted or dlg.target is None:
            return False
        return self.accept_current(dlg.target)

    def _queue_menu(self, pos: Any) -> None:
        li = self.queue.itemAt(pos)
        if li is None:
            return
        self.queue.setCurrentItem(li)
        m = QMenu(self)
        sv = self.skill_view
        if self.stack.currentWidget() is sv:
            m.addAction("Approve", sv.approve).setEnabled(sv.approve_button.isEnabled())
            m.addAction("Reject\u2026", lambda: sv.reject()).setEnabled(sv.reject_button.isEnabled())
            m.addAction("Retire\u2026", lambda: sv.retire()).setEnabled(sv.retire_button.isEnabled())
        else:
            m.addAction("Accept\u2026", lambda: self.accept_current()).setEnabled(self.accept_button.isEnabled())
            m.addAction("Reject\u2026", lambda: self.reject_current()).setEnabled(self.reject_button.isEnabled())
            m.addAction("Edit\u2026", lambda: self.edit_current()).setEnabled(self.edit_button.isEnabled())
        m.addSeparator()
        a = m.addAction("Show reviewed too")
        a.setCheckable(True)
        a.setChecked(self.show_reviewed)
        a.toggled.connect(self._toggle_reviewed)
        m.popup(self.queue.viewport().mapToGlobal(pos))

    def say_done(self, title: str, outcome: str, reason: str = "") -> None:
        """Say what a review move did: the item leaves the queue, so it is said here (and stays until the next)."""
        what = {
            "approved": "approved: it can now act on the failures it was learnt from",
            "rejected": "rejected: it will not act",
            "retired": "retired: it will not act any more",
            "accepted": "accepted: written to the flow file",
            "edited": "saved",
        }.get(outcome, outcome)
        why = f" \u2014 your reason: \u201c{_esc(reason)}\u201d" if reason else ""
        self.feedback.setText(f"<span style='color:#3ecf8e'>\u2714</span> <b>{_esc(title)}</b> {what}{why}")
        self.feedback.show()

    def _mark(self, item: ReviewItem, status: str) -> None:
        """Show ``item`` as ``status`` at once (its row and its buttons), before the queue is read again."""
        try:
            item.status = status  # type: ignore[misc]
        except AttributeError:
            pass
        row = next((i for i, it in enumerate(self._items) if it is item), -1)
        li = self.queue.item(row) if row >= 0 else None
        if li is not None:
            li.setText(f"{item.title}\n{item.kind} \u00b7 {status}")
        if item is self.current() and item.kind != "skill":
            for b in (self.accept_button, self.reject_button, self.edit_button):
                b.setEnabled(False)

    def _on_skill_reviewed(self, key: str, outcome: str) -> None:
        item = next((it for it in self._items if it.key == key), None)
        if item is not None:
            reason = getattr(self.skill_view, "last_reason", "") if outcome in ("rejected", "retired") else ""
            self.say_done(f"Skill \u201c{item.title}\u201d", outcome, reason)
            if outcome != "edited":
                self._mark(item, outcome)
        self.reviewed.emit(key, outcome)
        self.refresh_later(select=key if outcome == "edited" else None)

    def select_key(self, key: str) -> bool:
        """Show the queue item ``key`` (``"skill:<id>"``, ``"heal:<n>"``), with reviewed ones when it is one."""
        if not any(it.key == key for it in self._items) and not self.show_reviewed:
            self.show_reviewed = True
            self.refresh()
        row = next((i for i, it in enumerate(self._items) if it.key == key), -1)
        if row < 0:
            return False
        self.queue.setCurrentRow(row)
        return True

    def _toggle_reviewed(self, on: bool) -> None:
        self.show_reviewed = on
        self.refresh()


def _confirm_with_dialog(parent: QWidget, title: str, diff: str) -> bool:
    return DiffDialog(title, diff, parent).exec() == QDialog.DialogCode.Accepted


def reason_question(title: str) -> str:
    """The question asked for a reason, by what is refused: a skill is rejected or retired, a change is wrong."""
    if title.startswith("Reject skill"):
        return "Why reject this skill? (kept with the skill)"
    if title.startswith("Retire skill"):
        return "Why retire this skill? (kept with the skill)"
    return "Why is this change wrong? (kept with the proposal)"


def _ask_reason_with_dialog(parent: QWidget, title: str) -> str | None:
    text, ok = QInputDialog.getText(parent, title, reason_question(title))
    return text if ok else None


def _value(v: Any) -> str:
    if v in (None, "", [], {}):
        return ""
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(str(x) for x in v) + "]"
    if isinstance(v, dict):
        return ", ".join(f"{k}={x}" for k, x in v.items())
    return str(v)


def _esc(text: str) -> str:
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _evidence_html(ev: ReviewEvidence) -> str:
    if ev.strategy == "takeover":  # a person's correction: no locator level chose it, and it has no score
        head = "<b>chosen by you</b> during a takeover (no locator score: you did it on the page)"
    else:
        head = (f"<b>{_esc(ev.strategy.replace('_', ' ') or '-')}</b> found it \u00b7 score <b>{ev.score:.2f}</b>"
                f" \u00b7 margin <b>{ev.margin:.2f}</b> over the runner-up")
    parts = [head,
             f"<span style='color:{OLD_COLOR}'>\u25ad recorded</span> &nbsp; "
             f"<span style='color:{NEW_COLOR}'>\u25a0 acted on</span>"]
    if ev.reason:
        parts.append(f"<span style='color:#9aa3b2'>{_esc(ev.reason)}</span>")
    if ev.top:
        rows = "".join(f"<tr><td>{i + 1}.</td><td>{float(c.get('score', 0.0)):.2f}</td>"
                       f"<td>{_esc(str(c.get('label', '')))}</td></tr>" for i, c in enumerate(ev.top[:5]))
        parts.append(f"<table cellspacing=4>{rows}</table>")
    parts += [f"<span style='color:#9aa3b2'>{_esc(n)}</span>" for n in ev.notes]
    return "<br>".join(parts)
