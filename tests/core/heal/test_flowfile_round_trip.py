"""The flow-file write-back through ruamel.yaml's round trip: a hand-formatted, commented file keeps every byte
the edit did not touch (an accepted heal, then a correction's inserted step), compared line by line."""
from __future__ import annotations

from pathlib import Path

import yaml

from core.domain import Action, ElementDescriptor, Step
from core.heal.corrections import correction_edit, steps_as_mappings
from core.heal.flowfile import set_step_target
from core.project import load_flow

ROOT = Path(__file__).resolve().parents[3]

HAND = """\
# Sign in and export the report.   (hand-written: keep every byte of this)
schema_version: 1
name: export_report
description: "Export the report, with the dialog"
start_url: /login
secrets: [password]

steps:   # in the order a person does them
    # who signs in
  - id: s1
    name: Type the user name
    action: input
    value: "{user}"        # a parameter, double-quoted on purpose
    selector: '#username'
    target:
      role: textbox
      name: User name
      css_path: html > body > div:nth-of-type(1) > section > div:nth-of-type(2) > table > thead > tr > th:nth-of-type(4)
        > a
      bbox: [475.0, 374.4, 330.0, 40.0]

  # the old button, renamed in 2.3
  - id: s2
    name: 'Open the export'
    action: click
    selector: "#export-old"   # stale since 2.3
    target:
      role: button
      name: Export    # the label before the rename
    # the post-condition below is checked after the click
    after:
      url_pattern: /export

  # confirm in the dialog
  - id: s3
    action: click
    target: {role: button, name: Confirm}
# end of the flow
"""

HEALED_S2 = """\
  # the old button, renamed in 2.3
  - id: s2
    name: 'Open the export'
    action: click
    target:
      role: button
      name: Export report (E)
      bbox: [10.0, 20.0, 30.0, 40.0]
    # the post-condition below is checked after the click
    after:
      url_pattern: /export
"""

INSERTED = """\
  - id: s3_h1
    name: Close tip
    action: click
    target:
      tag: button
      role: button
      name: Close tip
"""


def _block(text: str, first: str, last: str) -> tuple[list[str], list[str], list[str]]:
    """The lines before ``first``, from ``first`` through ``last``, and after ``last``."""
    lines = text.splitlines()
    a, b = lines.index(first), lines.index(last)
    return lines[:a], lines[a:b + 1], lines[b + 1:]


def test_a_heal_then_a_correction_change_only_their_lines_of_a_hand_written_file() -> None:
    healed = set_step_target(HAND, "s2", {"role": "button", "name": "Export report (E)",
                                          "bbox": [10.0, 20.0, 30.0, 40.0]}, path="f.yaml", drop_selector=True)
    old_head, old_s2, old_tail = _block(HAND, "  # the old button, renamed in 2.3", "      url_pattern: /export")
    new_head, new_s2, new_tail = _block(healed, "  # the old button, renamed in 2.3", "      url_pattern: /export")
    assert new_head == old_head  # header comment, double quotes, flow list, the folded css_path: byte for byte
    assert new_tail == old_tail  # the step after it and the closing comment
    assert new_s2 == HEALED_S2.splitlines()  # quotes kept, stale selector and its comment gone, comment above after

    tip = Step("x", Action("click"), name="Close tip",
               target=ElementDescriptor(tag="button", role="button", name="Close tip"))
    edit = correction_edit(healed, step_id="s3", meaning="insert", steps=steps_as_mappings("export_report", "", [tip]),
                           path="f.yaml")
    lines, before = edit.new.splitlines(), healed.splitlines()
    at = before.index("      url_pattern: /export") + 1
    assert lines[:at] == before[:at]
    assert lines[at:at + 7] == INSERTED.splitlines()
    assert lines[at + 7:] == before[at:]  # the blank line, the comment above s3 and s3 itself, in place
    assert [line for line in edit.diff.splitlines() if line.startswith(("+", "-"))][2:] == \
        ["+" + line for line in INSERTED.splitlines()]
    data = yaml.safe_load(edit.new)
    assert [s["id"] for s in data["steps"]] == ["s1", "s2", "s3_h1", "s3"]


def test_a_recorded_flow_with_folded_long_lines_keeps_every_other_step_byte_for_byte(tmp_path: Path) -> None:
    # PyYAML folded these lines at width 100; ruamel folds them elsewhere: only the edited step may change
    text = (ROOT / "projects" / "datasette" / "flows" / "books_tour.yaml").read_text(encoding="utf-8")
    step_ids = [s["id"] for s in yaml.safe_load(text)["steps"]]
    edited = step_ids[len(step_ids) // 2]
    out = set_step_target(text, edited, {"role": "link", "name": "Next page"}, path="books_tour.yaml")
    removed = [line for line in text.splitlines() if line not in out.splitlines()]
    old_data, new_data = yaml.safe_load(text), yaml.safe_load(out)
    assert [s for s in new_data["steps"] if s["id"] != edited] == [s for s in old_data["steps"] if s["id"] != edited]
    old_lines, new_lines = text.splitlines(), out.splitlines()
    start = old_lines.index(f"- id: {edited}")
    assert new_lines[:start] == old_lines[:start]
    nxt = step_ids[step_ids.index(edited) + 1]
    assert new_lines[new_lines.index(f"- id: {nxt}"):] == old_lines[old_lines.index(f"- id: {nxt}"):]
    assert removed and all(line.startswith("    ") for line in removed)  # only the old target's lines
    path = tmp_path / "books_tour.yaml"
    path.write_text(out, encoding="utf-8")
    assert next(s for s in load_flow(path).steps if s.id == edited).target.name == "Next page"
