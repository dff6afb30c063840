"""Record the demo app's leave request with `steadyhand record`, driving its Chromium over CDP.

The recorder runs as the user runs it (a subprocess of the CLI); this test
is the "user's own script" that connects to the CDP endpoint on 127.0.0.1.
It stops the recorder with SIGTERM, checks the saved flow, replays it with
`steadyhand run`, and checks that no file written holds the password.
"""
from __future__ import annotations

import io
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from PIL import Image
from playwright.sync_api import sync_playwright

from core.project import load_flow

ROOT = Path(__file__).resolve().parents[2]
DEMO_SECRET = "demo-pass"  # the demo app's public sign-in secret (projects/demo/steadyhand.yaml default)
PAUSE_S = 0.7  # a user's pace between actions


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _copy_demo(tmp_path: Path) -> Path:
    dst = tmp_path / "demo"
    shutil.copytree(ROOT / "projects" / "demo", dst, ignore=shutil.ignore_patterns(".steadyhand"))
    return dst


def _start_recorder(project: Path, flow: str, port: int, *extra: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("DISPLAY", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "core.cli", "record", "--project", str(project), "--flow", flow, "--headless",
         "--cdp-port", str(port), *extra],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    lines = []
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        if line.startswith("Close the page"):
            return proc
    proc.kill()
    out, err = proc.communicate()
    raise AssertionError(f"recorder did not start: {''.join(lines)}{out}{err}")


def _stop(proc: subprocess.Popen) -> tuple[str, str]:
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    return out, err


def _files_text(folder: Path) -> list[tuple[Path, bytes]]:
    """Every file Steadyhand wrote or keeps: not the settings (which declare the demo's public default)
    and not the demo application's own database (the app under test stores its users)."""
    return [(p, p.read_bytes()) for p in folder.rglob("*")
            if p.is_file() and p.name != "steadyhand.yaml" and not p.name.startswith("demo-app.sqlite")]


@pytest.fixture
def project(tmp_path):
    return _copy_demo(tmp_path)


def test_record_leave_request_over_cdp_then_replay_green(project):
    port = _free_port()
    proc = _start_recorder(project, "my_leave", port, "/login")
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.connect_over_cdp(f"http://127.0.0.1:{port}")
            page = browser.contexts[0].pages[0]
            assert page.url.endswith("/login")
            page.get_by_label("User name").fill("alice")
            time.sleep(PAUSE_S)
            page.get_by_label("Password").fill(DEMO_SECRET)
            time.sleep(PAUSE_S)
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_url(re.compile(r".*/requests$"))
            time.sleep(PAUSE_S)
            page.get_by_role("link", name="New request").click()
            page.wait_for_url(re.compile(r".*/requests/new$"))
            time.sleep(PAUSE_S)
            page.get_by_label("Leave type").select_option(label="Annual leave")
            time.sleep(PAUSE_S)
            page.get_by_role("button", name="Choose start date").click()
            time.sleep(PAUSE_S)
            page.get_by_role("button", name="March 9, 2026").click()
            time.sleep(PAUSE_S)
            page.get_by_role("button", name="Choose end date").click()
            time.sleep(PAUSE_S)
            page.get_by_role("button", name="March 13, 2026").click()
            time.sleep(PAUSE_S)
            page.get_by_label("Reason").fill("Family trip")
            time.sleep(1.0)
            page.get_by_role("button", name="Submit").click()
            page.get_by_text("Request submitted").wait_for()
            time.sleep(1.5)
            browser.close()  # disconnects this script only; the recorder keeps its browser
    finally:
        out, err = _stop(proc)
    assert proc.returncode == 0, out + err
    assert "Traceback" not in err
    assert "SIGTERM received" in out and "Saved 11 steps to flows/my_leave.yaml" in out, out

    path = project / "flows" / "my_leave.yaml"
    flow = load_flow(path)
    kinds = [s.action.kind for s in flow.steps]
    assert kinds == ["input", "input", "click", "click", "select", "click", "click", "click", "click", "input",
                     "click"], [s.name for s in flow.steps]
    names = [s.target.name for s in flow.steps]
    assert names[:4] == ["User name", "Password", "Sign in", "New request"]
    assert names[5:9] == ["Choose start date", "March 9, 2026", "Choose end date", "March 13, 2026"]
    # the password became the project's declared secret; a value equal to a project parameter became it
    assert flow.steps[0].action.value == "{user}"
    assert flow.steps[1].action.value == "{password}"
    assert flow.steps[9].action.value == "Family trip"
    # what the recorder observed became the expectation replay verifies (S5)
    assert flow.steps[3].expect == "navigation"
    assert flow.steps[5].expect == "overlay_open" and flow.steps[6].expect == "overlay_close"
    assert flow.steps[10].reversible is False  # it POSTed the request (S6)
    for s in flow.steps:
        assert s.target.role and s.target.bbox is not None and s.target.css_path
        assert s.recorded is not None
        assert s.target.crop == f"my_leave.crops/{s.id}.png"
        png = (path.parent / s.target.crop).read_bytes()
        with Image.open(io.BytesIO(png)) as im:
            assert im.width >= 8 and im.height >= 8
    assert sum(bool(s.recorded.state_before) for s in flow.steps) >= 8
    assert flow.steps[0].target.anchor is not None and flow.steps[0].target.anchor.text == "User name"
    # the password field's crop is painted over: one colour inside the field
    with Image.open(io.BytesIO((path.parent / flow.steps[1].target.crop).read_bytes())) as im:
        inner = im.convert("RGB").crop((8, 8, im.width - 8, im.height - 8))
        assert len(inner.getcolors()) == 1
    text = path.read_text(encoding="utf-8")
    assert "data-gt" not in text and "login.username" not in text and "new.submit" not in text
    for p, data in _files_text(project):
        assert DEMO_SECRET.encode() not in data, p
    assert not (project / ".steadyhand" / "recordings").exists() or not any(
        (project / ".steadyhand" / "recordings").iterdir())

    run = subprocess.run([sys.executable, "-m", "core.cli", "run", str(project), "--flow", "my_leave", "--headless"],
                         cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "passed" in run.stdout
    for p, data in _files_text(project):
        assert DEMO_SECRET.encode() not in data, p


def test_record_stops_and_saves_when_the_page_closes(project):
    port = _free_port()
    proc = _start_recorder(project, "short", port)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.connect_over_cdp(f"http://127.0.0.1:{port}")
            page = browser.contexts[0].pages[0]
            page.get_by_label("User name").click()
            page.keyboard.type("bob")
            page.close()  # at once: the typing was not committed by the page yet
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out + err
    assert "the page was closed" in out and "Saved 1 step to" in out
    flow = load_flow(project / "flows" / "short.yaml")
    assert [(s.action.kind, s.action.value) for s in flow.steps] == [("input", "bob")]


def test_record_refuses_to_overwrite_an_existing_flow(project):
    r = subprocess.run([sys.executable, "-m", "core.cli", "record", "--project", str(project), "--flow",
                        "leave_request", "--headless"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "leave_request.yaml" in r.stderr and "--force" in r.stderr and "Traceback" not in r.stderr
    assert yaml.safe_load((project / "flows" / "leave_request.yaml").read_text())["name"] == "leave_request"


def test_record_refuses_a_cdp_port_in_use_and_saves_nothing_when_nothing_was_done(project):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = subprocess.run([sys.executable, "-m", "core.cli", "record", "--project", str(project), "--flow", "busy",
                            "--headless", "--cdp-port", str(port)], cwd=ROOT, capture_output=True, text=True,
                           timeout=120)
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"CDP port {port} is in use" in r.stderr and "Traceback" not in r.stderr
    assert not (project / "flows" / "busy.yaml").exists()

    proc = _start_recorder(project, "nothing", _free_port())
    out, err = _stop(proc)
    assert proc.returncode == 0, out + err
    assert "Nothing was recorded" in out
    assert not (project / "flows" / "nothing.yaml").exists()


def test_a_killed_recording_is_recovered_from_its_journal(project):
    port = _free_port()
    proc = _start_recorder(project, "killed", port)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.connect_over_cdp(f"http://127.0.0.1:{port}")
            page = browser.contexts[0].pages[0]
            page.get_by_label("User name").fill("bob")
            time.sleep(PAUSE_S)
            page.get_by_label("Password").fill(DEMO_SECRET)
            time.sleep(PAUSE_S)
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_url(re.compile(r".*/requests$"))
            time.sleep(1.5)
            # the process that records (the command runs it in a session of its own) dies hard
            worker = int(Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()[0])
            os.kill(worker, signal.SIGKILL)
            out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out + err
    assert "was killed (SIGKILL)" in err and "Recovered 3 steps from its journal into flows/killed.yaml" in out
    flow = load_flow(project / "flows" / "killed.yaml")
    assert [(s.action.kind, s.action.value) for s in flow.steps] == [
        ("input", "bob"), ("input", "{password}"), ("click", "")]
    assert flow.start_url == "/"  # what was asked (the default, the base URL), not the login it redirects to
    assert (project / "flows" / "killed.crops" / "s3.png").is_file()
    assert not any((project / ".steadyhand" / "recordings").iterdir())
    # the browser the dead recording left running (its profile was in the journal) was killed, not left writing
    marker = os.fsencode(str((project / ".steadyhand" / "recordings").resolve()))
    alive = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker in (entry / "cmdline").read_bytes():
                alive.append(entry.name)
        except OSError:
            continue
    assert not alive
    for p, data in _files_text(project):
        assert DEMO_SECRET.encode() not in data, p
