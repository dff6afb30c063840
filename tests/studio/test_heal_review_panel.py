"""The heal review panel over proposals of a real run: the demo's tweaked variant in real Chromium.

One CLI run of ``export_report`` on the tweaked app heals two steps (Sign in
moved and lost its id; "Export report" became "Export report (E)") and leaves
two pending proposals.  Each test reviews a copy of that project: accepting
shows the diff first and writes exactly it (the stale selector goes too);
rejecting stores the reason; an edited descriptor is what gets written.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from core.heal import unified_diff
from core.heal.review import HealReview
from core.project import load_flow, load_project
from studio.views.heal_review import HealReviewPanel, HealSource

ROOT = Path(__file__).resolve().parents[2]
FLOW = "export_report"


@pytest.fixture(scope="module")
def healed(tmp_path_factory) -> Path:
    dst = tmp_path_factory.mktemp("heal-review") / "demo-tweaked"
    shutil.copytree(ROOT / "projects" / "demo", dst, ignore=shutil.ignore_patterns(".steadyhand"))
    settings = yaml.safe_load((dst / "steadyhand.yaml").read_text())
    settings["site_options"]["variant"] = "tweaked"
    (dst / "steadyhand.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))
    r = subprocess.run([sys.executable, "-m", "core.cli", "run", str(dst), "--flow", FLOW, "--headless"], cwd=ROOT,
                       env=dict(os.environ), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return dst


@pytest.fixture
def project(healed, tmp_path) -> Path:
    dst = tmp_path / "p"
    shutil.copytree(healed, dst)
    return dst


def _panel(qtbot, root: Path, **kw) -> HealReviewPanel:  # noqa: ANN001
    panel = HealReviewPanel([HealSource(root)], root=root, **kw)
    qtbot.addWidget(panel)
    panel.resize(1180, 560)
    panel.show()
    return panel


def _select(panel: HealReviewPanel, new_name: str) -> None:
    row = next(i for i, it in enumerate(panel.items) if it.new.get("name") == new_name)
    panel.queue.setCurrentRow(row)


def test_accept_shows_the_diff_first_then_writes_exactly_it(qtbot, project) -> None:
    flow_file = project / "flows" / f"{FLOW}.yaml"
    original = flow_file.read_text()
    seen: list[tuple[str, str]] = []

    def confirm(_parent, title, diff) -> bool:  # noqa: ANN001
        seen.append((diff, flow_file.read_text()))
        return True

    panel = _panel(qtbot, project, confirm=confirm)
    assert len(panel.items) == 2 and panel.empty.isHidden()
    _select(panel, "Export report (E)")
    shown = panel.diff_view.toPlainText()
    assert "+    name: Export report (E)" in shown and "-  selector: '#export-report'" in shown
    assert panel.fields.rowCount() > 3 and any(
        panel.fields.item(r, 0).text() == "* name" for r in range(panel.fields.rowCount()))
    assert panel.before.image is not None and panel.after.image is not None and len(panel.before.boxes) == 2
    assert "fuzzy_text" in panel.scores.text() and "margin" in panel.scores.text()

    with qtbot.waitSignal(panel.flow_written) as written:
        assert panel.accept_current()
    (diff, text_when_asked), = seen
    assert text_when_asked == original  # asked before anything was written
    assert unified_diff(original, flow_file.read_text(), f"flows/{FLOW}.yaml") == diff
    assert Path(written.args[0]) == flow_file
    step = next(s for s in load_flow(flow_file).steps if s.id == "s4")
    assert step.target.name == "Export report (E)" and step.selector == ""  # no stale selector left
    assert FLOW in load_project(project).flows
    assert panel.wait_read()  # the queue is read again off the GUI thread
    qtbot.waitUntil(lambda: [it.new.get("name") for it in panel.items] == ["Sign in"])  # out of the pending queue


def test_cancel_writes_nothing_and_reject_stores_the_reason(qtbot, project) -> None:
    flow_file = project / "flows" / f"{FLOW}.yaml"
    original = flow_file.read_text()
    panel = _panel(qtbot, project, confirm=lambda *_a: False, ask_reason=lambda *_a: "not the same control")
    _select(panel, "Export report (E)")
    assert not panel.accept_current()
    assert flow_file.read_text() == original and len(panel.items) == 2
    key = panel.current().key
    with qtbot.waitSignal(panel.reviewed) as reviewed:
        assert panel.reject_current()
    assert reviewed.args == [key, "rejected"]
    with HealReview(project) as review:
        rec = review.get(int(key.split(":")[1]))
    assert (rec.status, rec.reason) == ("rejected", "not the same control")
    assert panel.wait_read()
    qtbot.waitUntil(lambda: len(panel.items) == 1)
    assert flow_file.read_text() == original


def test_an_edited_descriptor_is_written_and_a_changed_file_is_refused_in_the_panel(qtbot, project) -> None:
    flow_file = project / "flows" / f"{FLOW}.yaml"
    panel = _panel(qtbot, project, confirm=lambda *_a: True)
    _select(panel, "Export report (E)")
    edited = dict(panel.current().new, name="Export report (E) edited")
    assert "+    name: Export report (E) edited" in panel.current().diff(edited)
    bad = dict(edited, colour="red")
    assert not panel.accept_current(bad)
    assert "unknown field colour" in panel.error.text() and panel.error.isVisible()

    flow_file.write_text(flow_file.read_text() + "# edited by hand\n")
    panel.refresh()
    _select(panel, "Sign in")
    assert "changed on disk" in panel.error.text() and not panel.accept_button.isEnabled()
    flow_file.write_text(flow_file.read_text().replace("# edited by hand\n", ""))
    panel.refresh()
    _select(panel, "Export report (E)")
    assert panel.accept_current(edited)
    assert next(s for s in load_flow(flow_file).steps if s.id == "s4").target.name == "Export report (E) edited"


def test_no_store_yet_shows_an_empty_state(qtbot, tmp_path) -> None:
    shutil.copytree(ROOT / "projects" / "demo", tmp_path / "d", ignore=shutil.ignore_patterns(".steadyhand"))
    panel = _panel(qtbot, tmp_path / "d")
    assert panel.items == [] and panel.empty.isVisible() and "Nothing to review" in panel.empty.text()
    assert not (tmp_path / "d" / ".steadyhand").exists()


def test_the_window_dock_accepts_and_reloads_the_project(qtbot, project) -> None:
    from studio.main_window import MainWindow
    from studio.testing import RecordingEngine

    w = MainWindow(project, engine_factory=RecordingEngine.factory([]), close_timeout=5.0)
    qtbot.addWidget(w)
    w.show()
    w.show_heal_review()
    assert w.heal_dock.isVisible() and len(w.heal_review.items) == 2
    w.heal_review._confirm = lambda *_a: True  # noqa: SLF001 - the dialog's answer
    _select(w.heal_review, "Export report (E)")
    assert w.heal_review.accept_current()
    step = next(s for s in w.project.flows[FLOW].steps if s.id == "s4")  # reloaded from the written file
    assert step.target.name == "Export report (E)" and step.selector == ""
    assert "flow file written" in w.event_log.toPlainText()
    w.shutdown()
