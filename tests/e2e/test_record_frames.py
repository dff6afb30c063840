"""Steps inside an iframe and inside an open shadow root are recorded, then replayed green.

The fixture (tests/e2e/fixtures/widgets) is a checkout page with a same-origin
iframe (the basket) and a custom element with an open shadow root (the
delivery picker).  The recorder runs as `steadyhand record` and a script
drives it over CDP; an assertion is added in inspect mode (Alt+Shift+A in
the page, then a click on the result line).
"""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import yaml

from cdp_recording import record
from core.project import load_flow
from core.sites.server import StaticSite

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).with_name("fixtures") / "widgets"
PAUSE_S = 0.7  # a user's pace between actions


def _project(root: Path, base_url: str) -> Path:
    """A project on the fixture site, with no flow yet."""
    (root / "flows").mkdir(parents=True)
    (root / "steadyhand.yaml").write_text(yaml.safe_dump({"name": root.name.capitalize(), "base_url": base_url}))
    return root


def test_iframe_and_shadow_root_steps_record_and_replay(tmp_path):
    site = StaticSite(FIXTURE)
    site.start()
    try:
        project = _project(tmp_path / "shop", site.base_url)

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

        code, out, err = record(project, "checkout", drive)
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
            # the picked result line itself is checked (its text), not "this text is somewhere on the page"
        assert (check.kind, check.expected, check.selector) == (
            "text_equals", "Order A-1042 placed: 3 item(s) to EH1 1AA, gift wrapped", "#result")
        # the frame's box is in top-level viewport coordinates (iframe offset added)
        assert flow.steps[2].target.bbox is not None and flow.steps[2].target.bbox.y > 150

        run = subprocess.run([sys.executable, "-m", "core.cli", "run", str(project), "--headless", "--no-store"],
                             cwd=ROOT, capture_output=True, text=True, timeout=180)
        assert run.returncode == 0, run.stdout + run.stderr
    finally:
        site.stop()


def test_hover_enter_escape_upload_scroll_navigation_record_and_replay(tmp_path):
    site = StaticSite(FIXTURE)
    site.start()
    try:
        project = _project(tmp_path / "work", site.base_url)

        def drive(page):
            box = page.get_by_role("button", name="Account").bounding_box()
            page.mouse.move(box["x"] + 5, box["y"] + 5)
            time.sleep(0.8)  # the menu opens on hover
            page.get_by_role("link", name="Settings").click()
            time.sleep(PAUSE_S)
            page.get_by_label("Search").fill("quarterly report")
            page.get_by_label("Search").press("Enter")
            time.sleep(PAUSE_S)
            page.get_by_label("Attachment").set_input_files(
                files=[{"name": "note.txt", "mimeType": "text/plain", "buffer": b"hello from the recorder"}])
            time.sleep(PAUSE_S)
            page.get_by_role("button", name="Open help").click()
            time.sleep(PAUSE_S)
            page.keyboard.press("Escape")
            time.sleep(PAUSE_S)
            page.mouse.move(600, 400)
            page.mouse.wheel(0, 900)
            time.sleep(0.8)
            page.get_by_role("button", name="Load more").click()
            time.sleep(PAUSE_S)
            page.keyboard.press("Alt+Shift+A")
            page.locator("#loaded").click()
            page.keyboard.press("Escape")  # leaves inspect mode; not a step
            time.sleep(2.5)
            page.goto(site.base_url + "/index.html")  # the address bar
            time.sleep(1.0)

        code, out, err = record(project, "workspace", drive, "/more.html")
        assert code == 0, out + err
        flow = load_flow(project / "flows" / "workspace.yaml")
        got = [(s.action.kind, s.target.label_text, s.action.value) for s in flow.steps]
        assert got == [
            ("hover", "Account", ""),
            ("click", "Settings", ""),
            ("input", "Search", "quarterly report"),
            ("press", "Search", "Enter"),
            ("upload", "Attachment", "{attachment}"),
            ("click", "Open help", ""),
            ("press", "Open help", "Escape"),
            ("scroll", "", ""),
            ("click", "Load more", ""),
            ("assert", "", ""),
            ("navigate", "", "/index.html"),
        ], got
        assert flow.steps[7].action.direction == "down" and flow.steps[7].action.distance >= 300
        assert flow.steps[5].expect == "overlay_open" and flow.steps[6].expect == "overlay_close"
        assert flow.steps[9].assertions[0].expected == "Loaded 10 more"
        assert flow.params["attachment"] == "workspace.files/note.txt"
        assert (project / "flows" / "workspace.files" / "note.txt").read_bytes() == b"hello from the recorder"

        run = subprocess.run([sys.executable, "-m", "core.cli", "run", str(project), "--headless", "--no-store"],
                             cwd=ROOT, capture_output=True, text=True, timeout=180)
        assert run.returncode == 0, run.stdout + run.stderr
    finally:
        site.stop()
