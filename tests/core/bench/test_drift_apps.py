"""Pure pieces of ``steadyhand bench drift --app``: the path prefix dispatcher, paths relative to a base URL,
the judgement of attempts against the app's rows, repeated rows, the exported script's steps passed, the
table, the cache's place, and the fit of the recorded flows to the intended actions.  No app is installed
here: the bench command installs them (see core.bench.drift_app_env)."""
from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest

from core.bench.drift_app_env import SERVERS_DIR, app_venv, read_rows
from core.bench.drift_app_run import AppDriftReport, AppRunReport, AppStepReport, format_app_report
from core.bench.drift_apps import (
    APPS, AppState, judge_attempts, relative_path, repeated_rows, script_steps_passed, step_lines,
)
from core.bench.drift_env import DriftEnvError
from core.export import export_flow
from core.project import load_project

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(SERVERS_DIR))
import drift_wsgi  # noqa: E402  (a standalone module the app servers import from their own environment)

sys.path.remove(str(SERVERS_DIR))


def _hello(environ, start_response):
    body = f"{environ['SCRIPT_NAME']}|{environ['PATH_INFO']}".encode()
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [body]


def _call(app, path):
    got = {}

    def start_response(status, headers):
        got["status"], got["headers"] = status, dict(headers)

    body = b"".join(app({"PATH_INFO": path, "SCRIPT_NAME": ""}, start_response))
    return got["status"], got["headers"], body.decode()


def test_prefix_dispatcher_mounts_the_app_and_refuses_paths_outside():
    app = drift_wsgi.mount(_hello, "staging/")
    assert _call(app, "/staging/itemview/list/") == ("200 OK", {"Content-Type": "text/plain"},
                                                     "/staging|/itemview/list/")
    assert _call(app, "/staging")[2] == "/staging|"
    status, headers, _ = _call(app, "/")
    assert status.startswith("302") and headers["Location"] == "/staging/"
    assert _call(app, "/stagingx/a")[0].startswith("404")
    assert _call(app, "/login/")[0].startswith("404")
    assert drift_wsgi.mount(_hello, "/") is _hello and drift_wsgi.normalise_prefix("//a//b/") == "/a/b"


def test_relative_path_strips_the_base_path_only():
    assert relative_path("http://127.0.0.1:5/staging/item/?id=1#x", "http://127.0.0.1:5/staging") == "/item/"
    assert relative_path("http://127.0.0.1:5/staging", "http://127.0.0.1:5/staging/") == "/"
    assert relative_path("http://127.0.0.1:5/stagingx/a", "http://127.0.0.1:5/staging") == "/stagingx/a"
    assert relative_path("http://127.0.0.1:5/itemview/list/", "http://127.0.0.1:5") == "/itemview/list/"


def test_repeated_rows_counts_copies_beyond_what_the_truth_holds():
    one = ((1, "Desk", 7),)
    assert repeated_rows(one, (), one) == 0
    assert repeated_rows(((1, "Desk", 7), (2, "Desk", 7)), (), one) == 1
    assert repeated_rows(((1, "Desk", 7), (2, "Desk", 7), (3, "Desk", 7)), (), one) == 2
    # two rows that the truth itself holds twice are no repetition
    two = ((1, "Desk", 7), (2, "Desk", 7))
    assert repeated_rows(two, (), two) == 0


def _st(path, rows=(), **fields):
    return AppState(path, tuple(rows), tuple(sorted(fields.items())))


def test_judge_attempts_tells_right_wrong_missed_and_repeated():
    before = _st("/item/new/", name="Desk", quantity="7")
    after = _st("/item/", [(1, "Desk", 7)], name=None, quantity=None)
    right = judge_attempts(before, after, [after])
    assert (right.wrong, right.missed, right.repeated, right.acted) == (False, False, 0, 1)
    # the save pressed again after it had written: the row is there twice
    twice = _st("/item/", [(1, "Desk", 7), (2, "Desk", 7)], name=None, quantity=None)
    j = judge_attempts(before, after, [after, twice])
    assert j.repeated == 1 and j.wrong and "rows" in j.diff[0] and j.retried_after_effect
    assert not right.retried_after_effect
    # retried after a first attempt that did nothing: allowed
    assert not judge_attempts(before, after, [before, after]).retried_after_effect
    # another button: a page that is neither the form nor the list
    other = _st("/item/details/1", [(1, "Desk", 7)])
    j = judge_attempts(before, after, [other])
    assert j.wrong and j.diff[0].startswith("path '/item/details/1'")
    # nothing happened: missed, not wrong
    j = judge_attempts(before, after, [before])
    assert j.missed and not j.wrong
    # typing into the wrong field: a field holds a value neither before nor after has
    typed = _st("/item/new/", name="Desk", quantity="")
    want = _st("/item/new/", name="Desk", quantity="7")
    j = judge_attempts(typed, want, [_st("/item/new/", name="Desk7", quantity="")])
    assert j.wrong and "field name" in j.diff[0]
    assert not judge_attempts(typed, want, []).missed


def test_script_steps_passed_reads_the_failing_line_of_the_real_export():
    project = load_project(ROOT / "projects" / "fab")
    source = export_flow(project, project.flows["items_crud"], style="pytest")
    starts = step_lines(source)
    assert len(starts) == len(project.flows["items_crud"].steps) == 13
    name = "test_fab_items_crud.py"
    assert script_steps_passed(source, name, "1 passed", 0) == 13
    fail_in_5 = starts[4] + 1  # the statement right under step 5's comment
    out = f"{name}:40: in test_items_crud\n    page.goto(...)\n{name}:{fail_in_5}: in test_items_crud\nE   TimeoutError"
    assert script_steps_passed(source, name, out, 1) == 4
    assert script_steps_passed(source, name, "ERROR at setup", 1) == 0
    # the secret is read from the environment, never written into the file
    assert "{password}" not in source and "password = secret('password')" in source


@pytest.mark.parametrize("key", sorted(APPS))
def test_recorded_flows_fit_the_intended_actions(key):
    spec = APPS[key]
    project = load_project(ROOT / spec.project)
    flow = project.flows[spec.flow]
    assert [s.action.kind for s in flow.steps] == [a.kind for a in spec.actions]
    assert [s.name for s in flow.steps] == [a.title for a in spec.actions]
    assert flow.start_url == spec.start_path
    assert spec.recorded_on.label in flow.description
    labels = [v.label for v in spec.versions]
    assert len(labels) == len(set(labels)) == 3
    assert all(f"{v.package}==" in " ".join(v.requirements) or f"{v.package}[" in " ".join(v.requirements)
               for v in spec.versions)
    assert (SERVERS_DIR / spec.server).is_file()


def test_the_venv_cache_never_lies_inside_the_repository(tmp_path):
    spec = APPS["fab"]
    assert app_venv(spec.recorded_on, tmp_path) == tmp_path / "fab-3.4.5"
    with pytest.raises(DriftEnvError, match="outside the repository"):
        app_venv(spec.recorded_on, ROOT / "build" / "drift")


def test_read_rows_before_and_after_the_table_exists(tmp_path):
    db = tmp_path / "app.db"
    sqlite3.connect(db).close()
    assert read_rows(db) == ()
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT, quantity INTEGER)")
    con.executemany("INSERT INTO item (name, quantity) VALUES (?, ?)", [("B", 2), ("A", 1)])
    con.commit()
    con.close()
    assert read_rows(db) == ((1, "B", 2), (2, "A", 1))


def test_format_app_report_shows_each_run_and_every_step_not_cleanly_passed():
    run = AppRunReport("4.5.4", "/staging", 13, passed=12, wrong=1, repeated=1, heals=[("semantic", 0.31)],
                       abstentions=0, status="failed", error="step s12 failed", script_passed=11,
                       script_status="failed", script_error="TimeoutError: locator...")
    run.step_details = [AppStepReport(11, "s12", "Delete the item", status="failed", strategy="semantic", score=0.7,
                                      margin=0.31, healed=True, acted=2, wrong=True, repeated=1,
                                      diff=["path '/x' instead of '/itemview/list/'"])]
    text = format_app_report(AppDriftReport("fab", "Flask-AppBuilder", "items_crud", "3.4.5", [run]))
    row = next(ln for ln in text.splitlines() if ln.startswith("4.5.4"))
    assert row.split()[:10] == ["4.5.4", "/staging", "13", "12", "1", "1", "0", "0", "0", "11"]
    assert "semantic 0.31" in row
    assert "script failed at step 12" in text and "WRONG" in text and "repeated 1" in text


def test_datasette_states_under_a_prefix_compare_with_those_at_the_root(tmp_path):
    from core.bench.drift_env import DatasetteServer
    from core.bench.drift_truth import diff_states, state_of

    at_root = state_of("http://127.0.0.1:1/library/books?_sort=year", "books", "")
    under = state_of("http://127.0.0.1:2/staging/library/books?_sort=year", "books", "", "/staging")
    assert diff_states(at_root, under) == [] and under.relative_url == "/library/books?_sort=year"
    assert state_of("http://127.0.0.1:2/staging", "", None, "/staging/").path == "/"
    # a page outside the prefix keeps its whole path: it is judged as the app having left its mount point
    assert state_of("http://127.0.0.1:2/library", "", None, "/staging").path == "/library"
    server = DatasetteServer(tmp_path / "datasette", tmp_path / "library.db", port=8001, prefix="/staging")
    assert server.base_url == "http://127.0.0.1:8001/staging"
    assert server.argv()[-3:] == ["--setting", "base_url", "/staging/"]
    assert "base_url" not in DatasetteServer(tmp_path / "d", tmp_path / "l.db", port=8001).argv()


def test_prefix_proxy_takes_the_prefix_off_and_refuses_paths_outside():
    import threading
    import urllib.error
    import urllib.request
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from core.bench.drift_proxy import PrefixProxy

    class Echo(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            body = self.path.encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    upstream = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    try:
        with PrefixProxy("staging", upstream.server_address[1]) as proxy:
            assert proxy.base_url.endswith("/staging")
            with urllib.request.urlopen(proxy.base_url + "/library/books?_sort=year", timeout=10) as resp:
                assert resp.read() == b"/library/books?_sort=year"
            with urllib.request.urlopen(proxy.base_url, timeout=10) as resp:
                assert resp.read() == b"/"
            root = proxy.base_url[:-len("/staging")]
            with urllib.request.urlopen(root + "/", timeout=10) as resp:  # redirected under the prefix
                assert resp.url == proxy.base_url + "/" and resp.read() == b"/"
            with pytest.raises(urllib.error.HTTPError) as err:
                urllib.request.urlopen(root + "/library", timeout=10)
            assert err.value.code == 404
    finally:
        upstream.shutdown()
        upstream.server_close()
