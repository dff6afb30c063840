"""Take over without the studio keeps the page as the escalation left it and rolls back only when asked (issue 23
item 4): `run --on-escalation wait`, a script over CDP opens a dialog, `handback --roll-back` closes it again and
drops that action, then the person does the step and hands back; the run finishes green.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from core.heal.corrections import list_corrections
from core.store import Store
from takeover_project import ROOT, broken_demo, cli as _cli, wait_for as _wait_for

pytestmark = pytest.mark.browser






def test_handback_roll_back_undoes_what_was_done_and_says_so(tmp_path: Path) -> None:
    project = broken_demo(tmp_path / "demo")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("DISPLAY", None)
    proc = subprocess.Popen([sys.executable, "-m", "core.cli", "run", str(project), "--flow", "export_report",
                             "--headless", "--on-escalation", "wait", "--takeover-timeout", "90"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen: list[str] = []
    try:
        endpoint = _wait_for(proc, r"step 4 is yours; CDP (http://127\.0\.0\.1:\d+)", seen).group(1)
        assert "--roll-back" in _wait_for(proc, r"hand back with", seen).string
        with sync_playwright() as pw:
            browser = pw.chromium.connect_over_cdp(endpoint)
            page = next(p for c in browser.contexts for p in c.pages if "/requests" in p.url)
            dialog = page.get_by_role("dialog", name="Export report")
            assert not dialog.is_visible()  # as the escalation left it: nothing opened, nothing reloaded
            page.get_by_role("button", name="Export report").click()
            dialog.wait_for(state="visible", timeout=10000)
            page.wait_for_timeout(300)
            out = _cli("handback", str(project), "--roll-back")
            assert out.returncode == 0 and "keeps waiting" in out.stdout, out.stderr
            said = _wait_for(proc, r"takeover: (rolled back to before this step|the rollback was not complete)",
                             seen).string
            assert "rolled back to before this step" in said and "dropped" in said, said
            dialog.wait_for(state="hidden", timeout=10000)  # the dialog the person opened is closed again
            page.get_by_role("button", name="Export report").click()  # now the step, done by hand
            dialog.wait_for(state="visible", timeout=10000)
            page.wait_for_timeout(300)
            out = _cli("handback", str(project), "--as", "replace")
            assert out.returncode == 0, out.stderr
        rest, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
    log = "".join(seen) + err
    assert proc.returncode == 0, log
    store = Store.open(project / ".steadyhand" / "store.sqlite")
    try:
        (correction,) = list_corrections(store)
        # the click before the rollback was dropped: one click, the one after it
        assert [(s["action"], s["target"]["name"]) for s in correction.steps] == [("click", "Export report")]
    finally:
        store.close()
