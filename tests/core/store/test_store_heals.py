"""The heal_proposals table through a real SQLite store: insert, count again, review, redaction, creation on open."""
from __future__ import annotations

from pathlib import Path

from typing import Any

import pytest
from sqlalchemy import inspect

from core.secrets import Redactor
from core.store import SCHEMA_VERSION, HealConflictError, HealTable, Store
from core.store.migrations import current_version

#: Made-up secret for the masking test (never a real credential).
FIXTURE_SECRET = "47" + "11" + "-kx"


def row(key: str = "k1", old_key: str = "o1", **kw: Any) -> dict[str, Any]:
    values = dict(key=key, old_key=old_key, project="T", flow="f", flow_file="flows/f.yaml", step_id="s1",
                  step_index=0, step_title="Export", kind="heal", status="pending",
                  old_target={"role": "button", "name": "Export report"},
                  new_target={"role": "button", "name": "Export report (E)", "bbox": [1.0, 2.0, 3.0, 4.0]},
                  strategy="fuzzy_text", score=0.95, margin=0.28,
                  top=[{"ref": "0:3", "score": 0.95, "label": "Export report (E)"}],
                  before_screenshot="screenshots/r1/0000_before_1.png", run_id="r1", last_run_id="r1",
                  flow_digest="d1")
    values.update(kw)
    return values


@pytest.fixture
def table(tmp_path):
    store = Store.open(tmp_path / "store.sqlite")
    yield HealTable(store)
    store.close()


def test_a_proposal_is_inserted_once_and_counted_each_time_it_is_seen_again(table) -> None:
    first, created = table.propose(row())
    assert created and (first.seen, first.reused, first.status) == (1, 0, "pending")
    again, created = table.propose(row(run_id="r2", last_run_id="r2", flow_digest="d2", score=0.5,
                                       before_screenshot="screenshots/r2/x.png"))
    assert not created and again.id == first.id
    assert (again.seen, again.last_run_id, again.flow_digest) == (2, "r2", "d2")
    assert (again.run_id, again.score, again.before_screenshot) == ("r1", 0.95, first.before_screenshot)
    assert again.new_target["bbox"] == [1.0, 2.0, 3.0, 4.0] and again.top[0]["ref"] == "0:3"
    assert [r.id for r in table.list()] == [first.id]


def test_a_reviewed_proposal_is_not_reopened_or_counted(table) -> None:
    rec, _ = table.propose(row())
    table.review(rec.id, "rejected", reason="wrong button")
    again, created = table.propose(row(run_id="r9"))
    assert not created and (again.status, again.seen, again.reason) == ("rejected", 1, "wrong button")
    assert table.pending_for("o1") == []


def test_a_review_happens_once(table) -> None:
    rec, _ = table.propose(row())
    done = table.review(rec.id, "accepted", diff="--- a\n+++ b\n")
    assert done.status == "accepted" and done.reviewed_at is not None and done.diff.startswith("--- a")
    with pytest.raises(HealConflictError, match="is accepted, not pending"):
        table.review(rec.id, "rejected")
    with pytest.raises(KeyError):
        table.review(999, "accepted")
    with pytest.raises(ValueError):
        table.review(rec.id, "applied")


def test_pending_heals_of_a_step_most_recently_seen_first_and_reuses_counted(table) -> None:
    a, _ = table.propose(row("ka"))
    b, _ = table.propose(row("kb", new_target={"role": "button", "name": "Export (X)"}))
    table.propose(row("kc", old_key="other"))
    table.propose(row("kd", kind="filled_in", status="applied"))
    table.propose(row("ka", run_id="r3"))  # seen again: now the most recent
    assert [p.id for p in table.pending_for("o1")] == [a.id, b.id]
    table.count_reuse(a.id, "r4", passed=True, flow_digest="d4")
    table.count_reuse(a.id, "r5", passed=False)
    got = table.get(a.id)
    assert (got.reused, got.reuse_failed, got.last_run_id, got.flow_digest) == (1, 1, "r5", "d4")
    table.refresh_digest([a.id, b.id], "d9")
    assert {table.get(i).flow_digest for i in (a.id, b.id)} == {"d9"}


def test_bad_kind_or_status_is_refused(table) -> None:
    with pytest.raises(ValueError):
        table.propose(row(status="maybe"))
    with pytest.raises(ValueError):
        table.propose(row(colour="red"))


def test_secrets_never_reach_the_table_in_clear(tmp_path) -> None:
    store = Store.open(tmp_path / "store.sqlite", redactor=Redactor([FIXTURE_SECRET]))
    t = HealTable(store)
    rec, _ = t.propose(row(new_target={"role": "textbox", "name": f"token {FIXTURE_SECRET}"},
                           resolution_reason=f"matched {FIXTURE_SECRET}", step_title=FIXTURE_SECRET))
    store.close()
    assert FIXTURE_SECRET not in rec.new_target["name"] and FIXTURE_SECRET not in rec.resolution_reason
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("store.sqlite*"))
    assert FIXTURE_SECRET.encode() not in raw


def test_an_existing_store_without_the_table_gains_it_on_open_at_the_same_schema_version(tmp_path) -> None:
    import shutil
    import sqlite3

    path = tmp_path / "store.sqlite"  # a store of schema 1 written before heal proposals (and Alembic) existed
    shutil.copy(Path(__file__).resolve().parents[2] / "fixtures" / "store" / "schema1_demo.sqlite", path)
    raw = sqlite3.connect(path)
    raw.execute("DROP TABLE heal_proposals")
    run_id = raw.execute("SELECT id FROM runs LIMIT 1").fetchone()[0]
    raw.commit()
    raw.close()
    store = Store.open(path)
    with store._engine.connect() as conn:
        assert inspect(conn).has_table("heal_proposals")
        assert current_version(conn) == SCHEMA_VERSION
    assert store.get_run(run_id) is not None
    rec, _ = HealTable(store).propose(row())
    store.close()
    ro = Store.open(path, read_only=True)
    assert HealTable(ro).get(rec.id).new_target["name"] == "Export report (E)"
    ro.close()
