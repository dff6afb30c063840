"""The one way the end-to-end tests open a real-Chromium driver on a local site (closed whatever happens)."""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from core.domain import BrowserSettings
from core.perception.driver import PlaywrightDriver
from core.sites.server import StaticSite


@contextmanager
def open_driver(base_url: str, settings: BrowserSettings | None = None, **kw: Any) -> Iterator[PlaywrightDriver]:
    """A headless :class:`PlaywrightDriver` on ``base_url`` (keyword arguments go to it), closed on exit."""
    d = PlaywrightDriver(settings or BrowserSettings(), base_url=base_url, headless=True, **kw)
    d.open()
    try:
        yield d
    finally:
        d.close()


@contextmanager
def driver_on(folder: Path, settings: BrowserSettings | None = None) -> Iterator[PlaywrightDriver]:
    """A real-Chromium driver on the static pages of ``folder``, served on 127.0.0.1 (both stopped after)."""
    site = StaticSite(folder)
    site.start()
    try:
        with open_driver(site.base_url, settings) as d:
            yield d
    finally:
        site.stop()
