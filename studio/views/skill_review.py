"""Skill review: a proposed skill in the review queue, beside the heal proposals (K1, K5, K8).

A :class:`SkillItem` is one skill of the project's skill space (the store's
``skills`` table through :class:`core.store.skills.SkillTable`); the review
panel (:class:`studio.views.heal_review.HealReviewPanel`) lists it in the
same queue as heal proposals and shows it with :class:`SkillProposalView`:

* the failed segment and the correction side by side - the failure record's
  screenshot with the failing element boxed (red, dashed) and the steps of
  its trajectory, the correction's screenshot with the elements the person
  acted on boxed (green, numbered), its crops and its steps;
* the skill as an editable form (:class:`SkillForm`): description, trigger
  conditions, actions with their semantic targets (role, accessible name,
  label, text, placeholder, test id - nothing else can be typed in), scope
  and limits;
* its validation results (cases, pass rate, reasons, reproduced) and where
  it came from;
* **Approve**, **Reject** (a reason is required), **Save edits**, **Retire**
  (a reason is required).  They call :mod:`core.skills.library` (which
  checks the rules); the panel never decides anything itself.  A skill whose
  validation did not pass (the library's :func:`~core.skills.library.approval_problem`)
  is approved only after the reviewer confirmed the problem shown.

Everything shown is read from the store; errors are shown in the panel,
never raised into Qt.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QImage, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView, QCheckBox, QComboBox, QFormLayout, QGroupBox, QHBoxLayout, QHeaderView, QLabel, QLineEdit,
    QListWidget, QListWidgetItem, QPushButton, QScrollArea, QSizePolicy, QSpinBox, QSplitter, QTableWidget,
    QTableWidgetItem, QToolButton, QVBoxLayout, QWidget,
)

from core.domain import ElementDescriptor
from core.domain.flow import ACTION_KINDS, Action
from core.domain.skill import ElementCondition, Skill, SkillAction, SkillScope
from core.skills.kinds import kind_skill_words

from ..plain_words import plain_words
from .heal_review import NEW_COLOR, OLD_COLOR, ShotView

__all__ = ["SkillEvidence", "SkillItem", "SkillSource", "SkillForm", "SkillFormError", "SkillProposalView",
           "skill_operations", "box_of", "step_line", "CONDITION_FIELDS", "ACTION_COLUMNS"]

#: Columns of a trigger condition row (the semantic fields of :class:`ElementCondition`).
CONDITION_FIELDS = ("role", "name", "label", "text", "placeholder", "test_id")
#: Columns of an action row: the action, then its target's semantic fields, then the note.
ACTION_COLUMNS = ("kind", "value", "role", "name", "label", "text", "placeholder", "test_id", "note")
#: Columns of the action table that are target fields.
_TARGET_COLUMNS = ("role", "name", "label", "text", "placeholder", "test_id")


# --- the library operations ---------------------------------------------------------------------


def skill_kind_words(kind: str) -> str:
    """A skill's kind in words (``do`` / ``deny`` are the store's codes, not shown)."""
    return {"do": "a skill that acts", "deny": "a skill that keeps the run off an element"}.get(kind, "a skill")


def skill_operations() -> Any:
    """The review operations (:mod:`core.skills.library`: ``approve / reject / retire / edit``)."""
    from core.skills import library  # noqa: PLC0415

    return library


# --- items ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SkillEvidence:
    """What a skill proposal rests on, read from the store.

    Boxes are ``((x, y, w, h), label, colour, dashed)`` in CSS px, drawn
    times ``*_dpr`` on the screenshots (device px).  ``failure_steps`` /
    ``correction_steps`` are one line each; ``failure_row`` is the line of the
    failure point (-1: unknown).
    """

    failure_shot: Path | None = None
    failure_boxes: tuple[tuple[tuple[float, float, float, float], str, str, bool], ...] = ()
    failure_dpr: float = 1.0
    failure_steps: tuple[str, ...] = ()
    failure_row: int = -1
    failure_note: str = ""
    correction_shot: Path | None = None
    correction_boxes: tuple[tuple[tuple[float, float, float, float], str, str, bool], ...] = ()
    correction_dpr: float = 1.0
    correction_steps: tuple[str, ...] = ()
    crops: tuple[tuple[str, Path], ...] = ()
    correction_note: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)


def box_of(target: Mapping[str, Any] | None) -> tuple[float, float, float, float] | None:
    """``(x, y, w, h)`` CSS px of a stored target's ``bbox`` (a list or an ``{x, y, width, height}`` mapping)."""
    if not isinstance(target, Mapping):
        return None
    b = target.get("bbox") or target.get("box")
    if isinstance(b, (list, tuple)) and len(b) == 4:
        return tuple(float(v) for v in b)  # type: ignore[return-value]
    if isinstance(b, Mapping) and {"x", "y", "width", "height"} <= set(b):
        return float(b["x"]), float(b["y"]), float(b["width"]), float(b["height"])
    return None


def _words(target: Mapping[str, Any] | None) -> str:
    if not isinstance(target, Mapping) or not target:
        return ""
    name = (target.get("name") or target.get("label") or target.get("text") or target.get("placeholder")
            or target.get("test_id") or "")
    role = target.get("role") or target.get("tag") or ""
    return f"{role} \u2018{str(name)[:40]}\u2019".strip() if name else str(role)


def step_line(n: int, action: str, target: Mapping[str, Any] | None, value: str = "", extra: str = "") -> str:
    """``"3. click button 'Save' = 'x' - failed"``: one step of a failed segment or a correction."""
    what = " ".join(p for p in (action, _words(target)) if p)
    if value:
        what += f" = \u2018{value[:30]}\u2019"
    return f"{n}. {what or '(no action)'}" + (f" \u2014 {extra}" if extra else "")


class SkillItem:
    """One skill of the store as a review-queue item (every call opens the store briefly).

    ``status`` is the skill's review state (``proposed`` waits for a review).
    """

    kind = "skill"
    editable = True

    def __init__(self, root: Path, skill: Skill, *, media_root: Path | None = None) -> None:
        self.root = Path(root)
        self.media_root = media_root
        self.skill = skill
        self.key = f"skill:{skill.id}"
        self.status = skill.state
        v = skill.validation
        self.title = f"{skill.description or skill.id}"
        src = skill.provenance
        where = f" \u00b7 {src.flow} step {src.step_index + 1}" if src.flow and src.step_index >= 0 else ""
        self.subtitle = (f"{skill_kind_words(skill.kind)} \u00b7 from {src.source}{where} \u00b7 "
                         f"validation {v.passed}/{v.cases}")
        self.old: Mapping[str, Any] = {}
        self.new: Mapping[str, Any] = {}
        self.flow_file = ""
        self._context: Any = None

    # the store -------------------------------------------------------------------------------
    def context(self) -> Any:
        """The project's :class:`core.skills.library.ReviewContext` - its ``skills:`` settings (the approval
        threshold), secrets and secret names, as ``steadyhand skills`` uses them (read once per item).

        Raises ``core.project.ProjectError`` for a project file that cannot be read."""
        if self._context is None:
            self._context = skill_operations().review_context(self.root,
                                                              product_without_project=self.skill.scope.product)
        return self._context

    def _open(self) -> Any:
        return self.context().open_store()  # with the project's redactor, as the command line opens it

    def _with_table(self, fn: Callable[[Any], Any]) -> Any:
        from core.store.skills import SkillTable  # noqa: PLC0415

        store = self._open()
        try:
            return fn(SkillTable(store))
        finally:
            store.close()

    def _media(self, store: Any, rel: str | None) -> Path | None:
        if not rel:
            return None
        p = store.media_path(rel)
        return p if p.is_file() else None

    def evidence(self) -> SkillEvidence:
        """The failure record and the correction this skill came from (whichever the store still has)."""
        from core.store.corrections import CorrectionTable  # noqa: PLC0415
        from core.store.skills import SkillTable  # noqa: PLC0415

        p = self.skill.provenance
        store = self._open()
        try:
            fail = SkillTable(store).failure(p.failure_id) if p.failure_id else None
            if fail is None and p.run_id:
                fail = next((f for f in SkillTable(store).failures(run_id=p.run_id)
                             if p.step_index < 0 or f.step_index == p.step_index), None)
            corr = CorrectionTable(store).get(p.correction_id) if p.correction_id else None
            out: dict[str, Any] = {}
            notes: list[str] = []
            if fail is not None:
                out.update(self._failure_part(store, fail))
            else:
                out["failure_note"] = "no failure record stored"
            if corr is not None:
                out.update(self._correction_part(store, corr))
            elif p.heal_id:
                out["correction_note"] = f"from accepted heal #{p.heal_id} (see the heal in the queue's history)"
            else:
                out["correction_note"] = "no correction stored"
            return SkillEvidence(**out, notes=tuple(notes))
        finally:
            store.close()

    def _failure_part(self, store: Any, fail: Any) -> dict[str, Any]:
        traj = list(fail.trajectory)
        lines: list[str] = []
        row = -1
        boxes = []
        dpr = float(fail.page.get("device_pixel_ratio") or 1.0) if fail.page else 1.0
        for i, t in enumerate(traj):
            idx = int(t.get("index", i))
            target = t.get("target") if isinstance(t.get("target"), Mapping) else {}
            at_failure = idx == fail.step_index
            status = str(t.get("status", ""))
            extra = (f"failed: {fail.error_type}" if at_failure else status)
            intent = str(t.get("intent", ""))
            lines.append(step_line(idx + 1, str(t.get("action", "")), target, extra=extra)
                         + (f" ({intent})" if intent else ""))
            if at_failure:
                row = len(lines) - 1
                b = box_of(target)
                if b is not None:
                    boxes.append((b, "failed here", OLD_COLOR, True))
                    dpr = float(target.get("device_pixel_ratio") or dpr)
        shots = [s for s in reversed(fail.screenshots) if self._media(store, s) is not None]
        shot = self._media(store, shots[0]) if shots else None
        boxes, dpr = self._run_boxes(store, fail, shots[0] if shots else "", boxes, dpr)
        note = f"{fail.error_type}: {fail.message}" if fail.message else fail.error_type
        if fail.url:
            note += f"\n{fail.url}"
        return {"failure_shot": shot, "failure_boxes": tuple(boxes), "failure_dpr": dpr,
                "failure_steps": tuple(lines), "failure_row": row, "failure_note": note}

    @staticmethod
    def _run_boxes(store: Any, fail: Any, shot: str, boxes: list[Any], dpr: float) -> tuple[list[Any], float]:
        """Boxes the run itself stored for the failing step when the record has none (a failure record keeps
        semantic fields only): the escalation's candidates, the one named like the target first."""
        try:
            detail = store.run_detail(fail.run_id) if fail.run_id else None
        except Exception:  # noqa: BLE001 - evidence is best effort
            detail = None
        if detail is None:
            return boxes, dpr
        part = detail.for_step(fail.step_index)
        obs = next((o for o in part["observations"] if o.screenshot == shot), None)
        if obs is not None:
            dpr = float(obs.device_pixel_ratio or dpr)
        if boxes:
            return boxes, dpr
        page = fail.page if isinstance(getattr(fail, "page", None), Mapping) else {}
        if "target_box" in page:  # the record says where the failed element was, or that it was not found
            tb = page.get("target_box")
            bb = tb.get("bbox") if isinstance(tb, Mapping) else None
            if isinstance(bb, Mapping) and all(k in bb for k in ("x", "y", "width", "height")):
                dpr = float(tb.get("device_pixel_ratio") or dpr)
                return [((bb["x"], bb["y"], bb["width"], bb["height"]), "could not act", OLD_COLOR, True)], dpr
            if isinstance(bb, (list, tuple)) and len(bb) == 4:
                dpr = float(tb.get("device_pixel_ratio") or dpr)
                return [(tuple(bb), "could not act", OLD_COLOR, True)], dpr
            return boxes, dpr  # not found on the page: nothing is boxed (never the locator's guess)
        entry = next((t for t in fail.trajectory if int(t.get("index", -1)) == fail.step_index), {})
        name = _words(entry.get("target") if isinstance(entry.get("target"), Mapping) else {})
        for esc in part["escalations"]:
            cands = [c for c in esc.candidates if c.box is not None]
            best = next((c for c in cands if name and c.label and name.split("\u2018")[-1].rstrip("\u2019")
                         in c.label), None)  # only the element named like the target: never the locator's guess
            if best is not None:
                b = best.box
                return [((b.x, b.y, b.width, b.height), "could not act", OLD_COLOR, True)], dpr
        return boxes, dpr

    def _correction_part(self, store: Any, corr: Any) -> dict[str, Any]:
        lines, boxes, crops = [], [], []
        dpr = 1.0
        for i, s in enumerate(corr.steps):
            target = s.get("target") if isinstance(s.get("target"), Mapping) else {}
            lines.append(step_line(i + 1, str(s.get("action", "")), target, str(s.get("value", "") or "")))
            b = box_of(target)
            if b is not None:
                boxes.append((b, str(i + 1), NEW_COLOR, False))
                dpr = float(target.get("device_pixel_ratio") or dpr)
            crop = corr.crops.get(str(s.get("id", "")))
            path = self._media(store, crop)
            if path is not None:
                crops.append((str(i + 1), path))
        page = dict(corr.page or {})
        note = f"by hand at step {corr.step_index + 1} ({corr.meaning}) \u00b7 {page.get('url', '')}"
        return {"correction_shot": self._media(store, corr.screenshot), "correction_boxes": tuple(boxes),
                "correction_dpr": dpr, "correction_steps": tuple(lines), "crops": tuple(crops),
                "correction_note": note}

    # review moves (the library's) -----------------------------------------------------------------
    def approve(self, *, irreversible_ok: bool = False, force: bool = False) -> Skill:
        ctx = self.context()
        return self._with_table(lambda t: ctx.approve(t, self.skill.id, irreversible_ok=irreversible_ok,
                                                      force=force))

    def prefetch(self) -> None:
        """Read the evidence and the approval problem now (any thread), for :meth:`cached` to hand them over."""
        try:
            ev = self.evidence()
        except Exception as exc:  # noqa: BLE001 - a damaged record is shown, not raised
            ev = SkillEvidence(failure_note=f"evidence unavailable: {exc}")
        problem = self.approval_problem() if self.skill.state == "proposed" else ""
        self._prefetched = (ev, problem)

    def cached(self) -> tuple[SkillEvidence, str] | None:
        """``(evidence, approval problem)`` read by :meth:`prefetch` (once: None after), else None."""
        got, self._prefetched = getattr(self, "_prefetched", None), None
        return got

    def approval_problem(self) -> str:
        """Why the validation does not allow a plain approve ("" when it does; the library's rule with the
        project's threshold); a project file that cannot be read is the problem itself."""
        try:
            return self.context().approval_problem(self.skill)
        except Exception as exc:  # noqa: BLE001 - shown in the panel; approving then fails with the same error
            return f"the project's settings cannot be read: {exc}"

    def reject(self, reason: str) -> None:
        if not (reason or "").strip():
            raise ValueError("a rejected skill needs a reason")
        self._with_table(lambda t: skill_operations().reject(t, self.skill.id, reason.strip()))

    def retire(self, reason: str) -> Skill:
        if not (reason or "").strip():
            raise ValueError("a retired skill needs a reason")
        return self._with_table(lambda t: skill_operations().retire(t, self.skill.id, reason.strip()))

    def edit(self, skill: Skill) -> Skill:
        ctx = self.context()
        return self._with_table(lambda t: ctx.edit(t, skill))

    # the heal queue's protocol (no flow file is written by a skill) --------------------------------
    def diff(self, new: Mapping[str, Any] | None = None) -> str:
        return ""

    def accept(self, new: Mapping[str, Any] | None = None) -> str:
        self.approve()
        return ""


class SkillSource:
    """The skills of a project's skill space: ``proposed`` ones; ``all_states`` adds reviewed ones."""

    def __init__(self, root: Path | str, product: str | None = None) -> None:
        self.root = Path(root)
        self.product = product

    def items(self, *, all_states: bool = False) -> list[SkillItem]:
        from core.store import Store, store_path  # noqa: PLC0415
        from core.store.skills import SkillTable  # noqa: PLC0415

        if not store_path(self.root).is_file():
            return []
        store = Store.open(store_path(self.root), read_only=True)
        try:
            skills = SkillTable(store).list(product=self.product, state=None if all_states else "proposed")
        finally:
            store.close()
        return [SkillItem(self.root, s) for s in skills]


# --- the form -------------------------------------------------------------------------------------


class _ElidedHeading(QLabel):
    """Two lines - the description (bold) and the id, kind and state - each elided to the width with "..."
    (the tooltip holds all of it), so a long description is never cut off mid-word at the edge."""

    def __init__(self) -> None:
        super().__init__()
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Minimum)
        self._parts: tuple[str, str, str, str] = ("", "", "", "")

    def set_lines(self, title: str, sub: str, state: str, color: str) -> None:
        self._parts = (title, sub, state, color)
        self._render()

    def clear_lines(self) -> None:
        self._parts = ("", "", "", "")
        self.setText("")

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._render()

    def _render(self) -> None:
        title, sub, state, color = self._parts
        if not (title or sub):
            return
        width = max(40, self.width() - 4)
        bold = self.font()
        bold.setBold(True)
        from PySide6.QtGui import QFontMetrics  # noqa: PLC0415

        head = QFontMetrics(bold).elidedText(title, Qt.TextElideMode.ElideRight, width)
        second = QFontMetrics(self.font()).elidedText(sub + state, Qt.TextElideMode.ElideRight, width)
        shown = second[len(sub):] if second.startswith(sub) else ""
        lead = second if not second.startswith(sub) else sub
        self.setText(f"<b>{_esc(head)}</b><br>{_esc(lead)}<span style='color:{color}'>{_esc(shown)}</span>")


class SkillFormError(ValueError):
    """A form field that does not make a skill: the message names the field (and row)."""


def _table(columns: Sequence[str], name: str) -> QTableWidget:
    t = QTableWidget(0, len(columns))
    t.setObjectName(name)
    t.setHorizontalHeaderLabels(list(columns))
    t.verticalHeader().setDefaultSectionSize(22)
    t.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    t.horizontalHeader().setStretchLastSection(True)
    t.horizontalHeader().setDefaultSectionSize(86)
    t.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    t.setMinimumHeight(70)
    t.setMinimumWidth(120)
    t.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
    return t


def _dialog_column_first(t: QTableWidget) -> None:
    """Show the last column (``in dialog``, a check box) first: the field columns scroll, it never goes
    behind the scroll bar.  Only the view moves; the column's index (what the form reads) stays the last."""
    h = t.horizontalHeader()
    last = t.columnCount() - 1
    h.moveSection(h.visualIndex(last), 0)
    h.setSectionResizeMode(last, QHeaderView.ResizeMode.ResizeToContents)


def _cell(t: QTableWidget, r: int, c: int) -> str:
    it = t.item(r, c)
    return it.text().strip() if it is not None else ""


class SkillForm(QWidget):
    """The skill as an editable form; :meth:`skill` builds the edited :class:`Skill` (or raises
    :class:`SkillFormError` naming the field).

    Targets are typed by meaning only (role, name, label, text, placeholder,
    test id): the form has no field for a selector, an XPath or coordinates.
    An action target's anchor and tag are kept from the skill as it was.
    """

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("skillForm")
        self.base: Skill | None = None
        self.description = QLineEdit()
        self.description.setObjectName("skillDescription")
        self.kind = QLabel()
        self.kind.setWordWrap(True)
        self.url_pattern = QLineEdit()
        self.url_pattern.setPlaceholderText("glob, e.g. */requests/new*")
        self.page_title = QLineEdit()
        self.dialog = QComboBox()
        for text, value in (("either", None), ("a dialog is open", True), ("no dialog is open", False)):
            self.dialog.addItem(text, value)
        self.dialog_name = QLineEdit()
        self.step_action = QComboBox()
        self.step_action.addItem("any step", "")
        for k in ACTION_KINDS:
            self.step_action.addItem(k, k)
        cond_cols = (*CONDITION_FIELDS, "in dialog")
        self.required = _table(cond_cols, "skillRequired")
        self.absent = _table(cond_cols, "skillAbsent")
        for t in (self.required, self.absent):
            _dialog_column_first(t)
        self.actions = _table(ACTION_COLUMNS, "skillActions")
        self.task_type = QLineEdit()
        self.url_prefix = QLineEdit()
        self.scope_title = QLineEdit()
        self.component = QLineEdit()
        self.product = QLabel()
        self.max_steps = QSpinBox()
        self.max_steps.setRange(0, 50)
        self.max_steps.setSpecialValueText("= actions")
        self.max_ms = QSpinBox()
        self.max_ms.setRange(500, 120000)
        self.max_ms.setSingleStep(500)
        self.max_ms.setSuffix(" ms")
        self.irreversible = QCheckBox()
        self.irreversible.setToolTip("Approved to act on an irreversible step - only the step it was learnt on")

        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        top = QFormLayout()
        top.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        top.addRow("Description", self.description)
        lay.addLayout(top)

        trig = QGroupBox("Trigger")
        trig.setToolTip("Every part that is set must hold on the live page; a half-holding trigger never fires")
        tl = QFormLayout(trig)
        tl.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        tl.addRow("URL pattern", self.url_pattern)
        tl.addRow("Title contains", self.page_title)
        tl.addRow("Dialog", self.dialog)
        tl.addRow("Dialog named", self.dialog_name)
        tl.addRow("Flow step", self.step_action)
        tl.addRow(self._rows_bar("Required elements", self.required))
        tl.addRow(self.required)
        tl.addRow(self._rows_bar("Absent elements", self.absent))
        tl.addRow(self.absent)
        lay.addWidget(trig)

        acts = self.actions_box = QGroupBox("Actions")
        acts.setToolTip("The engine's own actions, on targets by meaning (no selector, XPath or coordinates)")
        al = QVBoxLayout(acts)
        al.addLayout(self._rows_bar("", self.actions))
        al.addWidget(self.actions)
        lay.addWidget(acts)

        sc = QGroupBox("Scope and limits")
        sl = QFormLayout(sc)
        sl.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        sl.addRow("Product", self.product)
        sl.addRow("Task type", self.task_type)
        sl.addRow("URL prefix", self.url_prefix)
        sl.addRow("Page title", self.scope_title)
        sl.addRow("Component", self.component)
        sl.addRow("Step limit", self.max_steps)
        sl.addRow("Time limit", self.max_ms)
        sl.addRow("Irreversible step", self.irreversible)
        lay.addWidget(sc)
        lay.addStretch(1)

        for w in (self.description, self.url_pattern, self.page_title, self.dialog_name, self.task_type,
                  self.url_prefix, self.scope_title, self.component):
            w.textEdited.connect(lambda _t: self.changed.emit())
        for t in (self.required, self.absent, self.actions):
            t.itemChanged.connect(lambda _i: self.changed.emit())
        for c in (self.dialog, self.step_action):
            c.currentIndexChanged.connect(lambda _i: self.changed.emit())
        self.max_steps.valueChanged.connect(lambda _v: self.changed.emit())
        self.max_ms.valueChanged.connect(lambda _v: self.changed.emit())

    def _rows_bar(self, title: str, table: QTableWidget) -> QHBoxLayout:
        bar = QHBoxLayout()
        if title:
            bar.addWidget(QLabel(title))
        bar.addStretch(1)
        add, rem = QToolButton(), QToolButton()
        for b, text, tip in ((add, "+", "Add a row"), (rem, "\u2212", "Remove the selected row")):
            b.setText(text)
            b.setToolTip(tip)
            b.setAccessibleName(tip)
            bar.addWidget(b)
        add.clicked.connect(lambda: self._add_row(table))
        rem.clicked.connect(lambda: self._remove_row(table))
        return bar

    def _add_row(self, table: QTableWidget, values: Sequence[str] = (), checked: bool | None = None) -> None:
        r = table.rowCount()
        table.blockSignals(True)
        table.insertRow(r)
        cols = table.columnCount()
        for c in range(cols):
            if table is not self.actions and c == cols - 1:
                it = QTableWidgetItem("")
                it.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsSelectable)
                it.setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
            else:
                it = QTableWidgetItem(values[c] if c < len(values) else "")
            table.setItem(r, c, it)
        table.blockSignals(False)
        self._fit(table)
        self.changed.emit()

    def _remove_row(self, table: QTableWidget) -> None:
        r = table.currentRow()
        if r >= 0:
            table.removeRow(r)
            self._fit(table)
            self.changed.emit()

    @staticmethod
    def _fit(table: QTableWidget) -> None:
        h = table.horizontalHeader().height() + 22 * max(table.rowCount(), 1) + 8
        h += table.horizontalScrollBar().sizeHint().height()  # the columns often scroll: keep the rows in view
        table.setFixedHeight(min(max(h, 50), 200))

    # skill -> widgets ----------------------------------------------------------------------------
    def set_skill(self, skill: Skill, *, editable: bool = True) -> None:
        """Fill the form from ``skill``; read-only when ``editable`` is False (rejected or retired)."""
        self.base = skill
        self.blockSignals(True)
        t = skill.trigger
        self.description.setText(skill.description)
        self.description.setCursorPosition(0)  # the start of the text, not its end
        self.description.setToolTip(skill.description)
        self.kind.setText(kind_skill_words(skill) or
                          ("do — runs its actions when the trigger holds" if skill.kind == "do" else
                           "deny — the agent must not touch these elements when the trigger holds"))
        self.url_pattern.setText(t.url_pattern)
        self.page_title.setText(t.title)
        self.dialog.setCurrentIndex(self.dialog.findData(t.dialog) if t.dialog is not None else 0)
        self.dialog_name.setText(t.dialog_name)
        self.step_action.setCurrentIndex(max(self.step_action.findData(t.step_action), 0))
        for table, conds in ((self.required, t.required), (self.absent, t.absent)):
            table.setRowCount(0)
            for c in conds:
                self._add_row(table, [getattr(c, f) for f in CONDITION_FIELDS], c.in_dialog)
            self._fit(table)
        self.actions.setRowCount(0)
        for a in skill.actions:
            self._add_row(self.actions, [a.action.kind, a.action.value,
                                         *(str(getattr(a.target, f) or "") for f in _TARGET_COLUMNS), a.note])
        self._fit(self.actions)
        s = skill.scope
        self.product.setText(s.product or "(no product)")
        self.task_type.setText(s.task_type)
        self.url_prefix.setText(s.url_prefix)
        self.scope_title.setText(s.title)
        self.component.setText(s.component)
        self.max_steps.setValue(skill.max_steps)
        self.max_ms.setValue(max(500, skill.max_ms))
        steps = ", ".join(skill.provenance.step_ids) or "its step"
        self.irreversible.setText(f"may act on {steps}")
        self.irreversible.setToolTip(f"Approved to act on {steps} although it is irreversible - only that step")
        self.irreversible.setChecked(skill.irreversible_ok)
        self.actions_box.setTitle("Actions" if skill.kind == "do" else "Elements not to touch (deny rule)")
        for w in (self.description, self.url_pattern, self.page_title, self.dialog_name, self.task_type,
                  self.url_prefix, self.scope_title, self.component):
            w.setReadOnly(not editable)
        for w2 in (self.dialog, self.step_action, self.max_steps, self.max_ms):
            w2.setEnabled(editable)
        # approval for an irreversible step is only for the step(s) it was learnt on (core.skills.library)
        # (an approval choice, not an edit: approving grants it, an edit never does)
        self.irreversible.setEnabled(skill.state == "proposed" and bool(skill.provenance.step_ids)
                                     and skill.kind == "do")
        for table in (self.required, self.absent, self.actions):
            table.setEditTriggers(QAbstractItemView.EditTrigger.AllEditTriggers if editable
                                  else QAbstractItemView.EditTrigger.NoEditTriggers)
        self.blockSignals(False)

    # widgets -> skill ----------------------------------------------------------------------------
    def _conditions(self, table: QTableWidget, what: str) -> tuple[ElementCondition, ...]:
        out = []
        for r in range(table.rowCount()):
            vals = {f: _cell(table, r, c) for c, f in enumerate(CONDITION_FIELDS)}
            flag = table.item(r, len(CONDITION_FIELDS))
            cond = ElementCondition(**vals, in_dialog=bool(flag and flag.checkState() == Qt.CheckState.Checked))
            if cond.is_empty:
                raise SkillFormError(f"{what} element {r + 1}: set at least one of {', '.join(CONDITION_FIELDS)}")
            out.append(cond)
        return tuple(out)

    def _actions(self) -> tuple[SkillAction, ...]:
        assert self.base is not None
        out = []
        for r in range(self.actions.rowCount()):
            row = {f: _cell(self.actions, r, c) for c, f in enumerate(ACTION_COLUMNS)}
            if row["kind"] not in ACTION_KINDS:
                raise SkillFormError(f"action {r + 1}, kind: {row['kind']!r} is not one of the engine's actions "
                                     f"({', '.join(ACTION_KINDS)})")
            was = self.base.actions[r] if r < len(self.base.actions) else None
            target = replace(was.target if was else ElementDescriptor(), **{f: row[f] for f in _TARGET_COLUMNS})
            # the person's choice of a popup-kind skill (not a column of the form) stays: without it the skill
            # would never answer its popup again (core.skills.kinds.answer skips an action without a choice)
            out.append(SkillAction(Action(row["kind"], row["value"]), target, row["note"],  # type: ignore[arg-type]
                                   choice=was.choice if was else ""))
        if not out and self.base.kind == "do":
            raise SkillFormError("actions: a skill that does something needs at least one action")
        return tuple(out)

    def skill(self) -> Skill:
        """The edited skill (id, provenance, validation and counters as they were).

        Raises
        ------
        SkillFormError
            A field that does not make a skill (named, with its row).
        """
        if self.base is None:
            raise SkillFormError("no skill in the form")
        desc = self.description.text().strip()
        if not desc:
            raise SkillFormError("description: say what the skill does and when")
        trigger = replace(self.base.trigger, required=self._conditions(self.required, "required"),
                          absent=self._conditions(self.absent, "absent"),
                          url_pattern=self.url_pattern.text().strip(), title=self.page_title.text().strip(),
                          dialog=self.dialog.currentData(), dialog_name=self.dialog_name.text().strip(),
                          step_action=self.step_action.currentData() or "")
        if trigger.is_empty:
            raise SkillFormError("trigger: set at least one condition (an empty trigger never holds)")
        scope = SkillScope(product=self.base.scope.product, task_type=self.task_type.text().strip(),
                           url_prefix=self.url_prefix.text().strip(), title=self.scope_title.text().strip(),
                           component=self.component.text().strip())
        return replace(self.base, description=desc, trigger=trigger, actions=self._actions(), scope=scope,
                       max_steps=self.max_steps.value(), max_ms=self.max_ms.value())


# --- the detail view --------------------------------------------------------------------------------


def _esc(text: Any) -> str:
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _note_label() -> QLabel:
    """One grey line (clipped when narrow; the whole text is its tooltip)."""
    label = QLabel()
    label.setStyleSheet("color: #9aa3b2;")
    label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
    return label


def _steps_list(name: str) -> QListWidget:
    w = QListWidget()
    w.setObjectName(name)
    w.setWordWrap(True)
    w.setMinimumHeight(48)
    w.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
    return w


def validation_html(skill: Skill) -> str:
    """The validation results and provenance of ``skill`` as HTML (for a QLabel)."""
    v, p = skill.validation, skill.provenance
    rate = v.pass_rate
    color = NEW_COLOR if rate >= 0.8 and v.reproduced else "#f5a524" if rate >= 0.5 else OLD_COLOR
    rows = [f"<b>Validation</b>: passed <b>{v.passed}</b> of <b>{v.cases}</b> cases \u00b7 "
            f"pass rate <b style='color:{color}'>{rate:.0%}</b>",
            ("failure <b>reproduced</b> before it was learnt" if v.reproduced else
             f"<span style='color:{OLD_COLOR}'>the failure did <b>not</b> reproduce</span>")]
    rows += [f"<span style='color:#9aa3b2'>\u2022 {_esc(r)}</span>" for r in v.reasons]
    if v.checked_at is not None:
        rows.append(f"<span style='color:#9aa3b2'>checked {v.checked_at:%Y-%m-%d %H:%M} UTC</span>")
    src = f"{p.source}"
    if p.run_id:
        src += f", run {p.run_id}"
    if p.flow:
        src += f", {p.flow} step {p.step_index + 1}" if p.step_index >= 0 else f", {p.flow}"
    rows.append(f"<b>From</b> {_esc(src)}")
    if p.cause:
        rows.append(f"cause <b>{_esc(p.cause.replace('_', ' '))}</b> ({p.cause_confidence:.0%})"
                    + (f" \u00b7 extracted by {_esc(p.extractor)}" if p.extractor else ""))
    rows.append(f"quality <b>{skill.quality:.2f}</b> \u00b7 {skill.successes} passed, {skill.failures} failed uses")
    if skill.review_reason:
        rows.append(f"review: {_esc(skill.review_reason)}")
    return "<br>".join(rows)


#: The widest a correction's element crop is drawn, px (a text field's crop is scaled down to it).
CROP_MAX_W = 160


class _Crops(QWidget):
    """The correction's element crops in a row, each with its step number."""

    def __init__(self) -> None:
        super().__init__()
        self.lay = QHBoxLayout(self)
        self.lay.setContentsMargins(0, 0, 0, 0)
        self.lay.addStretch(1)

    def set_crops(self, crops: Sequence[tuple[str, Path]]) -> None:
        while self.lay.count() > 1:
            w = self.lay.takeAt(0).widget()
            if w is not None:
                w.deleteLater()
        for n, path in crops:
            img = QImage(str(path))
            lab = QLabel()
            lab.setToolTip(f"step {n} of the correction: the element acted on")
            if not img.isNull():
                small = img.scaledToHeight(min(img.height(), 40), Qt.TransformationMode.SmoothTransformation)
                if small.width() > CROP_MAX_W:  # a wide field's crop must not widen the panel (trial-78)
                    small = small.scaledToWidth(CROP_MAX_W, Qt.TransformationMode.SmoothTransformation)
                lab.setPixmap(QPixmap.fromImage(small))
            self.lay.insertWidget(self.lay.count() - 1, QLabel(f"{n}."))
            self.lay.insertWidget(self.lay.count() - 1, lab)
        self.setVisible(bool(crops))


class SkillProposalView(QWidget):
    """One skill of the review queue: evidence side by side, the form, validation, and the review buttons.

    ``ask_reason(parent, title) -> str | None`` asks for a reject or retire
    reason (None: cancelled); a blank reason is refused with a message.
    ``confirm_force(parent, text) -> bool`` asks before approving a skill
    whose validation did not pass (default a question box).

    Signals
    -------
    reviewed(str, str)
        ``(item key, "approved" | "rejected" | "edited" | "retired")`` after the store changed.
    """

    reviewed = Signal(str, str)

    def __init__(self, ask_reason: Callable[[QWidget, str], str | None],
                 confirm_force: Callable[[QWidget, str], bool] | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("skillProposal")
        self._ask_reason = ask_reason
        #: ``confirm_force(parent, text) -> approve anyway?`` for a skill whose validation did not pass.
        self.confirm_force = confirm_force or _confirm_force_with_dialog
        self._problem = ""
        self.last_reason = ""  # the reason of the last Reject / Retire (the queue says it after)
        self.item: SkillItem | None = None
        self.heading = _ElidedHeading()
        self.heading.setObjectName("panelTitle")
        self.approve_button = QPushButton("Approve")
        self.approve_button.setToolTip("The skill fires from the next run on")
        self.reject_button = QPushButton("Reject\u2026")
        self.reject_button.setToolTip("Never use it (asks for a reason)")
        self.edit_button = QPushButton("Save edits")
        self.edit_button.setToolTip("Store the form's changes (the counters are kept)")
        self.retire_button = QPushButton("Retire\u2026")
        self.retire_button.setToolTip("Stop it firing at once (asks for a reason)")
        self.approve_button.clicked.connect(lambda: self.approve())
        self.reject_button.clicked.connect(lambda: self.reject())
        self.edit_button.clicked.connect(lambda: self.save_edits())
        self.retire_button.clicked.connect(lambda: self.retire())
        head = QHBoxLayout()
        head.addWidget(self.heading, 1)
        for b in (self.approve_button, self.reject_button, self.edit_button, self.retire_button):
            head.addWidget(b)
        self.error = QLabel()
        self.error.setObjectName("errorText")
        self.error.setWordWrap(True)
        self.error.hide()

        self.failure_shot = ShotView("failed segment")
        self.failure_steps = _steps_list("skillFailureSteps")
        self.failure_note = _note_label()
        self.correction_shot = ShotView("correction")
        self.correction_steps = _steps_list("skillCorrectionSteps")
        self.correction_note = _note_label()
        self.crops = _Crops()

        def side(title: str, shot: ShotView, steps: QListWidget, note: QLabel, extra: QWidget | None) -> QWidget:
            w = QWidget()
            lay = QVBoxLayout(w)
            lay.setContentsMargins(0, 0, 0, 0)
            t = QLabel(f"<b>{title}</b>")
            lay.addWidget(t)
            sp = QSplitter(Qt.Orientation.Vertical)
            sp.addWidget(shot)
            low = QWidget()
            ll = QVBoxLayout(low)
            ll.setContentsMargins(0, 0, 0, 0)
            ll.addWidget(note)
            if extra is not None:
                ll.addWidget(extra)
            ll.addWidget(steps, 1)
            sp.addWidget(low)
            sp.setStretchFactor(0, 3)
            sp.setStretchFactor(1, 2)
            lay.addWidget(sp, 1)
            return w

        sides = QSplitter(Qt.Orientation.Horizontal)
        sides.addWidget(side("What failed", self.failure_shot, self.failure_steps, self.failure_note, None))
        sides.addWidget(side("How it was corrected", self.correction_shot, self.correction_steps,
                             self.correction_note, self.crops))
        self.form = SkillForm()
        self.form.changed.connect(self._on_form_changed)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.form)
        scroll.setMinimumWidth(260)
        self.validation = QLabel()
        self.validation.setObjectName("skillValidation")
        self.validation.setWordWrap(True)
        self.validation.setTextFormat(Qt.TextFormat.RichText)
        self.validation.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.validation.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        vscroll = QScrollArea()
        vscroll.setWidgetResizable(True)
        vscroll.setWidget(self.validation)
        vscroll.setMinimumWidth(180)
        left = QSplitter(Qt.Orientation.Vertical)
        left.addWidget(sides)
        left.addWidget(vscroll)
        left.setStretchFactor(0, 3)
        left.setStretchFactor(1, 1)
        left.setSizes([440, 150])
        body = QSplitter(Qt.Orientation.Horizontal)
        body.setObjectName("skillBody")
        body.addWidget(left)
        body.addWidget(scroll)
        body.setStretchFactor(0, 3)
        body.setStretchFactor(1, 2)
        body.setSizes([600, 440])
        self.body = body
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 0, 0, 0)
        lay.addLayout(head)
        lay.addWidget(self.error)
        lay.addWidget(body, 1)
        self._dirty = False

    # --- showing ------------------------------------------------------------------------------------
    def show_item(self, item: SkillItem | None) -> None:
        """Show ``item`` (None clears the view)."""
        self.item = item
        self.error.hide()
        self._dirty = False
        if item is None:
            self.heading.clear_lines()
            for b in (self.approve_button, self.reject_button, self.edit_button, self.retire_button):
                b.setEnabled(False)
            return
        s = item.skill
        state_color = {"proposed": "#e6c07b", "approved": NEW_COLOR, "rejected": OLD_COLOR,
                       "retired": "#9aa3b2"}.get(s.state, "#9aa3b2")
        self.heading.set_lines(s.description or s.id, f"{skill_kind_words(s.kind)} \u00b7 ",
                               s.state, state_color)
        self.heading.setToolTip(f"{s.description}\n{item.subtitle}")
        cached = item.cached() if hasattr(item, "cached") else None  # read off the GUI thread by the queue
        if cached is not None:
            ev = cached[0]
        else:
            try:
                ev = item.evidence()
            except Exception as exc:  # noqa: BLE001 - a damaged record is shown, not raised
                ev = SkillEvidence(failure_note=f"evidence unavailable: {exc}")
        self.failure_shot.set_shot(ev.failure_shot, list(ev.failure_boxes), ev.failure_dpr)
        self.correction_shot.set_shot(ev.correction_shot, list(ev.correction_boxes), ev.correction_dpr)
        for label, text in ((self.failure_note, ev.failure_note), (self.correction_note, ev.correction_note)):
            label.setText(" \u00b7 ".join(plain_words(line) for line in text.splitlines()))
            label.setToolTip(plain_words(text))
        self.crops.set_crops(ev.crops)
        self.failure_steps.clear()
        for i, line in enumerate(ev.failure_steps):
            li = QListWidgetItem(plain_words(line))
            if i == ev.failure_row:
                li.setForeground(QColor(OLD_COLOR))
            self.failure_steps.addItem(li)
        self.correction_steps.clear()
        for line in ev.correction_steps:
            li = QListWidgetItem(line)
            li.setForeground(QColor(NEW_COLOR))
            self.correction_steps.addItem(li)
        editable = s.state in ("proposed", "approved")
        self.form.set_skill(s, editable=editable)
        try:
            self._problem = (cached[1] if cached is not None else item.approval_problem()) \
                if s.state == "proposed" else ""
        except Exception as exc:  # noqa: BLE001
            self._problem = str(exc)
        html = validation_html(s)
        if self._problem:
            html = f"<span style='color:{OLD_COLOR}'><b>Not approvable as it is:</b> {_esc(self._problem)}</span><br>" + html
        self.validation.setText(html)
        self._buttons()

    def _buttons(self) -> None:
        s = self.item.skill if self.item is not None else None
        state = s.state if s is not None else ""
        self.approve_button.setEnabled(state == "proposed")
        self.reject_button.setEnabled(state == "proposed")
        self.edit_button.setEnabled(state in ("proposed", "approved") and self._dirty)
        self.retire_button.setEnabled(state in ("approved", "proposed"))
        text = "Approve edited" if self._dirty and state == "proposed" else "Approve"
        self.approve_button.setText(text + (" anyway\u2026" if self._problem else ""))

    def _on_form_changed(self) -> None:
        self._dirty = True
        self.error.hide()
        self._buttons()

    def _error(self, text: str) -> None:
        self.error.setText(text)
        self.error.show()

    # --- review moves (the library's) ---------------------------------------------------------------
    def _done(self, outcome: str, skill: Skill | None = None) -> None:
        assert self.item is not None
        if skill is not None:  # the stored state, shown at once (the queue is read again off the GUI thread)
            self.item.skill = skill
            self.item.status = skill.state
            state_color = {"approved": NEW_COLOR, "rejected": OLD_COLOR}.get(skill.state, "#9aa3b2")
            self.heading.set_lines(skill.description or skill.id, f"{skill_kind_words(skill.kind)} \u00b7 ",
                                   skill.state, state_color)
            self._problem = ""
            self._buttons()
        self.reviewed.emit(self.item.key, outcome)

    def save_edits(self) -> bool:
        """Store the form's skill through the library's edit; True when stored."""
        if self.item is None:
            return False
        try:
            edited = self.form.skill()
        except SkillFormError as exc:
            self._error(f"Not saved: {exc}")
            return False
        try:
            self.item.skill = self.item.edit(edited)
        except Exception as exc:  # noqa: BLE001 - the library says why
            self._error(f"Not saved: {exc}")
            return False
        self._dirty = False
        self._done("edited")
        return True

    def approve(self) -> bool:
        """Approve (saving unsaved edits first); True when the store says approved."""
        if self.item is None or self.item.skill.state != "proposed":
            return False
        irreversible_ok = self.form.irreversible.isChecked()  # the form is refilled by a save
        if self._dirty and not self.save_edits():
            return False
        force = False
        if self._problem:
            if not self.confirm_force(self, f"Its validation did not pass: {self._problem}.\n\nApprove it anyway? "
                                            "(the review reason will say so)"):
                return False
            force = True
        try:
            approved = self.item.approve(irreversible_ok=irreversible_ok, force=force)
        except Exception as exc:  # noqa: BLE001
            self._error(f"Not approved: {exc}")
            return False
        self._done("approved", approved if isinstance(approved, Skill)
                   else replace(self.item.skill, state="approved"))
        return True

    def _reason(self, verb: str, done: str) -> str | None:
        assert self.item is not None
        reason = self._ask_reason(self, f"{verb} skill {self.item.skill.description or self.item.skill.id}")
        if reason is None:
            return None
        if not reason.strip():
            self._error(f"Not {done}: a reason is required (it is kept with the skill)")
            return None
        return reason.strip()

    def reject(self, reason: str | None = None) -> bool:
        """Reject with ``reason`` (asked for when None; a blank one is refused); True when stored."""
        if self.item is None or self.item.skill.state != "proposed":
            return False
        reason = self._reason("Reject", "rejected") if reason is None else reason
        if reason is None:
            return False
        try:
            self.item.reject(reason)
        except Exception as exc:  # noqa: BLE001
            self._error(f"Not rejected: {exc}")
            return False
        self.last_reason = reason
        self._done("rejected", replace(self.item.skill, state="rejected", review_reason=reason))
        return True

    def retire(self, reason: str | None = None) -> bool:
        """Retire with ``reason`` (asked for when None; a blank one is refused); True when stored."""
        if self.item is None or self.item.skill.state not in ("approved", "proposed"):
            return False
        reason = self._reason("Retire", "retired") if reason is None else reason
        if reason is None:
            return False
        try:
            retired = self.item.retire(reason)
        except Exception as exc:  # noqa: BLE001
            self._error(f"Not retired: {exc}")
            return False
        self.last_reason = reason
        self._done("retired", retired if isinstance(retired, Skill)
                   else replace(self.item.skill, state="retired", review_reason=reason))
        return True


def _confirm_force_with_dialog(parent: QWidget, text: str) -> bool:
    from PySide6.QtWidgets import QMessageBox  # noqa: PLC0415

    answer = QMessageBox.question(parent, "Approve a skill that did not pass validation", text,
                                  QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
                                  QMessageBox.StandardButton.Cancel)
    return answer == QMessageBox.StandardButton.Yes
