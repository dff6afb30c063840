"""The region a step changed, judged relative to the recording (issue 19, item 1: the landing check's signals).

A board written for these tests (tests/e2e/fixtures/landing/board.html; nothing goes to a server) is served
in three releases under their own paths.  A click on "Pin note" is recorded with `steadyhand record` over
CDP on release 1, where it adds the note to the section "Pinned"; the recorder stores that section as the
region the step changed.  Replayed with the session `steadyhand run --base-url` uses (its verdicts' reasons are read):

- on release 2 the note goes to "Recent": the route, the title and the heading hold, so the step passes
  (one drifted signal is a change, not another page) and the run's verdict says which region changed
  instead of the recorded one - before, it passed saying nothing;
- on release 3 the section is renamed "Pinned notes": the same region by role, renamed - no change
  reported.
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml

from cdp_recording import record
from core.engine.events import VerdictReached
from core.engine.session import ProjectSession
from core.project import load_flow, load_project
from core.sites.server import StaticSite

pytestmark = pytest.mark.browser

FIXTURE = Path(__file__).with_name("fixtures") / "landing" / "board.html"
PAUSE_S = 0.7  # a user's pace between actions


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    root = tmp_path_factory.mktemp("board")
    for release, pinned in (("1", "Pinned"), ("2", "Pinned"), ("3", "Pinned notes")):
        (root / f"r{release}").mkdir()
        (root / f"r{release}" / "index.html").write_text(
            FIXTURE.read_text().replace("__RELEASE__", release).replace("__PINNED__", pinned))
    s = StaticSite(root)
    s.start()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def board_project(tmp_path_factory, board):
    root = tmp_path_factory.mktemp("board_project") / "app"
    (root / "flows").mkdir(parents=True)
    (root / "steadyhand.yaml").write_text(yaml.safe_dump({"name": "Board", "base_url": board.base_url + "/r1/"}))

    def drive(page):
        page.wait_for_load_state("load")
        time.sleep(PAUSE_S)
        page.get_by_role("button", name="Pin note").click()
        page.get_by_text("Note 2").wait_for()
        time.sleep(2.5)  # the recorder takes the after-state once the page is quiet (a loaded machine is slow)

    code, out, err = record(root, "pin", drive, "/")
    assert code == 0, out + err
    return root


def _run(project: Path, base_url: str) -> tuple[str, list[str]]:
    """Run the flow with the session `steadyhand run --base-url` uses: its status and verdict reasons."""
    events: list = []
    loaded = load_project(project)
    with ProjectSession(loaded, headless=True, emit=events.append, use_store=False, screenshots=False,
                        base_url=base_url) as s:
        result = s.run_flow(loaded.flows["pin"])
    return result.status, [e.verdict.reason for e in events if isinstance(e, VerdictReached)]


def test_the_recorder_stores_the_region_the_step_changed(board_project) -> None:
    flow = load_flow(board_project / "flows" / "pin.yaml")
    click = [s for s in flow.steps if s.action.kind == "click"][-1]
    after = click.recorded.after
    assert after is not None and after.region == "region: Pinned", after
    assert after.landmark == "Board" and after.list_kind == "li" and after.list_delta == 1, after


def test_a_step_that_changed_another_region_passes_with_the_change_reported(board_project, board) -> None:
    status, reasons = _run(board_project, board.base_url + "/r2/")
    assert status == "passed", reasons
    assert any("the step changed the section 'Recent' where the recording changed the section 'Pinned'" in r
               for r in reasons), reasons


def test_a_renamed_region_is_the_same_region(board_project, board) -> None:
    status, reasons = _run(board_project, board.base_url + "/r3/")
    assert status == "passed", reasons
    assert not any("changed since the recording" in r for r in reasons), reasons
