"""A step replaced by hand keeps what of it still applies (tester's report, item 1: lost data).

Variant ``inline-edit``: the Reason field is shown as text until its label is
double-clicked, so ``leave_request`` step 10 "Type the reason" opens the
breaker.  A script connected over CDP takes the step over (double-click
"Reason", type the reason), hands back as ``replace`` and the correction is
accepted with ``steadyhand corrections accept``: the flow file keeps step
10's check (Submit enabled) and its selector ``#reason`` on the step that
types into that field, and the edited flow replays green with no human.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from takeover_project import cli as _cli
from takeover_project import inline_edit_demo, take_over_the_reason

pytestmark = pytest.mark.browser


def test_replacing_a_step_by_hand_keeps_its_check_and_selector(tmp_path: Path) -> None:
    project = inline_edit_demo(tmp_path / "demo")
    run, log = take_over_the_reason(project)
    assert run.returncode == 0, log
    shown = _cli("corrections", "show", str(project), "1")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("--- a/"), shown.stdout  # nothing of the old step is dropped: no line above
    assert "-  assertions:" not in shown.stdout and "-  selector: '#reason'" not in shown.stdout
    accepted = _cli("corrections", "accept", str(project), "1")
    assert accepted.returncode == 0, accepted.stderr
    steps = yaml.safe_load((project / "flows" / "leave_request.yaml").read_text(encoding="utf-8"))["steps"]
    assert [s["id"] for s in steps][9:] == ["s10_h1", "s10_h2", "s11"]
    dbl, typed = steps[9], steps[10]
    assert dbl["action"] == "dblclick" and "assertions" not in dbl and "selector" not in dbl
    assert typed["action"] == "input" and typed["value"] == "{reason}"
    assert typed["selector"] == "#reason"
    assert typed["assertions"] == [{"kind": "enabled", "selector": "role=button[name='Submit']"}]
    assert typed["target"]["exact"] is False
    again = _cli("run", str(project), "--flow", "leave_request", "--headless", "--no-store")
    assert again.returncode == 0, again.stdout + again.stderr


def test_a_run_a_person_finished_is_passed_with_help_where_it_is_listed(tmp_path: Path) -> None:
    """Tester's report, item 2: a run finished by hand was listed as plain "passed" (run line, history list)."""
    project = inline_edit_demo(tmp_path / "demo")
    report = tmp_path / "run.json"
    run, log = take_over_the_reason(project, "--json", str(report))
    assert run.returncode == 0, log  # it did pass: CI exit codes are unchanged
    assert "leave_request: passed with help (by hand: 1)" in log, log
    (flow,) = yaml.safe_load(report.read_text(encoding="utf-8"))["flows"]  # run --json says it as the run line does
    assert flow["passed"] is True and flow["result"] == "passed with help" and flow["by_hand"] == 1, flow
    listed = _cli("history", "list", str(project))
    assert listed.returncode == 0, listed.stderr
    (line,) = [ln for ln in listed.stdout.splitlines() if "leave_request" in ln]
    assert "passed with help" in line and "by hand: 1" in line, line
    as_json = _cli("history", "list", str(project), "--json", "-")
    assert as_json.returncode == 0, as_json.stderr
    (entry,) = yaml.safe_load(as_json.stdout)
    assert entry["status"] == "passed with help" and entry["by_hand"] == 1, entry


def test_every_list_counts_steps_passed_of_the_steps_in_the_flow(tmp_path: Path) -> None:
    """Tester's report, item 4: history list counted against the steps run ("escalated 9/10 steps" for an
    11-step flow) while the run's line said "11 steps" (run) and the summary "10/11" (passed / in the flow)."""
    project = inline_edit_demo(tmp_path / "demo")
    stopped = _cli("run", str(project), "--flow", "leave_request", "--headless")
    assert stopped.returncode == 3, stopped.stdout + stopped.stderr  # escalated at step 10 (nobody to take over)
    assert "(9/11 steps passed, " in stopped.stderr, stopped.stderr
    helped, log = take_over_the_reason(project)
    assert helped.returncode == 0, log
    assert "(10/11 steps passed, " in log, log
    listed = _cli("history", "list", str(project), "--json", "-")
    assert listed.returncode == 0, listed.stderr
    lines = [ln for ln in listed.stderr.splitlines() if "leave_request" in ln]
    assert len(lines) == 2 and "10/11 steps passed" in lines[0] and "9/11 steps passed" in lines[1], lines
    newest, oldest = yaml.safe_load(listed.stdout)
    assert (newest["passed"], newest["steps_total"], newest["steps"]) == (10, 11, 11)
    assert (oldest["passed"], oldest["steps_total"], oldest["steps"]) == (9, 11, 10)


def test_history_compare_shows_a_step_done_by_hand_as_by_hand_not_a_heal(tmp_path: Path) -> None:
    """Tester's report, item 3: comparing with an earlier run counted the step done by hand as "healed",
    "exact -> semantic" (the label the engine refused to act on)."""
    project = inline_edit_demo(tmp_path / "demo")
    cfg = project / "steadyhand.yaml"
    text = cfg.read_text(encoding="utf-8")
    cfg.write_text(text.replace("variant: inline-edit", "variant: baseline"), encoding="utf-8")
    base = _cli("run", str(project), "--flow", "leave_request", "--headless")
    assert base.returncode == 0, base.stdout + base.stderr
    cfg.write_text(text, encoding="utf-8")
    run, log = take_over_the_reason(project)
    assert run.returncode == 0, log
    listed = _cli("history", "list", str(project), "--json", "-")
    newest, oldest = yaml.safe_load(listed.stdout)
    compared = _cli("history", "compare", str(project), oldest["id"], newest["id"], "--json", "-")
    assert compared.returncode == 0, compared.stderr
    assert "(passed) vs B " in compared.stderr and "(passed with help)" in compared.stderr, compared.stderr
    (line,) = [ln for ln in compared.stderr.splitlines() if ln.lstrip().startswith("s10 ")]
    assert "exact -> by hand" in line and "healed" not in line and "semantic" not in line, line
    s10 = next(d for d in yaml.safe_load(compared.stdout) if d["step_id"] == "s10")
    assert s10["by_hand_b"] is True and "healed" not in s10["changes"] and s10["strategy_b"] == ""
