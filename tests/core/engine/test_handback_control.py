"""`run --on-escalation wait` without a browser: the control files, the bounded wait, where a hand-back goes on."""
from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from core.domain import Escalation
from core.engine.control import Answer
from core.engine.handback import (
    HANDBACK_FILE, TAKEOVER_FILE, HandbackError, WaitControl, read_takeover, write_handback,
)
from core.engine.takeover import continue_target


def _control(tmp_path: Path, timeout_s: float = 10.0) -> tuple[WaitControl, list[str]]:
    lines: list[str] = []
    return WaitControl(tmp_path, cdp_endpoint="http://127.0.0.1:9333", project="projects/demo", timeout_s=timeout_s,
                       announce=lines.append), lines


def test_a_handback_written_by_the_command_ends_the_wait(tmp_path: Path) -> None:
    control, lines = _control(tmp_path)
    with pytest.raises(HandbackError, match="no run is waiting"):
        write_handback(tmp_path, "replace")

    def hand_back() -> None:
        deadline = time.monotonic() + 5
        while read_takeover(tmp_path) is None and time.monotonic() < deadline:
            time.sleep(0.02)
        waiting = read_takeover(tmp_path)
        assert waiting is not None and waiting["cdp"] == "http://127.0.0.1:9333" and waiting["step"] == 4
        with pytest.raises(HandbackError, match="run other is not waiting"):
            write_handback(tmp_path, "insert", run_id="other")
        write_handback(tmp_path, "insert", run_id="r1", continue_from=2)

    (tmp_path / HANDBACK_FILE).write_text('{"run_id": "r1", "meaning": "done"}')  # stale: from before this takeover
    t = threading.Thread(target=hand_back)
    t.start()
    answer = control.take_over("r1", "export_report", 3)
    t.join()
    assert answer == Answer("take_over", continue_from=1, meaning="insert")
    assert not (tmp_path / TAKEOVER_FILE).exists() and not (tmp_path / HANDBACK_FILE).exists()
    assert "step 4 is yours; CDP http://127.0.0.1:9333 (run r1)" in lines[0]
    assert "steadyhand handback projects/demo --as replace|insert|done" in lines[1]


def test_the_wait_is_bounded_and_says_why(tmp_path: Path) -> None:
    control, lines = _control(tmp_path, timeout_s=0.3)
    t0 = time.monotonic()
    answer = control.take_over("r1", "export_report", 3)
    assert time.monotonic() - t0 < 3
    assert answer.kind == "stop" and answer.reason == "no hand-back within 0 s"
    assert "no hand-back within 0 s" in lines[-1] and read_takeover(tmp_path) is None


def test_escalations_become_takeovers_only_where_offered(tmp_path: Path) -> None:
    control, _ = _control(tmp_path)
    esc = Escalation("r1", "f", 2, "Click Export", "locator abstained", (), (), "abstained",
                     ("retry", "skip", "stop", "take_over"))
    assert control.escalate(esc) == Answer("take_over")
    budget = Escalation("r1", "f", 2, "Click Export", "step budget spent", (), (), "budget", ("stop",))
    assert control.escalate(budget) == Answer("stop")
    with pytest.raises(ValueError, match="--as must be one of"):
        write_handback(tmp_path, "sometimes")


@pytest.mark.parametrize("meaning, continue_from, expected", [
    ("replace", None, 4), ("done", None, 4), ("insert", None, 3), (None, None, 3), ("replace", 1, 1),
])
def test_where_the_engine_goes_on(meaning: str | None, continue_from: int | None, expected: int) -> None:
    assert continue_target(meaning, 3, continue_from) == expected


def test_a_dead_run_and_a_step_out_of_range_are_refused(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    (tmp_path / TAKEOVER_FILE).write_text(json.dumps({"run_id": "r9", "flow": "f", "step": 4, "pid": gone.pid}))
    with pytest.raises(HandbackError, match="its process .* has ended"):
        write_handback(tmp_path, "done")
    assert not (tmp_path / HANDBACK_FILE).exists()
    import os

    (tmp_path / TAKEOVER_FILE).write_text(json.dumps({"run_id": "r9", "flow": "f", "step": 4, "pid": os.getpid()}))
    with pytest.raises(HandbackError, match="has 5 steps"):
        write_handback(tmp_path, "done", continue_from=99, flow_steps={"f": 5})
    write_handback(tmp_path, "done", continue_from=6, flow_steps={"f": 5})  # 6 = end the flow
    assert json.loads((tmp_path / HANDBACK_FILE).read_text())["continue_from"] == 6
