"""Skill library: every skill of the project's skill space, by scope, with its uses (K1, K6, K7, K8).

Read from the store (``skills`` and ``skill_uses`` through
:class:`core.store.skills.SkillTable`, read-only opens); nothing is decided
here.  Left, the scope tree: product > task type > page (the scope's URL
prefix, page title or component; "any page" when none is set).  Right, the
skills under the selected branch, filtered by a search box (description,
id, trigger and action words) and a state filter: state, quality, hits
(uses that passed / failed / were refused), last used.  Below, where the
selected skill fired: one row per stored use (run, flow, step, outcome,
time, reason); double-click (or Enter) asks the window to open that run in
the history at that step (:attr:`SkillLibraryPanel.use_opened`).
**Review** shows the skill in the review queue; **Retire** stops it firing
(asks for a reason; :mod:`core.skills.library`).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QKeyEvent
from PySide6.QtWidgets import (
    QAbstractItemView, QComboBox, QHBoxLayout, QHeaderView, QInputDialog, QLabel, QLineEdit, QPushButton,
    QSplitter, QTableWidget, QTableWidgetItem, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget,
)

from core.domain.skill import SKILL_STATES, Skill

__all__ = ["SkillLibraryPanel", "LibraryRow", "scope_path", "skill_haystack", "STATE_COLORS", "USE_COLORS"]

def _state_item(s: Skill) -> QTableWidgetItem:
    """The state cell: the review state, and "imported, not reviewed here" for an imported skill no person
    of this project reviewed (:func:`core.skills.library.reviewed_here`)."""
    from core.skills.library import reviewed_here  # noqa: PLC0415

    if reviewed_here(s):
        # a rejected or retired skill says why where it is listed, not only in a tooltip
        why = f" \u2014 {s.review_reason}" if s.review_reason and s.state in ("rejected", "retired") else ""
        return _item(s.state + why, color=STATE_COLORS.get(s.state), tip=s.review_reason)
    tip = ("Imported from a skill file and not reviewed in this project: its validation, quality and counters "
           "were not kept" + (f"\n{s.review_reason}" if s.review_reason else ""))
    return _item(f"{s.state} \u00b7 imported, not reviewed here", color=STATE_COLORS.get(s.state), tip=tip)


#: Review state -> colour (proposed amber, approved green, rejected red, retired grey).
STATE_COLORS = {"proposed": "#e6c07b", "approved": "#3ecf8e", "rejected": "#f0524f", "retired": "#9aa0aa"}
#: Use outcome -> colour.
USE_COLORS = {"passed": "#3ecf8e", "failed": "#f0524f", "precondition": "#f5a524", "half": "#9aa0aa",
              "denied": "#4c8dff"}
_ANY = "(any)"
_ANY_TASK = "any task"


def scope_path(skill: Skill) -> tuple[str, str, str]:
    """``(product, task type, page)`` of a skill's scope ("(any)", "any task", "any page" when unset)."""
    s = skill.scope
    page = s.url_prefix or s.title or s.component
    return s.product or _ANY, s.task_type or _ANY_TASK, page or "any page"


def skill_haystack(skill: Skill) -> str:
    """Lower-case words a search matches: description, id, trigger and action texts, scope."""
    t = skill.trigger
    words = [skill.description, skill.id, t.url_pattern, t.title, t.dialog_name, skill.scope.task_type,
             skill.scope.url_prefix, skill.scope.title, skill.scope.component]
    for c in (*t.required, *t.absent):
        words += [c.role, c.name, c.label, c.text, c.placeholder, c.test_id]
    for a in skill.actions:
        words += [a.action.kind, a.action.value, a.note, a.target.role, a.target.name, a.target.label,
                  a.target.text, a.target.placeholder, a.target.test_id]
    return " ".join(w for w in words if w).lower()


@dataclass(frozen=True)
class LibraryRow:
    """One skill as the library shows it: the skill, its use counts by outcome, hits (passed uses)."""

    skill: Skill
    counts: dict[str, int]

    @property
    def hits(self) -> int:
        return self.counts.get("passed", 0)

    @property
    def uses(self) -> int:
        return sum(self.counts.values())


def _item(text: str, *, color: str | None = None, tip: str = "", right: bool = False) -> QTableWidgetItem:
    it = QTableWidgetItem(text)
    it.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
    if color:
        it.setForeground(QBrush(QColor(color)))
    if tip:
        it.setToolTip(tip)
    if right:
        it.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return it


def _ago(dt: datetime | None, now: datetime) -> str:
    if dt is None:
        return "never"
    s = (now - dt).total_seconds()
    if s < 90:
        return "just now"
    if s < 5400:
        return f"{s / 60:.0f} min ago"
    if s < 129600:
        return f"{s / 3600:.0f} h ago"
    return f"{s / 86400:.0f} days ago"


class _UsesTable(QTableWidget):
    """Enter opens the selected use like a double-click."""

    activated_row = Signal(int)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt API
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self.currentRow() >= 0:
            self.activated_row.emit(self.currentRow())
            return
        super().keyPressEvent(event)


class SkillLibraryPanel(QWidget):
    """The skill space of one project: scope tree, skills, where the selected one fired.

    Parameters
    ----------
    root : Path | None
        The project folder (the store is ``<root>/.steadyhand/store.sqlite``).
    product : str | None
        The skill space shown (the project's name); None shows every product.
    ask_reason : Callable[[QWidget, str], str | None] | None
        Asks a retire reason; default a QInputDialog.

    Signals
    -------
    use_opened(str, int)
        ``(run id, step index)`` of a use double-clicked: open that run at that step.
    review_requested(str)
        ``"skill:<id>"``: show this skill in the review queue.
    retired(str)
        A skill id retired from here.
    """

    use_opened = Signal(str, int)
    review_requested = Signal(str)
    retired = Signal(str)

    def __init__(self, root: Path | str | None = None, product: str | None = None, *,
                 ask_reason: Callable[[QWidget, str], str | None] | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("skillLibrary")
        self.root = Path(root) if root is not None else None
        self.product = product
        self._ask_reason = ask_reason or _ask_retire_reason
        self.rows: list[LibraryRow] = []
        self.shown: list[LibraryRow] = []
        self.uses: list[Any] = []
        self._scope: tuple[str, ...] = ()

        self.search = QLineEdit()
        self.search.setObjectName("skillSearch")
        self.search.setPlaceholderText("Search skills: description, trigger, action words\u2026")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(lambda _t: self._fill_table())
        self.state_filter = QComboBox()
        self.state_filter.setObjectName("skillStateFilter")
        self.state_filter.addItem("All states", None)
        for st in SKILL_STATES:
            self.state_filter.addItem(st, st)
        self.state_filter.currentIndexChanged.connect(lambda _i: self._fill_table())
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.clicked.connect(lambda: self.refresh())
        self.review_button = QPushButton("Review")
        self.review_button.setToolTip("Show this skill in the review queue (form, evidence, Approve / Reject)")
        self.review_button.clicked.connect(self._review)
        self.retire_button = QPushButton("Retire\u2026")
        self.retire_button.setToolTip("Stop it firing at once (asks for a reason)")
        self.retire_button.clicked.connect(lambda: self.retire_selected())
        bar = QHBoxLayout()
        bar.addWidget(self.search, 1)
        bar.addWidget(self.state_filter)
        bar.addWidget(self.refresh_button)
        bar.addWidget(self.review_button)
        bar.addWidget(self.retire_button)

        self.tree = QTreeWidget()
        self.tree.setObjectName("skillScopeTree")
        self.tree.setHeaderLabels(["Scope", "#"])
        self.tree.headerItem().setToolTip(1, "Skills in this branch")
        self.tree.setMinimumWidth(170)
        self.tree.setIndentation(14)
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.tree.header().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.header().setStretchLastSection(False)
        self.tree.currentItemChanged.connect(self._on_scope)

        self.table = QTableWidget(0, 6)
        self.table.setObjectName("skillTable")
        self.table.setHorizontalHeaderLabels(["Skill", "State", "Quality", "Hits", "Uses", "Last used"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setWordWrap(False)
        h = self.table.horizontalHeader()
        h.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        h.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.itemSelectionChanged.connect(self._on_skill)
        self.table.doubleClicked.connect(lambda _i: self._review())

        self.uses_title = QLabel()
        self.uses_title.setObjectName("panelTitle")
        self.uses_title.setWordWrap(True)
        self.uses_table = _UsesTable(0, 6)
        self.uses_table.setObjectName("skillUses")
        self.uses_table.setHorizontalHeaderLabels(["When", "Run", "Flow", "Step", "Outcome", "Reason"])
        self.uses_table.verticalHeader().setVisible(False)
        self.uses_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.uses_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.uses_table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.uses_table.setWordWrap(False)
        uh = self.uses_table.horizontalHeader()
        uh.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        uh.setSectionResizeMode(5, QHeaderView.ResizeMode.Stretch)
        self.uses_table.doubleClicked.connect(lambda idx: self.open_use(idx.row()))
        self.uses_table.activated_row.connect(self.open_use)
        self.note = QLabel()
        self.note.setObjectName("historyNote")
        self.note.setStyleSheet("color: #9aa0aa;")
        self.note.setWordWrap(True)

        uses = QWidget()
        ul = QVBoxLayout(uses)
        ul.setContentsMargins(0, 0, 0, 0)
        ul.addWidget(self.uses_title)
        ul.addWidget(self.uses_table, 1)
        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(self.table)
        right.addWidget(uses)
        right.setStretchFactor(0, 3)
        right.setStretchFactor(1, 2)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.setObjectName("skillLibrarySplit")
        split.addWidget(self.tree)
        split.addWidget(right)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 3)
        split.setSizes([230, 800])
        self.splitter = split
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(bar)
        lay.addWidget(split, 1)
        lay.addWidget(self.note)
        self.refresh()

    # --- store -------------------------------------------------------------------------------------
    def set_root(self, root: Path | str | None, product: str | None = None) -> None:
        """Another project was opened: read its skill space."""
        self.root = Path(root) if root is not None else None
        self.product = product
        self.refresh()

    def _store(self, *, write: bool = False) -> Any:
        from core.store import Store, store_path  # noqa: PLC0415

        if self.root is None or not store_path(self.root).is_file():
            return None
        if write:  # the project's redactor, as `steadyhand skills` writes (a reason never stores a secret)
            from .skill_review import skill_operations  # noqa: PLC0415

            ctx = skill_operations().review_context(self.root, product_without_project=self.product or "")
            return ctx.open_store()
        return Store.open(store_path(self.root), read_only=True)

    def refresh_when_seen(self) -> None:
        """Read the skills again now when the panel is seen, else when it is next shown (a review move in the
        Review dock, tabbed with this one, does not make the GUI thread read a store nobody looks at)."""
        if self.is_seen():
            self._stale = False
            self.refresh()
        else:
            self._stale = True

    def is_seen(self) -> bool:
        """Shown and not covered (a dock tabbed behind another stays "visible" to Qt, with nothing of it drawn)."""
        return self.isVisible() and not self.visibleRegion().isEmpty()

    def refresh_if_stale(self) -> None:
        """Read the skills when a review move asked for it while the panel was not seen (its dock came to front)."""
        if getattr(self, "_stale", False):
            self._stale = False
            self.refresh()

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt API
        super().showEvent(event)
        self.refresh_if_stale()

    def refresh(self, select: str | None = None) -> None:
        """Read the skills and their use counts again; keep the selected skill (or ``select``, an id)."""
        from core.store.skills import SkillTable  # noqa: PLC0415

        keep = select or (self.current().skill.id if self.current() is not None else None)
        try:
            store = self._store()
            if store is None:
                self.rows = []
                self.note.setText("No skill yet \u2014 a failure corrected by hand during a run leaves a proposed "
                                  "skill in the review queue; approved ones are listed here.")
            else:
                with store:
                    table = SkillTable(store)
                    counts = table.use_counts()
                    self.rows = [LibraryRow(s, counts.get(s.id, {})) for s in table.list(product=self.product)]
                n = len(self.rows)
                self.note.setText(f"{n} skill{'s' * (n != 1)} \u00b7 double-click a skill to review it, a use "
                                  "to open its run at that step")
        except Exception as exc:  # noqa: BLE001 - shown, not raised: a damaged or newer store
            self.rows = []
            self.note.setText(f"Could not read the skill library: {exc}")
        self._fill_tree()
        self._fill_table(keep)

    def _fill_tree(self) -> None:
        keep = self._scope
        self.tree.blockSignals(True)
        self.tree.clear()
        top = QTreeWidgetItem(["All skills", str(len(self.rows))])
        top.setData(0, Qt.ItemDataRole.UserRole, ())
        self.tree.addTopLevelItem(top)
        nodes: dict[tuple[str, ...], QTreeWidgetItem] = {(): top}
        counts: dict[tuple[str, ...], int] = {}
        for r in self.rows:
            path = scope_path(r.skill)
            for depth in range(1, 4):
                key = path[:depth]
                counts[key] = counts.get(key, 0) + 1
                if key not in nodes:
                    it = QTreeWidgetItem([key[-1], ""])
                    it.setData(0, Qt.ItemDataRole.UserRole, key)
                    it.setToolTip(0, " > ".join(key))
                    nodes[key[:-1]].addChild(it)
                    nodes[key] = it
        for key, it in nodes.items():
            if key:
                it.setText(1, str(counts[key]))
        self.tree.expandAll()
        current = nodes.get(keep, top)
        self._scope = tuple(current.data(0, Qt.ItemDataRole.UserRole) or ())
        self.tree.setCurrentItem(current)
        self.tree.blockSignals(False)

    def _on_scope(self, current: QTreeWidgetItem | None, _prev: QTreeWidgetItem | None) -> None:
        self._scope = tuple(current.data(0, Qt.ItemDataRole.UserRole) or ()) if current is not None else ()
        self._fill_table()

    def select_scope(self, *path: str) -> bool:
        """Select the scope branch ``path`` (product, task type, page); True when it is in the tree."""
        def walk(it: QTreeWidgetItem) -> QTreeWidgetItem | None:
            if tuple(it.data(0, Qt.ItemDataRole.UserRole) or ()) == tuple(path):
                return it
            for i in range(it.childCount()):
                found = walk(it.child(i))
                if found is not None:
                    return found
            return None

        for i in range(self.tree.topLevelItemCount()):
            found = walk(self.tree.topLevelItem(i))
            if found is not None:
                self.tree.setCurrentItem(found)
                return True
        return False

    def _fill_table(self, keep: str | None = None) -> None:
        keep = keep or (self.current().skill.id if self.current() is not None else None)
        words = self.search.text().lower().split()
        state = self.state_filter.currentData()
        scope = self._scope
        self.shown = [r for r in self.rows
                      if scope_path(r.skill)[:len(scope)] == scope
                      and (state is None or r.skill.state == state)
                      and all(w in skill_haystack(r.skill) for w in words)]
        now = datetime.now(timezone.utc)
        self.table.blockSignals(True)
        self.table.clearSelection()
        self.table.setRowCount(len(self.shown))
        for row, r in enumerate(self.shown):
            s = r.skill
            counts = ", ".join(f"{k} {v}" for k, v in sorted(r.counts.items())) or "no use yet"
            q_color = "#3ecf8e" if s.quality >= 0.7 else "#f5a524" if s.quality >= 0.3 else "#f0524f"
            cells = [
                _item(s.description or s.id, tip=f"{s.id} \u00b7 {' > '.join(scope_path(s))}"),
                _state_item(s),
                _item(f"{s.quality:.2f}", color=q_color, right=True,
                      tip="below 0.3: in the review area" if s.quality < 0.3 else ""),
                _item(str(r.hits), right=True, tip=counts),
                _item(str(r.uses), right=True, tip=counts),
                _item(_ago(s.last_used_at, now),
                      tip=s.last_used_at.strftime("%Y-%m-%d %H:%M UTC") if s.last_used_at else ""),
            ]
            for c, cell in enumerate(cells):
                self.table.setItem(row, c, cell)
        self.table.blockSignals(False)
        row = next((i for i, r in enumerate(self.shown) if r.skill.id == keep), 0 if self.shown else -1)
        if row >= 0:
            self.table.selectRow(row)
        self._on_skill()

    # --- selection ----------------------------------------------------------------------------------
    def current(self) -> LibraryRow | None:
        rows = self.table.selectionModel().selectedRows() if self.table.selectionModel() else []
        r = rows[0].row() if rows else -1
        return self.shown[r] if 0 <= r < len(self.shown) else None

    def select_skill(self, skill_id: str) -> bool:
        """Select ``skill_id`` in the table (clearing the filters if they hide it)."""
        if not any(r.skill.id == skill_id for r in self.shown):
            self.search.clear()
            self.state_filter.setCurrentIndex(0)
            self.select_scope()
        row = next((i for i, r in enumerate(self.shown) if r.skill.id == skill_id), -1)
        if row < 0:
            return False
        self.table.selectRow(row)
        return True

    def _on_skill(self) -> None:
        from core.store.skills import SkillTable  # noqa: PLC0415

        cur = self.current()
        self.review_button.setEnabled(cur is not None)
        self.retire_button.setEnabled(cur is not None and cur.skill.state in ("approved", "proposed"))
        self.uses = []
        if cur is not None:
            try:
                store = self._store()
                if store is not None:
                    with store:
                        self.uses = SkillTable(store).uses(skill_id=cur.skill.id)
            except Exception as exc:  # noqa: BLE001
                self.note.setText(f"Could not read the uses of {cur.skill.id}: {exc}")
        if cur is None:
            self.uses_title.setText("Select a skill to see where it fired")
        else:
            n = len(self.uses)
            s = cur.skill
            why = (f"<br><span style='color:{STATE_COLORS.get(s.state, '#9aa0aa')}'>{_html(s.state.capitalize())}: "
                   f"{_html(s.review_reason)}</span>" if s.review_reason and s.state in ("rejected", "retired") else "")
            self.uses_title.setText(
                f"Where <b>{_html(s.description or s.id)}</b> fired: {n} use{'s' * (n != 1)}"
                + (" \u00b7 double-click one to open its run at that step" if n else "") + why)
        self.uses_table.setRowCount(len(self.uses))
        for row, u in enumerate(self.uses):
            when = u.at.astimezone().strftime("%m-%d %H:%M:%S") if u.at else ""
            cells = [_item(when, tip=u.at.astimezone().strftime("%Y-%m-%d %H:%M:%S") if u.at else ""), _item(u.run_id[:8], tip=u.run_id), _item(u.flow),
                     _item(f"{u.step_index + 1}", right=True, tip=u.step_id),
                     _item(u.outcome, color=USE_COLORS.get(u.outcome)),
                     _item(u.reason or (f"{u.ms:.0f} ms" if u.ms else ""), tip=u.reason)]
            for c, cell in enumerate(cells):
                self.uses_table.setItem(row, c, cell)

    # --- answers ------------------------------------------------------------------------------------
    def open_use(self, row: int) -> bool:
        """Ask to open use ``row``'s run at its step (:attr:`use_opened`); False for no such use."""
        if not (0 <= row < len(self.uses)) or not self.uses[row].run_id:
            return False
        u = self.uses[row]
        self.use_opened.emit(u.run_id, int(u.step_index))
        return True

    def _review(self) -> None:
        cur = self.current()
        if cur is not None:
            self.review_requested.emit(f"skill:{cur.skill.id}")

    def retire_selected(self, reason: str | None = None) -> bool:
        """Retire the selected skill (reason asked for when None; a blank one is refused); True when stored."""
        from core.store.skills import SkillTable  # noqa: PLC0415

        from .skill_review import skill_operations  # noqa: PLC0415

        cur = self.current()
        if cur is None or cur.skill.state not in ("approved", "proposed"):
            return False
        if reason is None:
            reason = self._ask_reason(self, f"Retire skill {cur.skill.description or cur.skill.id}")
            if reason is None:
                return False
        if not reason.strip():
            self.note.setText("Not retired: a reason is required (it is kept with the skill)")
            return False
        try:
            store = self._store(write=True)
            if store is None:
                return False
            with store:
                skill_operations().retire(SkillTable(store), cur.skill.id, reason.strip())
        except Exception as exc:  # noqa: BLE001
            self.note.setText(f"Not retired: {exc}")
            return False
        self.retired.emit(cur.skill.id)
        self.refresh(select=cur.skill.id)
        return True


def _html(text: str) -> str:
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _ask_retire_reason(parent: QWidget, title: str) -> str | None:
    text, ok = QInputDialog.getText(parent, title, "Why should it stop firing? (kept with the skill)")
    return text if ok else None

