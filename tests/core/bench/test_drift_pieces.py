"""Pure pieces of the datasette drift benchmark: the books database, page states, the judgement of a step,
the run-up of a step replayed alone, and the fit of the recorded flow to the intended actions."""
from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from core.bench.drift import DriftSetupError, StepReport, check_flow_fits, judge_step
from core.bench.drift_env import ROWS, book_rows, make_books_db
from core.bench.drift_truth import (
    INTENDED, SEARCH_WORD, PageState, TruthStep, diff_states, prep_start, state_of,
)
from core.project import load_flow

ROOT = Path(__file__).resolve().parents[3]
FLOW = ROOT / "projects" / "datasette" / "flows" / "books_tour.yaml"


def test_book_rows_are_deterministic_and_varied():
    a, b = book_rows(), book_rows()
    assert a == b and len(a) == ROWS
    assert book_rows(seed=10) != a
    assert len({r[3] for r in a}) == 8 and all(1850 <= r[2] <= 2023 and 90 <= r[4] <= 900 for r in a)


def test_books_db_has_the_table_and_a_full_text_index_datasette_detects(tmp_path):
    db = make_books_db(tmp_path / "library.db")
    con = sqlite3.connect(db)
    try:
        assert con.execute("SELECT count(*) FROM books").fetchone()[0] == ROWS
        hits = con.execute("SELECT count(*) FROM books_fts WHERE books_fts MATCH ?", (SEARCH_WORD,)).fetchone()[0]
        by_like = con.execute("SELECT count(*) FROM books WHERE title LIKE ? OR author LIKE ?",
                              (f"%{SEARCH_WORD}%", f"%{SEARCH_WORD}%")).fetchone()[0]
        assert hits == by_like > 0
        # datasette's detect_fts looks for an FTS virtual table whose content is the table (content=[books])
        found = con.execute("SELECT name FROM sqlite_master WHERE type='table' AND sql LIKE "
                            "'%VIRTUAL TABLE%USING FTS%content=[books]%'").fetchall()
        assert found == [("books_fts",)]
    finally:
        con.close()
    make_books_db(db)  # a second run replaces the file instead of appending rows
    con = sqlite3.connect(db)
    try:
        assert con.execute("SELECT count(*) FROM books").fetchone()[0] == ROWS
    finally:
        con.close()


def test_state_of_ignores_parameter_order_and_keeps_the_fragment():
    a = state_of("http://127.0.0.1:1/library/books?_sort=year&_facet=genre#facet-genre", " books \n", "")
    b = state_of("http://127.0.0.1:2/library/books?_facet=genre&_sort=year", "books", "")
    assert a.query == b.query == (("_facet", "genre"), ("_sort", "year"))
    assert a.heading == "books" and a.fragment == "facet-genre" and diff_states(a, b) == []
    assert a.relative_url == "/library/books?_facet=genre&_sort=year#facet-genre"


def test_diff_states_names_each_difference():
    want = state_of("/library/books?_sort=year", "books", "")
    assert diff_states(want, state_of("/library/books?_sort_desc=year", "books", "")) == [
        "query missing [('_sort', 'year')] extra [('_sort_desc', 'year')]"]
    got = diff_states(want, state_of("/library/books/3", "books: 3", None))
    assert len(got) == 4 and got[0].startswith("path")


def _truth(*urls: str) -> list[TruthStep]:
    states = [state_of(u, "h", "") for u in urls]
    return [TruthStep(a, b, "") for a, b in zip(states, states[1:], strict=False)]


def test_prep_start_replays_the_url_keeping_steps_before_a_step_alone():
    # step 0 navigates, step 1 types (URL unchanged), step 2 submits from the same URL
    truth = _truth("/a", "/b", "/b", "/c")
    assert [prep_start(truth, k) for k in range(3)] == [0, 1, 1]
    truth = _truth("/a", "/b", "/c")
    assert [prep_start(truth, k) for k in range(2)] == [0, 1]


def test_judge_step_counts_a_wrong_click_when_any_acted_attempt_lands_elsewhere():
    intended = state_of("/library/books?_sort=year", "books", "")
    wrong = state_of("/library/books?_sort=genre", "books", "")
    truth = TruthStep(state_of("/library/books", "books", ""), intended, "<a>year</a>")
    r = judge_step(StepReport(2, "s3", "Click year", status="passed"), truth, [intended])
    assert not r.wrong and r.acted == 1 and r.reached == intended.to_json_dict()
    r = judge_step(StepReport(2, "s3", "Click year", status="passed"), truth, [wrong, intended])
    assert r.wrong and r.acted == 2 and "_sort" in r.diff[0]  # a retry that lands right does not undo a wrong click
    r = judge_step(StepReport(2, "s3", "Click year", status="escalated"), truth, [])
    assert not r.wrong and r.acted == 0 and r.reached is None  # abstaining is never a wrong click


def test_the_committed_flow_was_recorded_as_one_step_per_intended_action():
    flow = load_flow(FLOW)
    check_flow_fits(flow.steps)
    assert all(not s.target.is_empty and s.target.role for s in flow.steps)
    crops = [s.target.crop for s in flow.steps if s.target.crop]
    assert crops and all((FLOW.parent / c).is_file() for c in crops)  # the recorder's crops are committed
    assert [s.action.kind for s in flow.steps] == [a.kind for a in INTENDED]
    with pytest.raises(DriftSetupError, match="steps"):
        check_flow_fits(flow.steps[:-1])
    swapped = list(flow.steps)
    swapped[0] = replace(swapped[0], action=replace(swapped[0].action, kind="input"))
    with pytest.raises(DriftSetupError, match="s1"):
        check_flow_fits(swapped)


def test_page_state_round_trips_to_json():
    s = PageState("/x", (("a", "1"),), "X", None)
    assert s.to_json_dict() == {"path": "/x", "query": [["a", "1"]], "heading": "X", "search": None, "fragment": ""}


def test_bench_drift_refuses_a_project_without_the_recorded_flow(tmp_path, capsys):
    from core.cli import EXIT_INPUT, main
    from core.project.init import init_project

    init_project(tmp_path / "p", url="http://127.0.0.1:8001")
    assert main(["bench", "drift", "--project", str(tmp_path / "p")]) == EXIT_INPUT
    assert "no flow 'books_tour'" in capsys.readouterr().err
    assert main(["bench", "drift", "--project", str(tmp_path / "missing")]) == EXIT_INPUT
