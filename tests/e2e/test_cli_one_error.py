"""Bad input gives one clear error line naming the file (or field), the input exit code, and never a traceback.

Every case runs the real ``steadyhand`` command in a subprocess (issue 21 item 7).
"""
from __future__ import annotations

import os
from contextlib import closing
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
    with closing(sqlite3.connect(db)) as c, c:  # closed here: a connection left to the collector removes the
        (run_id,) = c.execute("SELECT id FROM runs").fetchone()  # WAL files while a test copies the folder
        c.execute("UPDATE runs SET status = 'failed'")
    return root, run_id


def _spoil(db: Path, how: str) -> None:
    if how == "empty":
        db.write_bytes(b"")
        for extra in (db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
            extra.unlink(missing_ok=True)
        return
    with closing(sqlite3.connect(db)) as c, c:
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


# --- imports and files read before they are parsed ------------------------------------------------------


@pytest.fixture
def demo(tmp_path) -> Path:
    root = tmp_path / "demo"
    shutil.copytree(ROOT / "projects" / "demo", root, ignore=shutil.ignore_patterns(".steadyhand"))
    doc = yaml.safe_load((root / "steadyhand.yaml").read_text())
    doc["site_options"]["latency_ms"] = "0"
    (root / "steadyhand.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return root


def _side_nested(depth: int) -> str:
    return ('{"url": "http://127.0.0.1/", "tests": [{"name": "t", "commands": [{"command": "open", "target": '
            + "[" * depth + "]" * depth + "}]}]}")


IMPORTS = {
    "side nested": ("import-side", "deep.side", lambda: "[" * 100_000 + "]" * 100_000, "nested too deeply"),
    "side nested target": ("import-side", "deep2.side", lambda: _side_nested(5000), "nested too deeply"),
    "side too big": ("import-side", "big.side", lambda: " " * (5 * 1024 * 1024) + "{}", "bytes"),
    "codegen chained": ("import-codegen", "deep.py",
                        lambda: "def run(page):\n    page.goto('http://127.0.0.1/')\n    x = " + "+".join(["1"] * 100_000),
                        "nested too deeply"),
    "codegen attributes": ("import-codegen", "deep2.py",
                           lambda: "def run(page):\n    page" + ".a" * 100_000 + ".click()\n", "nested too deeply"),
    "codegen negations": ("import-codegen", "deep3.py", lambda: "x = " + "-" * 100_000 + "1\n", "nested too deeply"),
    "codegen too big": ("import-codegen", "big.py", lambda: "#" * (5 * 1024 * 1024) + "\n", "bytes"),
}


@pytest.mark.parametrize("case", list(IMPORTS))
def test_an_import_nested_too_deeply_or_too_big_is_one_line_naming_it(demo, tmp_path, case) -> None:
    cmd, name, make, expected = IMPORTS[case]
    src = tmp_path / name
    src.write_text(make())
    extra = ("--flow", "imported") if cmd == "import-codegen" else ()
    r = _cli(cmd, src, "--project", demo, *extra)
    _one_error(r, str(src), expected)


def test_a_flow_of_200000_steps_is_refused_by_its_size_before_it_is_parsed(demo) -> None:
    lines = ["schema_version: 1", "name: huge", "start_url: /login", "steps:"]
    lines += [f"  - {{id: s{i}, action: wait, value: '1'}}" for i in range(200_000)]
    huge = demo / "flows" / "huge.yaml"
    huge.write_text("\n".join(lines) + "\n")
    r = _cli("run", demo, "--flow", "huge", "--headless", timeout=120)
    line = _one_error(r, str(huge), "bytes")
    assert "not read" in line


def test_a_skill_file_too_big_is_refused_before_it_is_parsed(demo, tmp_path) -> None:
    from core.skills.files import MAX_FILE_BYTES

    big = tmp_path / "skills.json"
    with big.open("w") as f:
        f.write("[" + " " * (MAX_FILE_BYTES + 10) + "]")
    r = _cli("skills", "import", demo, big)
    _one_error(r, str(big), "bytes")


@pytest.mark.parametrize("text, line", [
    ('schema_version: 1\nname: bad\nsteps:\n  - id: s1\n    action: "click\n  - id: s2\n    action: wait\n', 5),
    ('schema_version: 1\nname: bad\nsteps:\n  - id: s1\n    action: [click\n  - id: s2\n    action: wait\n', 5),
    ('schema_version: 1\nname: bad\nsteps:\n  - id: s1\n    action: click\n  bogus\n', 6),
    ('schema_version: 1\nname: bad\nsteps:\n  - {id: s1, action: click\n', 4),
])
def test_a_yaml_error_names_the_line_to_fix(demo, text, line) -> None:
    bad = demo / "flows" / "bad.yaml"
    bad.write_text(text)
    r = _cli("run", demo, "--flow", "bad", "--headless")
    _one_error(r, str(bad), f"at line {line}, column", "not valid YAML")


# --- what is printed -----------------------------------------------------------------------------------


def test_a_flow_name_with_terminal_escapes_is_refused_and_nothing_prints_an_escape(demo) -> None:
    for f in ("leave_request", "login_lockout", "export_report"):
        (demo / "flows" / f"{f}.yaml").unlink()
    flow = demo / "flows" / "sort_table.yaml"
    doc = yaml.safe_load(flow.read_text())
    doc["name"] = "sort\x1b[2J\x1b]8;;http://example.invalid\x07table"
    flow.write_text(yaml.safe_dump(doc))
    r = _cli("run", demo, "--headless")
    _one_error(r, str(flow), "field 'name'", "control characters")
    assert "\x1b" not in r.stdout + r.stderr


def test_descriptions_and_step_names_with_escapes_print_none(demo, tmp_path) -> None:
    flow = demo / "flows" / "sort_table.yaml"
    doc = yaml.safe_load(flow.read_text())
    doc["description"] = "sorts\x1b[31m red\x1b[0m"
    doc["steps"][0]["name"] = "open\x1b[2J the table\u202e"
    doc["steps"].append({"id": "zz", "name": "fail \x1b[5mhere\x07", "action": "assert",
                         "assertions": [{"kind": "text_appears", "expected": "never on this page"}]})
    flow.write_text(yaml.safe_dump(doc))
    r = _cli("run", demo, "--flow", "sort_table", "--headless", "--no-screenshots")
    assert r.returncode != 0 and "Traceback" not in r.stderr
    out = r.stdout + r.stderr
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out, out


def test_multi_flow_html_reports_are_written_per_flow_under_safe_names(demo, tmp_path) -> None:
    flow = demo / "flows" / "sort_table.yaml"
    doc = yaml.safe_load(flow.read_text())
    doc["name"] = "../../sort/table"
    flow.write_text(yaml.safe_dump(doc))
    out = tmp_path / "reports" / "r.html"
    r = _cli("run", demo, "--flow", "../../sort/table", "--flow", "export_report", "--headless", "--no-screenshots",
             "--html", out)
    assert "Traceback" not in r.stdout + r.stderr
    assert r.returncode == 0, r.stdout + r.stderr
    written = sorted(p.name for p in out.parent.iterdir())
    assert written == ["r-export_report-2.html", "r-sort_table-1.html", "r.html"], written  # r.html: the index
    assert not list(tmp_path.glob("**/table-1.html"))
    assert sum(ln.startswith("report: ") for ln in r.stderr.splitlines()) == 3, r.stderr


def test_run_help_lists_the_exit_codes() -> None:
    from core.exitcodes import EXIT_CODES

    r = _cli("run", "--help")
    assert r.returncode == 0
    tail = r.stdout.split("Exit codes:", 1)[1]
    for code, (_, meaning) in EXIT_CODES.items():
        assert f"{code}" in tail and meaning[:30] in " ".join(tail.split()), (code, tail)
