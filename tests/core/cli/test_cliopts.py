"""run's option logic (core.cliopts): -k expressions and where a default comes from (pure functions)."""
from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from core.cliopts import ConfigError, add_run_options, apply_run_defaults, find_pyproject, keyword_matcher

NAMES = ["leave_request", "login_lockout", "sort_table", "export_report"]


@pytest.mark.parametrize("expr, selected", [
    ("leave", ["leave_request"]),
    ("LOG", ["login_lockout"]),
    ("leave or sort", ["leave_request", "sort_table"]),
    ("not report and not table", ["leave_request", "login_lockout"]),
    ("(leave or login) and not lockout", ["leave_request"]),
    ("not (leave or login or sort)", ["export_report"]),
    ("o and r or leave", ["leave_request", "sort_table", "export_report"]),  # "and" binds tighter than "or"
])
def test_keyword_expressions_read_as_pytest_reads_them(expr: str, selected: list[str]) -> None:
    match = keyword_matcher(expr)
    assert [n for n in NAMES if match(n)] == selected


@pytest.mark.parametrize("expr", ["", "leave and", "(leave", "leave)", "or leave", "not", "leave sort"])
def test_a_malformed_keyword_expression_is_refused(expr: str) -> None:
    with pytest.raises(ValueError, match="-k"):
        keyword_matcher(expr)


def _args(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    add_run_options(p)
    return p.parse_args(list(argv))


def test_command_line_then_environment_then_pyproject_then_builtin(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.steadyhand]\nretries = 2\nmaxfail = 3\nheadless = false\n'
                                             'base-url = "http://127.0.0.1:9/app/"\n', encoding="utf-8")
    project = tmp_path / "suite" / "proj"
    project.mkdir(parents=True)  # the table is found above the project folder
    args = _args("--retries", "0")
    notes = apply_run_defaults(args, project, environ={"STEADYHAND_MAXFAIL": "1"})
    assert (args.retries, args.maxfail, args.headless, args.base_url) == (0, 1, False, "http://127.0.0.1:9/app/")
    assert args.quiet is False and args.json is None  # built-in defaults
    assert any("STEADYHAND_MAXFAIL" in n for n in notes) and not any(n.startswith("retries") for n in notes)
    args = _args("--headless", "-x")
    apply_run_defaults(args, project, environ={})
    assert (args.headless, args.maxfail, args.retries) == (True, 1, 2)


def test_no_pyproject_table_gives_the_builtin_defaults(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")  # no [tool.steadyhand]
    assert find_pyproject(tmp_path) is None or find_pyproject(tmp_path)[0] != tmp_path / "pyproject.toml"
    args = _args()
    apply_run_defaults(args, tmp_path, environ={})
    assert (args.retries, args.maxfail, args.headless, args.base_url) == (0, 0, None, None)


@pytest.mark.parametrize("text, environ, needle", [
    ("[tool.steadyhand]\nretrys = 1\n", {}, "retrys"),
    ("[tool.steadyhand]\nretries = 'two'\n", {}, "whole number"),
    ("[tool.steadyhand]\nheadless = 'maybe'\n", {}, "true or false"),
    ("[tool.steadyhand]\nretries = -1\n", {}, "0 or more"),
    ("", {"STEADYHAND_RETRIES": "x"}, "STEADYHAND_RETRIES"),
    ("", {"STEADYHAND_HEADLESS": "sometimes"}, "STEADYHAND_HEADLESS"),
    ("[tool.steadyhand\n", {}, "not readable as TOML"),
])
def test_a_default_that_cannot_be_used_is_refused_by_name(tmp_path: Path, text: str, environ: dict,
                                                          needle: str) -> None:
    (tmp_path / "pyproject.toml").write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=needle):
        apply_run_defaults(_args(), tmp_path, environ=environ)


def test_a_negative_count_on_the_command_line_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--retries"):
        apply_run_defaults(_args("--retries", "-1"), tmp_path, environ={})


def test_history_json_dash_puts_the_document_alone_on_stdout(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    import json

    from core.cli import main

    (tmp_path / "steadyhand.yaml").write_text("schema_version: 1\nname: H\nbase_url: http://127.0.0.1:9\n",
                                              encoding="utf-8")
    assert main(["history", "list", str(tmp_path), "--json", "-"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out) == [] and "no runs" in err and not (tmp_path / "-").exists()
