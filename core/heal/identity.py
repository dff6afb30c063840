"""What makes two heal proposals the same one: flow, step, and the identity of old and new descriptors.

A descriptor's *identity* is the part of it that says which element it is
(:data:`IDENTITY_FIELDS`: tag, role, accessible name, label, text,
placeholder, id, name attribute, type, href, test id, alt, title, frame,
shadow hosts, container).  Geometry (box, viewport, device pixel ratio), the
CSS path and XPath, classes, neighbours, anchor and crop are left out: they
move with every relayout and async noise, and a proposal seen again on a
page whose button moved 3 px is the same proposal, counted again.

Keys are SHA-1 hex digests of a canonical JSON text (sorted keys): stable
across processes and Python versions.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping

from core.domain import ElementDescriptor

__all__ = ["IDENTITY_FIELDS", "CHANGE_ORDER", "identity", "old_key", "proposal_key", "same_identity", "element_label",
           "change_label"]

#: Descriptor fields that name the element (see the module docstring for those left out).
IDENTITY_FIELDS: tuple[str, ...] = ("tag", "role", "name", "label", "text", "placeholder", "id", "name_attr",
                                    "type", "href", "test_id", "alt", "title", "frame", "shadow", "container")


#: The identity fields a heal line names when the element's label (role and name) stayed the same, in the
#: order a person recognises them, with the word each is said by; at most :data:`CHANGES_SHOWN` of them.
CHANGE_ORDER: tuple[tuple[str, str], ...] = (
    ("id", "id"), ("test_id", "test id"), ("label", "label"), ("name", "name"), ("text", "text"),
    ("placeholder", "placeholder"), ("name_attr", "name attribute"), ("type", "type"), ("href", "link"),
    ("alt", "alt text"), ("title", "title"), ("role", "role"), ("tag", "tag"), ("container", "container"),
    ("frame", "frame"), ("shadow", "shadow host"))
#: How many changed fields a heal line names (the rest are counted: "2 more").
CHANGES_SHOWN = 3
#: Characters of a name in a label (``button 'Sign in'``) and of a value in a change (``id a -> b``).
LABEL_CHARS = 40
VALUE_CHARS = 30


def element_label(target: ElementDescriptor | Mapping[str, Any], *, width: int = LABEL_CHARS) -> str:
    """How a heal line names an element: its role (else tag) and its name, label, text, placeholder or id, the
    name cut to ``width`` characters (``"button 'Sign in'"``)."""
    d = target.to_mapping() if isinstance(target, ElementDescriptor) else (target or {})
    name = d.get("name") or d.get("label") or d.get("text") or d.get("placeholder") or d.get("id") or ""
    return f"{d.get('role') or d.get('tag') or 'element'} {str(name)[:width]!r}"


def _shown(value: str) -> str:
    if not value:
        return "(none)"
    value = value if len(value) <= VALUE_CHARS else value[:VALUE_CHARS - 3] + "..."
    return repr(value) if any(ch.isspace() for ch in value) else value


def change_label(old: ElementDescriptor | Mapping[str, Any], new: ElementDescriptor | Mapping[str, Any], *,
                 width: int = LABEL_CHARS, shown: int = CHANGES_SHOWN) -> str:
    """One line saying what a heal changes: ``"button 'Export report' -> button 'Export report (E)'"`` when the
    label differs; when it reads the same, the label once and the identity fields that differ
    (:data:`CHANGE_ORDER`, at most ``shown``): ``"button 'Sign in' (id signin -> btn-signin)"``.
    An element whose identity fields are all the same: ``"button 'Sign in' (no field it is named by changed)"``.
    """
    a, b = element_label(old, width=width), element_label(new, width=width)
    if a != b:
        return f"{a} -> {b}"
    was, now = identity(old or {}), identity(new or {})
    changed = [(f, word) for f, word in CHANGE_ORDER if was.get(f, "") != now.get(f, "")]
    if not changed:
        return f"{a} (no field it is named by changed)"
    parts = [f"{word} {_shown(was.get(f, ''))} -> {_shown(now.get(f, ''))}" for f, word in changed[:shown]]
    more = f"; {len(changed) - shown} more" if len(changed) > shown else ""
    return f"{a} ({'; '.join(parts)}{more})"


def identity(target: ElementDescriptor | Mapping[str, Any]) -> dict[str, str]:
    """The non-empty identity fields of a descriptor (or of its file mapping), as ``{field: text}``."""
    if isinstance(target, ElementDescriptor):
        values = {f: getattr(target, f) for f in IDENTITY_FIELDS}
    else:
        values = {f: target.get(f, "") for f in IDENTITY_FIELDS}
    return {f: str(v) for f, v in values.items() if v not in ("", None)}


def _digest(*parts: Any) -> str:
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def old_key(flow: str, step_id: str, old: ElementDescriptor | Mapping[str, Any]) -> str:
    """Key of (flow, step, old descriptor): finds the pending heals of a step as the flow file has it now."""
    return _digest("old", flow, step_id, identity(old))


def proposal_key(flow: str, step_id: str, old: ElementDescriptor | Mapping[str, Any],
                 new: ElementDescriptor | Mapping[str, Any], kind: str = "heal") -> str:
    """Key of one proposal: (kind, flow, step, old identity, new identity) - one row per key."""
    return _digest("proposal", kind, flow, step_id, identity(old), identity(new))


def same_identity(a: ElementDescriptor | Mapping[str, Any], b: ElementDescriptor | Mapping[str, Any]) -> bool:
    """True when both descriptors name the element by the same identity fields."""
    return identity(a) == identity(b)
