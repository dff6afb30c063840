"""The network watch's keepalive hook goes in with every fresh context the driver opens, before its first page:
documents have it from their start, a watch made later only follows the marks (no binding exposed on a live
page, no script run in its frames), and a keepalive fetch is still told from a plain one."""
from __future__ import annotations

from core.perception.netwatch import NetHook, NetworkWatch
from tests.e2e.browser_fixtures import driver_on

PAGE = """<!doctype html><title>t</title>
<button onclick="fetch('/ping', {method: 'POST', keepalive: true}); fetch('/save', {method: 'POST'})">Go</button>"""


def test_fresh_context_has_the_hook_and_the_watch_tells_keepalive(tmp_path) -> None:
    (tmp_path / "index.html").write_text(PAGE)
    with driver_on(tmp_path) as d:
        d.new_context_page()
        assert isinstance(getattr(d._context, "_steadyhand_net_hook", None), NetHook)
        d.goto("/index.html")
        assert d.page.evaluate("() => window.__steadyhandNetHook === true")  # from the init script alone
        sent = []
        real = d.page.main_frame.evaluate
        d.page.main_frame.evaluate = lambda *a, **k: sent.append(a) or real(*a, **k)  # type: ignore[method-assign]
        try:
            watch = NetworkWatch.of(d)
        finally:
            del d.page.main_frame.evaluate
        assert watch is not None and sent == []  # nothing run in the page to follow it
        import time

        t0 = time.monotonic()
        d.page.click("button")
        d.page.wait_for_timeout(300)
        seen = {r.url.rsplit("/", 1)[-1]: r for r in watch.between(t0) if r.method == "POST"}
        assert seen["ping"].keepalive is True
        assert seen["save"].keepalive is False
