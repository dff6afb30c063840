"""The fast path on the run path (issue 20 item 2): `steadyhand run`'s session, real pages, real Chromium.

* On an unchanged page every step whose recorded locator finds its element alone takes the fast path: its
  resolution says so, it acts through that locator, it waits the short quiet time and keeps no screenshot.
* A step whose effect shows later than the fast wait: the light look disagrees, the kernel waits the full
  quiet time and looks again - the step passes, its action done once.
* A step whose recorded locator finds nothing (the demo's tweaked variant renamed it): the full look decides,
  the chain heals, and the healed step keeps its before and after screenshots.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from core.engine.session import ProjectSession
from core.project import load_project
from core.sites.server import LoopbackServer, Response

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]

#: A form whose "Save" shows "Working" at once, a dot every 60 ms (gaps longer than the fast path's 40 ms quiet
#: time, shorter than the project's 120 ms) and "Done <presses>" after five dots; each press is counted.
PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Fast</title></head><body><main>
<h1>Fast path</h1>
<label for="name">Name</label> <input id="name" type="text">
<button type="button" id="save" onclick="window.presses = (window.presses || 0) + 1;
 const st = document.getElementById('status'); st.textContent = 'Working'; let dots = 0;
 const tick = () => { dots += 1; st.textContent = dots > 5 ? 'Done ' + window.presses : 'Working' + '.'.repeat(dots);
 if (dots <= 5) setTimeout(tick, 60); }; setTimeout(tick, 60)">Save</button>
<button type="button" id="open" onclick="document.getElementById('more').hidden = false">Show more</button>
<p id="status" role="status"></p><p id="more" hidden>More text</p></main></body></html>"""

FLOW = {
    "schema_version": 1, "name": "fast", "description": "Type a name, show more, save.", "start_url": "/page",
    "steps": [
        {"id": "s1", "name": "Type the name", "action": "input", "value": "Ada",
         "target": {"tag": "input", "role": "textbox", "name": "Name", "label": "Name", "id": "name", "type": "text"}},
        {"id": "s2", "name": "Show more", "action": "click",
         "target": {"tag": "button", "role": "button", "name": "Show more", "text": "Show more", "id": "open"}},
        {"id": "s3", "name": "Save", "action": "click",
         "target": {"tag": "button", "role": "button", "name": "Save", "text": "Save", "id": "save"},
         "assertions": [{"kind": "text_appears", "expected": "Done 1"}]},
    ],
}


def _project(root: Path, base_url: str):
    (root / "flows").mkdir(parents=True)
    settings = {"schema_version": 1, "name": "Fast", "base_url": base_url,
                "browser": {"headless": True, "viewport": {"width": 1280, "height": 800}}}
    (root / "steadyhand.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))
    (root / "flows" / "fast.yaml").write_text(yaml.safe_dump(FLOW, sort_keys=False))
    return load_project(root)


def _shots(project, run_id: str) -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    for p in (project.data_dir / "screenshots" / run_id).glob("*.png"):
        index, when, _ = p.stem.split("_")
        out.setdefault(int(index), set()).add(when)
    return out


def _run(tmp_path: Path):
    server = LoopbackServer()
    server.route("GET", "/page", lambda req: Response.text(PAGE, 200, "text/html; charset=utf-8"))
    with server:
        project = _project(tmp_path / "fast", server.base_url)
        assert project.engine_settings.evidence == "failures"  # the default of `steadyhand run`
        with ProjectSession(project, headless=True) as session:
            result = session.run_flow(project.flows["fast"])
            presses = session.driver.evaluate("() => window.presses || 0")  # type: ignore[union-attr]
    return project, result, presses


def test_steps_on_an_unchanged_page_take_the_fast_path_and_keep_no_screenshot(tmp_path) -> None:
    project, result, presses = _run(tmp_path)
    assert result.status == "passed", result.error
    assert presses == 1  # the action was done once
    first, second = result.steps[0], result.steps[1]
    for o in (first, second):
        assert o.resolution is not None and o.resolution.reason.startswith("fast path"), o.resolution
        assert "looked again" not in o.verdict.reason
    shots = _shots(project, result.run_id)
    assert 0 not in shots and 1 not in shots, shots  # no screenshot taken for either


def test_a_late_effect_makes_the_light_look_disagree_and_the_step_looks_again(tmp_path) -> None:
    project, result, presses = _run(tmp_path)
    assert result.status == "passed", result.error
    save = result.steps[2]
    assert save.resolution is not None and save.resolution.reason.startswith("fast path")
    assert save.attempts == 1 and presses == 1  # looked again, never pressed again
    assert "looked again after the page settled" in save.verdict.reason, save.verdict.reason
    assert "an assertion not holding yet" in save.verdict.reason
    assert _shots(project, result.run_id).get(2) == {"after"}  # the second look was a full one


def test_a_renamed_control_falls_back_to_the_full_look_and_heals(tmp_path) -> None:
    dst = tmp_path / "demo"
    shutil.copytree(ROOT / "projects" / "demo", dst, ignore=shutil.ignore_patterns(".steadyhand"))
    settings = yaml.safe_load((dst / "steadyhand.yaml").read_text())
    settings["site_options"].update({"variant": "tweaked", "latency_ms": "100"})
    (dst / "steadyhand.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))
    project = load_project(dst)
    with ProjectSession(project, headless=True) as session:
        result = session.run_flow(project.flows["export_report"])
    assert result.status == "passed" and result.heals > 0, result.error
    healed = [o for o in result.steps if o.resolution is not None and o.resolution.healed]
    assert healed
    shots = _shots(project, result.run_id)
    for o in healed:
        assert not o.resolution.reason.startswith("fast path"), o.resolution.reason
        assert shots.get(o.index) == {"before", "after"}, shots
    # the steps the tweak left alone still took the fast path
    assert any(o.resolution is not None and o.resolution.reason.startswith("fast path") for o in result.steps)


@pytest.mark.parametrize("evidence", ["failures", "full"])
def test_the_start_url_waits_the_fast_quiet_time_below_full_evidence(tmp_path, evidence) -> None:
    from core.engine.fastpath import FAST_QUIET_MS

    server = LoopbackServer()
    server.route("GET", "/page", lambda req: Response.text(PAGE, 200, "text/html; charset=utf-8"))
    with server:
        project = _project(tmp_path / "fast", server.base_url)
        if evidence != "failures":
            path = project.root / "steadyhand.yaml"
            settings = yaml.safe_load(path.read_text())
            settings["evidence"] = evidence
            path.write_text(yaml.safe_dump(settings, sort_keys=False))
            project = load_project(project.root)
        with ProjectSession(project, headless=True) as session:
            driver = session.driver
            assert driver is not None
            waits: list = []
            real = driver.wait_settled
            loads: list = []
            real_goto = driver.goto

            def goto(url, **kw):
                loads.append(url)
                return real_goto(url, **kw)

            def wait_settled(**kw):
                if len(loads) == 1 and not waits:
                    waits.append(kw.get("quiet_ms"))  # the start URL's wait
                return real(**kw)

            driver.goto = goto  # type: ignore[method-assign]
            driver.wait_settled = wait_settled  # type: ignore[method-assign]
            result = session.run_flow(project.flows["fast"])
    assert result.status == "passed", result.error
    assert waits == ([FAST_QUIET_MS] if evidence == "failures" else [None])
