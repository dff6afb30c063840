"""The next flow's fresh context is made while a flow runs (issue 20, the cost per flow outside its steps), on
the demo project's session, real Chromium.

Before, every flow's reset waited for five round trips to Chromium: the old context's close,
``Browser.new_context``, ``expose_binding``, ``add_init_script`` and ``new_page`` (which starts a renderer).
The old context's close is now sent and not waited for, from a session's third flow on the context is taken
ready-made (made once the previous flow's steps were over, while the session kept its records), and a
session's first flow keeps the context the browser opened with when nothing loaded a page in it: none of those five calls is made while the flow's reset waits.  The context taken is still fresh and complete:
the keepalive hook in its documents, the network watch sees the first page's requests, console errors reach
the driver, and no old context is left open.
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


def test_third_flow_takes_its_context_ready_made(demo: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    flow = demo.flows["export_report"]
    with ProjectSession(demo, headless=True) as session:
        resets = _count_resets(session, monkeypatch)
        results = [session.run_flow(flow) for _ in range(3)]
        assert [r.status for r in results] == ["passed"] * 3, [r.error for r in results]
        # old: 5 waited calls before every flow; now the first flow keeps the context the browser opened with
        # (never navigated), the old context's close is never waited for, and the third flow's context was
        # made once the second flow's steps were over, while its records were kept
        assert [len(calls) for calls in resets] == [0, 4, 0], resets
        assert not any("BrowserContext.close" in calls for calls in resets)
        driver = session.driver
        assert driver.contexts == {"made_waiting": 2, "made_ahead": 1, "unused": 1}  # open() (flow 1), flow 2
        # the context taken is complete: the keepalive hook in its documents, followed by the network watch
        assert isinstance(getattr(driver.context, "_steadyhand_net_hook", None), NetHook)
        assert driver.page.evaluate("() => window.__steadyhandNetHook === true and !!window.__steadyhand"
                                    .replace(" and ", " && "))
        watch = NetworkWatch.of(driver)
        assert watch is not None
        first = [r for r in watch.between(0.0) if r.resource_type == "document"]
        assert first and first[0].url.endswith("/login")  # the flow's first page, seen from its start
        driver.page.evaluate("() => console.error('boom from the page')")
        driver.page.wait_for_timeout(50)
        assert "boom from the page" in driver.console_errors
        # the old contexts are closed: the current one and the next flow's, made ahead
        contexts = driver._browser.contexts
        assert len(contexts) == 2 and driver.context in contexts
        browser = driver._browser
    assert not browser.is_connected()


def test_one_flow_session_makes_one_context_and_none_ahead(demo: Any) -> None:
    """Before, the context the browser opened with was closed unused and a second one made for the flow."""
    with ProjectSession(demo, headless=True) as session:
        opened = session.driver.context
        result = session.run_flow(demo.flows["sort_table"])
        assert result.status == "passed", result.error
        assert session.driver.contexts == {"made_waiting": 1, "made_ahead": 0, "unused": 1}
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
        assert session.driver.contexts == {"made_waiting": 2, "made_ahead": 0, "unused": 0}
