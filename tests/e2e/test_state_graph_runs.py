"""Real runs grow the flow's stored state graph (P4): the demo app twice, and a MiniWoB++ task on other seeds."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml

from core.cli import main
from core.engine.events import StateGraphChanged
from core.engine.session import ProjectSession
from core.project import load_project
from core.state.graph import flow_graph_name
from core.store import GraphTable, Store

ROOT = Path(__file__).resolve().parents[2]


def _fast(root: Path) -> None:
    """The demo's simulated server latency down to 150 ms (800 by default): the same pages, sooner."""
    settings = yaml.safe_load((root / "steadyhand.yaml").read_text())
    settings["site_options"]["latency_ms"] = "150"
    (root / "steadyhand.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))


def test_two_demo_runs_add_to_the_same_stored_graph(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    dst = tmp_path / "demo"
    shutil.copytree(ROOT / "projects" / "demo", dst, ignore=shutil.ignore_patterns(".steadyhand"))
    _fast(dst)
    project = load_project(dst)
    events: list[StateGraphChanged] = []
    name = flow_graph_name("export_report")
    with ProjectSession(project, headless=True, evidence="full",  # every state keeps its screenshot (studio)
                        emit=lambda e: events.append(e) if isinstance(e, StateGraphChanged) else None) as session:
        flow = session.project.flows["export_report"]
        first = session.run_flow(flow)
        assert first.status == "passed", first.error
        one = GraphTable(session.store).load_state_graph(name)
        n1 = len(events)
        second = session.run_flow(flow)
        assert second.status == "passed", second.error
    assert n1 == len(flow.steps) and len(events) == 2 * len(flow.steps)
    assert {e.graph for e in events} == {name}
    assert events[0].new_source and events[0].new_target is not None
    assert not any(e.new_source or e.new_target or e.new_edge for e in events[n1:]), "the second run saw no new state"
    with Store.open(project.data_dir, read_only=True) as store:
        two = GraphTable(store).load_state_graph(name)
        runs = [r.id for r in store.list_runs(flow="export_report")]
    assert {n.key for n in two.nodes()} == {n.key for n in one.nodes()}
    # login page -> requests page -> export dialog -> requests page: at least three states, fills are self-loops
    assert len(two) >= 3
    assert any(e.self_loop and e.kind == "input" for e in two.edges())
    assert all(e.count == 2 for e in two.edges())
    assert all(n.screenshot and (project.data_dir / n.screenshot).is_file() for n in two.nodes())
    assert {e.last_run_id for e in two.edges()} == {second.run_id} and second.run_id in runs
    assert all(sum(e.verdicts.values()) == 2 for e in two.edges())
    start = next(n for n in two.nodes() if "/login" in n.url)
    assert start.visits == 2  # each run started there
    # the password never reaches the graph's rows
    raw = b"".join(p.read_bytes() for p in project.data_dir.glob("store.sqlite*"))
    assert b"demo-pass" not in raw

    # the same from the command line (read-only)
    capsys.readouterr()
    assert main(["history", "graph", str(dst), "export_report", "--json", str(tmp_path / "g.json")]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{name}: {len(two)} states, {len(two.edges())} actions")
    data = json.loads((tmp_path / "g.json").read_text())
    assert len(data["nodes"]) == len(two) and sum(e["count"] for e in data["edges"]) == 2 * len(flow.steps)
    assert main(["history", "list", str(dst)]) == 0
    assert capsys.readouterr().out.count("export_report") == 2
    assert main(["history", "compare", str(dst), first.run_id[:8], second.run_id[:8]]) == 0
    assert "export_report: A " in capsys.readouterr().out
    assert main(["history", "compare", str(dst), "no-such-run", second.run_id]) == 2


def test_a_miniwob_task_on_other_seeds_keeps_one_graph(tmp_path: Path) -> None:
    dst = tmp_path / "miniwob"
    shutil.copytree(ROOT / "projects" / "miniwob", dst, ignore=shutil.ignore_patterns(".steadyhand"))
    project = load_project(dst)
    with ProjectSession(project, headless=True, evidence="full") as session:  # every state keeps its screenshot
        flow = session.project.flows["click-dialog"]
        for seed in (2001, 2002):
            result = session.run_flow(flow, seed=seed)
            assert result.status == "passed", (seed, result.error)
        g = GraphTable(session.store).load_state_graph(flow_graph_name("click-dialog"))
    assert len(g) >= 2 and {e.kind for e in g.edges()} == {"click"}
    assert all(n.screenshot and (project.data_dir / n.screenshot).is_file() for n in g.nodes())
    assert sum(e.count for e in g.edges()) == 2 * len(flow.steps)
