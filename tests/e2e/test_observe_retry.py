"""The driver's look at a page that a navigation cuts short (tenacity's ``Retrying`` in ``observe``), in real
Chromium: taken again once the document has loaded, three looks at most, and a broken page is not looked at
again.  The cut is made where the look reads each frame's offset (the first call into the page of a look)."""
from __future__ import annotations

from typing import Any

import pytest

from core.domain import BrowserSettings
from core.perception.driver import PageScriptError, PlaywrightDriver
from core.sites.server import CountingSite

pytestmark = pytest.mark.browser

CUT = "Execution context was destroyed, most likely because of a navigation"


def test_a_look_cut_by_a_navigation_is_taken_again_three_looks_at_most_and_a_broken_page_once() -> None:
    with CountingSite({"/": "<!doctype html><html><body><main><button>Send</button></main></body></html>"}) as site:
        driver = PlaywrightDriver(BrowserSettings(), base_url=site.base_url, headless=True)
        driver.open()
        try:
            driver.page.goto(site.base_url + "/", wait_until="load")
            real = driver._frame_offset
            calls = {"n": 0, "cut": 2}

            def cut(frame: Any) -> Any:
                calls["n"] += 1
                if calls["n"] <= calls["cut"]:
                    raise RuntimeError(CUT)
                return real(frame)

            driver._frame_offset = cut  # type: ignore[method-assign]
            obs = driver.observe(screenshot=False)  # two looks cut, the third one whole
            assert calls["n"] == 3 and [c.descriptor.name for c in obs.candidates] == ["Send"]

            calls.update(n=0, cut=5)
            with pytest.raises(RuntimeError, match="context was destroyed"):
                driver.observe(screenshot=False)
            assert calls["n"] == 3  # every look cut: the third one's error, no fourth look

            def broken(frame: Any) -> Any:
                calls["n"] += 1
                raise PageScriptError("TypeError: the page replaced Array.prototype.map")

            calls["n"] = 0
            driver._frame_offset = broken  # type: ignore[method-assign]
            with pytest.raises(PageScriptError):
                driver.observe(screenshot=False)
            assert calls["n"] == 1  # a broken page escalates at once
        finally:
            driver.close()
