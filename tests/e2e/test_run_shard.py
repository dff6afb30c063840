"""``steadyhand run --shard i/n`` through the real command line on the bundled demo project (LeaveDesk, real
Chromium): three shards together run every flow exactly once, each shard's JSON, JUnit and HTML are valid
documents of its own flows, a shard with no flow run passes with empty valid reports, and a bad ``--shard`` is
one error line with the bad-input exit code before any browser starts."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from core.exitcodes import EXIT_INPUT, EXIT_OK

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STEADYHAND_")}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "core.cli", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    p = tmp_path / "demo"
    shutil.copytree(ROOT / "projects" / "demo", p)
    return p


def test_three_shards_of_the_demo_project_run_every_flow_exactly_once(demo: Path, tmp_path: Path) -> None:
    flows = sorted(f.stem for f in (demo / "flows").glob("*.yaml"))
    seen: list[str] = []
    for i in (1, 2, 3):
        out = tmp_path / f"shard{i}"
        r = _run("run", str(demo), "--shard", f"{i}/3", "--headless", "--json", str(out / "run.json"),
                 "--junit", str(out / "junit.xml"), "--html", str(out / "report.html"))
        assert r.returncode == EXIT_OK, r.stderr
        doc = json.loads((out / "run.json").read_text())
        ran = [f["flow"] for f in doc["flows"]]
        assert ran and doc["passed"] is True
        suite = ET.parse(out / "junit.xml").getroot()
        suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
        assert sorted(c.get("name") for c in suite.iter("testcase")) == sorted(ran)
        assert (out / "report.html").read_text().lstrip().lower().startswith("<!doctype html")
        assert f"shard {i}/3" in r.stderr
        seen += ran
    assert sorted(seen) == flows  # every flow once: none lost, none run by two shards


def test_a_shard_with_no_flow_run_passes_with_valid_empty_reports(demo: Path, tmp_path: Path) -> None:
    # one flow, two shards: exactly one of them is empty
    docs = {}
    for i in (1, 2):
        out = tmp_path / f"s{i}"
        r = _run("run", str(demo), "--flow", "sort_table", "--shard", f"{i}/2", "--headless", "--json",
                 str(out / "run.json"), "--junit", str(out / "junit.xml"), "--html", str(out / "r.html"))
        assert r.returncode == EXIT_OK, r.stderr
        docs[i] = (json.loads((out / "run.json").read_text()), ET.parse(out / "junit.xml").getroot(), r, out)
    empty = [i for i, (doc, *_rest) in docs.items() if not doc["flows"]]
    assert len(empty) == 1
    doc, junit, r, out = docs[empty[0]]
    assert doc["passed"] is True and list(junit.iter("testcase")) == []
    assert "no flow run" in r.stdout
    assert (out / "r.html").read_text().lstrip().lower().startswith("<!doctype html")
    other = docs[3 - empty[0]][0]
    assert [f["flow"] for f in other["flows"]] == ["sort_table"]


@pytest.mark.parametrize("value", ["3", "0/3", "4/3", "x/y"])
def test_a_bad_shard_is_one_line_and_bad_input(demo: Path, value: str) -> None:
    r = _run("run", str(demo), "--shard", value, "--headless", timeout=120)
    assert r.returncode == EXIT_INPUT
    errors = [line for line in r.stderr.splitlines() if line.startswith("steadyhand: error:")]
    assert len(errors) == 1 and "--shard" in errors[0], r.stderr
    assert "Traceback" not in r.stderr


def test_resume_and_shard_together_are_refused(demo: Path) -> None:
    r = _run("run", str(demo), "--shard", "1/2", "--resume", "abc", "--headless", timeout=120)
    assert r.returncode == EXIT_INPUT and "--shard" in r.stderr
