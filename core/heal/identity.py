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

__all__ = ["IDENTITY_FIELDS", "identity", "old_key", "proposal_key", "same_identity"]

#: Descriptor fields that name the element (see the module docstring for those left out).
IDENTITY_FIELDS: tuple[str, ...] = ("tag", "role", "name", "label", "text", "placeholder", "id", "name_attr",
                                    "type", "href", "test_id", "alt", "title", "frame", "shadow", "container")


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
