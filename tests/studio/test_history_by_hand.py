"""The studio's History over a real run finished by hand (tester's report): a person's help is never "passed".

``leave_request`` on the ``inline-edit`` variant opens the breaker at step 10;
a script takes the step over on CDP and hands back as ``replace``
(tests/e2e/takeover_project.py).  The History lists that run as "passed with
help" with its "by hand" count.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from studio.views.history import HistoryPanel
from tests.e2e.takeover_project import inline_edit_demo, take_over_the_reason

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def helped(tmp_path_factory) -> Path:  # noqa: ANN001
    project = inline_edit_demo(tmp_path_factory.mktemp("byhand") / "demo")
    run, log = take_over_the_reason(project)
    assert run.returncode == 0, log
    return project


def test_history_lists_a_run_finished_by_hand_as_passed_with_help(qtbot, helped: Path) -> None:  # noqa: ANN001
    panel = HistoryPanel(helped / ".steadyhand", flows=["leave_request"])
    qtbot.addWidget(panel)
    (entry,) = panel.entries
    assert entry.run.status == "passed" and entry.by_hand == 1
    assert panel.table.item(0, 2).text() == "passed with help \u00b7 by hand: 1"
    assert "a person acted 1 time" in panel.table.item(0, 2).toolTip()
    # item 4: one count - steps passed / steps in the flow file as run (no flow list given: from the store)
    assert entry.run.steps_total == 11 and panel.table.item(0, 3).text() == "10/11"
    assert "10 of the flow's 11 steps passed (1 by hand)" in panel.table.item(0, 3).toolTip()
    assert panel.open_run(entry.run.id)
    assert "10/11 steps passed" in panel.viewer.header.text()


def test_a_step_done_by_hand_is_by_hand_not_healed_and_keeps_its_after_picture(qtbot, helped: Path) -> None:  # noqa: ANN001
    """Tester's report, item 3: the step done by hand read "[by hand] ↑healed", "locator semantic 0.54 (healed)"
    (a label the engine refused to act on) and had no after screenshot."""
    panel = HistoryPanel(helped / ".steadyhand", flows=["leave_request"])
    qtbot.addWidget(panel)
    panel.show()
    panel.table.selectRow(0)
    panel.open_button.click()
    v = panel.viewer
    row = next(i for i, s in enumerate(v.steps) if s.index == 9)
    step = v.steps[row]
    assert step.status == "manual" and step.by_hand and not step.healed and step.strategy == ""
    assert v.step_list.item(row).text() == "10. Type the reason  [by hand]"
    v.show_step(row)
    info = v.info.text()
    assert "locator none (the step was done by hand)" in info and "healed" not in info and "semantic" not in info
    assert step.after and not v.after.image.isNull()  # the page as the person left it
    assert not any(s.healed for s in v.steps)


def test_a_step_that_passed_after_a_person_acted_before_it_says_so(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    """Tester's report, item 2: after a takeover that went before the step (a consent banner dismissed by hand),
    the step read plain "passed" with no sign of the escalation or the hand action."""
    project = inline_edit_demo(tmp_path / "demo")
    run, log = take_over_the_reason(project, meaning="insert", type_it=False)  # reveal the field; the engine types
    assert run.returncode == 0, log
    assert "leave_request: passed with help (by hand: 1) (11/11 steps passed, " in log, log
    panel = HistoryPanel(project / ".steadyhand", flows=["leave_request"])
    qtbot.addWidget(panel)
    (entry,) = panel.entries
    assert panel.table.item(0, 2).text() == "passed with help \u00b7 by hand: 1"
    assert panel.open_run(entry.run.id)
    v = panel.viewer
    row = next(i for i, s in enumerate(v.steps) if s.index == 9)
    step = v.steps[row]
    assert step.status == "passed" and step.escalated == 1 and step.hand_backs == 1 and step.helped
    assert v.step_list.item(row).text().startswith("10. Type the reason  [passed]")
    assert "after a person acted" in v.step_list.item(row).text()
    v.show_step(row)
    assert "a person took the page over and handed it back 1 time" in v.info.text()
    assert not any(s.helped for s in v.steps if s.index != 9)
