"""``steadyhand heals list | show | accept | reject PROJECT [ID]``: review heal proposals.

Exit codes: 0 done; 2 bad input (no project, unknown id, already reviewed,
the flow file changed on disk since the proposal - then nothing is written).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.exitcodes import EXIT_INPUT, EXIT_OK

__all__ = ["add_heals_parser", "heals_command"]


def add_heals_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``heals`` and its four subcommands to the ``steadyhand`` parser; returns the ``heals`` parser."""
    h = sub.add_parser("heals", help="review heal proposals (old -> new descriptor, with evidence)",
                       description="A step healed by any level but exact leaves a proposal; pending ones are "
                                   "reused by later runs until you accept (writes the flow file) or reject them.")
    add_review_subcommands(h, "heals", what="proposal", listed="pending", all_help="also accepted, rejected and "
                           "filled-in ones", texts=(
                               ("show", "old and new side by side, evidence, the diff accepting would make"),
                               ("accept", "write the new descriptor into the flow file and print the diff applied"),
                               ("reject", "remember the change as wrong: never proposed again")))
    return h


def add_review_subcommands(parser: argparse.ArgumentParser, dest: str, *, what: str, listed: str, all_help: str,
                           texts: tuple[tuple[str, str], ...]) -> None:
    """``list PROJECT [--all]`` and ``show|accept|reject PROJECT ID [--reason]`` under ``parser`` (``dest``
    names the chosen one): the review commands of heals and of takeover corrections."""
    subs = parser.add_subparsers(dest=dest, required=True)
    ls = subs.add_parser("list", help=f"list {what}s ({listed} ones by default)")
    ls.add_argument("project", help="project folder (holds steadyhand.yaml)")
    ls.add_argument("--all", action="store_true", help=all_help)
    for name, text in texts:
        c = subs.add_parser(name, help=text)
        c.add_argument("project", help="project folder (holds steadyhand.yaml)")
        c.add_argument("id", type=int, help=f"{what} id (from `{dest} list`)")
        if name == "reject":
            c.add_argument("--reason", default="", help=f"why (kept with the {what})")


def heals_command(args: argparse.Namespace) -> int:
    """Run one ``heals`` subcommand; prints to stdout, errors to stderr."""
    from core.heal.review import HealReview, HealReviewError, format_list, format_show

    root = Path(args.project)
    if not (root / "steadyhand.yaml").is_file():
        print(f"steadyhand: error: {root}: not a project folder (no steadyhand.yaml)", file=sys.stderr)
        return EXIT_INPUT
    from core.store import store_path, store_present

    if not store_present(store_path(root)):  # no run recorded yet (and no shared store): do not create one to say so
        if args.heals == "list":
            print("no heal proposals (no run of this project was recorded yet)")
            return EXIT_OK
        print(f"steadyhand: error: no heal proposal #{args.id} in {root} (no run was recorded yet)", file=sys.stderr)
        return EXIT_INPUT
    from core.store import StoreError

    try:
        review_cm = HealReview(root)
    except StoreError as exc:
        print(f"steadyhand: error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    with review_cm as review:
        try:
            if args.heals == "list":
                print(format_list(review.list(None if args.all else "pending")))
            elif args.heals == "show":
                rec = review.get(args.id)
                try:
                    diff = review.diff(args.id) if rec.status == "pending" else rec.diff
                except HealReviewError as exc:
                    diff = f"  (no diff: {exc})"
                print(format_show(rec, review.evidence(args.id), diff))
            elif args.heals == "accept":
                rec = review.get(args.id)
                diff = review.accept(args.id)
                print(diff, end="" if diff.endswith("\n") else "\n")
                print(f"accepted heal #{rec.id}: {rec.flow_file} step {rec.step_id} updated")
            else:
                rec = review.reject(args.id, args.reason)
                print(f"rejected heal #{rec.id}: {rec.flow} step {rec.step_id} will not be proposed this change "
                      f"again ({rec.reason})")
        except HealReviewError as exc:
            print(f"steadyhand: error: {exc}", file=sys.stderr)
            return EXIT_INPUT
    return EXIT_OK
