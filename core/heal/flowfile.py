"""Write one step's target into a flow file, leaving the rest of the file as it was.

Today's flow files are YAML written by :func:`core.project.save_flow` or by
hand (comments, key order, quoting).  An accepted heal or a filled-in
descriptor changes one thing - ``steps[<id>].target`` - and the edit is made
with ruamel.yaml's round-trip mode (:mod:`ruamel.yaml`, ``typ="rt"``, quotes
preserved, the file's own indentation of its ``steps`` list): the step's ``target`` is
replaced in its place, or inserted after the step's ``selector`` (else
``action``...) entry when the step has none; comments, key order and
quoting of the step stay.

ruamel.yaml re-folds long plain scalars its own way (4 of the 15 bundled
flows, written by PyYAML at width 100, do not survive a round trip byte for
byte), so the dump is not taken whole: :func:`splice` keeps every step the
edit did not touch, the lines above the steps and those after them, from the
old text byte for byte, and takes only the edited steps from ruamel (dumped
alone: a 1,000-step file is not dumped and loaded again for one target).
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
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError as RuamelError
from ruamel.yaml.scalarstring import SingleQuotedScalarString

from core.project.loader import flow_from_mapping

__all__ = ["FlowEditError", "set_step_target", "unified_diff", "digest", "round_trip_edit", "to_round_trip", "splice"]


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
#: The top-level ``steps:`` line (a comment may follow it).
_STEPS_KEY = re.compile(r"^steps:\s*(#.*)?$")


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


def _guess_indent(lines: list[str]) -> tuple[int, int, int]:
    """(mapping, sequence, offset) indentation of the file's ``steps`` list, as ruamel's ``YAML.indent`` takes it.

    Read from the text (a YAML load costs as much as the edit): the first list item under ``steps:`` gives
    the dash's column (offset) and its content's (sequence); the first nested key below that item's first
    mapping value gives the mapping indentation.  Defaults: save_flow's 2, 2, 0.
    """
    at = next((i for i, ln in enumerate(lines) if _STEPS_KEY.match(ln)), None)
    if at is None:
        return 2, 2, 0
    dash = next((ln for ln in lines[at + 1:] if not _is_aside(ln)), "")
    if not dash.lstrip().startswith("-"):
        return 2, 2, 0
    offset = len(dash) - len(dash.lstrip(" "))
    rest = dash.lstrip(" ")[1:]
    sequence = offset + 1 + len(rest) - len(rest.lstrip(" "))
    mapping = 2
    for i in range(at + 1, len(lines) - 1):
        ln, nxt = lines[i], lines[i + 1]
        col = len(ln) - len(ln.lstrip(" "))
        if col == sequence and ln.rstrip().endswith(":") and not _is_aside(nxt):
            mapping = max(2, (len(nxt) - len(nxt.lstrip(" "))) - col)
            break
    return mapping, max(sequence, offset + 2), offset


def _yaml(lines: list[str], width: int) -> YAML:
    mapping, sequence, offset = _guess_indent(lines)
    rt = YAML(typ="rt")
    rt.preserve_quotes = True
    rt.width = width
    rt.indent(mapping=mapping, sequence=sequence, offset=offset)
    return rt


def _dump(rt: YAML, doc: Any) -> str:
    out = io.StringIO()
    rt.dump(doc, out)
    return out.getvalue()


def _changed(a: str, b: str) -> int:
    """Lines of ``a`` missing from ``b`` and the other way round (as multisets: cheap, order aside)."""
    ca, cb = Counter(a.splitlines()), Counter(b.splitlines())
    return sum(((ca - cb) + (cb - ca)).values())


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


def _render(rt: YAML, items: list[Any]) -> dict[str, list[str]] | None:
    """ruamel's lines of each step of ``items`` (a dump of a document holding just them), by id.

    A step's lines are the same in that small document as in the whole file (the ``steps`` list is a
    top-level key either way), and dumping them alone costs a fraction of the whole file's dump and load.
    None when the dump is not one block step after another.
    """
    if not items:
        return {}
    mini = CommentedMap()
    mini["steps"] = CommentedSeq(items)
    text = _dump(rt, mini)
    lines = text.splitlines(keepends=True)
    layout = _layout(lines, rt.load(text))
    if layout is None:
        return None
    return {it.step_id: lines[it.start:it.end] for it in layout[0]}


def splice(old_lines: list[str], old_layout: tuple[list[_Item], int], order: Sequence[str],
           rendered: Mapping[str, list[str]], *, kept: set[str], leads: Mapping[str, str],
           around: tuple[list[str], list[str]] | None = None) -> str | None:
    """The new text: untouched steps (``kept``) and the lines around the steps from the old text, byte for byte.

    Parameters
    ----------
    old_lines, old_layout : list[str], tuple
        The file's lines before the edit, and where its steps are (:func:`_layout` of its round-trip load).
    order : Sequence[str]
        The step ids after the edit, in order.
    rendered : Mapping[str, list[str]]
        ruamel's lines of each step not kept (:func:`_render`).
    kept : set[str]
        Ids of the steps the edit did not touch (their old lines are used).
    leads : Mapping[str, str]
        New step id -> old step id whose comment lines above it the new step takes
        (the edited step's own; the first step replacing another takes that one's).
    around : tuple[list[str], list[str]] | None
        The lines above and below the steps when the edit changed something there (a new secret: from
        ruamel's whole dump); None: the old ones.

    Returns None when a step is neither kept nor rendered, or the old file has an id twice.
    """
    old_items = {it.step_id: it for it in old_layout[0]}
    if len(old_items) != len(old_layout[0]):
        return None
    out = old_lines[:old_layout[0][0].lead] if around is None else list(around[0])
    for sid in order:
        if sid in kept and sid in old_items:
            o = old_items[sid]
            out += old_lines[o.lead:o.end]
            continue
        if sid not in rendered:
            return None
        o = old_items.get(leads.get(sid, ""))
        out += (old_lines[o.lead:o.start] if o else []) + rendered[sid]
    out += old_lines[old_layout[1]:] if around is None else around[1]
    return "".join(out)


def _id(item: Any) -> str:
    return str(item.get("id")) if isinstance(item, Mapping) else ""


def round_trip_edit(text: str, edit: Callable[[CommentedMap], None], *, kept: set[str],
                    leads: Mapping[str, str], top_changed: bool, expected: Any) -> tuple[str, Any] | None:
    """``text`` edited by ``edit`` (a function that changes ruamel's round-trip document in place).

    Returns the spliced text (:func:`splice`) and its data when it parses (PyYAML) to ``expected``, else
    ruamel's whole dump when that does, else None (the caller rewrites the file from its data).  One ruamel
    load of the file; the edited steps are dumped alone, at the width (:data:`_WIDTHS`) that reproduces
    their old lines best; the whole file is dumped only when the edit changed something outside the steps
    or the splice did not parse to ``expected``.
    """
    if not text.endswith("\n"):
        text += "\n"
    lines = text.splitlines(keepends=True)
    try:
        rt = _yaml(lines, _WIDTHS[0])
        doc = rt.load(text)
        old_layout = _layout(lines, doc)
        touched = [s for s in doc["steps"] if _id(s) not in kept] if old_layout is not None else []
        if touched:  # the width that reproduces the touched steps' lines as they are (PyYAML folded at 100)
            at = {it.step_id: it for it in old_layout[0]}
            was = "".join("".join(lines[at[_id(s)].start:at[_id(s)].end]) for s in touched if _id(s) in at)
            best = None
            for width in _WIDTHS:
                cand = _yaml(lines, width)
                got = _render(cand, touched) or {}
                changed = _changed(was, "".join("".join(v) for v in got.values()))
                if best is None or changed < best[0]:
                    best = (changed, cand)
                if changed == 0:
                    break
            rt = best[1]  # type: ignore[index]
        edit(doc)
        order = [_id(s) for s in doc["steps"]]
        spliced = None
        if old_layout is not None and not top_changed:
            rendered = _render(rt, [s for s in doc["steps"] if _id(s) not in kept])
            if rendered is not None:
                spliced = splice(lines, old_layout, order, rendered, kept=kept, leads=leads)
        candidates = [spliced] if spliced is not None else []
        data = yaml.safe_load(spliced) if spliced is not None else None
        if data == expected:
            return spliced, data  # type: ignore[return-value]
        dumped = _dump(rt, doc)
        whole = _layout(dumped.splitlines(keepends=True), rt.load(dumped)) if old_layout is not None else None
        if whole is not None and old_layout is not None:
            new_lines = dumped.splitlines(keepends=True)
            rendered = {it.step_id: new_lines[it.start:it.end] for it in whole[0]}
            around = (new_lines[:whole[0][0].lead], new_lines[whole[1]:]) if top_changed else None
            again = splice(lines, old_layout, order, rendered, kept=kept, leads=leads, around=around)
            if again is not None and again not in candidates:
                candidates.append(again)
                data = yaml.safe_load(again)
                if data == expected:
                    return again, data
        data = yaml.safe_load(dumped)
        if data == expected:
            return dumped, data
    except RuamelError:
        return None
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
    done = round_trip_edit(text, edit, kept=ids - {step_id}, leads={step_id: step_id}, top_changed=False,
                           expected=expected)
    if done is None:
        new = yaml.dump(expected, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
        done = new, yaml.safe_load(new)
    flow_from_mapping(done[1], path)
    return done[0]
