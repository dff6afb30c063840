"""Importing Playwright codegen scripts: pure parsing (the script is never executed)."""
from __future__ import annotations

import textwrap

import pytest
import yaml

from core.act.space import needs_target
from core.domain import ACTION_KINDS
from core.project import ProjectError, flow_to_mapping, load_flow, save_flow
from core.record.codegen import ImportResult, import_codegen
from core.project.params import bind

BASE = "http://127.0.0.1:8765"
#: Secret values of the fixtures (never written as field literals in a flow).
TYPED_SECRET = "s3cr3t-Typed!"
DECLARED_SECRET = "Declared-Value-42"
#: The right value of the declared secret where a script types two values (a test value, not a real secret).
RIGHT_VALUE = "Right-Value-17"
OTHER_SECRET = "another-w0rd"

SCRIPT = f'''\
import re
from playwright.sync_api import Playwright, sync_playwright, expect


def run(playwright: Playwright) -> None:
    browser = playwright.chromium.launch(headless=False)
    context = browser.new_context()
    page = context.new_page()
    page.goto("{BASE}/login")
    page.get_by_label("User name").click()
    page.get_by_label("User name").fill("alice")
    page.get_by_label("Password").click()
    page.get_by_label("Password").fill("{TYPED_SECRET}")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Leave requests")).to_be_visible()
    page.keyboard.press("Escape")

    # ---------------------
    context.close()
    browser.close()


with sync_playwright() as playwright:
    run(playwright)
'''


def body(code: str, **kw) -> ImportResult:
    """Import ``code`` as the body of a pytest-style test (lines start at 4)."""
    src = "from playwright.sync_api import Page, expect\n\ndef test_it(page: Page) -> None:\n"
    src += textwrap.indent(textwrap.dedent(code), "    ")
    kw.setdefault("flow_name", "t")
    kw.setdefault("base_url", BASE)
    return import_codegen(src, **kw)


def one_step(code: str, **kw):
    r = body(f'page.goto("{BASE}/")\n' + textwrap.dedent(code), **kw)
    assert len(r.flow.steps) == 1, (r.flow.steps, r.notes)
    return r.flow.steps[0]


def dump(result: ImportResult) -> str:
    return yaml.safe_dump(flow_to_mapping(result.flow), allow_unicode=True)


# --- a whole script -------------------------------------------------------------------------

def test_codegen_script_becomes_a_flow():
    r = import_codegen(SCRIPT, flow_name="login", filename="rec/login.py", base_url=BASE,
                       secret_names=["password"])
    f = r.flow
    assert f.name == "login" and f.start_url == "/login" and f.params == {} and f.secrets == ("password",)
    assert [s.id for s in f.steps] == ["s1", "s2", "s3", "s4"]
    assert [(s.action.kind, s.action.value, s.selector, s.name) for s in f.steps] == [
        ("input", "alice", 'internal:label="User name"i', "Fill User name"),
        ("input", "{password}", 'internal:label="Password"i', "Fill Password"),
        ("click", "", 'internal:role=button[name="Sign in"i]', "Click Sign in"),
        ("assert", "", 'internal:role=heading[name="Leave requests"i]', "Expect Leave requests to be visible"),
    ]
    assert all(s.target.is_empty for s in f.steps)
    assert [(a.kind, a.expected) for a in f.steps[3].assertions] == [("visible", "")]
    assert "login.py" in f.description
    # boilerplate is silent; the focusing clicks, the secret and the keyboard call are explained
    assert len(r.notes) == 3, r.notes
    assert r.notes[0].startswith("line 10: dropped 2 clicks") and "10, 12" in r.notes[0]
    assert r.notes[1].startswith("line 13:") and "{password}" in r.notes[1]
    assert r.notes[2].startswith("line 16:") and "page.keyboard" in r.notes[2] and "skipped" in r.notes[2]
    assert TYPED_SECRET not in dump(r) + "".join(r.notes)


def test_flow_is_valid_for_the_loader(tmp_path):
    r = import_codegen(SCRIPT, flow_name="login", base_url=BASE, secret_names=["password"])
    loaded = load_flow(save_flow(r.flow, tmp_path / "login.yaml"))
    assert [(s.id, s.action.kind, s.selector) for s in loaded.steps] == \
        [(s.id, s.action.kind, s.selector) for s in r.flow.steps]
    assert loaded.secrets == ("password",)
    assert TYPED_SECRET not in (tmp_path / "login.yaml").read_text()


def test_async_and_plain_scripts():
    src = f'''\
import asyncio
from playwright.async_api import Playwright, async_playwright, expect

async def run(playwright: Playwright) -> None:
    browser = await playwright.chromium.launch(headless=False)
    context = await browser.new_context()
    tab = await context.new_page()
    await tab.goto("{BASE}/requests")
    await tab.get_by_role("link", name="New request").click()
    await expect(tab.get_by_text("New leave request")).to_be_visible()
    await context.close()
    await browser.close()

async def main() -> None:
    async with async_playwright() as playwright:
        await run(playwright)

asyncio.run(main())
'''
    r = import_codegen(src, flow_name="a", base_url=BASE)
    assert r.notes == ()
    assert r.flow.start_url == "/requests"
    assert [s.action.kind for s in r.flow.steps] == ["click", "assert"]


# --- locators -------------------------------------------------------------------------------

@pytest.mark.parametrize("expr, selector", [
    ('page.get_by_role("button", name="Sign in")', 'internal:role=button[name="Sign in"i]'),
    ('page.get_by_role("button", name="Sign in", exact=True)', 'internal:role=button[name="Sign in"s]'),
    ('page.get_by_role("checkbox", checked=True, name="Notify")',
     'internal:role=checkbox[checked=true][name="Notify"i]'),
    ('page.get_by_role("heading", level=2)', "internal:role=heading[level=2]"),
    ('page.get_by_role("button")', "internal:role=button"),
    ('page.get_by_label("User name")', 'internal:label="User name"i'),
    ('page.get_by_label("User name", exact=True)', 'internal:label="User name"s'),
    ('page.get_by_text("Request submitted")', 'internal:text="Request submitted"i'),
    ('page.get_by_text("Saved", exact=True)', 'internal:text="Saved"s'),
    ('page.get_by_placeholder("YYYY-MM-DD")', 'internal:attr=[placeholder="YYYY-MM-DD"i]'),
    ('page.get_by_test_id("save")', 'internal:testid=[data-testid="save"s]'),
    ('page.get_by_title("Help")', 'internal:attr=[title="Help"i]'),
    ('page.get_by_alt_text("Logo", exact=True)', 'internal:attr=[alt="Logo"s]'),
    ('page.locator("#username")', "#username"),
    ('page.locator("tbody tr").first', "tbody tr >> nth=0"),
    ('page.locator("tbody tr").last', "tbody tr >> nth=-1"),
    ('page.locator("tbody tr").nth(2)', "tbody tr >> nth=2"),
    ('page.locator("tr").filter(has_text="Alice").get_by_role("button", name="Approve")',
     'tr >> internal:has-text="Alice"i >> internal:role=button[name="Approve"i]'),
    ('page.locator("tr", has_text="Bob").locator("td")', 'tr >> internal:has-text="Bob"i >> td'),
    ('page.get_by_role("row").filter(has_not_text="Draft")', 'internal:role=row >> internal:has-not-text="Draft"i'),
    ('page.get_by_role("row").filter(has=page.get_by_text("Alice"))',
     'internal:role=row >> internal:has="internal:text=\\"Alice\\"i"'),
    ('page.get_by_role("button").and_(page.get_by_title("Save"))',
     'internal:role=button >> internal:and="internal:attr=[title=\\"Save\\"i]"'),
    ('page.frame_locator("#app").get_by_role("button", name="Inner")',
     '#app >> internal:control=enter-frame >> internal:role=button[name="Inner"i]'),
    ('page.locator("iframe").content_frame.get_by_label("Email")',
     'iframe >> internal:control=enter-frame >> internal:label="Email"i'),
    ('page.frame_locator("iframe").first.locator("b")', "iframe >> nth=0 >> internal:control=enter-frame >> b"),
    ('page.frame_locator("#a").frame_locator("#b").get_by_text("x")',
     '#a >> internal:control=enter-frame >> #b >> internal:control=enter-frame >> internal:text="x"i'),
    ('page.get_by_role("button", name=re.compile("sign in", re.IGNORECASE))', "internal:role=button[name=/sign in/i]"),
    ('page.get_by_text(re.compile(r"it\'s \\d+"))', "internal:text=/it\\'s \\d+/"),
    # quoting: text selectors are JSON strings, attribute values escape only \\ and "
    ('page.get_by_text(\'Say "hi"\\n\')', 'internal:text="Say \\"hi\\"\\n"i'),
    ('page.get_by_role("button", name=\'Say "hi" \\\\ now\')', 'internal:role=button[name="Say \\"hi\\" \\\\ now"i]'),
    ('page.get_by_label("Société")', 'internal:label="Société"i'),
])
def test_locator_selectors(expr, selector):
    step = one_step(f"import re\n{expr}.click()\n")
    assert step.selector == selector
    assert step.action.kind == "click" and step.target.is_empty


def test_locator_variables_and_constants():
    r = body(f'''\
        USER = "alice"
        START = "{BASE}/login"
        page.goto(START)
        field = page.get_by_label("User name")
        field.fill(USER)
        page.get_by_label("Reason").fill(f"Trip with {{USER}}")
        ''')
    assert r.flow.start_url == "/login"
    assert [(s.selector, s.action.value) for s in r.flow.steps] == [
        ('internal:label="User name"i', "alice"), ('internal:label="Reason"i', "Trip with alice")]


# --- actions --------------------------------------------------------------------------------

@pytest.mark.parametrize("call, kind, value, name", [
    ('page.get_by_role("button", name="Go").click()', "click", "", "Click Go"),
    ('page.get_by_role("row", name="A").dblclick()', "dblclick", "", "Double-click A"),
    ('page.get_by_label("Reason").fill("Trip")', "input", "Trip", "Fill Reason"),
    ('page.get_by_label("Reason").type("Trip")', "input", "Trip", "Type into Reason"),
    ('page.get_by_label("Reason").press_sequentially("Trip", delay=50)', "input", "Trip", "Type into Reason"),
    ('page.get_by_label("Reason").clear()', "input", "", "Clear Reason"),
    ('page.get_by_label("Reason").press("Enter")', "press", "Enter", "Press Enter in Reason"),
    ('page.get_by_label("Notify").check()', "check", "", "Check Notify"),
    ('page.get_by_label("Notify").uncheck()', "uncheck", "", "Uncheck Notify"),
    ('page.get_by_label("Notify").set_checked(False)', "uncheck", "", "Uncheck Notify"),
    ('page.get_by_label("Type").select_option("annual")', "select", "annual", "Select annual in Type"),
    ('page.get_by_label("Type").select_option(["annual"])', "select", "annual", "Select annual in Type"),
    ('page.get_by_label("Type").select_option(label="Annual leave")', "select", "Annual leave",
     "Select Annual leave in Type"),
    ('page.get_by_label("Type").select_option(value=["sick"])', "select", "sick", "Select sick in Type"),
    ('page.get_by_text("Menu").hover()', "hover", "", "Hover over Menu"),
    ('page.get_by_label("File").set_input_files("a.pdf")', "upload", "a.pdf", "Upload a file to File"),
    ('page.get_by_label("File").set_input_files(["a.pdf"])', "upload", "a.pdf", "Upload a file to File"),
    ('page.get_by_label("Reason").fill("x", timeout=3000, force=True)', "input", "x", "Fill Reason"),
    ('page.click("text=Sign in")', "click", "", "Click text=Sign in"),
    ('page.fill("#username", "alice")', "input", "alice", "Fill #username"),
])
def test_actions(call, kind, value, name):
    step = one_step(call)
    assert kind in ACTION_KINDS
    assert (step.action.kind, step.action.value, step.name) == (kind, value, name)
    assert step.selector and step.target.is_empty


def test_navigation_steps():
    r = body(f'''\
        page.goto("{BASE}/login")
        page.goto("{BASE}/requests?sort=start")
        page.go_back()
        page.goto("https://elsewhere.example/x")
        ''')
    assert r.flow.start_url == "/login"
    assert [(s.action.kind, s.action.value, s.name, s.selector) for s in r.flow.steps] == [
        ("navigate", "/requests?sort=start", "Go to /requests?sort=start", ""),
        ("back", "", "Go back", ""),
        ("navigate", "https://elsewhere.example/x", "Go to https://elsewhere.example/x", ""),
    ]
    assert r.notes == ("line 7: the URL is not under the base URL; kept absolute",)


def test_urls_without_base_url_stay_absolute():
    r = body(f'page.goto("{BASE}/login")\npage.get_by_text("x").click()\n', base_url="")
    assert r.flow.start_url == f"{BASE}/login" and r.notes == ()


def test_base_url_with_a_path():
    r = body('page.goto("https://h.example/app/login")\npage.get_by_text("x").click()\n',
             base_url="https://h.example/app/")
    assert r.flow.start_url == "/login"


def test_no_goto_starts_at_the_root():
    r = body('page.get_by_text("x").click()\n')
    assert r.flow.start_url == "/" and r.notes == ("no page.goto() before the first action: the flow starts at /",)


@pytest.mark.parametrize("call, why", [
    ('page.get_by_text("x").click(button="right")', "button= is not supported"),
    ('page.get_by_text("x").click(modifiers=["ControlOrMeta"])', "modifiers= is not supported"),
    ('page.get_by_label("T").select_option(index=2)', "index="),
    ('page.get_by_label("T").select_option(["a", "b"])', "several options"),
    ('page.get_by_label("F").set_input_files(["a", "b"])', "one file path"),
    ('page.get_by_text("x").focus()', "no equivalent"),
    ('page.mouse.click(10, 20)', "page.mouse has no target element"),
    ('page.go_forward()', "no equivalent"),
    ('page.wait_for_timeout(500)', "the engine waits"),
    ('page.frame_locator("#f").click()', "a frame locator is not an element"),
    ('page.get_by_label("Reason").fill(compute())', "not a literal"),
    ('page.once("dialog", lambda dialog: dialog.dismiss())', "no equivalent"),
])
def test_unsupported_calls_are_skipped_with_a_note(call, why):
    r = body(f'page.goto("{BASE}/")\n{call}\npage.get_by_text("ok").click()\n')
    assert [s.selector for s in r.flow.steps] == ['internal:text="ok"i']
    assert len(r.notes) == 1 and r.notes[0].startswith("line 5: ") and why in r.notes[0], r.notes


# --- assertions -----------------------------------------------------------------------------

@pytest.mark.parametrize("code, kind, expected, on_step", [
    ('expect(L).to_be_visible()', "visible", "", True),
    ('expect(L).not_to_be_hidden()', "visible", "", True),
    ('expect(L).to_be_visible(visible=False)', "hidden", "", False),
    ('expect(L).to_be_hidden()', "hidden", "", False),
    ('expect(L).not_to_be_visible()', "hidden", "", False),
    ('expect(L).to_be_enabled()', "enabled", "", True),
    ('expect(L).to_be_enabled(enabled=False)', "disabled", "", True),
    ('expect(L).to_be_disabled()', "disabled", "", True),
    ('expect(L).not_to_be_enabled()', "disabled", "", True),
    ('expect(L).to_have_text("Pending")', "text_equals", "Pending", True),
    ('expect(L).to_contain_text("Pend", timeout=10000)', "text_contains", "Pend", True),
    ('expect(L).to_have_value("2026-03-09")', "value", "2026-03-09", True),
    ('expect(L).to_have_count(3)', "count", "3", False),
])
def test_element_assertions(code, kind, expected, on_step):
    sel = 'internal:role=cell[name="Status"i]'
    step = one_step(code.replace("L", 'page.get_by_role("cell", name="Status")'))
    assert step.action.kind == "assert" and step.target.is_empty
    assert [(a.kind, a.expected, a.selector) for a in step.assertions] == [(kind, expected, sel)]
    # a target the element must exist for carries the selector (its descriptor is captured on the first
    # run); hidden and count are checked on the page through the assertion's selector alone
    assert step.selector == (sel if on_step else "")
    assert needs_target(step) is on_step


def test_page_assertions():
    r = body(f'''\
        page.goto("{BASE}/login")
        expect(page).to_have_url("{BASE}/requests")
        expect(page).to_have_url(re.compile(".*requests"))
        expect(page).to_have_title("LeaveDesk")
        expect(page.get_by_label("Notify")).to_be_checked()
        expect(page.get_by_role("alert")).to_have_text(["a", "b"])
        expect(page.get_by_text("Request submitted")).to_be_visible()
        ''')
    steps = r.flow.steps
    assert [(s.action.kind, s.selector, s.assertions[0].kind, s.assertions[0].expected) for s in steps] == [
        ("assert", "", "url_contains", "/requests"),
        ("assert", 'internal:text="Request submitted"i', "visible", ""),
    ]
    assert steps[0].name == "Expect the URL to contain '/requests'" and not needs_target(steps[0])
    assert [n.split(":")[0] for n in r.notes] == ["line 6", "line 7", "line 8", "line 9"]
    assert "regular expression" in r.notes[0] and "no equivalent assertion" in r.notes[1]
    assert "checked-state" in r.notes[2] and "not a list" in r.notes[3]


# --- blocks, boilerplate and unknown statements ------------------------------------------------

def test_the_click_inside_a_popup_or_download_block_is_imported_and_the_new_page_is_not_followed():
    """The click that starts a download (Confirm on an export dialog) is the user's action: dropping it, as
    the importer did, made a flow that never exports; the popup's own page is still not driven."""
    r = body(f'''\
        page.goto("{BASE}/requests")
        with page.expect_popup() as page1_info:
            page.get_by_role("link", name="Help").click()
        page1 = page1_info.value
        page1.get_by_role("button", name="Close").click()
        page1.close()
        with page.expect_download() as download_info:
            page.get_by_role("button", name="Export").click()
        download = download_info.value
        with page.expect_navigation():
            page.get_by_role("link", name="Home").click()
        ''')
    assert [s.name for s in r.flow.steps] == ["Click Help", "Click Export", "Click Home"]
    assert [n.split(":")[0] for n in r.notes] == ["line 5", "line 8", "line 10"]
    assert "expect_popup()" in r.notes[0] and "the page it opens is not followed" in r.notes[0]
    assert "page1" in r.notes[1] and "skipped" in r.notes[1]
    assert "expect_download()" in r.notes[2] and "actions inside it are imported" in r.notes[2]


def test_unknown_statements_name_their_line_and_boilerplate_is_silent():
    src = f'''\
"""Recorded by hand."""
import time
from playwright.sync_api import sync_playwright, expect

def run(playwright) -> None:
    browser = playwright.chromium.launch(headless=False, slow_mo=100)
    context = browser.new_context(viewport={{"width": 1280, "height": 800}})
    context.tracing.start(screenshots=True)
    page = context.new_page()
    page.set_default_timeout(10000)
    page.goto("{BASE}/login")
    time.sleep(1)
    print("signing in")
    for _ in range(2):
        page.get_by_text("x").click()
    page.get_by_role("button", name="Sign in").click()
    context.tracing.stop(path="trace.zip")
    page.close()
    context.close()
    browser.close()

if __name__ == "__main__":
    with sync_playwright() as playwright:
        run(playwright)
'''
    r = import_codegen(src, flow_name="x", base_url=BASE)
    assert [s.name for s in r.flow.steps] == ["Click Sign in"]
    # launch(slow_mo) and the context's viewport are dropped (the project's settings apply) and said
    assert [n.split(":")[0] for n in r.notes] == ["line 6", "line 7", "line 12", "line 13", "line 14"]
    assert "launch() options dropped: slow_mo" in r.notes[0]
    assert "new_context() options dropped: viewport" in r.notes[1]
    assert "time.sleep(…)" in r.notes[2] and "print(…)" in r.notes[3] and "for statement" in r.notes[4]


def test_goto_options_are_listed_as_dropped_and_every_skip_gives_its_reason():
    r = body(f'''\
        page.goto("{BASE}/login", timeout=60000, wait_until="networkidle")
        expect(heading).to_have_text("Welcome")
        page.get_by_role("button", name="Go").click()
        ''')
    notes = "\n".join(r.notes)
    assert "page.goto() options dropped: timeout, wait_until" in notes
    skip = next(n for n in r.notes if "to_have_text" in n)
    assert ": ; skipped" not in skip and "does not start from the page" in skip


def test_focus_clicks_only_before_typing_into_the_same_field():
    r = body(f'''\
        page.goto("{BASE}/")
        page.get_by_label("A").click()
        page.get_by_label("A").fill("1")
        page.get_by_label("B").click()
        page.get_by_label("C").fill("2")
        page.get_by_label("D").click()
        page.get_by_label("D").press("Tab")
        ''')
    assert [s.name for s in r.flow.steps] == ["Fill A", "Click B", "Fill C", "Press Tab in D"]
    assert r.notes == ("line 5: dropped 2 clicks that only focus a field before typing (lines 5, 9); "
                       "replay types into the field directly",)


def test_a_placeholder_lookalike_stays_literal_text():
    r = body(f'page.goto("{BASE}/")\npage.get_by_label("Reason").fill("see {{ticket}}")\n'
             f'page.get_by_role("button", name="{{x}} Save").click()\n')
    assert r.flow.steps[0].action.value == "see {{ticket}}"  # doubled: the typed braces are literal, not {ticket}
    assert bind(r.flow.steps[0].action.value, {}) == "see {ticket}"
    assert bind(r.flow.steps[1].selector, {}).startswith('internal:role=button[name="{x} Save"')
    assert not r.notes


# --- secrets --------------------------------------------------------------------------------

@pytest.mark.parametrize("locator, name", [
    ('page.get_by_label("Password")', "password"),
    ('page.get_by_label("New password", exact=True)', "new_password"),
    ('page.get_by_placeholder("PIN")', "pin"),
    ('page.get_by_role("textbox", name="One-time code (OTP)")', "one_time_code_otp"),
    ('page.locator("#api-token")', "api_token"),
    ('page.locator("input[type=password]")', "input_type_password"),
    ('page.get_by_test_id("passcodeField")', "passcodefield"),
    ('page.get_by_label("Client secret")', "client_secret"),
])
def test_values_typed_into_secret_fields_become_secret_parameters(locator, name):
    r = body(f'page.goto("{BASE}/")\n{locator}.fill("{TYPED_SECRET}")\n')
    step = r.flow.steps[0]
    assert step.action.value == "{" + name + "}"
    assert r.flow.secrets == (name,) and r.flow.params == {}
    assert any("{" + name + "}" in n for n in r.notes)
    assert any(f"STEADYHAND_SECRET_{name.upper()}" in n for n in r.notes)  # not declared: where to put it
    assert TYPED_SECRET not in dump(r) + "\n".join(r.notes)


@pytest.mark.parametrize("label", ["Shipping address", "Spinner speed", "Pinned note", "Topic"])
def test_ordinary_fields_keep_their_values(label):
    r = body(f'page.goto("{BASE}/")\npage.get_by_label("{label}").fill("hello")\n')
    assert r.flow.steps[0].action.value == "hello" and r.flow.secrets == () and r.notes == ()


def test_declared_secret_names_are_reused():
    r = body(f'page.goto("{BASE}/")\npage.get_by_label("Current password").fill("{TYPED_SECRET}")\n',
             secret_names=["password"])
    assert r.flow.steps[0].action.value == "{password}" and r.flow.secrets == ("password",)
    assert not any("STEADYHAND_SECRET_" in n for n in r.notes)  # declared: nothing more to do


def test_a_declared_secret_value_becomes_its_placeholder_anywhere():
    r = body(f'''\
        page.goto("{BASE}/login?key={DECLARED_SECRET}")
        page.get_by_label("Notes").fill("{DECLARED_SECRET}")
        expect(page.get_by_label("Notes")).to_have_value("{DECLARED_SECRET}")
        page.get_by_label("Comment").fill("was {DECLARED_SECRET} today")
        page.get_by_text("{DECLARED_SECRET}").click()
        ''', secret_names=["api_key"], secret_values={"api_key": DECLARED_SECRET})
    f = r.flow
    assert f.start_url == "/login?key={api_key}"
    assert [(s.action.kind, s.action.value) for s in f.steps] == [
        ("input", "{api_key}"), ("assert", ""), ("input", "was {api_key} today")]
    assert f.steps[1].assertions[0].expected == "{api_key}"
    assert f.secrets == ("api_key",)
    assert any(n.startswith("line 8:") and "locator contains the value of secret {api_key}" in n for n in r.notes)
    assert DECLARED_SECRET not in dump(r) + "\n".join(r.notes)


def test_different_values_into_the_same_secret_field_get_different_names():
    r = body(f'''\
        page.goto("{BASE}/login")
        page.get_by_label("Password").fill("{OTHER_SECRET}")
        page.get_by_role("button", name="Sign in").click()
        page.get_by_label("Password").fill("{DECLARED_SECRET}")
        page.get_by_label("Password").fill("{OTHER_SECRET}")
        ''', secret_names=["password"], secret_values={"password": DECLARED_SECRET})
    values = [s.action.value for s in r.flow.steps if s.action.kind == "input"]
    assert values == ["{password_2}", "{password}", "{password_2}"]
    assert r.flow.secrets == ("password_2", "password")
    text = dump(r) + "\n".join(r.notes)
    assert OTHER_SECRET not in text and DECLARED_SECRET not in text


def test_a_computed_value_for_a_secret_field_becomes_the_declared_secret():
    r = body(f'''\
        import os
        page.goto("{BASE}/login")
        page.get_by_label("Password").fill(os.environ["APP_PASSWORD"])
        ''', secret_names=["password"], secret_values={"password": DECLARED_SECRET})
    assert r.flow.steps[0].action.value == "{password}" and r.flow.secrets == ("password",)


def test_short_secret_values_are_replaced_only_whole():
    r = body(f'page.goto("{BASE}/")\npage.get_by_label("PIN").fill("12")\npage.get_by_text("Row 12").click()\n')
    assert [s.action.value for s in r.flow.steps] == ["{pin}", ""]
    assert any(n.startswith("line 5: the value typed into 'PIN'") for n in r.notes)  # "5" is not masked


def test_a_declared_secret_only_in_a_url_is_listed_in_the_flow():
    r = body(f'page.goto("{BASE}/login?key={DECLARED_SECRET}")\npage.get_by_text("x").click()\n',
             secret_names=["api_key"], secret_values={"api_key": DECLARED_SECRET})
    assert r.flow.start_url == "/login?key={api_key}" and r.flow.secrets == ("api_key",)
    assert DECLARED_SECRET not in dump(r)


# --- errors ---------------------------------------------------------------------------------

def test_syntax_error_names_the_line():
    src = (f'page.goto("{BASE}/")\npage.get_by_label("Password").fill("{DECLARED_SECRET}")\n'
           'page.get_by_text("x".click()\n')
    with pytest.raises(ProjectError) as ei:
        import_codegen(src, flow_name="x", filename="rec.py", secret_values={"password": DECLARED_SECRET})
    err = ei.value
    assert err.path == "rec.py" and err.location == "line 3" and "not valid Python" in err.detail
    assert str(err).startswith("rec.py at line 3: not valid Python")
    assert DECLARED_SECRET not in str(err)


def test_script_without_page_calls_is_rejected():
    with pytest.raises(ProjectError) as ei:
        import_codegen("import os\nprint(os.getcwd())\n", flow_name="x", filename="notes.py")
    assert ei.value.path == "notes.py" and ei.value.location == "line 1"
    assert "no Playwright page calls" in ei.value.detail


def test_script_with_nothing_importable_names_the_first_problem():
    with pytest.raises(ProjectError) as ei:
        import_codegen("page.keyboard.press('Tab')\npage.mouse.wheel(0, 100)\n", flow_name="x", filename="k.py")
    assert ei.value.location == "line 1" and "nothing to import" in ei.value.detail
    assert "page.keyboard" in ei.value.detail


def test_empty_flow_name_is_a_programming_error():
    with pytest.raises(ValueError):
        import_codegen(SCRIPT, flow_name="")


def test_a_device_another_engine_and_context_options_are_listed_as_dropped() -> None:
    src = f'''
from playwright.sync_api import Playwright, sync_playwright

def run(playwright: Playwright) -> None:
    iphone_13 = playwright.devices["iPhone 13"]
    browser = playwright.webkit.launch(headless=False)
    context = browser.new_context(**playwright.devices["iPhone 13"], geolocation={{"longitude": 2.35, "latitude": 48.85}},
                                  permissions=["geolocation"], locale="fr-FR")
    page = context.new_page()
    page.goto("{BASE}/login")
    page.get_by_role("button", name="Sign in").click()
'''
    r = import_codegen(src, flow_name="x", base_url=BASE)
    text = "\n".join(r.notes)
    assert "runs Webkit; a flow replays in Chromium" in text
    assert "device 'iPhone 13', geolocation, permissions, locale" in text


def test_a_script_with_only_a_goto_is_refused_not_written_empty() -> None:
    src = f'''
from playwright.sync_api import sync_playwright

with sync_playwright() as p:
    page = p.chromium.launch().new_page()
    page.goto("{BASE}/login")
'''
    with pytest.raises(ProjectError, match="nothing to import"):
        import_codegen(src, flow_name="x", base_url=BASE)


@pytest.mark.parametrize("locator", ['page.get_by_label("Mot de passe")', 'page.get_by_label("密码")',
                                     'page.locator("#pw")', 'page.get_by_placeholder("Contraseña")'])
def test_a_password_field_named_in_another_language_or_by_a_short_id_becomes_a_secret(locator: str) -> None:
    src = f'''
from playwright.sync_api import sync_playwright

with sync_playwright() as p:
    page = p.chromium.launch().new_page()
    page.goto("{BASE}/login")
    {locator}.fill("typed-in-clear-9")
    page.get_by_role("button", name="Sign in").click()
'''
    r = import_codegen(src, flow_name="x", base_url=BASE, secret_names=("password",))
    fill = r.flow.steps[0]
    assert fill.action.value == "{password}"  # the project's declared password, not a secret named after the label
    assert r.flow.secrets and "typed-in-clear-9" not in "\n".join(r.notes)


def test_a_password_field_with_no_ascii_word_in_its_label_is_named_password_when_none_is_declared() -> None:
    """Seen on a public script (a Chinese login): the secret was named {secret}, which says nothing."""
    src = f'''
from playwright.sync_api import sync_playwright

with sync_playwright() as p:
    page = p.chromium.launch().new_page()
    page.goto("{BASE}/login")
    page.get_by_label("密码", exact=True).fill("typed-in-clear-9")
'''
    r = import_codegen(src, flow_name="x", base_url=BASE)
    assert r.flow.steps[0].action.value == "{password}" and r.flow.secrets == ("password",)


def test_when_the_declared_secrets_value_is_unknown_no_typed_value_is_guessed_to_be_it():
    """``init --secret password`` (no default, STEADYHAND_SECRET_PASSWORD unset): the script's first test types a
    wrong password, the next the right one. The first literal used to take {password} (the wrong-password test then
    typed the real password); now neither is taken for it, each gets a name of its own and a note says what to
    set."""
    src = textwrap.dedent(f'''\
        from playwright.sync_api import Page, expect

        def test_wrong_password(page: Page) -> None:
            page.goto("{BASE}/login")
            page.get_by_label("Password").fill("wrong-pass-1")
            page.get_by_role("button", name="Sign in").click()

        def test_right_password(page: Page) -> None:
            page.goto("{BASE}/login")
            page.get_by_label("Password").fill("{RIGHT_VALUE}")
            page.get_by_role("button", name="Sign in").click()
            page.get_by_label("Password").fill("wrong-pass-1")
        ''')
    r = import_codegen(src, flow_name="t", base_url=BASE, secret_names=["password"])
    values = [s.action.value for s in r.flow.steps if s.action.kind == "input"]
    assert values == ["{password_1}", "{password_2}", "{password_1}"]
    assert r.flow.secrets == ("password_1", "password_2")
    notes = "\n".join(r.notes)
    assert ("the script types 2 different values into the fields of the declared secret {password}, whose value "
            "is not known here") in notes
    assert "they became {password_1}, {password_2}: set STEADYHAND_SECRET_PASSWORD_1 and " \
           "STEADYHAND_SECRET_PASSWORD_2" in notes
    assert "wrong-pass-1" not in notes + dump(r) and RIGHT_VALUE not in notes + dump(r)
    known = import_codegen(src, flow_name="t", base_url=BASE, secret_names=["password"],
                           secret_values={"password": RIGHT_VALUE})  # the value is known: the equal one is it
    assert [s.action.value for s in known.flow.steps if s.action.kind == "input"] == [
        "{password_2}", "{password}", "{password_2}"]
    one = import_codegen(src.split("def test_right_password")[0], flow_name="t", base_url=BASE,
                         secret_names=["password"])  # one value only: the recorded login's, as before
    assert one.flow.steps[0].action.value == "{password}" and one.flow.secrets == ("password",)
