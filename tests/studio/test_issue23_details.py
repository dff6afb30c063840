"""Issue 23 item 6, the smaller defects, each through the real widgets of the window (offscreen)."""
from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Qt

from core.domain import Action, Step
from studio.main_window import MainWindow
from studio.run_state import RunState
from studio.testing import FakeEngine

TIMEOUT_MS = 20000


def _finished_run(qtbot, project) -> tuple[MainWindow, list]:  # noqa: ANN001
    loaded = [project]
    w = MainWindow(project.root, engine_factory=FakeEngine.factory(), project_loader=lambda _p: loaded[-1],
                   run_on_show=True, close_timeout=5.0)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitUntil(lambda: w.state is RunState.PAUSED, timeout=TIMEOUT_MS)
    qtbot.keyClick(w, Qt.Key.Key_F5)
    qtbot.waitUntil(lambda: w.state is RunState.FINISHED, timeout=TIMEOUT_MS)
    return w, loaded


def test_step_results_stay_when_the_project_is_reloaded_from_disk(qtbot, project) -> None:  # noqa: ANN001
    w, loaded = _finished_run(qtbot, project)
    before = [(r.title, r.status, r.strategy) for r in w.steps_panel.model.rows("login_lockout")]
    assert [s for _t, s, _k in before] == ["passed"] * 7
    assert w.reload_project()  # nothing changed: every result stays
    assert [(r.title, r.status, r.strategy) for r in w.steps_panel.model.rows("login_lockout")] == before
    # a step inserted in the file (an accepted correction, a hand edit): the others keep their results
    flow = project.flows["login_lockout"]
    steps = list(flow.steps)
    steps.insert(3, Step("s3b", Action("click"), name="Dismiss the cookie banner"))
    loaded.append(replace(project, flows={**project.flows, "login_lockout": replace(flow, steps=tuple(steps))}))
    assert w.reload_project()
    rows = w.steps_panel.model.rows("login_lockout")
    assert [r.title for r in rows][3] == "Dismiss the cookie banner"
    assert [r.status for r in rows] == ["passed"] * 3 + ["pending"] + ["passed"] * 4
    assert [r.index for r in rows] == list(range(8))
    w.close()


def test_chosen_flows_and_filters_are_kept_across_launches(qtbot, project, tmp_path) -> None:  # noqa: ANN001
    from PySide6.QtCore import QSettings

    from studio.testing import RecordingEngine

    (tmp_path / "cfg").mkdir()
    ini = str(tmp_path / "cfg" / "studio.ini")  # outside the project folder, which is watched

    def launch() -> MainWindow:
        w = MainWindow(project.root, engine_factory=RecordingEngine.factory([]), project_loader=lambda _p: project,
                       close_timeout=5.0, settings=QSettings(ini, QSettings.Format.IniFormat))
        qtbot.addWidget(w)
        w.show()
        return w

    w = launch()
    assert w.checked_flows() == ("login_lockout", "export_report")
    item = w.flows_list.item(w.flow_names().index("login_lockout"))
    item.setCheckState(Qt.CheckState.Unchecked)  # as a click on its check box does
    combo = w.history_panel.flow_filter
    combo.setCurrentIndex(combo.findData("export_report"))
    lib = w.skill_library
    lib.state_filter.setCurrentIndex(2)
    chosen_state = lib.state_filter.currentData()
    lib.search.setText("cookie")
    w.close()

    w2 = launch()
    assert w2.checked_flows() == ("export_report",)  # F5 runs what was chosen, not every flow
    assert w2.history_panel.flow_filter.currentData() == "export_report"
    assert w2.skill_library.state_filter.currentData() == chosen_state and w2.skill_library.search.text() == "cookie"
    w2.close()
