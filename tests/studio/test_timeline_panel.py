"""The step timeline fed by a REAL run of the demo app (engine thread, Playwright, Chromium), then by the store."""
from __future__ import annotations

import shutil
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from core.store import Store
from studio.main_window import MainWindow
from studio.run_state import RunState
from studio.views.timeline import DIFF_COLOR, TimelinePanel

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_MS = 120_000


def _demo_copy(tmp_path: Path, flows: list[str]) -> Path:
    dst = tmp_path / "demo"
    shutil.copytree(ROOT / "projects" / "demo", dst, ignore=shutil.ignore_patterns(".steadyhand"))
    for f in (dst / "flows").glob("*.yaml"):
        if f.stem not in flows:
            f.unlink()
    return dst


def _reddish(c: QColor) -> bool:
    return c.red() > c.green() + 40 and c.red() > c.blue() + 20


def test_timeline_of_a_real_demo_run_live_and_from_the_store(qtbot, tmp_path):
    project = _demo_copy(tmp_path, ["sort_table"])
    w = MainWindow(project, run_on_show=True, close_timeout=15.0)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    qtbot.waitUntil(lambda: w.state is RunState.FINISHED, timeout=TIMEOUT_MS)
    tl: TimelinePanel = w.timeline_panel
    steps = tl.model.steps()
    assert [s.status for s in steps] == ["passed"] * 5
    assert all(s.evidence is not None for s in steps)
    assert [s.action for s in steps][:3] == ["input", "input", "click"]
    # signing in changes the page: the engine's diff has regions, and they are drawn over both shots
    changed = [s for s in steps if s.evidence.diff is not None and s.evidence.diff.regions]
    assert changed, [s.evidence.diff for s in steps]
    w.timeline_dock.show()
    w.timeline_dock.raise_()
    tl.set_filters(text="")
    row = next(i for i, s in enumerate(tl.visible_steps()) if s is changed[0])
    tl.select_row(row)
    view = tl.after_view
    qtbot.waitUntil(lambda: not view._image.isNull(), timeout=5000)  # decoded off the GUI thread
    img = view.grab().toImage()
    assert view.drawn and len(view.drawn) == len(changed[0].evidence.diff.regions)
    r = view.drawn[0]
    edge = img.pixelColor(int(r.left()) + 1, int(r.center().y()))
    assert _reddish(edge), (edge.name(), DIFF_COLOR)
    assert "changed region" in tl.details.toPlainText()
    # filters: action, verdict, strategy, text, and their combination
    tl.set_filters(action="click")
    assert tl.visible_steps() and all(s.action == "click" for s in tl.visible_steps())
    tl.set_filters(action="", verdict="changed_unexpectedly")
    assert tl.visible_steps() == []
    assert tl.count_label.text() == "0 of 5 steps"
    tl.set_filters(verdict="as_expected", strategy="exact")
    assert len(tl.visible_steps()) == 5
    tl.set_filters(verdict="", strategy="semantic")
    assert tl.visible_steps() == []
    tl.set_filters(strategy="", text="password")
    assert [s.title for s in tl.visible_steps()] == ["Type the password"]
    # Ctrl+F focuses the search box
    tl.table.setFocus()
    qtbot.keyClick(tl.table, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert tl.search.hasFocus()
    tl.set_filters(text="")
    live = [(s.index, s.status, s.verdict, s.strategy, s.evidence.diff.regions if s.evidence.diff else None)
            for s in steps]
    w.close()

    # the same run opened from the store alone, read-only
    with Store.open(project / ".steadyhand" / "store.sqlite", read_only=True) as store:
        run = store.list_runs(1)[0]
        panel = TimelinePanel()
        qtbot.addWidget(panel)
        assert panel.load_run(store, run.id)
        assert not panel.load_run(store, "no-such-run")
    stored = panel.model.steps()
    assert [(s.index, s.status, s.verdict, s.strategy, s.evidence.diff.regions if s.evidence.diff else None)
            for s in stored] == live
    assert all(s.before_path is not None and s.before_path.is_file() for s in stored)
    assert "read-only" in panel.source_label.text()
    panel.resize(1200, 600)
    panel.show()
    panel.select_row(next(i for i, s in enumerate(stored) if s.evidence.diff and s.evidence.diff.regions))
    qtbot.waitUntil(lambda: not panel.after_view._image.isNull(), timeout=5000)  # read from its file off the GUI thread
    panel.after_view.grab()
    assert panel.after_view.drawn


def test_a_paused_step_reads_paused_in_the_steps_table_and_the_timeline(qtbot):
    from core.engine.events import FlowStarted, Paused, PhaseChanged, Resumed, RunStarted, StepStarted
    from studio.views.steps import StepsModel

    steps, tl = StepsModel(), TimelinePanel()
    qtbot.addWidget(tl)
    events = [RunStarted("r", "p", ("f",)), FlowStarted("r", "f", ("one", "two")), StepStarted("r", "f", 0, "one", 1),
              PhaseChanged("r", "f", 0, "act"), Paused("r", "f", 0, "paused")]
    for e in events:
        steps.apply(e)
        tl.apply(e)
    steps.show_flow("f")
    status = steps.data(steps.index(0, steps.COL_STATUS))
    assert status.startswith("paused"), status
    assert tl.model.step(0).status_text == "paused \u00b7 1 attempt so far"  # what it tried is the reason to look
    for e in (Resumed("r"),):
        steps.apply(e)
        tl.apply(e)
    assert steps.data(steps.index(0, steps.COL_STATUS)).startswith("running")
    assert tl.model.step(0).status_text == "running"


def test_the_event_log_says_what_a_step_left_behind():
    from core.domain import BBox
    from core.domain.evidence import ConsoleMessage, FailedRequest, ImageDiff, StepEvidence
    from core.engine.events import StepEvidenceRecorded
    from studio.views.event_log import describe_event

    ev = StepEvidence(2, 1, "click", ImageDiff((BBox(1, 2, 3, 4),), 0.01, 1280, 800), (ConsoleMessage("error", "x"),),
                      (FailedRequest("GET", "http://127.0.0.1/api/r?q=1", 500, "fetch"),), (), 120.4, 900.0)
    assert describe_event(StepEvidenceRecorded("r", "f", 2, ev)) == (
        "Evidence of step 3: 1 changed regions \u00b7 1 console errors \u00b7 1 failed requests "
        "(GET /api/r 500) \u00b7 120 ms active")


def test_a_stored_run_shown_while_a_run_goes_on_keeps_the_live_one(qtbot, tmp_path):
    """The live run is still followed while a stored run is shown; Show live (or the next run) brings it back."""
    from core.domain import Verdict
    from core.engine.events import FlowStarted, RunStarted, StepFinished, StepStarted, VerdictReached
    from core.domain import StepOutcome

    with Store.open(tmp_path / "store.sqlite") as store:
        old = store.begin_run("p", "older_flow")
        store.record_step(old, StepOutcome(0, "s1", "Open the archive", "passed", None, None, 1, 12.0))
        store.record_verdict(old, 0, Verdict("as_expected", "navigation", ("navigation",), "navigation as expected"))
    tl = TimelinePanel()
    qtbot.addWidget(tl)
    for e in (RunStarted("r", "p", ("f",)), FlowStarted("r", "f", ("one", "two")), StepStarted("r", "f", 0, "one", 1)):
        tl.apply(e)
    with Store.open(tmp_path / "store.sqlite", read_only=True) as ro:
        assert tl.load_run(ro, old)
    assert not tl.showing_live and [s.title for s in tl.model.steps()] == ["Open the archive"]
    assert tl.model.step(0).verdict_text == "as expected" and tl.model.step(0).ms == 12.0
    tl.apply(VerdictReached("r", "f", 0, Verdict("unchanged", "navigation", (), "nothing changed")))
    tl.apply(StepFinished("r", "f", 0, "failed", False, 40.0))
    assert [s.title for s in tl.model.steps()] == ["Open the archive"]  # the stored run is not touched
    assert tl.live_button.isVisibleTo(tl)
    qtbot.mouseClick(tl.live_button, Qt.MouseButton.LeftButton)
    assert tl.showing_live and not tl.live_button.isVisibleTo(tl) and [(s.title, s.status, s.verdict) for s in tl.model.steps()] == [
        ("one", "failed", "unchanged"), ("two", "pending", "")]
    tl.set_filters(verdict="unchanged")
    assert [s.title for s in tl.visible_steps()] == ["one"]
