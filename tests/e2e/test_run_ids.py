"""One run id everywhere (issue 23 item 5), through the `steadyhand` command on a real run in Chromium.

`history list` prints the first 8 characters of each run id; `report` and `skills learn PROJECT RUN_ID` accept
that id, the full one or any unique prefix (as git does); an ambiguous prefix exits 2 listing the matches.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from core.store import Store, store_path

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ}
    env.pop("DISPLAY", None)
    return subprocess.run([sys.executable, "-m", "core.cli", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def test_the_id_history_list_prints_names_the_run_for_report_and_skills_learn(tmp_path: Path) -> None:
    project = tmp_path / "demo"
    shutil.copytree(ROOT / "projects" / "demo", project, ignore=shutil.ignore_patterns(".steadyhand"))
    for f in (project / "flows").glob("*.yaml"):
        if f.stem != "sort_table":
            f.unlink()
    run = _cli("run", str(project), "--headless")
    assert run.returncode == 0, run.stdout + run.stderr
    listed = _cli("history", "list", str(project))
    assert listed.returncode == 0, listed.stderr
    short = re.match(r"^([0-9a-f-]{8})  ", listed.stdout).group(1)  # type: ignore[union-attr]
    with Store.open(store_path(project), read_only=True) as store:
        (only,) = store.list_runs()
    assert only.id.startswith(short) and len(only.id) > 8

    for given in (short, only.id, only.id[:5]):
        out = tmp_path / f"report-{len(given)}.html"
        r = _cli("report", given, "--project", str(project), "-o", str(out))
        assert r.returncode == 0 and out.stat().st_size > 1000, r.stderr
    learn = _cli("skills", "learn", str(project), short)
    assert learn.returncode == 0, learn.stdout + learn.stderr  # refused the short id before
    piped = _cli("skills", "learn", str(project), short, "--json", "-")  # standard output holds the JSON alone
    assert piped.returncode == 0 and not (project / "-").exists(), piped.stderr
    assert json.loads(piped.stdout)["run_id"].startswith(short)

    with Store.open(store_path(project)) as store:  # two more runs whose ids share a prefix
        a = store.begin_run("Demo", "sort_table", run_id="feed0001aaaa")
        b = store.begin_run("Demo", "sort_table", run_id="feed0001bbbb")
    for args in (("report", "feed", "--project", str(project), "-o", str(tmp_path / "x.html")),
                 ("skills", "learn", str(project), "feed")):
        r = _cli(*args)
        assert r.returncode == 2 and "ambiguous" in r.stderr and a in r.stderr and b in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1
    r = _cli("report", "nothere", "--project", str(project), "-o", str(tmp_path / "y.html"))
    assert r.returncode == 2 and "no run id starts with 'nothere'" in r.stderr
