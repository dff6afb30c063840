"""Run history: past runs from the store, one opened read-only to scrub through, two compared step by step.

Everything comes from the store (read-only opens of ``<project>/.steadyhand/store.sqlite``,
:mod:`core.store.history`); nothing is re-run.  Three tabs:

* **Runs** - flow, start time, status, steps passed / run, heals, duration;
  filter by flow; double-click (or Enter, or *Open*) opens a run; select two
  runs of one flow and press *Compare*.
* **Run** - the opened run, read-only: a step list and a slider scrub
  through its steps (time travel over recorded data), with the stored
  before / after screenshots side by side and the step's status, verdict,
  locator level, time and error.  :attr:`HistoryPanel.step_shown` carries the
  :class:`~core.store.history.StoredStep` and its before image, the seam a
  timeline or live view plugs into.
* **Compare** - two runs of one flow, one row per step: status, verdict and
  locator level in A and B, time in both and the difference; rows that
  healed, slowed down (:data:`~core.store.history.SLOWER_RATIO`), changed
  verdict or status are coloured and say so.
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QImage, QKeyEvent, QPixmap, QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView, QComboBox, QHBoxLayout, QHeaderView, QLabel, QListWidget, QListWidgetItem, QPushButton,
    QSizePolicy, QSlider, QSplitter, QTableWidget, QTableWidgetItem, QTabWidget, QVBoxLayout, QWidget,
)

from core.progress import counted
from core.engine.events import FlowFinished, RunFinished
from core.store import RunDetail, Store
from core.store.history import HistoryEntry, StepDelta, StoredStep, compare_runs, run_history, stored_steps

from ..offthread import OffThreadReads, ReadsOffThread
from ..theme import COLORS, status_color, status_label

__all__ = ["HistoryPanel", "RunViewer", "CompareView", "CHANGE_COLORS"]


def _launch_detached(argv: list[str]) -> None:
    """Start ``argv`` as a process of its own (its output discarded), not waited for."""
    import subprocess

    subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     start_new_session=True)

#: What changed in a compared step -> row colour (healed amber, slower blue, verdict or status changed red).
CHANGE_COLORS = {"healed": "#f5a524", "heal gone": "#3fb96b", "slower": "#4c8dff", "verdict": "#f0524f",
                 "status": "#f0524f", "only in A": "#9aa0aa", "only in B": "#9aa0aa"}


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _item(text: str, *, color: str | None = None, tip: str = "", align_right: bool = False) -> QTableWidgetItem:
    it = QTableWidgetItem(text)
    it.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
    if color:
        it.setForeground(QBrush(QColor(color)))
    if tip:
        it.setToolTip(tip)
    if align_right:
        it.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return it


class _Shot(QLabel):
    """A stored screenshot scaled to the label (kept sharp on resize)."""

    def __init__(self, caption: str) -> None:
        super().__init__()
        self.caption = caption
        self.image = QImage()
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setMinimumSize(160, 100)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)  # the pixmap never widens it
        self.setStyleSheet(f"background: {COLORS['canvas']}; color: {COLORS['muted']};")
        self.set_image(QImage())

    def set_image(self, image: QImage) -> None:
        self.image = image
        self._render()

    def _render(self) -> None:
        if self.image.isNull():
            self.setPixmap(QPixmap())
            self.setText(f"{self.caption}: no screenshot stored")
            return
        self.setText("")
        self.setPixmap(QPixmap.fromImage(self.image).scaled(
            max(self.width(), 160), max(self.height(), 100), Qt.AspectRatioMode.KeepAspectRatio,
            Qt.TransformationMode.SmoothTransformation))

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        self._render()


class RunViewer(QWidget):
    """One stored run, read-only: step list + slider, before/after screenshots, the step's record."""

    step_changed = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.detail: RunDetail | None = None
        self.steps: list[StoredStep] = []
        self.media_root: Path | None = None
        self.header = QLabel("Open a run from the Runs tab to scrub through its steps.")
        self.header.setObjectName("runViewerHeader")
        self.header.setWordWrap(True)
        self.step_list = QListWidget()
        self.step_list.setObjectName("runViewerSteps")
        self.step_list.setMinimumWidth(240)
        self.step_list.currentRowChanged.connect(self.show_step)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setObjectName("runViewerSlider")
        self.slider.setEnabled(False)
        self.slider.valueChanged.connect(self.show_step)
        self.position = QLabel("")
        self.before, self.after = _Shot("before"), _Shot("after")
        self.info = QLabel("")
        self.info.setObjectName("runViewerInfo")
        self.info.setWordWrap(True)
        self.info.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        shots = QSplitter(Qt.Orientation.Horizontal)
        for title, shot in (("Before", self.before), ("After", self.after)):
            box = QWidget()
            bl = QVBoxLayout(box)
            bl.setContentsMargins(0, 0, 0, 0)
            cap = QLabel(title)
            cap.setStyleSheet(f"color: {COLORS['muted']};")
            bl.addWidget(cap)
            bl.addWidget(shot, 1)
            shots.addWidget(box)
        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        scrub = QHBoxLayout()
        scrub.addWidget(QLabel("Step"))
        scrub.addWidget(self.slider, 1)
        scrub.addWidget(self.position)
        rl.addLayout(scrub)
        rl.addWidget(shots, 1)
        rl.addWidget(self.info)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.step_list)
        split.addWidget(right)
        split.setStretchFactor(1, 4)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.header)
        lay.addWidget(split, 1)

    def show_run(self, detail: RunDetail, media_root: Path, total: int = 0) -> None:
        """Show ``detail`` (read-only) from its first step; ``total`` is the flow's number of steps (0: unknown)."""
        self.detail, self.media_root = detail, media_root
        self.steps = stored_steps(detail)
        r = detail.run
        when = r.started_at.strftime("%Y-%m-%d %H:%M:%S UTC")
        heals = f", {r.heals} heal{'s' * (r.heals != 1)}" if r.heals else ""
        # one count everywhere: steps passed / steps in the flow file as run (README)
        total = max(r.steps_total or total, len(self.steps))
        passed = sum(1 for s in self.steps if s.status == "passed")
        ran = f" ({len(self.steps)} run)" if total > len(self.steps) else ""
        self.header.setText(
            f"<b>{_html(r.flow)}</b> \u2014 run {_html(r.id[:8])}, {when}, "
            f"<span style='color:{status_color(r.status).name()}'>{_html(r.status)}</span>, "
            f"{passed}/{total} steps passed{ran}"
            + f"{heals} \u00b7 <i>read-only: recorded data, nothing is re-run</i>")
        self.step_list.blockSignals(True)
        self.step_list.clear()
        for s in self.steps:
            mark = " \u2191healed" if s.healed else ""
            if s.status == "passed" and s.hand_backs:
                mark += " \u00b7 after a person acted"  # never a plain pass
            elif s.escalated and not s.by_hand and s.status == "passed":
                mark += " \u00b7 after an escalation"
            it = QListWidgetItem(f"{s.index + 1}. {s.title}  [{status_label(s.status)}]{mark}")
            it.setForeground(QBrush(status_color(s.status)))
            self.step_list.addItem(it)
        self.step_list.blockSignals(False)
        self.slider.blockSignals(True)
        self.slider.setRange(0, max(len(self.steps) - 1, 0))
        self.slider.setValue(0)
        self.slider.setEnabled(bool(self.steps))
        self.slider.blockSignals(False)
        self.show_step(0)

    def image(self, relpath: str) -> QImage:
        if not relpath or self.media_root is None:
            return QImage()
        return QImage(str(Path(self.media_root, *relpath.split("/"))))

    def show_step(self, row: int) -> None:
        """Scrub to step row ``row`` (0-based position in the run)."""
        if not (0 <= row < len(self.steps)):
            self.before.set_image(QImage())
            self.after.set_image(QImage())
            self.info.setText("")
            self.position.setText("")
            return
        for w in (self.slider, self.step_list):
            w.blockSignals(True)
        self.slider.setValue(row)
        self.step_list.setCurrentRow(row)
        for w in (self.slider, self.step_list):
            w.blockSignals(False)
        s = self.steps[row]
        self.position.setText(f"{row + 1} / {len(self.steps)}")
        self.before.set_image(self.image(s.before))
        self.after.set_image(self.image(s.after))
        locator = (f"{s.strategy} {s.score:.2f}" + (" (healed)" if s.healed else "")) if s.strategy else "no target"
        if s.by_hand:
            locator = "none (the step was done by hand)"
        elif s.abstained:
            locator = "abstained"
        parts = [f"<b>{s.index + 1}. {_html(s.title)}</b> ({_html(s.step_id)})",
                 f"status <span style='color:{status_color(s.status).name()}'>{_html(status_label(s.status))}</span>"
                 f" \u00b7 verdict {_html(s.verdict.replace('_', ' ') or '-')} \u00b7 locator {_html(locator)}"
                 f" \u00b7 {s.ms:.0f} ms \u00b7 {s.attempts} attempt{'s' * (s.attempts != 1)}"]
        if s.escalated or s.hand_backs:
            parts.append(_html("; ".join(x for x in (
                f"asked a person {counted(s.escalated, 'time')}" if s.escalated else "",
                f"a person took the page over and handed it back {counted(s.hand_backs, 'time')}" if s.hand_backs else "",
            ) if x)))
        if s.url:
            parts.append(_html(s.url))
        if s.verdict_reason:
            parts.append(_html(s.verdict_reason))
        if s.error:
            parts.append(f"<span style='color:{COLORS['text']}'>error: {_html(s.error)}</span>")
        self.info.setText("<br>".join(parts))
        self.step_changed.emit(row)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt API
        if event.key() in (Qt.Key.Key_Right, Qt.Key.Key_Down):
            self.show_step(min(self.slider.value() + 1, len(self.steps) - 1))
        elif event.key() in (Qt.Key.Key_Left, Qt.Key.Key_Up):
            self.show_step(max(self.slider.value() - 1, 0))
        else:
            super().keyPressEvent(event)


class CompareView(QWidget):
    """Two runs of one flow step by step (see the module doc)."""

    COLUMNS = ("#", "Step", "Status A \u2192 B", "Verdict A \u2192 B", "Locator A \u2192 B", "ms A", "ms B",
               "\u0394 ms", "Changed")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.deltas: list[StepDelta] = []
        self.header = QLabel("Select two runs of one flow on the Runs tab and press Compare.")
        self.header.setObjectName("compareHeader")
        self.header.setWordWrap(True)
        self.table = QTableWidget(0, len(self.COLUMNS))
        self.table.setObjectName("compareTable")
        self.table.setHorizontalHeaderLabels(list(self.COLUMNS))
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        h = self.table.horizontalHeader()
        h.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        h.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.header)
        lay.addWidget(self.table, 1)

    def show_comparison(self, a: RunDetail, b: RunDetail) -> list[StepDelta]:
        """Fill the table with the per-step deltas of ``a`` (reference) and ``b``; raises ValueError across flows."""
        self.deltas = compare_runs(a, b)
        self.table.setRowCount(len(self.deltas))

        def pair(x: str, y: str) -> str:
            return x if x == y else f"{x or '-'} \u2192 {y or '-'}"

        counts: dict[str, int] = {}
        for row, d in enumerate(self.deltas):
            sa, sb = d.a, d.b
            changes = d.changes
            for c in changes:
                counts[c] = counts.get(c, 0) + 1
            idx = (sa or sb).index + 1 if (sa or sb) else row + 1  # type: ignore[union-attr]
            loc_a = ("by hand" if sa.by_hand else sa.strategy or "-") if sa else ""
            loc_b = ("by hand" if sb.by_hand else sb.strategy or "-") if sb else ""
            color = CHANGE_COLORS[changes[0]] if changes else None
            cells = [
                _item(str(idx), align_right=True),
                _item(d.title, color=color),
                _item(pair(sa.status if sa else "", sb.status if sb else ""),
                      color=CHANGE_COLORS["status"] if d.status_changed else None),
                _item(pair((sa.verdict if sa else "").replace("_", " "), (sb.verdict if sb else "").replace("_", " ")),
                      color=CHANGE_COLORS["verdict"] if d.verdict_changed else None,
                      tip=(sb.verdict_reason if sb else "")),
                _item(pair(loc_a, loc_b), color=CHANGE_COLORS["healed"] if d.healed_now else None),
                _item(f"{sa.ms:.0f}" if sa else "", align_right=True),
                _item(f"{sb.ms:.0f}" if sb else "", align_right=True),
                _item("" if d.ms_delta is None else f"{d.ms_delta:+.0f}", align_right=True,
                      color=CHANGE_COLORS["slower"] if d.slower else None),
                _item(", ".join(changes) or "same", color=color or COLORS["muted"]),
            ]
            for col, cell in enumerate(cells):
                if changes:
                    cell.setBackground(QBrush(QColor(color).darker(420)))  # type: ignore[arg-type]
                self.table.setItem(row, col, cell)
        when = "%Y-%m-%d %H:%M:%S"
        summary = ", ".join(f"{n} {k}" for k, n in counts.items()) or "no step changed"
        self.header.setText(
            f"<b>{_html(a.run.flow)}</b> \u2014 A: run {_html(a.run.id[:8])} ({a.run.started_at.strftime(when)}, "
            f"{_html(a.run.status)}) vs B: run {_html(b.run.id[:8])} ({b.run.started_at.strftime(when)}, "
            f"{_html(b.run.status)}) \u00b7 {summary}")
        return self.deltas


class HistoryPanel(ReadsOffThread, QWidget):
    """Past runs of the project's store (see the module doc).

    Parameters
    ----------
    media_root : Path | None
        ``<project>/.steadyhand`` (the store file and its screenshots).
    flows : Sequence[str]
        Flow names offered in the filter (the store's own flows are added).
    flow_steps : Mapping[str, int], optional
        Flow name -> its number of steps in the project: a run's steps are
        counted against it ("3/11"), as the steps table and the progress
        count them; a flow not in it counts the steps the run reached.
    """

    #: The opened run scrubbed to a step: ``(StoredStep, QImage before)``.
    step_shown = Signal(object, QImage)
    #: A run was opened read-only: its :class:`~core.store.RunDetail`.
    run_opened = Signal(object)
    _read_done = Signal(object)

    def __init__(self, media_root: Path | None = None, flows: Sequence[str] = (),
                 parent: QWidget | None = None, flow_steps: Mapping[str, int] | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("historyPanel")
        self.media_root = Path(media_root) if media_root is not None else None
        self.entries: list[HistoryEntry] = []
        self._flows = list(flows)
        self._reads = OffThreadReads("studio-history-read", self._read_done.emit)
        self._read_again = self._stale = False
        self._read_done.connect(self._on_read, Qt.ConnectionType.QueuedConnection)
        self.flow_steps: dict[str, int] = dict(flow_steps or {})
        self.flow_filter = QComboBox()
        self.flow_filter.setObjectName("historyFlowFilter")
        self.flow_filter.currentIndexChanged.connect(lambda _i: self.refresh())
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.clicked.connect(self.refresh)
        self.open_button = QPushButton("Open read-only")
        self.open_button.clicked.connect(self.open_selected)
        self.compare_button = QPushButton("Compare")
        self.compare_button.setToolTip("Compare two selected runs of one flow, step by step")
        self.compare_button.clicked.connect(self.compare_selected)
        self.trace_button = QPushButton("Open trace")
        self.trace_button.setObjectName("historyTraceButton")
        self.trace_button.setToolTip("Open the selected run's Playwright trace (run --trace) in playwright show-trace")
        self.trace_button.clicked.connect(self.open_trace)
        #: Starts ``playwright show-trace PATH`` (argv -> None); replaced in tests.
        self.launch = _launch_detached
        self.note = QLabel("")
        self.note.setObjectName("historyNote")
        self.note.setStyleSheet(f"color: {COLORS['muted']};")
        self.table = QTableWidget(0, 6)
        self.table.setObjectName("historyTable")
        self.table.setHorizontalHeaderLabels(["Started", "Flow", "Status", "Steps", "Heals", "Duration"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.doubleClicked.connect(lambda idx: self.open_run(self.entries[idx.row()].run.id))
        self.table.itemSelectionChanged.connect(self._update_buttons)
        runs = QWidget()
        rl = QVBoxLayout(runs)
        rl.setContentsMargins(4, 4, 4, 4)
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Flow"))
        bar.addWidget(self.flow_filter)
        bar.addWidget(self.refresh_button)
        bar.addStretch(1)
        bar.addWidget(self.open_button)
        bar.addWidget(self.compare_button)
        bar.addWidget(self.trace_button)
        rl.addLayout(bar)
        rl.addWidget(self.table, 1)
        rl.addWidget(self.note)
        self.viewer = RunViewer()
        self.viewer.step_changed.connect(self._on_step_changed)
        self.compare_view = CompareView()
        self.tabs = QTabWidget()
        self.tabs.setObjectName("historyTabs")
        self.tabs.addTab(runs, "Runs")
        self.tabs.addTab(self.viewer, "Run")
        self.tabs.addTab(self.compare_view, "Compare")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.tabs)
        self._fill_filter([])
        self.refresh()

    # -- store -----------------------------------------------------------------------------

    @property
    def db(self) -> Path | None:
        return self.media_root / "store.sqlite" if self.media_root is not None else None

    def _store(self) -> Store | None:
        db = self.db
        if db is None or not db.is_file():
            return None
        return Store.open(db, read_only=True)

    def _fill_filter(self, flows: Sequence[str]) -> None:
        current = self.flow_filter.currentData()
        names = sorted(set(self._flows) | set(flows))
        self.flow_filter.blockSignals(True)
        self.flow_filter.clear()
        self.flow_filter.addItem("All flows", None)
        for n in names:
            self.flow_filter.addItem(n, n)
        i = self.flow_filter.findData(current)
        self.flow_filter.setCurrentIndex(max(i, 0))
        self.flow_filter.blockSignals(False)

    def refresh(self) -> None:
        """Read the runs again (newest first, at most 200), now (a person asked: the filter, the button)."""
        self._fill(self._read(self.flow_filter.currentData()))

    def refresh_later(self) -> None:
        """Read the runs again on a worker thread and show them when read (a run goes on: the GUI thread
        never waits for the store); a hidden panel reads them when it is shown.  Requests made while a read
        goes are served by one more read after it."""
        if not self.isVisible() and self.parent() is not None:
            self._stale = True
            return
        self._stale = False
        if self._reads.busy():
            self._read_again = True
            return
        self._read_again = False
        self._reads.start(self._read, self.flow_filter.currentData())

    def _on_read(self, result: object) -> None:
        self._fill(result)  # type: ignore[arg-type]
        if self._read_again:
            self.refresh_later()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt API
        super().showEvent(event)
        if self._stale:
            self.refresh_later()

    def _read(self, flow: str | None) -> tuple[list[HistoryEntry], list[str] | None, str]:
        """(entries, the store's flows or None, the note): any thread (a store of its own, read-only)."""
        try:
            store = self._store()
            if store is None:
                return [], None, "No run yet \u2014 press F5 to run a flow; finished runs are listed here."
            with store:
                entries = run_history(store, limit=200, flow=flow)
                flows = sorted({e.run.flow for e in run_history(store, limit=200)})
            return entries, flows, (f"{len(entries)} run{'s' * (len(entries) != 1)}"
                                    " \u00b7 double-click opens one read-only; select two of one flow to compare")
        except Exception as exc:  # noqa: BLE001 - shown, not raised: a damaged or newer store
            return [], None, f"Could not read the run history from {self.db}: {exc}"

    def _fill(self, result: tuple[list[HistoryEntry], list[str] | None, str]) -> None:
        entries, flows, note = result
        if flows is not None:
            self._fill_filter(flows)
        self.note.setText(note)
        old, self.entries = self.entries, entries
        # the usual change while a run goes: new runs on top, the oldest falling off; only those rows are
        # built (filling 200 rows per finished flow cost the GUI thread tens of ms)
        top = next(i for i in range(len(entries) + 1) if entries[i:] == old[:len(entries) - i])
        if top < len(entries) and self.table.rowCount() == len(old):
            for _ in range(top):
                self.table.insertRow(0)
            self.table.setRowCount(len(entries))
            changed = range(top)
        else:
            self.table.setRowCount(len(entries))
            changed = range(len(entries))
        for row in changed:
            e = entries[row]
            r = e.run
            dur = f"{r.seconds:.1f} s" if r.seconds is not None else "\u2014"
            cells = [_item(r.started_at.astimezone().strftime("%Y-%m-%d %H:%M:%S"), tip=r.id), _item(r.flow),
                     _item(status_label(e.label) + (f" \u00b7 by hand: {e.by_hand}" if e.by_hand else ""),
                           color=status_color("manual" if e.label != r.status else r.status).name(),
                           tip=r.error or (f"a person acted {counted(e.by_hand, 'time')} in this run (a takeover handed back)"
                                           if e.by_hand else "")),
                     self._steps_item(e),
                     _item(str(r.heals), align_right=True, color="#f5a524" if r.heals else None,
                           tip=", ".join(f"{k}: {v}" for k, v in r.heals_by_strategy.items())),
                     _item(dur, align_right=True)]
            for col, c in enumerate(cells):
                self.table.setItem(row, col, c)
        self._update_buttons()

    def set_flow_steps(self, flow_steps: Mapping[str, int]) -> None:
        """The project's flows were loaded again: count against their step numbers now."""
        self.flow_steps = dict(flow_steps)
        self.refresh()

    def total_steps(self, flow: str, reached: int) -> int:
        """Steps of ``flow`` as the steps table counts them (``reached`` when the flow is unknown or shorter)."""
        return max(self.flow_steps.get(flow, 0), reached)

    def _steps_item(self, e: HistoryEntry) -> QTableWidgetItem:
        total = max(e.run.steps_total or self.total_steps(e.run.flow, e.steps), e.steps)
        text = f"{e.passed}/{total}" + (f" \u00b7 {e.steps} run" if e.steps < total else "")
        tip = (f"{e.passed} of the flow's {total} steps passed" + (f" ({e.by_hand} by hand)" if e.by_hand else "")
               + f"; {e.steps} were run"
               + (" (the run ended before the others)" if e.steps < total else ""))
        return _item(text, align_right=True, tip=tip)

    def selected_runs(self) -> list[str]:
        rows = sorted({i.row() for i in self.table.selectionModel().selectedRows()})
        return [self.entries[r].run.id for r in rows if r < len(self.entries)]

    def select_runs(self, run_ids: Sequence[str]) -> None:
        self.table.clearSelection()
        mode = self.table.selectionMode()
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.MultiSelection)
        for row, e in enumerate(self.entries):
            if e.run.id in run_ids:
                self.table.selectRow(row)
        self.table.setSelectionMode(mode)

    def trace_of(self, run_id: str) -> Path | None:
        """The run's Playwright trace (``.steadyhand/traces/<run id>.zip``, :func:`core.engine.trace.trace_file`)."""
        from core.engine.trace import trace_file

        return trace_file(self.media_root, run_id) if self.media_root is not None else None

    def open_trace(self) -> Path | None:
        """Open the one selected run's trace with ``playwright show-trace`` (a process of its own); the path is
        said in the note either way.  Returns the trace, None when the run has none."""
        ids = self.selected_runs()
        trace = self.trace_of(ids[0]) if len(ids) == 1 else None
        if trace is None:
            self.note.setText("This run has no trace (run it with steadyhand run --trace on)")
            return None
        import sys

        try:
            self.launch([sys.executable, "-m", "playwright", "show-trace", str(trace)])
            self.note.setText(f"Trace opened in Playwright's trace viewer: {trace}")
        except OSError as exc:
            self.note.setText(f"Trace: {trace} (the viewer could not be started: {exc.strerror or exc}; "
                              f"run playwright show-trace {trace})")
        return trace

    def _update_buttons(self) -> None:
        ids = self.selected_runs()
        self.open_button.setEnabled(len(ids) == 1)
        self.trace_button.setEnabled(len(ids) == 1 and self.trace_of(ids[0]) is not None)
        flows = {e.run.flow for e in self.entries if e.run.id in ids}
        self.compare_button.setEnabled(len(ids) == 2 and len(flows) == 1)
        if len(ids) == 2 and len(flows) != 1:
            self.compare_button.setToolTip("These runs are of different flows: select two runs of one flow")
        else:
            self.compare_button.setToolTip("Compare two selected runs of one flow, step by step")

    def _detail(self, run_id: str) -> RunDetail | None:
        store = self._store()
        if store is None:
            return None
        with store:
            return store.run_detail(run_id)

    # -- actions ---------------------------------------------------------------------------

    def open_selected(self) -> None:
        ids = self.selected_runs()
        if len(ids) == 1:
            self.open_run(ids[0])

    def open_run(self, run_id: str) -> bool:
        """Open run ``run_id`` read-only on the Run tab; False (with a note) when it is not in the store."""
        detail = self._detail(run_id)
        if detail is None or self.media_root is None:
            self.note.setText(f"Run {run_id} is not in the store any more")
            return False
        self.viewer.show_run(detail, self.media_root, total=self.total_steps(detail.run.flow, 0))
        self.tabs.setCurrentWidget(self.viewer)
        self.run_opened.emit(detail)
        return True

    def compare_selected(self) -> None:
        ids = self.selected_runs()
        if len(ids) == 2:
            # the older run is A (the reference), the newer B
            older, newer = sorted(ids, key=lambda i: next(e.run.started_at for e in self.entries if e.run.id == i))
            self.compare(older, newer)

    def compare(self, run_a: str, run_b: str) -> list[StepDelta]:
        """Compare two runs (``run_a`` the reference) on the Compare tab; a note says why when it cannot."""
        a, b = self._detail(run_a), self._detail(run_b)
        if a is None or b is None:
            self.note.setText("One of these runs is not in the store any more")
            return []
        try:
            deltas = self.compare_view.show_comparison(a, b)
        except ValueError as exc:
            self.note.setText(str(exc))
            return []
        self.tabs.setCurrentWidget(self.compare_view)
        return deltas

    def _on_step_changed(self, row: int) -> None:
        s = self.viewer.steps[row]
        self.step_shown.emit(s, self.viewer.image(s.before))

    def apply(self, event: object) -> None:
        """A finished flow or batch: list the new run (read off the GUI thread: :meth:`refresh_later`)."""
        if isinstance(event, (FlowFinished, RunFinished)):
            self.refresh_later()
