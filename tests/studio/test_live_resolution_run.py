"""Live view and resolution panel fed by REAL runs of the demo app (engine thread, Playwright, Chromium).

An escalation on a control made unfindable: said plainly, its candidates on the live view, one proposed as a
heal (a proposal in the store), an unconfirmed use-once on an irreversible step ignored by the engine, a
confirmed one finishing the step on the right element.  Box colours (disabled, covered, target), the grid
size, hover descriptors.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import yaml
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QImage

from core.engine.events import HealProposed, ObservationMade, ProposeHeal, TargetResolved, UseCandidate
from core.heal.review import HealReview
from studio.main_window import MainWindow
from studio.run_state import RunState
from studio.views.live_view import COVERED_COLOR, DISABLED_COLOR, TARGET_COLOR

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_MS = 120_000


def _demo(tmp_path: Path, flow: str, variant: str = "baseline") -> Path:
    dst = tmp_path / "demo"
    shutil.copytree(ROOT / "projects" / "demo", dst, ignore=shutil.ignore_patterns(".steadyhand"))
    for f in (dst / "flows").glob("*.yaml"):
        if f.stem != flow:
            f.unlink()
    cfg = dst / "steadyhand.yaml"
    doc = yaml.safe_load(cfg.read_text())
    doc["site_options"]["variant"] = variant
    cfg.write_text(yaml.safe_dump(doc, sort_keys=False))
    return dst


def _render(w: MainWindow) -> QImage:
    return w.live_view.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)


def _near(c: QColor, ref: QColor, tol: int = 40) -> bool:
    return abs(c.red() - ref.red()) <= tol and abs(c.green() - ref.green()) <= tol and abs(c.blue() - ref.blue()) <= tol


def _outline(img: QImage, rect, ref: QColor, inset: float = 0.0) -> bool:  # noqa: ANN001
    """Some pixel of the left edge of ``rect`` (widget px) has the colour ``ref``."""
    x = round(rect.left() - inset)
    ys = range(round(rect.top()) + 2, round(rect.bottom()) - 1)
    return any(_near(img.pixelColor(x + dx, y), ref) for dx in (-1, 0, 1) for y in ys)


def test_an_unfindable_control_is_chosen_from_the_candidates_and_the_step_finishes(qtbot, tmp_path):
    project = _demo(tmp_path, "export_report")
    flow = project / "flows" / "export_report.yaml"
    doc = yaml.safe_load(flow.read_text())
    # "Export report" renamed in the step and made irreversible: the locator abstains, a use-once needs a confirm
    doc["steps"][3]["selector"] = "#no-such-button"
    doc["steps"][3]["target"] = {"tag": "button", "role": "button", "name": "Department"}
    doc["steps"][3]["reversible"] = False
    flow.write_text(yaml.safe_dump(doc, sort_keys=False))
    before_file = flow.read_text()
    w = MainWindow(project, run_on_show=True, close_timeout=15.0)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    qtbot.waitUntil(lambda: w.state is RunState.PAUSED and w.resolution_panel.can_use(), timeout=TIMEOUT_MS)
    panel, lv = w.resolution_panel, w.live_view
    esc = panel.escalation
    assert esc is not None and esc.index == 3 and "use_candidate" in esc.answers
    # said plainly first, by the engine; the jargon is the detail
    assert esc.plain.startswith("'Department' was not found; the closest is 'Export report' (0.")
    assert esc.plain in panel.headline.text() and panel.detail_text == esc.reason and "locator abstained" in esc.reason
    assert esc.plain in w.banner_text.text()
    row = next(r for r in panel.rows() if r.label == "Export report")
    assert row.role == "button" and "irreversible" in row.confirm and row.element is not None

    # the resolution's candidates are on the live view, their labels readable (none overlaps another)
    assert lv.box_state(row.element) == "candidate"
    chips = [r for _t, r in lv.label_rects()]
    assert len(chips) >= 2 and all(not a.intersects(b) for i, a in enumerate(chips) for b in chips[i + 1:])
    # hovering a row of the list outlines it on the live view
    panel.highlight(panel.rows().index(row))
    assert lv.highlight is not None and lv.highlight[0] == row.box and "Export report" in lv.highlight[1]
    # the Approve buttons of settled requests are disabled: grey, dotted
    disabled = [c for c in lv.candidates if not c.enabled and c.descriptor.bbox is not None and not c.covered]
    assert disabled and lv.box_state(disabled[0]) == "disabled"
    img = _render(w)
    assert _outline(img, lv.map_to_widget(disabled[0].descriptor.bbox), DISABLED_COLOR)
    # hovering a box shows its descriptor beside the page
    centre = lv.map_to_widget(row.element.descriptor.bbox).center()
    qtbot.mouseMove(lv, centre.toPoint())
    qtbot.waitUntil(lambda: "box (CSS px)" in panel.element.text())
    assert "Export report" in panel.element.text() and "button" in panel.element.text()
    assert "box (CSS px)" in lv.tooltip_text(row.element)
    # a click on its box selects it in the list (and opens its menu there)
    menu = panel.menu_for(row.ref)
    assert menu is not None and [a.isEnabled() for a in menu.actions()] == [True, True]
    assert panel.select_ref(row.ref) and panel.selected_ref() == row.ref

    # (b) propose it as a heal: a proposal in the store, the escalation keeps waiting
    with qtbot.waitSignal(w.bridge.event_received, timeout=TIMEOUT_MS,
                          check_params_cb=lambda e: isinstance(e, HealProposed)):
        assert panel.propose_heal(row.ref)
    assert "proposed as heal #" in panel.note.text()
    with HealReview(project) as review:
        pending = review.list_pending()
    assert len(pending) == 1 and pending[0].strategy == "chosen"
    assert pending[0].new_target["name"] == "Export report" and pending[0].old_target["name"] == "Department"
    assert w.state is RunState.PAUSED and panel.can_use()

    # an unconfirmed use-once of an irreversible step is no answer: the engine keeps waiting
    w.bridge.send(UseCandidate(row.ref))
    with qtbot.waitSignal(w.bridge.event_received, timeout=TIMEOUT_MS,
                          check_params_cb=lambda e: isinstance(e, HealProposed)):
        w.bridge.send(ProposeHeal(row.ref))  # commands are taken in order: the use-once was seen before it
    assert w.state is RunState.PAUSED and w.escalations_panel.model.open_count == 1

    # (a) use it once, confirmed: the step acts on it and the flow finishes green
    asked = []
    panel.confirm = lambda question, why: asked.append((question, why)) or True
    assert panel.use_once(row.ref)
    assert asked and "irreversible" in asked[0][1]
    qtbot.waitUntil(lambda: w.state is RunState.FINISHED, timeout=TIMEOUT_MS)
    rows = w.steps_panel.model.rows("export_report")
    assert [r.status for r in rows] == ["passed"] * 5  # step 5 confirms the export dialog the chosen button opened
    assert rows[3].strategy == "chosen" and rows[4].strategy == "exact"
    assert flow.read_text() == before_file  # used once: the flow file is untouched
    w.close()


def test_box_colours_grid_size_and_zoom_on_a_page_with_a_popup(qtbot, tmp_path):
    project = _demo(tmp_path, "sort_table", variant="popup")
    w = MainWindow(project, run_on_show=True, close_timeout=15.0)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    seen: list[ObservationMade] = []
    resolved: list[TargetResolved] = []
    w.bridge.event_received.connect(lambda e: seen.append(e) if isinstance(e, ObservationMade) else None)
    w.bridge.event_received.connect(lambda e: resolved.append(e) if isinstance(e, TargetResolved) else None)
    w.show()
    qtbot.waitUntil(lambda: w.state is RunState.FINISHED, timeout=TIMEOUT_MS)
    assert [r.status for r in w.steps_panel.model.rows("sort_table")] == ["passed"] * 5
    lv = w.live_view
    # the page under the unexpected popup: its controls are covered, drawn magenta and hatched
    covered_obs = next(e.observation for e in seen if any(c.covered for c in e.observation.candidates))
    lv.show_resolution(resolved[0].resolution, None)  # no resolution candidates on this page
    lv.set_observation(covered_obs, QImage.fromData(covered_obs.screenshot_png, "PNG"))
    lv.set_target(None)
    cov = next(c for c in covered_obs.candidates if c.covered and c.descriptor.bbox and c.descriptor.bbox.width > 20)
    assert lv.box_state(cov) == "covered"
    assert _outline(_render(w), lv.map_to_widget(cov.descriptor.bbox), COVERED_COLOR)
    # a resolved target: solid amber
    last = resolved[-1]
    obs = next(e.observation for e in reversed(seen) if e.index == last.index and e.when == "before")
    lv.set_observation(obs, QImage.fromData(obs.screenshot_png, "PNG"))
    lv.show_resolution(last.resolution, last.candidate)
    assert last.candidate is not None and lv.box_state(last.candidate) == "target"
    assert _outline(_render(w), lv.map_to_widget(last.candidate.descriptor.bbox), TARGET_COLOR, inset=3)
    assert lv.legend_rect().width() > 100

    # the grid: 10 x 10 by default (P2), any size on request
    assert lv.grid_size() == (10, 10)
    lv.set_grid_visible(True)
    lv.set_grid_size(5, 8)
    labels = [label for label, _r in lv.grid_cells()]
    assert len(labels) == 40 and labels[0] == "A1" and labels[-1] == "E8"
    grid_menu = next(a.menu() for a in lv.context_menu().actions() if a.text() == "Grid size")
    next(a for a in grid_menu.actions() if a.text() == "20 \u00d7 20").trigger()
    assert lv.grid_size() == (20, 20) and len(lv.grid_cells()) == 400

    # zoom around the pointer keeps the page point under it; on a view of a known size (the window's docks
    # leave the live view a size that differs between machines, and the pan bound depends on it)
    z = type(lv)()
    qtbot.addWidget(z)
    z.resize(640, 400)
    z.set_observation(obs, QImage.fromData(obs.screenshot_png, "PNG"))
    z.show_resolution(last.resolution, last.candidate)
    fit = z.image_rect()
    fit_box = z.map_to_widget(last.candidate.descriptor.bbox)
    at = QPointF(fit.x() + fit.width() * 0.4, fit.y() + fit.height() * 0.45)
    css = z.map_to_css(at)
    z.set_zoom(2.0, at)
    assert z.zoom() == 2.0
    back = z.map_to_css(at)
    assert abs(back[0] - css[0]) < 1.0 and abs(back[1] - css[1]) < 1.0
    assert abs(z.map_to_widget(last.candidate.descriptor.bbox).width() - 2.0 * fit_box.width()) < 0.5
    # a drag pans the zoomed page
    before = z.image_rect()
    qtbot.mousePress(z, Qt.MouseButton.LeftButton, pos=at.toPoint())
    qtbot.mouseMove(z, (at + QPointF(-60, -30)).toPoint())
    qtbot.mouseRelease(z, Qt.MouseButton.LeftButton, pos=(at + QPointF(-60, -30)).toPoint())
    assert z.image_rect().x() < before.x() and z.image_rect().y() < before.y()
    lv.set_zoom(2.0)
    assert w.action_zoom_fit.shortcut().toString() == "Ctrl+0"
    w.action_zoom_fit.trigger()
    assert lv.zoom() == 1.0 and lv.pan() == QPointF(0, 0)
    w.action_zoom_in.trigger()
    assert lv.zoom() == 1.25
    lv.setFocus()  # the view itself takes + / - / 0 when it has the focus
    qtbot.keyClick(lv, Qt.Key.Key_Minus)
    assert lv.zoom() == 1.0
    w.close()
