"""No project-wide refusal (issue 19, failure kind 7), end to end through the `steadyhand` command.

A recording of 79 steps was saved and then refused by its own loader (``max_steps`` 30): from then on every command
on the project exited 2, recording another flow included.  Here, on a project folder of one's own served on
127.0.0.1 and replayed in real Chromium:

- ``max_steps`` is a budget of the run, not a limit on a flow file: a flow of 79 steps loads and passes with the
  default ``max_steps`` (30);
- a flow file that does not load is listed invalid with its error (file, step, field, what was expected), the other
  flows still run, and the command exits 2 for it (``--json`` lists it too);
- recording another flow in that project works, and so does running it by name;
- the recorder never writes a file its loader refuses: a scroll to the end of a page taller than a flow file's
  bound is recorded within it (it crashed the recorder before); a flow the loader would refuse for any other
  reason is kept in ``.steadyhand/unsaved/`` (tests/core/record/test_save_refused.py).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from core.domain import EngineSettings
from core.project import load_flow, load_project
from core.project.schema import MAX_SCROLL_PX
from core.sites.server import StaticSite

from cdp_recording import record

ROOT = Path(__file__).resolve().parents[2]
FIELDS = 10  # text fields on the page; 79 steps type into them in turn
LONG = 79  # the length of the recording that locked the project in the issue

PAGE = """<!doctype html><html><head><title>Notes</title></head><body><h1>Notes</h1><form onsubmit="return false">
""" + "\n".join(f'<label>Note {i} <input id="n{i}" name="n{i}"></label>' for i in range(FIELDS)) + """
</form><div style="height: 150000px">a long page</div><p id="end">the end</p></body></html>"""


@pytest.fixture
def site(tmp_path: Path):
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / "index.html").write_text(PAGE, encoding="utf-8")
    with StaticSite(folder) as server:
        yield server


def _project(tmp_path: Path, base_url: str) -> Path:
    root = tmp_path / "notes"
    (root / "flows").mkdir(parents=True)
    (root / "steadyhand.yaml").write_text(yaml.safe_dump({"name": "Notes", "base_url": base_url}), encoding="utf-8")
    steps = [{"id": f"s{i + 1}", "action": "input", "value": f"v{i + 1}", "selector": f"#n{i % FIELDS}",
              "target": {"tag": "input", "role": "textbox", "name": f"Note {i % FIELDS}"}} for i in range(LONG)]
    (root / "flows" / "long.yaml").write_text(yaml.safe_dump({"name": "long", "start_url": "/", "steps": steps},
                                                             sort_keys=False), encoding="utf-8")
    (root / "flows" / "broken.yaml").write_text(
        "name: broken\nstart_url: /\nsteps:\n- id: s1\n  action: klick\n  selector: '#n0'\n", encoding="utf-8")
    return root


def _cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("DISPLAY", None)
    return subprocess.run([sys.executable, "-m", "core.cli", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


def test_a_long_flow_runs_and_a_broken_file_is_listed_while_the_others_run(site, tmp_path: Path) -> None:
    root = _project(tmp_path, site.base_url)
    assert LONG > EngineSettings().max_steps  # the default budget is smaller than the flow: it must still run
    summary = tmp_path / "summary.json"
    r = _cli("run", str(root), "--headless", "--no-store", "--json", str(summary))
    out = r.stdout + r.stderr
    assert r.returncode == 2, out  # the broken file makes the run fail as bad input ...
    assert "passed" in r.stdout and f"{LONG}/{LONG}" in r.stdout, out  # ... after the long flow ran and passed
    broken = str(root.resolve() / "flows" / "broken.yaml")
    line = next(x for x in r.stderr.splitlines() if "invalid flow file, not run" in x)
    assert broken in line and "step 's1' (#1), field 'action'" in line and "unknown action 'klick'" in line, line
    assert f"invalid flow file, not run: {broken}" in r.stdout  # beside the summary table too
    doc = json.loads(summary.read_text(encoding="utf-8"))
    assert doc["passed"] is False and [f["flow"] for f in doc["flows"]] == ["long"]
    assert doc["flows"][0]["passed"] is True and doc["flows"][0]["steps_passed"] == LONG
    assert doc["invalid"] == [{"file": broken, "location": "step 's1' (#1), field 'action'",
                               "error": doc["invalid"][0]["error"]}] and "klick" in doc["invalid"][0]["error"]

    named = _cli("run", str(root), "--headless", "--no-store", "--flow", "broken")
    assert named.returncode == 2 and "field 'action'" in named.stderr and "no flow named" not in named.stderr


def test_recording_another_flow_in_a_project_with_a_broken_flow_file_works(site, tmp_path: Path) -> None:
    root = _project(tmp_path, site.base_url)
    (root / "flows" / "long.yaml").unlink()

    def drive(page) -> None:
        page.get_by_label("Note 3").fill("hello")
        time.sleep(1.0)

    code, out, err = record(root, "fresh", drive)
    assert code == 0, out + err
    assert "Saved 1 step to flows/fresh.yaml" in out, out + err
    assert load_flow(root / "flows" / "fresh.yaml").steps[0].action.value == "hello"
    project = load_project(root, skip_invalid=True)
    assert list(project.flows) == ["fresh"] and [Path(f).name for f in project.invalid] == ["broken.yaml"]
    r = _cli("run", str(root), "--headless", "--no-store", "--flow", "fresh")
    assert r.returncode == 0, r.stdout + r.stderr  # the broken file was not asked for: noted, not counted
    assert "broken.yaml" in r.stderr and "not asked for" in r.stderr


def test_a_scroll_past_what_a_flow_file_holds_is_recorded_as_a_flow_that_loads(site, tmp_path: Path) -> None:
    # a scroll to the end of a page taller than the schema's 100000 px crashed the recorder when it read its own
    # journal back (a traceback, nothing saved); now the distance is bounded and the recording loads
    root = _project(tmp_path, site.base_url)

    def drive(page) -> None:
        page.get_by_label("Note 0").fill("x")
        time.sleep(0.8)
        page.mouse.move(300, 300)
        for _ in range(40):
            page.mouse.wheel(0, 5000)
            time.sleep(0.02)
        page.keyboard.press("End")
        time.sleep(2.0)

    code, out, err = record(root, "scrolled", drive)
    assert code == 0, out + err
    flow = load_flow(root / "flows" / "scrolled.yaml")
    scrolls = [s.action.distance for s in flow.steps if s.action.kind == "scroll"]
    assert scrolls and max(scrolls) == MAX_SCROLL_PX, scrolls
    assert "scrolled" in load_project(root, skip_invalid=True).flows
