"""Pure logic of the pytest / script export: which locator codegen would choose, parameters, secrets."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from core.domain import Action, Assertion, ElementDescriptor, Step
from core.export import ExportError, choose_locator, export_flow
from core.project import load_project

ROOT = Path(__file__).resolve().parents[3]


def _step(**target: object) -> Step:
    return Step(id="s1", action=Action(kind="click"), target=ElementDescriptor(**target))  # type: ignore[arg-type]


def test_codegen_order_test_id_role_label_placeholder_text_css() -> None:
    full = dict(test_id="save", role="button", name="Save", label="Save it", placeholder="p", text="Save",
                css_path="button#save")
    assert choose_locator(_step(**full)).code == "page.get_by_test_id('save')"
    full.pop("test_id")
    assert choose_locator(_step(**full)).code == "page.get_by_role('button', name='Save', exact=True)"
    full.pop("name")
    assert choose_locator(_step(**full)).strategy == "label"
    full.pop("label")
    assert choose_locator(_step(**full)).code == "page.get_by_placeholder('p', exact=True)"
    full.pop("placeholder")
    assert choose_locator(_step(**full)).code == "page.get_by_text('Save', exact=True)"
    full.pop("text")
    assert choose_locator(_step(**full)).code == "page.locator('button#save')"


def test_password_inputs_have_no_role_and_go_by_label() -> None:
    c = choose_locator(_step(tag="input", type="password", role="textbox", name="Password", label="Password"))
    assert c.strategy == "label" and c.code == "page.get_by_label('Password', exact=True)"


def test_a_name_in_capitals_matches_case_insensitively_as_a_whole() -> None:
    c = choose_locator(_step(role="button", name="EMPLOYEE"))
    assert c.code == "page.get_by_role('button', name=re.compile('^employee$', re.IGNORECASE))"


def test_unknown_roles_fall_through_and_selector_only_steps_keep_their_selector() -> None:
    assert choose_locator(_step(role="generic", name="x", text="Hello")).strategy == "text"
    st = Step(id="s1", action=Action(kind="click"), selector="role=dialog >> role=button[name='OK']")
    assert choose_locator(st).code == 'page.locator("role=dialog >> role=button[name=\'OK\']")'
    assert choose_locator(Step(id="s1", action=Action(kind="press", value="Enter"))) is None


def test_placeholders_become_variables_and_escaped_braces_stay_text() -> None:
    c = choose_locator(_step(role="link", name="Open {ref} {{raw}}"))
    assert c.code == "page.get_by_role('link', name='Open ' + ref + ' {raw}', exact=True)"


@pytest.mark.parametrize("style", ["pytest", "script"])
def test_demo_flows_export_to_valid_python_without_the_secret(style: str) -> None:
    project = load_project(ROOT / "projects" / "demo")
    secret = "demo-" + "pass"
    for flow in project.flows.values():
        src = export_flow(project, flow, style=style)
        ast.parse(src)
        assert secret not in src
        assert "executable_path=CHROMIUM" in src and "/usr/bin/chromium" in src
        if "{password}" in str([s.action.value for s in flow.steps]):
            assert "_secret('password')" in src and "STEADYHAND_SECRET_PASSWORD" in src
        if style == "pytest":
            assert f"def test_{flow.name}(page: Page, base_url: str" in src
        else:
            assert "def run(page: Page, base_url: str, params: dict[str, str]) -> None:" in src


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
