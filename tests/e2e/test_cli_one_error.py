"""Bad input gives one clear error line naming the file (or field), the input exit code, and never a traceback.

Every case runs the real ``steadyhand`` command in a subprocess (issue 21 item 7).
"""
from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from core.exitcodes import EXIT_INPUT

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "core.cli", *map(str, args)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def _one_error(r: subprocess.CompletedProcess, *names: str) -> str:
    """The one error line (exit 2, no traceback), which names each of ``names``."""
    out = r.stdout + r.stderr
    assert "Traceback" not in out, out
    assert r.returncode == EXIT_INPUT, out
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, r.stderr
    for n in names:
        assert n in lines[0], lines[0]
    return lines[0]


# --- the store -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> tuple[Path, str]:
    """The demo project after one real run (its store holds that run, marked failed so it can be resumed)."""
    root = tmp_path_factory.mktemp("store") / "demo"
    shutil.copytree(ROOT / "projects" / "demo", root, ignore=shutil.ignore_patterns(".steadyhand"))
    doc = yaml.safe_load((root / "steadyhand.yaml").read_text())
    doc["site_options"]["latency_ms"] = "0"
    (root / "steadyhand.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    r = _cli("run", root, "--flow", "sort_table", "--headless", "--no-screenshots")
    assert r.returncode == 0, r.stdout + r.stderr
    db = root / ".steadyhand" / "store.sqlite"
    with sqlite3.connect(db) as c:
        (run_id,) = c.execute("SELECT id FROM runs").fetchone()
        c.execute("UPDATE runs SET status = 'failed'")
    return root, run_id


def _spoil(db: Path, how: str) -> None:
    if how == "empty":
        db.write_bytes(b"")
        for extra in (db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
            extra.unlink(missing_ok=True)
        return
    with sqlite3.connect(db) as c:
        if how == "newer":
            c.execute("INSERT INTO schema_meta VALUES (99, datetime('now'), 'from the future')")
        elif how == "no_steps":
            c.execute("DROP TABLE steps")
        elif how == "no_runs":
            c.execute("DROP TABLE checkpoints")
            c.execute("DROP TABLE runs")
        elif how == "cell":
            c.execute("UPDATE checkpoints SET fields = '{not json', side_effects = '[broken'")
            c.execute("UPDATE runs SET heals_by_strategy = '{x'")


COMMANDS = {
    "history": lambda p, rid, tmp: ("history", "list", p),
    "report": lambda p, rid, tmp: ("report", "--project", p, "-o", tmp / "r.html", rid),
    "run": lambda p, rid, tmp: ("run", p, "--flow", "sort_table", "--headless", "--no-screenshots"),
    "resume": lambda p, rid, tmp: ("run", p, "--resume", rid, "--headless", "--no-screenshots"),
}
CASES = [(how, cmd) for how in ("newer", "empty", "no_steps", "no_runs", "cell") for cmd in COMMANDS
         # an empty file is a new store to a run (nothing to lose); a run that reads no damaged cell is fine
         if (how, cmd) not in (("empty", "run"), ("cell", "run"))]


@pytest.mark.parametrize("how, cmd", CASES)
def test_a_store_that_cannot_be_read_is_one_line_naming_it(stored, tmp_path, how, cmd) -> None:
    src, run_id = stored
    project = tmp_path / "demo"
    shutil.copytree(src, project)
    db = project / ".steadyhand" / "store.sqlite"
    _spoil(db, how)
    r = _cli(*COMMANDS[cmd](project, run_id, tmp_path))
    _one_error(r, str(db))
