"""A run's records go through the store's writer thread (core.store.writer) without losing what the resume
machinery needs: when an action that may write is sent, the store file already holds every earlier step as it
ended, this step's checkpoint and its "under way" row; when the run returns, every record is committed.

FakeDriver page, a real SQLite store read through a second, independent connection.
"""
from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from core.domain import Action, ElementDescriptor, EngineSettings, Flow, Step, WaitSettings
from core.engine.executor import FlowExecutor
from core.perception.fake import FakeDriver, FakePage, navigate
from core.store import Store, store_path


def _rows(db: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    raw = sqlite3.connect(db)  # another connection: sees committed rows only
    try:
        return raw.execute(sql, args).fetchall()
    finally:
        raw.close()


class WatchingDriver(FakeDriver):
    """Reads the store file at the moment each action is sent."""

    def __init__(self, db: Path, **kw: Any) -> None:
        super().__init__(**kw)
        self.db = db
        self.seen: list[dict[str, Any]] = []

    def perform(self, action: Action, ref: str | None, value: str, *, locator: str | None = None) -> None:
        self.seen.append({
            "kind": action.kind,
            "steps": _rows(self.db, "SELECT step_index, status FROM steps ORDER BY step_index"),
            "checkpoints": [r[0] for r in _rows(self.db, "SELECT step_index FROM checkpoints ORDER BY step_index")],
            "acts": [r[0] for r in _rows(self.db, "SELECT step_index FROM step_acts ORDER BY step_index")],
        })
        super().perform(action, ref, value, locator=locator)


def test_an_action_that_may_write_is_sent_after_its_checkpoint_and_the_earlier_steps_are_committed(tmp_path) -> None:
    pages = {
        "/": FakePage([{"id": "user", "role": "textbox", "label": "User name"},
                       {"id": "note", "role": "textbox", "label": "Note"},
                       {"id": "go", "role": "button", "text": "Send"}], title="Form", text="Fill it"),
        "/done": FakePage([{"id": "back", "role": "button", "text": "Back"}], title="Done", text="Sent"),
    }
    store = Store.open(tmp_path)
    db = store_path(tmp_path)
    fake = WatchingDriver(db, pages=pages, reactions={("/", "go", "click"): navigate("/done")})
    steps = (
        Step(id="s1", action=Action("input", "alice"),
             target=ElementDescriptor(tag="input", role="textbox", name="User name", label="User name")),
        Step(id="s2", action=Action("input", "hello"),
             target=ElementDescriptor(tag="input", role="textbox", name="Note", label="Note")),
        Step(id="s3", action=Action("click"), reversible=False,
             target=ElementDescriptor(tag="button", role="button", name="Send", text="Send")),
    )
    ex = FlowExecutor(fake, emit=lambda e: None, store=store, screenshots=False, project_name="p",
                      settings=EngineSettings(waits=WaitSettings(retries=0, retry_delay_ms=0)))
    try:
        result = ex.run_flow(Flow("f", "/", steps), params={})
        assert result.status == "passed", result.error
        assert ex.store_errors == []
        click = fake.seen[-1]
        assert click["kind"] == "click"
        # the fills before it are committed as they ended, its checkpoint and "under way" row too
        assert click["steps"] == [(0, "passed"), (1, "passed")]
        assert click["checkpoints"] == [0, 1, 2]
        assert click["acts"] == [2]
        # the second fill acted after the first one's records were committed (the checkpoint barrier)
        assert fake.seen[1]["steps"] == [(0, "passed")]
        # when the run returns, every record is in the file: steps, verdicts, observations, checkpoints
        assert _rows(db, "SELECT step_index, status FROM steps ORDER BY step_index") == [
            (0, "passed"), (1, "passed"), (2, "passed")]
        assert [r[0] for r in _rows(db, "SELECT step_index FROM verdicts ORDER BY id")] == [0, 1, 2]
        assert len(_rows(db, "SELECT id FROM observations")) >= 3
        assert [r[0] for r in _rows(db, "SELECT step_state FROM checkpoints ORDER BY step_index")] == [
            "success"] * 3
        assert store.deferred == 0
    finally:
        store.close()
