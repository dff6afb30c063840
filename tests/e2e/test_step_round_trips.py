"""What a passing step costs in round trips and store commits, on `steadyhand run`'s session in real Chromium
(issue 20 item 3: a replay as fast as the script it replaces).

* The checkpoint's form values, the settle wait's probe and the kept state the act phase snapshots (an effect
  seen is never repeated) are read in ONE evaluation between the checkpoint phase and the action; the
  checkpoint still keeps every form value (a password by digest only).
* A pause between the two (a breakpoint, the run paused at the act phase) makes the act phase read again: what
  a person did meanwhile is never taken for the action's effect.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from core.engine import pipeline
from core.engine.session import ProjectSession
from core.sites.server import LoopbackServer, Response
from tests.e2e.test_fastpath_run import PAGE, _project

pytestmark = pytest.mark.browser


def test_checkpoint_and_action_read_the_page_once_and_the_checkpoint_keeps_the_form(tmp_path: Path,
                                                                                     monkeypatch) -> None:
    server = LoopbackServer()
    server.route("GET", "/page", lambda req: Response.text(PAGE, 200, "text/html; charset=utf-8"))
    reads: list[int] = []  # page evaluations from the checkpoint phase's start to the action, per step
    with server:
        project = _project(tmp_path / "fast", server.base_url)
        with ProjectSession(project, headless=True) as session:
            d = session.driver
            assert d is not None
            real_bounded, real_perform = d._bounded, d.perform
            count, start = [0], [0]

            def counted(obj, method, *args, **kw):
                if method == "evaluate":
                    count[0] += 1
                return real_bounded(obj, method, *args, **kw)

            def perform(*args, **kw):
                reads.append(count[0] - start[0])
                return real_perform(*args, **kw)

            real_checkpoint = pipeline.checkpoint

            def checkpoint(ex, ctx):
                start[0] = count[0]
                real_checkpoint(ex, ctx)

            monkeypatch.setattr(d, "_bounded", counted)
            monkeypatch.setattr(d, "perform", perform)
            monkeypatch.setattr(pipeline, "PHASE_FUNCTIONS", tuple(
                (name, checkpoint if name == "checkpoint" else fn) for name, fn in pipeline.PHASE_FUNCTIONS))
            result = session.run_flow(project.flows["fast"])
            assert session.store is not None
            stored = session.store.checkpoints(result.run_id)
            presses = d.evaluate("() => window.presses || 0")
    assert result.status == "passed", result.error
    assert presses == 1
    assert reads == [1, 1, 1], reads  # type the name, show more, save: one read each before acting
    by_index = {c["index"]: c for c in stored}
    name_field = [f for f in by_index[1]["fields"] if f["key"] == "#name"]
    assert name_field and name_field[0]["value"] == "Ada"  # the checkpoint after typing kept the value typed
    assert [f["value"] for f in by_index[0]["fields"] if f["key"] == "#name"] == [""]


def test_a_pause_between_the_checkpoint_and_the_action_makes_the_act_phase_read_again() -> None:
    from types import SimpleNamespace

    from core.engine.acting import PREREAD_PAUSE_S, act_read

    calls: list[str] = []

    class Driver:  # only the reads act_read makes; it never acts
        page = None

        def probe(self):
            calls.append("probe")
            return {"mutations": 9}

    ex = SimpleNamespace(driver=Driver())
    ctx = SimpleNamespace(preread=1.0, waited=1.0 + PREREAD_PAUSE_S / 2, probe={"mutations": 1},
                          effects_read={"kept": 1}, step=None, already=False)
    act_read(ex, ctx)  # no pause since the checkpoint's read: taken over, nothing read
    assert calls == [] and ctx.probe == {"mutations": 1}
    ctx.waited = 1.0 + 2.0  # a person paused the run two seconds before the act phase
    act_read(ex, ctx)
    assert calls == ["probe"] and ctx.probe == {"mutations": 9} and ctx.preread is None


ROOT = Path(__file__).resolve().parents[2]

#: Headings main_heading's rule must pick from: a dialog's h1 (not it), a hidden h1 (not it), the page's h2.
HEADINGS = """<!doctype html><title>h</title><div role="dialog"><h1>Cookies</h1></div>
<h1 style="display:none">Hidden</h1><main><h2>  Leave
 requests </h2><h1 style="visibility:hidden">Invisible</h1></main>"""


def test_the_landing_heading_is_read_with_the_look_and_by_the_same_rule(tmp_path: Path, monkeypatch) -> None:
    import shutil

    from core.engine.screen import FACTS_JS
    from core.perception.pagefacts import main_heading
    from tests.e2e.browser_fixtures import driver_on

    (tmp_path / "index.html").write_text(HEADINGS)
    with driver_on(tmp_path) as d:
        d.goto("/index.html")
        assert d.evaluate(FACTS_JS)["main_heading"] == main_heading(d) == "Leave requests"
    # a demo flow whose steps land on a recorded heading: the landing check reads no heading of its own
    dst = tmp_path / "demo"
    shutil.copytree(ROOT / "projects" / "demo", dst, ignore=shutil.ignore_patterns(".steadyhand"))
    from core.project import load_project

    project = load_project(dst)
    reads: list[str] = []
    asked: list[str | None] = []
    real_read, real_heading = pipeline.main_heading, pipeline._heading
    monkeypatch.setattr(pipeline, "main_heading", lambda driver: reads.append("heading") or real_read(driver))
    monkeypatch.setattr(pipeline, "_heading", lambda ex, ctx: asked.append(real_heading(ex, ctx)) or asked[-1])
    with ProjectSession(project, headless=True) as session:
        result = session.run_flow(project.flows["login_lockout"])
    assert result.status == "passed", result.error
    assert "Sign in" in asked  # the recorded landings were judged on the heading read with the look
    assert reads == []  # and none was read in a round trip of its own
