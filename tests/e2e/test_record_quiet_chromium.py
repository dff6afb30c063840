"""The recording Chromium starts without the unsupported-flag bar and the "Save password?" bubble.

Real Chromium (headless here; the flags and prefs are the same headed): its own
command line (chrome://version) carries ``--test-type``, and the profile it
runs on has the password manager switched off.
"""
from __future__ import annotations

import json
from pathlib import Path

from core.domain import BrowserSettings
from core.perception.browser import CHROMIUM_ARGS, QUIET_PROFILE_PREFS, write_quiet_prefs
from core.record.recorder import RecordingDriver


def test_the_quiet_prefs_file_is_what_chromium_reads(tmp_path) -> None:
    path = write_quiet_prefs(tmp_path / "profile")
    assert path == tmp_path / "profile" / "Default" / "Preferences"
    assert json.loads(path.read_text()) == {"credentials_enable_service": False,
                                            "profile": {"password_manager_enabled": False}}
    assert "--test-type" in CHROMIUM_ARGS and QUIET_PROFILE_PREFS["credentials_enable_service"] is False


def test_the_recording_chromium_runs_with_test_type_and_no_password_manager(tmp_path) -> None:
    d = RecordingDriver(BrowserSettings(), base_url="http://127.0.0.1:9", headless=True, profile_parent=tmp_path)
    d.open()
    try:
        (profile,) = [p for p in tmp_path.iterdir() if p.name.startswith("steadyhand-rec-")]
        page = d._context.pages[0] if d._context.pages else d._context.new_page()  # noqa: SLF001 - the real page
        page.goto("chrome://version")
        command_line = page.locator("#command_line").inner_text()
        assert "--test-type" in command_line and "--no-sandbox" in command_line
        prefs = json.loads((Path(profile) / "Default" / "Preferences").read_text())
        assert prefs.get("credentials_enable_service") is False
        assert prefs.get("profile", {}).get("password_manager_enabled") is False
    finally:
        d.close()
    assert not any(tmp_path.iterdir())  # the profile is removed on close
