"""The store queries a flow run makes outside its steps (issue 20, the cost per flow outside its steps), on the
demo project's session and its real SQLite store, real Chromium.

Counted by SQLAlchemy's statement events on the store's engines, for one run of the demo's ``sort_table``.
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from core.engine.session import ProjectSession
from core.project import load_project

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def demo(tmp_path: Path) -> Any:
    dst = tmp_path / "demo"
    shutil.copytree(ROOT / "projects" / "demo", dst, ignore=shutil.ignore_patterns(".steadyhand"))
    return load_project(dst)


def _statements(store: Any) -> list[str]:
    """Every SQL statement the store runs from now on (its engine's: the writer's variant shares its events)."""
    seen: list[str] = []
    event.listen(store._engine, "before_cursor_execute",
                 lambda conn, cursor, statement, *rest: seen.append(" ".join(statement.split())))
    return seen


def test_a_run_without_a_takeover_never_reads_the_corrections(demo: Any) -> None:
    """Before, every run listed the flow's corrections to learn skills from, also without any takeover."""
    with ProjectSession(demo, headless=True) as session:
        seen = _statements(session.store)
        result = session.run_flow(demo.flows["sort_table"])
        assert result.status == "passed", result.error
        assert seen and any("INTO runs" in s for s in seen)  # the listener sees the run's own writes
        assert [s for s in seen if "FROM corrections" in s] == []


def test_the_runs_end_reads_its_step_rows_in_one_query(demo: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before, the run's end (``finish_run``) looked each step's row up on its own: one query per step."""
    flow = demo.flows["sort_table"]
    with ProjectSession(demo, headless=True) as session:
        store = session.store
        seen = _statements(store)
        inside: list[str] = []
        real = store.finish_run

        def finish_run(run_id: str, result: Any) -> None:
            start = len(seen)
            real(run_id, result)
            inside.extend(seen[start:])

        monkeypatch.setattr(store, "finish_run", finish_run)
        result = session.run_flow(flow)
        assert result.status == "passed", result.error
        assert len(result.steps) == len(flow.steps) > 1
        assert len([s for s in inside if s.startswith("SELECT") and "FROM steps" in s]) == 1, inside
        # every step's row is there once, as the run's end wrote it
        detail = store.run_detail(result.run_id)
        assert [(st.index, st.status) for st in detail.steps] == [(i, "passed") for i in range(len(flow.steps))]
