"""Bundled sites served on 127.0.0.1: a reusable loopback server and the demo app.

``StaticSite`` / ``LoopbackServer`` (``core.sites.server``) serve a folder
and JSON routes; ``DemoSite`` (``core.sites.demo``) is the LeaveDesk demo
target app with its ground-truth log.  ``DemoSite`` is imported lazily so
that ``python -m core.sites.demo`` runs without a double import.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .server import LoopbackServer, Request, Response, StaticSite, content_type_for, file_response

if TYPE_CHECKING:  # pragma: no cover
    from .demo import DEMO_ROOT, DemoSite

__all__ = [
    "LoopbackServer", "StaticSite", "Request", "Response", "content_type_for", "file_response",
    "DemoSite", "DEMO_ROOT",
]


def __getattr__(name: str) -> Any:
    if name in ("DemoSite", "DEMO_ROOT"):
        from . import demo
        return getattr(demo, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
