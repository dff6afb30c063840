"""What a replay leaves in the store, step by step, read back after the run (the demo's leave request flow,
twice, real Chromium): one step row per step as its outcome says, a before and an after observation, one
resolution and one verdict per attempt, the step's checkpoint as the step ended, its evidence, the "under
way" rows of the steps that write, and the flow's state graph as the engine grew it in memory - the rows the
store's writer thread commits behind the run."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from core.engine.events import StateGraphChanged
from core.engine.session import ProjectSession
from core.project import load_project
from core.state.graph import flow_graph_name
from core.store import GraphTable
from core.store.resumes import ResumeTable

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
FLOW = "leave_request"


def test_a_replayed_flow_leaves_one_whole_record_per_step(tmp_path: Path) -> None:
    path = tmp_path / "demo"
    shutil.copytree(ROOT / "projects" / "demo", path, ignore=shutil.ignore_patterns(".steadyhand"))
    project = load_project(path)
    changes: list[StateGraphChanged] = []
    emit = lambda e: changes.append(e) if isinstance(e, StateGraphChanged) else None  # noqa: E731
    with ProjectSession(project, headless=True, emit=emit) as session:
        results = [session.run_flow(project.flows[FLOW]) for _ in range(2)]
        store = session.store
        for result in results:
            assert result.status == "passed", (result.error, [(o.step_id, o.status, o.error) for o in result.steps])
            rid, n = result.run_id, len(result.steps)
            detail = store.run_detail(rid)
            assert detail is not None and detail.run.status == "passed"
            assert [(s.index, s.step_id, s.status, s.attempts) for s in detail.steps] == [
                (o.index, o.step_id, o.status, o.attempts) for o in result.steps]
            assert sorted((o.index, o.when) for o in detail.observations) == sorted(
                (i, m) for i in range(n) for m in ("before", "after"))
            assert all(o.url.startswith("http://127.0.0.1") and o.element_count > 0 for o in detail.observations)
            assert [(r.index, r.strategy, r.ref) for r in detail.resolutions] == [
                (o.index, o.resolution.strategy, o.resolution.ref) for o in result.steps if o.resolution is not None]
            assert [(v.index, v.kind) for v in detail.verdicts] == [
                (o.index, o.verdict.kind) for o in result.steps if o.verdict is not None]
            checkpoints = store.checkpoints(rid)
            assert [(c["index"], c["step_id"], c["step_state"]) for c in checkpoints] == [
                (o.index, o.step_id, "success") for o in result.steps]
            assert any(c["side_effects"] for c in checkpoints)  # the submit wrote: kept as the step ended
            evidence = store.step_evidence(rid)
            assert [(e.index, e.evidence.attempt) for e in evidence] == [(o.index, o.attempts) for o in result.steps]
            state = ResumeTable(store).state(rid)
            assert state is not None and state.acts and set(state.acts) <= set(range(n))
        # the graph as stored is the graph the engine kept in memory: each node and edge as last announced
        name = flow_graph_name(FLOW)
        graph = GraphTable(store).load_state_graph(name)
    assert changes and all(c.graph == name for c in changes)
    nodes = {n.key: (n.visits, n.runs, n.last_run_id) for c in changes for n in (c.source, c.target)}
    edges = {(c.edge.source, c.edge.target, c.edge.key): (c.edge.count, dict(c.edge.verdicts)) for c in changes}
    assert {n.key: (n.visits, n.runs, n.last_run_id) for n in graph.nodes()} == nodes
    assert {(e.source, e.target, e.key): (e.count, dict(e.verdicts)) for e in graph.edges()} == edges
    assert sum(count for count, _ in edges.values()) == sum(len(r.steps) for r in results)
