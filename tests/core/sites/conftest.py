"""Fixtures of the bundled-site tests: a demo site per test, one shared Chromium.

The Chromium (Playwright sync API, /usr/bin/chromium, CONTRACTS launch args)
is launched once and shared by every test of this folder; it is closed when
the run leaves the folder, because a second ``sync_playwright()`` cannot
start in the same thread while one is alive (other folders start their own).
"""
from __future__ import annotations

import http.cookiejar
import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from playwright.sync_api import Browser, Page, Playwright, sync_playwright

from core.sites.demo import DEMO_PASSWORD, DemoSite

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
VIEWPORT = {"width": 1280, "height": 800}
_HERE = Path(__file__).resolve().parent


class _SharedChromium:
    """Lazily launched Chromium shared by the tests of this folder."""

    def __init__(self) -> None:
        self._pw: Playwright | None = None
        self._browser: Browser | None = None

    def get(self) -> Browser:
        if self._browser is None or not self._browser.is_connected():
            self.close()
            self._pw = sync_playwright().start()
            self._browser = self._pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        return self._browser

    def close(self) -> None:
        if self._browser is not None:
            try:
                self._browser.close()
            finally:
                self._browser = None
        if self._pw is not None:
            try:
                self._pw.stop()
            finally:
                self._pw = None


_SHARED = _SharedChromium()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """After the test's own teardown: close the shared Chromium when the next test is elsewhere."""
    try:
        return (yield)
    finally:
        if nextitem is None or not Path(str(nextitem.path)).resolve().is_relative_to(_HERE):
            _SHARED.close()


@pytest.fixture(scope="session")
def chromium() -> Iterator[_SharedChromium]:
    """Session-wide handle on the shared Chromium (closed at the end at the latest)."""
    yield _SHARED
    _SHARED.close()


@pytest.fixture
def browser(chromium: _SharedChromium) -> Browser:
    """The shared Chromium browser."""
    return chromium.get()


@pytest.fixture
def site() -> Iterator[DemoSite]:
    """A fresh demo site (known state, today 2026-03-02, 300 ms submit latency)."""
    s = DemoSite(latency_ms=300)
    s.start()
    yield s
    s.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A page in a fresh browser context (no cookies), 1280x800 CSS px."""
    context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
    context.set_default_timeout(10_000)
    pg = context.new_page()
    yield pg
    context.close()


@pytest.fixture
def sign_in(site: DemoSite) -> Callable[..., None]:
    """``sign_in(page, user="alice", password=DEMO_PASSWORD)``: log in through the login page."""
    def _sign_in(page: Page, user: str = "alice", password: str = DEMO_PASSWORD) -> None:
        page.goto(site.url("/login"))
        page.get_by_label("User name").fill(user)
        page.get_by_label("Password").fill(password)
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url(site.url("/requests"))
        page.locator("tbody tr").first.wait_for()
    return _sign_in


class ApiClient:
    """Minimal JSON client with a cookie jar (urllib), for API-level tests."""

    def __init__(self, site: DemoSite) -> None:
        self.site = site
        self.jar = http.cookiejar.CookieJar()
        self._opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar), _NoRedirect())

    def call(self, method: str, path: str, body: Any = None, raw: bytes | None = None) -> tuple[int, Any, dict[str, str]]:
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        req = urllib.request.Request(self.site.url(path), data=data, method=method,
                                     headers={"Content-Type": "application/json"} if data is not None else {})
        try:
            resp = self._opener.open(req, timeout=10)
        except urllib.error.HTTPError as err:
            resp = err
        payload = resp.read()
        headers = {k.lower(): v for k, v in resp.headers.items()}
        ctype = headers.get("content-type", "")
        value: Any = json.loads(payload) if ctype.startswith("application/json") and payload else payload.decode("utf-8")
        return resp.status if hasattr(resp, "status") else resp.code, value, headers

    def get(self, path: str) -> tuple[int, Any, dict[str, str]]:
        return self.call("GET", path)

    def post(self, path: str, body: Any = None) -> tuple[int, Any, dict[str, str]]:
        return self.call("POST", path, body if body is not None else {})

    def delete(self, path: str) -> tuple[int, Any, dict[str, str]]:
        return self.call("DELETE", path)

    def login(self, user: str = "alice", password: str = DEMO_PASSWORD) -> tuple[int, Any, dict[str, str]]:
        return self.post("/api/login", {"username": user, "password": password})


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:  # keep 302s visible to tests
        return None


@pytest.fixture
def api(site: DemoSite) -> ApiClient:
    """A signed-out API client of ``site``."""
    return ApiClient(site)
