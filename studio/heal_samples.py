"""Sample review items for the heal review preview: a real diff of a sample flow file, sample screenshots.

The items follow :class:`studio.views.heal_review.ReviewItem`; accepting or
rejecting one changes only the item in memory (nothing is written).
"""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Mapping

from core.heal.flowfile import set_step_target, unified_diff

from .samples import SAMPLE_DPR, render_page, sample_page
from .views.heal_review import ReviewEvidence, ReviewItem

__all__ = ["SampleHealItem", "SampleHealSource", "SAMPLE_FLOW_TEXT"]

SAMPLE_FLOW_TEXT = """\
schema_version: 1
name: export_report
description: Export the quarterly report as CSV
start_url: /reports
steps:
- id: s1
  name: Open the reports page
  action: navigate
  value: /reports
- id: s3
  name: Click Export   # the primary button
  action: click
  selector: '#export'
  target:
    tag: button
    role: button
    name: Export report
    id: export
    bbox: [1024.0, 90.0, 100.0, 36.0]
    viewport: [1280, 720]
    device_pixel_ratio: 1.25
"""

_NEW = {"tag": "button", "role": "button", "name": "Export", "id": "btn-export", "css_path": "button#btn-export",
        "bbox": [1024.0, 90.0, 100.0, 36.0], "viewport": [1280, 720], "device_pixel_ratio": 1.25}


class SampleHealItem:
    """One sample heal: 'Export report' (#export) became 'Export' (#btn-export) on the sample reports page."""

    kind = "heal"
    editable = True

    def __init__(self, folder: Path, n: int = 1) -> None:
        self.key = f"sample:{n}"
        self.status = "pending"
        self.title = f"#{n} export_report \u00b7 step 2 Click Export"
        self.subtitle = "button \u2018Export report\u2019 \u2192 button \u2018Export\u2019 \u00b7 fuzzy_text 0.86"
        import yaml  # noqa: PLC0415

        self.old: Mapping[str, Any] = yaml.safe_load(SAMPLE_FLOW_TEXT)["steps"][1]["target"]
        self.new: Mapping[str, Any] = dict(_NEW)
        self.before = folder / "before.png"
        self.after = folder / "after.png"
        if not self.before.is_file():
            self.before.write_bytes(render_page(sample_page("reports"), dpr=SAMPLE_DPR))
            self.after.write_bytes(render_page(sample_page("reports_exported"), dpr=SAMPLE_DPR))
        self.flow_file = ""

    def evidence(self) -> ReviewEvidence:
        old_box = (1010.0, 84.0, 120.0, 44.0)  # where the recording saw it
        return ReviewEvidence(self.before, self.after, old_box, tuple(_NEW["bbox"]), SAMPLE_DPR, "fuzzy_text", 0.86,
                              0.41, ({"ref": "e12", "score": 0.86, "label": "button 'Export'"},
                                     {"ref": "e13", "score": 0.45, "label": "button 'Download'"}),
                              "fuzzy_text: 'Export report' ~ 'Export' 0.86, runner-up 'Download' 0.45",
                              ("first seen in run 20260302-101500; seen 1, reused 0, reuse failed 0",))

    def diff(self, new: Mapping[str, Any] | None = None) -> str:
        out = set_step_target(SAMPLE_FLOW_TEXT, "s3", dict(new or self.new), path="flows/export_report.yaml",
                              drop_selector=True)
        return unified_diff(SAMPLE_FLOW_TEXT, out, "flows/export_report.yaml")

    def accept(self, new: Mapping[str, Any] | None = None) -> str:
        d = self.diff(new)
        self.status = "accepted"
        return d

    def reject(self, reason: str) -> None:
        self.status = "rejected"


class SampleHealSource:
    """Two sample items (kept between refreshes, so accepting one moves it out of the pending queue)."""

    def __init__(self) -> None:
        folder = Path(tempfile.mkdtemp(prefix="steadyhand-heal-sample-"))
        self._items = [SampleHealItem(folder, 1), SampleHealItem(folder, 2)]
        self._items[1].title = "#2 export_report \u00b7 step 2 Click Export (second run)"

    def items(self, *, all_states: bool = False) -> list[ReviewItem]:
        return [i for i in self._items if all_states or i.status == "pending"]
