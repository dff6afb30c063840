"""Exploration in real Chromium (P4, P8, S6): the demo app mapped without a write, a goal found and saved as a
flow that replays green, a page we did not write (MiniWoB++), and a harmless-looking button that writes."""
from __future__ import annotations

import fnmatch
import shutil
from pathlib import Path

import yaml

from core.cli import main
from core.engine.explore import Explorer, ExploreSettings
from core.engine.session import ProjectSession
from core.project import load_project
from core.sites.server import LoopbackServer, Response
from core.store.graphs import GraphTable

ROOT = Path(__file__).resolve().parents[2]
#: Demo controls that write, send or end the session (their data-gt ids): exploration must never activate them.
WRITING_CONTROLS = ("nav.signout", "requests.export", "requests.save", "row.*.approve", "row.*.delete",
                    "dialog.*", "new.submit")


def _copy(name: str, tmp_path: Path) -> Path:
    dst = tmp_path / name
    shutil.copytree(ROOT / "projects" / name, dst, ignore=shutil.ignore_patterns(".steadyhand"))
    return dst


def test_explore_demo_stores_a_graph_and_writes_nothing(tmp_path):
    project = load_project(_copy("demo", tmp_path))
    with ProjectSession(project, headless=True) as session:
        report = Explorer(session, ExploreSettings(setup="sort_table:3", budget=5, depth=2, seconds=120)).run()
        truth = session.site.site  # the demo server's own log: only the test reads it
        writes, acts = truth.writes(), truth.activations()
        nodes, edges = GraphTable(session.store).counts(report.graph)
    assert report.actions >= 4 and report.stop.startswith(("budget", "nothing left"))
    assert writes == []  # no create, approve, delete or saved report
    page = [a["gt"] for a in acts if a["source"] == "page"]
    assert not [g for g in page if any(fnmatch.fnmatchcase(g, p) for p in WRITING_CONTROLS)], page
    logins = [a for a in acts if a.get("kind") == "login"]
    assert len(logins) == 1 and logins[0]["outcome"] == "ok"  # the setup's sign-in, once
    assert any("Delete" in s for s in report.skipped_irreversible)
    assert any("Save report" in s for s in report.skipped_irreversible)
    assert nodes == report.states >= 3 and edges >= 3


def test_explore_goal_saves_a_flow_that_replays_green(tmp_path, capsys):
    root = _copy("demo", tmp_path)
    code = main(["explore", str(root), "--setup", "sort_table:3", "--goal", "Sorted by Status, ascending appears",
                 "--budget", "12", "--save", "to_status_sort"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "goal 'Sorted by Status, ascending' reached in 1 steps" in out
    flow = yaml.safe_load((root / "flows" / "to_status_sort.yaml").read_text())
    last = flow["steps"][-1]
    assert [s["id"] for s in flow["steps"]] == ["s1", "s2", "s3", "s4"]
    assert last["target"]["role"] == "button" and last["target"]["xpath"] and last["target"]["bbox"]
    assert last["assertions"] == [{"kind": "text_appears", "expected": "Sorted by Status, ascending"}]
    assert main(["run", str(root), "--flow", "to_status_sort", "--headless"]) == 0
    assert "to_status_sort  passed  4/4" in capsys.readouterr().out


def test_explore_a_miniwob_page_maps_its_tabs(tmp_path):
    project = load_project(_copy("miniwob", tmp_path))
    with ProjectSession(project, headless=True) as session:
        report = Explorer(session, ExploreSettings(start="/miniwob/click-tab-2.html", budget=5, seconds=60)).run()
        nodes, edges = GraphTable(session.store).counts(report.graph)
    assert report.actions == 5 and report.states >= 2  # one state per tab shown
    assert report.loops_pruned >= 1  # going back to a tab already shown is a loop (P4)
    assert nodes >= 2 and edges >= 3


PAGE = """<!doctype html><title>Notes</title><main><h1>Notes</h1>
<button id="more" type="button" onclick="fetch('/api/notes', {method: 'POST', body: '{}'})
  .then(r => document.querySelector('#out').textContent = 'sent ' + r.status)
  .catch(() => document.querySelector('#out').textContent = 'not sent')">Frobnicate</button>
<button id="show" type="button" class="toggle" onclick="document.querySelector('#panel').hidden = false">Show more
</button><div id="panel" hidden><p>The panel</p><a href="/other">Other page</a></div><p id="out"></p></main>"""


def test_a_write_behind_a_harmless_button_never_reaches_the_server(tmp_path):
    posts: list[str] = []
    srv = LoopbackServer()
    srv.route("GET", "/", lambda req: Response.text(PAGE, content_type="text/html; charset=utf-8"))
    srv.route("GET", "/other", lambda req: Response.text(PAGE.replace("Notes", "Other"),
                                                         content_type="text/html; charset=utf-8"))
    srv.route("POST", "/api/notes", lambda req: posts.append(req.path) or Response.json({"ok": True}, 201))
    srv.start()
    try:
        (tmp_path / "flows").mkdir()
        (tmp_path / "steadyhand.yaml").write_text(yaml.safe_dump({"name": "Notes", "base_url": srv.base_url}))
        project = load_project(tmp_path)
        with ProjectSession(project, headless=True) as session:
            ex = Explorer(session, ExploreSettings(start="/", budget=10, seconds=60, allow_writes=False))
            report = ex.run()
            # the unsure button was never tried; "Show more" and the link were
            assert any("Frobnicate" in s and "unsure" in s for s in report.skipped_irreversible)
            assert report.actions >= 2 and posts == []
            # even when a harmless-looking action sends a write, the guard stops it before it leaves the browser
            session.driver.evaluate("() => fetch('/api/notes', {method: 'POST', body: '{}'}).catch(() => 0)")
            assert [r.shown for r in ex.guard.take()] == ["POST /api/notes"]
        assert posts == []
    finally:
        srv.stop()


def test_explore_with_a_model_plans_backs_off_on_a_mismatch_and_replans(tmp_path, capsys):
    """P3: the model gives a strategy and one action; when what it expected does not appear the walk goes back
    to the last stable state and asks again (told why).  The scripted server stands in for the model."""
    import re

    from core.plan.scripted_server import ScriptedModelServer, last_user_text, texts_of

    def rule(req: dict) -> str:
        text = last_user_text(req)
        lines = dict(re.findall(r"^(o\d+) \| (.*)$", text, flags=re.M))
        want = "Ref" if "Last outcome" not in text else "Employee"  # a wrong first plan, then the right one
        choice = next(k for k, v in lines.items() if f'"{want}"' in v and "click" in v)
        return ('{"strategy": ["the requests list", "sorted by employee"], "choice": "%s", '
                '"expect": "Sorted by Employee", "reason": "the employee column sorts the list"}' % choice)

    root = _copy("demo", tmp_path)
    with ScriptedModelServer(rule) as srv:
        cfg = yaml.safe_load((root / "steadyhand.yaml").read_text())
        cfg["model"] = {"base_url": srv.base_url, "name": "scripted"}
        (root / "steadyhand.yaml").write_text(yaml.safe_dump(cfg))
        code = main(["explore", str(root), "--setup", "sort_table:3", "--goal", "Sorted by Employee, ascending",
                     "--budget", "6", "--save", "planned"])
        out = capsys.readouterr().out
        sent = [t for r in srv.requests for t in texts_of(r)]
    assert code == 0, out
    assert "planned by model scripted; backed off and re-planned 1 times" in out
    assert len(srv.requests) == 2 and "Last outcome: 'Sorted by Employee' did not appear" in sent[-1]
    assert not any("demo-pass" in t for t in sent)  # the secret typed by the setup never reaches the model
    assert (root / "flows" / "planned.yaml").is_file()


def test_save_never_overwrites_a_flow_without_force(tmp_path) -> None:
    import shutil

    from core.cli import main

    root = tmp_path / "demo"
    shutil.copytree(Path(__file__).resolve().parents[2] / "projects" / "demo", root,
                    ignore=shutil.ignore_patterns(".steadyhand"))
    before = (root / "flows" / "sort_table.yaml").read_bytes()
    code = main(["explore", str(root), "--setup", "sort_table:3", "--goal", "Sorted by Status, ascending appears",
                 "--save", "sort_table"])
    assert code == 2 and (root / "flows" / "sort_table.yaml").read_bytes() == before
