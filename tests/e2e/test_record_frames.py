"""Steps inside an iframe and inside an open shadow root are recorded, then replayed green.

The fixture (tests/e2e/fixtures/widgets) is a checkout page with a same-origin
iframe (the basket) and a custom element with an open shadow root (the
delivery picker).  The recorder runs as `steadyhand record` and a script
drives it over CDP; an assertion is added in inspect mode (Alt+Shift+A in
the page, then a click on the result line).
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import yaml
from playwright.sync_api import sync_playwright

from core.project import load_flow
from core.sites.server import StaticSite

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).with_name("fixtures") / "widgets"
PAUSE_S = 0.4


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _record(project: Path, flow: str, drive) -> tuple[int, str, str]:
    port = _free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("DISPLAY", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "core.cli", "record", "--project", str(project), "--flow", flow, "--headless",
         "--cdp-port", str(port)], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        head = []
        while True:
            line = proc.stdout.readline()
            assert line, "".join(head) + proc.stderr.read()
            head.append(line)
            if line.startswith("Close the page"):
                break
        with sync_playwright() as pw:
            browser = pw.chromium.connect_over_cdp(f"http://127.0.0.1:{port}")
            drive(browser.contexts[0].pages[0])
            browser.close()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, "".join(head) + out, err


def test_iframe_and_shadow_root_steps_record_and_replay(tmp_path):
    site = StaticSite(FIXTURE)
    site.start()
    try:
        project = tmp_path / "shop"
        (project / "flows").mkdir(parents=True)
        (project / "steadyhand.yaml").write_text(yaml.safe_dump({"name": "Shop", "base_url": site.base_url}))

        def drive(page):
            page.get_by_label("Order number").fill("A-1042")
            time.sleep(PAUSE_S)
            basket = page.frame_locator("#basket")
            basket.get_by_label("Quantity").fill("3")
            time.sleep(PAUSE_S)
            basket.get_by_role("button", name="Add to basket").click()
            time.sleep(PAUSE_S)
            page.get_by_label("Postcode").fill("EH1 1AA")  # Playwright locators pierce open shadow roots
            time.sleep(PAUSE_S)
            page.get_by_role("button", name="Find address").click()
            time.sleep(PAUSE_S)
            page.get_by_label("Gift wrap").check()
            time.sleep(PAUSE_S)
            page.get_by_role("button", name="Place order").click()
            time.sleep(PAUSE_S)
            page.keyboard.press("Alt+Shift+A")  # inspect mode: the next click picks what to assert on
            page.locator("#result").click()
            time.sleep(1.0)

        code, out, err = _record(project, "checkout", drive)
        assert code == 0, out + err
        flow = load_flow(project / "flows" / "checkout.yaml")
        got = [(s.action.kind, s.target.label_text, s.target.frame, bool(s.target.shadow)) for s in flow.steps]
        assert got == [
            ("input", "Order number", "", False),
            ("input", "Quantity", "basket", False),
            ("click", "Add to basket", "basket", False),
            ("input", "Postcode", "", True),
            ("click", "Find address", "", True),
            ("check", "Gift wrap", "", True),
            ("click", "Place order", "", False),
            ("assert", "", "", False),
        ], got
        assert flow.steps[1].action.value == "3" and flow.steps[3].action.value == "EH1 1AA"
        check = flow.steps[-1].assertions[0]
        assert (check.kind, check.expected) == ("text_appears", "Order A-1042 placed: 3 item(s) to EH1 1AA, gift wrapped")
        # the frame's box is in top-level viewport coordinates (iframe offset added)
        assert flow.steps[2].target.bbox is not None and flow.steps[2].target.bbox.y > 150

        run = subprocess.run([sys.executable, "-m", "core.cli", "run", str(project), "--headless", "--no-store"],
                             cwd=ROOT, capture_output=True, text=True, timeout=180)
        assert run.returncode == 0, run.stdout + run.stderr
    finally:
        site.stop()
