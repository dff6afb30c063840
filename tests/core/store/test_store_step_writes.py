"""A step's writes on the store's writer thread (prebuilt Core statements, one savepoint each in a batch): a
replaced checkpoint or step keeps its row, a write the database refuses (a full database) is undone alone,
a batch whose transaction the database rolled back by itself stores nothing and says so for every write, and
the state graph stored in one batch is the graph kept in memory."""
from __future__ import annotations

import sqlite3
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from core.domain import Checkpoint, FieldValue, StepOutcome, Verdict
from core.state.graph import StateGraph, StateSeen, Transition, flow_graph_name, target_summary
from core.store import GraphTable, Store, store_path


def _busy(store: Store) -> threading.Event:
    """Keep the store's writer busy (until the returned event is set): what is deferred meanwhile is one batch."""
    busy, gate = threading.Event(), threading.Event()
    store.defer(lambda: (busy.set(), gate.wait(5.0)))
    assert busy.wait(5.0)
    return gate


def _raw(folder: Path, sql: str, *args: object) -> list[tuple]:
    raw = sqlite3.connect(store_path(folder))
    try:
        return raw.execute(sql, args).fetchall()
    finally:
        raw.close()


def _checkpoint(run_id: str, index: int, state: str = "pending") -> Checkpoint:
    return Checkpoint(run_id, "f", index, f"s{index}", f"http://127.0.0.1/p{index}", "abc", True, (),
                      fields=(FieldValue("#user", "User name", "alice"),), step_state=state)


def _outcome(i: int, status: str = "passed", error: str = "") -> StepOutcome:
    return StepOutcome(i, f"s{i}", f"step {i}", status, None, None, 1, 1.0, error)


@pytest.mark.parametrize("deferred", [False, True], ids=["own transaction", "batch"])
def test_a_replaced_checkpoint_and_step_keep_their_row_id_and_creation_time(tmp_path: Path, deferred: bool) -> None:
    with Store.open(tmp_path) as store:
        run_id = store.begin_run("p", "f")
        store.record_checkpoint(run_id, _checkpoint(run_id, 0))
        store.record_step(run_id, _outcome(0, "failed"))
        (first,) = _raw(tmp_path, "SELECT id, created_at FROM checkpoints")
        (step_id,) = _raw(tmp_path, "SELECT id FROM steps")
        done = replace(_checkpoint(run_id, 0, "success"), side_effects=("step 1 'Save' wrote data",),
                       reversible=False, fields=(FieldValue("#user", "User name", "bob"),))
        if deferred:
            gate = _busy(store)
            store.defer("record_checkpoint", run_id, done)
            store.defer("record_step", run_id, _outcome(0, "passed"))
            store.defer("record_checkpoint", run_id, _checkpoint(run_id, 1))
            gate.set()
            store.flush()
        else:
            store.record_checkpoint(run_id, done)
            store.record_step(run_id, _outcome(0, "passed"))
            store.record_checkpoint(run_id, _checkpoint(run_id, 1))
        rows = _raw(tmp_path, "SELECT id, created_at, step_index FROM checkpoints ORDER BY id")
        assert rows[0] == (*first, 0) and rows[1][2] == 1 and len(rows) == 2
        assert _raw(tmp_path, "SELECT id, status FROM steps") == [(step_id[0], "passed")]
        cp = store.checkpoints(run_id)[0]
        assert (cp["step_state"], cp["reversible"], cp["side_effects"]) == ("success", False,
                                                                             ["step 1 'Save' wrote data"])
        assert [f["value"] for f in cp["fields"]] == ["bob"]


def test_a_database_that_fills_up_in_a_batch_stores_none_of_it_and_says_so_for_every_write(tmp_path: Path) -> None:
    """SQLite cancels a whole transaction by itself on some errors ("database or disk is full" among them: "it
    might be necessary for SQLite to rollback and cancel the entire transaction").  The batch's writes before
    the one that failed are then lost, and those after it would begin transactions of their own: every write of
    the batch is reported, none is stored, and the store goes on once there is room again."""
    errors: list[tuple[str, str]] = []

    def noted(what: str):  # noqa: ANN202 - an on_error callback
        return lambda exc: errors.append((what, str(exc)))

    with Store.open(tmp_path) as store:
        run_id = store.begin_run("p", "f")
        pages = _raw(tmp_path, "PRAGMA page_count")[0][0]

        def limit(n: int) -> None:  # the batch's own connection may grow by n pages (a pragma is per connection)
            with store._write() as s:
                s.connection().exec_driver_sql(f"PRAGMA max_page_count = {n}")

        gate = _busy(store)
        store.defer(limit, pages + 8, on_error=noted("limit"))
        store.defer("record_step", run_id, _outcome(0), on_error=noted("step 0"))
        store.defer("record_step", run_id, _outcome(1, "failed", "x" * 2_000_000), on_error=noted("step 1"))
        store.defer("record_verdict", run_id, 0, Verdict("as_expected", "any", (), "ok"), on_error=noted("verdict"))
        store.defer("record_checkpoint", run_id, _checkpoint(run_id, 2), on_error=noted("checkpoint"))
        gate.set()
        store.flush()
        said = dict(errors)
        assert sorted(said) == ["checkpoint", "limit", "step 0", "step 1", "verdict"]
        assert "full" in said["step 1"] and all("rolled back" in said[w] for w in said)
    with Store.open(tmp_path) as store:  # new connections: no page limit
        detail = store.run_detail(run_id)
        assert detail.steps == () and detail.verdicts == () and store.checkpoints(run_id) == []
        store.defer("record_step", run_id, _outcome(2))
        store.defer("record_step", run_id, _outcome(3))
        store.flush()
        assert [s.index for s in store.run_detail(run_id).steps] == [2, 3]


def _seen(page: str, *, structure: str = "", dhash: str = "0000000000000000") -> StateSeen:
    return StateSeen(f"k-{page}-{dhash}", structure or f"st-{page}", dhash, f"http://127.0.0.1/{page}", page.title(),
                     f"screenshots/r/{page}.png")


def _transitions(run_id: str) -> list[Transition]:
    login, home, form = _seen("login"), _seen("home"), _seen("form")
    home_clock = _seen("home", structure="st-home", dhash="0000000000000001")  # a pixel off: the same state
    loop = _seen("dialog")

    def tr(a: StateSeen, b: StateSeen, label: str, step: str, verdict: str = "as_expected",
           start: bool = False) -> Transition:
        return Transition(a, b, "click", target_summary("button", label), step, verdict, run_id=run_id, start=start)

    return [tr(login, home, "Sign in", "s1", start=True), tr(home, form, "New", "s2"),
            tr(form, home_clock, "Cancel", "s3", "changed_unexpectedly"), tr(home_clock, loop, "Help", "s4", ""),
            tr(loop, loop, "Close", "s5", "unchanged"), tr(loop, home, "Back", "s6")]


def test_the_graph_stored_in_one_batch_is_the_graph_kept_in_memory(tmp_path: Path) -> None:
    name = flow_graph_name("leave")
    memory = StateGraph(name)
    changes = []
    with Store.open(tmp_path) as store:
        table = GraphTable(store)
        for run in ("r1", "r2"):
            gate = _busy(store)
            for t in _transitions(run):
                want = memory.add(t)  # the engine's graph in memory, as the step ends
                store.defer(lambda t=t, want=want: changes.append((table.add_transition(name, t), want)))
            gate.set()
            store.flush()
        stored = table.load_state_graph(name)
    assert len(changes) == 12
    for got, want in changes:
        assert (got.new_source, got.new_target, got.new_edge) == (want.new_source, want.new_target, want.new_edge)
        for a, b in ((got.source, want.source), (got.target, want.target)):
            assert (a.key, a.visits, a.runs, a.last_run_id, a.screenshot) == (b.key, b.visits, b.runs,
                                                                              b.last_run_id, b.screenshot)
        assert (got.edge.count, dict(got.edge.verdicts), got.edge.last_verdict) == (
            want.edge.count, dict(want.edge.verdicts), want.edge.last_verdict)
    assert {n.key: (n.visits, n.runs) for n in stored.nodes()} == {n.key: (n.visits, n.runs) for n in memory.nodes()}
    assert {(e.source, e.target, e.key): (e.count, dict(e.verdicts), e.last_verdict) for e in stored.edges()} == {
        (e.source, e.target, e.key): (e.count, dict(e.verdicts), e.last_verdict) for e in memory.edges()}
