"""A session's first flow keeps the browser context the browser opened with when no page was ever loaded in
it (issue 20, the cost per flow outside its steps), on the demo project's session, real Chromium.

Before, every flow's reset waited for five round trips to Chromium: the old context's close,
``Browser.new_context``, ``expose_binding``, ``add_init_script`` and ``new_page`` (which starts a renderer) -
for the first flow too, whose old context was the one the browser opened with and never used.  It is kept
now: as fresh as a new one (never navigated, no cookies).  Every later flow still gets a new context, and the
context kept is complete: the keepalive hook in its documents, the network watch sees the first page's
requests, console errors reach the driver.
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api._generated import Browser, BrowserContext

from core.engine.session import ProjectSession
from core.perception.netwatch import NetHook, NetworkWatch
from core.project import load_project

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
#: The Playwright calls a fresh context costs, each waited for (a round trip to Chromium).
WAITED = [(Browser, "new_context"), (BrowserContext, "close"), (BrowserContext, "expose_binding"),
          (BrowserContext, "add_init_script"), (BrowserContext, "new_page")]


@pytest.fixture()
def demo(tmp_path: Path) -> Any:
    dst = tmp_path / "demo"
    shutil.copytree(ROOT / "projects" / "demo", dst, ignore=shutil.ignore_patterns(".steadyhand"))
    return load_project(dst)


def _count_resets(session: ProjectSession, monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Per flow run, the waited Playwright calls made during the site's reset before it (filled as runs go)."""
    resets: list[list[str]] = []
    inside = [False]
    for cls, name in WAITED:
        real = getattr(cls, name)

        def counted(self: Any, *a: Any, _real: Any = real, _name: str = f"{cls.__name__}.{name}", **k: Any) -> Any:
            if inside[0]:
                resets[-1].append(_name)
            return _real(self, *a, **k)

        monkeypatch.setattr(cls, name, counted)
    site = session.site
    real_before = site.before_flow

    def before_flow(flow: Any, driver: Any) -> None:
        resets.append([])
        inside[0] = True
        try:
            real_before(flow, driver)
        finally:
            inside[0] = False

    monkeypatch.setattr(site, "before_flow", before_flow)
    return resets


def test_first_flow_keeps_the_unused_context_later_flows_get_new_ones(demo: Any,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    flow = demo.flows["export_report"]
    with ProjectSession(demo, headless=True) as session:
        opened = session.driver.context
        resets = _count_resets(session, monkeypatch)
        result = session.run_flow(flow)
        assert result.status == "passed", result.error
        driver = session.driver
        assert driver.context is opened
        # the context kept is complete: the keepalive hook in its documents, followed by the network watch
        assert isinstance(getattr(driver.context, "_steadyhand_net_hook", None), NetHook)
        assert driver.page.evaluate("() => window.__steadyhandNetHook === true && !!window.__steadyhand")
        watch = NetworkWatch.of(driver)
        assert watch is not None
        first = [r for r in watch.between(0.0) if r.resource_type == "document"]
        assert first and first[0].url.endswith("/login")  # the flow's first page, seen from its start
        driver.page.evaluate("() => console.error('boom from the page')")
        driver.page.wait_for_timeout(50)
        assert "boom from the page" in driver.console_errors
        second = session.run_flow(flow)
        assert second.status == "passed", second.error
        assert driver.context is not opened and driver._browser.contexts == [driver.context]
        # old: 5 waited calls before every flow; the first flow now makes none
        assert [len(calls) for calls in resets] == [0, 5], resets
        assert driver.contexts == {"made": 1, "unused": 1}


def test_one_flow_session_makes_one_context(demo: Any) -> None:
    """Before, the context the browser opened with was closed unused and a second one made for the flow."""
    with ProjectSession(demo, headless=True) as session:
        opened = session.driver.context
        result = session.run_flow(demo.flows["sort_table"])
        assert result.status == "passed", result.error
        assert session.driver.contexts == {"made": 0, "unused": 1}
        assert session.driver._browser.contexts == [opened] and session.driver.context is opened


def test_a_context_that_loaded_a_page_is_never_kept(demo: Any) -> None:
    """A page loaded by anyone (here by Playwright directly, not the driver's goto) makes the context used."""
    with ProjectSession(demo, headless=True) as session:
        opened = session.driver.context
        session.driver.page.goto(session.site.base_url + "/login")
        session.driver.page.evaluate("() => { document.cookie = 'seen=1'; }")
        session.driver.new_context_page()
        assert session.driver.context is not opened
        assert session.driver.context.cookies() == []
        assert session.driver.contexts == {"made": 1, "unused": 0}
