"""The arguments of ``steadyhand explore`` (:mod:`core.engine.explore` does the exploring).

Kept apart so that building the CLI's parser, which every ``steadyhand`` command does, does not import the
explorer and what it needs (the session, the state graph, networkx: about 1.5 s); the explorer is imported
when ``explore`` runs.
"""
from __future__ import annotations

from typing import Any


def add_explore_parser(sub: Any) -> Any:
    """Register ``steadyhand explore`` on the CLI's subparsers; returns the parser."""
    e = sub.add_parser("explore", help="walk an app without a model and map it into the state graph; "
                                       "--goal finds the shortest path to a text and saves it as a flow",
                       description='Example: steadyhand explore projects/demo --setup sort_table:3 '
                                   '--goal "Sorted by Employee, ascending appears"')
    e.add_argument("project", help="project folder (holds steadyhand.yaml)")
    e.add_argument("--start", default="", help="start URL, relative to the site (default: the setup's end, else /)")
    e.add_argument("--setup", default="", metavar="FLOW[:N]",
                   help="a fixture flow (or its first N steps) replayed first, e.g. a sign-in")
    e.add_argument("--budget", type=int, default=40, help="exploratory actions at most (default 40)")
    e.add_argument("--depth", type=int, default=8, help="actions from the start state at most (default 8)")
    e.add_argument("--seconds", type=float, default=300.0, help="wall time at most, s (default 300)")
    e.add_argument("--allow-writes", action="store_true",
                   help="also try actions that may write data (default: never; a network guard stops writes)")
    e.add_argument("--goal", default="", help='"TEXT appears": stop when it does and save the shortest path')
    e.add_argument("--save", default="", metavar="NAME", help="flow name for the goal's path (default reach_<text>)")
    e.add_argument("--force", action="store_true", help="overwrite an existing flow of that name")
    e.add_argument("--seed", type=int, default=0, help="seed of the tie-break draw (default 0)")
    e.add_argument("--headed", action="store_true", help="show the browser")
    e.add_argument("--no-model", action="store_true", help="explore without the project's model even when one is set")
    e.add_argument("--json", metavar="PATH", help="write the report as JSON ('-': to standard output)")
    e.set_defaults(func=_explore_command)
    return e


def _explore_command(args: Any) -> int:
    """Run :func:`core.engine.explore.explore_command` (imported here, see the module docstring)."""
    from .explore import explore_command

    return explore_command(args)
