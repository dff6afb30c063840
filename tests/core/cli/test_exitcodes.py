"""The exit codes table of README.md is core.exitcodes, and the command modules use its names, not numbers."""
from __future__ import annotations

import re
from pathlib import Path

import core.engine.report as report
from core import exitcodes

ROOT = Path(__file__).resolve().parents[3]
#: The command line and every module that registers a subcommand of it.
COMMAND_MODULES = ["core/cli.py", "core/record/command.py", "core/export/command.py", "core/store/command.py",
                   "core/heal/command.py", "core/heal/corrections_command.py", "core/engine/handback.py",
                   "core/engine/explore.py", "core/bench/ab.py"]


def _readme_table() -> dict[int, tuple[str, str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("### Exit codes"):]
    rows = re.findall(r"^\| (\d+) \| `(\w+)` \| (.+?) \|$", section, flags=re.M)
    return {int(code): (name, meaning) for code, name, meaning in rows}


def test_readme_table_is_the_module() -> None:
    assert _readme_table() == dict(exitcodes.EXIT_CODES)
    assert exitcodes.markdown_table() in (ROOT / "README.md").read_text(encoding="utf-8")


def test_names_match_values() -> None:
    for code, (name, _) in exitcodes.EXIT_CODES.items():
        assert getattr(exitcodes, name) == code
    assert report.EXIT_INPUT is exitcodes.EXIT_INPUT and report.EXIT_ENVIRONMENT is exitcodes.EXIT_ENVIRONMENT
    assert set(exitcodes.SEVERITY) <= set(exitcodes.EXIT_CODES)


def test_command_modules_return_names_not_numbers() -> None:
    literal = re.compile(r"\breturn\s+-?\d+\b|\bsys\.exit\(\s*-?\d+\s*\)|\berr\(.*,\s*\d+\)\s*$")
    assert literal.search("        return 2") and literal.search("return err(str(exc), 4)")
    found = []
    for rel in COMMAND_MODULES:
        for n, line in enumerate((ROOT / rel).read_text(encoding="utf-8").splitlines(), 1):
            if literal.search(line) and not line.lstrip().startswith(("'", '"')):  # not generated code in a string
                found.append(f"{rel}:{n}: {line.strip()}")
    assert not found, "\n".join(found)
