"""Browsers from where teams keep them: ``run --browser-endpoint URL`` (issue 24 item 3).

Two kinds of endpoint, told apart by the URL alone (:func:`endpoint_kind`):

* ``"playwright"``: a Playwright browser server (``playwright launch-server`` / ``run-server``,
  ``browserType.launchServer``), reached with ``browser_type.connect``.  Its URL is ``ws://`` or ``wss://``.
* ``"cdp"``: a Chromium's DevTools endpoint, reached with ``browser_type.connect_over_cdp``: ``http://`` or
  ``https://`` (``http://host:9222``, where Chromium answers ``/json/version``), or a ``ws://`` / ``wss://`` URL
  that is a DevTools socket: a path with ``/devtools/browser/`` (Chromium's own) or ending in ``/se/cdp``
  (a Selenium Grid 4 session's CDP, ``ws://grid:4444/session/<id>/se/cdp``).

Either way the engine opens its own browser context in that browser (clean cookies, the page library, the
project's viewport and timeouts) and, when done, closes that context and drops the connection: a browser it did
not start is never closed (the Grid node or the server keeps it).  Connecting happens in
:meth:`core.perception.driver.PlaywrightDriver.open`, on the engine thread, like a launch (architecture rule 10).
Headless or not, the sandbox and the executable are the far side's settings.

Whether an endpoint off this machine may be used is the project's decision (``browser.endpoint_hosts``, a
setting that needs trust: :mod:`core.project.trust`); this module only parses and connects.  Messages name an
endpoint by :func:`endpoint_label` (scheme, host and port): the user name, password, path token and query of
the URL, which may be credentials, are never printed.
"""
from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from core.perception.browser import BrowserLaunchError

__all__ = ["CONNECT_TIMEOUT_MS", "EndpointError", "endpoint_kind", "endpoint_host", "endpoint_label",
           "connect_browser"]

#: Longest wait for a remote browser to accept the connection, ms (the order of Playwright's own 30 s launch
#: timeout; a Grid node that does not answer in that time is down, not slow).
CONNECT_TIMEOUT_MS = 30_000


class EndpointError(ValueError):
    """A ``--browser-endpoint`` value that is not a usable URL; one line naming the form expected."""


def endpoint_kind(url: str) -> str:
    """``"playwright"`` or ``"cdp"`` for ``url`` (see the module's docstring).

    Raises
    ------
    EndpointError
        Not an ``ws``, ``wss``, ``http`` or ``https`` URL with a host.
    """
    try:
        u = urlsplit(url.strip())
        u.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError:
        raise EndpointError(_form(url)) from None
    if u.scheme not in ("ws", "wss", "http", "https") or not u.hostname:
        raise EndpointError(_form(url))
    if u.scheme in ("http", "https"):
        return "cdp"
    path = u.path.rstrip("/")
    return "cdp" if "/devtools/browser/" in u.path or path.endswith("/se/cdp") else "playwright"


def _form(url: str) -> str:
    shown = endpoint_label(url) if "://" in url else "a value without a scheme"
    return ("--browser-endpoint expects ws://HOST:PORT/... (a Playwright browser server) or http://HOST:PORT "
            f"(a Chromium's DevTools endpoint, as a Selenium Grid 4 node has), got {shown}")


def endpoint_host(url: str) -> str:
    """The host name of ``url`` (lower case, no brackets), ``""`` when it has none."""
    try:
        return (urlsplit(url.strip()).hostname or "").lower()
    except ValueError:
        return ""


def endpoint_label(url: str) -> str:
    """``scheme://host:port`` of ``url``: what messages print (no user name, password, path or query)."""
    try:
        u = urlsplit(url.strip())
        port = f":{u.port}" if u.port else ""
    except ValueError:
        return "(an endpoint that is not a URL)"
    host = u.hostname or ""
    host = f"[{host}]" if ":" in host else host
    return f"{u.scheme}://{host}{port}"


def connect_browser(pw: Any, url: str, *, slow_mo_ms: int = 0, timeout_ms: float = CONNECT_TIMEOUT_MS) -> Any:
    """Connect Playwright ``pw`` (a started ``sync_playwright()``) to the browser at ``url``; returns the Browser.

    Raises
    ------
    BrowserLaunchError
        The endpoint did not answer within ``timeout_ms`` (ms), refused the connection or is not a browser of
        that kind; the message names the endpoint by :func:`endpoint_label` and gives Playwright's first line.
    EndpointError
        ``url`` is not a usable endpoint URL.
    """
    from playwright.sync_api import Error as PwError

    kind = endpoint_kind(url)
    try:
        if kind == "playwright":
            return pw.chromium.connect(url.strip(), timeout=float(timeout_ms), slow_mo=slow_mo_ms or None)
        return pw.chromium.connect_over_cdp(url.strip(), timeout=float(timeout_ms), slow_mo=slow_mo_ms or None)
    except PwError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        first = first.replace(url.strip(), endpoint_label(url))  # Playwright repeats the URL: keep its token out
        what = "Playwright browser server" if kind == "playwright" else "Chromium DevTools endpoint"
        raise BrowserLaunchError(f"cannot connect to the {what} at {endpoint_label(url)}: {first}") from None
