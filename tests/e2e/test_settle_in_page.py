"""The settle wait inside the page (core/perception/driver.py ``_settle_in_page``), in Chromium.

It answers in one call with the polling loop's rules: a change then quiet, nothing within the idle
bound, or the slice over - and leaves a navigation to the polling loop.
"""
from __future__ import annotations

from dataclasses import replace

import pytest

from core.domain import BrowserSettings
from core.perception.driver import SETTLE_NAVIGATED_TRIES, PlaywrightDriver

pytestmark = pytest.mark.browser

PAGE = ("data:text/html,<button id=b onclick=\"setTimeout(() => document.body.append(Object.assign("
        "document.createElement('p'), {textContent: 'late'})), 60)\">Go</button><a id=n href='about:blank'>away</a>")


@pytest.fixture
def driver():
    d = PlaywrightDriver(BrowserSettings(), base_url="http://127.0.0.1:9/", headless=True)
    d.open()
    try:
        d.goto(PAGE)
        yield d
    finally:
        d.close()


def test_a_change_then_quiet_ends_the_wait_in_one_call(driver) -> None:
    start = driver.probe()
    driver.page.click("#b")
    got = driver._settle_in_page(start["mutations"], start["url"], 120.0, 2000.0, 5000.0)
    assert got == {"done": True, "changed": True, "timed_out": False, "moving": False, "arriving": False}  # nothing animates
    r = driver.wait_settled(start=driver.probe(), idle_ms=150)  # nothing more happens: the idle bound ends it
    assert r["changed"] is False and r["timed_out"] is False and 150 <= r["ms"] < 1500


def test_no_change_ends_at_the_idle_bound_and_a_slice_can_end_first(driver) -> None:
    start = driver.probe()
    assert driver._settle_in_page(start["mutations"], start["url"], 120.0, 100.0, 5000.0) == {
        "done": True, "changed": False, "timed_out": False, "moving": False, "arriving": False}
    # the slice (here: the limit, 80 ms) is shorter than the idle bound: over, not done, not changed
    assert driver._settle_in_page(start["mutations"], start["url"], 120.0, 1000.0, 80.0)["timed_out"] is True


def test_the_answer_says_whether_an_animation_still_runs(driver) -> None:
    start = driver.probe()
    driver.page.evaluate("() => document.body.animate([{opacity: 0}, {opacity: 1}], {duration: 2000})")
    got = driver._settle_in_page(start["mutations"], start["url"], 40.0, 100.0, 5000.0)
    assert got is not None and got["done"] is True and got["moving"] is True


def test_a_navigation_is_left_to_the_polling_loop(driver) -> None:
    start = driver.probe()
    driver.page.evaluate("() => setTimeout(() => { location.href = 'about:blank'; }, 300)")  # after the wait began
    assert driver._settle_in_page(start["mutations"], start["url"], 120.0, 2000.0, 5000.0) is None
    r = driver.wait_settled(start=start)
    assert r["changed"] is True and r["timed_out"] is False


def test_a_navigation_a_script_starts_after_a_request_holds_the_fast_wait_until_the_new_page(tmp_path) -> None:
    """A sign-in's script posts, then goes to the next page (``location.assign``): once the request is answered
    nothing is pending on the old page, but the fast wait must not end there - the page is about to be
    replaced (the next page takes 150 ms to answer).  It ends on the new page, changed; a link to a download
    and a navigation a script cancels do not hold it."""
    import time as _time

    from core.sites.server import LoopbackServer, Response

    server = LoopbackServer()
    page = ("<!doctype html><title>Sign in</title><button id=go onclick=\"fetch('/api', {method: 'POST'})"
            ".then(() => location.assign('/next'))\">Sign in</button>"
            "<a id=dl href='/file.csv' download>Export</a>"
            "<a id=spa href='/elsewhere'>Elsewhere</a><script>document.getElementById('spa').addEventListener("
            "'click', (e) => e.preventDefault())</script>")
    server.route("GET", "/start", lambda req: Response.text(page, 200, "text/html; charset=utf-8"))
    server.route("POST", "/api", lambda req: Response.json({"ok": True}))

    def slow(req):
        _time.sleep(0.15)
        return Response.text("<!doctype html><title>Next</title><h1>Welcome</h1>", 200, "text/html; charset=utf-8")

    server.route("GET", "/next", slow)
    server.route("GET", "/file.csv", lambda req: Response.text("a,b\n", 200, "text/csv"))
    server.route("GET", "/report.csv", lambda req: Response.text("a,b\n", 200, "text/csv").with_headers(
        {"Content-Disposition": "attachment; filename=report.csv"}))
    with server:
        d = PlaywrightDriver(BrowserSettings(), base_url=server.base_url, headless=True)
        d.open()
        try:
            for link in ("#dl", "#spa"):  # neither leaves the page: the fast wait ends at once, unchanged
                d.goto("/start")
                start = d.probe()
                d.page.click(link)
                got = d.wait_settled(start=start, quiet_ms=40, idle_ms=3000, react_from=start["timerSeq"])
                assert got.get("early") is True and got["ms"] < 1500 and "/start" in d.page.url, (link, got)
            # a plain link the server answers as an attachment: the page cannot tell it from a navigation, so
            # it may hold the wait - at most LEAVE_MS, then the wait ends where it is
            from core.perception.driver import LEAVE_MS

            d.goto("/start")
            d.page.evaluate("() => { const a = document.createElement('a'); a.id = 'att'; a.href = '/report.csv';"
                            " a.textContent = 'Report'; document.body.append(a); }")
            start = d.probe()
            d.page.click("#att")
            got = d.wait_settled(start=start, quiet_ms=40, idle_ms=3000, react_from=start["timerSeq"])
            assert got["timed_out"] is False and got["ms"] < LEAVE_MS + 1500, got
            d.goto("/start")
            start = d.probe()
            d.page.click("#go")
            got = d.wait_settled(start=start, quiet_ms=40, react_from=start["timerSeq"])
            assert got["changed"] is True and got["timed_out"] is False
            assert d.page.url.endswith("/next") and d.probe()["url"].endswith("/next")
        finally:
            d.close()


def _leaving_for(next_page: str):
    """A server whose ``/start`` links to ``/next``, which answers ``next_page`` after 150 ms."""
    import time as _time

    from core.sites.server import LoopbackServer, Response

    server = LoopbackServer()
    start = "<!doctype html><title>List</title><a id=go href='/next'>New</a>"

    def slow(req):
        _time.sleep(0.15)
        return Response.text(next_page, 200, "text/html; charset=utf-8")

    server.route("GET", "/start", lambda req: Response.text(start, 200, "text/html; charset=utf-8"))
    server.route("GET", "/next", slow)
    return server


def test_a_wait_with_the_next_steps_reads_that_meets_a_navigation_keeps_them_for_the_new_page(tmp_path) -> None:
    """The settle wait carries the next step's reads (``then``: its locator matched in the same call); the click
    leaves for a page that answers in 150 ms, so Playwright destroys the call's document under it.  That is no
    selector Playwright refused: the wait goes on in the new document with the reads, never again without them
    on the page being left (one call less, and the reads are of the page the next step acts on)."""

    from core.perception.pagefacts import TOKEN_JS

    server = _leaving_for("<!doctype html><title>New</title><button id=save>Save</button>")
    with server:
        d = PlaywrightDriver(BrowserSettings(), base_url=server.base_url, headless=True)
        d.open()
        try:
            d.goto("/start")
            d.observe(screenshot=False, ax=False)  # a light look: the settle wait takes the next one
            calls: list[bool] = []
            real = d._settle_in_page

            def spy(*args, **kw):
                calls.append(kw.get("then") is not None)
                return real(*args, **kw)

            d._settle_in_page = spy
            before = d.probe()
            d.page.click("#go", no_wait_after=True)
            then = ("internal:role=button[name=\"Save\"s]", TOKEN_JS, None, None)
            r = d.wait_settled(start=before, quiet_ms=40.0, look=True, then=then)
            assert r["changed"] is True and r["timed_out"] is False, r
            assert d.page.url.endswith("/next")
            assert calls and all(calls), calls  # every wait took the reads along
        finally:
            d.close()


def test_a_fast_wait_that_meets_a_navigation_ends_in_the_new_page_by_the_fast_rule(tmp_path) -> None:
    """The click leaves for a page that answers in 150 ms and renders its form in ten slices 15 ms apart (a
    chain of start-up timers).  The fast wait (``react_from``, the probe's document ``origin``) goes on in the
    new document by the fast rule - loaded whole, calm, none of that document's own reactions pending - not
    after the 40 ms quiet time: it says so (``early``), and the whole form is there when it ends."""


    nxt = ("<!doctype html><title>New</title><main id=m></main><script>let n = 0; const add = () => { n += 1; "
           "document.getElementById('m').append(Object.assign(document.createElement('p'), {textContent: 'row ' + n}));"
           " if (n < 10) setTimeout(add, 15); else document.getElementById('m').insertAdjacentHTML('beforeend', "
           "'<button id=late>Save</button>'); }; setTimeout(add, 15);</script>")
    server = _leaving_for(nxt)
    with server:
        d = PlaywrightDriver(BrowserSettings(), base_url=server.base_url, headless=True)
        d.open()
        try:
            for _ in range(3):
                d.goto("/start")
                before = d.probe()
                assert isinstance(before.get("origin"), (int, float))  # the document's performance.timeOrigin
                d.page.click("#go", no_wait_after=True)
                # a loaded machine's pause is no quiet time, and no idle time either (a CI run ended it by the
                # 500 ms idle rule once, the new page's timers slowed down by the load)
                r = d.wait_settled(start=before, quiet_ms=1000.0, idle_ms=5000.0, react_from=before["timerSeq"])
                assert r["changed"] is True and r["timed_out"] is False, r
                assert d.page.url.endswith("/next")
                assert r.get("early") is True, r
                assert d.evaluate("() => !!document.getElementById('late')"), "the wait ended before the timer ran"
        finally:
            d.close()


def test_a_wait_whose_document_a_navigation_destroyed_goes_on_in_the_new_one_without_probing_first(tmp_path) -> None:
    """The click leaves for a page that answers in 150 ms: the in-page wait's document is destroyed under it.  The
    wait is sent again at once (the call waits for the new document's context), not after a probe, a wait for
    the new document's DOMContentLoaded and a second probe (three round trips after every navigating step); the
    next step's reads go along, and the wait ends with the new page there."""
    from core.perception.pagefacts import TOKEN_JS

    server = _leaving_for("<!doctype html><title>New</title><button id=save>Save</button>")
    with server:
        d = PlaywrightDriver(BrowserSettings(), base_url=server.base_url, headless=True)
        d.open()
        try:
            for _ in range(2):
                d.goto("/start")
                d.observe(screenshot=False, ax=False)
                calls: list[str] = []
                real_settle, real_probe = d._settle_in_page, d.probe

                def settle(*args, calls=calls, real_settle=real_settle, **kw):
                    out = real_settle(*args, **kw)
                    calls.append("settle " + ("none" if out is None else "done" if out.get("done") else "slice"))
                    return out

                def probe(*args, calls=calls, real_probe=real_probe, **kw):
                    calls.append("probe")
                    return real_probe(*args, **kw)

                d._settle_in_page, d.probe = settle, probe
                before = real_probe()
                d.page.click("#go", no_wait_after=True)
                then = ("internal:role=button[name=\"Save\"s]", TOKEN_JS, None, None)
                r = d.wait_settled(start=before, quiet_ms=40.0, react_from=before["timerSeq"], look=True, then=then)
                del d._settle_in_page, d.probe
                assert r["changed"] is True and r["timed_out"] is False, r
                assert d.page.url.endswith("/next")
                if calls[0] == "settle done":  # the page answered before the call reached it: nothing to show here
                    continue
                # the wait that met the old document, then the new one's at once (again if the first resend met
                # the old one on its way out), never a probe for it
                assert calls[0] == "settle none" and calls[-1] == "settle done" and "probe" not in calls, calls
                assert len(calls) <= 1 + SETTLE_NAVIGATED_TRIES, calls
                return
            pytest.fail("the navigation never met the wait in the page being left (the page answered too soon)")
        finally:
            d.close()


def test_a_page_loaded_by_goto_is_settled_by_the_new_document_rule() -> None:
    """``goto`` waits for the page it loaded as the settle wait does for a document an action navigated to: once
    it loaded whole, was calm and none of its own start-up timers is pending (``early``), not after the quiet
    time since its last change - and the page's whole start-up render is there when it ends."""
    from core.sites.server import LoopbackServer, Response

    page = ("<!doctype html><title>Slices</title><main id=m></main><script>let n = 0; const add = () => { n += 1; "
            "document.getElementById('m').append(Object.assign(document.createElement('p'), {textContent: 'row ' + n}));"
            " if (n < 10) setTimeout(add, 15); else document.getElementById('m').insertAdjacentHTML('beforeend', "
            "'<button id=late>Save</button>'); }; setTimeout(add, 15);</script>")
    server = LoopbackServer()
    server.route("GET", "/slices", lambda req: Response.text(page, 200, "text/html; charset=utf-8"))
    with server:
        d = PlaywrightDriver(BrowserSettings(), base_url=server.base_url, headless=True)
        d.open()
        try:
            results: list[dict] = []
            real = d.wait_settled

            def spy(**kw):
                results.append(real(**kw))
                return results[-1]

            d.wait_settled = spy
            # a loaded machine's pause is neither quiet time (quiet_ms) nor idle time (settle_max_ms)
            d.waits = replace(d.waits, settle_max_ms=5000)
            for _ in range(3):
                d.goto("/slices", quiet_ms=1000.0, look=True)
                assert d.evaluate("() => !!document.getElementById('late')"), "the wait ended before the last slice"
            assert [r.get("early") for r in results] == [True, True, True], results
        finally:
            d.close()


def test_a_step_with_text_assertions_has_them_checked_on_the_text_its_settle_wait_read(driver) -> None:
    """``wait_settled(look=True, text=True)`` reads the page's text in its own round trip; ``check_now`` judges a
    text assertion on it with no call into the page - right after the wait only: once something else was asked
    of the page, or for the polling check, the page is read again."""
    from core.domain import Assertion

    calls: list[str] = []
    real = driver._bounded

    def counted(obj, method, *args, **kw):
        calls.append(method)
        return real(obj, method, *args, **kw)

    driver.observe(screenshot=False, ax=False)  # a light look: the settle wait takes the next one
    before = driver.probe()
    driver.page.click("#b")
    driver.wait_settled(start=before, quiet_ms=40.0, react_from=before["timerSeq"], look=True, text=True)
    driver._bounded = counted
    try:
        seen = Assertion("text_appears", "late")
        assert driver.check_now(seen, None, "late") == (True, "text 'late' appears")
        assert driver.check_now(Assertion("text_absent", "gone"), None, "gone")[0] is True
        assert calls == [], calls  # judged on the text the wait read
        driver.evaluate("() => document.body.append('more')")  # anything else asked of the page: read again
        calls.clear()
        assert driver.check_now(seen, None, "late")[0] is True
        assert "evaluate" in calls, calls
        calls.clear()
        assert driver.check_assertion(seen, None, "late")[0] is True
        assert "evaluate" in calls, calls
    finally:
        del driver._bounded
