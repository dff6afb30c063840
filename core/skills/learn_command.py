"""``steadyhand skills learn PROJECT RUN_ID [--json PATH] [--threshold X]``: learn skills from a stored run.

Runs :func:`core.skills.learn.learn_from_run` on the project's store and
prints one line per proposal and per drop.  Exit 0 when it ran (even with
nothing proposed), 2 on bad input (no such project, store or run).

:func:`add_learn_command` registers the subcommand in the ``skills`` group
of the command line: in the group already registered, or in a new one.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

__all__ = ["add_learn_command", "add_learn_parser", "learn_command"]


def add_learn_parser(skills_sub: Any) -> argparse.ArgumentParser:
    """Add ``learn`` to the ``skills`` group's subparsers; returns its parser (``func`` set)."""
    text = "turn a stored run's failures and takeover corrections into proposed skills"
    p = skills_sub.add_parser("learn", help=text,
                              description=text + ": each failure of the run is contrasted with the correction a "
                                                 "person made during the takeover; validated candidates are "
                                                 "stored as proposals for review",
                              epilog="Example:\n  steadyhand skills learn projects/demo 3f2a9c",
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("project", help="project folder (holds steadyhand.yaml)")
    p.add_argument("run_id", metavar="RUN_ID", help="the run's id or any unique prefix, e.g. the 8 characters "
                                                  "`steadyhand history list` prints")
    p.add_argument("--threshold", type=float, default=None, metavar="X",
                   help="validation pass rate below which a candidate is dropped (default 0.6)")
    p.add_argument("--json", metavar="PATH", help='write {"run_id", "proposed": [...], "dropped": [...]}')
    p.set_defaults(func=learn_command)
    return p


def add_learn_command(sub: Any) -> None:
    """Register ``skills learn`` under the top-level subparsers ``sub`` (joining an existing ``skills`` group)."""
    group = sub.choices.get("skills")
    if group is None:
        group = sub.add_parser("skills", help="skills learnt from failures: learn")
    inner = next((a for a in group._actions if isinstance(a, argparse._SubParsersAction)), None)  # noqa: SLF001
    if inner is None:
        inner = group.add_subparsers(dest="skills_command", metavar="COMMAND", required=True)
    add_learn_parser(inner)


def learn_command(args: argparse.Namespace) -> int:
    """The ``skills learn`` command."""
    from core.project import ProjectError, load_project
    from core.skills.learn import LearnSettings, as_lines, learn_from_run
    from core.store import RunIdError, Store, StoreError, store_present

    try:
        project = load_project(args.project, skip_invalid=True)
    except ProjectError as exc:
        print(f"steadyhand: error: {exc}", file=sys.stderr)
        return 2
    path = project.data_dir / "store.sqlite"
    if not store_present(path):
        print(f"steadyhand: error: {path}: no store (run the project first)", file=sys.stderr)
        return 2
    if args.threshold is not None and not 0.0 <= args.threshold <= 1.0:
        print(f"steadyhand: error: --threshold must be within 0..1, got {args.threshold}", file=sys.stderr)
        return 2
    try:
        store = Store.open(path)
    except StoreError as exc:
        print(f"steadyhand: error: {exc}", file=sys.stderr)
        return 2
    try:
        try:
            run_id = store.resolve_run_id(args.run_id)  # a full id or any unique prefix, as `history list` shows
        except RunIdError as exc:
            print(f"steadyhand: error: {exc}", file=sys.stderr)
            return 2
        settings = LearnSettings() if args.threshold is None else LearnSettings(validation_threshold=args.threshold)
        report = learn_from_run(store, project.name, run_id, settings=settings,
                                flow=None)
    finally:
        store.close()
    out = sys.stderr if args.json == "-" else sys.stdout  # --json -: standard output holds the JSON alone
    for line in as_lines(report) or ["nothing to learn: the run has no captured failure with a correction"]:
        print(line, file=out)
    if args.json:
        from core.domain.skill import skill_to_mapping

        data = {"run_id": report.run_id, "proposed": [skill_to_mapping(s) for s in report.proposed],
                "dropped": [{"reason": d.reason, "flow": d.flow, "step_index": d.step_index,
                             "failure_id": d.failure_id, "correction_id": d.correction_id} for d in report.dropped]}
        text = json.dumps(data, indent=2) + "\n"
        if args.json == "-":
            sys.stdout.write(text)
        else:
            with open(args.json, "w", encoding="utf-8") as fh:
                fh.write(text)
    return 0
