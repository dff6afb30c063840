"""Project settings dialog: the breaker, locator and wait settings of ``steadyhand.yaml``, written in place.

The form is built from the project file's own schema
(:class:`core.project.schema.BreakerModel`, ``LocatorModel``, ``WaitModel``:
their bounds become the spin boxes' ranges, their descriptions the
tooltips).  Saving edits only the lines of the keys that changed
(:func:`edit_settings_text`): the other keys, their order and every comment
stay byte for byte; a missing section or key is appended.  Before anything is
written the new text is loaded with the project's own loader
(:func:`core.project.lenient.load_project_settings_only`); an error (e.g.
``loop_window`` below ``loop_repeats``) is shown in the dialog and nothing
is written.
"""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Mapping

import yaml
from PySide6.QtWidgets import (
    QDialog, QDialogButtonBox, QDoubleSpinBox, QFormLayout, QLabel, QScrollArea, QSpinBox, QTabWidget, QVBoxLayout,
    QWidget,
)

from core.project.lenient import load_project_settings_only
from core.project.loader import SETTINGS_FILE, ProjectError, write_atomic
from core.project.schema import BreakerModel, LocatorModel, WaitModel

__all__ = ["SettingsDialog", "SECTIONS", "edit_settings_text", "SettingsWriteError"]

#: The sections the dialog edits: file key, tab title, schema.
SECTIONS: tuple[tuple[str, str, type], ...] = (
    ("breaker", "Circuit breaker", BreakerModel), ("locator", "Locator", LocatorModel), ("waits", "Waits", WaitModel),
)


class SettingsWriteError(ValueError):
    """The edited settings would not load; the message names the file and field."""


def _bounds(info: Any) -> tuple[float | None, float | None, bool]:
    lo = hi = None
    strict_lo = False
    for m in info.metadata:
        if getattr(m, "ge", None) is not None:
            lo = m.ge
        if getattr(m, "gt", None) is not None:
            lo, strict_lo = m.gt, True
        if getattr(m, "le", None) is not None:
            hi = m.le
    return lo, hi, strict_lo


def _scalar(v: Any) -> str:
    return yaml.safe_dump(v, default_flow_style=True).strip().removesuffix("...").strip()


def edit_settings_text(text: str, changes: Mapping[str, Mapping[str, Any]]) -> str:
    """``text`` (a settings file) with ``changes[section][key] = value`` set, other lines kept.

    A key present in a block-style section has its value replaced on its own
    line (a trailing comment kept); a missing key is added after the
    section's last entry; a missing section is appended at the end.  A
    section written in flow style (``breaker: {threshold: 3}``) is rewritten
    as a block.  Raises :class:`SettingsWriteError` for a file that is not a
    mapping.
    """
    root = yaml.compose(text, Loader=yaml.SafeLoader) if text.strip() else None
    if root is not None and not isinstance(root, yaml.MappingNode):
        raise SettingsWriteError(f"{SETTINGS_FILE}: expected a mapping of settings at the top level")
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    sections = {k.value: (k, v) for k, v in (root.value if root is not None else [])}
    appended: list[str] = []
    # edit from the bottom up so that earlier line numbers stay valid
    order = sorted(changes, key=lambda s: -(sections[s][0].start_mark.line if s in sections else -1))
    for section in order:
        values = changes[section]
        if not values:
            continue
        if section not in sections:
            appended += [f"{section}:\n"] + [f"  {k}: {_scalar(v)}\n" for k, v in values.items()]
            continue
        key, node = sections[section]
        if not isinstance(node, yaml.MappingNode) or node.flow_style or not node.value:
            data = yaml.safe_load(text).get(section) or {}
            merged = {**(data if isinstance(data, dict) else {}), **values}
            block = [f"{section}:\n"] + [f"  {k}: {_scalar(v)}\n" for k, v in merged.items()]
            end = max(node.end_mark.line if node.end_mark.column else node.end_mark.line - 1, key.start_mark.line)
            lines[key.start_mark.line:end + 1] = block
            continue
        col = node.value[0][0].start_mark.column
        present = {k.value: (k, v) for k, v in node.value}
        missing = [k for k in values if k not in present]
        last_line = max(v.end_mark.line for _k, v in node.value)
        lines[last_line + 1:last_line + 1] = [" " * col + f"{k}: {_scalar(values[k])}\n" for k in missing]
        for k in sorted((k for k in values if k in present), key=lambda k: -present[k][0].start_mark.line):
            kn, vn = present[k]
            if not isinstance(vn, yaml.ScalarNode) or vn.start_mark.line != kn.start_mark.line:
                raise SettingsWriteError(f"{SETTINGS_FILE}: {section}.{k} is not a plain value; edit it by hand")
            line = lines[kn.start_mark.line]
            rest = line[vn.end_mark.column:].rstrip("\n")
            lines[kn.start_mark.line] = line[:vn.start_mark.column] + _scalar(values[k]) + rest + "\n"
    return "".join(lines + appended)


class SettingsDialog(QDialog):
    """Edit the breaker, locator and wait settings of the project at ``root``; OK writes ``steadyhand.yaml``.

    Attributes
    ----------
    editors : dict[tuple[str, str], QSpinBox | QDoubleSpinBox]
        One editor per ``(section, key)``.
    written : bool
        The file was written by the last :meth:`save`.
    """

    def __init__(self, root: Path | str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.root = Path(root)
        self.path = self.root / SETTINGS_FILE
        self.setWindowTitle(f"Project settings \u2014 {self.path}")
        self.setObjectName("settingsDialog")
        self.written = False
        self._text = self.path.read_text(encoding="utf-8")
        data = yaml.safe_load(self._text) or {}
        self._file: dict[str, dict[str, Any]] = {s: dict(data.get(s) or {}) for s, _t, _m in SECTIONS}
        self.editors: dict[tuple[str, str], QSpinBox | QDoubleSpinBox] = {}
        self._initial: dict[tuple[str, str], Any] = {}
        tabs = QTabWidget()
        for section, title, model in SECTIONS:
            current = model.model_validate(self._file[section]) if self._file[section] else model()
            form = QFormLayout()
            for name, info in model.model_fields.items():
                lo, hi, strict = _bounds(info)
                value = getattr(current, name)
                if info.annotation is int:
                    ed: QSpinBox | QDoubleSpinBox = QSpinBox()
                    ed.setRange(int(lo) if lo is not None else 0, int(hi) if hi is not None else 1_000_000)
                else:
                    ed = QDoubleSpinBox()
                    ed.setDecimals(3)
                    ed.setSingleStep(0.05 if hi is not None and hi <= 1 else 1.0)
                    ed.setRange(float(lo) + (0.001 if strict else 0) if lo is not None else 0.0,
                                float(hi) if hi is not None else 1_000_000.0)
                label = name
                for unit in ("_ms", "_s", "_px"):
                    if name.endswith(unit):
                        ed.setSuffix(f" {unit[1:]}")
                        label = name[: -len(unit)]
                ed.setValue(value)
                ed.setObjectName(f"{section}.{name}")
                ed.setToolTip(f"{section}.{name}: {info.description or ''} (default {info.default})")
                self.editors[(section, name)] = ed
                self._initial[(section, name)] = value
                form.addRow(label.replace("_", " "), ed)
            page = QWidget()
            page.setLayout(form)
            scroll = QScrollArea()
            scroll.setWidgetResizable(True)
            scroll.setWidget(page)
            tabs.addTab(scroll, title)
        self.tabs = tabs
        self.problem = QLabel()
        self.problem.setObjectName("errorText")
        self.problem.setWordWrap(True)
        self.problem.hide()
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self._on_save)
        self.buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(QLabel(f"Written to {self.path.name}; only the values you change are written, comments "
                             "and the order of keys are kept."))
        lay.addWidget(tabs, 1)
        lay.addWidget(self.problem)
        lay.addWidget(self.buttons)
        self.resize(560, 520)

    def changes(self) -> dict[str, dict[str, Any]]:
        """``{section: {key: new value}}`` of the editors that differ from the file (or its defaults)."""
        out: dict[str, dict[str, Any]] = {}
        for (section, key), ed in self.editors.items():
            v = ed.value()
            if isinstance(ed, QDoubleSpinBox):
                v = round(float(v), 6)
            if v != self._initial[(section, key)]:
                out.setdefault(section, {})[key] = v
        return out

    def new_text(self) -> str:
        """The settings file as it would be written.  Raises :class:`SettingsWriteError`."""
        text = edit_settings_text(self._text, self.changes())
        with tempfile.TemporaryDirectory(prefix="steadyhand-settings-check-") as tmp:
            (Path(tmp) / SETTINGS_FILE).write_text(text, encoding="utf-8")
            try:
                load_project_settings_only(Path(tmp))
            except ProjectError as exc:
                raise SettingsWriteError(f"{self.path}{' at ' + exc.location if exc.location else ''}: "
                                         f"{exc.detail}; nothing written") from None
        return text

    def save(self) -> bool:
        """Validate and write; True when written (or nothing changed).  Errors are shown in the dialog."""
        if self.path.read_text(encoding="utf-8") != self._text:
            self._show(f"{self.path} changed on disk since this dialog opened; nothing written - close and reopen")
            return False
        try:
            text = self.new_text()
        except SettingsWriteError as exc:
            self._show(str(exc))
            return False
        if text != self._text:
            write_atomic(self.path, text.encode("utf-8"))
            self.written = True
        return True

    def _show(self, text: str) -> None:
        self.problem.setText(text)
        self.problem.show()

    def _on_save(self) -> None:
        if self.save():
            self.accept()
