"""A takeover without the studio, driven over CDP by a script: `run --on-escalation wait`, act, `handback`.

The run escalates on two unfindable controls of ``export_report``
(tests/e2e/takeover_project.py): a script connected to the engine's own
Chromium over CDP types the password where the page has it, hands back
("replace"), then clicks Export report and hands back again; the run
finishes green, both manual segments are stored as corrections offered as
flow edits, the typed password is a placeholder everywhere, and once the
edits are accepted (`steadyhand corrections accept`) the flow replays green
with no human.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from core.heal.corrections import list_corrections
from core.project import load_flow
from core.store import Store
from takeover_project import ROOT, broken_demo, cli as _cli, wait_for as _wait_for

pytestmark = pytest.mark.browser
PASSWORD = "demo-pass"






def test_takeover_over_cdp_then_handback_finishes_green_and_stores_corrections(tmp_path: Path) -> None:
    project = broken_demo(tmp_path / "demo", password=True)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("DISPLAY", None)
    proc = subprocess.Popen([sys.executable, "-m", "core.cli", "run", str(project), "--flow", "export_report",
                             "--headless", "--on-escalation", "wait", "--takeover-timeout", "90"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen: list[str] = []
    try:
        endpoint = _wait_for(proc, r"step 2 is yours; CDP (http://127\.0\.0\.1:\d+)", seen).group(1)
        with sync_playwright() as pw:
            browser = pw.chromium.connect_over_cdp(endpoint)
            page = next(p for c in browser.contexts for p in c.pages if "/login" in p.url)
            page.get_by_label("Password").click()
            page.keyboard.type(PASSWORD)
            page.wait_for_timeout(300)
            out = _cli("handback", str(project), "--as", "replace")
            assert out.returncode == 0 and "as replace" in out.stdout, out.stderr
            _wait_for(proc, r"step 4 is yours", seen)
            page.wait_for_url(re.compile(r"/requests"), timeout=30000)  # the engine signed in and went on
            page.get_by_role("button", name="Export report").click()
            page.wait_for_timeout(300)
            out = _cli("handback", str(project), "--as", "replace")
            assert out.returncode == 0, out.stderr
        rest, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
    log = "".join(seen) + err
    assert proc.returncode == 0, log
    assert "takeover: no hand-back" not in log and PASSWORD not in log + rest

    store = Store.open(project / ".steadyhand" / "store.sqlite")
    try:
        corrections = list_corrections(store)
        assert [c.step_id for c in corrections] == ["s4", "s2"]  # newest first
        export, pw_fix = corrections
        assert export.meaning == pw_fix.meaning == "replace" and export.state == "offered"
        assert [s["action"] for s in export.steps] == ["click"]
        target = export.steps[0]["target"]
        assert target["role"] == "button" and target["name"] == "Export report" and target["id"] == "export-report"
        assert export.page["url"].endswith("/requests") and export.screenshot
        assert store.media_path(export.screenshot).is_file() and export.crops
        assert "-- id: s4\n" in export.diff and "+- id: s4_h1\n" in export.diff
        # what of the replaced step is not kept is said in one plain line above the diff
        said = export.diff.split("\n", 1)[0]
        assert said.startswith("Not kept from the replaced step s4 'Print the summary': ") and "--- a/" not in said
        assert "selector '#print-summary' (no recorded step acts on the same element)" in said
        assert "-  name: Print the summary\n" in export.diff and "+    name: Export report\n" in export.diff
        # the typed password: a placeholder in the correction, nowhere in clear
        assert [(s["action"], s.get("value")) for s in pw_fix.steps][-1] == ("input", "{password}")
        assert "+- id: s2_h1\n+  name: Fill Password\n   action: input\n   value: '{password}'\n" in pw_fix.diff
        assert export.reason.startswith("locator abstained") and "Print the summary" in export.reason
        ids = (export.id, pw_fix.id)
    finally:
        store.close()
    listed = _cli("corrections", "list", str(project))
    assert listed.returncode == 0 and f"#{export.id}" in listed.stdout and "Click Export report" in listed.stdout
    for cid, new_id in zip(ids, ("s4_h1", "s2_h1"), strict=True):
        out = _cli("corrections", "accept", str(project), str(cid))
        assert out.returncode == 0 and f"+- id: {new_id}" in out.stdout, out.stderr
    again = _cli("corrections", "accept", str(project), str(ids[0]))
    assert again.returncode == 2 and "accepted" in again.stderr  # once only
    ours = (project / ".steadyhand").rglob("*")  # the store, its screenshots and corrections (not the app's own db)
    blobs = [p.read_bytes() for p in ours if p.is_file() and p.name != "demo-app.sqlite"]
    assert len(blobs) > 5
    assert not any(PASSWORD.encode() in b for b in blobs)
    steps = load_flow(project / "flows" / "export_report.yaml").steps
    assert [s.id for s in steps] == ["s1", "s2_h1", "s3", "s4_h1", "s5"]
    assert (project / "flows" / "export_report.crops" / "s4_h1.png").is_file()
    again = _cli("run", str(project), "--flow", "export_report", "--headless", "--no-store")
    assert again.returncode == 0, again.stdout + again.stderr
