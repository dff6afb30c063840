"""``steadyhand corrections list | show | accept | reject PROJECT [ID]``: review the flow edits offered after takeovers.

Exit codes: 0 done; 2 bad input (no project, unknown id, already reviewed,
the flow file no longer has the step - then nothing is written).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .command import add_review_subcommands

from core.exitcodes import EXIT_INPUT, EXIT_OK

__all__ = ["add_corrections_parser", "corrections_command", "format_corrections"]


def add_corrections_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``corrections`` and its four subcommands to the ``steadyhand`` parser."""
    c = sub.add_parser("corrections", help="review what was done by hand in takeovers (offered as flow edits)",
                       description="A takeover's manual actions are stored as a correction; for 'replace' and "
                                   "'insert' hand-backs they are offered as an edit of the flow file.")
    add_review_subcommands(c, "corrections", what="correction", listed="offered",
                           all_help="also accepted, rejected and kept ones", texts=(
                               ("show", "the manual steps and the diff accepting would make"),
                               ("accept", "write the edit into the flow file and print the diff applied"),
                               ("reject", "leave the flow file as it is")))
    return c


def format_corrections(records: list) -> str:
    """One line per correction: id, state, flow, step, meaning, the manual steps' names."""
    if not records:
        return "no corrections"
    lines = []
    for r in records:
        names = "; ".join(str(s.get("name") or s.get("action")) for s in r.steps) or "no action recorded"
        lines.append(f"#{r.id:<4} {r.state:<9} {r.flow} step {r.step_index + 1} ({r.step_id}) {r.meaning}: {names}")
    return "\n".join(lines)


def corrections_command(args: argparse.Namespace) -> int:
    """Run one ``corrections`` subcommand; prints to stdout, errors to stderr."""
    from core.heal.corrections import (
        CorrectionReviewError, accept_correction, correction_diff, list_corrections, reject_correction,
    )
    from core.store import Store, StoreError, store_path, store_present

    root = Path(args.project)
    if not (root / "steadyhand.yaml").is_file():
        print(f"steadyhand: error: {root}: not a project folder (no steadyhand.yaml)", file=sys.stderr)
        return EXIT_INPUT
    if not store_present(store_path(root)):  # the file, or the shared store
        if args.corrections == "list":
            print("no corrections (no run of this project was recorded yet)")
            return EXIT_OK
        print(f"steadyhand: error: no correction #{args.id} in {root} (no run was recorded yet)", file=sys.stderr)
        return EXIT_INPUT
    try:
        store = Store.open(store_path(root))
    except StoreError as exc:
        print(f"steadyhand: error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    try:
        if args.corrections == "list":
            print(format_corrections(list_corrections(store, None if args.all else "offered")))
        elif args.corrections == "show":
            print(correction_diff(store, args.id, project_root=root).diff, end="")
        elif args.corrections == "accept":
            print(accept_correction(store, args.id, project_root=root), end="")
        else:
            rec = reject_correction(store, args.id, args.reason)
            print(f"correction #{rec.id} rejected" + (f": {rec.review_reason}" if rec.review_reason else ""))
    except CorrectionReviewError as exc:
        print(f"steadyhand: error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    finally:
        store.close()
    return EXIT_OK
