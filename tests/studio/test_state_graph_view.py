"""The state graph dock fed by a real run of the demo app in real Chromium (P4)."""
from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from PySide6.QtCore import Qt

from core.engine.events import ObservationMade, StateGraphChanged
from core.state.graph import flow_graph_name
from studio.main_window import MainWindow
from studio.run_state import RunState
from studio.views.state_graph import VERDICT_COLORS, StateGraphView

ROOT = Path(__file__).resolve().parents[2]


def _fast(root: Path) -> None:
    """The demo's simulated server latency down to 150 ms (800 by default): the same pages, sooner."""
    settings = yaml.safe_load((root / "steadyhand.yaml").read_text())
    settings["site_options"]["latency_ms"] = "150"
    (root / "steadyhand.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))


def test_graph_after_a_real_demo_run_has_one_node_per_distinct_state(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    dst = tmp_path / "demo"
    shutil.copytree(ROOT / "projects" / "demo", dst, ignore=shutil.ignore_patterns(".steadyhand"))
    _fast(dst)
    w = MainWindow(dst, close_timeout=10.0)
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    w.graph_dock.raise_()  # the graph is drawn while its dock is in front (a hidden one is drawn when shown)
    seen: list[object] = []
    w.bridge.event_received.connect(seen.append)
    sizes: list[int] = []  # the graph as drawn after each step's change: it grows during the run
    w.bridge.event_received.connect(
        lambda e: sizes.append(len(w.graph_view.canvas.node_items)) if isinstance(e, StateGraphChanged) else None)
    try:
        assert w.start_run(("export_report",))
        qtbot.waitUntil(lambda: w.state is RunState.FINISHED, timeout=90_000)
    finally:
        w.shutdown()
    view = w.graph_view
    graph = view.graph
    assert graph.name == flow_graph_name("export_report")
    changes = [e for e in seen if isinstance(e, StateGraphChanged)]
    assert len(changes) == len(w.project.flows["export_report"].steps)
    # ground truth from the observations themselves: a state is its (interactive elements, visible text) digest
    observed = {(e.observation.signature.elements_digest, e.observation.signature.text_digest)
                for e in seen if isinstance(e, ObservationMade)}
    assert len(graph) == len(observed) >= 3
    assert sizes == sorted(sizes) and sizes[0] <= 2 and sizes[-1] == len(graph)
    assert len(view.canvas.node_items) == len(graph)
    # the current state is the last step's after-state, outlined in the accent colour
    assert view.current == changes[-1].target.key
    assert view.canvas.node_items[view.current].pen().widthF() > 3
    # typing into the login form leaves its state: self-loops; every arrow is labelled and coloured by verdict
    assert any(e.self_loop and e.kind == "input" for e in graph.edges())
    for e in graph.edges():
        label = view.canvas.edge_labels[(e.source, e.target, e.key)]
        assert label.text().startswith(e.kind)
        assert label.brush().color().name() == VERDICT_COLORS[e.last_verdict]
    # clicking a state's box shows its stored screenshot
    first = graph.nodes()[0]
    other = graph.nodes()[-1]
    view.select_state(other.key)
    pos = view.canvas.node_center(first.key).toPoint()
    qtbot.mouseClick(view.canvas.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert view.selected == first.key
    qtbot.waitUntil(lambda: not view.shot.image.isNull(), timeout=5000)  # read from its file off the GUI thread
    pix = view.shot.pixmap()
    assert pix is not None and not pix.isNull()
    path = view.screenshot_path(first.key)
    assert path is not None and path.is_file() and "/login" in first.url
    assert "visits: 1 in 1 run" in view.details.text()

    # the stored graph reads back the same in a fresh view (what the next run starts from)
    fresh = StateGraphView(dst / ".steadyhand")
    qtbot.addWidget(fresh)
    again = fresh.load_stored(flow_graph_name("export_report"))
    assert {n.key for n in again.nodes()} == {n.key for n in graph.nodes()}
    assert "states" in fresh.header.text()
