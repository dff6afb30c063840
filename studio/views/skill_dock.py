"""The Skill library dock of the main window, wired to the history and the review queue (K8).

:func:`install_skill_library` docks a :class:`~studio.views.skill_library.SkillLibraryPanel`
over the project's skill space beside the event log and connects it: a use
double-clicked opens its run in the History dock at that step (and the
timeline shows the run, as for any run opened there); *Review* shows the
skill in the review queue; the library re-reads the store after a review,
a retire and at the end of every run.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QDockWidget

from core.engine.events import RunFinished

from .skill_library import SkillLibraryPanel

__all__ = ["install_skill_library", "open_run_at_step"]


def open_run_at_step(window: Any, run_id: str, step_index: int) -> bool:
    """Open ``run_id`` read-only in the window's History dock at step ``step_index`` (0-based); False if gone."""
    history = window.history_panel
    if not history.open_run(run_id):
        window.statusBar().showMessage(f"Run {run_id} is not in the store any more", 8000)
        return False
    row = next((i for i, s in enumerate(history.viewer.steps) if s.index == step_index), -1)
    if row >= 0:
        history.viewer.show_step(row)
    window.history_dock.show()
    window.history_dock.raise_()
    return True


def install_skill_library(window: Any) -> QDockWidget:
    """Dock the skill library in ``window`` (a :class:`studio.main_window.MainWindow`); returns the dock.

    The panel is ``window.skill_library``, the dock ``window.skill_library_dock``
    (object name ``skillLibraryDock``, Ctrl+Shift+K shows it).
    """
    panel = SkillLibraryPanel(window.project_path, window.project.name)
    dock = window._dock("Skill library", "skillLibraryDock", panel, Qt.DockWidgetArea.BottomDockWidgetArea)  # noqa: SLF001
    window.tabifyDockWidget(window.log_dock, dock)
    window.steps_dock.raise_()
    window.skill_library, window.skill_library_dock = panel, dock
    panel.use_opened.connect(lambda run_id, step: open_run_at_step(window, run_id, step))

    def review(key: str) -> None:
        window.show_heal_review()
        window.heal_review.select_key(key)

    panel.review_requested.connect(review)
    panel.retired.connect(lambda _sid: window.heal_review.refresh_later())
    window.heal_review.reviewed.connect(lambda _key, _outcome: panel.refresh_when_seen())
    dock.visibilityChanged.connect(lambda seen: panel.refresh_if_stale() if seen else None)
    window.bridge.event_received.connect(
        lambda e: QTimer.singleShot(0, panel.refresh) if isinstance(e, RunFinished) else None)
    a = dock.toggleViewAction()
    a.setShortcut(QKeySequence("Ctrl+Shift+K"))
    a.triggered.connect(lambda on: (dock.raise_(), panel.refresh()) if on else None)
    return dock
