"""The skill library over a real SQLite skill space: scope tree, filters, hit counts, where a skill fired.

The store (two stored runs, six skills, their uses) is written through the
real store classes by :func:`studio.skill_samples.skill_store`; a use
double-clicked in the main window opens its run in the History dock at that
step, and a retire from the library is in the store afterwards.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from core.store import Store, store_path
from core.store.skills import SkillTable
from studio.samples import sample_project
from studio.skill_samples import SAMPLE_APPROVED_ID, SAMPLE_PROPOSED_ID, skill_store
from studio.testing import RecordingEngine
from studio.views.skill_library import SkillLibraryPanel


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> tuple[Path, str, str]:  # noqa: ANN001
    root = tmp_path_factory.mktemp("skill-library")
    _media, a, b = skill_store(root)
    return root, a, b


@pytest.fixture
def space(template, tmp_path: Path) -> tuple[Path, str, str]:  # noqa: ANN001
    root, a, b = template
    dst = tmp_path / "p"
    shutil.copytree(root, dst)
    return dst, a, b


def _panel(qtbot, root: Path, **kw) -> SkillLibraryPanel:  # noqa: ANN001
    panel = SkillLibraryPanel(root, "demo", **kw)
    qtbot.addWidget(panel)
    panel.resize(1100, 560)
    panel.show()
    return panel


def _double_click(table, row: int) -> None:  # noqa: ANN001
    """A real double-click on ``row`` (press, release, then the double-click the view reacts to)."""
    pos = table.visualItemRect(table.item(row, 1)).center()
    QTest.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    QTest.mouseDClick(table.viewport(), Qt.MouseButton.LeftButton, pos=pos)


def _descriptions(panel: SkillLibraryPanel) -> list[str]:
    return [panel.table.item(r, 0).text() for r in range(panel.table.rowCount())]


def test_scope_tree_filters_search_and_counts(qtbot, space) -> None:  # noqa: ANN001
    root, _a, _b = space
    panel = _panel(qtbot, root)
    assert panel.table.rowCount() == 6
    top = panel.tree.topLevelItem(0)
    demo = top.child(0)
    assert (top.text(1), demo.text(0), demo.text(1)) == ("6", "demo", "6")
    tasks = {demo.child(i).text(0): demo.child(i).text(1) for i in range(demo.childCount())}
    assert tasks == {"any task": "1", "login": "2", "export": "2", "edit": "1"}
    assert panel.select_scope("demo", "export", "/reports")
    assert sorted(_descriptions(panel)) == ["Never press 'Delete all' while the export dialog is open",
                                            "Wait for the loading spinner to go before Export"]
    assert panel.select_scope("demo", "login")
    panel.state_filter.setCurrentIndex(panel.state_filter.findData("rejected"))
    assert _descriptions(panel) == ["Press Save on the 'Save this address?' popup"]
    panel.state_filter.setCurrentIndex(0)
    panel.select_scope()
    panel.search.setText("cookie banner")
    assert _descriptions(panel) == ["Accept the cookie banner before the first click"]
    panel.search.setText("dblclick")  # action words are searched too
    assert _descriptions(panel) == ["Double-click the region label to edit a report cell"]
    panel.search.clear()
    # quality, hits (passed uses) and uses come from the store
    row = next(r for r in range(panel.table.rowCount()) if panel.shown[r].skill.id == SAMPLE_APPROVED_ID)
    assert [panel.table.item(row, c).text() for c in (1, 2, 3, 4)] == ["approved", "0.90", "2", "3"]
    assert panel.table.item(row, 5).text() == "just now"
    never = next(r for r in range(panel.table.rowCount()) if panel.shown[r].skill.id == SAMPLE_PROPOSED_ID)
    assert [panel.table.item(never, c).text() for c in (3, 4, 5)] == ["0", "0", "never"]


def test_where_it_fired_lists_the_uses_and_double_click_asks_for_that_run_and_step(qtbot, space) -> None:  # noqa: ANN001
    root, a, b = space
    panel = _panel(qtbot, root)
    assert panel.select_skill(SAMPLE_APPROVED_ID)
    assert panel.uses_table.rowCount() == 3
    rows = [[panel.uses_table.item(r, c).text() for c in (2, 3, 4)] for r in range(3)]
    assert rows == [["login_lockout", "4", "precondition"], ["login_lockout", "1", "passed"],
                    ["login_lockout", "1", "passed"]]
    with qtbot.waitSignal(panel.use_opened) as sig:
        _double_click(panel.uses_table, 0)
    assert sig.args == [b, 3]


def test_retire_from_the_library_needs_a_reason_and_is_stored(qtbot, space) -> None:  # noqa: ANN001
    root, _a, _b = space
    answers = ["", "the banner is gone"]
    panel = _panel(qtbot, root, ask_reason=lambda _p, _t: answers.pop(0))
    panel.select_skill(SAMPLE_APPROVED_ID)
    qtbot.mouseClick(panel.retire_button, Qt.MouseButton.LeftButton)
    assert "a reason is required" in panel.note.text()
    with Store.open(store_path(root), read_only=True) as store:
        assert SkillTable(store).get(SAMPLE_APPROVED_ID).state == "approved"
    with qtbot.waitSignal(panel.retired):
        qtbot.mouseClick(panel.retire_button, Qt.MouseButton.LeftButton)
    with Store.open(store_path(root), read_only=True) as store:
        s = SkillTable(store).get(SAMPLE_APPROVED_ID)
    assert (s.state, s.review_reason) == ("retired", "the banner is gone")
    assert panel.current().skill.state == "retired" and not panel.retire_button.isEnabled()


def test_in_the_window_a_use_opens_its_run_at_that_step_and_review_shows_the_skill(qtbot, space) -> None:  # noqa: ANN001
    from studio.main_window import MainWindow  # noqa: PLC0415

    root, _a, b = space
    project = sample_project(root)
    w = MainWindow(root, engine_factory=RecordingEngine.factory([]), project_loader=lambda _p: project,
                   close_timeout=5.0)
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    try:
        lib = w.skill_library
        assert w.skill_library_dock.toggleViewAction().shortcut().toString() == "Ctrl+Shift+K"
        assert lib.select_skill(SAMPLE_APPROVED_ID)
        w.skill_library_dock.show()
        w.skill_library_dock.raise_()
        _double_click(lib.uses_table, 0)
        h = w.history_panel
        assert h.viewer.detail.run.id == b and h.tabs.currentWidget() is h.viewer
        assert h.viewer.steps[h.viewer.step_list.currentRow()].index == 3  # the step it was used at
        assert w.timeline_panel is not None
        # Review: the skill in the review queue (a reviewed one, so with the reviewed ones)
        qtbot.mouseClick(lib.review_button, Qt.MouseButton.LeftButton)
        cur = w.heal_review.current()
        assert cur is not None and cur.key == f"skill:{SAMPLE_APPROVED_ID}"
        assert w.heal_review.stack.currentWidget() is w.heal_review.skill_view
        # the proposed skill is in the window's review queue from the start
        w.heal_review.show_reviewed = False
        w.heal_review.refresh()
        assert [it.key for it in w.heal_review.items if it.kind == "skill"] == [f"skill:{SAMPLE_PROPOSED_ID}"]
    finally:
        w.close()
