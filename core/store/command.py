"""``steadyhand history list | compare | graph PROJECT ...``: past runs, two runs compared, a flow's state graph.

Reads the project's store read-only (nothing is run or written).  Exit
codes: 0 done; 2 bad input (no project folder, unknown or ambiguous run id,
runs of different flows).  Run ids may be given by a prefix (the first 8
characters ``history list`` prints).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from core.progress import counted
from core.exitcodes import EXIT_INPUT, EXIT_OK

__all__ = ["add_history_parser", "history_command"]


def add_history_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``history`` and its subcommands to the ``steadyhand`` parser; returns the ``history`` parser."""
    h = sub.add_parser("history", help="past runs from the store: list, compare two, a flow's state graph",
                       description="Example: steadyhand history list projects/demo --flow export_report; "
                                   "steadyhand history compare projects/demo 1a2b3c4d 5e6f7a8b; "
                                   "steadyhand history graph projects/demo export_report")
    hs = h.add_subparsers(dest="history", required=True)
    ls = hs.add_parser("list", help="runs, newest first: id, time, flow, status, steps, heals")
    ls.add_argument("project", help="project folder (holds steadyhand.yaml)")
    ls.add_argument("--flow", help="only this flow's runs")
    ls.add_argument("--limit", type=int, default=20, help="at most this many (default 20)")
    cp = hs.add_parser("compare", help="two runs of one flow step by step (healed, slower, verdict changed)")
    cp.add_argument("project", help="project folder (holds steadyhand.yaml)")
    cp.add_argument("a", help="reference run id (or prefix)")
    cp.add_argument("b", help="other run id (or prefix)")
    gr = hs.add_parser("graph", help="a flow's state graph: states, actions, revisits and loops")
    gr.add_argument("project", help="project folder (holds steadyhand.yaml)")
    gr.add_argument("flow", help="flow name (or a graph name such as explore:/)")
    for c in (ls, cp, gr):
        c.add_argument("--json", type=Path, metavar="PATH",
                       help="also write the result as JSON ('-': the JSON on standard output, the table on stderr)")
    return h


def _err(text: str) -> int:
    print(f"steadyhand: error: {text}", file=sys.stderr)
    return EXIT_INPUT


#: Where ``--json -`` writes (the real standard output while the table is printed on stderr).
_JSON_OUT: list[Any] = []


def _write_json(path: Path | None, data: Any) -> None:
    if path is None:
        return
    text = json.dumps(data, indent=2, default=str)
    if str(path) == "-":
        (_JSON_OUT[-1] if _JSON_OUT else sys.stdout).write(text + "\n")
        return
    path.write_text(text, encoding="utf-8")


def history_command(args: argparse.Namespace) -> int:
    """Run one ``history`` subcommand; prints to stdout, errors to stderr (``--json -``: the table on stderr and
    the JSON alone on stdout)."""
    import contextlib

    if str(getattr(args, "json", None)) != "-":
        return _history_command(args)
    _JSON_OUT.append(sys.stdout)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            return _history_command(args)
    finally:
        _JSON_OUT.pop()


def _history_command(args: argparse.Namespace) -> int:
    from core.state.graph import flow_graph_name

    from .graphs import GraphTable
    from .history import StoredStep, compare_runs, run_history
    from .repository import RunIdError, Store, StoreError, short_run_id, store_path
    from .shared import store_present

    root = Path(args.project)
    if not (root / "steadyhand.yaml").is_file():
        return _err(f"{root}: not a project folder (no steadyhand.yaml)")
    db = store_path(root)
    if not store_present(db):  # the project's file, or the shared store (core.store.shared)
        print("no runs (no run of this project was recorded yet)")
        _write_json(getattr(args, "json", None), [])
        return EXIT_OK
    try:
        store = Store.open(db, read_only=True)
    except (StoreError, FileNotFoundError) as exc:
        return _err(str(exc))
    with store:
        if args.history == "list":
            entries = run_history(store, limit=args.limit, flow=args.flow)
            if not entries:
                print("no runs" + (f" of {args.flow}" if args.flow else ""))
            for e in entries:
                r = e.run
                secs = f"{r.seconds:.1f} s" if r.seconds is not None else "-"
                hand = f"  by hand: {e.by_hand}" if e.by_hand else ""
                print(f"{short_run_id(r.id)}  {r.started_at:%Y-%m-%d %H:%M:%S}  {r.flow:<20} {e.label:<11} "
                      f"{e.passed}/{e.total} steps passed  {counted(r.heals or 0, 'heal')}{hand}  {secs}")
            _write_json(args.json, [{"id": e.run.id, "flow": e.run.flow, "status": e.label, "by_hand": e.by_hand,
                                     "started_at": e.run.started_at.isoformat(), "steps": e.steps,
                                     "passed": e.passed, "steps_total": e.total, "heals": e.run.heals, "seconds": e.run.seconds}
                                    for e in entries])
            return EXIT_OK
        if args.history == "compare":
            picked = []
            for given in (args.a, args.b):
                try:
                    picked.append(store.resolve_run_id(given))  # a full id or any unique prefix
                except RunIdError as exc:
                    return _err(str(exc))
            a, b = store.run_detail(picked[0]), store.run_detail(picked[1])
            assert a is not None and b is not None
            try:
                deltas = compare_runs(a, b)
            except ValueError as exc:
                return _err(str(exc))
            from core.domain import run_label

            print(f"{a.run.flow}: A {short_run_id(a.run.id)} ({run_label(a.run.status, len(a.hand_backs))}) vs "
                  f"B {short_run_id(b.run.id)} ({run_label(b.run.status, len(b.hand_backs))})")

            def where(s: StoredStep | None) -> str:  # a step done by hand has no locator result
                return "-" if s is None else "by hand" if s.by_hand else s.strategy or "-"

            for d in deltas:
                sa, sb = d.a, d.b
                ms = "" if d.ms_delta is None else f"{d.ms_delta:+.0f} ms"
                loc = f"{where(sa)} -> {where(sb)}"
                print(f"  {d.step_id or '?':<6} {d.title[:34]:<34} {loc:<26} {ms:>9}  {', '.join(d.changes) or 'same'}")
            _write_json(args.json, [{"step_id": d.step_id, "title": d.title, "changes": list(d.changes),
                                     "ms_a": d.a.ms if d.a else None, "ms_b": d.b.ms if d.b else None,
                                     "strategy_a": d.a.strategy if d.a else None,
                                     "strategy_b": d.b.strategy if d.b else None,
                                     "by_hand_a": d.a.by_hand if d.a else None,
                                     "by_hand_b": d.b.by_hand if d.b else None,
                                     "verdict_a": d.a.verdict if d.a else None,
                                     "verdict_b": d.b.verdict if d.b else None} for d in deltas])
            return EXIT_OK
        name = args.flow if ":" in args.flow else flow_graph_name(args.flow)
        g = GraphTable(store).load_state_graph(name)
        if not len(g):
            print(f"no states stored for {name}")
            _write_json(args.json, {"graph": name, "nodes": [], "edges": []})
            return EXIT_OK
        number = {n.key: i for i, n in enumerate(g.nodes(), 1)}
        cycles = [c for c in g.loops() if len(c) > 1]
        print(f"{name}: {len(g)} states, {len(g.edges())} actions ({len(g.self_loops())} self-loops), "
              f"{len(g.revisited())} revisited, {counted(len(cycles), 'loop')}")
        for n in g.nodes():
            print(f"  S{number[n.key]:<3} {n.title[:40]:<40} {n.url}  visits {n.visits} in {counted(n.runs, 'run')}"
                  + ("  REVISITED" if n.revisited else ""))
        for e in g.edges():
            verdicts = ", ".join(f"{k} {v}" for k, v in sorted(e.verdicts.items()))
            print(f"  S{number[e.source]} -> S{number[e.target]}  {e.label}  [{verdicts}]")
        _write_json(args.json, {
            "graph": name,
            "nodes": [{"id": f"S{number[n.key]}", "key": n.key, "url": n.url, "title": n.title, "visits": n.visits,
                       "runs": n.runs, "screenshot": n.screenshot} for n in g.nodes()],
            "edges": [{"source": f"S{number[e.source]}", "target": f"S{number[e.target]}", "kind": e.kind,
                       "target_summary": e.target_summary, "step_id": e.step_id, "count": e.count,
                       "verdicts": dict(e.verdicts)} for e in g.edges()],
            "loops": [[f"S{number[k]}" for k in c] for c in g.loops()]})
    return EXIT_OK
