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
