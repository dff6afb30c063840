"""Pure logic of the pytest / script export: which locator codegen would choose, parameters, secrets."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from core.domain import Action, Assertion, ElementDescriptor, Scope, Step
from core.export import ExportError, choose_locator, export_flow
from core.project import load_project

ROOT = Path(__file__).resolve().parents[3]


def _step(**target: object) -> Step:
    """A click on ``target``, recorded by a recorder that looked for longer names (``exact`` False unless given)."""
    target.setdefault("exact", False)
    return Step(id="s1", action=Action(kind="click"), target=ElementDescriptor(**target))  # type: ignore[arg-type]


def test_a_target_nobody_checked_for_longer_names_is_matched_whole() -> None:
    """A flow recorded before the recorder looked (``exact`` unknown): 'Save' beside 'Save and Continue Editing'
    must not trip strict mode (flask-admin's exported script did, once names were matched as substrings)."""
    assert choose_locator(_step(role="button", name="Save", exact=None)).code == (
        "page.get_by_role('button', name='Save', exact=True)")
    assert choose_locator(_step(role="button", name="Save")).code == "page.get_by_role('button', name='Save')"


def test_codegen_order_test_id_role_label_placeholder_text_css() -> None:
    full = dict(test_id="save", role="button", name="Save it", label="Save it", placeholder="p", text="Save",
                css_path="button#save")
    assert choose_locator(_step(**full)).code == "page.get_by_test_id('save')"
    full.pop("test_id")
    assert choose_locator(_step(**full)).code == "page.get_by_role('button', name='Save it')"
    assert choose_locator(_step(**full, exact=True)).code == "page.get_by_role('button', name='Save it', exact=True)"
    full.pop("role")
    assert choose_locator(_step(**full)).strategy == "label"
    full.pop("label")
    full.pop("name")
    assert choose_locator(_step(**full)).code == "page.get_by_placeholder('p')"
    full.pop("placeholder")
    assert choose_locator(_step(**full)).code == "page.get_by_text('Save')"
    full.pop("text")
    assert choose_locator(_step(**full)).code == "page.locator('button#save')"


def test_password_inputs_have_no_role_and_go_by_label() -> None:
    c = choose_locator(_step(tag="input", type="password", role="textbox", name="Password", label="Password"))
    assert c.strategy == "label" and c.code == "page.get_by_label('Password')"


def test_a_text_beside_a_field_is_not_a_label_playwright_finds() -> None:
    """Flask-AppBuilder's sign-in form: ``<label for="openid">Password:</label>`` beside ``input#password``.
    The recorder keeps the text as the field's label, but the field has no accessible name: get_by_label
    would wait for ever (the exported script timed out there); its CSS finds it."""
    c = choose_locator(_step(tag="input", type="password", role="textbox", label="Password:", css_path="input#password"))
    assert c.strategy == "css" and c.code == "page.locator('input#password')"
    c = choose_locator(_step(tag="select", role="combobox", name="Quantity", label="Qty", css_path="select#q"))
    assert c.code == "page.get_by_role('combobox', name='Quantity')"


def test_a_name_in_capitals_matches_case_insensitively_as_a_whole() -> None:
    c = choose_locator(_step(role="button", name="EMPLOYEE", exact=True))
    assert c.code == "page.get_by_role('button', name=re.compile('^employee$', re.IGNORECASE))"


def test_a_recorded_scope_chains_before_the_elements_own_locator() -> None:
    """An "Edit" link in each table row: the recorded row makes it unique, as codegen's chained locator does."""
    c = choose_locator(_step(role="link", name="Edit", scope=Scope("row", "Bob 2026-03-04")))
    assert c.code == "page.get_by_role('row', name='Bob 2026-03-04').get_by_role('link', name='Edit')"


def test_unknown_roles_fall_through_and_selector_only_steps_keep_their_selector() -> None:
    assert choose_locator(_step(role="generic", name="x", text="Hello")).strategy == "text"
    st = Step(id="s1", action=Action(kind="click"), selector="role=dialog >> role=button[name='OK']")
    assert choose_locator(st).code == 'page.locator("role=dialog >> role=button[name=\'OK\']")'
    assert choose_locator(Step(id="s1", action=Action(kind="press", value="Enter"))) is None


def test_placeholders_become_variables_and_escaped_braces_stay_text() -> None:
    c = choose_locator(_step(role="link", name="Open {ref} {{raw}}"))
    assert c.code == "page.get_by_role('link', name='Open ' + ref + ' {raw}')"


@pytest.mark.parametrize("style", ["pytest", "script"])
def test_demo_flows_export_to_valid_python_without_the_secret(style: str) -> None:
    project = load_project(ROOT / "projects" / "demo")
    secret = "demo-" + "pass"
    for flow in project.flows.values():
        src = export_flow(project, flow, style=style)
        ast.parse(src)
        assert secret not in src
        assert "/usr/bin/chromium" not in src  # found at run time (chromium_path / the conftest), never written
        if "{password}" in str([s.action.value for s in flow.steps]):
            assert ("secret('password')" if style == "pytest" else "_secret('password')") in src
            assert "STEADYHAND_SECRET_PASSWORD" in src
        if style == "pytest":
            assert f"def test_{flow.name}(page: Page, base_url: str" in src
            # the plugin's fixtures: no browser, page or base_url of its own, no set-up repeated per file
            for own in ("def browser", "def page", "def base_url", "sync_playwright", "executable_path", "launch("):
                assert own not in src, own
        else:
            assert "def run(page: Page, base_url: str, params: dict[str, str]) -> None:" in src
            assert "executable_path=chromium_path(pw.chromium.executable_path)" in src


def test_assertions_become_expect_calls_and_a_bad_count_is_an_error() -> None:
    project = load_project(ROOT / "projects" / "demo")
    src = export_flow(project, project.flows["leave_request"])
    assert 'expect(page.locator("role=button[name=\'Submit\']")).to_be_disabled()' in src
    assert "expect(page.get_by_text('Request submitted').first).to_be_visible()" in src
    flow = project.flows["sort_table"]
    bad = flow.steps[-1].__class__(id="s9", action=Action(kind="click"), selector="#x",
                                   assertions=(Assertion(kind="count", expected="many"),))
    from dataclasses import replace

    with pytest.raises(ExportError, match="s9.*whole number"):
        export_flow(project, replace(flow, steps=flow.steps + (bad,)))


def test_the_recorded_landing_becomes_expect_calls() -> None:
    """URL relative to base_url, heading, a dialog opened (by its name) and closed, a fill's value: what the
    replay checks after each step (core.act.landing), the exported test checks too."""
    project = load_project(ROOT / "projects" / "demo")
    src = export_flow(project, project.flows["leave_request"])
    assert ("expect(page).to_have_url(re.compile(re.escape(base_url.rstrip('/')) + '/requests/new/?(?:[?#].*)?$'))"
            in src)
    assert "expect(page.get_by_role('heading', name=re.compile('New\\\\s+leave\\\\s+request', re.IGNORECASE)).first)" in src
    assert "get_by_role('dialog', name=re.compile('Choose\\\\s+start\\\\s+date', re.IGNORECASE))" in src
    assert "expect(page.get_by_role('textbox', name='Reason')).to_have_value(reason)" in src
    assert "to_have_value(password)" not in src  # a secret is never an expected value (its message prints it)
    src = export_flow(project, project.flows["export_report"])
    assert "expect(page.get_by_role('dialog').or_(page.get_by_role('alertdialog'))).to_have_count(0)" in src
    # a page fact is checked where it changes, not after every step
    src = export_flow(project, project.flows["login_lockout"])
    assert src.count("to_have_url(") == 1


def test_loose_pattern_reads_as_the_replay_does() -> None:
    import re

    from core.act.after import same_text
    from core.export.playwright_test import loose_pattern

    for recorded, actual in (("Leave requests", "LEAVE  requests"), ("Alice's 3 requests", "Alice\u2019s 12 requests"),
                             ("Signed in as {user}", "Signed in as bob"), ("Export report", "Export report (CSV)")):
        assert same_text(recorded, actual)
        assert re.search(loose_pattern(recorded), actual, re.I), (recorded, actual)
    assert not re.search(loose_pattern("Leave requests"), "Sign in", re.I)


@pytest.mark.parametrize("selector, code", [
    ('internal:role=button[name="Sign in"i]', "page.get_by_role('button', name='Sign in')"),
    ('internal:role=button[name="Sign in"s]', "page.get_by_role('button', name='Sign in', exact=True)"),
    ('internal:role=heading[level=2]', "page.get_by_role('heading', level=2)"),
    ('internal:label="User name"i', "page.get_by_label('User name')"),
    ('internal:text="Hello >> there"s', "page.get_by_text('Hello >> there', exact=True)"),
    ('internal:attr=[placeholder="Search"i]', "page.get_by_placeholder('Search')"),
    ('internal:attr=[alt="Logo"s]', "page.get_by_alt_text('Logo', exact=True)"),
    ('internal:testid=[data-testid="save"s]', "page.get_by_test_id('save')"),
    ('#list >> internal:has-text=/Tot[a-z]+/i >> nth=1',
     "page.locator('#list').filter(has_text=re.compile('Tot[a-z]+', re.IGNORECASE)).nth(1)"),
    ('li >> internal:has="internal:role=button[name=\\"x\\"i]"',
     "page.locator('li').filter(has=page.get_by_role('button', name='x'))"),
    ('iframe >> internal:control=enter-frame >> internal:label="Card"i',
     "page.locator('iframe').content_frame.get_by_label('Card')"),
    ('internal:role=button >> internal:or="internal:text=\\"OK\\"i" >> nth=0',
     "page.get_by_role('button').or_(page.get_by_text('OK')).first"),
])
def test_internal_selectors_become_public_locator_calls(selector: str, code: str) -> None:
    from core.export.playwright_test import selector_code

    assert selector_code(selector) == code


def test_an_unknown_internal_engine_is_refused_not_written() -> None:
    st = Step(id="s4", action=Action(kind="click"), selector="internal:chain=whatever")
    project = load_project(ROOT / "projects" / "demo")
    flow = project.flows["sort_table"]
    from dataclasses import replace

    with pytest.raises(ExportError, match="s4.*internal"):
        export_flow(project, replace(flow, steps=(st,)))


def test_a_flow_imported_from_codegen_exports_no_internal_selector() -> None:
    from core.record.codegen import import_codegen

    script = """
from playwright.sync_api import Page, expect

def test_example(page: Page) -> None:
    page.goto("http://127.0.0.1:8000/login")
    page.get_by_label("User name").fill("alice")
    page.get_by_role("button", name="Sign in", exact=True).click()
    page.get_by_test_id("row").filter(has_text="Lisbon").get_by_role("link").first.click()
    page.frame_locator("#pay").get_by_placeholder("Card number").fill("4242")
    expect(page.get_by_text("Saved")).to_be_visible()
"""
    flow = import_codegen(script, flow_name="imported", base_url="http://127.0.0.1:8000").flow
    assert any(s.selector.startswith("internal:") for s in flow.steps)  # what the importer keeps
    project = load_project(ROOT / "projects" / "demo")
    for style in ("pytest", "script"):
        src = export_flow(project, flow, style=style)  # type: ignore[arg-type]
        ast.parse(src)
        assert "internal:" not in src
    assert "page.get_by_label('User name').fill('alice')" in src
    assert "page.get_by_role('button', name='Sign in', exact=True).click()" in src
    assert "page.get_by_test_id('row').filter(has_text='Lisbon').get_by_role('link').first.click()" in src
    assert "page.locator('#pay').content_frame.get_by_placeholder('Card number').fill('4242')" in src
    assert "expect(page.get_by_text('Saved')).to_be_visible()" in src


def test_the_conftest_adapts_the_plugin_fixtures_and_writes_no_chromium_path() -> None:
    from core.export import conftest_source

    for name in ("demo", "fab"):
        src = conftest_source(load_project(ROOT / "projects" / name))
        ast.parse(src)
        assert "/usr/bin/chromium" not in src and "sync_playwright" not in src
        for fixture in ("browser_type_launch_args", "context"):
            assert f"def {fixture}({fixture}" in src, fixture  # each extends the plugin's own
        # base_url reads the plugin's --base-url option itself: asking for the plugin's fixture warns under pytest 9
        assert "def base_url(pytestconfig)" in src and "config.getoption('--base-url', None)" in src
        assert "def browser_context_args" not in src  # the exported files' own marker: a user's tests keep theirs
        assert "def page" not in src and "def browser(" not in src
        assert ("SITE_MODULE = 'core.sites.demo'" in src and "'-m', SITE_MODULE" in src) == (name == "demo")


def test_a_chained_selector_wins_over_the_elements_own_locator() -> None:
    # the chain (a scope, an nth) says the element alone is not unique on its page: two links 'year'
    st = Step(id="s1", action=Action(kind="click"), selector='internal:role=table >> internal:role=link[name="year"i]',
              target=ElementDescriptor(role="link", name="year", text="year"))
    c = choose_locator(st)
    assert c.strategy == "selector" and c.code == "page.get_by_role('table').get_by_role('link', name='year')"
    # a plain selector leaves the codegen order as it was; a test id still comes first
    plain = Step(id="s1", action=Action(kind="click"), selector="#y", target=ElementDescriptor(role="link", name="year", exact=False))
    assert choose_locator(plain).code == "page.get_by_role('link', name='year')"
    tid = Step(id="s1", action=Action(kind="click"), selector="table >> a", target=ElementDescriptor(test_id="y"))
    assert choose_locator(tid).code == "page.get_by_test_id('y')"


def test_a_conftest_inside_the_project_names_the_project_file_relative_to_itself(tmp_path: Path) -> None:
    import re
    import shutil

    from core.export import conftest_source

    project_dir = tmp_path / "repo" / "demo"
    shutil.copytree(ROOT / "projects" / "demo", project_dir, ignore=shutil.ignore_patterns(".steadyhand"))
    project = load_project(project_dir)
    inside = conftest_source(project, project_dir / "e2e")
    line = next(ln for ln in inside.splitlines() if ln.startswith("PROJECT_FILE = "))
    assert str(tmp_path) not in line  # no absolute path of this machine: the folder runs from any checkout
    assert "os.path.dirname(os.path.abspath(__file__))" in line and "'../steadyhand.yaml'" in line
    # the expression, evaluated as if the conftest sat in a moved copy of the repository, finds that copy's file
    moved = tmp_path / "elsewhere" / "demo" / "e2e" / "conftest.py"
    expr = re.search(r"os\.environ\.get\('STEADYHAND_PROJECT', (.*)\)$", line).group(1)  # type: ignore[union-attr]
    import os
    assert os.path.normpath(eval(expr, {"os": os, "__file__": str(moved)})) == str(moved.parent.parent / "steadyhand.yaml")
    outside = conftest_source(project, tmp_path / "tests")
    assert f"'{project_dir.resolve() / 'steadyhand.yaml'}'" in outside  # a folder elsewhere: the absolute path
