"""Edit a step's action, value and expected change in its flow file, in place, and undo it (no Qt).

:func:`edit_step` returns the flow file's text with some top-level entries
of one step set (``action``, ``value``, ``expect``): each entry written on
one line is replaced on that line (a comment after it stays), an entry the
step lacks is added after its ``action`` line at the step's indentation, an
entry set to None is removed.  Every other line stays byte for byte.  The
result is checked as :func:`core.heal.flowfile.set_step_target` checks a
target: parsed again it must be the old file's data with only those entries
changed, and it must load as a flow; a layout the in-place edit cannot
handle (a step in flow style, an entry over several lines) is refused, never
rewritten without its comments.

:func:`write_step_edit` writes it like an accepted heal does (the file must
still be the text the edit was made on - SHA-256 - else nothing is
written; atomic write) and returns a :class:`StepEdit` that
:func:`undo_step_edit` puts back byte for byte while the file is still
the one written.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import yaml

from core.heal.flowfile import digest, unified_diff
from core.project.loader import flow_from_mapping, write_atomic

__all__ = ["EDITABLE", "EXPECT_CHOICES", "StepEditError", "StepEdit", "edit_step", "write_step_edit",
           "undo_step_edit"]

#: The step entries this module edits.
EDITABLE = ("action", "value", "expect")
#: The expected changes a flow file may name (``core.project.schema``), ``auto`` first (the action's default).
EXPECT_CHOICES = ("auto", "navigation", "value", "overlay_open", "overlay_close", "content", "none", "any")


class StepEditError(ValueError):
    """The edit cannot be made or written; the message says why in plain words."""


@dataclass(frozen=True)
class StepEdit:
    """An edit written: the file, its text before and after, the unified diff."""

    path: Path
    old_text: str
    new_text: str
    diff: str


def _scalar(value: Any) -> str:
    """``value`` as one YAML scalar (quoted when plain would read as something else)."""
    text = yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=10_000)
    text = text.strip()
    if text.endswith("\n..."):
        text = text[: -len("\n...")]
    elif text.endswith("..."):
        text = text[:-3].rstrip()
    if "\n" in text:
        raise StepEditError("a value over several lines cannot be written here; edit the flow file by hand")
    return text


def _step_node(text: str, step_id: str) -> yaml.MappingNode:
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    if not isinstance(root, yaml.MappingNode):
        raise StepEditError("not a flow file (no mapping at the top level)")
    steps = next((v for k, v in root.value if k.value == "steps" and isinstance(v, yaml.SequenceNode)), None)
    if steps is None:
        raise StepEditError("not a flow file (no 'steps' list)")
    hits = [n for n in steps.value if isinstance(n, yaml.MappingNode)
            and any(k.value == "id" and str(v.value) == step_id for k, v in n.value)]
    if len(hits) != 1:
        raise StepEditError(f"no step with id \u2018{step_id}\u2019" if not hits else
                            f"{len(hits)} steps with id \u2018{step_id}\u2019")
    return hits[0]


def edit_step(text: str, step_id: str, changes: Mapping[str, Any], *, path: Path | str) -> str:
    """``text`` with step ``step_id``'s entries in ``changes`` (keys of :data:`EDITABLE`) set, None removing one.

    Raises
    ------
    StepEditError
        Unknown entry, no such step, a layout that cannot be edited in place.
    core.project.ProjectError
        The edited file would not load as a flow (an action without the value it needs...).
    """
    unknown = sorted(set(changes) - set(EDITABLE))
    if unknown:
        raise StepEditError(f"only {', '.join(EDITABLE)} can be edited here, not {', '.join(unknown)}")
    data = yaml.safe_load(text)
    expected = copy.deepcopy(data)
    step = next(s for s in expected["steps"] if isinstance(s, dict) and str(s.get("id")) == step_id) \
        if isinstance(expected, dict) and isinstance(expected.get("steps"), list) else None
    node = _step_node(text, step_id)
    if step is None:
        raise StepEditError(f"no step with id \u2018{step_id}\u2019")
    if node.flow_style:
        raise StepEditError("this step is written on one line ({...}); edit the flow file by hand")
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    col = node.value[0][0].start_mark.column
    entries = {k.value: (k, v) for k, v in node.value}
    edits: list[tuple[int, int, list[str]]] = []  # (first line, last line + 1, replacement lines)
    inserts: list[str] = []
    for key, value in changes.items():
        if value is None:
            step.pop(key, None)
        else:
            step[key] = value
        entry = entries.get(key)
        if entry is not None:
            k, v = entry
            if not isinstance(v, yaml.ScalarNode) or v.start_mark.line != v.end_mark.line \
                    or k.start_mark.line != v.start_mark.line or k.start_mark.column != col:
                raise StepEditError(f"the step's \u2018{key}\u2019 is written over several lines; edit the flow "
                                    "file by hand")
            line = lines[k.start_mark.line]
            if value is None:
                if line[:col].strip():
                    raise StepEditError(f"the step's \u2018{key}\u2019 starts its list entry; edit the flow file "
                                        "by hand")
                edits.append((k.start_mark.line, k.start_mark.line + 1, []))
            else:
                new = line[:v.start_mark.column] + _scalar(value) + line[v.end_mark.column:]
                if k.start_mark.line == v.start_mark.line and v.start_mark.column <= k.end_mark.column:
                    raise StepEditError(f"the step's \u2018{key}\u2019 has no value to replace")
                edits.append((k.start_mark.line, k.start_mark.line + 1, [new]))
        elif value is not None:
            inserts.append(" " * col + f"{key}: {_scalar(value)}\n")
    if inserts:
        after = entries.get("action") or entries.get("name") or entries.get("id")
        assert after is not None  # a step has an id (found by it)
        at = after[1].end_mark.line if after[1].end_mark.column > 0 else after[1].end_mark.line - 1
        edits.append((at + 1, at + 1, inserts))
    for first, last, repl in sorted(edits, key=lambda e: e[0], reverse=True):
        lines[first:last] = repl
    new_text = "".join(lines)
    if yaml.safe_load(new_text) != expected:
        raise StepEditError("the flow file's layout does not allow this edit in place; edit it by hand")
    flow_from_mapping(yaml.safe_load(new_text), path)
    return new_text


def write_step_edit(path: Path | str, old_text: str, new_text: str) -> StepEdit:
    """Write ``new_text`` over the flow file at ``path`` if it still holds ``old_text``.

    Raises
    ------
    StepEditError
        The file changed since the edit was made, or cannot be read; nothing written.
    """
    p = Path(path)
    try:
        now = p.read_bytes()
    except OSError as exc:
        raise StepEditError(f"{p.name} cannot be read ({exc.strerror or exc}); nothing written") from None
    if digest(now) != digest(old_text):
        raise StepEditError(f"{p.name} changed on disk since this edit was prepared; nothing written")
    write_atomic(p, new_text.encode("utf-8"))
    return StepEdit(p, old_text, new_text, unified_diff(old_text, new_text, p.name))


def undo_step_edit(edit: StepEdit) -> None:
    """Put the flow file back as it was before ``edit``.

    Raises
    ------
    StepEditError
        The file changed since the edit wrote it; nothing undone.
    """
    try:
        now = edit.path.read_text(encoding="utf-8")
    except OSError as exc:
        raise StepEditError(f"{edit.path.name} cannot be read ({exc.strerror or exc}); nothing undone") from None
    if now != edit.new_text:
        raise StepEditError(f"{edit.path.name} changed since the edit was written; nothing undone")
    write_atomic(edit.path, edit.old_text.encode("utf-8"))
