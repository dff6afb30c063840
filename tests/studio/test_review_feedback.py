"""Issue 23 item 6: after Approve or Reject the review says what it did; rejecting a skill asks "Why reject this
skill?"; the skill library shows the rejection reason; a person's correction reads "chosen by you", not
"takeover won, score 0.00, margin 0.00".  Real store (studio.skill_samples), the real panels' buttons."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from studio.skill_samples import SAMPLE_PROPOSED_ID, skill_store
from studio.views.heal_review import HealReviewPanel, ReviewEvidence, _evidence_html, reason_question
from studio.views.skill_library import SkillLibraryPanel
from studio.views.skill_review import SkillSource


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:  # noqa: ANN001
    root = tmp_path_factory.mktemp("skill-space")
    skill_store(root)
    return root


@pytest.fixture
def root(template: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "p"
    shutil.copytree(template, dst)
    return dst


def _panel(qtbot, root: Path, reasons: list[str], asked: list[str]) -> HealReviewPanel:  # noqa: ANN001
    def ask(_parent, title: str) -> str | None:  # noqa: ANN001
        asked.append(reason_question(title))  # what the dialog asks for this title
        return reasons.pop(0) if reasons else None

    panel = HealReviewPanel([SkillSource(root, "demo")], root=root, ask_reason=ask)
    qtbot.addWidget(panel)
    panel.resize(1280, 700)
    panel.show()
    return panel


def test_approve_says_what_it_did(qtbot, root: Path) -> None:  # noqa: ANN001
    panel = _panel(qtbot, root, [], [])
    assert panel.select_key(f"skill:{SAMPLE_PROPOSED_ID}")
    assert not panel.feedback.isVisible()
    qtbot.mouseClick(panel.skill_view.approve_button, Qt.MouseButton.LeftButton)
    assert panel.feedback.isVisible()
    assert "approved: it can now act" in panel.feedback.text() and "Skill \u201c" in panel.feedback.text()


def test_reject_asks_why_reject_this_skill_says_it_and_the_library_shows_the_reason(qtbot, root: Path) -> None:  # noqa: ANN001
    asked: list[str] = []
    panel = _panel(qtbot, root, ["it presses Cancel on every dialog"], asked)
    assert panel.select_key(f"skill:{SAMPLE_PROPOSED_ID}")
    qtbot.mouseClick(panel.skill_view.reject_button, Qt.MouseButton.LeftButton)
    assert asked == ["Why reject this skill? (kept with the skill)"]
    assert "Why is this change wrong?" not in asked[0]
    text = panel.feedback.text()
    assert panel.feedback.isVisible() and "rejected: it will not act" in text
    assert "it presses Cancel on every dialog" in text

    lib = SkillLibraryPanel(root, "demo")
    qtbot.addWidget(lib)
    lib.show()
    row = next(r for r in range(lib.table.rowCount()) if lib.shown[r].skill.id == SAMPLE_PROPOSED_ID)
    assert lib.table.item(row, 1).text() == "rejected \u2014 it presses Cancel on every dialog"
    assert lib.select_skill(SAMPLE_PROPOSED_ID)
    assert "Rejected: it presses Cancel on every dialog" in lib.uses_title.text()


def test_a_persons_correction_is_chosen_by_you_not_a_score() -> None:
    html = _evidence_html(ReviewEvidence(strategy="takeover", reason="taken over"))
    assert "chosen by you" in html and "won" not in html and "0.00" not in html
    assert "fuzzy text" in _evidence_html(ReviewEvidence(strategy="fuzzy_text", score=0.86, margin=0.2))
