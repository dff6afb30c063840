"""Finding and launching Chromium (Debian's by default, never a download).

The executable is taken from, in order: the ``STEADYHAND_CHROMIUM``
environment variable, the project's ``browser.executable_path``,
``/usr/bin/chromium``, ``chromium`` / ``chromium-browser`` / ``google-chrome``
on the PATH, and finally Playwright's own browser when the user has one.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

__all__ = ["BrowserLaunchError", "find_chromium", "CHROMIUM_ARGS"]

#: Launch arguments that keep Chromium quiet on a closed network (architecture rule 10).
CHROMIUM_ARGS = (
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage",
)


class BrowserLaunchError(RuntimeError):
    """Chromium could not be found or started; the message says what to do."""


def find_chromium(configured: str | None = None) -> str | None:
    """Path of the Chromium executable to use, or None for Playwright's own.

    Raises
    ------
    BrowserLaunchError
        When a path is configured (env var or setting) but does not exist.
    """
    env = os.environ.get("STEADYHAND_CHROMIUM")
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
