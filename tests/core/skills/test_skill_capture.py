"""Failure capture at the executor (K2) on a FakeDriver with a real SQLite store: one record per failed step,
its shape, transient when a retry got past it, no typed value anywhere, and never a broken run."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.domain import Action, ElementDescriptor, EngineSettings, Flow, Step, WaitSettings
from core.engine.executor import FlowExecutor
from core.perception.fake import FakeDriver, change_text, navigate, nothing
from core.secrets import Redactor
from core.skills import capture
from core.store import Store
from core.store.skills import SkillTable

SECRET = "hunter2-very-secret"


class FlakyOnce:
    """A click that does nothing the first time, then shows its result (a server that failed once)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, d, el, value) -> None:  # noqa: ANN001
        self.calls += 1
        if self.calls > 1:
            change_text("Saved")(d, el, value)


def _run(tmp_path: Path, reaction, *, retries: int = 2):  # noqa: ANN001, ANN202
    fake = FakeDriver(
        pages={"/": [{"id": "pw", "role": "textbox", "label": "Password", "type": "password"},
                     {"id": "n1", "role": "button", "text": "Next"}],
               "/two": [{"id": "save", "role": "button", "text": "Save"}]},
        reactions={("/", "n1", "click"): navigate("/two"), ("/two", "save", "click"): reaction})
    fake.redactor = Redactor([SECRET])
    store = Store.open(tmp_path / "store.sqlite", redactor=Redactor([SECRET]))
    ex = FlowExecutor(fake, emit=lambda e: None, store=store, screenshots=False, project_name="P",
                      settings=EngineSettings(waits=WaitSettings(retries=retries, retry_delay_ms=0)))
    steps = (Step("s1", Action("input", "{password}"), target=ElementDescriptor(role="textbox", label="Password")),
             Step("s2", Action("click"), name="Go on", target=ElementDescriptor(role="button", name="Next", text="Next")),
             Step("s3", Action("click"), name="Save it", target=ElementDescriptor(role="button", name="Save",
                                                                                  text="Save"), expect="content"))
    result = ex.run_flow(Flow("f", "/", steps, secrets=("password",)), params={"password": SECRET})
    return result, store, ex


def test_a_step_that_keeps_failing_leaves_one_record_with_its_attempts_and_trajectory(tmp_path: Path) -> None:
    result, store, ex = _run(tmp_path, nothing())
    try:
        assert result.status == "escalated"
        (rec,) = SkillTable(store).failures(run_id=result.run_id)
        assert (rec.project, rec.flow, rec.step_index, rec.step_id) == ("P", "f", 2, "s3")
        assert rec.error_type == "verify_mismatch" and rec.outcome == "open" and rec.url.endswith("/two")
        assert [a["attempt"] for a in rec.page["attempts"]] == [1, 2, 3]
        assert rec.state and rec.state == rec.page["before"]["signature"]
        assert [(e["step_id"], e["action"], e["status"]) for e in rec.trajectory] == [
            ("s1", "input", "passed"), ("s2", "click", "passed"), ("s3", "click", "failed")]
        last = rec.trajectory[-1]
        assert last["intent"] == "Save it" and last["target"] == {"role": "button", "name": "Save", "text": "Save"}
        assert rec.trajectory[1]["state_after"] == rec.trajectory[2]["state_before"] != rec.trajectory[1]["state_before"]
        assert rec.page["before"]["candidates"] == [{"tag": "button", "role": "button", "name": "Save", "text": "Save"}]
        # the failed element as the flow recorded it: what a review boxes (not the locator's guess)
        assert rec.page["target"] == {"role": "button", "name": "Save", "text": "Save"}
        box = rec.page["target_box"]  # the step located its own target: where it was, viewport CSS px
        assert len(box["bbox"]) == 4 and box["bbox"][2] > 0 and box["device_pixel_ratio"] > 0
        assert rec.page["before"]["loading"] == []
        assert rec.page["signals"] == {"console": [], "exceptions": [], "http": []}  # a fake page has no log
        blob = json.dumps([rec.trajectory, rec.page, rec.message])
        assert SECRET not in blob and "{password}" in blob  # the value template, never the typed value
        assert not ex.store_errors
    finally:
        store.close()


def test_a_failure_a_retry_got_past_is_transient(tmp_path: Path) -> None:
    result, store, _ex = _run(tmp_path, FlakyOnce())
    try:
        assert result.status == "passed"
        (rec,) = SkillTable(store).failures(run_id=result.run_id)
        assert rec.outcome == "transient" and len(rec.page["attempts"]) == 1
    finally:
        store.close()


def test_capture_never_breaks_a_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(self, values):  # noqa: ANN001, ANN202
        raise RuntimeError("disk full")

    monkeypatch.setattr(SkillTable, "add_failure", boom)
    result, store, ex = _run(tmp_path, nothing())
    try:
        assert result.status == "escalated" and result.steps[-1].attempts == 3
        assert any("failure capture of step 3 failed: RuntimeError: disk full" in e for e in ex.store_errors)
    finally:
        store.close()


def test_without_a_store_nothing_is_captured_and_kinds_that_say_nothing_of_the_page_are_left_out() -> None:
    class Ex:
        store = None

    assert capture.capture_failure(Ex(), object(), RuntimeError("x")) == 0

    class F(Exception):
        failure = type("Failure", (), {"kind": "breaker_open"})()

    assert capture.error_type_of(F()) == "" and capture.error_type_of(RuntimeError()) == ""
