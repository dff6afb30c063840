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

__all__ = ["BrowserLaunchError", "find_chromium", "CHROMIUM_ARGS", "QUIET_PROFILE_PREFS", "write_quiet_prefs"]

#: Launch arguments that keep Chromium quiet on a closed network (architecture rule 10).  ``--test-type``
#: keeps a headed window free of the "You are using an unsupported command-line flag: --no-sandbox" bar
#: (Chromium skips its bad-flags prompt for test runs; the sandbox cannot run as root in a container).
CHROMIUM_ARGS = (
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--test-type",
)

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
