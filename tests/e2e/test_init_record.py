"""A project for an app of one's own: `steadyhand init`, then `record` over CDP, then `run`.

The fixture app (tests/e2e/fixtures/protected_app, served on 127.0.0.1) has a
protected page that redirects to ``/login/?next=/protected/`` without a
session cookie, a login form that posts back to that URL, and a team page
whose buttons and links have the naming problems the review flags (two
links named "Edit", an icon button without a name, a button named "Close
panel" that shows "x").  The recording started at the protected page
saves ``/protected/`` as its start (what was asked, not the login it was
sent to) and replays green from a fresh browser: the replay is redirected
to the login too, and the recorded login steps follow.
"""
from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import parse_qs

import pytest
from playwright.sync_api import sync_playwright

from core.project import load_flow, load_project
from core.sites.server import Request, Response, StaticSite

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).with_name("fixtures") / "protected_app"
PASSWORD = "orders-pw-7"  # the fixture app's own password (test data)
PAUSE_S = 0.7  # a user's pace between actions


class OrdersApp(StaticSite):
    """The fixture app: a protected page behind a cookie session, its login, and the team page."""

    TOKEN = "session-1"

    def __init__(self) -> None:
        super().__init__(FIXTURE)
        self.route("GET", "/protected/", self._protected)
        self.route("GET", "/login/", lambda r: self.serve("login.html"))
        self.route("POST", "/login/", self._login)
        self.route("GET", "/review/", lambda r: self.serve("review.html"))
        self.logins = 0

    def _protected(self, request: Request) -> Response:
        if request.cookies.get("sid") != self.TOKEN:
            return Response.redirect("/login/?next=/protected/")
        return self.serve("protected.html")

    def _login(self, request: Request) -> Response:
        form = parse_qs(request.body.decode("utf-8"))
        if form.get("user") != ["ada"] or form.get("password") != [PASSWORD]:
            return self.serve("login.html")
        self.logins += 1
        nxt = request.arg("next", "/protected/")
        nxt = nxt if nxt.startswith("/") and not nxt.startswith("//") else "/protected/"
        return Response.redirect(nxt, 303).with_headers(("Set-Cookie", f"sid={self.TOKEN}; Path=/; HttpOnly"))


@pytest.fixture
def app():
    with OrdersApp() as server:
        yield server


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env() -> dict[str, str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "STEADYHAND_SECRET_PASSWORD": PASSWORD}
    env.pop("DISPLAY", None)
    return env


def _cli(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "core.cli", *args], cwd=ROOT, env=_env(), capture_output=True,
                          text=True, timeout=timeout)


def _start_recorder(project: Path, flow: str, port: int, url: str) -> tuple[subprocess.Popen, list[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "core.cli", "record", "--project", str(project), "--flow", flow, "--headless",
         "--cdp-port", str(port), url],
        cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    lines: list[str] = []
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        if line.startswith("Close the page"):
            return proc, lines
    proc.kill()
    out, err = proc.communicate()
    raise AssertionError(f"recorder did not start: {''.join(lines)}{out}{err}")


def _stop(proc: subprocess.Popen) -> tuple[str, str]:
    proc.send_signal(signal.SIGTERM)
    return proc.communicate(timeout=60)


def _init(tmp_path: Path, base_url: str) -> Path:
    folder = tmp_path / "orders"
    r = _cli("init", str(folder), "--url", base_url, "--name", "Orders", "--secret", "password", timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "steadyhand record --project" in r.stdout and "STEADYHAND_SECRET_PASSWORD" in r.stdout
    return folder


def test_init_then_record_at_a_protected_page_saves_the_asked_url_and_replays_green(app, tmp_path):
    project = _init(tmp_path, app.base_url)
    loaded = load_project(project)
    assert loaded.settings.base_url == app.base_url and dict(loaded.flows) == {}
    assert list(loaded.settings.secrets) == ["password"]

    port = _free_port()
    proc, head = _start_recorder(project, "archive", port, "/protected/")
    try:
        assert "/login/?next=/protected/" in "".join(head) and "redirected /protected/" in "".join(head)
        with sync_playwright() as pw:
            browser = pw.chromium.connect_over_cdp(f"http://127.0.0.1:{port}")
            page = browser.contexts[0].pages[0]
            assert page.url.endswith("/login/?next=/protected/")
            page.get_by_label("User name").fill("ada")
            time.sleep(PAUSE_S)
            page.get_by_label("Password").fill(PASSWORD)
            time.sleep(PAUSE_S)
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_url(re.compile(r".*/protected/$"))
            time.sleep(PAUSE_S)
            page.get_by_role("button", name="Archive order").click()
            page.get_by_text("Order archived").wait_for()
            time.sleep(1.5)
            browser.close()
    finally:
        out, err = _stop(proc)
    assert proc.returncode == 0, out + err
    assert "Saved 4 steps to flows/archive.yaml" in out, out + err
    flow = load_flow(project / "flows" / "archive.yaml")
    assert flow.start_url == "/protected/"  # what was asked, not /login/?next=/protected/
    assert [(s.action.kind, s.action.value) for s in flow.steps] == [
        ("input", "ada"), ("input", "{password}"), ("click", ""), ("click", "")]
    assert [s.target.name for s in flow.steps] == ["User name", "Password", "Sign in", "Archive order"]
    assert "Review" not in out  # every name here is unique, present and the element's own text
    for p in project.rglob("*"):
        if p.is_file():
            assert PASSWORD.encode() not in p.read_bytes(), p

    logins = app.logins
    run = _cli("run", str(project), "--flow", "archive", "--headless")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "passed" in run.stdout
    assert app.logins == logins + 1  # the replay met the redirect and signed in again


def test_record_ends_with_a_review_of_names_to_check(app, tmp_path):
    project = _init(tmp_path, app.base_url)
    port = _free_port()
    proc, _ = _start_recorder(project, "team", port, "/review/")
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.connect_over_cdp(f"http://127.0.0.1:{port}")
            page = browser.contexts[0].pages[0]
            page.locator("#edit-grace").click()
            time.sleep(PAUSE_S)
            page.locator("#gear").click()
            time.sleep(PAUSE_S)
            page.locator("#close").click()
            time.sleep(PAUSE_S)
            page.locator("#save").click()
            page.get_by_text("Clicked save").wait_for()
            time.sleep(1.5)
            browser.close()
    finally:
        out, err = _stop(proc)
    assert proc.returncode == 0, out + err
    assert "Saved 4 steps to flows/team.yaml" in out, out + err
    flow = load_flow(project / "flows" / "team.yaml")
    ids = [s.id for s in flow.steps]
    assert [s.target.css_path.rsplit("#", 1)[-1] for s in flow.steps] == ["edit-grace", "gear", "close", "save"]
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Review 3 steps of flows/team.yaml"))
    # printed after the step list and the save line, before the replay hint
    assert start > max(i for i, line in enumerate(lines) if line.startswith(f"  {ids[-1]} "))
    review = lines[start + 1:start + 4]
    assert review[0].startswith(f"  {ids[0]}") and "2 elements on the page are a link named 'Edit'" in review[0]
    assert review[1].startswith(f"  {ids[1]}") and "without an accessible name" in review[1]
    assert review[2].startswith(f"  {ids[2]}") and "named 'Close panel' but shows '×'" in review[2]
    assert not lines[start + 4].startswith("  s"), lines[start + 4]
