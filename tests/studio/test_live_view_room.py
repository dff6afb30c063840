"""The live view gets the room of its panel: no strip of empty space above it when no run is live, labels and
the legend beside the page rather than over it, and headers in sentence case.

Found by a new user on their own page: the live view was a small picture in a large panel, a strip above it
mostly empty, the target's label ("exact 1.00") covered the page's table header, and one header read
"CANDIDATES" in capitals.  Real widgets of the window, offscreen; the page is a 1280 x 800 screenshot.
"""
from __future__ import annotations

from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QLabel

from core.domain import BBox, Candidate, ElementDescriptor, Resolution, ScoredCandidate
from core.engine.events import FlowStarted, RunFinished, RunStarted, StepStarted
from studio.main_window import MainWindow
from studio.run_state import RunState
from studio.views.live_view import LiveView

FLOW = "login_lockout"


def _settle(qtbot) -> None:  # noqa: ANN001
    QApplication.processEvents()
    qtbot.wait(50)
    QApplication.processEvents()


def _page() -> QImage:
    img = QImage(1280, 800, QImage.Format.Format_RGB32)
    img.fill(0xF4F6FA)
    return img


def _play(qtbot, w: MainWindow, engine, *events) -> None:  # noqa: ANN001
    with qtbot.waitSignal(w.bridge.event_received, timeout=5000, check_params_cb=lambda e: e is events[-1]):
        engine.emit_from_thread(*events)


def test_the_strip_above_the_live_view_is_compact_unless_a_run_is_live(qtbot, recorded) -> None:  # noqa: ANN001
    w, engines = recorded
    w.fit_screen = False
    w.resize(1400, 900)
    w.show()
    w.live_view.set_image(_page())
    _settle(qtbot)
    slot = w.banner_slot
    assert w.state is RunState.IDLE and not slot.reserved
    assert slot.height() == slot.compact_height() <= slot.slot_height() // 2, (slot.height(), slot.slot_height())
    idle_h = w.live_view.image_rect().height()

    w.start_run((FLOW,))
    _play(qtbot, w, engines[0], RunStarted("r1", "demo", (FLOW,)), FlowStarted("r1", FLOW, ("s1",)),
          StepStarted("r1", FLOW, 0, "Click", 1))
    w.live_view.set_image(_page())  # the run's first screenshot (a run clears the last run's)
    _settle(qtbot)
    assert slot.reserved and slot.height() == slot.slot_height()  # bars may come: the view must not move then
    assert w.live_view.image_rect().height() < idle_h

    _play(qtbot, w, engines[0], RunFinished("r1", ()))
    _settle(qtbot)
    assert w.state is RunState.FINISHED and slot.height() == slot.compact_height()
    assert abs(w.live_view.image_rect().height() - idle_h) <= 2  # the room it had before the run (a status line may differ by 1 px)
    lv = w.live_view
    assert lv.image_rect().height() >= lv.height() - 1  # the page fills the view's height, its aspect kept
    assert abs(lv.image_rect().width() / lv.image_rect().height() - 1280 / 800) < 0.01

    w.files_text.setText("<b>Files changed on disk</b> (login_lockout.yaml).")  # a bar that comes when idle
    w.files_bar.show()
    _settle(qtbot)
    assert w.files_bar.isVisibleTo(w) and slot.height() == slot.compact_height()
    assert w.files_bar.height() <= slot.viewport().height()  # it fits: no scrolling to reach Reload


def test_the_targets_label_and_the_legend_sit_beside_the_page_not_over_it(qtbot) -> None:  # noqa: ANN001
    view = LiveView()
    qtbot.addWidget(view)
    view.resize(1100, 380)  # a wide panel: the page leaves margins on both sides
    header = Candidate("0:1", ElementDescriptor(tag="button", role="button", name="Employee",
                                                bbox=BBox(150, 170, 90, 24)))
    caption = Candidate("0:2", ElementDescriptor(tag="button", role="button", name="Status",
                                                 bbox=BBox(1000, 170, 90, 24)))
    view.set_image(_page(), candidates=(header, caption))
    view.show_resolution(Resolution("exact", "0:1", 1.0, 1.0, 1.0, top=(ScoredCandidate("0:1", 1.0),)), header)
    view.set_target(header, "exact 1.00")
    view.set_alternatives([(caption, "#2 0.40")])
    page = view.image_rect()
    chips = dict(view.label_rects())
    assert set(chips) == {"exact 1.00", "#2 0.40"}
    assert not any(r.intersects(page) for r in chips.values()), (page, chips)  # nothing of the page is covered
    assert chips["exact 1.00"].right() <= page.left() and chips["#2 0.40"].left() >= page.right()  # nearest side
    box = view.map_to_widget(header.descriptor.bbox)
    assert chips["exact 1.00"].top() <= box.center().y() <= chips["exact 1.00"].bottom()  # at the box's height
    legend = view.legend_rect()
    assert not legend.isEmpty() and not legend.intersects(page), (legend, page)

    view.resize(800, 600)  # no margin beside the page: the label goes above its box, as before
    page = view.image_rect()
    chip = dict(view.label_rects())["exact 1.00"]
    assert chip.bottom() <= view.map_to_widget(header.descriptor.bbox).top()


def test_headers_read_in_sentence_case(recorded) -> None:  # noqa: ANN001
    w, _engines = recorded
    assert w.escalations_panel.candidates_title.text() == "Candidates"
    titles = [lab.text() for lab in w.findChildren(QLabel) if lab.objectName() == "panelTitle" and lab.text()]
    assert titles and not [t for t in titles if t.isupper() and len(t) > 3], titles  # "URL" is a word as written
