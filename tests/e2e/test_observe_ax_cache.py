"""Chromium's accessibility tree is read again only when the DOM changed (real Chromium).

Reading the tree (``DOM.getDocument`` + ``Accessibility.getFullAXTree``) was most of an observation's cost on
the demo's /requests page.  An observation of a page whose frames saw no DOM mutation since the tree was
read reuses the entries the page library kept; a mutation, a new document, or an element the kept entries
do not cover (a menu shown by CSS ``:hover`` alone) reads it again - names stay the browser's.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from core.domain import BrowserSettings
from core.perception.driver import PlaywrightDriver
from core.sites.server import StaticSite

pytestmark = pytest.mark.browser


def test_the_tree_is_read_again_only_after_a_change() -> None:
    site = StaticSite(Path(__file__).parent / "fixtures" / "components")
    site.start()
    driver = PlaywrightDriver(BrowserSettings(), base_url=site.base_url, headless=True)
    driver.open()
    reads: list[int] = []
    real = driver.ax_maps

    def counted(frames):  # type: ignore[no-untyped-def]
        reads.append(len(frames))
        return real(frames)

    driver.ax_maps = counted  # type: ignore[method-assign]
    try:
        driver.goto("/menu.html")
        names = lambda: {c.descriptor.name for c in driver.observe(screenshot=False).candidates}  # noqa: E731
        assert "Save now" in names() and len(reads) == 1
        assert "Save now" in names() and len(reads) == 1  # unchanged page: the kept entries name it
        driver.page.evaluate("() => document.getElementById('save').setAttribute('aria-label', 'Save later')")
        assert "Save later" in names() and len(reads) == 2
        driver.page.hover(".menu")  # the link appears through CSS alone: no DOM mutation
        got = names()
        assert len(reads) == 3
        # the browser's name (the aria-hidden star left out), not the page library's "★ Profile"
        assert "Profile" in got and not any("\u2605" in n for n in got)
        driver.goto("/menu.html")
        names()
        assert len(reads) == 4  # a new document
    finally:
        driver.close()
        site.stop()
