"""Outcomes judged relative to the recording, as a person would (issue 19, failure kinds 1, 3 and 4).

Each flow is recorded with `steadyhand record` driven over CDP (as a user's own script would) on pages
written for these tests (tests/e2e/fixtures/outcomes), then replayed with `steadyhand run` or the
:class:`~core.engine.session.ProjectSession` the command uses:

1. a to-do list (Enter adds an item to localStorage, nothing goes to a server) recorded under
   ``/examples/a/`` passes replayed under ``/examples/b/`` of the same server (``run --base-url`` and
   ``STEADYHAND_BASE_URL``) and in a flow file of before (full paths, no ``base_path``), with exactly
   one item added;
3. a sign-in recorded on release 1 of an admin app passes on release 2, where the site name moved from
   an ``<h1>`` to a ``<div>`` while the route and the title are the same: a change, reported; the same
   sign-in answered ``403`` stops as "landed elsewhere";
4. with the parameter ``user: admin`` declared, the heading "Acme administration" and the path
   ``/admin/`` stay literal in the flow file; the typed user name becomes ``{user}``.
"""
from __future__ import annotations

import html
import json
import shutil
import time
from pathlib import Path
from urllib.parse import parse_qs

import pytest
import yaml

from cdp_recording import record, replay
from core.engine.events import ScreenChanged, VerdictReached
from core.engine.session import ProjectSession
from core.project import load_flow, load_project
from core.sites.server import Response, StaticSite

pytestmark = pytest.mark.browser

FIXTURE = Path(__file__).with_name("fixtures") / "outcomes"
PAUSE_S = 0.7  # a user's pace between actions


# --- 1. one flow, two path prefixes ---------------------------------------------------------------


@pytest.fixture(scope="module")
def prefixed(tmp_path_factory):
    """The same to-do app served under /examples/a/ and /examples/b/ of one server."""
    root = tmp_path_factory.mktemp("prefixes")
    for name in ("a", "b"):
        (root / "examples" / name).mkdir(parents=True)
        shutil.copy(FIXTURE / "todo.html", root / "examples" / name / "index.html")
    s = StaticSite(root)
    s.start()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def only_b(tmp_path_factory):
    """The to-do app under /examples/b/ only, on another port (a staging copy): a run that ignored the
    other base URL could not pass there."""
    root = tmp_path_factory.mktemp("only_b")
    (root / "examples" / "b").mkdir(parents=True)
    shutil.copy(FIXTURE / "todo.html", root / "examples" / "b" / "index.html")
    s = StaticSite(root)
    s.start()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def todo_project(tmp_path_factory, prefixed):
    """A project on /examples/a/ with one recorded flow: type an item, press Enter; then a check that the
    list holds exactly one item (added to the flow file, as a user adds a check in the studio)."""
    root = tmp_path_factory.mktemp("todo") / "app"
    (root / "flows").mkdir(parents=True)
    (root / "steadyhand.yaml").write_text(yaml.safe_dump({"name": "Todo", "base_url": prefixed.base_url + "/examples/a/"}))

    def drive(page):
        page.wait_for_load_state("load")
        time.sleep(PAUSE_S)
        page.get_by_label("New todo").click()
        page.keyboard.type("Buy milk")
        time.sleep(1.2)
        page.keyboard.press("Enter")
        page.get_by_text("1 item left").wait_for()
        time.sleep(2.5)  # the recorder takes the after-state once the page is quiet (a loaded machine is slow)

    code, out, err = record(root, "add_item", drive, "/")
    assert code == 0, out + err
    path = root / "flows" / "add_item.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["steps"].append({"id": f"s{len(doc['steps']) + 1}", "name": "exactly one item", "action": "assert",
                         "assertions": [{"kind": "count", "expected": "1", "selector": "#todo-list li"}]})
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return root


def _flow_passed(run, tmp_path: Path, name: str = "add_item") -> dict:
    doc = json.loads((tmp_path / "run.json").read_text())
    (flow,) = [f for f in doc["flows"] if f["flow"] == name]
    assert flow["passed"], run.stdout + run.stderr
    return flow


def test_the_recorder_stores_where_the_step_lands_relative_to_the_base_url(todo_project) -> None:
    flow = load_flow(todo_project / "flows" / "add_item.yaml")
    assert flow.base_path == "/examples/a/"
    assert [s.action.kind for s in flow.steps] == ["input", "press", "assert"]
    # the press's before-state may predate the typing's flush on a loaded machine: then it has no after-state
    afters = [s.recorded.after for s in flow.steps if s.recorded is not None and s.recorded.after is not None]
    assert afters, (todo_project / "flows" / "add_item.yaml").read_text()
    assert all(a.url_pattern == "/" for a in afters), afters  # not /examples/a/


@pytest.mark.parametrize("how", ["flag", "env"])
def test_a_flow_recorded_under_one_prefix_passes_under_another(todo_project, prefixed, only_b, tmp_path,
                                                               how) -> None:
    same = replay(todo_project, "add_item", "--json", str(tmp_path / "run.json"),
                  "--base-url", prefixed.base_url + "/examples/b/")  # the same server, the other prefix
    assert same.returncode == 0, same.stdout + same.stderr
    other = only_b.base_url + "/examples/b/"
    args, env = (["--base-url", other], None) if how == "flag" else ([], {"STEADYHAND_BASE_URL": other})
    run = replay(todo_project, "add_item", "--json", str(tmp_path / "run.json"), *args, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    flow = _flow_passed(run, tmp_path)
    assert flow["steps_passed"] == flow["steps_total"]  # the last one: exactly one item in the list


def test_a_project_moved_to_another_prefix_passes(todo_project, prefixed, tmp_path) -> None:
    """The project file's own base_url edited to /b/ (a tester's staging copy): before, every attempt "reached
    /examples/b/ instead of /examples/a/" and the breaker opened."""
    root = tmp_path / "moved"
    shutil.copytree(todo_project, root, ignore=shutil.ignore_patterns(".steadyhand"))
    settings = yaml.safe_load((root / "steadyhand.yaml").read_text())
    (root / "steadyhand.yaml").write_text(yaml.safe_dump({**settings, "base_url": prefixed.base_url + "/examples/b/"}))
    run = replay(root, "add_item", "--json", str(tmp_path / "run.json"))
    assert run.returncode == 0, run.stdout + run.stderr
    flow = _flow_passed(run, tmp_path)
    assert flow["steps_passed"] == flow["steps_total"] == 3 and flow["invalid_actions"] == 0


def test_a_flow_file_of_before_with_full_paths_passes_under_another_prefix(todo_project, prefixed, tmp_path) -> None:
    """A file written before base paths were kept: full paths, no ``base_path``; the project moved to /b/."""
    root = tmp_path / "old"
    shutil.copytree(todo_project, root, ignore=shutil.ignore_patterns(".steadyhand"))
    path = root / "flows" / "add_item.yaml"
    doc = yaml.safe_load(path.read_text())
    doc.pop("base_path", None)
    for step in doc["steps"]:
        after = step.get("after") or {}
        if after.get("url_pattern"):
            after["url_pattern"] = "/examples/a" + after["url_pattern"]
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    run = replay(root, "add_item", "--json", str(tmp_path / "run.json"),
                 "--base-url", prefixed.base_url + "/examples/b/")
    assert run.returncode == 0, run.stdout + run.stderr
    _flow_passed(run, tmp_path)
    # the same file, the project's own base_url edited to /b/ (a tester's staging copy): full paths still hold
    settings = yaml.safe_load((root / "steadyhand.yaml").read_text())
    (root / "steadyhand.yaml").write_text(yaml.safe_dump({**settings, "base_url": prefixed.base_url + "/examples/b/"}))
    doc["base_path"] = "/examples/a/"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    run = replay(root, "add_item", "--json", str(tmp_path / "run.json"))
    assert run.returncode == 0, run.stdout + run.stderr


def test_screens_under_another_prefix_are_the_recorded_screens(todo_project, prefixed, tmp_path) -> None:
    """Change detection judges a screen relative to the base URL too: a run at /examples/b/ after one at
    /examples/a/ (the baselines' run) reports no changed screen. Before, every baseline kept its absolute
    path and every screen of the run under the other prefix was reported changed."""
    root = tmp_path / "stored"
    shutil.copytree(todo_project, root, ignore=shutil.ignore_patterns(".steadyhand"))
    project = load_project(root)
    changed: list = []
    for base in ("/examples/a/", "/examples/b/"):
        events: list = []
        with ProjectSession(project, headless=True, emit=events.append, base_url=prefixed.base_url + base,
                            evidence="full") as s:
            result = s.run_flow(project.flows["add_item"])
        assert result.status == "passed", (base, result.error)
        changed += [(base, e.report.screen_key) for e in events if isinstance(e, ScreenChanged)]
    assert changed == []


def test_a_bad_base_url_is_refused_with_its_reason(todo_project) -> None:
    run = replay(todo_project, "add_item", "--base-url", "examples/b")
    assert run.returncode == 2 and "expects an http(s) URL" in run.stderr, run.stderr


# --- 3 and 4. a sign-in on two releases, with a parameter ----------------------------------------


class AdminApp:
    """The admin app's server: GET /login/, POST /login/ (303 to /admin/, or 403 when refusing),
    GET /admin/ in the release set by :attr:`release`."""

    def __init__(self) -> None:
        self.release = "v1"
        self.refuse = False
        self.site = StaticSite(FIXTURE)
        self.site.route("GET", "/login/", lambda req: self._page("login.html"))
        self.site.route("POST", "/login/", self._login)
        self.site.route("GET", "/admin/", self._admin)

    @staticmethod
    def _page(name: str, status: int = 200, user: str = "") -> Response:
        text = (FIXTURE / name).read_text().replace("{user}", html.escape(user))
        return Response.text(text, status, "text/html; charset=utf-8")

    def _login(self, req) -> Response:
        if self.refuse:
            return self._page("refused.html", 403)
        user = (parse_qs(req.body.decode("utf-8")).get("username") or [""])[0]
        return Response.redirect("/admin/", 303).with_headers(("Set-Cookie", f"user={user}; Path=/"))

    def _admin(self, req) -> Response:
        return self._page(f"admin_{self.release}.html", user=req.cookies.get("user", ""))


@pytest.fixture(scope="module")
def admin():
    app = AdminApp()
    app.site.start()
    yield app
    app.site.stop()


@pytest.fixture(scope="module")
def signin_project(tmp_path_factory, admin):
    root = tmp_path_factory.mktemp("signin") / "app"
    (root / "flows").mkdir(parents=True)
    (root / "steadyhand.yaml").write_text(yaml.safe_dump({"name": "Admin", "base_url": admin.site.base_url,
                                                          "params": {"user": "admin"}}))

    def drive(page):
        page.wait_for_load_state("load")
        time.sleep(PAUSE_S)
        page.get_by_label("Username:").click()
        page.keyboard.type("admin")
        time.sleep(1.2)
        page.get_by_role("button", name="Log in").click()
        page.get_by_text("Site overview").wait_for()
        time.sleep(2.5)  # the recorder takes the after-state once the page is quiet (a loaded machine is slow)

    admin.release, admin.refuse = "v1", False
    code, out, err = record(root, "sign_in", drive, "/login/")
    assert code == 0, out + err
    return root


def test_a_parameter_value_is_a_placeholder_only_as_a_whole_field(signin_project) -> None:
    """Failure kind 4: ``user: admin`` must not turn "administration" into "{user}istration" nor /admin/
    into /{user}/; the typed user name (the whole field) is the parameter."""
    flow = load_flow(signin_project / "flows" / "sign_in.yaml")
    typed = [s for s in flow.steps if s.action.kind == "input"]
    assert [s.action.value for s in typed] == ["{user}"]
    click = [s for s in flow.steps if s.action.kind == "click" and s.target.name == "Log in"]
    assert click and not click[-1].reversible  # the form posts: the sign-in is irreversible
    after = click[-1].recorded.after
    assert after is not None, (signin_project / "flows" / "sign_in.yaml").read_text()
    assert after.url_pattern == "/admin/" and after.heading == "Acme administration", after
    text = (signin_project / "flows" / "sign_in.yaml").read_text()
    assert "{user}istration" not in text and "/{user}/" not in text


def _run_session(project_root: Path, params: dict[str, str] | None = None):
    events: list = []
    project = load_project(project_root)
    with ProjectSession(project, headless=True, emit=events.append, use_store=False, screenshots=False) as s:
        result = s.run_flow(project.flows["sign_in"], params=params)
    return result, [e.verdict for e in events if isinstance(e, VerdictReached)]


def test_a_drifted_heading_with_the_same_route_and_title_is_a_change_not_another_page(signin_project, admin) -> None:
    """Failure kind 3: release 2 moved the site name from an <h1> to a <div>; the irreversible sign-in
    passes and says what changed."""
    admin.release, admin.refuse = "v2", False
    try:
        result, verdicts = _run_session(signin_project, {"user": "bob"})
    finally:
        admin.release = "v1"
    assert result.status == "passed", (result.error, [v.reason for v in verdicts])
    notes = [v.reason for v in verdicts if "changed since the recording" in v.reason]
    assert len(notes) == 1 and "headed 'Site overview' instead of 'Acme administration'" in notes[0], notes


def test_a_refused_sign_in_is_still_another_page(signin_project, admin) -> None:
    """The weighing does not excuse a real failure: a 403 answer to the step's own request stops the run."""
    admin.release, admin.refuse = "v1", True
    try:
        result, verdicts = _run_session(signin_project)
    finally:
        admin.refuse = False
    assert result.status != "passed"
    assert any("answered 403 to the step's request (POST /login/)" in v.reason for v in verdicts), \
        [v.reason for v in verdicts]


def test_the_main_landmark_holds_where_the_title_and_the_first_heading_changed(signin_project, admin) -> None:
    """Release 3 changed the title and moved the site name out of its <h1>; the route and the main part of
    the page ("Site overview", the name of its <main>, stored by the recorder) are the ones recorded.  Two
    signals of four disagree and nothing says another page (no error page, no error answer, not the
    sign-in page again): the irreversible sign-in is done and passes with the change reported.  Before the
    main landmark was a signal it was judged "landed elsewhere" and the run stopped."""
    flow = load_flow(signin_project / "flows" / "sign_in.yaml")
    click = [s for s in flow.steps if s.action.kind == "click" and s.target.name == "Log in"][-1]
    assert click.recorded.after.landmark == "Site overview", click.recorded.after
    admin.release, admin.refuse = "v3", False
    try:
        result, verdicts = _run_session(signin_project, {"user": "bob"})
    finally:
        admin.release = "v1"
    assert result.status == "passed", (result.error, [v.reason for v in verdicts])
    notes = [v.reason for v in verdicts if "changed since the recording" in v.reason]
    assert len(notes) == 1 and "titled 'Dashboard - Acme'" in notes[0], notes
