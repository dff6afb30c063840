"""Run history over real runs of the demo app: list, open read-only and scrub, compare baseline with a tweak."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from PySide6.QtCore import Qt

from core.engine.session import ProjectSession
from core.project import load_project
from core.store import Store
from studio.views.history import CHANGE_COLORS, HistoryPanel

ROOT = Path(__file__).resolve().parents[2]


def _set_variant(root: Path, variant: str) -> None:
    settings = yaml.safe_load((root / "steadyhand.yaml").read_text())
    settings["site_options"]["variant"] = variant
    settings["site_options"]["latency_ms"] = "150"
    (root / "steadyhand.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, str, str, str]:  # noqa: ANN001
    """export_report and sort_table on the baseline demo, then export_report on the ``tweaked`` variant (heals)."""
    root = tmp_path_factory.mktemp("hist") / "demo"
    shutil.copytree(ROOT / "projects" / "demo", root, ignore=shutil.ignore_patterns(".steadyhand"))
    ids = []
    for variant, flows in (("baseline", ("export_report", "sort_table")), ("tweaked", ("export_report",))):
        _set_variant(root, variant)
        with ProjectSession(load_project(root), headless=True, evidence="full") as session:
            for flow in flows:
                result = session.run_flow(session.project.flows[flow])
                assert result.status == "passed", (variant, flow, result.error)
                ids.append(result.run_id)
    return root / ".steadyhand", ids[0], ids[1], ids[2]


def test_history_lists_the_runs_newest_first(qtbot, runs) -> None:  # noqa: ANN001
    media, base, sort, tweak = runs
    panel = HistoryPanel(media, flows=["export_report", "sort_table"])
    qtbot.addWidget(panel)
    assert [e.run.id for e in panel.entries] == [tweak, sort, base]
    assert panel.table.rowCount() == 3
    assert panel.table.item(0, 1).text() == "export_report" and panel.table.item(0, 2).text() == "passed"
    steps = panel.entries[0].steps
    assert steps > 0 and panel.table.item(0, 3).text() == f"{steps}/{steps}"
    assert int(panel.table.item(0, 4).text()) >= 1 and panel.table.item(2, 4).text() == "0"
    panel.flow_filter.setCurrentIndex(panel.flow_filter.findData("sort_table"))
    assert [e.run.id for e in panel.entries] == [sort]
    # two runs of different flows cannot be compared
    panel.flow_filter.setCurrentIndex(0)
    panel.select_runs([sort, tweak])
    assert not panel.compare_button.isEnabled()
    panel.select_runs([base, tweak])
    assert panel.compare_button.isEnabled()


def test_open_a_run_read_only_and_scrub_through_its_steps(qtbot, runs) -> None:  # noqa: ANN001
    media, base, _sort, _tweak = runs
    before = (media / "store.sqlite").stat().st_mtime_ns
    panel = HistoryPanel(media)
    qtbot.addWidget(panel)
    panel.show()
    row = next(i for i, e in enumerate(panel.entries) if e.run.id == base)
    panel.table.selectRow(row)
    shown: list[object] = []
    panel.step_shown.connect(lambda step, image: shown.append((step, image)))
    panel.open_button.click()
    v = panel.viewer
    assert panel.tabs.currentWidget() is v and "read-only" in v.header.text()
    assert v.step_list.count() == len(v.steps) and len(v.steps) == panel.entries[row].steps
    assert v.before.image.isNull() is False and v.after.image.isNull() is False
    first = v.before.image
    v.slider.setValue(len(v.steps) - 1)  # scrub to the last step
    assert v.step_list.currentRow() == len(v.steps) - 1
    assert v.after.image != first and shown and shown[-1][0].index == v.steps[-1].index
    assert not shown[-1][1].isNull()
    qtbot.keyClick(v, Qt.Key.Key_Left)
    assert v.slider.value() == len(v.steps) - 2
    assert "passed" in v.info.text() and " ms" in v.info.text()
    # nothing was written: the store is opened read-only
    with Store.open(media, read_only=True) as store:
        assert store.get_run(base) is not None
    assert (media / "store.sqlite").stat().st_mtime_ns == before


def test_compare_shows_the_healed_step(qtbot, runs) -> None:  # noqa: ANN001
    media, base, _sort, tweak = runs
    panel = HistoryPanel(media)
    qtbot.addWidget(panel)
    panel.select_runs([tweak, base])
    panel.compare_button.click()
    cv = panel.compare_view
    assert panel.tabs.currentWidget() is cv
    healed = [d for d in cv.deltas if d.healed_now]
    assert healed, [(d.title, d.a and d.a.strategy, d.b and d.b.strategy) for d in cv.deltas]
    assert all(d.a is not None and d.a.strategy == "exact" for d in healed)
    row = cv.deltas.index(healed[0])
    assert "healed" in cv.table.item(row, 8).text()
    assert cv.table.item(row, 4).foreground().color().name() == CHANGE_COLORS["healed"]
    assert "\u2192" in cv.table.item(row, 4).text()  # exact -> the healing level
    # the older run is A: the tweak is B
    assert base[:8] in cv.header.text().split(" vs ")[0] and "healed" in cv.header.text()
    same = [d for d in cv.deltas if not d.changes]
    assert all(cv.table.item(cv.deltas.index(d), 8).text() == "same" for d in same)


def test_compare_names_slower_and_changed_verdicts_and_the_graph_of_the_same_store(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    from core.state.graph import flow_graph_name
    from studio.history_samples import sample_store
    from studio.views.state_graph import StateGraphView

    media, a, b = sample_store(tmp_path)
    panel = HistoryPanel(media)
    qtbot.addWidget(panel)
    deltas = panel.compare(a, b)
    by_change = {c: [d.step_id for d in deltas if c in d.changes] for c in ("healed", "slower", "verdict")}
    assert by_change == {"healed": ["s4"], "slower": ["s5"], "verdict": ["s6"]}
    row = next(i for i, d in enumerate(deltas) if d.step_id == "s5")
    assert panel.compare_view.table.item(row, 7).text() == "+900"
    assert "1 healed, 1 slower, 1 verdict" in panel.compare_view.header.text()
    view = StateGraphView(media)
    qtbot.addWidget(view)
    graph = view.load_stored(flow_graph_name("login_lockout"))
    # the login page is left and reached again in each run (Unlock account): a revisit and a loop
    assert [n.url.endswith("/login") for n in graph.revisited()] == [True]
    assert graph.loops() and view.canvas.node_items


def test_a_run_opened_from_the_history_shows_in_the_timeline(qtbot, runs) -> None:  # noqa: ANN001
    from studio.main_window import MainWindow
    from studio.testing import RecordingEngine

    media, base, _sort, _tweak = runs
    engines: list[RecordingEngine] = []
    w = MainWindow(media.parent, engine_factory=RecordingEngine.factory(engines), close_timeout=5.0)
    qtbot.addWidget(w)
    try:
        assert w.history_panel.open_run(base)
        tl = w.timeline_panel
        assert len(tl.visible_steps()) == w.history_panel.entries[-1].steps
        assert any(s.evidence is not None and s.evidence.diff is not None for s in tl.visible_steps())
    finally:
        w.shutdown()


def test_open_trace_starts_the_trace_viewer_on_the_run_that_has_one(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    root = tmp_path / "demo"
    shutil.copytree(ROOT / "projects" / "demo", root, ignore=shutil.ignore_patterns(".steadyhand"))
    ids = []
    for mode in ("off", "on"):
        with ProjectSession(load_project(root), headless=True, trace=mode) as session:
            result = session.run_flow(session.project.flows["sort_table"])
            assert result.status == "passed", result.error
            ids.append(result.run_id)
    plain, traced = ids
    panel = HistoryPanel(root / ".steadyhand", flows=["sort_table"])
    qtbot.addWidget(panel)
    started: list[list[str]] = []
    panel.launch = started.append
    panel.select_runs([plain])
    assert not panel.trace_button.isEnabled()
    panel.select_runs([traced])
    assert panel.trace_button.isEnabled()
    qtbot.mouseClick(panel.trace_button, Qt.MouseButton.LeftButton)
    trace = (root / ".steadyhand" / "traces" / f"{traced}.zip").resolve()
    assert started and started[0][-2:] == ["show-trace", str(trace)] and "playwright" in started[0]
    assert str(trace) in panel.note.text()
