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
    assert "1 of 2 flows checked" in w.state_label.text()  # the status bar counts what F5 runs
    combo = w.history_panel.flow_filter
    combo.setCurrentIndex(combo.findData("export_report"))
    lib = w.skill_library
    lib.state_filter.setCurrentIndex(2)
    chosen_state = lib.state_filter.currentData()
    lib.search.setText("cookie")
    w.set_watched("export_report", True)
    w.close()

    w2 = launch()
    assert w2.checked_flows() == ("export_report",)  # F5 runs what was chosen, not every flow
    assert "1 of 2 flows checked" in w2.state_label.text()  # said so after the relaunch too (it said "2 of 2")
    assert w2.history_panel.flow_filter.currentData() == "export_report"
    assert w2.skill_library.state_filter.currentData() == chosen_state and w2.skill_library.search.text() == "cookie"
    assert w2.watched == {"export_report"}  # watch mode too
    assert "watched" in w2.flows_list.item(w2.flow_names().index("export_report")).text()
    w2.close()


def _partial_run(root) -> str:  # noqa: ANN001
    """A stored run of login_lockout (7 steps) that ended escalated at step 4: 3 passed, 4 run."""
    from core.domain import RunResult, StepOutcome
    from core.store import Store, store_path
    from studio.samples import sample_observation

    with Store.open(store_path(root)) as store:
        run_id = store.begin_run("demo", "login_lockout")
        outcomes = []
        for i, page in enumerate(("login", "login_user", "login_filled", "login_error")):
            store.record_observation(run_id, i, "before", sample_observation(page))
            out = StepOutcome(i, f"s{i + 1}", f"step {i + 1}", "passed" if i < 3 else "escalated", None, None, 1, 100.0)
            store.record_step(run_id, out)
            outcomes.append(out)
        store.finish_run(run_id, RunResult(run_id=run_id, flow="login_lockout", status="escalated",
                                           steps=tuple(outcomes), heals=0, invalid_actions=0, seconds=0.4,
                                           heals_by_strategy={}))
    return run_id


def test_history_counts_steps_as_the_steps_table_and_shows_a_stored_page_alone(qtbot, project) -> None:  # noqa: ANN001
    from core.domain import BBox
    from studio.samples import sample_observation
    from studio.testing import RecordingEngine

    run_id = _partial_run(project.root)
    w = MainWindow(project.root, engine_factory=RecordingEngine.factory([]), project_loader=lambda _p: project,
                   close_timeout=5.0)
    qtbot.addWidget(w)
    w.show()
    panel = w.history_panel
    (row,) = [i for i, e in enumerate(panel.entries) if e.run.id == run_id]
    # the flow has 7 steps (the steps table's rows, the progress' "step N/7"): 3 of 7 passed, 4 run - not "3/4"
    assert len(w.project.flows["login_lockout"].steps) == 7
    assert panel.table.item(row, 3).text() == "3/7 \u00b7 4 run"
    assert "3 of the flow's 7 steps passed; 4 were run" in panel.table.item(row, 3).toolTip()

    # what the live run left on the live view: its target, the alternatives and a highlighted candidate
    cand = sample_observation("login").candidates[0]
    w.live_view.set_image(w.live_view.image, candidates=(cand,))
    w.live_view.set_target(cand, "exact 1.00")
    w.live_view.set_highlight(BBox(10, 10, 50, 20), "#1 0.80")
    assert panel.open_run(run_id)
    assert "3/7 steps passed (4 run)" in panel.viewer.header.text()  # one count everywhere
    panel.viewer.show_step(2)
    assert w.live_view.target is None and w.live_view.highlight is None and not w.live_view.alternatives
    assert not w.live_view.image.isNull() and "a stored screenshot" in w.caption.text()
    w.close()
