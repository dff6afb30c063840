"""Exit codes of every ``steadyhand`` command, in one place.

Every command module returns these names, never literal numbers; the table
in ``README.md`` ("Exit codes") is checked against :data:`EXIT_CODES` by
``tests/core/test_exitcodes.py``.  argparse's own usage errors exit 2 too
(:data:`EXIT_INPUT`), so a mistyped option and a bad flow file read alike.

When several flows of one ``run`` end differently, the most severe code wins
(:data:`SEVERITY`: environment, then input, then failure, then escalation).
This module imports nothing (it sits at the bottom of the import layers).
"""
from __future__ import annotations

from typing import Final, Mapping

__all__ = [
    "EXIT_OK", "EXIT_FAILED", "EXIT_INPUT", "EXIT_ESCALATED", "EXIT_ENVIRONMENT", "EXIT_INTERRUPTED",
    "EXIT_CODES", "SEVERITY", "markdown_table",
]

#: Success: every flow passed, the file was written, nothing was found.
EXIT_OK: Final = 0
#: A flow failed (an assertion did not hold, a page did not load, the run was stopped, a defect of
#: Steadyhand); ``audit``: a secret was found; ``explore``: the goal was not reached.
EXIT_FAILED: Final = 1
#: Bad input: a project, flow or journal file, an argument or a parameter (the message names the file and
#: field); argparse's usage errors exit with it too.
EXIT_INPUT: Final = 2
#: A flow escalated and needs a human (escalation, step budget) and none failed.
EXIT_ESCALATED: Final = 3
#: The environment is broken: Chromium missing or crashed, the target unreachable, a site that cannot be
#: served, a recording that could not be saved.
EXIT_ENVIRONMENT: Final = 4
#: Interrupted by Ctrl-C (128 + SIGINT, the shell's convention).
EXIT_INTERRUPTED: Final = 130

#: code -> (name, meaning): the table documented in README.md ("Exit codes").
EXIT_CODES: Final[Mapping[int, tuple[str, str]]] = {
    EXIT_OK: ("EXIT_OK", "success: every flow passed, the file was written, nothing was found"),
    EXIT_FAILED: ("EXIT_FAILED", "a flow failed; `audit` found a secret; `explore` did not reach its goal"),
    EXIT_INPUT: ("EXIT_INPUT", "bad input: project, flow or journal file, argument or parameter"),
    EXIT_ESCALATED: ("EXIT_ESCALATED", "a flow escalated and needs a human, and none failed"),
    EXIT_ENVIRONMENT: ("EXIT_ENVIRONMENT", "broken environment: Chromium, the target or the site"),
    EXIT_INTERRUPTED: ("EXIT_INTERRUPTED", "interrupted (Ctrl-C)"),
}

#: Exit codes, most severe first: the code of several runs is the most severe of theirs.
SEVERITY: Final[tuple[int, ...]] = (EXIT_ENVIRONMENT, EXIT_INPUT, EXIT_FAILED, EXIT_ESCALATED, EXIT_OK)


def markdown_table() -> str:
    """The README table of :data:`EXIT_CODES`: ``| code | name | meaning |`` rows, one per code."""
    rows = ["| code | name | meaning |", "|---|---|---|"]
    rows += [f"| {code} | `{name}` | {meaning} |" for code, (name, meaning) in EXIT_CODES.items()]
    return "\n".join(rows)
