"""The run report: exit codes from error kinds, the summary table and the JSON summary (pure, no browser)."""
from __future__ import annotations

import json
from typing import Any, get_args

import pytest

from core.domain import ErrorKind, RunResult, StepOutcome
from core.engine.report import (
    EXIT_ENVIRONMENT, EXIT_ESCALATED, EXIT_FAILED, EXIT_INPUT, EXIT_OK, KIND_EXIT, FlowStats, exit_code,
    result_label, results_line, run_exit_code, summary_json, summary_text, table,
)

STATUS_OF = {"": "passed", "assertion": "failed", "escalated": "escalated", "budget": "escalated",
             "stopped": "stopped"}


def result(flow: str = "f", kind: str = "", *, status: str = "", reward: float | None = None, steps: int = 2,
           error: str = "", heals_by: dict[str, int] | None = None, seconds: float = 1.25) -> RunResult:
    outcomes = tuple(StepOutcome(i, f"s{i}", f"step {i}", "passed", None, None, 1, 10.0) for i in range(steps))
    return RunResult(run_id="r", flow=flow, status=status or STATUS_OF.get(kind, "error"), steps=outcomes,
                     heals=sum((heals_by or {}).values()), invalid_actions=1 if kind else 0, seconds=seconds,
                     error=error or (f"{kind} happened" if kind else ""), reward=reward,
                     heals_by_strategy=dict(heals_by or {}), error_kind=kind)  # type: ignore[arg-type]


def stats_of(*runs: RunResult, task: str = "", ground_truth: dict[str, Any] | None = None) -> FlowStats:
    s = FlowStats(runs[0].flow, task=task, ground_truth=dict(ground_truth or {}))
    for r in runs:
        s.add(r)
    return s


# --- exit codes --------------------------------------------------------------------------------


def test_every_error_kind_has_an_exit_code() -> None:
    assert set(KIND_EXIT) == set(get_args(ErrorKind)) - {""}


@pytest.mark.parametrize("kind, code", [
    ("", EXIT_OK), ("assertion", EXIT_FAILED), ("navigation", EXIT_FAILED), ("stopped", EXIT_FAILED),
    ("internal", EXIT_FAILED), ("escalated", EXIT_ESCALATED), ("budget", EXIT_ESCALATED),
    ("parameter", EXIT_INPUT), ("unreachable", EXIT_ENVIRONMENT), ("browser", EXIT_ENVIRONMENT),
])
def test_exit_code_of_one_run_comes_from_its_kind(kind: str, code: int) -> None:
    assert run_exit_code(result(kind=kind)) == code
    assert exit_code([result(kind=kind)]) == code


def test_the_message_does_not_decide_the_code() -> None:
    assert exit_code([result(kind="assertion", error="cannot load http://x/: HTTP 500")]) == EXIT_FAILED
    assert exit_code([result(kind="unreachable", error="whatever")]) == EXIT_ENVIRONMENT


@pytest.mark.parametrize("kinds, code", [
    (("", ""), EXIT_OK),
    (("", "escalated"), EXIT_ESCALATED),
    (("escalated", "assertion"), EXIT_FAILED),  # escalated only when none failed
    (("assertion", "escalated", "budget"), EXIT_FAILED),
    (("stopped", "escalated"), EXIT_FAILED),
    (("assertion", "parameter"), EXIT_INPUT),
    (("parameter", "unreachable", "assertion"), EXIT_ENVIRONMENT),
    (("escalated", "browser"), EXIT_ENVIRONMENT),
])
def test_the_most_severe_run_decides_a_mix(kinds: tuple[str, ...], code: int) -> None:
    runs = [result(f"f{i}", k) for i, k in enumerate(kinds)]
    assert exit_code(runs) == code
    assert exit_code(reversed(runs)) == code


def test_no_runs_is_ok() -> None:
    assert exit_code([]) == EXIT_OK


def test_an_episode_the_engine_passed_but_the_reward_denies_failed() -> None:
    assert run_exit_code(result(reward=1.0)) == EXIT_OK
    assert run_exit_code(result(reward=0.0)) == EXIT_FAILED
    assert exit_code([result(reward=-1.0), result(kind="escalated")]) == EXIT_FAILED


def test_a_run_without_kind_falls_back_on_its_status() -> None:
    assert run_exit_code(result(status="escalated")) == EXIT_ESCALATED
    assert run_exit_code(result(status="error")) == EXIT_FAILED


# --- labels ------------------------------------------------------------------------------------


def test_labels_add_the_kind_only_when_it_says_more_than_the_status() -> None:
    assert result_label(result()) == "passed"
    assert result_label(result(kind="escalated")) == "escalated"
    assert result_label(result(kind="stopped")) == "stopped"
    assert result_label(result(kind="assertion")) == "failed (assertion)"
    assert result_label(result(kind="unreachable")) == "error (unreachable)"
    assert results_line([result("login", "escalated"), result("export")]) == "login escalated, export passed"
    assert results_line([]) == ""


# --- per-flow statistics -----------------------------------------------------------------------


def test_flow_stats_sum_runs_and_pick_the_result() -> None:
    s = stats_of(result(heals_by={"semantic": 1}), result(kind="escalated", heals_by={"semantic": 2, "exact": 1}))
    assert (s.episodes, s.passed_runs, s.steps, s.heals, s.invalid) == (2, 1, 4, 4, 1)
    assert s.seconds == pytest.approx(2.5) and s.heals_by == {"semantic": 3, "exact": 1}
    assert not s.passed and s.result == "escalated"
    assert s.statuses == ["passed", "escalated"] and s.kinds == ["", "escalated"]
    assert s.errors == ["escalated happened"]
    assert s.exit_code == EXIT_ESCALATED and s.error_kind == "escalated"


def test_flow_result_prefers_error_then_failed_then_escalated_then_stopped() -> None:
    assert stats_of(result(kind="stopped"), result(kind="escalated"), result(kind="assertion"),
                    result(kind="internal")).result == "error"
    assert stats_of(result(kind="stopped"), result(kind="escalated")).result == "escalated"
    assert stats_of(result(reward=0.0)).result == "failed"
    assert stats_of(result()).result == "passed"


def test_flow_error_kind_is_the_most_severe_runs_kind() -> None:
    s = stats_of(result(kind="escalated"), result(kind="assertion"), result(kind="unreachable"),
                 result(kind="browser"))
    assert s.exit_code == EXIT_ENVIRONMENT and s.error_kind == "unreachable"
    assert stats_of(result(reward=-1.0), result(kind="escalated")).error_kind == ""  # the reward failed it
    assert stats_of(result(reward=-1.0), result(kind="stopped")).error_kind == "stopped"
    assert stats_of(result(), result()).error_kind == ""


def test_wrong_clicks_count_episodes_passed_against_the_reward() -> None:
    s = stats_of(result(reward=1.0), result(reward=-1.0), result(kind="escalated", reward=-1.0), task="click")
    assert s.wrong_clicks == 1 and s.passed_runs == 1 and s.rewards == [1.0, -1.0, -1.0]


# --- text and JSON -----------------------------------------------------------------------------


def test_table_aligns_columns_under_a_dashed_rule() -> None:
    assert table([["a", 1], ["bbb", 22]], ["x", "y"]).splitlines() == ["x    y ", "---  --", "a    1 ", "bbb  22"]


def test_summary_text_has_a_row_per_flow_and_the_errors() -> None:
    stats = [stats_of(result("login")), stats_of(result("export", "assertion", error="text 'Saved' does not appear"),
                                                 result("export", "assertion", error="text 'Saved' does not appear"))]
    lines = summary_text(stats).splitlines()
    assert lines[0].split() == ["flow", "result", "steps", "heals", "invalid", "actions", "seconds"]
    assert lines[2].split() == ["login", "passed", "2/2", "0", "0", "1.2"]
    assert lines[3].split() == ["export", "failed", "(0/2)", "4/4", "0", "2", "2.5"]
    assert lines[4:] == ["  export: text 'Saved' does not appear"]


def test_summary_text_shows_ground_truth_and_tasks() -> None:
    gt = {"activations": 3, "writes": 1, "duplicate_writes": 0}
    stats = [stats_of(result("login"), ground_truth=gt),
             stats_of(result("click-test", reward=1.0, heals_by={"semantic": 1}),
                      result("click-test", reward=-1.0), task="click-test")]
    text = summary_text(stats)
    server_log = "server log (ground truth, read after each flow):\n  login: 3 activations, 1 writes, 0 duplicate writes"
    assert f"\n\n{server_log}" in text
    task_lines = text.split("\n\n")[-1].splitlines()
    assert task_lines[0].split()[:2] == ["task", "episodes"]
    assert task_lines[2].split() == ["click-test", "2", "50%", "+0.00", "semantic:1", "1"]
    assert not text.endswith("\n")


def test_summary_json_keys_and_error_kind_per_flow() -> None:
    stats = [stats_of(result("login")), stats_of(result("export", "unreachable")),
             stats_of(result("click-test", reward=1.0, seconds=0.12345), task="click-test")]
    doc = summary_json(stats)
    assert json.loads(json.dumps(doc)) == doc
    assert doc["passed"] is False
    assert doc["flows"][0] == {"flow": "login", "passed": True, "error_kind": "", "steps": 2, "heals": 0,
                               "invalid_actions": 0, "seconds": 1.25, "steps_passed": 2, "steps_total": 2,
                               "heals_by_strategy": {}, "abstentions": 0, "by_hand": 0, "result": "passed",
                               "stop": None}
    assert doc["flows"][1]["error_kind"] == "unreachable" and doc["flows"][1]["passed"] is False
    assert doc["flows"][1]["result"] == "error"
    from dataclasses import replace
    helped = summary_json([stats_of(replace(result("login"), by_hand=2))])["flows"][0]
    assert (helped["passed"], helped["result"], helped["by_hand"]) == (True, "passed with help", 2)
    assert doc["flows"][2]["seconds"] == 0.123
    assert doc["tasks"] == [{"task": "click-test", "episodes": 1, "success_rate": 1.0, "mean_raw_reward": 1.0,
                             "heals_by_strategy": {}, "wrong_clicks": 0}]
    assert "tasks" not in summary_json(stats[:2])
    assert summary_json([stats_of(result("a")), stats_of(result("b"))])["passed"] is True


def stopped_run(flow: str, *, stop_kind: str, kind: str = "escalated", at: int = 1, total: int = 4,
                heals_by: dict[str, int] | None = None, abstentions: int = 0) -> RunResult:
    """A run whose steps before ``at`` passed and which stopped at step ``at``."""
    outcomes = tuple(StepOutcome(i, f"s{i + 1}", f"step {i + 1}", "passed" if i < at else "escalated", None, None,
                                 1, 10.0, error="" if i < at else "why") for i in range(at + 1))
    return RunResult(run_id="r", flow=flow, status=STATUS_OF.get(kind, "error"), steps=outcomes,
                     heals=sum((heals_by or {}).values()), invalid_actions=0, seconds=1.0,
                     error=f"{stop_kind}: it stopped", heals_by_strategy=dict(heals_by or {}),
                     error_kind=kind, total_steps=total, abstentions=abstentions,  # type: ignore[arg-type]
                     stop_kind=stop_kind, stopped_at=at)


def test_the_steps_column_says_passed_over_total() -> None:
    s = stats_of(stopped_run("save", stop_kind="breaker_open", at=1, total=4))
    row = summary_text([s]).splitlines()[2].split()
    assert row[:3] == ["save", "escalated", "1/4"]
    assert (s.steps, s.steps_passed, s.steps_total) == (2, 1, 4)


def test_summary_json_says_where_and_why_a_flow_stopped_with_heals_by_strategy_and_abstentions() -> None:
    s = stats_of(stopped_run("save", stop_kind="stagnation", at=2, total=3, heals_by={"fuzzy_text": 2},
                             abstentions=1))
    (flow,) = summary_json([s])["flows"]
    assert flow["stop"] == {"kind": "stagnation", "reason": "stagnation: it stopped",
                            "step": {"index": 2, "id": "s3", "title": "step 3"}}
    assert (flow["steps_passed"], flow["steps_total"], flow["steps"]) == (2, 3, 3)
    assert flow["heals_by_strategy"] == {"fuzzy_text": 2} and flow["heals"] == 2
    assert flow["abstentions"] == 1
    assert flow["error_kind"] == "escalated" and flow["passed"] is False


def test_the_stop_of_several_runs_is_that_of_the_most_severe() -> None:
    s = stats_of(result("f"), stopped_run("f", stop_kind="loop", at=0), stopped_run("f", stop_kind="assertion",
                                                                                    kind="assertion", at=1))
    assert s.stop is not None and (s.stop.kind, s.stop.index) == ("assertion", 1)  # failed outranks escalated
    assert [st.kind for st in s.stops] == ["loop", "assertion"]
    assert stats_of(result("f")).stop is None


def test_an_episode_the_reward_denied_stops_with_kind_reward() -> None:
    s = stats_of(result("click", reward=-1.0))
    assert s.stop is not None and s.stop.kind == "reward" and s.stop.reason == "the reward was -1.00"


def test_a_goal_step_with_several_actions_counts_as_one_step() -> None:
    outcomes = tuple(StepOutcome(0, f"g1#{k}", "toward the goal", "passed", None, None, 1, 10.0) for k in range(4))
    r = RunResult(run_id="r", flow="goal", status="passed", steps=outcomes, heals=0, invalid_actions=0,
                  seconds=1.0, total_steps=1)
    s = stats_of(r)
    assert (s.steps_passed, s.steps_total, s.steps) == (1, 1, 4)
    assert "1/1" in summary_text([s]) and "4/1" not in summary_text([s])
