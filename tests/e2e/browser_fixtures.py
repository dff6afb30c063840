"""The one way the end-to-end tests open a real-Chromium driver on a local site (closed whatever happens)."""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

from core.domain import BrowserSettings
from core.perception.driver import PlaywrightDriver


@contextmanager
def open_driver(base_url: str, settings: BrowserSettings | None = None, **kw: Any) -> Iterator[PlaywrightDriver]:
    """A headless :class:`PlaywrightDriver` on ``base_url`` (keyword arguments go to it), closed on exit."""
    d = PlaywrightDriver(settings or BrowserSettings(), base_url=base_url, headless=True, **kw)
    d.open()
    try:
        yield d
    finally:
        d.close()
