"""Generated code never carries input as code (issue 21 item 3).

Arbitrary names, values and selectors - straight into a flow, and through both importers (``import-side``,
``import-codegen``) - are exported in both styles; the exported file must compile and its syntax tree may hold
only the calls the exporter writes itself (a whitelist of call names), and no ``import`` inside a function.
A step name with a newline once became a line of the exported test (``os.system``).
"""
from __future__ import annotations

import ast
import json
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from core.domain import Action, Assertion, ElementDescriptor, Flow, Step
from core.export import ExportError, export_flow
from core.export.emit import py_comment, py_doc, py_ident, py_str
from core.project import Project
from core.project.loader import ProjectError
from core.project.params import placeholders
from core.project.schema import ProjectModel
from core.record.codegen import import_codegen
from core.record.side import import_side

#: Every call name (the last part of a dotted name) the exporter writes in either style.
WRITTEN_CALLS = frozenset("""
goto get_by_test_id get_by_role get_by_label get_by_placeholder get_by_text locator click dblclick hover check uncheck
fill select_option press go_back wheel expect to_be_visible to_have_count to_have_url compile escape to_be_hidden
to_be_enabled to_be_disabled to_have_text to_contain_text to_have_value wait_for_timeout screenshot set_input_files
get fixture _secret sub upper RuntimeError new_context set_default_timeout set_default_navigation_timeout
sync_playwright launch close new_page set_options ArgumentParser add_argument parse_args print perf_counter type
rstrip run default_params exit main splitlines fail TemporaryFile Popen monotonic poll select readline search group
kill wait seek read strip send_signal communicate int wait_for_load_state chromium_path exists which
to_be_checked not_to_be_checked or_ filter first to_be_editable to_have_title browser_context_args expect_download
geteuid hasattr secret basename
""".split())

# any character a YAML flow file can hold (no lone surrogates), newlines, quotes and control characters included
TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)
HOSTILE = "x\nimport os; os.system('id')  # \"\"\"\r\x0c\u2028'''\\"


def _call_names(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            names.add(f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else type(f).__name__)
    return names


def _assert_safe(source: str) -> None:
    tree = compile(source, "<export>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    compile(tree, "<export>", "exec", dont_inherit=True)
    assert _call_names(tree) <= WRITTEN_CALLS, sorted(_call_names(tree) - WRITTEN_CALLS)
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef):
            assert not any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in ast.walk(fn))
    top = {type(n).__name__ for n in tree.body}
    assert top <= {"Expr", "ImportFrom", "Import", "Assign", "FunctionDef", "If"}, top


def _project(tmp: Path, name: str, flows: list[Flow], *, site: bool, params: dict[str, str] | None = None,
             secrets: tuple[str, ...] = ()) -> Project:
    settings = ProjectModel(name=name or "p", site="demo" if site else None,
                            base_url=None if site else "http://127.0.0.1:9/", params=params or {},
                            secrets={s: {} for s in secrets})
    return Project(root=tmp, settings=settings, flows={f.name: f for f in flows})


def _export_all(project: Project) -> int:
    done = 0
    for flow in project.flows.values():
        for style in ("pytest", "script"):
            try:
                source = export_flow(project, flow, style=style)  # type: ignore[arg-type]
            except ExportError:
                continue  # a clean refusal (e.g. a step with no Playwright form) is not code
            _assert_safe(source)
            done += 1
    return done


def _texts_of(flow: Flow) -> list[str]:
    out = [flow.start_url]
    for s in flow.steps:
        d = s.target
        out += [s.action.value, s.selector, d.test_id, d.name, d.label, d.placeholder, d.text, d.css_path]
        out += [t for a in s.assertions for t in (a.expected, a.selector)]
    return out


KINDS = ("click", "input", "select", "press", "navigate", "wait", "upload", "hover", "check", "assert", "scroll")


@st.composite
def steps(draw: st.DrawFn) -> Step:
    kind = draw(st.sampled_from(KINDS))
    target = ElementDescriptor(
        test_id=draw(st.one_of(st.just(""), TEXT)), role=draw(st.sampled_from(["", "button", "link", "textbox"])),
        name=draw(TEXT), label=draw(TEXT), placeholder=draw(TEXT), text=draw(TEXT), css_path=draw(TEXT),
        tag=draw(st.sampled_from(["", "input", "button"])), type=draw(st.sampled_from(["", "password", "text"])))
    kinds = st.sampled_from(["visible", "text_equals", "text_contains", "value", "text_appears", "text_absent",
                             "url_contains", "count"])
    assertions = tuple(Assertion(draw(kinds), draw(TEXT), draw(TEXT)) for _ in range(draw(st.integers(0, 2))))
    return Step(id=draw(TEXT) or "s", name=draw(TEXT), action=Action(kind=kind, value=draw(TEXT)),  # type: ignore[arg-type]
                selector=draw(TEXT), target=target, assertions=assertions)


def _bind_placeholders(flow: Flow) -> dict[str, str]:
    return {n: f"v{i}\n'\"" for i, t in enumerate(_texts_of(flow)) for n in placeholders(t)}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flow_name=TEXT, project_name=TEXT, description=TEXT, start=TEXT, body=st.lists(steps(), min_size=1, max_size=4),
       site=st.booleans(), secret=TEXT)
@example(flow_name=HOSTILE, project_name=HOSTILE, description=HOSTILE, start="/" + HOSTILE,
         body=[Step(id=HOSTILE, name=HOSTILE, action=Action("click"), selector=HOSTILE)], site=True, secret=HOSTILE)
def test_arbitrary_flows_export_to_code_with_only_the_exporters_calls(
        tmp_path: Path, flow_name: str, project_name: str, description: str, start: str, body: list[Step],
        site: bool, secret: str) -> None:
    flow = Flow(name=flow_name or "f", start_url=start, steps=tuple(body), description=description,
                secrets=(secret,) if secret else ())
    params = _bind_placeholders(flow)
    project = _project(tmp_path, project_name, [flow], site=site, params=params, secrets=(secret,) if secret else ())
    _export_all(project)


def test_a_step_name_with_a_newline_stays_a_comment(tmp_path: Path) -> None:
    step = Step(id="s1", name="Sign in\nimport os; os.system('touch /tmp/pwned')", action=Action("click"),
                selector="#go")
    flow = Flow(name="f", start_url="/", steps=(step,))
    source = export_flow(_project(tmp_path, "p", [flow], site=False), flow)
    _assert_safe(source)
    assert "# s1: Sign in import os; os.system('touch /tmp/pwned')" in source


def test_a_flow_name_cannot_close_the_docstring(tmp_path: Path) -> None:
    flow = Flow(name='x"""\nimport os\nos.system("id")\n"""', start_url="/",
                steps=(Step(id="s1", action=Action("click"), selector="#a"),))
    for style in ("pytest", "script"):
        _assert_safe(export_flow(_project(tmp_path, "p'\"\"\"", [flow], site=True), flow, style=style))  # type: ignore[arg-type]


SIDE_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=30)
SIDE_COMMANDS = st.sampled_from(["open", "click", "type", "select", "assertText", "assertTitle", "verifyText",
                                 "sendKeys", "assertElementPresent", "waitForElementVisible", "assertValue",
                                 "assertTextPresent", "mouseOver", "check"])
SIDE_LOCATOR = st.builds(lambda kind, text: f"{kind}={text}",
                         st.sampled_from(["id", "name", "css", "linkText", "xpath", "label", "partialLinkText"]),
                         SIDE_TEXT)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(test_name=SIDE_TEXT, commands=st.lists(st.tuples(SIDE_COMMANDS, st.one_of(SIDE_LOCATOR, SIDE_TEXT), SIDE_TEXT),
                                              min_size=1, max_size=5))
@example(test_name=HOSTILE, commands=[("click", "css=" + HOSTILE, HOSTILE), ("type", "id=" + HOSTILE, HOSTILE),
                                      ("assertText", "xpath=//a[@id='" + HOSTILE + "']", HOSTILE)])
def test_side_imports_export_to_code_with_only_the_exporters_calls(
        tmp_path: Path, test_name: str, commands: list[tuple[str, str, str]]) -> None:
    side = tmp_path / "t.side"
    side.write_text(json.dumps({"url": "http://127.0.0.1:9", "tests": [
        {"name": test_name, "commands": [{"command": c, "target": t, "value": v} for c, t, v in commands]}]}),
        encoding="utf-8")
    try:
        flows = [imp.flow for imp in import_side(side, base_url="http://127.0.0.1:9/")]
    except ProjectError as exc:
        # the importer refused the file with one clear error (a test with nothing left to import: only `open`,
        # only commands it does not import) - nothing to export
        assert "t.side" in str(exc), exc  # the one error names the file
        return
    params = {k: v for f in flows for k, v in _bind_placeholders(f).items()}
    _export_all(_project(tmp_path, test_name, flows, site=False, params=params))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(calls=st.lists(st.tuples(st.sampled_from(["click", "fill", "press", "check", "hover", "select_option"]),
                                st.sampled_from(["locator", "get_by_role", "get_by_text", "get_by_label",
                                                 "get_by_placeholder", "get_by_test_id"]), SIDE_TEXT, SIDE_TEXT),
                      min_size=1, max_size=5), url=SIDE_TEXT)
@example(calls=[("fill", "get_by_label", HOSTILE, HOSTILE), ("click", "get_by_text", HOSTILE, "")], url=HOSTILE)
def test_codegen_imports_export_to_code_with_only_the_exporters_calls(
        tmp_path: Path, calls: list[tuple[str, str, str, str]], url: str) -> None:
    lines = ["from playwright.sync_api import Page, expect", "", "def test_it(page: Page) -> None:",
             f"    page.goto({('http://127.0.0.1:9/' + url)!r})"]
    for action, how, target, value in calls:
        loc = f"page.{how}('button', name={target!r})" if how == "get_by_role" else f"page.{how}({target!r})"
        arg = "" if action in ("click", "check", "hover") else repr(value)
        lines.append(f"    {loc}.{action}({arg})")
    try:
        result = import_codegen("\n".join(lines) + "\n", flow_name="f", base_url="http://127.0.0.1:9/")
    except ValueError:
        return  # the importer refused the script with one clear error (ProjectError is a ValueError too)
    flow = result.flow
    _export_all(_project(tmp_path, "p", [flow], site=False, params=_bind_placeholders(flow)))


@given(TEXT)
def test_the_emitters_keep_every_text_a_literal_or_a_comment(text: str) -> None:
    assert eval(py_str(text)) == text  # noqa: S307 - the literal is what is being tested
    assert "\n" not in py_comment(text) and py_comment(text).isprintable()
    tree = ast.parse(f'"""{py_doc(text)}"""')
    assert len(tree.body) == 1 and isinstance(tree.body[0].value, ast.Constant)  # type: ignore[attr-defined]
    assert py_ident(text).isidentifier() and py_ident(text).isascii()
    assert py_ident("os") == "os" and py_ident("print") == "v_print" and py_ident("match") == "v_match"
