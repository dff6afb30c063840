"""What a passing step costs in round trips and store commits, on `steadyhand run`'s session in real Chromium
(issue 20 item 3: a replay as fast as the script it replaces).

* A step whose page did nothing since the previous step's after-look makes NO call into the page before its
  action: the reuse check's token, the recorded locator's confirmation, the checkpoint's form values, the
  settle wait's probe and the kept state the act phase snapshots (an effect seen is never repeated) were read
  by the previous step's settle wait, right after its look (:func:`core.engine.ahead.next_reads`); the
  checkpoint still keeps every form value (a password by digest only).  When the page changed while that
  wait ran (a reaction that came later), or anything but a read was asked of the page since, the step reads
  them itself, in one call.
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


def _calls_before_acting(tmp_path: Path, monkeypatch, page: str,
                         runs: int = 1) -> tuple[list[int], object, list, int]:
    """(calls into the page from each step's start to its action, the last run's result, its checkpoints, presses
    in it); ``runs`` runs of the flow in one session, the calls of the last one."""
    server = LoopbackServer()
    server.route("GET", "/page", lambda req: Response.text(page, 200, "text/html; charset=utf-8"))
    reads: list[int] = []  # calls into the page from the step's start (its observe phase) to the action, per step
    # which calls a step makes, not how fast the machine is: kept reads stand however long the kernel took (on a
    # loaded machine its own work between the wait and the next step passed the 100 ms bound now and then)
    from core.perception import driver as driver_mod
    monkeypatch.setattr(driver_mod, "LOOK_KEPT_S", 5.0)
    with server:
        project = _project(tmp_path / "fast", server.base_url)
        with ProjectSession(project, headless=True) as session:
            d = session.driver
            assert d is not None
            real_bounded, real_perform = d._bounded, d.perform
            count, start = [0], [0]

            def counted(obj, method, *args, **kw):
                if method in ("evaluate", "evaluate_all", "evaluate_handle"):
                    count[0] += 1
                return real_bounded(obj, method, *args, **kw)

            def perform(*args, **kw):
                reads.append(count[0] - start[0])
                return real_perform(*args, **kw)

            real_observe = pipeline.observe

            def observe(ex, ctx):
                start[0] = count[0]
                real_observe(ex, ctx)

            monkeypatch.setattr(d, "_bounded", counted)
            monkeypatch.setattr(d, "perform", perform)
            monkeypatch.setattr(pipeline, "PHASE_FUNCTIONS", tuple(
                (name, observe if name == "observe" else fn) for name, fn in pipeline.PHASE_FUNCTIONS))
            for _ in range(runs):
                reads.clear()
                result = session.run_flow(project.flows["fast"])
            assert session.store is not None
            stored = session.store.checkpoints(result.run_id)
            presses = d.evaluate("() => window.presses || 0")
    return reads, result, stored, presses


def test_checkpoint_and_action_read_nothing_more_before_acting_and_the_checkpoint_keeps_the_form(
        tmp_path: Path, monkeypatch) -> None:
    reads, result, stored, presses = _calls_before_acting(tmp_path, monkeypatch, PAGE)
    assert result.status == "passed", result.error
    assert presses == 1
    # type the name (the flow's first look, the locator's confirmation, the read before acting); show more and
    # save: their reads came with the settle wait of the step before (the fill and the click changed the page at
    # once, nothing came while the wait ran)
    assert reads == [3, 0, 0], reads
    by_index = {c["index"]: c for c in stored}
    name_field = [f for f in by_index[1]["fields"] if f["key"] == "#name"]
    assert name_field and name_field[0]["value"] == "Ada"  # the checkpoint after typing kept the value typed
    assert [f["value"] for f in by_index[0]["fields"] if f["key"] == "#name"] == [""]


def test_a_flows_first_look_rides_on_the_start_pages_settle_wait(tmp_path: Path, monkeypatch) -> None:
    # the session's second run: the start URL's settle wait takes the first step's light look as it ends (the
    # first run taught the driver which look that is) and the first step's reads right after it (the locator's
    # confirmation, the probe and what it keeps before acting): the first step asks the page nothing either
    reads, result, stored, presses = _calls_before_acting(tmp_path, monkeypatch, PAGE, runs=2)
    assert result.status == "passed", result.error
    assert presses == 1  # each run loads the page afresh
    assert reads == [0, 0, 0], reads
    assert result.steps[0].resolution is not None and result.steps[0].resolution.reason.startswith("fast path")
    by_index = {c["index"]: c for c in stored}
    assert [f["value"] for f in by_index[0]["fields"] if f["key"] == "#name"] == [""]  # the form as it was


def _check_more_after_show_more(monkeypatch) -> None:
    """The fast flow with "Show more" checked by a selector's assertion (``#more`` visible)."""
    from tests.e2e import test_fastpath_run

    flow = {**test_fastpath_run.FLOW, "steps": [dict(s) for s in test_fastpath_run.FLOW["steps"]]}
    flow["steps"][1]["assertions"] = [{"kind": "visible", "selector": "#more"}]
    monkeypatch.setattr(test_fastpath_run, "FLOW", flow)


def test_an_assertion_checked_after_the_settle_wait_keeps_the_next_steps_reads(tmp_path: Path, monkeypatch) -> None:
    # "Show more" is checked by a selector's assertion after its settle wait: one call that only reads (how many
    # match, the first one's facts), so the reads the wait took for "Save" still stand
    _check_more_after_show_more(monkeypatch)
    reads, result, _, presses = _calls_before_acting(tmp_path, monkeypatch, PAGE)
    assert result.status == "passed", result.error
    assert presses == 1
    assert reads == [3, 0, 0], reads


def test_an_assertion_that_had_to_wait_drops_the_next_steps_reads(tmp_path: Path, monkeypatch) -> None:
    # the click says "Loading more" at once and shows the paragraph 1.2 s later (a timer over 1 s is no
    # reaction the settle wait waits for): the assertion polls, the page changed meanwhile, and "Save" reads
    # the page again itself
    late = PAGE.replace("document.getElementById('more').hidden = false",
                        "document.getElementById('status').textContent = 'Loading more'; "
                        "setTimeout(() => { document.getElementById('more').hidden = false; }, 1200)")
    _check_more_after_show_more(monkeypatch)
    reads, result, _, presses = _calls_before_acting(tmp_path, monkeypatch, late)
    assert result.status == "passed", result.error
    assert presses == 1
    assert reads[2] >= 1, reads


def test_a_focus_rings_transition_moves_nothing_a_look_saw(tmp_path: Path, monkeypatch) -> None:
    # the field typed in keeps its focus ring's shadow moving for half a second (Bootstrap's form controls do
    # it for 150 ms): it only repaints, so the typing step's look still stands for the next step
    ring = PAGE.replace("<h1>Fast path</h1>", "<style>input { transition: box-shadow 0.5s, border-color 0.5s; }"
                        "input:focus { box-shadow: 0 0 8px blue; border-color: blue; }</style><h1>Fast path</h1>")
    assert ring != PAGE
    reads, result, _, presses = _calls_before_acting(tmp_path, monkeypatch, ring)
    assert result.status == "passed", result.error
    assert presses == 1
    assert reads == [3, 0, 0], reads


def test_a_change_while_the_settle_wait_ran_makes_the_next_step_read_again(tmp_path: Path, monkeypatch) -> None:
    # "Show more" shows its text 300 ms later (a reaction the settle wait waits for): the page changed after the
    # wait's elements were matched, so the reads it took are not the page the next step acts on
    late = PAGE.replace("onclick=\"document.getElementById('more').hidden = false\"",
                        "onclick=\"setTimeout(() => { document.getElementById('more').hidden = false; }, 300)\"")
    assert late != PAGE
    reads, result, _, presses = _calls_before_acting(tmp_path, monkeypatch, late)
    assert result.status == "passed", result.error
    assert presses == 1
    assert reads == [3, 0, 1], reads


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


def test_a_fast_steps_after_look_rides_on_its_settle_wait(tmp_path: Path, monkeypatch) -> None:
    """From the settle phase's start to the verify phase's end a passing fast step calls into the page once: the
    settle wait, which takes the light after-look as it ends (``wait_settled(look=True)``); the observation the
    verify phase judges is that look (the step's effect is in it)."""
    server = LoopbackServer()
    server.route("GET", "/page", lambda req: Response.text(PAGE, 200, "text/html; charset=utf-8"))
    calls: list[int] = []  # calls into the page from the settle phase's start to the verify phase's end, per step
    with server:
        project = _project(tmp_path / "fast", server.base_url)
        with ProjectSession(project, headless=True) as session:
            d = session.driver
            assert d is not None
            real_bounded = d._bounded
            count, start = [0], [0]

            def counted(obj, method, *args, **kw):
                count[0] += 1
                return real_bounded(obj, method, *args, **kw)

            real_settle, real_verify = pipeline.settle, pipeline.verify

            def settle(ex, ctx):
                start[0] = count[0]
                real_settle(ex, ctx)

            def verify(ex, ctx):
                real_verify(ex, ctx)
                calls.append(count[0] - start[0])

            monkeypatch.setattr(d, "_bounded", counted)
            swap = {"settle": settle, "verify": verify}
            monkeypatch.setattr(pipeline, "PHASE_FUNCTIONS", tuple(
                (name, swap.get(name, fn)) for name, fn in pipeline.PHASE_FUNCTIONS))
            ahead_before = d.looks_ahead
            result = session.run_flow(project.flows["fast"])
            looks_ahead = d.looks_ahead - ahead_before
    assert result.status == "passed", result.error
    # type the name, show more: the settle wait and nothing else; save waits for "Done 1" (its assertion polls)
    assert calls[:2] == [1, 1], calls
    assert looks_ahead >= 2
    shown = [o for o in result.steps if o.index == 1]
    assert shown and shown[0].status == "passed"


def test_a_look_taken_by_the_settle_wait_is_dropped_once_the_page_is_asked_anything(tmp_path: Path) -> None:
    """The look a settle wait took stands for the next light look only when nothing was asked of the page since:
    a call in between (here a script that changes the page) makes the observation read the page itself, and it
    sees the change."""
    from tests.e2e.browser_fixtures import driver_on

    (tmp_path / "index.html").write_text('<!doctype html><title>t</title><main><button id="b">One</button></main>')
    with driver_on(tmp_path) as d:
        d.goto("/index.html")
        d.observe(screenshot=False, ax=False)  # the light look whose reads the settle wait repeats
        probe = d.probe()
        d.wait_settled(start=probe, quiet_ms=40.0, react_from=probe.get("timerSeq"), look=True)
        reads = d.light_reads
        obs = d.observe(screenshot=False, ax=False)  # taken by the wait: no read of its own
        assert d.light_reads == reads + 1 and d.looks_ahead == 1
        assert any(c.descriptor.name == "One" for c in obs.candidates)
        probe = d.probe()
        d.wait_settled(start=probe, quiet_ms=40.0, react_from=probe.get("timerSeq"), look=True)
        d.evaluate("() => { document.getElementById('b').textContent = 'Two'; }")  # asked after the wait
        obs = d.observe(screenshot=False, ax=False)
        assert d.looks_ahead == 1  # the wait's look was dropped: the page was read again
        names = [c.descriptor.name for c in obs.candidates]
        assert "Two" in names and "One" not in names


def test_a_step_with_its_authors_selector_and_no_codegen_locator_acts_through_the_selector(tmp_path: Path) -> None:
    """The demo's sort buttons read "EMPLOYEE" (CSS capitals: no role-and-name locator is recorded) and carry their
    author's selector: the step is confirmed through that selector and acts through it, on the fast path (its
    settle wait the fast one), as the exported script acts through it."""
    import shutil

    from core.project import load_project

    dst = tmp_path / "demo"
    shutil.copytree(ROOT / "projects" / "demo", dst, ignore=shutil.ignore_patterns(".steadyhand"))
    project = load_project(dst)
    flow = project.flows["sort_table"]
    acted: list[str | None] = []
    settled: list[dict] = []
    with ProjectSession(project, headless=True) as session:
        d = session.driver
        assert d is not None
        real_perform, real_wait = d.perform, d.wait_settled

        def perform(action, ref, value, *, locator=None):
            acted.append(locator)
            return real_perform(action, ref, value, locator=locator)

        def wait(**kw):
            settled.append(kw)
            return real_wait(**kw)

        d.perform, d.wait_settled = perform, wait
        result = session.run_flow(flow)
    assert result.status == "passed", result.error
    sorts = [i for i, s in enumerate(flow.steps) if s.selector and s.target.name.isupper()]
    assert len(sorts) == 2
    assert [acted[i] for i in sorts] == [flow.steps[i].selector for i in sorts]
    # the fast settle wait (its short quiet time, the look taken as it ends) for each of them
    step_waits = [kw for kw in settled if "long" in kw]
    assert all(step_waits[i].get("look") for i in sorts), step_waits


def test_the_reads_a_settle_wait_took_stand_only_until_something_else_is_asked_of_the_page(tmp_path: Path) -> None:
    """``wait_settled(look=True, then=...)`` takes the next step's reads after its look; ``read_ahead`` answers
    from them without a call into the page - the same indices a call would read - unless a call other than a
    page library read came in between, or the reads are for another selector."""
    from core.engine.screen import FACTS_JS, TOKEN_JS
    from tests.e2e.browser_fixtures import driver_on

    (tmp_path / "page.html").write_text(PAGE)
    with driver_on(tmp_path) as d:
        d.goto("/page.html")
        selector = 'internal:role=button[name="Show more"s]'
        then = (selector, TOKEN_JS, None, None)

        def settle_and_token():
            d.observe(screenshot=False, ax=False, around=(TOKEN_JS, FACTS_JS))  # a light look: its reads are kept
            start = d.probe()
            d.page.fill("#name", "Ada")
            d.wait_settled(start=start, quiet_ms=40, react_from=start["timerSeq"], look=True, then=then)
            d.observe(screenshot=False, ax=False, around=(TOKEN_JS, FACTS_JS))  # the look the wait took
            return d.around[1]["token"]

        real = d._bounded
        calls: list[str] = []

        def counted(obj, method, *args, **kw):
            calls.append(method)
            return real(obj, method, *args, **kw)

        d._bounded = counted
        token = settle_and_token()
        calls.clear()
        kept = d.read_ahead(*then[:2], token, None, None)
        assert calls == [] and kept["same"] is True and d.reads_kept == 1
        fresh = d.read_ahead(*then[:2], token, None, None)  # taken once: this one is a call into the page
        assert calls == ["evaluate_all"] and fresh["indices"] == kept["indices"] and len(kept["indices"]) == 1
        assert kept["indices"][0] >= 0  # the button as the look listed it

        token = settle_and_token()
        d._lib(d.page.main_frame, "allText")  # an assertion's read: the reads still stand
        calls.clear()
        assert d.read_ahead(*then[:2], token, None, None)["same"] is True and calls == []

        token = settle_and_token()
        d.evaluate("() => { document.getElementById('more').hidden = false; }")  # anything else: they are dropped
        calls.clear()
        got = d.read_ahead(*then[:2], token, None, None)
        assert calls == ["evaluate_all"] and got["same"] is False

        token = settle_and_token()
        calls.clear()
        assert d.read_ahead('internal:role=button[name="Save"s]', TOKEN_JS, token, None, None)["same"] is True
        assert calls == ["evaluate_all"]  # reads for another step's locator: read now
