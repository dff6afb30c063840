"""Write one step's target into a flow file, leaving the rest of the file as it was.

Today's flow files are YAML written by :func:`core.project.save_flow` or by
hand (comments, key order, quoting).  An accepted heal or a filled-in
descriptor changes one thing - ``steps[<id>].target`` - so this module edits
the text in place: it finds the step's ``target:`` entry with PyYAML's
composer (node positions: line and column), replaces those lines with the new
block at the same indentation, or inserts the block after the step's
``selector`` (else ``action``...) entry when the step has none.  Every other
line stays byte for byte.

The result is checked before it is returned: parsed again it must equal the
old file's data with only that target changed, and it must load as a flow
(:func:`core.project.loader.flow_from_mapping`).  A file the in-place edit
cannot handle (a step written in flow style ``{id: s1, ...}``) is rewritten
from its parsed data instead (comments are then lost; the diff shows it).

With ``drop_selector=True`` the step's ``selector`` entry goes too (its
lines removed in place): an accepted heal replaces the element a selector no
longer found, so the selector is stale and would be tried first on every
later run.

Errors: :class:`FlowEditError` (no such step, not a flow file) and
:class:`core.project.ProjectError` (the result would not load).
"""
from __future__ import annotations

import copy
import difflib
import hashlib
from pathlib import Path
from typing import Any, Mapping

import yaml

from core.project.loader import flow_from_mapping

__all__ = ["FlowEditError", "set_step_target", "unified_diff", "digest"]


class FlowEditError(ValueError):
    """The flow file cannot be edited as asked (no such step, no ``steps`` list)."""


class _Dumper(yaml.SafeDumper):
    """Lists of numbers on one line, as :func:`core.project.save_flow` writes them."""


def _represent_list(dumper: yaml.SafeDumper, data: list) -> yaml.Node:
    flow_style = bool(data) and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow_style)


_Dumper.add_representer(list, _represent_list)

#: After which existing entry of a step a new ``target:`` goes (the first present, in this order).
_INSERT_AFTER = ("selector", "timeout_ms", "distance", "direction", "value", "action", "name", "id")


def digest(text: str | bytes) -> str:
    """SHA-256 hex of a flow file's bytes (UTF-8 for text)."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


def unified_diff(old: str, new: str, name: str) -> str:
    """The unified diff (3 lines of context) from ``old`` to ``new``, labelled ``a/<name>`` / ``b/<name>``."""
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        fromfile=f"a/{name}", tofile=f"b/{name}"))


def _last_line(node: yaml.Node) -> int:
    """0-based index of the last line holding text of ``node``."""
    if isinstance(node, yaml.MappingNode):
        return max([_last_line(v) for kv in node.value for v in kv] or [node.start_mark.line])
    if isinstance(node, yaml.SequenceNode):
        last = max([_last_line(v) for v in node.value] or [node.start_mark.line])
        return max(last, node.end_mark.line if node.flow_style else last)
    end = node.end_mark
    return end.line if end.column > 0 or end.line == node.start_mark.line else end.line - 1


def _step_nodes(text: str) -> list[yaml.MappingNode]:
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    if not isinstance(root, yaml.MappingNode):
        raise FlowEditError("not a flow file (no mapping at the top level)")
    for k, v in root.value:
        if k.value == "steps" and isinstance(v, yaml.SequenceNode):
            return [item for item in v.value if isinstance(item, yaml.MappingNode)]
    raise FlowEditError("not a flow file (no 'steps' list)")


def _render(target: Mapping[str, Any], indent: int) -> list[str]:
    body = yaml.dump({"target": dict(target)}, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    return [" " * indent + line + "\n" for line in body.splitlines()]


def _find_step(text: str, step_id: str) -> yaml.MappingNode:
    step = next((n for n in _step_nodes(text)
                 if any(k.value == "id" and str(v.value) == step_id for k, v in n.value)), None)
    if step is None:
        raise FlowEditError(f"no step with id {step_id!r}")
    return step


def _drop_selector_in_place(text: str, step_id: str) -> str | None:
    """The text without the step's ``selector`` entry; None when the layout does not allow it in place."""
    step = _find_step(text, step_id)
    if step.flow_style:
        return None
    entries = list(step.value)
    at = next((i for i, (k, _v) in enumerate(entries) if k.value == "selector"), None)
    if at is None:
        return text
    if at == 0:
        return None  # "- selector: ..." carries the list dash: rewritten from the data instead
    k, v = entries[at]
    if k.start_mark.column != entries[0][0].start_mark.column:
        return None
    lines = text.splitlines(keepends=True)
    first, last = k.start_mark.line, _last_line(v)
    if lines[first][:k.start_mark.column].strip():
        return None  # something else on the selector's line
    return "".join(lines[:first] + lines[last + 1:])


def _edit_in_place(text: str, step_id: str, target: Mapping[str, Any]) -> str | None:
    """The text with the step's target replaced/inserted in place; None when the layout does not allow it."""
    step = _find_step(text, step_id)
    if step.flow_style or not step.value:
        return None
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    col = step.value[0][0].start_mark.column
    entry = next(((k, v) for k, v in step.value if k.value == "target"), None)
    if entry is not None:
        k, v = entry
        if k.start_mark.column != col:
            return None
        first, last = k.start_mark.line, _last_line(v)
        block = _render(target, col)
        prefix = lines[first][:col]
        block[0] = prefix + block[0][col:]  # keep "- " when target is the step's first entry
        return "".join(lines[:first] + block + lines[last + 1:])
    present = {k.value: (k, v) for k, v in step.value}
    after = next((present[name] for name in _INSERT_AFTER if name in present), step.value[-1])
    at = _last_line(after[1]) + 1
    return "".join(lines[:at] + _render(target, col) + lines[at:])


def set_step_target(text: str, step_id: str, target: Mapping[str, Any], *, path: Path | str,
                    drop_selector: bool = False) -> str:
    """``text`` (a flow file) with ``steps[id == step_id].target`` set to ``target`` (a file mapping).

    Parameters
    ----------
    text : str
        The flow file's current text.
    step_id : str
        The step's ``id``.
    target : Mapping[str, Any]
        The new descriptor as the file holds it (``ElementDescriptor.to_mapping()``).
    path : Path | str
        The file, named in errors.
    drop_selector : bool
        Also remove the step's ``selector`` (stale after a heal replaced the
        element it named); no-op when the step has none.

    Raises
    ------
    FlowEditError
        No such step, or not a flow file.
    core.project.ProjectError
        The edited file would not load as a flow.
    """
    data = yaml.safe_load(text)
    if not isinstance(data, dict) or not isinstance(data.get("steps"), list):
        raise FlowEditError("not a flow file (no 'steps' list)")
    expected = copy.deepcopy(data)
    hits = [s for s in expected["steps"] if isinstance(s, dict) and str(s.get("id")) == step_id]
    if len(hits) != 1:
        raise FlowEditError(f"no step with id {step_id!r}" if not hits else f"{len(hits)} steps with id {step_id!r}")
    hits[0]["target"] = yaml.safe_load(yaml.dump(dict(target), Dumper=_Dumper, allow_unicode=True))
    if drop_selector:
        hits[0].pop("selector", None)
    new = _edit_in_place(text, step_id, target)
    if new is not None and drop_selector:
        new = _drop_selector_in_place(new, step_id)
    if new is None or yaml.safe_load(new) != expected:
        new = yaml.dump(expected, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    flow_from_mapping(yaml.safe_load(new), path)
    return new
