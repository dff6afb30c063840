"""Trial-48/98/99: after a review move the GUI thread froze (the store read again, every panel refilled, the
idle engine closed after "Write flow file") and the skill stayed "proposed" with Approve enabled meanwhile.
The reviewed row says its new state at once; the store is read, and the engine closed, off the GUI thread.
Asserted by the thread each blocking call ran on, not by timing."""
from __future__ import annotations

import threading

from PySide6.QtCore import Qt

from core.engine.events import FlowStarted, RunFinished, RunStarted
from studio.run_state import RunState
from studio.skill_samples import SAMPLE_PROPOSED_ID, skill_store
from studio.testing import RecordingEngine
from studio.views import skill_review
from studio.views.heal_review import HealReviewPanel
from studio.views.skill_review import SkillSource

MAIN = threading.main_thread()


def _spy(monkeypatch, cls, name: str, threads: list[threading.Thread]) -> None:  # noqa: ANN001
    real = getattr(cls, name)

    def wrapped(self, *a, **k):  # noqa: ANN001, ANN002, ANN003, ANN202
        threads.append(threading.current_thread())
        return real(self, *a, **k)

    monkeypatch.setattr(cls, name, wrapped)


def test_approve_shows_approved_at_once_and_reads_the_store_off_the_gui_thread(qtbot, tmp_path, monkeypatch) -> None:  # noqa: ANN001
    skill_store(tmp_path)
    panel = HealReviewPanel([SkillSource(tmp_path, "demo")], root=tmp_path, ask_reason=lambda _p, _t: "wrong button")
    qtbot.addWidget(panel)
    panel.resize(1280, 700)
    panel.show()
    assert panel.select_key(f"skill:{SAMPLE_PROPOSED_ID}")
    view = panel.skill_view
    assert view.approve_button.isEnabled()
    reads: list[threading.Thread] = []
    _spy(monkeypatch, SkillSource, "items", reads)
    _spy(monkeypatch, skill_review.SkillItem, "evidence", reads)
    qtbot.mouseClick(view.approve_button, Qt.MouseButton.LeftButton)
    # at once, before any event is processed: the row and the buttons say approved
    assert not view.approve_button.isEnabled() and not view.reject_button.isEnabled()
    assert view.item.skill.state == "approved" and view.heading.toolTip() is not None
    row = next(i for i, it in enumerate(panel.items) if it.key == f"skill:{SAMPLE_PROPOSED_ID}")
    assert panel.queue.item(row).text().endswith("approved")
    assert panel.wait_read(10.0)
    qtbot.waitUntil(lambda: all(it.key != f"skill:{SAMPLE_PROPOSED_ID}" for it in panel.items), timeout=10000)
    assert reads and all(t is not MAIN for t in reads)


def test_reject_reads_the_store_off_the_gui_thread(qtbot, tmp_path, monkeypatch) -> None:  # noqa: ANN001
    skill_store(tmp_path)
    panel = HealReviewPanel([SkillSource(tmp_path, "demo")], root=tmp_path, ask_reason=lambda _p, _t: "wrong button")
    qtbot.addWidget(panel)
    panel.show()
    assert panel.select_key(f"skill:{SAMPLE_PROPOSED_ID}")
    reads: list[threading.Thread] = []
    _spy(monkeypatch, SkillSource, "items", reads)
    qtbot.mouseClick(panel.skill_view.reject_button, Qt.MouseButton.LeftButton)
    assert panel.skill_view.item.skill.state == "rejected" and not panel.skill_view.reject_button.isEnabled()
    assert panel.wait_read(10.0)
    qtbot.waitUntil(lambda: all(it.key != f"skill:{SAMPLE_PROPOSED_ID}" for it in panel.items), timeout=10000)
    assert reads and all(t is not MAIN for t in reads)


def test_the_hidden_skill_library_is_not_read_on_the_gui_thread_after_a_review_move(qtbot, make_window, project,  # noqa: ANN001
                                                                                      monkeypatch) -> None:
    skill_store(project.root)
    w = make_window(RecordingEngine.factory([]))
    w.resize(1400, 900)
    w.show()
    w.show_heal_review()  # the Review dock in front: the skill library, tabbed with it, is not seen
    qtbot.waitUntil(lambda: not w.skill_library.is_seen(), timeout=5000)
    assert w.heal_review.select_key(f"skill:{SAMPLE_PROPOSED_ID}")
    lib_reads: list[threading.Thread] = []
    _spy(monkeypatch, type(w.skill_library), "refresh", lib_reads)
    qtbot.mouseClick(w.heal_review.skill_view.approve_button, Qt.MouseButton.LeftButton)
    assert w.heal_review.wait_read(10.0)
    qtbot.wait(50)
    assert not w.skill_library.is_seen() and lib_reads == []
    w.skill_library_dock.raise_()  # seen: read then, with the new state
    qtbot.waitUntil(lambda: any(r.skill.id == SAMPLE_PROPOSED_ID and r.skill.state == "approved"
                                for r in w.skill_library.rows), timeout=10000)


def test_write_flow_file_closes_the_idle_engine_off_the_gui_thread(qtbot, make_window, project) -> None:  # noqa: ANN001
    """After "Write flow file" the project reloads; the idle engine (its browser) closed on the GUI thread."""
    engines: list[RecordingEngine] = []
    w = make_window(RecordingEngine.factory(engines))
    w.show()
    flow = next(iter(project.flows))
    w.start_run((flow,))
    engine = engines[0]
    with qtbot.waitSignal(w.bridge.event_received, timeout=5000, check_params_cb=lambda e: isinstance(e, RunFinished)):
        engine.emit_from_thread(RunStarted("r1", "demo", (flow,)), FlowStarted("r1", flow, ()), RunFinished("r1", ()))
    qtbot.waitUntil(lambda: w.state is RunState.FINISHED, timeout=5000)
    closed_on: list[threading.Thread] = []
    gate = threading.Event()

    def slow_close(timeout: float = 10.0) -> None:  # a browser takes seconds to close
        closed_on.append(threading.current_thread())
        gate.wait(5.0)
        engine.closed = True

    engine.close = slow_close  # type: ignore[method-assign]
    w.heal_review.flow_written.emit(str(project.root / "flows" / f"{flow}.yaml"))  # what "Write flow file" emits
    assert w.bridge.engine is None  # let go at once: the next run builds a new engine
    assert "project reloaded" in w.event_log.toPlainText()
    gate.set()
    qtbot.waitUntil(lambda: engine.closed, timeout=5000)
    assert closed_on and closed_on[0] is not MAIN


def test_the_review_queue_reads_without_store_codes(qtbot, tmp_path) -> None:  # noqa: ANN001
    """trial: a heal and a correction both numbered "#1"; skills titled "sk-... \u00b7 do"."""
    from core.store import Store, store_path
    from core.store.corrections import CorrectionTable
    from studio.views.heal_review import CorrectionItem

    skill_store(tmp_path)
    panel = HealReviewPanel([SkillSource(tmp_path, "demo")], root=tmp_path, ask_reason=lambda _p, _t: None)
    qtbot.addWidget(panel)
    panel.show()
    assert panel.select_key(f"skill:{SAMPLE_PROPOSED_ID}")
    view = panel.skill_view
    sub = view.heading._parts[1]  # noqa: SLF001 - the heading's second line as drawn
    assert sub.startswith("a skill that acts") and SAMPLE_PROPOSED_ID not in sub and " do " not in f" {sub} "
    assert SAMPLE_PROPOSED_ID not in view.item.subtitle
    lines = [view.failure_steps.item(i).text() for i in range(view.failure_steps.count())]
    assert lines and not any("action_error" in t for t in lines) and "action_error" not in view.failure_note.text()
    with Store.open(store_path(tmp_path), read_only=True) as store:
        corrections = CorrectionTable(store).list()
    assert corrections
    assert CorrectionItem(tmp_path, corrections[0]).title.startswith(f"Correction #{corrections[0].id} ")
