"""One shared store on PostgreSQL through the real command line (issue 24 item 2): two workers (two copies of
the demo project on the demo app's ``tweaked`` variant, real Chromium) run the same flow at the same time into
one database named by ``STEADYHAND_STORE_URL``; every row of both runs is there (steps, observations, evidence,
checkpoints, the state graph), each heal is proposed once
(seen by both, not doubled), and a reviewer in a third folder lists and accepts it for everyone with the review
rules of today.  No SQLite file is written beside any project; the screenshots stay beside the project that took
them.  The PostgreSQL server is one this test starts (tests/pgcluster.py); a machine without it fails here."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from sqlalchemy import create_engine, text

from core.exitcodes import EXIT_OK

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from pgcluster import PASSWORD, PgCluster  # noqa: E402

pytestmark = pytest.mark.browser
FLOW = "export_report"


def _env(url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STEADYHAND_")}
    return {**env, "PYTHONPATH": str(ROOT), "STEADYHAND_STORE_URL": url}


def _cli(url: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "core.cli", *args], cwd=ROOT, env=_env(url), capture_output=True,
                          text=True, timeout=300)


def _copy(tmp: Path, name: str) -> Path:
    dst = tmp / name
    shutil.copytree(ROOT / "projects" / "demo", dst, ignore=shutil.ignore_patterns(".steadyhand"))
    settings = yaml.safe_load((dst / "steadyhand.yaml").read_text())
    settings["site_options"]["variant"] = "tweaked"
    (dst / "steadyhand.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))
    return dst


def _rows(url: str, sql: str) -> list[tuple]:
    engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with engine.connect() as conn:
            return [tuple(r) for r in conn.execute(text(sql))]
    finally:
        engine.dispose()


def test_two_workers_write_one_store_and_a_third_folder_reviews_for_everyone(tmp_path: Path) -> None:
    with PgCluster() as pg:
        url = pg.create_db("team")
        a, b, reviewer = _copy(tmp_path, "worker-a"), _copy(tmp_path, "worker-b"), _copy(tmp_path, "reviewer")
        procs = {w: subprocess.Popen([sys.executable, "-m", "core.cli", "run", str(w), "--flow", FLOW, "--headless",
                                      "--json", str(tmp_path / f"{w.name}.json")], cwd=ROOT, env=_env(url),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for w in (a, b)}
        outs = {w: p.communicate(timeout=400) for w, p in procs.items()}
        for w, p in procs.items():
            assert p.returncode == EXIT_OK, outs[w][1][-3000:]
            assert PASSWORD not in outs[w][0] + outs[w][1]
        docs = {w: json.loads((tmp_path / f"{w.name}.json").read_text())["flows"][0] for w in (a, b)}
        assert all(d["passed"] and d["heals"] > 0 for d in docs.values())

        # every row of both runs, in one database
        runs = _rows(url, "SELECT id, status FROM runs ORDER BY id")
        assert len(runs) == 2 and {s for _, s in runs} == {"passed"}
        steps = dict(_rows(url, "SELECT run_id, count(*) FROM steps GROUP BY run_id"))
        assert sorted(steps.values()) == sorted(d["steps"] for d in docs.values())
        assert _rows(url, "SELECT count(*) FROM (SELECT run_id, step_index FROM steps GROUP BY run_id, step_index "
                          "HAVING count(*) > 1) d") == [(0,)]
        assert _rows(url, "SELECT count(DISTINCT run_id) FROM observations") == [(2,)]
        assert _rows(url, "SELECT count(DISTINCT run_id) FROM step_evidence") == [(2,)]
        assert _rows(url, "SELECT count(DISTINCT run_id) FROM checkpoints") == [(2,)]
        # the flow's state graph, written by both runs at once (its nodes' ``runs`` counts the changes of the last
        # run that saw a node, so interleaved runs count more than two: not checked here)
        assert _rows(url, "SELECT count(*) FROM state_nodes")[0][0] > 0
        assert _rows(url, "SELECT count(*) FROM state_edges")[0][0] > 0
        # each healed step proposed once, whichever worker saw it first: not doubled
        proposals = _rows(url, "SELECT id, step_id, status, seen, reused FROM heal_proposals ORDER BY id")
        assert len(proposals) == docs[a]["heals"] == docs[b]["heals"] >= 2, proposals  # the button and the label
        assert all(status == "pending" and seen + reused == 2 for _, _, status, seen, reused in proposals), proposals
        for w in (a, b, reviewer):
            assert not (w / ".steadyhand" / "store.sqlite").exists()
        assert list((a / ".steadyhand").rglob("*.png")) and list((b / ".steadyhand").rglob("*.png"))

        # reviewed once, from a folder that ran nothing
        listed = _cli(url, "heals", "list", str(reviewer))
        assert listed.returncode == 0 and all(f"#{i}  pending  heal" in listed.stdout for i, *_ in proposals), (
            listed.stdout + listed.stderr)
        flow_file = reviewer / "flows" / f"{FLOW}.yaml"
        original = flow_file.read_text()
        first = proposals[0][0]
        accepted = _cli(url, "heals", "accept", str(reviewer), str(first))
        assert accepted.returncode == 0, accepted.stderr
        assert flow_file.read_text() != original  # the reviewer's flow file took the change
        after = _cli(url, "heals", "list", str(a))  # ... and worker A sees it reviewed
        assert f"#{first}  pending" not in after.stdout and after.returncode == 0
        again = _cli(url, "heals", "accept", str(b), str(first))
        assert again.returncode == 2  # already reviewed, for everyone
        rejected = _cli(url, "heals", "reject", str(b), str(proposals[-1][0]), "--reason", "not the same control")
        assert rejected.returncode == 0, rejected.stderr
        assert _rows(url, f"SELECT status FROM heal_proposals WHERE id = {proposals[-1][0]}") == [("rejected",)]
