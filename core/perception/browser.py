"""Finding and launching Chromium (Debian's by default, never a download).

The executable is taken from, in order: the ``STEADYHAND_CHROMIUM``
environment variable, the project's ``browser.executable_path``,
``/usr/bin/chromium``, ``chromium`` / ``chromium-browser`` / ``google-chrome``
on the PATH, and finally Playwright's own browser when the user has one.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

__all__ = ["BrowserLaunchError", "find_chromium", "CHROMIUM_ARGS", "QUIET_ARGS", "chromium_args", "QUIET_PROFILE_PREFS",
           "write_quiet_prefs", "CdpPortInUse", "CDP_HOST", "cdp_args", "check_cdp_port", "free_cdp_port",
           "bound_cdp_endpoint"]

class BrowserLaunchError(RuntimeError):
    """Chromium could not be found or started; the message says what to do."""


#: Launch arguments that keep Chromium quiet on a closed network (architecture rule 10).  ``--test-type``
#: keeps a headed window free of the "You are using an unsupported command-line flag" bar (Chromium skips its
#: bad-flags prompt for test runs).
QUIET_ARGS = (
    "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--test-type",
)


def chromium_args(euid: int | None = None) -> tuple[str, ...]:
    """Chromium's launch arguments for a process of effective user id ``euid`` (default: this process's).

    :data:`QUIET_ARGS`, preceded by ``--no-sandbox`` only for root (euid 0): Chromium's sandbox cannot start as
    root, and every other user keeps it (issue 21 item 6).
    """
    if euid is None:
        euid = os.geteuid() if hasattr(os, "geteuid") else -1
    return (("--no-sandbox",) if euid == 0 else ()) + QUIET_ARGS


#: The launch arguments of this process (:func:`chromium_args`: ``--no-sandbox`` only when it runs as root).
CHROMIUM_ARGS = chromium_args()


class CdpPortInUse(BrowserLaunchError):
    """The CDP port asked for is taken (Chromium would quietly listen elsewhere)."""


#: Where a CDP endpoint is bound: the IPv4 loopback, named explicitly (never ``localhost``, never ``[::1]``).
CDP_HOST = "127.0.0.1"


def cdp_args(port: int) -> list[str]:
    """Chromium's arguments for a remote-debugging endpoint on ``127.0.0.1:port`` (the address given explicitly)."""
    return [f"--remote-debugging-port={int(port)}", f"--remote-debugging-address={CDP_HOST}"]


def check_cdp_port(port: int) -> None:
    """Raise :class:`CdpPortInUse` unless ``port`` (1..65535) is free on 127.0.0.1 and on ::1.

    Chromium falls back to ``[::1]`` when 127.0.0.1 is taken, so a script connecting to ``127.0.0.1:<port>``
    would reach someone else.
    """
    import socket

    if not 1 <= int(port) <= 65535:
        raise CdpPortInUse(f"CDP port {port} is not a TCP port (1 to 65535); choose another --cdp-port")
    for family, host in ((socket.AF_INET, CDP_HOST), (socket.AF_INET6, "::1")):
        try:
            sock = socket.socket(family, socket.SOCK_STREAM)
        except OSError:
            continue  # no IPv6 on this machine
        try:
            # like Chromium: connections of an earlier session in TIME_WAIT do not make the port busy
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, int(port)))
        except OSError as exc:
            if family == socket.AF_INET6 and exc.errno == 99:  # EADDRNOTAVAIL: ::1 not configured
                continue
            raise CdpPortInUse(f"CDP port {port} is in use on {host}; choose another --cdp-port") from None
        finally:
            sock.close()


def free_cdp_port() -> int:
    """A TCP port free on 127.0.0.1 now, for a CDP endpoint (the OS picks it)."""
    import socket

    with socket.socket() as sock:
        sock.bind((CDP_HOST, 0))
        return int(sock.getsockname()[1])


#: Longest wait for the CDP endpoint to answer after Chromium started, s (it answers within ~50 ms locally).
CDP_ANSWER_S = 5.0


def bound_cdp_endpoint(port: int, page: Any) -> str:
    """``http://127.0.0.1:<port>`` once it is checked that this endpoint is the browser of ``page``.

    The page's target id (asked over its own CDP session) must be among the targets the endpoint lists
    (``/json/list``): a port taken by another program between :func:`check_cdp_port` and the launch, or a
    Chromium that bound elsewhere, is found here rather than printed to the person.  Waits at most
    :data:`CDP_ANSWER_S` for the endpoint to answer.

    Raises
    ------
    CdpPortInUse
        The endpoint does not answer, or answers for another browser.
    """
    import time
    import urllib.request

    url = f"http://{CDP_HOST}:{int(port)}"
    try:
        session = page.context.new_cdp_session(page)
        try:
            target = str(session.send("Target.getTargetInfo")["targetInfo"]["targetId"])
        finally:
            session.detach()
    except Exception as exc:  # noqa: BLE001 - a browser that cannot say its target: not provably ours
        raise CdpPortInUse(f"CDP port {port}: cannot identify this browser's page ({exc})") from None
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never through a proxy
    deadline = time.monotonic() + CDP_ANSWER_S
    listed: list[Any] = []
    while True:
        try:
            with opener.open(f"{url}/json/list", timeout=1.0) as resp:
                listed = json.loads(resp.read().decode("utf-8", "replace"))
            break
        except (OSError, ValueError):
            if time.monotonic() >= deadline:
                raise CdpPortInUse(f"CDP port {port}: nothing answers at {url} (Chromium did not bind it); "
                                   "choose another --cdp-port") from None
            time.sleep(0.05)
    if not any(isinstance(t, dict) and t.get("id") == target for t in listed):
        raise CdpPortInUse(f"CDP port {port}: the endpoint at {url} belongs to another program or browser; "
                           "choose another --cdp-port")
    return url


#: Profile preferences of a persistent (recording) profile: no "Save password?" bubble after a sign-in
#: (Chromium's ``credentials_enable_service`` and ``profile.password_manager_enabled`` prefs).
QUIET_PROFILE_PREFS: dict[str, Any] = {
    "credentials_enable_service": False,
    "profile": {"password_manager_enabled": False},
}


def write_quiet_prefs(profile_dir: Path | str) -> Path:
    """Write :data:`QUIET_PROFILE_PREFS` as ``<profile_dir>/Default/Preferences`` before Chromium starts.

    Returns the file written.  Raises ``OSError`` when the folder cannot be written.
    """
    path = Path(profile_dir) / "Default" / "Preferences"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(QUIET_PROFILE_PREFS), encoding="utf-8")
    return path


def find_chromium(configured: str | None = None) -> str | None:
    """Path of the Chromium executable to use, or None for Playwright's own.

    Raises
    ------
    BrowserLaunchError
        When a path is configured (env var or setting) but does not exist, or the setting is not trusted
        (a :class:`core.domain.UntrustedValue`: the message names it and the command that trusts the project).
    """
    env = os.environ.get("STEADYHAND_CHROMIUM")
    untrusted = getattr(configured, "reason", "")  # core.domain.UntrustedValue: the project is not trusted
    if untrusted and not env:
        raise BrowserLaunchError(untrusted)
    for source, value in (("STEADYHAND_CHROMIUM", env), ("browser.executable_path", configured)):
        if value:
            if Path(value).is_file() and os.access(value, os.X_OK):
                return value
            raise BrowserLaunchError(
                f"Chromium not found at {value} (from {source}). Install Debian's chromium "
                f"(apt-get install chromium) or point {source} at a Chromium executable.")
    if Path("/usr/bin/chromium").is_file():
        return "/usr/bin/chromium"
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None
