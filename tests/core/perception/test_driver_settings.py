"""The driver takes its browser and wait settings from core.domain (no browser needed for these)."""
from __future__ import annotations

import time
from typing import Any

from core.domain import Assertion, BrowserSettings, WaitSettings
from core.perception.driver import PlaywrightDriver


def driver(**waits: int) -> PlaywrightDriver:
    return PlaywrightDriver(BrowserSettings(viewport_width=1024, viewport_height=700, locale="de-DE"),
                            base_url="http://127.0.0.1:9/", waits=WaitSettings(**waits))


def test_context_options_come_from_the_browser_settings() -> None:
    opts = driver()._context_options()
    assert opts["viewport"] == {"width": 1024, "height": 700}
    assert opts["locale"] == "de-DE" and opts["device_scale_factor"] == 1.0 and opts["timezone_id"] == "UTC"


def test_waits_default_to_the_domain_defaults() -> None:
    assert PlaywrightDriver(BrowserSettings(), base_url="http://x/").waits == WaitSettings()


def quiet_page(d: PlaywrightDriver, quiet_ms: float) -> None:
    probe = {"url": "http://x/", "mutations": 1, "quietMs": quiet_ms, "inflight": 0, "loading": False,
             "ready": "complete"}
    d.probe = lambda: dict(probe)  # type: ignore[method-assign]


def test_wait_settled_ends_at_the_configured_settle_bound() -> None:
    d = driver(settle_max_ms=150, quiet_ms=10_000)
    quiet_page(d, quiet_ms=50.0)  # never quiet enough: the settle bound ends the wait
    t0 = time.monotonic()
    out = d.wait_settled(start={"mutations": 1, "url": "http://x/"})
    waited = time.monotonic() - t0
    assert 0.15 <= waited < 1.0 and out["timed_out"] is False and out["changed"] is False


def test_wait_settled_returns_once_quiet_for_the_configured_time() -> None:
    d = driver(settle_max_ms=5_000, quiet_ms=40)
    quiet_page(d, quiet_ms=50.0)
    t0 = time.monotonic()
    out = d.wait_settled(start={"mutations": 0, "url": "http://x/"})  # the mutation counter moved: a change
    assert time.monotonic() - t0 < 1.0 and out["changed"] is True


def test_wait_settled_gives_up_at_the_configured_loading_bound() -> None:
    d = driver(loading_max_ms=200)
    probe = {"url": "http://x/", "mutations": 1, "quietMs": 0.0, "inflight": 1, "loading": True, "ready": "complete"}
    d.probe = lambda: dict(probe)  # type: ignore[method-assign]
    t0 = time.monotonic()
    out = d.wait_settled(start={"mutations": 1})
    assert 0.2 <= time.monotonic() - t0 < 2.0 and out["timed_out"] is True


def test_assertions_are_polled_for_the_configured_time() -> None:
    calls: list[float] = []

    def never(*_: Any) -> tuple[bool, str]:
        calls.append(time.monotonic())
        return False, "text is 'no'"

    quick, slow = driver(assertion_timeout_ms=0), driver(assertion_timeout_ms=350)
    for d in (quick, slow):
        d._check_once = never  # type: ignore[method-assign]
    a = Assertion(kind="text_equals", expected="yes")
    assert quick.check_assertion(a, "e1", "yes") == (False, "text is 'no'") and len(calls) == 1
    t0 = time.monotonic()
    assert slow.check_assertion(a, "e1", "yes")[0] is False
    assert time.monotonic() - t0 >= 0.35 and len(calls) >= 3
