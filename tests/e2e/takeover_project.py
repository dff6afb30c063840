"""A copy of the demo project whose flows name controls the page does not have: takeovers are needed.

``export_report`` step 4 clicks "Print the summary" (a button this release of
the app does not have: the locator chain abstains, the control is unfindable)
where the page has "Export report"; with ``password=True`` step 2 types into
a "Passphrase" field the login page does not have either.
"""
from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_PRINT = '''- id: s4
  name: Print the summary
  action: click
  selector: '#print-summary'
  target:
    tag: button
    role: button
    name: Print the summary
    text: Print the summary
    id: print-summary
    type: button
    css_path: button#print-summary
    bbox: [40.0, 700.0, 120.0, 39.8]
    viewport: [1280, 800]
    device_pixel_ratio: 1.0
  expect: overlay_open
  after:
    dialog: true
    dialog_name: Export report
'''

_PASSPHRASE = '''- id: s2
  name: Type the passphrase
  action: input
  value: '{password}'
  selector: '#passphrase'
  target:
    tag: input
    role: textbox
    name: Passphrase
    label: Passphrase
    id: passphrase
    type: password
    css_path: input#passphrase
    bbox: [40.0, 700.0, 330.0, 40.0]
    viewport: [1280, 800]
    device_pixel_ratio: 1.0
'''


def _swap(text: str, step_id: str, next_id: str, block: str) -> str:
    start, end = text.index(f"- id: {step_id}\n"), text.index(f"- id: {next_id}\n")
    return text[:start] + block + text[end:]


def broken_demo(dest: Path, *, password: bool = False, variant: str = "baseline") -> Path:
    """Copy ``projects/demo`` to ``dest`` (no latency, no store) with the unfindable controls; returns it."""
    shutil.copytree(ROOT / "projects" / "demo", dest, ignore=shutil.ignore_patterns(".steadyhand"))
    cfg = dest / "steadyhand.yaml"
    cfg.write_text(cfg.read_text(encoding="utf-8").replace('latency_ms: "800"', 'latency_ms: "0"')
                   .replace("variant: baseline", f"variant: {variant}"), encoding="utf-8")
    flow = dest / "flows" / "export_report.yaml"
    text = _swap(flow.read_text(encoding="utf-8"), "s4", "s5", _PRINT)
    if password:
        text = _swap(text, "s2", "s3", _PASSPHRASE)
    flow.write_text(text, encoding="utf-8")
    return dest
