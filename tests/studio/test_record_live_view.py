"""Recording through the studio's live view gives the same steps as recording in the page.

The same sign-in is done twice on the demo app with headless Chromium: once
in the page (a script drives the recorder's Chromium over CDP, as a user's
own script would), once through the studio's live view (pytest-qt clicks
and keys, forwarded to the page).  Both recordings must hold the same steps.
"""
from __future__ import annotations

import re
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from playwright.sync_api import sync_playwright

from core.project import load_project
from core.record.events import RecordingStarted, RecordingStopped, StopRecording
from core.record.runner import RecorderRunner
from studio.main_window import MainWindow
from studio.views.recorder import RecorderState

DEMO = Path(__file__).resolve().parents[2] / "projects" / "demo"
DEMO_SECRET = "demo-pass"  # the demo app's public sign-in secret (projects/demo/steadyhand.yaml default)

pytestmark = pytest.mark.browser


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def demo_copy(tmp_path: Path) -> Path:
    root = tmp_path / "demo"
    shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns(".steadyhand"))
    return root


def _summary(steps) -> list[tuple[str, str, str]]:  # noqa: ANN001
    return [(s.action.kind, s.target.label_text, s.action.value) for s in steps]


def _record_in_page(project_root: Path) -> list[tuple[str, str, str]]:
    """Sign in by clicking and typing in the page itself, over CDP."""
    events: list[object] = []
    started = threading.Event()
    stopped = threading.Event()

    def on_event(e: object) -> None:
        events.append(e)
        if isinstance(e, RecordingStarted):
            started.set()
        elif isinstance(e, RecordingStopped):
            stopped.set()

    port = _free_port()
    runner = RecorderRunner(load_project(project_root), flow_name="in_page", url="/login", on_event=on_event,
                            headless=True, cdp_port=port)
    runner.start()
    try:
        assert started.wait(60)
        with sync_playwright() as pw:
            browser = pw.chromium.connect_over_cdp(f"http://127.0.0.1:{port}")
            page = browser.contexts[0].pages[0]
            page.get_by_label("User name").click()
            page.keyboard.type("alice", delay=30)
            page.keyboard.press("Tab")
            page.keyboard.type(DEMO_SECRET, delay=30)
            page.keyboard.press("Enter")
            page.wait_for_url(re.compile(r".*/requests$"))
            time.sleep(0.5)
            page.get_by_role("link", name="New request").click()
            page.wait_for_url(re.compile(r".*/requests/new$"))
            time.sleep(1.0)
            browser.close()
        runner.send(StopRecording())
        assert stopped.wait(60)
    finally:
        runner.close(30)
    done = next(e for e in events if isinstance(e, RecordingStopped))
    return _summary(done.flow.steps)


def test_live_view_recording_matches_in_page_recording(qtbot, demo_copy: Path) -> None:  # noqa: ANN001
    in_page = _record_in_page(demo_copy)
    assert in_page == [
        ("input", "User name", "{user}"),
        ("press", "User name", "Tab"),
        ("input", "Password", "{password}"),
        ("press", "Password", "Enter"),
        ("click", "New request", ""),
    ], in_page

    w = MainWindow(demo_copy, close_timeout=30.0)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    qtbot.waitExposed(w)
    dock, lv = w.recorder_dock, w.live_view
    w.action_record.trigger()
    dock.url_edit.setText("/login")
    dock.name_edit.setText("live_view")
    assert dock.start_recording()

    def candidate(label: str):  # noqa: ANN202
        return next((c for c in lv.candidates if c.descriptor.label_text == label), None)

    qtbot.waitUntil(lambda: candidate("User name") is not None, timeout=60_000)
    user = candidate("User name")
    qtbot.mouseClick(lv, Qt.MouseButton.LeftButton, pos=lv.map_to_widget(user.descriptor.bbox).center().toPoint())
    qtbot.wait(600)  # the single click is sent once no second click follows
    qtbot.keyClicks(lv, "alice")
    qtbot.keyClick(lv, Qt.Key.Key_Tab)
    qtbot.keyClicks(lv, DEMO_SECRET)
    qtbot.keyClick(lv, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: candidate("New request") is not None, timeout=60_000)
    qtbot.wait(500)
    link = candidate("New request")
    qtbot.mouseClick(lv, Qt.MouseButton.LeftButton, pos=lv.map_to_widget(link.descriptor.bbox).center().toPoint())
    qtbot.waitUntil(lambda: candidate("Leave type") is not None, timeout=60_000)
    qtbot.wait(1000)
    dock.stop_recording()
    qtbot.waitUntil(lambda: dock.state is RecorderState.STOPPED, timeout=60_000)
    via_live_view = _summary(dock.model.steps())
    assert via_live_view == in_page
    w.close()
