"""Desktop habits of the studio window: project folder watcher, find bar, shortcut list, recent projects, errors.

Kept out of :mod:`studio.main_window` so that the window only wires them:

* :class:`ProjectWatcher` - a ``QFileSystemWatcher`` over the project folder,
  its settings file, the ``flows`` folder and every flow file; ``changed``
  fires once per burst of edits (debounced 300 ms, an editor's save is
  several events).
* :class:`FindBar` - Ctrl+F: filters the rows of a table view (steps) and
  highlights the matching lines of a text log, Escape closes it.
* :class:`ShortcutsDialog` - F1: every action with a shortcut, by menu.
* :func:`recent_projects` / :func:`remember_project` - the Recent projects
  list kept in ``QSettings`` (at most :data:`MAX_RECENT`).
* :class:`ErrorsButton` - a status bar button counting errors; it shows the
  last ones with their detail (traceback, file, field).
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from PySide6.QtCore import QFileSystemWatcher, QObject, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QColor, QKeySequence, QTextCharFormat, QTextCursor, QTextDocument
from PySide6.QtWidgets import (
    QAbstractItemView, QDialog, QDialogButtonBox, QHeaderView, QLabel, QLineEdit, QMainWindow, QMessageBox,
    QPlainTextEdit, QTableView, QTableWidget, QTableWidgetItem, QTextEdit, QToolBar, QToolButton, QVBoxLayout, QWidget,
)
from core.progress import counted

__all__ = [
    "ProjectWatcher", "FindBar", "ShortcutsDialog", "ErrorsButton", "recent_projects", "remember_project",
    "MAX_RECENT", "RECENT_KEY", "shortcut_rows",
]

#: How many projects File > Recent projects keeps.
MAX_RECENT = 8
RECENT_KEY = "recentProjects"
#: Quiet time after the last file event before ``changed`` fires (ms): one save is several events.
DEBOUNCE_MS = 300


class ProjectWatcher(QObject):
    """Watches a project folder; ``changed(paths)`` after edits settle (paths: the files or folders touched)."""

    changed = Signal(list)

    def __init__(self, root: Path | str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.root = Path(root)
        self._w = QFileSystemWatcher(self)
        self._touched: set[str] = set()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self._fire)
        self._w.fileChanged.connect(self._on_change)
        self._w.directoryChanged.connect(self._on_change)
        self._seen = self._snapshot()
        self.rewatch()

    def _snapshot(self) -> dict[str, tuple[int, int]]:
        """(mtime ns, size) of the project file and every flow file: what a change must change."""
        out: dict[str, tuple[int, int]] = {}
        files = [self.root / "steadyhand.yaml"]
        flows = self.root / "flows"
        if flows.is_dir():
            files += sorted(flows.glob("*.yaml"))
        for f in files:
            try:
                st = f.stat()
            except OSError:
                continue
            out[str(f)] = (st.st_mtime_ns, st.st_size)
        return out

    def rewatch(self) -> None:
        """Watch the current set of files (a new flow file, a file replaced by an atomic write)."""
        paths = [self.root, self.root / "steadyhand.yaml", self.root / "flows"]
        flows = self.root / "flows"
        if flows.is_dir():
            paths += sorted(flows.glob("*.yaml"))
        want = {str(p) for p in paths if p.exists()}
        have = set(self._w.files()) | set(self._w.directories())
        gone = sorted(have - want)
        if gone:
            self._w.removePaths(gone)
        new = sorted(want - have)
        if new:
            self._w.addPaths(new)

    def watched(self) -> list[str]:
        return sorted(set(self._w.files()) | set(self._w.directories()))

    def _on_change(self, path: str) -> None:
        if Path(path).name.startswith(".") or "/.steadyhand" in path:
            return
        self._touched.add(path)
        self._timer.start()

    def _fire(self) -> None:
        touched, self._touched = sorted(self._touched), set()
        self.rewatch()  # an atomic write replaced the file: watch the new one
        now = self._snapshot()
        if now == self._seen:
            return  # the folder changed but no project or flow file did (the run-data folder was made)
        self._seen = now
        self.changed.emit(touched)


class FindBar(QToolBar):
    """Find in the steps and the event log (Ctrl+F); Escape or the x closes it and clears the filter.

    Rows of ``table`` whose cells do not contain the text (case-insensitive)
    are hidden; every match in ``log`` is highlighted and the first one is
    scrolled to.  ``summary`` says how many of each matched.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Find", parent)
        self.setObjectName("findBar")
        self.setMovable(False)
        self.edit = QLineEdit()
        self.edit.setObjectName("findEdit")
        self.edit.setPlaceholderText("Find in steps and the event log\u2026")
        self.edit.setClearButtonEnabled(True)
        self.edit.setMaximumWidth(360)
        self.summary = QLabel()
        self.addWidget(QLabel(" Find "))
        self.addWidget(self.edit)
        self.addWidget(self.summary)
        close = QToolButton()
        close.setText("\u2715")
        close.setToolTip("Close (Esc)")
        close.clicked.connect(self.close_bar)
        self.addWidget(close)
        self.tables: list[QTableView] = []
        self.logs: list[QPlainTextEdit] = []
        self.edit.textChanged.connect(self.apply)
        esc = QAction(self)
        esc.setShortcut(QKeySequence(Qt.Key.Key_Escape))
        esc.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        esc.triggered.connect(self.close_bar)
        self.addAction(esc)
        self.hide()

    def set_targets(self, tables: Sequence[QTableView], logs: Sequence[QPlainTextEdit]) -> None:
        self.tables, self.logs = list(tables), list(logs)

    def open_bar(self) -> None:
        self.show()
        self.edit.setFocus()
        self.edit.selectAll()
        self.apply()

    def close_bar(self) -> None:
        self.edit.clear()
        self.apply()
        self.hide()

    def apply(self, *_args: object) -> None:
        text = self.edit.text().strip().lower()
        rows = self._filter_tables(text)
        lines = self._highlight_logs(text)
        self.summary.setText(f"  {counted(rows, 'step')} \u00b7 {counted(lines, 'log line')}" if text else "")

    def _filter_tables(self, text: str) -> int:
        shown = 0
        for view in self.tables:
            model = view.model()
            if model is None:
                continue
            for r in range(model.rowCount()):
                cells = " ".join(str(model.index(r, c).data() or "") for c in range(model.columnCount())).lower()
                hide = bool(text) and text not in cells
                view.setRowHidden(r, hide)
                shown += 0 if hide else 1
        return shown

    def _highlight_logs(self, text: str) -> int:
        count = 0
        for log in self.logs:
            selections: list[QTextEdit.ExtraSelection] = []
            if text:
                fmt = QTextCharFormat()
                fmt.setBackground(QColor("#6b5b1e"))
                doc = log.document()
                cur = doc.find(text, 0)
                first: QTextCursor | None = None
                lines: set[int] = set()
                while not cur.isNull() and len(selections) < 2000:
                    sel = QTextEdit.ExtraSelection()
                    sel.cursor = cur
                    sel.format = fmt
                    selections.append(sel)
                    lines.add(cur.blockNumber())
                    first = first or QTextCursor(cur)
                    cur = doc.find(text, cur, QTextDocument.FindFlag(0))
                count += len(lines)
                if first is not None:
                    log.setTextCursor(first)
                    log.ensureCursorVisible()
            log.setExtraSelections(selections)
        return count


def shortcut_rows(window: QMainWindow) -> list[tuple[str, str, str]]:
    """``(menu, action, shortcut)`` of every action of ``window``'s menus that has a shortcut, in menu order."""
    rows: list[tuple[str, str, str]] = []
    seen: set[int] = set()
    for menu_action in window.menuBar().actions():
        menu = menu_action.menu()
        if menu is None:
            continue
        title = menu.title().replace("&", "")
        for a in menu.actions():
            sub = a.menu()
            for b in (sub.actions() if sub is not None else [a]):
                if b.shortcut().isEmpty() or id(b) in seen:
                    continue
                seen.add(id(b))
                rows.append((title, b.text().replace("&", "").rstrip("\u2026."),
                             b.shortcut().toString(QKeySequence.SequenceFormat.NativeText)))
    return rows


class ShortcutsDialog(QDialog):
    """F1: the keyboard shortcuts of the window's menus in one table."""

    def __init__(self, window: QMainWindow) -> None:
        super().__init__(window)
        self.setWindowTitle("Keyboard shortcuts")
        self.setObjectName("shortcutsDialog")
        rows = shortcut_rows(window)
        self.table = QTableWidget(len(rows), 3)
        self.table.setHorizontalHeaderLabels(["Menu", "Command", "Shortcut"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                self.table.setItem(r, c, QTableWidgetItem(text))
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        lay = QVBoxLayout(self)
        lay.addWidget(QLabel("Shortcuts work from anywhere in the window; the run controls also from the toolbar."))
        lay.addWidget(self.table, 1)
        box = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        box.rejected.connect(self.reject)
        box.accepted.connect(self.accept)
        lay.addWidget(box)
        self.resize(520, 520)


def recent_projects(settings: QSettings | None) -> list[str]:
    """The recent project folders (newest first) that still exist."""
    if settings is None:
        return []
    raw = settings.value(RECENT_KEY, [])
    items = [raw] if isinstance(raw, str) else list(raw or [])
    return [p for p in items if p and Path(p).is_dir()][:MAX_RECENT]


def remember_project(settings: QSettings | None, path: Path | str) -> list[str]:
    """Put ``path`` first in the recent projects; returns the new list."""
    if settings is None:
        return []
    p = str(Path(path).expanduser().resolve())
    items = [p] + [x for x in recent_projects(settings) if x != p]
    settings.setValue(RECENT_KEY, items[:MAX_RECENT])
    return items[:MAX_RECENT]


class ErrorsButton(QToolButton):
    """``\u26a0 N errors`` in the status bar; a click shows the last errors with their detail."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("errorsButton")
        self.setAutoRaise(True)
        self.errors: list[tuple[str, str]] = []
        self.clicked.connect(self.show_errors)
        self.hide()

    def add(self, message: str, detail: str = "") -> None:
        self.errors = (self.errors + [(message, detail)])[-50:]
        self.setText(f"\u26a0 {len(self.errors)} error{'s' if len(self.errors) != 1 else ''}")
        self.setToolTip(message)
        self.show()

    def clear(self) -> None:
        self.errors = []
        self.hide()

    def box(self) -> QMessageBox:
        msg, _ = self.errors[-1]
        box = QMessageBox(QMessageBox.Icon.Warning, "Errors", msg, QMessageBox.StandardButton.Close,
                          self.window())
        box.setDetailedText("\n\n".join(f"{m}\n{d}".strip() for m, d in reversed(self.errors)))
        clear = box.addButton("Clear", QMessageBox.ButtonRole.ResetRole)
        clear.clicked.connect(self.clear)
        return box

    def show_errors(self) -> None:
        if self.errors:
            self.box().open()

