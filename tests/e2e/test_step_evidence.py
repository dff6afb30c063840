"""Step evidence in real Chromium: image difference, console errors and failed requests per step, in the store.

The page is a small third-party-like widget page served on loopback: its
vendor script logs a console error while the page loads, "Load report"
logs an error, fetches an endpoint that answers 500, sends a beacon to an
endpoint that answers 500 too (a beacon is never the app's failure) and
throws later from a timer; "Say hello" only changes a line of text.  A
password field is typed into (its box is never reported as changed).
"""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from core.domain import Action, Assertion, EngineSettings, Flow, Step, WaitSettings
from core.engine.events import StepEvidenceRecorded, StepFinished
from core.engine.executor import FlowExecutor
from core.store import Store
from browser_fixtures import open_driver

pytestmark = pytest.mark.browser

PAGE = b"""<!doctype html><html><head><title>Widgets</title>
<style>body{font:16px sans-serif;margin:20px} #out{margin-top:20px;padding:12px;background:#eef;width:400px}
button{font-size:16px;padding:8px 16px;margin-right:8px}</style>
<script>console.error("vendor.js: telemetry key missing");</script></head><body>
<h1>Reports</h1>
<label>Password <input id="pw" type="password"></label>
<p><button id="load">Load report</button><button id="hello">Say hello</button></p>
<div id="out">Nothing loaded yet</div>
<script>
document.getElementById('load').onclick = async () => {
  console.error('report widget failed to initialise');
  navigator.sendBeacon('/beacon', 'x');
  try { const r = await fetch('/api/report'); document.getElementById('out').textContent =
        'Report unavailable (' + r.status + ')'; } catch (e) { }
  fetch('/api/down').catch(() => {});
  setTimeout(() => { throw new Error('late failure in widget'); }, 50);
};
document.getElementById('hello').onclick = () => {
  document.getElementById('out').textContent = 'Hello there, the report is still unavailable';
};
</script></body></html>"""


class Site:
    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, body: bytes, ctype: str = "text/html") -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802
                if self.path.startswith("/api/report"):
                    self._send(500, b'{"error": "boom"}', "application/json")
                elif self.path == "/api/down":  # the connection closed with no answer: a network failure
                    self.close_connection = True
                elif self.path == "/favicon.ico":
                    self._send(204, b"", "image/x-icon")
                elif self.path in ("/", "/index.html"):
                    self._send(200, PAGE)
                else:
                    self._send(404, b"not found")

            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self._send(500, b"beacon sink down", "text/plain")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def by(selector: str, kind: str = "click", value: str = "", **kw: Any) -> Step:
    return Step(id=selector.strip("#"), name=f"{kind} {selector}", action=Action(kind, value),  # type: ignore[arg-type]
                selector=selector, **kw)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    site = Site()
    tmp = tmp_path_factory.mktemp("evidence")
    store = Store.open(tmp / "store.sqlite")
    events: list[object] = []
    try:
        with open_driver(site.base_url) as driver:
            ex = FlowExecutor(driver, emit=events.append, store=store, screenshots=True, project_name="widgets",
                              settings=EngineSettings(waits=WaitSettings(retries=0)))
            flow = Flow("widgets", "/", (
                by("#pw", "input", "hunter2-secret"),
                by("#load", assertions=(Assertion("text_appears", "Report unavailable (500)"),)),
                by("#hello"),
            ))
            result = ex.run_flow(flow, params={})
            ex.finish(result)
        yield result, store, events
    finally:
        store.close()
        site.stop()


def test_each_step_records_its_console_errors_and_failed_requests(recorded) -> None:
    result, store, _events = recorded
    assert result.status == "passed", result.error
    ev = {r.index: r.evidence for r in store.step_evidence(result.run_id)}
    assert sorted(ev) == [0, 1, 2]
    # the vendor script's error while the start page loaded counts for the first step
    assert [c.text for c in ev[0].console] == ["vendor.js: telemetry key missing"]
    assert ev[0].failed_requests == ()
    # the step that clicked "Load report": its console error, the 500 (not the beacon), the late exception
    texts = [c.text for c in ev[1].console]
    assert "report widget failed to initialise" in texts
    # the 500, and a request that got no answer at all (the server dropped the connection): the browser's reason
    assert [r.shown for r in ev[1].failed_requests] == ["GET /api/report 500", "GET /api/down net::ERR_EMPTY_RESPONSE"]
    assert [r.resource_type for r in ev[1].failed_requests] == ["fetch", "fetch"]
    late = [c for s in (1, 2) for c in ev[s].console if c.kind == "exception"]
    assert late and "late failure in widget" in late[0].text
    # the browser's own line about the 500 is a console error too, nothing of the beacon anywhere
    assert not any("beacon" in r.url for e in ev.values() for r in e.failed_requests)
    assert not any("Load report" in c.text for c in ev[2].console)
    assert ev[2].failed_requests == ()


def test_the_image_difference_boxes_what_the_step_changed(recorded) -> None:
    result, store, _events = recorded
    recs = {r.index: r for r in store.step_evidence(result.run_id)}
    d1 = recs[1].evidence.diff
    assert d1 is not None and d1.changed and d1.width == 1280 and d1.device_pixel_ratio == 1.0
    # the result line's text (#out, below the buttons, left of x 440 CSS px) changed; the clicked button took
    # the focus ring; nothing else on the page moved
    out = [b for b in d1.regions if b.y > 170 and b.x + b.width < 440]
    assert out, d1.regions
    assert len(d1.regions) <= 3, d1.regions
    assert all(b.width < 500 and b.height < 80 for b in d1.regions), d1.regions
    # the password step: the typed secret's field is left out of the difference
    pw_regions = [b for b in (recs[0].evidence.diff.regions if recs[0].evidence.diff else ()) if b.y < 120]
    assert not [b for b in pw_regions if b.x > 80 and b.width > 30], pw_regions
    # the screenshots the timeline shows are the stored files
    assert recs[1].before_screenshot and recs[1].after_screenshot
    assert store.media_path(recs[1].after_screenshot).is_file()


def test_a_passed_assertion_says_what_was_checked_and_times_are_active(recorded) -> None:
    result, store, events = recorded
    recs = {r.index: r.evidence for r in store.step_evidence(result.run_id)}
    (check,) = recs[1].assertions
    assert (check.kind, check.target, check.expected, check.ok) == (
        "text_appears", "page", "Report unavailable (500)", True)
    assert "appears" in check.observed
    verdict = next(v for v in store.run_detail(result.run_id).verdicts if v.index == 1)
    assert "checked: text_appears 'Report unavailable (500)' on page" in verdict.reason
    # live events carry the same record, just before each StepFinished
    kinds = [type(e).__name__ for e in events if isinstance(e, (StepEvidenceRecorded, StepFinished))]
    assert kinds == ["StepEvidenceRecorded", "StepFinished"] * 3
    finished = [e for e in events if isinstance(e, StepFinished)]
    for e in finished:
        assert recs[e.index].active_ms == pytest.approx(e.ms, abs=0.2)
        assert recs[e.index].wall_ms >= recs[e.index].active_ms
        assert [p for p, _ms in recs[e.index].phase_ms][:3] == ["observe", "fingerprint", "decide"]
    # nothing of the secret reached the store
    raw = (store.path.read_bytes() if store.path else b"")
    assert b"hunter2-secret" not in raw


def test_miniwob_login_records_evidence_and_never_the_password(tmp_path) -> None:
    """A page we did not write: MiniWoB++ login-user, run through a session with its store."""
    import shutil
    from pathlib import Path

    from core.engine.session import ProjectSession
    from core.project import load_project

    root = Path(__file__).resolve().parents[2]
    dst = tmp_path / "miniwob"
    shutil.copytree(root / "projects" / "miniwob", dst, ignore=shutil.ignore_patterns(".steadyhand"))
    project = load_project(dst)
    with ProjectSession(project, headless=True, use_store=True, screenshots=True, evidence="full") as session:
        result = session.run_flow(project.flows["login-user"], seed=2101)
        assert result.status == "passed", result.error
        password = session.site.last_utterance.split('password "')[1].split('"')[0]
        recs = session.store.step_evidence(result.run_id)
        assert [r.index for r in recs] == [o.index for o in result.steps]
        steps = {o.index: o for o in result.steps}
        typed = [r for r in recs if r.evidence.action == "input"]
        assert len(typed) == 2 and all(r.evidence.diff is not None for r in recs)
        # the user name field's new text is a changed region; typing the password changes none around its field
        # (its pixels are left out; the last click ends the episode and the whole task area changes, which
        # may enclose the field - painted over in both shots)
        assert typed[0].evidence.diff.changed
        pw = next(c for c in session.driver.observe(screenshot=False).candidates if c.extra.get("is_password"))
        box = pw.descriptor.bbox
        for r in typed:
            for g in r.evidence.diff.regions:
                assert g.intersection_area(box) == 0, (steps[r.index].title, g, box)
        assert all(r.before_screenshot and r.after_screenshot for r in recs)
        db = session.store.path
    assert password and password.encode() not in db.read_bytes()
