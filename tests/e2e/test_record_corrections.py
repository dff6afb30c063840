"""A recording with a corrected field (issue 21 item 8): typed, cleared and typed again over CDP, it is one fill
with the final value and its own after-state, and `steadyhand run` replays it green.

The recorder runs as a user runs it (`steadyhand record` subprocess); this test drives its Chromium over CDP
with real key presses: a wrong user name typed, selected and erased, the right one typed, then the password,
then Sign in (a navigation).
"""
from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import pytest

from core.project import load_flow
from tests.e2e.cdp_recording import ROOT, record, replay

pytestmark = pytest.mark.browser

DEMO_SECRET = "demo-pass"  # the demo app's public sign-in secret (projects/demo/steadyhand.yaml default)
PAUSE_S = 1.2  # a user's pause, longer than the recorder's typing pause (800 ms, recorder_lib.js)


@pytest.fixture
def project(tmp_path):
    dst = tmp_path / "demo"
    shutil.copytree(ROOT / "projects" / "demo", dst, ignore=shutil.ignore_patterns(".steadyhand"))
    return dst


def _sign_in_with_a_correction(page) -> None:
    """A wrong user name typed and committed (a pause longer than the recorder's 800 ms typing pause), erased
    and committed empty, then the right one, the password and Sign in at a script's pace (no pause: the
    recorder's picture after the typing may come after the sign-in's navigation)."""
    assert page.url.endswith("/login")
    page.get_by_label("User name").click()
    page.keyboard.type("bobby", delay=40)  # the wrong user name
    time.sleep(PAUSE_S)
    page.keyboard.press("Control+A")
    page.keyboard.press("Backspace")  # cleared
    time.sleep(PAUSE_S)
    page.get_by_label("User name").fill("alice")  # and typed again
    page.get_by_label("Password").fill(DEMO_SECRET)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r".*/requests$"))
    time.sleep(1.5)


def test_a_corrected_field_is_one_fill_with_its_own_after_state_and_replays_green(project: Path):
    code, out, err = record(project, "corrected", _sign_in_with_a_correction, "/login")
    assert code == 0, out + err
    flow = load_flow(project / "flows" / "corrected.yaml")
    steps = [(s.action.kind, s.target.name, s.action.value) for s in flow.steps]
    assert steps == [("input", "User name", "{user}"), ("input", "Password", "{password}"),
                     ("click", "Sign in", "")], steps
    for s in flow.steps[:2]:  # each fill's after-state is its own page: still the sign-in form, not /requests
        assert s.expect != "navigation", (s.id, s.expect)
        after = s.recorded.after if s.recorded is not None else None
        assert after is None or "requests" not in after.url_pattern, (s.id, after)
        assert "navigation" not in s.recorded.observed, (s.id, s.recorded.observed)
    assert flow.steps[2].expect == "navigation"
    text = (project / "flows" / "corrected.yaml").read_text(encoding="utf-8")
    assert "bobby" not in text and DEMO_SECRET not in text

    run = replay(project, "corrected")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "passed" in run.stdout
