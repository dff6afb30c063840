"""Write one step's target into a flow file, leaving the rest of the file as it was.

Today's flow files are YAML written by :func:`core.project.save_flow` or by
hand (comments, key order, quoting).  An accepted heal or a filled-in
descriptor changes one thing - ``steps[<id>].target`` - and the edit is made
with ruamel.yaml's round-trip mode (:mod:`ruamel.yaml`, ``typ="rt"``, quotes
preserved, the file's own indentation guessed by
:func:`ruamel.yaml.util.load_yaml_guess_indent`): the step's ``target`` is
replaced in its place, or inserted after the step's ``selector`` (else
``action``...) entry when the step has none; comments, key order and
quoting of the step stay.

ruamel.yaml re-folds long plain scalars its own way (4 of the 15 bundled
flows, written by PyYAML at width 100, do not survive a round trip byte for
byte), so the dump is not taken whole: :func:`splice` keeps every step the
edit did not touch, the lines above the steps and those after them, from the
old text byte for byte, and takes only the edited steps from ruamel's dump.
A comment just above a step belongs to that step.

The result is checked before it is returned: parsed again it must equal the
old file's data with only that target changed, and it must load as a flow
(:func:`core.project.loader.flow_from_mapping`).  A layout the splice cannot
follow (the steps in flow style ``[{id: s1, ...}]``) is ruamel's whole dump;
if even that does not parse to the expected data the file is rewritten from
its parsed data (comments are then lost; the diff shows it).

With ``drop_selector=True`` the step's ``selector`` entry goes too: an
accepted heal replaces the element a selector no longer found, so the
selector is stale and would be tried first on every later run.

Errors: :class:`FlowEditError` (no such step, not a flow file) and
:class:`core.project.ProjectError` (the result would not load).
"""
from __future__ import annotations

import copy
import difflib
import hashlib
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError as RuamelError
from ruamel.yaml.scalarstring import SingleQuotedScalarString
from ruamel.yaml.util import load_yaml_guess_indent

from core.project.loader import flow_from_mapping

__all__ = ["FlowEditError", "set_step_target", "unified_diff", "digest", "round_trip_edit"]


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

#: Line widths tried for ruamel's dump: PyYAML's width of :func:`core.project.save_flow`, and "never fold".
_WIDTHS = (100, 4096)

_RESOLVER = yaml.resolver.Resolver()


def digest(text: str | bytes) -> str:
    """SHA-256 hex of a flow file's bytes (UTF-8 for text)."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


def unified_diff(old: str, new: str, name: str) -> str:
    """The unified diff (3 lines of context) from ``old`` to ``new``, labelled ``a/<name>`` / ``b/<name>``."""
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        fromfile=f"a/{name}", tofile=f"b/{name}"))


def to_round_trip(value: Any) -> Any:
    """A plain value (dicts, lists, scalars) as ruamel round-trip nodes, written as save_flow writes it.

    Lists of numbers are in flow style (``[1.0, 2.0]``); a string PyYAML (the
    loader of flow files, YAML 1.1) would read as something else (``yes``,
    ``on``, ``1e3``) is single-quoted, since ruamel speaks YAML 1.2.
    """
    if isinstance(value, Mapping):
        out = CommentedMap()
        for k, v in value.items():
            out[k] = to_round_trip(v)
        return out
    if isinstance(value, (list, tuple)):
        seq = CommentedSeq(to_round_trip(v) for v in value)
        if value and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value):
            seq.fa.set_flow_style()
        return seq
    if isinstance(value, str) and _RESOLVER.resolve(yaml.ScalarNode, value, (True, False)) != "tag:yaml.org,2002:str":
        return SingleQuotedScalarString(value)
    return value


def _yaml(text: str, width: int) -> YAML:
    try:
        _, seq_indent, offset = load_yaml_guess_indent(text)
    except RuamelError:
        seq_indent, offset = 2, 0
    seq_indent, offset = seq_indent or 2, offset or 0
    rt = YAML(typ="rt")
    rt.preserve_quotes = True
    rt.width = width
    rt.indent(mapping=max(seq_indent - offset, 2), sequence=max(seq_indent, 2), offset=offset)
    return rt


def _dump(rt: YAML, doc: Any) -> str:
    out = io.StringIO()
    rt.dump(doc, out)
    return out.getvalue()


def _best_yaml(text: str) -> YAML:
    """The ruamel set-up whose no-op round trip of ``text`` changes the fewest lines."""
    best: tuple[int, YAML] | None = None
    for width in _WIDTHS:
        rt = _yaml(text, width)
        again = _dump(rt, rt.load(text))
        changed = sum(1 for op in difflib.ndiff(text.splitlines(), again.splitlines()) if op[:1] in "+-")
        if best is None or changed < best[0]:
            best = (changed, rt)
        if changed == 0:
            break
    assert best is not None
    return best[1]


@dataclass(frozen=True, slots=True)
class _Item:
    step_id: str
    lead: int   # first line of the comments / blank lines just above the step
    start: int  # the step's "- " line
    end: int    # one past its last line (comments below it belong to what follows)


def _is_aside(line: str) -> bool:
    s = line.strip()
    return not s or s.startswith("#")


def _layout(lines: list[str], doc: Any) -> tuple[list[_Item], int] | None:
    """Each step's lines, and where the lines after the steps begin; None for a layout not one step per block."""
    steps = doc.get("steps") if isinstance(doc, CommentedMap) else None
    if not isinstance(steps, CommentedSeq) or not steps or steps.fa.flow_style():
        return None
    starts: list[int] = []
    for i, item in enumerate(steps):
        if not isinstance(item, CommentedMap) or item.fa.flow_style():
            return None
        at = steps.lc.item(i)[0]
        floor = starts[-1] + 1 if starts else 0
        while at > floor and not lines[at].lstrip().startswith("-"):
            at -= 1
        if not lines[at].lstrip().startswith("-") or (starts and at <= starts[-1]):
            return None
        starts.append(at)
    keys = list(doc)
    after = keys[keys.index("steps") + 1:]
    stop = doc.lc.key(after[0])[0] if after else len(lines)
    leads = []
    for i, at in enumerate(starts):
        floor = starts[i - 1] + 1 if i else 0
        lead = at
        while lead > floor and _is_aside(lines[lead - 1]):
            lead -= 1
        leads.append(lead)
    end = stop
    while end > starts[-1] + 1 and _is_aside(lines[end - 1]):
        end -= 1
    items = [_Item(str(item.get("id")), leads[i], starts[i], leads[i + 1] if i + 1 < len(starts) else end)
             for i, item in enumerate(steps)]
    return items, end


def splice(old_text: str, old_doc: Any, new_text: str, new_doc: Any, *, kept: set[str],
           leads: Mapping[str, str], top_changed: bool) -> str | None:
    """The new text: untouched steps (``kept``) and the lines around the steps from the old text, byte for byte.

    Parameters
    ----------
    old_text, old_doc : str, Any
        The file before the edit and its round-trip load (line positions).
    new_text, new_doc : str, Any
        ruamel's dump after the edit and its round-trip load.
    kept : set[str]
        Ids of the steps the edit did not touch (their old lines are used).
    leads : Mapping[str, str]
        New step id -> old step id whose comment lines above it the new step takes
        (the edited step's own; the first step replacing another takes that one's).
    top_changed : bool
        The edit changed something outside ``steps`` (a new secret): the lines
        around the steps come from ruamel's dump.

    Returns None when either text is not laid out one block step after another.
    """
    old_lines, new_lines = old_text.splitlines(keepends=True), new_text.splitlines(keepends=True)
    old_layout, new_layout = _layout(old_lines, old_doc), _layout(new_lines, new_doc)
    if old_layout is None or new_layout is None:
        return None
    old_items = {it.step_id: it for it in old_layout[0]}
    if len(old_items) != len(old_layout[0]):
        return None
    source, layout = (new_lines, new_layout) if top_changed else (old_lines, old_layout)
    out = source[:layout[0][0].lead]
    for it in new_layout[0]:
        if it.step_id in kept and it.step_id in old_items:
            o = old_items[it.step_id]
            out += old_lines[o.lead:o.end]
            continue
        o = old_items.get(leads.get(it.step_id, ""))
        out += (old_lines[o.lead:o.start] if o else []) + new_lines[it.start:it.end]
    out += source[layout[1]:]
    return "".join(out)


def round_trip_edit(text: str, edit: Callable[[CommentedMap], None], *, kept: set[str],
                    leads: Mapping[str, str], top_changed: bool, expected: Any) -> str | None:
    """``text`` edited by ``edit`` (a function that changes ruamel's round-trip document in place).

    Returns the spliced text (:func:`splice`) when it parses (PyYAML) to
    ``expected``, else ruamel's whole dump when that does, else None (the
    caller rewrites the file from its data).
    """
    if not text.endswith("\n"):
        text += "\n"
    try:
        rt = _best_yaml(text)
        doc = rt.load(text)
        before = rt.load(text)
        edit(doc)
        dumped = _dump(rt, doc)
        spliced = splice(text, before, dumped, rt.load(dumped), kept=kept, leads=leads, top_changed=top_changed)
    except RuamelError:
        return None
    for candidate in (spliced, dumped):
        if candidate is not None and yaml.safe_load(candidate) == expected:
            return candidate
    return None


def _move_tail_comment(old: Any, new: Any) -> None:
    """The comment lines below ``old``'s last entry (they are about what follows it) go below ``new``'s."""
    def last(node: Any) -> tuple[Any, Any] | None:
        while isinstance(node, (CommentedMap, CommentedSeq)) and len(node):
            key = list(node)[-1] if isinstance(node, CommentedMap) else len(node) - 1
            child = node[key]
            if isinstance(child, (CommentedMap, CommentedSeq)) and len(child) and not child.fa.flow_style():
                node = child
                continue
            return node, key
        return None
    src, dst = last(old), last(new)
    if src is None or dst is None:
        return
    slot = 2 if isinstance(src[0], CommentedMap) else 0
    entry = src[0].ca.items.get(src[1])
    token = entry[slot] if entry and len(entry) > slot else None
    if token is None or "\n" not in token.value:
        return
    token.value = token.value[token.value.index("\n"):]  # the end-of-line comment was about the old last line
    dslot = 2 if isinstance(dst[0], CommentedMap) else 0
    dst[0].ca.items.setdefault(dst[1], [None, None, None, None])[dslot] = token


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

    def edit(doc: CommentedMap) -> None:
        step = next(s for s in doc["steps"] if isinstance(s, Mapping) and str(s.get("id")) == step_id)
        new = to_round_trip(dict(target))
        if "target" in step:
            _move_tail_comment(step["target"], new)
            step["target"] = new
        else:
            after = next((name for name in _INSERT_AFTER if name in step), None)
            keys = list(step)
            step.insert(keys.index(after) + 1 if after is not None else len(keys), "target", new)
        if drop_selector and "selector" in step:
            del step["selector"]

    ids = {str(s.get("id")) for s in data["steps"] if isinstance(s, dict)}
    new = round_trip_edit(text, edit, kept=ids - {step_id}, leads={step_id: step_id}, top_changed=False,
                          expected=expected)
    if new is None:
        new = yaml.dump(expected, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    flow_from_mapping(yaml.safe_load(new), path)
    return new
