"""Trial-49/78: selecting a skill with a long description in Review widened the window past the screen, approving
one made it 8 px taller.  Every dock's content scrolls inside the dock instead; long texts wrap or are cut.
Real window, real store, offscreen (the offscreen screen is 800 x 800 px)."""
from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QApplication

from core.store import Store, store_path
from core.store.skills import SkillTable
from studio.skill_samples import SAMPLE_PROPOSED_ID, skill_store
from studio.testing import RecordingEngine

LONG = ("When element 'Reason' was on the page and not on the recording; the step's own target was on the recording "
        "and not on the page, double-click the Reason label before 'Type the reason' ") * 3


def _settle(qtbot) -> None:  # noqa: ANN001
    QApplication.processEvents()
    qtbot.wait(50)
    QApplication.processEvents()


def _inside(w, avail) -> bool:  # noqa: ANN001
    g = w.frameGeometry()
    return g.width() <= avail.width() and g.height() <= avail.height()


def test_long_review_and_skill_texts_keep_the_window_on_the_screen(qtbot, make_window, project, tmp_path) -> None:  # noqa: ANN001
    skill_store(project.root)
    with Store.open(store_path(project.root)) as store:
        table = SkillTable(store)
        table.put(replace(table.get(SAMPLE_PROPOSED_ID), description=LONG))
    w = make_window(RecordingEngine.factory([]))
    avail = w.screen().availableGeometry()
    w.resize(avail.width() - 10, avail.height() - 40)
    w.show()
    _settle(qtbot)
    assert _inside(w, avail)
    size = w.size()
    w.show_heal_review()
    assert w.heal_review.select_key(f"skill:{SAMPLE_PROPOSED_ID}")
    view = w.heal_review.skill_view
    # long texts everywhere in the review and the skill panels; a wide element crop
    wide = QImage(1400, 60, QImage.Format.Format_RGB32)
    wide.fill(QColor("white"))
    crop = tmp_path / "wide.png"
    wide.save(str(crop))
    view.crops.set_crops([("1", crop), ("2", crop)])
    for label in (view.failure_note, view.correction_note, w.heal_review.heading, w.heal_review.error):
        label.setText(LONG)
    w.heal_review.error.show()
    _settle(qtbot)
    assert _inside(w, avail) and w.size() == size
    qtbot.mouseClick(view.approve_button, Qt.MouseButton.LeftButton)  # the feedback line appears over the queue
    assert w.heal_review.feedback.isVisible() and LONG[:40] in w.heal_review.feedback.text()
    assert w.heal_review.wait_read()
    _settle(qtbot)
    assert _inside(w, avail) and w.size() == size
    w.skill_library_dock.raise_()
    lib = w.skill_library
    qtbot.waitUntil(lambda: any(r.skill.id == SAMPLE_PROPOSED_ID for r in lib.rows), timeout=10000)
    lib.select_skill(SAMPLE_PROPOSED_ID)
    lib.uses_title.setText(LONG)
    lib.note.setText(LONG)
    _settle(qtbot)
    assert _inside(w, avail) and w.size() == size
    w.grab().save(str(tmp_path / "window.png"))
