"""The step timeline: every step with its before/after screenshots, changed regions, verdict and evidence.

Fed live with engine events (:meth:`TimelinePanel.apply`, the bridge's
``event_received``) or from the store for a run that already ended
(:meth:`TimelinePanel.load_run`, which reads only the store).  All it
shows comes from the engine: the changed regions are the engine's
``StepEvidenceRecorded`` (computed once, with OpenCV, in CSS px), the
verdict and the expected / observed delta its ``VerdictReached``.

Screenshots are kept as PNG bytes (live) or store paths (stored run) and
decoded only for the step shown, off the GUI thread
(:class:`~studio.coalesce.ImageLoader`), so a long run costs little memory
and the GUI thread never decodes a picture.  The events of a step change
its row at once; the panel's own refresh (the shown step's details and
pictures, the filters, the column widths) runs once per burst of events
(:class:`~studio.coalesce.Deferred`), and the columns are sized by measuring
the changed rows' text, never by re-measuring the whole table per event.
Ctrl+F focuses the search box; the filters (text, action, verdict,
strategy) combine.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import (
    QAbstractTableModel, QModelIndex, QPersistentModelIndex, QRectF, QSortFilterProxyModel, Qt, Signal,
)
from PySide6.QtGui import QBrush, QColor, QImage, QKeySequence, QPainter, QPen, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView, QComboBox, QHBoxLayout, QHeaderView, QLabel, QLineEdit, QPushButton, QSplitter, QTableView,
    QTextBrowser, QVBoxLayout, QWidget,
)

from core.domain.evidence import StepEvidence
from core.engine.events import (
    ActionPerformed, EngineEvent, FlowFinished, FlowStarted, ObservationMade, Paused, Resumed, RunStarted,
    StepEvidenceRecorded, StepFinished, StepStarted, TargetResolved, VerdictReached,
)

from ..coalesce import Deferred, ImageLoader
from ..plain_words import strategy_short
from ..skill_events import describe_skill_event
from ..theme import COLORS, STATUS_COLORS, status_color, status_label

__all__ = ["TimelineStep", "TimelineModel", "TimelineFilter", "ShotView", "TimelinePanel", "VERDICT_LABELS",
           "timeline_details_html"]

_Index = QModelIndex | QPersistentModelIndex

#: Verdict kind -> what the timeline says.
VERDICT_LABELS = {"as_expected": "as expected", "changed_unexpectedly": "changed unexpectedly",
                  "unchanged": "unchanged", "failed": "assertion failed"}
_VERDICT_COLORS = {"as_expected": STATUS_COLORS["passed"], "changed_unexpectedly": STATUS_COLORS["escalated"],
                   "unchanged": STATUS_COLORS["escalated"], "failed": STATUS_COLORS["failed"]}
#: Colour of the changed regions drawn over the screenshots.
DIFF_COLOR = "#ff4d6d"


@dataclass(slots=True)
class TimelineStep:
    """One step as the timeline shows it (live or stored).

    ``before_png`` / ``after_png`` are the screenshots' PNG bytes (live) and
    ``before_path`` / ``after_path`` their files (stored run); ``evidence``
    the engine's :class:`~core.domain.evidence.StepEvidence` (None until
    recorded); ``ms`` the step's active time in ms.
    """

    flow: str
    index: int
    title: str = ""
    status: str = "pending"
    paused: bool = False
    action: str = ""
    strategy: str = ""
    score: float | None = None
    verdict: str = ""
    expected: str = ""
    observed: tuple[str, ...] = ()
    reason: str = ""
    ms: float | None = None
    error: str = ""
    before_png: bytes = b""
    after_png: bytes = b""
    before_path: Path | None = None
    after_path: Path | None = None
    evidence: StepEvidence | None = None
    attempt: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def status_text(self) -> str:
        """"paused" for a running step the run waits at, else the status word."""
        if self.status == "running" and self.paused:
            # its attempts so far are the reason to look at it (trial-56): how many, and the last one's outcome
            if self.attempt >= 1:
                last = f", last: {self.verdict_text}" if self.verdict else (", not found" if self.strategy == "abstained"
                                                                             else "")
                return f"paused \u00b7 {self.attempt} attempt{'s' * (self.attempt != 1)} so far{last}"
            return "paused"
        return status_label(self.status)

    @property
    def verdict_text(self) -> str:
        return VERDICT_LABELS.get(self.verdict, self.verdict)

    @property
    def problems(self) -> int:
        """Console errors plus failed requests of the step."""
        ev = self.evidence
        return len(ev.console) + len(ev.failed_requests) if ev is not None else 0

    def haystack(self) -> str:
        """Lower-case text the search box matches: title, flow, action, status, verdict, strategy, reasons, errors."""
        ev = self.evidence
        parts = [self.title, self.flow, self.action, self.status_text, self.verdict_text, self.strategy, self.reason,
                 self.error, self.expected, " ".join(self.observed)]
        parts += [str(line) for line in self.extra.get("skills", ())]  # "skill ... fired at step N"
        if ev is not None:
            parts += [c.text for c in ev.console] + [r.shown for r in ev.failed_requests]
            parts += [f"{a.kind} {a.target} {a.expected} {a.observed}" for a in ev.assertions]
        return " ".join(p for p in parts if p).lower()

    def image(self, when: str) -> QImage:
        """The ``"before"`` or ``"after"`` screenshot decoded (a null image when there is none)."""
        png = self.before_png if when == "before" else self.after_png
        path = self.before_path if when == "before" else self.after_path
        if png:
            return QImage.fromData(png, "PNG")
        if path is not None and path.is_file():
            return QImage(str(path))
        return QImage()


#: The widest the step column grows, in average characters of the table's font (a long title elides past it).
TITLE_MAX_CHARS = 60


class TimelineModel(QAbstractTableModel):
    """Steps of the run shown (all flows of a batch), one row each."""

    COLUMNS = ("#", "Step", "Action", "Status", "Verdict", "Strategy", "ms", "Errors")
    COL_INDEX, COL_TITLE, COL_ACTION, COL_STATUS, COL_VERDICT, COL_STRATEGY, COL_MS, COL_ERRORS = range(8)
    StepRole = Qt.ItemDataRole.UserRole + 1

    #: A step's data changed (flow, index).
    step_changed = Signal(str, int)

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: list[TimelineStep] = []
        self._at: dict[tuple[str, int], int] = {}
        self.run_id = ""
        self.read_only = False

    # --- rows -------------------------------------------------------------------------------
    def clear(self) -> None:
        self.beginResetModel()
        self._rows, self._at, self.run_id, self.read_only = [], {}, "", False
        self.endResetModel()

    def set_steps(self, steps: list[TimelineStep], *, run_id: str = "", read_only: bool = False) -> None:
        self.beginResetModel()
        self._rows = list(steps)
        self._at = {(s.flow, s.index): i for i, s in enumerate(self._rows)}
        self.run_id, self.read_only = run_id, read_only
        self.endResetModel()

    def steps(self) -> list[TimelineStep]:
        return list(self._rows)

    def step(self, row: int) -> TimelineStep:
        return self._rows[row]

    def find(self, flow: str, index: int) -> int | None:
        return self._at.get((flow, index))

    def ensure(self, flow: str, index: int, title: str = "") -> TimelineStep:
        """The row of ``(flow, index)``, appended (in step order within its flow) when new."""
        at = self._at.get((flow, index))
        if at is not None:
            step = self._rows[at]
            if title and not step.title:
                step.title = title
            return step
        pos = len(self._rows)
        for i, s in enumerate(self._rows):  # keep a flow's steps together and in order
            if s.flow == flow and s.index > index:
                pos = i
                break
        self.beginInsertRows(QModelIndex(), pos, pos)
        self._rows.insert(pos, TimelineStep(flow, index, title))
        self._at = {(s.flow, s.index): i for i, s in enumerate(self._rows)}
        self.endInsertRows()
        return self._rows[pos]

    def touch(self, step: TimelineStep) -> None:
        row = self._at.get((step.flow, step.index))
        if row is not None:
            self.dataChanged.emit(self.index(row, 0), self.index(row, len(self.COLUMNS) - 1))
            self.step_changed.emit(step.flow, step.index)

    # --- live events ------------------------------------------------------------------------
    def apply(self, event: EngineEvent) -> None:
        """Update from an engine event (GUI thread, stale events already dropped by the bridge)."""
        if isinstance(event, RunStarted):
            self.clear()
            self.run_id = event.run_id
            return
        if self.read_only:
            return  # a stored run is shown: live events do not change it
        if isinstance(event, FlowStarted):
            for i, title in enumerate(event.step_titles):
                self.ensure(event.flow, i, title)
            return
        if isinstance(event, Resumed):
            for s in self._rows:
                if s.paused:
                    s.paused = False
                    self.touch(s)
            return
        if isinstance(event, FlowFinished):
            for o in event.result.steps:
                at = self._at.get((event.result.flow, o.index))
                if at is not None:
                    s = self._rows[at]
                    s.status, s.ms, s.paused = o.status, o.ms, False
                    self.touch(s)
            for s in self._rows:
                if s.flow == event.result.flow and s.status == "running":
                    s.status, s.paused = "stopped", False
                    self.touch(s)
            return
        flow, index = getattr(event, "flow", None), getattr(event, "index", None)
        if flow is None or index is None or index < 0:
            return
        s = self.ensure(flow, index, getattr(event, "title", ""))
        if isinstance(event, StepStarted):
            s.status, s.paused, s.attempt = "running", False, event.attempt
            if event.attempt > 1:  # a retry: its screenshots replace the last attempt's
                s.before_png = s.after_png = b""
        elif isinstance(event, Paused):
            s.paused = True
        elif isinstance(event, ObservationMade):
            if event.when == "before":
                s.before_png, s.after_png = event.observation.screenshot_png, b""
            else:
                s.after_png = event.observation.screenshot_png
        elif isinstance(event, TargetResolved):
            r = event.resolution
            s.strategy, s.score = ("abstained" if r.abstained else r.strategy or ""), r.score
        elif isinstance(event, ActionPerformed):
            s.action = event.kind
        elif isinstance(event, VerdictReached):
            v = event.verdict
            s.verdict, s.expected, s.observed, s.reason = v.kind, v.expected, tuple(v.observed), v.reason
        elif isinstance(event, StepEvidenceRecorded):
            s.evidence = event.evidence
            s.action = s.action or event.evidence.action
        elif isinstance(event, StepFinished):
            s.status, s.ms, s.paused, s.error = event.status, event.ms, False, event.error
        elif (line := describe_skill_event(event)) is not None:  # a skill considered, fired, finished here
            s.extra.setdefault("skills", []).append(line)
        else:
            return
        self.touch(s)

    # --- Qt model -----------------------------------------------------------------------------
    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802, B008 - Qt API
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802, B008 - Qt API
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802 - Qt API
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.COLUMNS[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        s, col = self._rows[index.row()], index.column()
        if role == self.StepRole:
            return s
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(s, col)
        if role == Qt.ItemDataRole.ForegroundRole:
            if col == self.COL_STATUS:
                return QBrush(QColor(STATUS_COLORS["escalated"]) if s.status_text.startswith("paused") else status_color(s.status))
            if col == self.COL_VERDICT and s.verdict:
                return QBrush(QColor(_VERDICT_COLORS.get(s.verdict, COLORS["text"])))
            if col == self.COL_ERRORS and s.problems:
                return QBrush(QColor(STATUS_COLORS["failed"]))
            if s.status == "pending":
                return QBrush(QColor(COLORS["muted"]))
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (self.COL_INDEX, self.COL_MS, self.COL_ERRORS):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole:
            if col == self.COL_VERDICT and s.reason:
                return s.reason
            if col == self.COL_STATUS and s.error:
                return s.error
            if col == self.COL_MS and s.evidence is not None and s.evidence.paused_ms > 1:
                return f"{s.evidence.active_ms:,.0f} ms active; {s.evidence.paused_ms:,.0f} ms paused or waiting"
        return None

    def _display(self, s: TimelineStep, col: int) -> str:
        if col == self.COL_INDEX:
            return str(s.index + 1)
        if col == self.COL_TITLE:
            return s.title
        if col == self.COL_ACTION:
            return s.action
        if col == self.COL_STATUS:
            return s.status_text
        if col == self.COL_VERDICT:
            return s.verdict_text
        if col == self.COL_STRATEGY:
            return strategy_short(s.strategy)
        if col == self.COL_MS:
            return f"{s.ms:,.0f}" if s.ms is not None else ""
        if col == self.COL_ERRORS:
            return str(s.problems) if s.problems else ""
        return ""


class TimelineFilter(QSortFilterProxyModel):
    """Rows whose text matches the search (all words, any field) and whose action, verdict and strategy match."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.text = ""
        self.action = ""
        self.verdict = ""
        self.strategy = ""

    def set_filters(self, *, text: str | None = None, action: str | None = None, verdict: str | None = None,
                    strategy: str | None = None) -> None:
        """Set any of the filters ("" = all); the view updates at once."""
        self._begin()
        if text is not None:
            self.text = text.strip().lower()
        if action is not None:
            self.action = action
        if verdict is not None:
            self.verdict = verdict
        if strategy is not None:
            self.strategy = strategy
        self._end()

    def refilter(self) -> None:
        """Filter again (a step's data changed)."""
        self._begin()
        self._end()

    def _begin(self) -> None:
        if hasattr(self, "beginFilterChange"):  # Qt >= 6.10
            self.beginFilterChange()

    def _end(self) -> None:
        if hasattr(self, "endFilterChange"):
            self.endFilterChange()
        else:
            self.invalidateFilter()

    def accepts(self, s: TimelineStep) -> bool:
        if self.action and s.action != self.action:
            return False
        if self.verdict and (s.verdict or "none") != self.verdict:
            return False
        if self.strategy and s.strategy != self.strategy:
            return False
        if self.text:
            hay = s.haystack()
            return all(word in hay for word in self.text.split())
        return True

    def filterAcceptsRow(self, source_row: int, source_parent: _Index) -> bool:  # noqa: N802 - Qt API
        model = self.sourceModel()
        assert isinstance(model, TimelineModel)
        return self.accepts(model.step(source_row))


class ShotView(QWidget):
    """One screenshot, scaled to fit, with the changed regions (CSS px) outlined and tinted.

    :attr:`drawn` holds the regions as last painted, in widget coordinates.
    """

    def __init__(self, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = title
        self._image = QImage()
        self._regions: tuple[Any, ...] = ()
        self._dpr = 1.0
        self.drawn: list[QRectF] = []
        self.empty_text = "no screenshot"
        self.setMinimumSize(220, 140)

    def set_shot(self, image: QImage, regions: tuple[Any, ...] = (), dpr: float = 1.0) -> None:
        """Show ``image`` (device px) with ``regions`` (BBox, CSS px; ``dpr`` device px per CSS px)."""
        self._image, self._regions, self._dpr = image, tuple(regions), dpr or 1.0
        self.update()

    def image_rect(self) -> QRectF:
        """Where the image is drawn (widget coordinates), below the title line."""
        top = 18.0
        w, h = float(self.width()), float(self.height()) - top
        if self._image.isNull() or w <= 0 or h <= 0:
            return QRectF(0, top, max(w, 0), max(h, 0))
        scale = min(w / self._image.width(), h / self._image.height())
        iw, ih = self._image.width() * scale, self._image.height() * scale
        return QRectF((w - iw) / 2.0, top + (h - ih) / 2.0, iw, ih)

    def paintEvent(self, _event: Any) -> None:  # noqa: N802 - Qt API
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.fillRect(self.rect(), QColor(COLORS["canvas"]))
        p.setPen(QColor(COLORS["muted"]))
        p.drawText(QRectF(4, 0, self.width() - 8, 16), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                   self.title)
        self.drawn = []
        if self._image.isNull():
            p.drawText(QRectF(0, 18, self.width(), self.height() - 18), Qt.AlignmentFlag.AlignCenter, self.empty_text)
            p.end()
            return
        target = self.image_rect()
        p.drawImage(target, self._image)
        k = target.width() / self._image.width() * self._dpr  # CSS px -> widget px
        color = QColor(DIFF_COLOR)
        fill = QColor(color)
        fill.setAlpha(60)
        p.setPen(QPen(color, 2))
        for b in self._regions:
            r = QRectF(target.x() + b.x * k, target.y() + b.y * k, max(2.0, b.width * k), max(2.0, b.height * k))
            r = r.adjusted(-2, -2, 2, 2)
            p.fillRect(r, fill)
            p.drawRect(r)
            self.drawn.append(r)
        p.end()


def _kv(rows: list[tuple[str, str]]) -> str:
    cells = "".join(f"<tr><td style='color:{COLORS['muted']}; padding-right:10px'>{escape(k)}</td>"
                    f"<td>{v}</td></tr>" for k, v in rows)
    return f"<table cellspacing='0' cellpadding='1'>{cells}</table>"


def _section(title: str) -> str:
    return f"<p style='color:{COLORS['muted']}; margin:8px 0 2px 0'><b>{escape(title)}</b></p>"


def timeline_details_html(s: TimelineStep | None) -> str:
    """HTML of one step's details: verdict, expected vs observed delta, assertions, time per phase,
    console errors and failed requests."""
    if s is None:
        return f"<p style='color:{COLORS['muted']}'>No step selected. Run a flow (F5) or open a stored run.</p>"
    ev = s.evidence
    vcolor = _VERDICT_COLORS.get(s.verdict, COLORS["muted"])
    parts = [f"<p><b>{s.index + 1}. {escape(s.title)}</b> &nbsp;<span style='color:{status_color(s.status).name()}'>"
             f"{escape(s.status_text)}</span>"
             + (f" &nbsp;<span style='color:{vcolor}'>{escape(s.verdict_text)}</span>" if s.verdict else "") + "</p>"]
    rows = [("action", escape(s.action or "\u2014")), ("found", escape(strategy_short(s.strategy) or "\u2014")),
            ("expected", escape(s.expected or "\u2014")), ("observed", escape(", ".join(s.observed) or "\u2014"))]
    if ev is not None and ev.diff is not None:
        d = ev.diff
        rows.append(("screen", f"{len(d.regions)} changed region{'s' if len(d.regions) != 1 else ''}"
                               f" ({max(d.changed_ratio * 100, 0.1) if d.regions else 0:.1f}% of {d.width:.0f}x{d.height:.0f} CSS px)"
                               + (" - more not shown" if d.truncated else "") + (f"; {escape(d.note)}" if d.note else "")))
    elif ev is not None:
        rows.append(("screen", "no before/after pair to compare"))
    if s.ms is not None:
        t = f"{s.ms:,.0f} ms"
        if ev is not None and ev.paused_ms > 1:
            t += f" active, {ev.paused_ms:,.0f} ms paused or waiting for a human"
        rows.append(("time", t))
    parts.append(_kv(rows))
    if s.reason:
        parts.append(f"<p>{escape(s.reason)}</p>")
    if s.error:
        parts.append(f"<p style='color:{STATUS_COLORS['failed']}'>{escape(s.error)}</p>")
    if s.extra.get("skills"):
        parts.append(_section("Skills"))
        parts.append("".join(f"<p style='margin:0'>{escape(line)}</p>" for line in s.extra["skills"]))
    if ev is not None and ev.assertions:
        parts.append(_section("Assertions checked"))
        parts.append("<table cellspacing='0' cellpadding='1'>" + "".join(
            f"<tr><td style='color:{STATUS_COLORS['passed'] if a.ok else STATUS_COLORS['failed']}'>"
            f"{'holds' if a.ok else 'fails'}</td><td>&nbsp;{escape(a.kind)} on {escape(a.target)}</td>"
            f"<td>&nbsp;{'expected ' + escape(repr(a.expected)) if a.expected else ''}</td>"
            f"<td>&nbsp;{escape(a.observed)}</td></tr>"
            for a in ev.assertions) + "</table>")
    if ev is not None and ev.phase_ms:
        parts.append(_section("Time per phase (ms)"))
        slowest = max((ms for _p, ms in ev.phase_ms), default=0.0) or 1.0
        parts.append("<table cellspacing='0' cellpadding='1'>" + "".join(
            f"<tr><td>{escape(p)}</td><td align='right'>&nbsp;{ms:,.1f}</td><td>&nbsp;<span style='background:"
            f"{COLORS['accent']}'>{'&nbsp;' * max(1, round(30 * ms / slowest))}</span></td></tr>"
            for p, ms in ev.phase_ms) + "</table>")
    if ev is not None:
        parts.append(_section(f"Console errors ({len(ev.console)})"))
        parts.append("".join(f"<p style='margin:0; color:{STATUS_COLORS['failed']}'>[{escape(c.kind)}] "
                             f"{escape(c.text)}" + (f" <span style='color:{COLORS['muted']}'>{escape(c.source)}"
                                                    f"</span>" if c.source else "") + "</p>"
                             for c in ev.console) or f"<p style='margin:0; color:{COLORS['muted']}'>none</p>")
        parts.append(_section(f"Failed requests ({len(ev.failed_requests)})"))
        parts.append("".join(f"<p style='margin:0; color:{STATUS_COLORS['failed']}'>{escape(r.shown)}"
                             f" <span style='color:{COLORS['muted']}'>{escape(r.resource_type)}</span></p>"
                             for r in ev.failed_requests) or f"<p style='margin:0; color:{COLORS['muted']}'>none</p>")
    return "".join(parts)


class TimelinePanel(QWidget):
    """Filter bar, step list, and the selected step's screenshots side by side with its evidence."""

    #: A stored run was opened (run id).
    run_loaded = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("timelinePanel")
        #: The live run's steps, fed by :meth:`apply` also while a stored run is shown.
        self.live_model = TimelineModel(self)
        #: The steps shown: :attr:`live_model` or a stored run's (:meth:`load_run`).
        self.model = self.live_model
        self.proxy = TimelineFilter(self)
        self.proxy.setSourceModel(self.model)

        self.search = QLineEdit()
        self.search.setObjectName("timelineSearch")
        self.search.setPlaceholderText("Search steps, reasons, errors (Ctrl+F)")
        self.search.setClearButtonEnabled(True)
        self.action_combo, self.verdict_combo, self.strategy_combo = QComboBox(), QComboBox(), QComboBox()
        for combo, tip in ((self.action_combo, "Action"), (self.verdict_combo, "Verdict"),
                           (self.strategy_combo, "Locator strategy")):
            combo.setToolTip(f"Show only steps with this {tip.lower()}")
            combo.setMinimumContentsLength(10)
        self.count_label = QLabel()
        self.count_label.setObjectName("timelineCount")
        self.source_label = QLabel()
        self.source_label.setObjectName("panelTitle")
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(self.search, 3)
        bar.addWidget(self.action_combo, 1)
        bar.addWidget(self.verdict_combo, 1)
        bar.addWidget(self.strategy_combo, 1)
        bar.addWidget(self.count_label)

        self.table = QTableView()
        self.table.setObjectName("timelineTable")
        self.table.setModel(self.proxy)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        hh = self.table.horizontalHeader()
        # sized by _fit_columns (the changed rows only): ResizeToContents re-measured every row per event
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        # the step column is as wide as its titles (a stretched one was squeezed to a few characters by the
        # others); the last column takes what is left
        hh.setStretchLastSection(True)

        self.before_view, self.after_view = ShotView("Before"), ShotView("After")
        shots = QSplitter(Qt.Orientation.Horizontal)
        shots.addWidget(self.before_view)
        shots.addWidget(self.after_view)
        self.details = QTextBrowser()
        self.details.setObjectName("timelineDetails")
        self.details.setOpenLinks(False)
        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(shots)
        right.addWidget(self.details)
        right.setStretchFactor(0, 3)
        right.setStretchFactor(1, 2)
        right.setSizes([600, 300])
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.table)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(0, 2)
        self.splitter.setStretchFactor(1, 3)
        self.splitter.setSizes([600, 700])

        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(bar)
        self.live_button = QPushButton("Back to the live run")
        self.live_button.setObjectName("timelineLiveButton")
        self.live_button.setToolTip("Leave the stored run and show the current (or last) run again")
        self.live_button.clicked.connect(self.show_live)
        self.live_button.hide()
        head = QHBoxLayout()
        head.setContentsMargins(0, 0, 0, 0)
        head.addWidget(self.source_label, 1)
        head.addWidget(self.live_button)
        lay.addLayout(head)
        lay.addWidget(self.splitter, 1)

        self.find_shortcut = QShortcut(QKeySequence.StandardKey.Find, self)
        self.find_shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.find_shortcut.activated.connect(self.focus_search)
        self.search.textChanged.connect(lambda t: self._filter(text=t))
        self.action_combo.currentIndexChanged.connect(lambda _i: self._filter(action=self.action_combo.currentData()))
        self.verdict_combo.currentIndexChanged.connect(
            lambda _i: self._filter(verdict=self.verdict_combo.currentData()))
        self.strategy_combo.currentIndexChanged.connect(
            lambda _i: self._filter(strategy=self.strategy_combo.currentData()))
        self.table.selectionModel().currentRowChanged.connect(lambda _c, _p: self._show_current())
        #: Decodes the shown step's screenshots off the GUI thread.
        self.images = ImageLoader(self)
        self.images.loaded.connect(self._on_image_loaded)
        #: The panel's refresh after a burst of step changes (see the module docstring).
        self.refresh = Deferred(self._refresh_now, parent=self)
        self._changed: set[tuple[str, int]] = set()
        self._fit_all = True
        self._wire(self.model)
        self._follow = True
        self._refresh_choices()
        self._show_current()
        self._fit_columns()

    def _image(self, s: TimelineStep, when: str) -> QImage | None:
        """The step's screenshot once decoded (off the GUI thread); None while it is being decoded."""
        source = (s.before_png or s.before_path) if when == "before" else (s.after_png or s.after_path)
        return self.images.get((id(self.model), s.flow, s.index, when), source)

    def _on_image_loaded(self, key: object) -> None:
        s = self.current_step()
        if s is not None and isinstance(key, tuple) and key[:3] == (id(self.model), s.flow, s.index):
            self._show_shots(s)

    def _wire(self, model: TimelineModel) -> None:
        """Follow ``model``'s changes while it is the one shown."""
        model.step_changed.connect(lambda f, i: self._on_step_changed(f, i) if model is self.model else None)
        model.rowsInserted.connect(lambda *_a: self._on_rows() if model is self.model else None)
        model.modelReset.connect(lambda: self._on_rows() if model is self.model else None)

    def _on_rows(self) -> None:
        self._refresh_choices()
        self._fit_all = True
        self.refresh.schedule()

    def _fit_columns(self, rows: list[TimelineStep] | None = None) -> None:
        """Widen the columns to the text of ``rows``; all rows (may also narrow) when None.  The step column
        fits its longest title up to :data:`TITLE_MAX_CHARS` average characters (the tooltip-free rest elides)."""
        fm = self.table.fontMetrics()
        hh = self.table.horizontalHeader()
        head = hh.fontMetrics()
        steps = self.model.steps() if rows is None else rows
        for col, name in enumerate(TimelineModel.COLUMNS):
            texts = [self.model._display(s, col) for s in steps]  # noqa: SLF001 - the model's own cell text
            want = max([head.horizontalAdvance(name) + 20, *(fm.horizontalAdvance(t) + 16 for t in texts)])
            if col == TimelineModel.COL_TITLE:
                want = min(want, fm.averageCharWidth() * TITLE_MAX_CHARS + 16)
            if rows is None or want > hh.sectionSize(col):
                hh.resizeSection(col, want)

    def _show_model(self, model: TimelineModel) -> None:
        if model is self.model:
            return
        old, self.model = self.model, model
        if old is not self.live_model:
            old.deleteLater()  # a stored run's model is not shown again
        self.images.clear()
        self.refresh.cancel()
        self._changed.clear()
        self.proxy.setSourceModel(model)
        self.live_button.setVisible(model is not self.live_model)
        self._refresh_choices()
        self._show_current()
        self._fit_columns()
        self._fit_all = False

    @property
    def showing_live(self) -> bool:
        """True when the live run is shown (not a stored one)."""
        return self.model is self.live_model

    # --- feeding ----------------------------------------------------------------------------
    def apply(self, event: EngineEvent) -> None:
        """Feed a live engine event; the selection follows the running step until the user picks one.

        A new run (``RunStarted``) brings the live run back into view when a stored one was shown."""
        self.live_model.apply(event)
        if isinstance(event, RunStarted):
            self.show_live()
            self._follow = True
        if self.showing_live and self._follow and isinstance(event, StepStarted):
            self.select_step(event.flow, event.index, follow=True)

    def show_live(self) -> None:
        """Show the live run (or the last one) again after a stored run."""
        self._show_model(self.live_model)
        self.source_label.setText("Live run" if self.live_model.run_id else "")

    def load_run(self, store: Any, run_id: str) -> bool:
        """Show a stored run read-only, from the store alone (steps, verdicts, resolutions, evidence,
        screenshots); False when the store does not know ``run_id``.  Live events are ignored until the next
        ``RunStarted``."""
        steps = steps_of_stored_run(store, run_id)
        if steps is None:
            return False
        stored = TimelineModel(self)
        stored.set_steps(steps, run_id=run_id, read_only=True)
        self._wire(stored)
        self._show_model(stored)
        run = store.get_run(run_id)
        when = run.started_at.strftime("%Y-%m-%d %H:%M:%S UTC") if run is not None and run.started_at else ""
        self.source_label.setText(f"Stored run of {run.flow if run else '?'} \u00b7 {when} \u00b7 "
                                  f"{run.status if run else ''} (read-only)")
        self._follow = False
        if steps:
            self.select_row(0)
        self.run_loaded.emit(run_id)
        return True

    # --- filters and selection ------------------------------------------------------------
    def focus_search(self) -> None:
        self.search.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search.selectAll()

    def set_filters(self, *, text: str | None = None, action: str | None = None, verdict: str | None = None,
                    strategy: str | None = None) -> None:
        """Set filters through the controls (as a user would); "" means all."""
        if text is not None:
            self.search.setText(text)
        for combo, value in ((self.action_combo, action), (self.verdict_combo, verdict),
                             (self.strategy_combo, strategy)):
            if value is not None:
                i = combo.findData(value)
                if i < 0:
                    combo.addItem(value, value)
                    i = combo.count() - 1
                combo.setCurrentIndex(i)

    def visible_steps(self) -> list[TimelineStep]:
        """The steps the filters let through, in order."""
        return [self.model.step(self.proxy.mapToSource(self.proxy.index(r, 0)).row())
                for r in range(self.proxy.rowCount())]

    def select_row(self, row: int) -> None:
        """Select the ``row``-th visible step (the user picked it: the selection stops following the run)."""
        if 0 <= row < self.proxy.rowCount():
            self._follow = False
            self.table.selectRow(row)
            self.table.setCurrentIndex(self.proxy.index(row, 0))

    def select_step(self, flow: str, index: int, *, follow: bool = False) -> None:
        at = self.model.find(flow, index)
        if at is None:
            return
        p = self.proxy.mapFromSource(self.model.index(at, 0))
        if p.isValid():
            keep = self._follow if follow else False
            self.table.setCurrentIndex(p)
            self.table.selectRow(p.row())
            self._follow = keep

    def current_step(self) -> TimelineStep | None:
        idx = self.table.currentIndex()
        if not idx.isValid():
            return None
        return self.model.step(self.proxy.mapToSource(idx).row())

    def _filter(self, **kw: Any) -> None:
        self.proxy.set_filters(**{k: (v or "") for k, v in kw.items()})
        self._update_count()
        if self.current_step() is None and self.proxy.rowCount():
            self.table.setCurrentIndex(self.proxy.index(0, 0))
        self._show_current()

    def _refresh_choices(self) -> None:
        steps = self.model.steps()
        self._fill(self.action_combo, "All actions", sorted({s.action for s in steps if s.action}))
        self._fill(self.verdict_combo, "All verdicts", [k for k in (*VERDICT_LABELS, "none")],
                   labels={**VERDICT_LABELS, "none": "no verdict"})
        self._fill(self.strategy_combo, "All strategies",
                   sorted({s.strategy for s in steps if s.strategy}
                          | {"exact", "fuzzy_text", "semantic", "relative", "visual", "abstained"}))
        self._update_count()

    @staticmethod
    def _fill(combo: QComboBox, all_text: str, values: list[str], labels: dict[str, str] | None = None) -> None:
        current = combo.currentData() or ""
        have = [combo.itemData(i) for i in range(combo.count())]
        if have == ["", *values]:
            return
        combo.blockSignals(True)
        combo.clear()
        combo.addItem(all_text, "")
        for v in values:
            combo.addItem((labels or {}).get(v, v), v)
        i = combo.findData(current)
        combo.setCurrentIndex(max(0, i))
        combo.blockSignals(False)

    def _update_count(self) -> None:
        total, shown = self.model.rowCount(), self.proxy.rowCount()
        self.count_label.setText(f"{shown} of {total} steps" if shown != total else f"{total} steps")

    def _on_step_changed(self, flow: str, index: int) -> None:
        """A step's data changed: refreshed with the others of its burst (:attr:`refresh`)."""
        self._changed.add((flow, index))
        self.refresh.schedule()

    def _refresh_now(self) -> None:
        changed, self._changed = self._changed, set()
        rows = [self.model.step(at) for f, i in changed if (at := self.model.find(f, i)) is not None]
        s = self.current_step()
        if s is not None and (s.flow, s.index) in changed:
            self._show_current()
        if any(self.action_combo.findData(r.action) < 0 for r in rows):
            self._refresh_choices()  # a new action kind: offer it in the filter
        if self.proxy.text or self.proxy.action or self.proxy.verdict or self.proxy.strategy:
            self.proxy.refilter()
        self._update_count()
        fit_all, self._fit_all = self._fit_all, False
        self._fit_columns(None if fit_all else rows)

    def _show_current(self) -> None:
        s = self.current_step()
        self.details.setHtml(timeline_details_html(s))
        if s is None:
            empty = "no run yet - press F5" if not self.model.rowCount() else "no step selected"
            for v in (self.before_view, self.after_view):
                v.empty_text = empty
                v.set_shot(QImage())
            return
        self._show_shots(s)

    def _show_shots(self, s: TimelineStep) -> None:
        ev = s.evidence
        regions = ev.diff.regions if ev is not None and ev.diff is not None else ()
        dpr = ev.diff.device_pixel_ratio if ev is not None and ev.diff is not None else 1.0
        before, after = self._image(s, "before"), self._image(s, "after")
        self.before_view.empty_text = "no screenshot before this step" if before is not None else "loading\u2026"
        self.after_view.empty_text = ("loading\u2026" if after is None else "not yet" if s.status in (
            "pending", "running") else "the step ended before its after-observation")
        self.before_view.set_shot(before if before is not None else QImage(), regions, dpr)
        self.after_view.set_shot(after if after is not None else QImage(), regions, dpr)


def steps_of_stored_run(store: Any, run_id: str, *, exists: Callable[[Path], bool] = Path.is_file
                        ) -> list[TimelineStep] | None:
    """The timeline of a stored run, read from the store alone (None for an unknown run).

    Steps come from the run's step rows, the last verdict and resolution of
    each step, its evidence (``Store.step_evidence``) and the paths of its last
    before and after screenshots.
    """
    detail = store.run_detail(run_id)
    if detail is None:
        return None
    flow = detail.run.flow
    verdicts = {v.index: v for v in detail.verdicts}
    resolutions = {r.index: r for r in detail.resolutions}
    evidence = {e.index: e for e in store.step_evidence(run_id)}
    shots: dict[tuple[int, str], str] = {}
    for o in detail.observations:
        if o.screenshot:
            shots[(o.index, o.when)] = o.screenshot
    out = []
    for st in detail.steps:
        s = TimelineStep(flow, st.index, st.title, st.status, ms=st.ms, error=st.error, attempt=st.attempts)
        v = verdicts.get(st.index)
        if v is not None:
            s.verdict, s.expected, s.observed, s.reason = v.kind, v.expected, tuple(v.observed), v.reason
        r = resolutions.get(st.index)
        if r is not None:
            s.strategy, s.score = ("abstained" if r.abstained else r.strategy), r.score
        e = evidence.get(st.index)
        if e is not None:
            s.evidence, s.action = e.evidence, e.evidence.action
        for when in ("before", "after"):
            rel = shots.get((st.index, when))
            if rel:
                path = store.media_path(rel)
                if exists(path):
                    setattr(s, f"{when}_path", path)
        out.append(s)
    return out
