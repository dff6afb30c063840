"""Recordings that mean what the user did: anchors, every action that changed focus or state, checks of
the picked element.

Fixture pages (tests/e2e/fixtures/recording) reproduce patterns of third-party apps: an admin change
form (a header full of links, date-shortcut links beside a field, a fieldset with a legend, a table with
column headers, a listing whose column headers sit far away in a table of their own), a field whose date
picker opens on focus, a pane scrolled by the user, a banner that goes away on save.  MiniWoB++ pages come
from the installed ``miniwob`` package.  Each is recorded with `steadyhand record`, driven over CDP as a
user's own script would, then replayed with `steadyhand run`.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from playwright.sync_api import sync_playwright

from cdp_recording import record, replay
from core.project import load_flow
from core.sites.server import StaticSite

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).with_name("fixtures") / "recording"
PAUSE_S = 0.7  # a user's pace between actions


@pytest.fixture(scope="module")
def site():
    s = StaticSite(FIXTURE)
    s.start()
    yield s
    s.stop()


@pytest.fixture
def project(tmp_path, site):
    root = tmp_path / "app"
    (root / "flows").mkdir(parents=True)
    (root / "steadyhand.yaml").write_text(yaml.safe_dump({"name": "App", "base_url": site.base_url}))
    return root


def _click_centre(page, locator) -> None:
    box = locator.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)


def test_anchors_are_the_label_legend_heading_or_column_header_of_the_section(project):
    def drive(page):
        _click_centre(page, page.get_by_label("Title:"))
        page.keyboard.type("Dune")
        time.sleep(1.2)
        page.get_by_role("combobox").select_option(label="Courier")
        time.sleep(PAUSE_S)
        page.locator("#id_copies").fill("3")
        time.sleep(1.0)
        page.locator("#id_days").fill("21")
        time.sleep(1.0)
        page.get_by_role("button", name="Save").click()
        time.sleep(1.0)

    code, out, err = record(project, "change_book", drive, "/anchors.html")
    assert code == 0, out + err
    flow = load_flow(project / "flows" / "change_book.yaml")
    got = [(s.action.kind, s.target.css_path, (s.target.anchor.text, s.target.anchor.role) if s.target.anchor else None)
           for s in flow.steps]
    assert got == [
        ("input", "input#id_title", ("Title:", "label")),  # not the "Today | Calendar" links beside it
        ("select", "select#id_ship", ("Shipping", "legend")),
        ("input", "input#id_copies", ("Copies", "columnheader")),
        ("input", "input#id_days", None),  # its column header is far away, in another section: none
        ("click", "form#book > div:nth-of-type(2) > input",
         ("Change book", "heading")),  # the form's heading, never a link of the header nor "Delete"
    ], got
    # the offset goes from the anchor's centre to the target's: the field sits right of its label
    assert flow.steps[0].target.anchor.dx > 0
    run = replay(project, "change_book")
    assert run.returncode == 0, run.stdout + run.stderr


def test_a_click_that_only_focuses_a_field_is_a_step_and_a_no_op_is_kept(project):
    def drive(page):
        page.wait_for_load_state("load")
        # the page and the recorder's listener have settled (three paces: a loaded machine starts them
        # later): what follows the first click is that click's effect
        time.sleep(3 * PAUSE_S)
        page.get_by_role("button", name="Refresh").click()  # does nothing: kept, the user may delete it
        time.sleep(3 * PAUSE_S)  # its after-state is taken before the next click (else it reads "auto")
        _click_centre(page, page.get_by_label("Start date"))  # focusing it opens the date picker
        time.sleep(PAUSE_S)
        page.get_by_role("button", name="14").click()
        time.sleep(PAUSE_S)
        _click_centre(page, page.get_by_label("Start date"))  # opens the picker again: a step
        time.sleep(PAUSE_S)
        _click_centre(page, page.get_by_label("Start date"))  # already focused: changes nothing, no step
        time.sleep(PAUSE_S)
        page.get_by_role("button", name="13").click()
        time.sleep(PAUSE_S)
        page.get_by_role("button", name="Book").click()
        page.get_by_text("Booked from 2026-03-13").wait_for()
        time.sleep(PAUSE_S)
        page.keyboard.press("Alt+Shift+A")
        page.locator("#status").click()
        time.sleep(1.0)

    code, out, err = record(project, "booking", drive, "/focus.html")
    assert code == 0, out + err
    flow = load_flow(project / "flows" / "booking.yaml")
    got = [(s.action.kind, s.target.label_text) for s in flow.steps]
    assert got == [("click", "Refresh"), ("click", "Start date"), ("click", "14"), ("click", "Start date"),
                   ("click", "13"), ("click", "Book"), ("assert", "")], got
    assert flow.steps[0].expect == "none"  # the no-op says so: nothing changed when it was recorded
    check = flow.steps[-1].assertions[0]
    assert (check.kind, check.expected, check.selector) == ("text_equals", "Booked from 2026-03-13", "#status")
    run = replay(project, "booking")
    assert run.returncode == 0, run.stdout + run.stderr


def test_typing_after_the_click_that_focused_the_field_is_one_step(project):
    def drive(page):
        _click_centre(page, page.get_by_label("Nickname"))
        time.sleep(0.4)  # the click is seen on its own before the typing starts
        page.keyboard.type("Kim")
        time.sleep(1.2)
        page.get_by_role("button", name="Save profile").click()
        time.sleep(1.0)

    code, out, err = record(project, "nick", drive, "/checks.html")
    assert code == 0, out + err
    flow = load_flow(project / "flows" / "nick.yaml")
    assert [(s.id, s.action.kind, s.action.value) for s in flow.steps] == [
        ("s1", "input", "Kim"), ("s2", "click", "")]


def test_steps_inside_a_scrolled_pane_are_saved_and_replayed(project):
    def drive(page):
        page.mouse.move(200, 200)  # over the pane, not the window
        page.mouse.wheel(0, 1200)
        time.sleep(1.0)
        _click_centre(page, page.get_by_label("Reply"))
        page.keyboard.type("hello")
        time.sleep(1.2)
        page.get_by_role("button", name="Send reply").click()
        page.get_by_text("Sent: hello").wait_for()
        time.sleep(1.0)

    code, out, err = record(project, "inbox", drive, "/scroller.html")
    assert code == 0, out + err
    assert "Saved 3 steps" in out, out
    flow = load_flow(project / "flows" / "inbox.yaml")
    assert [s.action.kind for s in flow.steps] == ["scroll", "input", "click"]
    scroll = flow.steps[0]
    # the pane scrolled, not the window: replay wheels over the pane, found by its selector
    assert scroll.selector == "section#pane" and scroll.action.direction == "down" and scroll.action.distance >= 300
    assert scroll.expect == "none"
    run = replay(project, "inbox")
    assert run.returncode == 0, run.stdout + run.stderr


def test_a_check_of_the_picked_element_and_a_check_that_something_went_away(project):
    def drive(page):
        page.get_by_label("Nickname").fill("Kim")
        time.sleep(1.2)
        page.keyboard.press("Alt+Shift+A")
        page.locator("#banner").click(modifiers=["Shift"])  # Shift: check that it goes away
        time.sleep(PAUSE_S)
        page.keyboard.press("Escape")
        page.get_by_role("button", name="Save profile").click()
        time.sleep(1.0)
        page.keyboard.press("Alt+Shift+A")
        page.locator("#toast .msg").click()  # the toast's message itself, not "the text is on the page"
        time.sleep(1.0)

    code, out, err = record(project, "profile", drive, "/checks.html")
    assert code == 0, out + err
    flow = load_flow(project / "flows" / "profile.yaml")
    got = [(s.action.kind, [(a.kind, a.expected, a.selector) for a in s.assertions]) for s in flow.steps]
    assert got == [
        ("input", []),
        ("click", []),
        ("assert", [("hidden", "", "#banner")]),  # after the click that removed it
        ("assert", [("text_equals", "Profile saved for Kim", "div#toast > span")]),
    ], got
    assert flow.steps[2].name == "Check that You have unsaved changes is hidden"
    assert flow.steps[2].target.is_empty and flow.steps[3].target.is_empty
    run = replay(project, "profile")
    assert run.returncode == 0, run.stdout + run.stderr

    # the same flow on a page where the banner stays fails at that check: the check means something
    flow_file = project / "flows" / "profile.yaml"
    data = yaml.safe_load(flow_file.read_text())
    data["steps"][2]["assertions"][0]["selector"] = "h1"
    flow_file.write_text(yaml.safe_dump(data, sort_keys=False))
    run = replay(project, "profile")
    assert run.returncode != 0 and "hidden" in run.stdout, run.stdout


def test_miniwob_start_curtain_is_not_a_step_and_a_scrolled_textarea_replays(tmp_path):
    project = tmp_path / "miniwob"
    shutil.copytree(ROOT / "projects" / "miniwob", project, ignore=shutil.ignore_patterns(".steadyhand"))

    def drive(page):
        page.locator("#sync-task-cover").wait_for()
        page.evaluate("Math.seedrandom('0')")  # the episode of seed 0, which the replay runs
        time.sleep(0.5)
        page.locator("#sync-task-cover").click()  # the harness's start curtain between episodes
        time.sleep(PAUSE_S)
        down = "bottom" in page.evaluate("core.getUtterance()")
        box = page.locator("#text-area").bounding_box()
        page.mouse.move(box["x"] + 40, box["y"] + 40)
        page.mouse.wheel(0, 3000 if down else -3000)
        time.sleep(1.0)
        page.get_by_role("button", name="Submit").click()
        time.sleep(1.0)
        assert page.evaluate("WOB_RAW_REWARD_GLOBAL") == 1

    code, out, err = record(project, "scroll-text", drive, "/miniwob/scroll-text-2.html")
    assert code == 0, out + err
    flow = load_flow(project / "flows" / "scroll-text.yaml")
    assert [(s.action.kind, s.selector) for s in flow.steps] == [("scroll", "textarea#text-area"), ("click", "")]
    assert "START" not in (project / "flows" / "scroll-text.yaml").read_text()
    # scrolled to the bottom: the distance covers the whole text, so longer texts of other seeds reach it too
    assert flow.steps[0].action.distance >= flow.steps[0].target.bbox.height
    # the flow is an episode of the task, as the project's other flows say
    flow_file = project / "flows" / "scroll-text.yaml"
    data = yaml.safe_load(flow_file.read_text())
    data["episode"] = {"task": "scroll-text-2"}
    flow_file.write_text(yaml.safe_dump(data, sort_keys=False))
    run = subprocess.run([sys.executable, "-m", "core.cli", "run", str(project), "--flow", "scroll-text",
                          "--headless", "--no-store", "--episodes", "1", "--seed", "0"],
                         cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stdout + run.stderr


def test_checks_chosen_among_the_suggestions_of_the_listenerreplay(project, site, tmp_path):
    """The studio's way: each pick offers its checks, the user chooses one (here: through the listener's API)."""
    from core.domain import Flow
    from core.record.events import ElementPicked
    from core.record.listener import RecordingListener
    from core.record.save import save_recording

    events: list = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            page = context.new_page()
            page.goto(site.base_url + "/checks.html")
            listener = RecordingListener(context, flow_name="publish", base_url=site.base_url,
                                         spool=tmp_path / "journal", on_event=events.append)
            listener.attach()

            def pump(seconds: float) -> None:
                end = time.monotonic() + seconds
                while time.monotonic() < end:
                    assert listener.pump(50)

            def picked() -> ElementPicked:
                pump(0.5)
                return [e for e in events if isinstance(e, ElementPicked)][-1]

            page.get_by_label("Nickname").fill("Kim")
            pump(1.2)
            listener.set_inspect(True)
            page.locator("#publish").click(force=True)  # a disabled control: its state is checked
            pick = picked()
            assert pick.suggested[:3] == ("visible", "enabled", "disabled") and "hidden" in pick.suggested
            listener.add_assertion(pick.pick_id, "disabled", "")
            words = page.locator("#banner").evaluate(  # the box of the banner's text, to select it by dragging
                "e => { const r = document.createRange(); r.selectNodeContents(e); const b = r.getBoundingClientRect();"
                " return [b.x, b.y, b.width, b.height]; }")
            page.mouse.move(words[0] + 1, words[1] + words[3] / 2)
            page.mouse.down()
            page.mouse.move(words[0] + words[2] - 1, words[1] + words[3] / 2, steps=5)
            page.mouse.up()
            text_pick = picked()
            assert text_pick.page_text and text_pick.suggested == ("text_appears", "text_absent")
            listener.add_assertion(text_pick.pick_id, "text_absent", "You have unsaved changes")
            listener.set_inspect(False)
            page.get_by_role("button", name="Save profile").click()
            pump(1.0)
            listener.set_inspect(True)
            page.locator("#publish").click()
            listener.add_assertion(picked().pick_id, "enabled", "")
            got = listener.detach()
        finally:
            browser.close()
    summary = [(s.action.kind, [(a.kind, a.expected, a.selector) for a in s.assertions], s.target.name)
               for s in got.steps]
    assert summary == [
        ("input", [], "Nickname"),
        ("assert", [("disabled", "", "")], "Publish"),
        ("click", [], "Save profile"),
        ("assert", [("text_absent", "You have unsaved changes", "")], ""),  # checked after the click
        ("assert", [("enabled", "", "")], "Publish"),
    ], summary
    flow = Flow(name="publish", start_url="/checks.html", steps=got.steps, description="Recorded by demonstration.")
    save_recording(project, flow, got.crops)
    run = replay(project, "publish")
    assert run.returncode == 0, run.stdout + run.stderr


def test_a_shared_link_name_is_recorded_with_its_row_and_exports_a_test_that_passes_strict_mode(project, site,
                                                                                               tmp_path):
    """Two links named "Edit", one per table row: the recording keeps the row that makes Bob's unique
    (``scope``), and "Save" beside "Save draft" is marked to match whole (``exact``). The exported test chains
    the row and passes in Chromium (a locator from the link alone is a strict-mode violation)."""
    def drive(page):
        page.wait_for_load_state("load")
        page.get_by_role("row", name="Bob Stone").get_by_role("link", name="Edit").click()
        time.sleep(PAUSE_S)
        page.get_by_role("button", name="Save", exact=True).click()
        time.sleep(1.0)

    code, out, err = record(project, "edit_bob", drive, "/rows.html")
    assert code == 0, out + err
    flow = load_flow(project / "flows" / "edit_bob.yaml")
    edit, save = flow.steps[0].target, flow.steps[-1].target
    assert edit.name == "Edit" and edit.scope is not None and edit.scope.role == "row", edit
    assert "Bob Stone" in edit.scope.name and not edit.exact
    assert save.name == "Save" and save.exact and save.scope is None, save
    from core.cli import main
    out_dir = tmp_path / "export"
    out_dir.mkdir()
    test_file = out_dir / "test_edit_bob.py"
    assert main(["export", "pytest", str(project), "--flow", "edit_bob", "-o", str(test_file)]) == 0
    src = test_file.read_text(encoding="utf-8")
    assert "get_by_role('row', name=" in src and "name='Save', exact=True" in src
    (out_dir / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith(("STEADYHAND_", "PYTEST_"))}
    env.update(PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD="1", PYTHONDONTWRITEBYTECODE="1")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                        "--base-url", site.base_url, test_file.name], cwd=out_dir, env=env, capture_output=True,
                       text=True, timeout=240)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
