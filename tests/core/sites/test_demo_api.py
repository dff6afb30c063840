"""Demo backend at the HTTP level (urllib): state, clock, lockout, writes, ground truth."""
from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from datetime import date
from html.parser import HTMLParser
from pathlib import Path

import pytest

from core.sites.demo import DEMO_PASSWORD, DEMO_ROOT, LEAVE_TYPES, DemoSite, main

REPO = Path(__file__).resolve().parents[3]


def new_request(**over: object) -> dict[str, object]:
    body: dict[str, object] = {"type": "annual", "start": "2026-03-09", "end": "2026-03-13",
                               "reason": "Ski week", "client_token": "tok-1"}
    body.update(over)
    return body


# -- known state, reset, clock ------------------------------------------------------------
def test_known_state_after_start(site: DemoSite, api) -> None:
    assert api.login()[0] == 200
    status, data, _ = api.get("/api/requests")
    assert status == 200
    rows = data["requests"]
    assert [r["ref"] for r in rows] == ["LR-0001", "LR-0002", "LR-0003", "LR-0004", "LR-0005", "LR-0006"]
    assert [r["status"] for r in rows] == ["pending", "approved", "pending", "approved", "rejected", "pending"]
    assert rows[0] == {
        "id": 1, "ref": "LR-0001", "username": "alice", "employee": "Alice Martin", "type": "annual",
        "type_label": "Annual leave", "start": "2026-03-16", "end": "2026-03-20", "days": 5,
        "reason": "Family trip to Lisbon", "status": "pending", "status_label": "Pending", "notify": True,
        "created_at": "2026-02-20T09:00:00",
    }
    assert data["today"] == "2026-03-02"
    assert {r["days"] for r in rows if r["ref"] == "LR-0006"} == {10}  # two weeks, weekends excluded


def test_reset_restores_the_known_state_and_clears_the_logs(site: DemoSite, api) -> None:
    api.login()
    assert api.post("/api/requests", new_request())[0] == 201
    assert api.delete("/api/requests/2")[0] == 200
    assert len(site.writes()) == 2 and site.activations()
    site.reset()
    assert site.writes() == [] and site.activations() == []
    assert api.get("/api/requests")[0] == 401  # sessions are gone too
    api.login()
    refs = [r["ref"] for r in api.get("/api/requests")[1]["requests"]]
    assert refs == ["LR-0001", "LR-0002", "LR-0003", "LR-0004", "LR-0005", "LR-0006"]
    assert api.post("/api/requests", new_request())[1]["request"]["ref"] == "LR-0007"  # ids restart


def test_reset_endpoint(site: DemoSite, api) -> None:
    status, data, _ = api.post("/api/reset", {"today": "2026-07-01", "variant": "tweaked"})
    assert status == 200 and data == {"today": "2026-07-01", "variant": "tweaked"}
    assert site.today == date(2026, 7, 1) and site.variant == "tweaked"
    assert api.post("/api/reset", {"variant": "neon"})[0] == 400


def test_clock_get_set(site: DemoSite, api) -> None:
    assert api.get("/api/clock")[1] == {"today": "2026-03-02"}
    assert api.post("/api/clock", {"today": "2026-04-15"})[1] == {"today": "2026-04-15"}
    assert site.today == date(2026, 4, 15)
    site.set_today(date(2026, 1, 5))
    assert api.get("/api/clock")[1] == {"today": "2026-01-05"}
    assert api.post("/api/clock", {"today": "05/01/2026"})[0] == 400
    site.reset(today=date(2026, 2, 2))
    assert api.get("/api/config")[1]["today"] == "2026-02-02"
    _, js, headers = api.get("/api/config.js")
    assert headers["content-type"].startswith("text/javascript")
    assert '"today": "2026-02-02"' in js and "window.DEMO_CONFIG" in js


def test_the_clock_decides_which_start_dates_are_in_the_past(site: DemoSite, api) -> None:
    api.login()
    status, data, _ = api.post("/api/requests", new_request(start="2026-03-01", end="2026-03-03"))
    assert status == 422 and data["fields"] == {"start": "The start date cannot be in the past."}
    site.set_today(date(2026, 2, 27))
    assert api.post("/api/requests", new_request(start="2026-03-01", end="2026-03-03"))[0] == 201


# -- login and lockout ------------------------------------------------------------------------
def test_login_sets_a_session_cookie(site: DemoSite, api) -> None:
    assert api.get("/api/session")[0] == 401
    status, data, headers = api.login("bob")
    assert status == 200 and data == {"user": {"username": "bob", "name": "Bob Chen"}}
    assert "HttpOnly" in headers["set-cookie"]
    assert api.get("/api/session")[1]["user"]["name"] == "Bob Chen"
    assert api.get("/api/config")[1]["user"] == {"username": "bob", "name": "Bob Chen"}
    assert api.post("/api/logout")[0] == 200
    assert api.get("/api/session")[0] == 401


def test_three_failed_logins_lock_the_account(site: DemoSite, api) -> None:
    s1, d1, _ = api.login("alice", "wrong-1")
    s2, d2, _ = api.login("alice", "wrong-2")
    assert (s1, d1["attempts_left"]) == (401, 2)
    assert (s2, d2["attempts_left"]) == (401, 1)
    assert d2["error"] == "Incorrect user name or password. 1 attempt left before the account is locked."
    s3, d3, _ = api.login("alice", "wrong-3")
    assert s3 == 423
    assert d3 == {"error": "Account locked", "code": "locked",
                  "message": "Too many failed sign-in attempts. Ask an administrator to unlock your account."}
    s4, d4, _ = api.login("alice", DEMO_PASSWORD)  # even the right password is refused now
    assert s4 == 423 and d4["error"] == "Account locked"
    assert api.get("/api/session")[0] == 401
    assert api.login("bob")[0] == 200  # other accounts are unaffected

    logins = [a for a in site.activations() if a["kind"] == "login"]
    assert [(a["user"], a["outcome"]) for a in logins] == [
        ("alice", "bad_password"), ("alice", "bad_password"), ("alice", "locked"), ("alice", "locked"), ("bob", "ok")]
    assert all(a["source"] == "server" and a["gt"] == "api.login" for a in logins)
    assert site.writes() == []  # a login attempt is an activation, not a write
    report = site.ground_truth_report()
    assert report["login_attempts"] == 5 and report["failed_logins"] == 4
    site.reset()
    assert api.login("alice")[0] == 200  # reset unlocks


def test_a_successful_login_resets_the_failure_counter(site: DemoSite, api) -> None:
    api.login("alice", "x")
    api.login("alice", "y")
    assert api.login("alice")[0] == 200
    assert api.login("alice", "z")[1]["attempts_left"] == 2


def test_unknown_user_and_empty_fields(site: DemoSite, api) -> None:
    status, data, _ = api.login("mallory", "x")
    assert status == 401 and data["error"] == "Incorrect user name or password."
    assert api.login("", "")[0] == 400
    assert [a["outcome"] for a in site.activations()] == ["unknown_user", "invalid"]


# -- pages and auth ---------------------------------------------------------------------------
def test_pages_need_a_session(site: DemoSite, api) -> None:
    assert api.get("/")[2]["location"] == "/login"
    status, _, headers = api.get("/requests/new")
    assert status == 302 and headers["location"] == "/login?next=/requests/new"
    status, html, headers = api.get("/login")
    assert status == 200 and headers["content-type"] == "text/html; charset=utf-8"
    assert "<title>Sign in – LeaveDesk</title>" in html
    api.login()
    assert api.get("/")[2]["location"] == "/requests"
    assert "<h1>Leave requests</h1>" in api.get("/requests")[1]
    assert "New leave request" in api.get("/requests/new")[1]
    for path in ("/api/requests", "/api/reports", "/api/reports/export"):
        assert ApiClientLike(site).status(path) == 401


class ApiClientLike:
    """A client without cookies."""

    def __init__(self, site: DemoSite) -> None:
        self.site = site

    def status(self, path: str) -> int:
        try:
            return urllib.request.urlopen(self.site.url(path), timeout=10).status
        except urllib.error.HTTPError as err:
            return err.code


def test_static_files_and_no_listing(site: DemoSite, api) -> None:
    assert api.get("/static/app.css")[2]["content-type"] == "text/css; charset=utf-8"
    assert api.get("/static/gt.js")[2]["content-type"] == "text/javascript; charset=utf-8"
    assert api.get("/static/")[0] == 404
    assert api.get("/static/../pages/new.html")[0] == 404
    assert api.get("/favicon.ico")[2]["content-type"] == "image/svg+xml"


# -- writes and duplicates --------------------------------------------------------------------
def test_every_write_is_logged(site: DemoSite, api) -> None:
    api.login()
    assert api.post("/api/requests", new_request())[0] == 201
    assert api.post("/api/requests/1/approve")[0] == 200
    assert api.delete("/api/requests/5")[0] == 200
    status, data, _ = api.post("/api/reports")
    assert status == 201 and data["report"] == {"id": 1, "ref": "RPT-0001", "rows": 6}
    writes = site.writes()
    assert [(w["op"], w["target"], w["ok"], w["status"], w["user"]) for w in writes] == [
        ("create_request", 7, True, 201, "alice"), ("approve_request", 1, True, 200, "alice"),
        ("delete_request", 5, True, 200, "alice"), ("save_report", 1, True, 201, "alice")]
    assert not any(w["duplicate"] for w in writes)
    assert writes[0]["client_token"] == "tok-1"
    report = site.ground_truth_report()
    assert report["writes"] == 4 and report["duplicate_writes"] == 0
    assert report["writes_by_op"] == {"create_request": 1, "approve_request": 1, "delete_request": 1, "save_report": 1}
    rows = {r["ref"]: r for r in api.get("/api/requests")[1]["requests"]}
    assert rows["LR-0001"]["status"] == "approved" and "LR-0005" not in rows
    assert rows["LR-0007"]["status"] == "pending" and rows["LR-0007"]["days"] == 5
    assert api.get("/api/reports")[1]["reports"][0]["ref"] == "RPT-0001"


def test_export_returns_csv_and_is_not_a_write(site: DemoSite, api) -> None:
    api.login()
    status, text, headers = api.get("/api/reports/export")
    assert status == 200
    assert headers["content-type"] == "text/csv; charset=utf-8"
    assert headers["content-disposition"] == 'attachment; filename="leave-report-2026-03-02.csv"'
    lines = text.strip().split("\r\n")
    assert lines[0] == "Ref,Employee,Type,Start,End,Days,Status,Reason"
    assert lines[1] == "LR-0001,Alice Martin,Annual leave,2026-03-16,2026-03-20,5,Pending,Family trip to Lisbon"
    assert len(lines) == 7
    assert site.writes() == []
    assert site.ground_truth_report()["exports"] == 1


def test_a_double_post_with_the_same_client_token_is_a_duplicate_write(site: DemoSite, api) -> None:
    api.login()
    first = api.post("/api/requests", new_request(client_token="tok-A"))
    second = api.post("/api/requests", new_request(client_token="tok-A"))
    assert first[0] == second[0] == 201  # a naive backend: the double submit does create a second row
    writes = site.writes()
    assert [w["duplicate"] for w in writes] == [False, True]
    assert writes[1]["duplicate_reason"] == "token" and writes[1]["duplicate_of"] == writes[0]["seq"]
    report = site.ground_truth_report()
    assert report["duplicate_writes"] == 1 and report["duplicates"][0]["target"] == 8
    assert len(api.get("/api/requests")[1]["requests"]) == 8


def test_concurrent_double_submit_is_detected(site: DemoSite, api) -> None:
    api.login()
    results: list[int] = []
    threads = [threading.Thread(target=lambda: results.append(api.post("/api/requests", new_request(client_token="tok-C"))[0]))
               for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [201, 201]
    assert sorted(w["duplicate"] for w in site.writes()) == [False, True]


def test_same_content_with_a_new_token_is_a_duplicate(site: DemoSite, api) -> None:
    api.login()
    api.post("/api/requests", new_request(client_token="tok-1"))
    api.post("/api/requests", new_request(client_token="tok-2"))
    api.post("/api/requests", new_request(client_token="tok-3", reason="Another week"))
    assert [(w["duplicate"], w["duplicate_reason"]) for w in site.writes()] == [
        (False, None), (True, "content"), (False, None)]


def test_repeated_approve_delete_and_save_are_duplicates(site: DemoSite, api) -> None:
    api.login()
    assert api.post("/api/requests/3/approve")[0] == 200
    assert api.post("/api/requests/3/approve")[0] == 409
    assert api.delete("/api/requests/3")[0] == 200
    assert api.delete("/api/requests/3")[0] == 404
    api.post("/api/reports")
    api.post("/api/reports")  # nothing changed in between: same report again
    api.post("/api/requests/1/approve")
    api.post("/api/reports")  # data changed: a new report
    flags = [(w["op"], w["ok"], w["duplicate"]) for w in site.writes()]
    assert flags == [
        ("approve_request", True, False), ("approve_request", False, True),
        ("delete_request", True, False), ("delete_request", False, True),
        ("save_report", True, False), ("save_report", True, True),
        ("approve_request", True, False), ("save_report", True, False)]
    assert site.ground_truth_report()["failed_writes"] == 2


def test_validation_errors_are_failed_writes(site: DemoSite, api) -> None:
    api.login()
    status, data, _ = api.post("/api/requests", {"type": "holiday", "start": "2026-3-9", "end": "2026-03-08", "reason": " "})
    assert status == 422
    assert data["fields"] == {"type": "Choose a leave type.", "start": "Enter the start date as YYYY-MM-DD.",
                              "reason": "Enter a reason."}
    status, data, _ = api.post("/api/requests", new_request(start="2026-03-10", end="2026-03-09"))
    assert data["fields"] == {"end": "The end date must be on or after the start date."}
    assert api.call("POST", "/api/requests", raw=b"not json")[0] == 400
    assert [(w["ok"], w["status"]) for w in site.writes()] == [(False, 422), (False, 422), (False, 400)]
    assert site.ground_truth_report()["writes"] == 0


def test_writes_need_a_session(site: DemoSite, api) -> None:
    assert api.post("/api/requests", new_request())[0] == 401
    assert api.post("/api/requests/1/approve")[0] == 401
    assert api.delete("/api/requests/1")[0] == 401
    assert api.post("/api/reports")[0] == 401
    assert site.writes() == []


# -- ground-truth endpoints ---------------------------------------------------------------------
def test_activation_endpoint_and_report(site: DemoSite, api) -> None:
    for gt, kind in [("requests.export", "click"), ("dialog.export.confirm", "click"),
                     ("requests.save", "click"), ("row.3.approve", "click")]:
        assert api.post("/__gt/activation", {"gt": gt, "kind": kind, "ts": 1.0, "page": "/requests", "n": 1})[0] == 204
    assert api.post("/__gt/activation", {"gt": "x", "kind": "hover"})[0] == 400
    assert api.post("/__gt/activation", {"kind": "click"})[0] == 400
    acts = site.activations()
    assert [a["gt"] for a in acts] == ["requests.export", "dialog.export.confirm", "requests.save", "row.3.approve"]
    assert acts[0]["source"] == "page" and acts[0]["page"] == "/requests" and acts[0]["client_seq"] == 1
    report = site.ground_truth_report(["requests.export", "dialog.export.*", "row.*.approve", "requests.new"])
    assert report["wrong_activations"] == 1 and report["wrong"] == ["requests.save"]
    assert report["missing"] == ["requests.new"]
    assert report["activations_by_gt"]["requests.save"] == 1
    _, log, _ = api.get("/__gt/log")
    assert len(log["activations"]) == 4 and log["writes"] == []
    _, rep, _ = api.get("/__gt/report?expected=requests.export,dialog.export.*")
    assert rep["wrong"] == ["requests.save", "row.3.approve"]


def test_wait_for_activation(site: DemoSite, api) -> None:
    threading.Timer(0.05, lambda: api.post("/__gt/activation", {"gt": "login.submit", "kind": "click"})).start()
    found = site.wait_for_activation("login.*", kind="click", timeout_s=10)
    assert found[0]["gt"] == "login.submit"
    with pytest.raises(TimeoutError):
        site.wait_for_activation("nothing", timeout_s=0.05)


# -- settings, files, standalone ----------------------------------------------------------------
def test_variant_setting(site: DemoSite, api) -> None:
    with pytest.raises(ValueError):
        DemoSite(variant="neon")
    assert api.get("/api/config")[1]["variant"] == "baseline"
    site.set_variant("tweaked")
    assert api.get("/api/config")[1]["variant"] == "tweaked"
    with pytest.raises(ValueError):
        site.set_variant("neon")


def test_sqlite_file_backend_is_reset_at_start(tmp_path: Path) -> None:
    db = tmp_path / "demo.sqlite"

    def count() -> int:
        with sqlite3.connect(db) as conn:
            return conn.execute("SELECT COUNT(*) FROM leave_requests").fetchone()[0]

    one = DemoSite(db, latency_ms=0)
    with one:
        login = urllib.request.Request(one.url("/api/login"), method="POST",
                                       data=json.dumps({"username": "bob", "password": DEMO_PASSWORD}).encode())
        cookie = urllib.request.urlopen(login, timeout=10).headers["Set-Cookie"].split(";")[0]
        create = urllib.request.Request(one.url("/api/requests"), method="POST", headers={"Cookie": cookie},
                                        data=json.dumps(new_request()).encode())
        assert urllib.request.urlopen(create, timeout=10).status == 201
        assert count() == 7  # the app writes to the file
    one.close()
    two = DemoSite(db, latency_ms=0)
    assert count() == 6  # a new site resets the file to the known state
    two.close()


def test_leave_types_match_the_form() -> None:
    html = (DEMO_ROOT / "pages" / "new.html").read_text(encoding="utf-8")
    options = re.findall(r'<option value="(\w+)">([^<]+)</option>', html)
    assert dict(options) == LEAVE_TYPES


class _Controls(HTMLParser):
    TAGS = {"a", "button", "input", "select", "textarea"}

    def __init__(self) -> None:
        super().__init__()
        self.missing: list[str] = []
        self.ids: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "form" or (tag in self.TAGS and (tag != "a" or "href" in a) and a.get("type") != "hidden"):
            if not a.get("data-gt"):
                self.missing.append(f"<{tag} {a}>")
            else:
                self.ids.append(a["data-gt"] or "")


@pytest.mark.parametrize("page", ["login.html", "requests.html", "new.html"])
def test_every_static_control_carries_a_ground_truth_id(page: str) -> None:
    parser = _Controls()
    parser.feed((DEMO_ROOT / "pages" / page).read_text(encoding="utf-8"))
    assert parser.missing == []
    assert len(parser.ids) == len(set(parser.ids))  # unique per page


def test_main_prints_the_url(capsys: pytest.CaptureFixture[str]) -> None:
    before = signal.getsignal(signal.SIGTERM)
    assert main(["--latency-ms", "0", "--today", "2026-05-04", "--variant", "tweaked"], stop=lambda: True) == 0
    out, err = capsys.readouterr()
    assert re.search(r"LeaveDesk demo at http://127\.0\.0\.1:\d+/login", out)
    assert "variant tweaked, today 2026-05-04" in out and "alice / demo-pass" in out
    assert "Stopped." in err
    assert signal.getsignal(signal.SIGTERM) is before  # the caller's SIGTERM handler is put back


def _ctrl_c_as_at_a_terminal() -> None:
    """In the child: SIGINT back to its default.  A suite started in the background of a non-interactive shell
    (a CI job's ``cmd &``) ignores SIGINT, the child inherits that, and Python then never turns it into
    KeyboardInterrupt: the server would never hear the Ctrl-C this test sends."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_python_dash_m_serves_until_interrupted(how: signal.Signals) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "core.sites.demo", "--latency-ms", "0"], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"}, preexec_fn=_ctrl_c_as_at_a_terminal)
    try:
        line = proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/login", line).group(0)
        assert urllib.request.urlopen(url, timeout=10).status == 200
        proc.send_signal(how)
        _, err = proc.communicate(timeout=60)  # its output drained while it stops (a full pipe would block it)
        assert proc.returncode == 0, err
        assert "Stopped." in err and "Warning" not in err and "Traceback" not in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
