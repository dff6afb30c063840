"""The step's own response status and the list it grew, recorded and judged relative to the recording
(issue 19, "what must exist" 1: the response status and "a list grew by one" stored as a change).

A notes board written for these tests (tests/e2e/fixtures/outcomes/notes.html, a fetch-only page: the
address, the title and the heading never change) is recorded with `steadyhand record` driven over CDP, then
replayed with `steadyhand run`:

- the recorder stores the status of the request each step sent (the note's ``POST`` answered ``201``, the
  lookup of a missing note answered ``404``) and that adding a note grew the list by one item;
- the same add answered ``422`` at replay stops the run: before, a 4xx was excused whenever the address,
  the title and the heading held (they always do on such a page), and the refused write passed;
- the lookup answered ``404`` as when it was recorded passes, even on a release whose heading changed
  (before, a 4xx with a drifted signal was "landed elsewhere");
- a board that already holds three notes passes (3 -> 4 is the recorded +1), with exactly one note added;
- a board that answers "added" but whose list does not grow stops the run (before: passed).
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml

from cdp_recording import record, replay
from core.project import load_flow
from core.sites.server import Response, StaticSite

pytestmark = pytest.mark.browser

FIXTURE = Path(__file__).with_name("fixtures") / "outcomes"
PAUSE_S = 0.7  # a user's pace between actions


class Board:
    """The notes board's server: GET /notes/ (the page), GET /notes/api/notes, POST /notes/api/notes
    (``201``; ``422`` when :attr:`refuse`; ``200`` without adding when :attr:`drop`), POST /notes/api/find
    (``404``: no note has a number)."""

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.release = "v1"
        self.refuse = False
        self.drop = False
        self.site = StaticSite(FIXTURE)
        self.site.route("GET", "/notes/", self._page)
        self.site.route("GET", "/notes/api/notes", lambda req: Response.json(self.notes))
        self.site.route("POST", "/notes/api/notes", self._add)
        self.site.route("POST", "/notes/api/find", lambda req: Response.json({"message": "No such note"}, 404))

    def reset(self, notes: list[str] | None = None) -> None:
        self.notes, self.release, self.refuse, self.drop = list(notes or []), "v1", False, False

    def _page(self, req) -> Response:
        text = (FIXTURE / "notes.html").read_text()
        if self.release == "v2":
            text = text.replace("<h1>Team notes</h1>", "<h1>Notes board</h1>")
        return Response.text(text, 200, "text/html; charset=utf-8")

    def _add(self, req) -> Response:
        if self.refuse:
            return Response.json({"message": "The board is read-only"}, 422)
        if self.drop:
            return Response.json({"message": "Note added", "notes": self.notes})
        self.notes.append(str(req.json().get("text", "")))
        return Response.json({"message": "Note added", "notes": self.notes}, 201)


@pytest.fixture(scope="module")
def board():
    b = Board()
    b.site.start()
    yield b
    b.site.stop()


@pytest.fixture(scope="module")
def project(tmp_path_factory, board):
    """A project on /notes/ with two recorded flows: add a note; look up note 42 (answered 404)."""
    root = tmp_path_factory.mktemp("notes") / "app"
    (root / "flows").mkdir(parents=True)
    (root / "steadyhand.yaml").write_text(yaml.safe_dump({"name": "Notes", "base_url": board.site.base_url + "/notes/"}))

    def add(page):
        page.wait_for_load_state("load")
        time.sleep(PAUSE_S)
        page.get_by_label("New note").click()
        page.keyboard.type("Buy milk")
        time.sleep(1.2)
        page.get_by_role("button", name="Add note").click()
        page.get_by_text("Note added").wait_for()
        time.sleep(2.5)  # the recorder takes the after-state once the page is quiet (a loaded machine is slow)

    def find(page):
        page.wait_for_load_state("load")
        time.sleep(PAUSE_S)
        page.get_by_label("Note number").click()
        page.keyboard.type("42")
        time.sleep(1.2)
        page.get_by_role("button", name="Find note").click()
        page.get_by_text("No such note").wait_for()
        time.sleep(2.5)

    for name, drive in (("add_note", add), ("find_note", find)):
        board.reset()
        code, out, err = record(root, name, drive, "/")
        assert code == 0, out + err
    board.reset()
    return root


def _click(root: Path, flow: str):
    steps = load_flow(root / "flows" / f"{flow}.yaml").steps
    clicks = [s for s in steps if s.action.kind == "click"]
    assert clicks, (root / "flows" / f"{flow}.yaml").read_text()
    return clicks[-1]


def _run(root: Path, flow: str, tmp_path: Path):
    run = replay(root, flow, "--json", str(tmp_path / "run.json"))
    doc = json.loads((tmp_path / "run.json").read_text())
    (got,) = [f for f in doc["flows"] if f["flow"] == flow]
    return run, got


def test_the_recorder_stores_the_steps_own_status_and_the_list_it_grew(project) -> None:
    add = _click(project, "add_note")
    after = add.recorded.after if add.recorded is not None else None
    assert after is not None, (project / "flows" / "add_note.yaml").read_text()
    assert after.response_status == 201 and (after.list_kind, after.list_delta) == ("li", 1), after
    find = _click(project, "find_note").recorded.after
    assert find is not None and find.response_status == 404 and not find.list_kind, find
    typed = [s for s in load_flow(project / "flows" / "add_note.yaml").steps if s.action.kind == "input"]
    assert all(s.recorded.after is None or s.recorded.after.response_status in (0, None) for s in typed)


def test_a_write_refused_at_replay_that_was_accepted_when_recorded_stops_the_run(project, board, tmp_path) -> None:
    board.reset()
    board.refuse = True
    try:
        run, flow = _run(project, "add_note", tmp_path)
    finally:
        board.reset()
    assert run.returncode != 0 and not flow["passed"], run.stdout + run.stderr
    text = run.stdout + run.stderr + json.dumps(flow)
    assert "answered 422 to the step's request (POST /notes/api/notes) (recorded: 201)" in text, text
    assert board.notes == []


def test_a_404_that_was_a_404_when_recorded_passes_even_where_the_heading_changed(project, board, tmp_path) -> None:
    board.reset()
    board.release = "v2"
    try:
        run, flow = _run(project, "find_note", tmp_path)
    finally:
        board.reset()
    assert run.returncode == 0 and flow["passed"], run.stdout + run.stderr
    assert flow["steps_passed"] == flow["steps_total"]


def test_a_list_that_held_other_notes_grows_by_one_as_recorded(project, board, tmp_path) -> None:
    board.reset(["Call Ada", "Water plants", "Pay rent"])
    try:
        run, flow = _run(project, "add_note", tmp_path)
        notes = list(board.notes)
    finally:
        board.reset()
    assert run.returncode == 0 and flow["passed"], run.stdout + run.stderr
    assert notes == ["Call Ada", "Water plants", "Pay rent", "Buy milk"]  # one added, never twice


def test_an_add_whose_list_did_not_grow_stops_the_run(project, board, tmp_path) -> None:
    board.reset(["Call Ada"])
    board.drop = True
    try:
        run, flow = _run(project, "add_note", tmp_path)
    finally:
        board.reset()
    assert run.returncode != 0 and not flow["passed"], run.stdout + run.stderr
    text = run.stdout + run.stderr + json.dumps(flow)
    assert "the step added no list item where the recording added 1 list item" in text, text
