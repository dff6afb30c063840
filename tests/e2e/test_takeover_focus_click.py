"""A takeover records the click that focuses a text field (issue 23 item 3), through `run --on-escalation wait`.

The engine typed into the date field (step 1), so the focus is in it; step 2 clicks a day of the calendar that
opens only when the field is clicked: the day is hidden and the run escalates.  The person, over CDP as a
script or the studio's live view would, clicks the date field (the calendar opens) and hands back "insert".
That click was dropped ("a click in the focused field changes nothing": but the engine, not the person, had
focused it), so the correction held no action; now it is the correction's step, and the run finishes green.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from playwright.sync_api import sync_playwright

from core.heal.corrections import list_corrections
from core.sites.server import StaticSite
from core.store import Store
from takeover_project import wait_for as _wait_for

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]

PAGE = """<!doctype html><html><head><title>Booking</title></head><body><h1>Book a day</h1>
<label>Date <input id="d"></label>
<div id="pop" hidden role="dialog" aria-label="Calendar"><button id="day">12</button></div>
<p id="out"></p>
<script>
document.getElementById('d').addEventListener('click', () => { document.getElementById('pop').hidden = false; });
document.getElementById('day').addEventListener('click', () => {
  document.getElementById('out').textContent = 'Booked the 12th'; document.getElementById('pop').hidden = true; });
</script></body></html>"""




def test_the_click_that_focuses_a_field_the_engine_left_focused_is_recorded(tmp_path: Path) -> None:
    site_dir = tmp_path / "site"
    site_dir.mkdir()
    (site_dir / "index.html").write_text(PAGE, encoding="utf-8")
    with StaticSite(site_dir) as site:
        project = tmp_path / "booking"
        (project / "flows").mkdir(parents=True)
        (project / "steadyhand.yaml").write_text(yaml.safe_dump({"name": "Booking", "base_url": site.base_url}))
        steps = [{"id": "s1", "name": "Type the date", "action": "input", "value": "next week", "selector": "#d",
                  "target": {"tag": "input", "role": "textbox", "name": "Date", "label": "Date", "id": "d"}},
                 {"id": "s2", "name": "Click 12", "action": "click", "selector": "#day",
                  "target": {"tag": "button", "role": "button", "name": "12", "text": "12", "id": "day"}}]
        (project / "flows" / "book.yaml").write_text(yaml.safe_dump({"name": "book", "start_url": "/",
                                                                     "steps": steps}, sort_keys=False))
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        env.pop("DISPLAY", None)
        proc = subprocess.Popen([sys.executable, "-m", "core.cli", "run", str(project), "--headless",
                                 "--on-escalation", "wait", "--takeover-timeout", "90"],
                                cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        seen: list[str] = []
        try:
            endpoint = _wait_for(proc, r"step 2 is yours; CDP (http://127\.0\.0\.1:\d+)", seen).group(1)
            with sync_playwright() as pw:
                browser = pw.chromium.connect_over_cdp(endpoint)
                page = next(p for c in browser.contexts for p in c.pages if p.url.startswith(site.base_url))
                assert page.evaluate("document.activeElement.id") == "d"  # the engine's typing left it focused
                page.locator("#d").click()
                page.get_by_role("button", name="12").wait_for()
                page.wait_for_timeout(800)
                out = subprocess.run([sys.executable, "-m", "core.cli", "handback", str(project), "--as", "insert"],
                                     cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
                assert out.returncode == 0, out.stderr
            rest, err = proc.communicate(timeout=90)
        finally:
            if proc.poll() is None:
                proc.kill()
    log = "".join(seen) + err
    assert proc.returncode == 0, log + rest
    store = Store.open(project / ".steadyhand" / "store.sqlite")
    try:
        (correction,) = list_corrections(store)
    finally:
        store.close()
    assert correction.meaning == "insert" and correction.state == "offered", correction
    assert [(s["action"], s["target"].get("name")) for s in correction.steps] == [("click", "Date")]
    assert "+- id: s2_h1\n" in correction.diff and "name: Date" in correction.diff
