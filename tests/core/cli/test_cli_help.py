"""Every command and subcommand of ``steadyhand`` has ``--help`` with a working example.

The whole argparse tree is walked: each parser's help exits 0 and ends with an "Example:" whose lines are
``steadyhand`` commands that this very parser accepts (each line is parsed, so an example that names a
removed option or misses a required one fails here).
"""
from __future__ import annotations

import contextlib
import io
import shlex

import pytest

from core.cli import build_parser, main, parser_tree

TREE = parser_tree(build_parser())


def test_the_tree_holds_every_command() -> None:
    paths = {" ".join(p) for p, _ in TREE}
    assert {"", "run", "record", "export pytest", "bench table", "heals accept", "history graph",
            "baselines reset", "audit", "report"} <= paths
    assert len(paths) > 30


@pytest.mark.parametrize("path", [p for p, _ in TREE], ids=lambda p: " ".join(p) or "steadyhand")
def test_help_exits_0_and_carries_an_example(path: tuple[str, ...]) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as exc:
        main([*path, "--help"])
    assert exc.value.code == 0
    text = out.getvalue()
    assert text.startswith("usage: steadyhand")
    assert "\nExample:\n" in text, f"`steadyhand {' '.join(path)} --help` has no example"
    example = text[text.rindex("\nExample:\n") + len("\nExample:"):]  # the epilog, at the end
    lines = [ln.strip() for ln in example.splitlines() if ln.strip().startswith("steadyhand")]
    assert lines, f"the example of `{' '.join(path)}` holds no steadyhand command"
    for line in lines:
        argv = shlex.split(line)[1:]
        if argv == ["--version"]:
            continue
        assert argv[:len(path)] == list(path) or not path, f"{line!r} is not an example of {' '.join(path)}"
        build_parser().parse_args(argv)  # exits 2 (SystemExit) when the example does not parse


def test_version_is_printed() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0 and out.getvalue().startswith("steadyhand ")


@pytest.mark.parametrize("path", [p for p, _ in TREE], ids=lambda p: " ".join(p) or "steadyhand")
def test_every_argument_is_described_in_the_help(path: tuple[str, ...]) -> None:
    # `steadyhand studio --help` listed PROJECT with no word about it (and `heals list`, `history graph`... too)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        main([*path, "--help"])
    text = out.getvalue()
    parser = dict(TREE)[path]
    for action in parser._actions:
        if action.help == "==SUPPRESS==" or action.__class__.__name__ == "_SubParsersAction":
            continue
        assert action.help, f"`steadyhand {' '.join(path)} --help`: {action.dest} has no description"
    if path == ("studio",):
        assert "project folder (holds steadyhand.yaml)" in text
