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


def flow_project(root: Path, base_url: str, *flows: dict[str, Any], name: str = "Test") -> Any:
    """A project at ``root`` on ``base_url`` (headless, 1280x800) with ``flows`` (flow file mappings, each
    written as ``flows/<its name>.yaml``), loaded."""
    import yaml

    from core.project import load_project

    (root / "flows").mkdir(parents=True)
    settings = {"schema_version": 1, "name": name, "base_url": base_url,
                "browser": {"headless": True, "viewport": {"width": 1280, "height": 800}}}
    (root / "steadyhand.yaml").write_text(yaml.safe_dump(settings, sort_keys=False), encoding="utf-8")
    for flow in flows:
        (root / "flows" / f"{flow['name']}.yaml").write_text(
            yaml.safe_dump(flow, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return load_project(root)
