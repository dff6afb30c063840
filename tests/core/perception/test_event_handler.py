"""Playwright event handlers of the perception package carry their own signature (no per-event signature read)
and pass every argument of the event on; checked on a real page's console and CDP events."""
import inspect

from core.perception.netwatch import event_handler


def test_handler_passes_the_arguments_and_has_a_ready_signature():
    got = []

    class Owner:
        def on_event(self, event):
            got.append(event)

    h = event_handler(Owner().on_event)
    assert "__signature__" in vars(h)
    assert [p.kind for p in inspect.signature(h).parameters.values()] == [inspect.Parameter.VAR_POSITIONAL]
    h({"requestId": "1"})
    assert got == [{"requestId": "1"}]


def test_a_real_page_delivers_console_and_network_events_through_it(tmp_path):
    from playwright.sync_api import sync_playwright

    from core.perception.browser import CHROMIUM_ARGS, find_chromium

    seen, requests = [], []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=find_chromium(None), headless=True, args=list(CHROMIUM_ARGS))
        try:
            page = browser.new_page()
            page.on("console", event_handler(lambda msg: seen.append((msg.type, msg.text))))
            cdp = page.context.new_cdp_session(page)
            cdp.on("Network.requestWillBeSent", event_handler(lambda e: requests.append(e["request"]["url"])))
            cdp.send("Network.enable")
            page.set_content("<p>x</p>")
            page.evaluate("console.error('boom'); fetch('data:text/plain,hi')")
            page.wait_for_timeout(50)
        finally:
            browser.close()
    assert ("error", "boom") in seen
    assert any(u.startswith("data:text/plain") for u in requests)
