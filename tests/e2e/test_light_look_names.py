"""The light look (``observe(ax=False)``, the fast path's) names an element as the full look does, in Chromium.

A light look names the elements Chromium's accessibility tree did not cover in the page
(``pageNameOf`` in core/perception/page_lib.js). A decorative part marked ``aria-hidden`` - a
logo's letter, an icon's glyph - is no part of an accessible name; when the page named it in, the
fingerprint of a screen seen by the studio (full looks) and by ``steadyhand run`` (light looks)
differed on every page with such a link ("link text changed from 'LeaveDesk' to 'L LeaveDesk'"),
and each CLI run kept the studio's baselines flagged as changed.
"""
from __future__ import annotations

import pytest

from core.domain import BrowserSettings
from core.perception.driver import PlaywrightDriver

pytestmark = pytest.mark.browser

# the demo app's brand link and a close button with an icon glyph, both with an aria-hidden part
PAGE = ("data:text/html;charset=utf-8,<a href='/requests'><span aria-hidden=true style='display:inline-block'>L</span>"
        "LeaveDesk</a><button><span aria-hidden=true>x</span> Close</button><button>Plain</button>")


def _names(obs) -> dict[str, str]:
    return {c.descriptor.role: c.descriptor.name for c in obs.candidates if c.descriptor.name != "Plain"}


def test_a_light_look_leaves_aria_hidden_parts_out_of_names_as_the_full_look_does() -> None:
    d = PlaywrightDriver(BrowserSettings(), base_url="http://127.0.0.1:9/", headless=True)
    d.open()
    try:
        d.goto(PAGE)
        full = _names(d.observe(ax=True))
        d.goto(PAGE + "<p>a new document: no kept tree entry covers its elements</p>")
        light = _names(d.observe(ax=False))
    finally:
        d.close()
    assert full == {"link": "LeaveDesk", "button": "Close"}
    assert light == full


# icon-only controls whose glyph an icon font draws with CSS generated content (Bootstrap's glyphicons, as
# flask-admin's list view has them): the browser names them by the glyph, not by their title; one glyph is
# aria-hidden (then the title names it), one sits in ::after
ICONS = ("data:text/html;charset=utf-8,<style>.pen::before{content:'\\270f'} .bin::after{content:'\\1F5D1'}"
         "</style><a href='/edit' title='Edit Record'><span class='pen'></span></a>"
         "<button title='Delete'><span class='bin'></span></button>"
         "<a href='/view' title='View Record'><span class='pen' aria-hidden='true'></span></a>")


def test_a_light_look_names_an_icon_only_control_by_its_css_glyph_as_the_full_look_does() -> None:
    d = PlaywrightDriver(BrowserSettings(), base_url="http://127.0.0.1:9/", headless=True)
    d.open()
    try:
        d.goto(ICONS)
        full = {c.descriptor.name for c in d.observe(ax=True).candidates}
        d.goto(ICONS + "<p>a new document: no kept tree entry covers its elements</p>")
        light = {c.descriptor.name for c in d.observe(ax=False).candidates}
        # the name Playwright's own role locator matches (what the exported script and the fast path act through)
        assert d.page.get_by_role("link", name="\u270f", exact=True).count() == 1
    finally:
        d.close()
    assert full == {"\u270f", "\U0001F5D1", "View Record"}
    assert light == full
