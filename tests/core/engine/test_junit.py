"""JUnit XML of run results: one case per flow run, the right element per outcome, always well formed."""
from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from core.domain import RunResult, StepOutcome
from core.engine.junit import junit_xml, write_junit


def outcome(i: int, status: str = "passed", error: str = "") -> StepOutcome:
    return StepOutcome(index=i, step_id=f"s{i + 1}", title=f"click <Save> & \"go\" {i}", status=status,
                       resolution=None, verdict=None, attempts=1, ms=12.0, error=error)


def result(flow: str, status: str, *, kind: str = "", error: str = "", stopped_at: int | None = None,
           reward: float | None = None) -> RunResult:
    steps = (outcome(0),) + ((outcome(1, status, error),) if stopped_at == 1 else ())
    return RunResult(run_id=f"r-{flow}", flow=flow, status=status, steps=steps, heals=0, invalid_actions=0,
                     seconds=1.5, error=error, reward=reward, error_kind=kind, total_steps=3,
                     stop_kind=kind, stopped_at=stopped_at)


def cases(xml: str) -> dict[str, ET.Element]:
    suite = ET.fromstring(xml).find("testsuite")
    return {c.get("name"): c for c in suite.findall("testcase")}


def test_each_outcome_gets_the_element_ci_systems_expect() -> None:
    xml = junit_xml([
        result("ok", "passed"),
        result("assert", "failed", kind="assertion", error="expected 'Saved' in the banner", stopped_at=1),
        result("crash", "error", kind="browser", error="Chromium crashed", stopped_at=1),
        result("user", "stopped", kind="stopped", stopped_at=1),
    ], suite="Demo")
    got = cases(xml)
    assert list(got) == ["ok", "assert", "crash", "user"]
    assert [child.tag for child in got["ok"]] == ["system-out"]
    failure = got["assert"].find("failure")
    assert failure.get("type") == "assertion"
    assert failure.get("message") == ('failed at step 2 (s2 "click <Save> & "go" 1"): '
                                      "expected 'Saved' in the banner")
    assert got["crash"].find("error").get("message").endswith("Chromium crashed")
    assert got["user"].find("skipped") is not None
    suite = ET.fromstring(xml).find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("4", "1", "1", "1")


def test_episodes_are_distinct_cases_and_a_denied_reward_fails() -> None:
    xml = junit_xml([result("click", "passed", reward=1.0), result("click", "passed", reward=-1.0)],
                    suite="MiniWoB", seeds=[1000, 1001])
    got = cases(xml)
    assert set(got) == {"click#1000", "click#1001"}
    assert got["click#1000"].find("failure") is None
    assert "reward was -1.00" in got["click#1001"].find("failure").get("message")


def test_seeds_must_match_the_results() -> None:
    with pytest.raises(ValueError, match="seeds: expected 1 values, got 2"):
        junit_xml([result("a", "passed")], suite="x", seeds=[1, 2])


def test_written_atomically(tmp_path) -> None:
    path = write_junit(tmp_path / "out" / "junit.xml", [result("a", "passed")], suite="x")
    assert ET.parse(path).getroot().tag == "testsuites"
    assert [p.name for p in path.parent.iterdir()] == ["junit.xml"]


def test_flows_not_run_are_error_cases_and_the_suite_has_timestamp_and_hostname() -> None:
    from datetime import datetime, timezone

    first = result("a", "error", kind="unreachable", error="cannot load http://127.0.0.1:9/", stopped_at=1)
    xml = junit_xml([first], suite="Demo", not_run=[("b", "unreachable", "cannot load http://127.0.0.1:9/")],
                    timestamp=datetime(2026, 1, 2, 3, 4, 5, 600, tzinfo=timezone.utc), hostname="ci-7")
    suite = ET.fromstring(xml).find("testsuite")
    assert (suite.get("tests"), suite.get("errors"), suite.get("timestamp"), suite.get("hostname")) == (
        "2", "2", "2026-01-02T03:04:05", "ci-7")
    b = cases(xml)["b"].find("error")
    assert b.get("type") == "unreachable" and b.get("message") == "not run: cannot load http://127.0.0.1:9/"


def test_a_pass_with_heals_is_marked_and_screenshots_are_attachments(tmp_path) -> None:
    from core.domain import Resolution

    healed = StepOutcome(index=0, step_id="s1", title="t", status="passed", attempts=1, ms=3.0, verdict=None,
                         resolution=Resolution(strategy="semantic", ref="e1", score=0.8, margin=0.3, ms=1.0))
    run = RunResult(run_id="r-1", flow="f", status="passed", steps=(healed,), heals=1, invalid_actions=0,
                    seconds=1.0, total_steps=1)
    shot = tmp_path / "s1-after.png"
    xml = junit_xml([run], suite="Demo", screenshots={"r-1": [shot]})
    case = cases(xml)["f"]
    props = {p.get("name"): p.get("value") for p in case.find("properties")}
    assert props == {"steadyhand.heals": "1", "steadyhand.healed_steps": "s1 semantic"}
    out = case.find("system-out").text
    assert out.startswith("passed with 1 heal: s1 semantic\n") and f"[[ATTACHMENT|{shot}]]" in out
    plain = cases(junit_xml([result("g", "passed")], suite="Demo"))["g"]
    assert plain.find("properties") is None and "heal" not in plain.find("system-out").text
