"""Codegen import in real Chromium: selectors equal Playwright's own and resolve; CLI import, then replay.

The imported selectors must be exactly what Playwright's locators produce
(``page.locator(selector)`` then finds the same element); a selector that
enters an iframe must resolve through the driver to a ref of that frame; and
a codegen script of the demo's leave request, imported with
``steadyhand import-codegen``, must replay green and get full descriptors.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable, Iterator

import pytest
import yaml
from secrets_audit import planted

from core.domain import Action, Assertion, BrowserSettings
from core.perception.driver import PlaywrightDriver
from core.project import load_flow
from core.record.codegen import import_codegen
from core.sites.demo import DEMO_PASSWORD

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
FLOW = "leave_request_codegen"
#: The origin the script was recorded on (``python -m core.sites.demo``); the bundled site's port differs at run time.
RECORDED_ORIGIN = "http://127.0.0.1:41234"

PAGE = """<!doctype html><html><body><main>
<h1>Leave requests</h1>
<label for="u">User name</label><input id="u" placeholder='Your "name"'>
<button title="Help me">Sign in</button>
<button data-testid='save "now"'>Save</button>
<img alt="Logo" width="20" height="20" src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">
<table><tr><td>Alice</td><td><button>Approve</button></td></tr>
       <tr><td>Bob</td><td><button>Approve</button></td></tr></table>
<p>Say "hi" \\ now</p>
<label><input type="checkbox" checked> Notify</label>
<iframe name="inner"
  srcdoc="<button onclick='this.textContent=&quot;Done&quot;'>Inner</button><label>Email <input></label>"></iframe>
</main></body></html>"""

#: (what codegen writes, the same locator built by Playwright)
LOCATORS: list[tuple[str, Callable]] = [
    ('page.get_by_role("button", name="Sign in")', lambda p: p.get_by_role("button", name="Sign in")),
    ('page.get_by_role("button", name="Sign in", exact=True)',
     lambda p: p.get_by_role("button", name="Sign in", exact=True)),
    ('page.get_by_role("button", name=re.compile("sign IN", re.IGNORECASE))',
     lambda p: p.get_by_role("button", name=re.compile("sign IN", re.IGNORECASE))),
    ('page.get_by_role("heading", name="Leave requests", level=1)',
     lambda p: p.get_by_role("heading", name="Leave requests", level=1)),
    ('page.get_by_role("checkbox", checked=True)', lambda p: p.get_by_role("checkbox", checked=True)),
    ('page.get_by_label("User name")', lambda p: p.get_by_label("User name")),
    ('page.get_by_placeholder(\'Your "name"\')', lambda p: p.get_by_placeholder('Your "name"')),
    ('page.get_by_text(\'Say "hi" \\\\ now\')', lambda p: p.get_by_text('Say "hi" \\ now')),
    ('page.get_by_text("Bob", exact=True)', lambda p: p.get_by_text("Bob", exact=True)),
    ('page.get_by_test_id(\'save "now"\')', lambda p: p.get_by_test_id('save "now"')),
    ('page.get_by_title("Help me")', lambda p: p.get_by_title("Help me")),
    ('page.get_by_alt_text("Logo")', lambda p: p.get_by_alt_text("Logo")),
    ('page.locator("tr").filter(has_text="Bob").get_by_role("button", name="Approve")',
     lambda p: p.locator("tr").filter(has_text="Bob").get_by_role("button", name="Approve")),
    ('page.get_by_role("row").filter(has=page.get_by_text("Alice")).get_by_role("button")',
     lambda p: p.get_by_role("row").filter(has=p.get_by_text("Alice")).get_by_role("button")),
    ('page.locator("tr", has_text="Alice").locator("td").first',
     lambda p: p.locator("tr", has_text="Alice").locator("td").first),
    ('page.get_by_role("button", name="Approve").last', lambda p: p.get_by_role("button", name="Approve").last),
    ('page.get_by_role("button", name="Approve").nth(1)', lambda p: p.get_by_role("button", name="Approve").nth(1)),
    ('page.frame_locator("iframe").get_by_role("button", name="Inner")',
     lambda p: p.frame_locator("iframe").get_by_role("button", name="Inner")),
    ('page.locator("iframe").content_frame.get_by_label("Email")',
     lambda p: p.locator("iframe").content_frame.get_by_label("Email")),
]


@pytest.fixture(scope="module")
def driver() -> Iterator[PlaywrightDriver]:
    d = PlaywrightDriver(BrowserSettings(), base_url="http://127.0.0.1:9/")
    d.open()
    try:
        d.page.set_content(PAGE)
        d.page.frame(name="inner").wait_for_load_state()
        yield d
    finally:
        d.close()


def _imported_selector(code: str) -> str:
    flow = import_codegen(f"import re\npage.goto('about:blank')\n{code}.click()\n", flow_name="t").flow
    assert len(flow.steps) == 1
    return flow.steps[0].selector


@pytest.mark.parametrize("code, build", LOCATORS, ids=[c for c, _ in LOCATORS])
def test_selector_equals_playwrights_own_and_resolves(driver, code, build):
    selector = _imported_selector(code)
    assert selector == build(driver.page)._impl_obj._selector
    assert driver.page.locator(selector).count() == 1


def test_driver_resolves_frame_selectors_to_refs_of_the_frame(driver):
    driver.observe(screenshot=False)
    frame_sel = _imported_selector('page.frame_locator("iframe").get_by_role("button", name="Inner")')
    [cand] = driver.refs_for_selector(frame_sel)
    inner = driver.page.frame(name="inner")
    assert cand.ref.startswith("1:") and cand.descriptor.frame == "inner"
    assert (cand.descriptor.role, cand.descriptor.name) == ("button", "Inner")
    frame_box = inner.frame_element().bounding_box()
    assert cand.descriptor.bbox is not None and cand.descriptor.bbox.x >= frame_box["x"]
    [main] = driver.refs_for_selector(_imported_selector('page.get_by_role("button", name="Sign in")'))
    assert main.ref.startswith("0:") and main.descriptor.frame == ""
    driver.perform(Action("click"), cand.ref, "")  # the ref addresses the element inside the iframe
    assert inner.locator("button").text_content() == "Done"
    in_frame = "iframe >> internal:control=enter-frame >> button"
    ok, why = driver.check_assertion(Assertion("text_equals", "Done", in_frame), None, "Done")
    assert ok, why


# --- the CLI: import a codegen script into a copy of the demo project, replay it -----------------------

SCRIPT = f'''\
import re
from playwright.sync_api import Playwright, sync_playwright, expect


def run(playwright: Playwright) -> None:
    browser = playwright.chromium.launch(headless=False)
    context = browser.new_context()
    page = context.new_page()
    page.goto("{RECORDED_ORIGIN}/login")
    page.get_by_label("User name").click()
    page.get_by_label("User name").fill("alice")
    page.get_by_label("Password").click()
    page.get_by_label("Password").fill("{DEMO_PASSWORD}")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Leave requests")).to_be_visible()
    page.get_by_role("link", name="New request").click()
    expect(page.get_by_role("button", name="Submit")).to_be_disabled()
    page.get_by_label("Leave type").select_option("annual")
    page.get_by_role("button", name="Choose start date").click()
    page.get_by_role("button", name="March 9, 2026", exact=True).click()
    page.get_by_role("textbox", name="End date").click()
    page.get_by_role("textbox", name="End date").fill("2026-03-13")
    page.get_by_label("Reason").click()
    page.get_by_label("Reason").fill("Family trip")
    expect(page.get_by_role("button", name="Submit")).to_be_enabled()
    page.get_by_role("button", name="Submit").click()
    expect(page.get_by_text("Request submitted")).to_be_visible()
    expect(page.locator("#toast")).to_contain_text("waiting for approval")
    expect(page).to_have_url("{RECORDED_ORIGIN}/requests")

    # ---------------------
    context.close()
    browser.close()


with sync_playwright() as playwright:
    run(playwright)
'''


def _steadyhand(*args: str, timeout: int = 240) -> subprocess.CompletedProcess:
    exe = ROOT / ".venv" / "bin" / "steadyhand"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "core.cli"]
    env = {**os.environ, "STEADYHAND_SECRET_PASSWORD": DEMO_PASSWORD}
    return subprocess.run([*cmd, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the demo project whose password comes from the environment only (no default in a file)."""
    dst = tmp_path / "demo"
    shutil.copytree(ROOT / "projects" / "demo", dst, ignore=shutil.ignore_patterns(".steadyhand"))
    settings = yaml.safe_load((dst / "steadyhand.yaml").read_text())
    settings["secrets"]["password"].pop("default")
    (dst / "steadyhand.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))
    return dst


def _files_with_password(root: Path) -> list[str]:
    """Files of the project holding the password, except the demo web app's own database.

    ``.steadyhand/demo-app.sqlite`` is the bundled demo app's backend (the
    README: it holds its public demo accounts), not something Steadyhand writes.
    """
    needle = DEMO_PASSWORD.encode()
    return [str(p.relative_to(root)) for p in sorted(root.rglob("*"))
            if p.is_file() and not p.name.startswith("demo-app.sqlite") and needle in p.read_bytes()]


def test_import_codegen_then_replay(project: Path, tmp_path: Path):
    script = tmp_path / "record_leave.py"
    planted(script).write_text(SCRIPT)  # codegen wrote the typed password into it: the input, not our output
    r = _steadyhand("import-codegen", str(script), "--project", str(project), "--flow", FLOW)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (f"imported 16 steps into flows/{FLOW}.yaml; run `steadyhand run {project} --flow {FLOW}` to replay "
            "(the first run captures full element descriptors)") in r.stdout
    assert "{password}" in r.stdout and "dropped 4 clicks" in r.stdout
    assert f"URLs on {RECORDED_ORIGIN} were made relative" in r.stdout
    assert DEMO_PASSWORD not in r.stdout + r.stderr

    path = project / "flows" / f"{FLOW}.yaml"
    flow = load_flow(path)
    assert flow.start_url == "/login" and flow.secrets == ("password",) and flow.params == {}
    assert flow.steps[1].action.value == "{password}"
    assert all(s.target.is_empty for s in flow.steps)
    assert _files_with_password(project) == []

    again = _steadyhand("import-codegen", str(script), "--project", str(project), "--flow", FLOW)
    assert again.returncode == 2 and "already exists" in again.stderr and "--force" in again.stderr
    assert load_flow(path) == flow

    run = _steadyhand("run", str(project), "--flow", FLOW, "--headless")
    assert run.returncode == 0, run.stdout + run.stderr
    assert re.search(rf"{FLOW}\s+passed\s+16/16\s+0\s+0", run.stdout), run.stdout

    replayed = load_flow(path)
    for step in replayed.steps:
        if step.selector:  # every element step got its descriptor written back on the first run
            assert step.target.name, step
            if step.action.kind != "assert":
                assert step.target.role, step
    submit = next(s for s in replayed.steps if s.name == "Click Submit")
    assert (submit.target.role, submit.target.name, submit.target.tag) == ("button", "Submit", "button")
    assert _files_with_password(project) == []
    assert DEMO_PASSWORD not in run.stdout + run.stderr


def test_import_codegen_input_errors(project: Path, tmp_path: Path):
    bad = tmp_path / "bad.py"
    bad.write_text('page.goto("/login")\npage.get_by_label("User name").fill("alice"\n')
    r = _steadyhand("import-codegen", str(bad), "--project", str(project), "--flow", "x")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert [ln for ln in r.stderr.splitlines() if ln.strip()] == [
        f"steadyhand: error: {bad} at line 2: not valid Python: '(' was never closed"]
    assert not (project / "flows" / "x.yaml").exists()

    good = tmp_path / "good.py"
    good.write_text('page.goto("/login")\npage.get_by_label("User name").fill("alice")\n')
    r = _steadyhand("import-codegen", str(good), "--project", str(project), "--flow", "leave_request")
    assert r.returncode == 2 and "already exists" in r.stderr  # the demo's own flow is not overwritten
    r = _steadyhand("import-codegen", str(good), "--project", str(project), "--flow", "../evil")
    assert r.returncode == 2 and "--flow" in r.stderr
    r = _steadyhand("import-codegen", str(tmp_path / "missing.py"), "--project", str(project), "--flow", "x")
    assert r.returncode == 2 and "cannot read the script" in r.stderr
    r = _steadyhand("import-codegen", str(good), "--project", str(tmp_path / "nope"), "--flow", "x")
    assert r.returncode == 2 and "project folder not found" in r.stderr
    r = _steadyhand("import-codegen", str(good), "--project", str(project), "--flow", "leave_request", "--force")
    assert r.returncode == 0 and "imported 1 steps" in r.stdout
    assert load_flow(project / "flows" / "leave_request.yaml").start_url == "/login"


EXPORT_SCRIPT = f'''\
from playwright.sync_api import Playwright, sync_playwright, expect


def run(playwright: Playwright) -> None:
    browser = playwright.chromium.launch(headless=False)
    context = browser.new_context()
    page = context.new_page()
    page.goto("{RECORDED_ORIGIN}/login")
    page.get_by_label("User name").fill("alice")
    page.get_by_label("Password").fill("{DEMO_PASSWORD}")
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("button", name="Export report").click()
    with page.expect_download() as download_info:
        page.get_by_role("dialog").get_by_role("button", name="Confirm").click()
    download = download_info.value
    expect(page.get_by_role("status")).to_contain_text("Report exported")

    # ---------------------
    context.close()
    browser.close()


with sync_playwright() as playwright:
    run(playwright)
'''


def test_the_click_that_starts_a_download_is_imported_and_replayed(project: Path, tmp_path: Path):
    """Codegen wraps the Confirm that starts the export's download in ``with page.expect_download()``: the
    click is the user's action, so the imported flow exports (it used to drop the click, and the replay then
    failed at the status check with no export done)."""
    script = tmp_path / "export.py"
    planted(script).write_text(EXPORT_SCRIPT)
    r = _steadyhand("import-codegen", str(script), "--project", str(project), "--flow", "export_codegen")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "expect_download()`: the actions inside it are imported" in r.stdout
    flow = load_flow(project / "flows" / "export_codegen.yaml")
    assert [s.action.kind for s in flow.steps] == ["input", "input", "click", "click", "click", "assert"]
    assert flow.steps[4].selector.endswith('internal:role=button[name="Confirm"i]')  # the click inside the block
    run = _steadyhand("run", str(project), "--flow", "export_codegen", "--headless", "--json", "-")
    assert run.returncode == 0, run.stdout + run.stderr
    (result,) = json.loads(run.stdout)["flows"]
    assert result["passed"] and (result["steps_passed"], result["steps_total"]) == (6, 6), result
