"""Project and flow files: round trips, stable key order, one clear error per bad file."""
from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path

import pytest
import yaml

from core.domain import Action, Assertion, BBox, ElementDescriptor, EpisodeSpec, Flow, Step
from core.project import (
    SCHEMA_VERSION, ProjectError, flow_to_mapping, load_flow, load_project, save_flow,
)

VALID_FLOW = """\
schema_version: 1
name: login_lockout
description: Three failed logins lock the account (P11)
start_url: /login
params:
  user: alice
secrets:
- password
steps:
- id: s1
  name: Type the user name
  action: input
  value: '{user}'
  selector: '#username'
  target:
    tag: input
    role: textbox
    name: User name
    label: User name
    id: username
    classes:
    - form-control
    bbox: [10.0, 20.5, 200.0, 30.0]
    viewport: [1280, 800]
    device_pixel_ratio: 1.0
    neighbours:
    - Password
    container: Sign in
- id: s2
  action: click
  target:
    tag: button
    role: button
    name: Sign in
    text: Sign in
  assertions:
  - kind: text_appears
    expected: Account locked
  - kind: value
    expected: alice
    selector: '#username'
  reversible: false
- id: s3
  action: scroll
  direction: up
  distance: 250
  timeout_ms: 2000
  read_only: true
- id: s4
  action: press
  value: Escape
  selector: '#dialog'
  expect: overlay_close
  optional: true
"""

STEP_HEAD = """\
schema_version: 1
name: broken
start_url: /
steps:
- id: s1
  action: click
  selector: '#ok'
"""


def write(tmp_path: Path, text: str, name: str = "flow.yaml") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p


def load_error(path: Path) -> ProjectError:
    with pytest.raises(ProjectError) as info:
        load_flow(path)
    return info.value


def without_source(flow: Flow) -> Flow:
    return dataclasses.replace(flow, source="")


# --- valid flows ------------------------------------------------------------------------


def test_valid_flow_loads_into_domain_objects(tmp_path: Path) -> None:
    flow = load_flow(write(tmp_path, VALID_FLOW))
    assert flow.name == "login_lockout"
    assert flow.start_url == "/login"
    assert flow.params == {"user": "alice"}
    assert flow.secrets == ("password",)
    assert flow.source == str(tmp_path / "flow.yaml")
    s1, s2, s3, s4 = flow.steps
    assert s1.action == Action("input", "{user}")
    assert s1.selector == "#username"
    assert s1.target.bbox == BBox(10.0, 20.5, 200.0, 30.0)
    assert s1.target.viewport == (1280, 800)
    assert s1.target.classes == ("form-control",)
    assert s2.assertions == (Assertion("text_appears", "Account locked"), Assertion("value", "alice", "#username"))
    assert s2.reversible is False and s1.reversible is True
    assert s3.action == Action("scroll", direction="up", distance=250, timeout_ms=2000)
    assert s3.read_only is True
    assert s4.expect == "overlay_close" and s4.optional is True


def test_load_save_load_round_trips(tmp_path: Path) -> None:
    first = load_flow(write(tmp_path, VALID_FLOW))
    saved = save_flow(first, tmp_path / "flows" / "copy.yaml")
    second = load_flow(saved)
    assert without_source(second) == without_source(first)
    # saving is a fixed point: the same text again
    again = save_flow(second, tmp_path / "again.yaml")
    assert again.read_text(encoding="utf-8") == saved.read_text(encoding="utf-8")


def test_saved_file_is_the_authored_file_when_already_canonical(tmp_path: Path) -> None:
    src = write(tmp_path, VALID_FLOW)
    out = save_flow(load_flow(src), tmp_path / "out.yaml")
    assert out.read_text(encoding="utf-8") == VALID_FLOW


def test_flow_built_in_code_round_trips(tmp_path: Path) -> None:
    flow = Flow(
        name="episode", start_url="/miniwob/login-user.html",
        steps=(
            Step(id="a", action=Action("input", "{username}"),
                 target=ElementDescriptor(tag="input", role="textbox", id="username")),
            Step(id="b", action=Action("click"), selector="text=Login", read_only=False),
            Step(id="c", action=Action("wait", "Done"), assertions=(Assertion("url_contains", "done"),)),
        ),
        params={"username": "bob"}, episode=EpisodeSpec("login-user", r"Enter (?P<username>\w+)"),
    )
    assert without_source(load_flow(save_flow(flow, tmp_path / "e.yaml"))) == flow


def test_saved_key_order_is_stable_and_readable(tmp_path: Path) -> None:
    flow = load_flow(write(tmp_path, VALID_FLOW))
    data = yaml.safe_load(save_flow(flow, tmp_path / "o.yaml").read_text(encoding="utf-8"))
    assert list(data) == ["schema_version", "name", "description", "start_url", "params", "secrets", "steps"]
    assert list(data["steps"][0]) == ["id", "name", "action", "value", "selector", "target"]
    assert list(data["steps"][1]) == ["id", "action", "target", "assertions", "reversible"]
    assert list(data["steps"][2]) == ["id", "action", "direction", "distance", "timeout_ms", "read_only"]
    # descriptor keys follow the ElementDescriptor field order whatever the input order
    assert list(data["steps"][0]["target"]) == [
        "tag", "role", "name", "label", "id", "classes", "bbox", "viewport", "device_pixel_ratio", "neighbours",
        "container"]
    assert data["schema_version"] == SCHEMA_VERSION
    assert flow_to_mapping(flow) == data


def test_key_order_does_not_depend_on_the_authored_order(tmp_path: Path) -> None:
    shuffled = """\
    steps:
    - selector: '#go'
      action: click
      id: s1
      target: {text: Go, role: button, tag: button}
    start_url: /
    name: shuffled
    """
    out = save_flow(load_flow(write(tmp_path, shuffled)), tmp_path / "out.yaml").read_text(encoding="utf-8")
    assert out == (
        "schema_version: 1\nname: shuffled\nstart_url: /\nsteps:\n- id: s1\n  action: click\n"
        "  selector: '#go'\n  target:\n    tag: button\n    role: button\n    text: Go\n"
    )


def test_save_leaves_no_temporary_files(tmp_path: Path) -> None:
    save_flow(load_flow(write(tmp_path, VALID_FLOW)), tmp_path / "flows" / "f.yaml")
    assert sorted(p.name for p in (tmp_path / "flows").iterdir()) == ["f.yaml"]


# --- one clear error per malformed flow -----------------------------------------------------


def test_unknown_action_names_file_step_and_field(tmp_path: Path) -> None:
    p = write(tmp_path, STEP_HEAD + "- id: s2\n  action: klick\n  selector: '#b'\n")
    err = load_error(p)
    msg = str(err)
    assert str(p) in msg
    assert "step 's2' (#2)" in msg
    assert "field 'action'" in msg
    assert "unknown action 'klick'" in msg and "click" in msg.split("expected", 1)[1]
    assert err.path == str(p)


def test_missing_selector_and_target(tmp_path: Path) -> None:
    p = write(tmp_path, STEP_HEAD + "- id: s2\n  name: Press it\n  action: click\n")
    msg = str(load_error(p))
    assert str(p) in msg and "step 's2' (#2)" in msg
    assert "'selector'" in msg and "'target'" in msg


def test_targetless_actions_need_no_selector(tmp_path: Path) -> None:
    p = write(tmp_path, STEP_HEAD + "- id: s2\n  action: back\n- id: s3\n  action: wait\n")
    assert [s.action.kind for s in load_flow(p).steps] == ["click", "back", "wait"]


def test_bad_yaml_gives_line_and_column(tmp_path: Path) -> None:
    # line 9 is indented one space less than the mapping it belongs to
    p = write(tmp_path, STEP_HEAD + "- id: s2\n  action: click\n selector: '#b'\n")
    err = load_error(p)
    assert str(p) in str(err)
    assert err.location == "line 10, column 2"
    assert "not valid YAML" in str(err)


def test_tab_indentation_is_reported_with_its_position(tmp_path: Path) -> None:
    err = load_error(write(tmp_path, "name: x\n\tsteps: []\n"))
    assert err.location == "line 2, column 1"
    assert "'\\t'" in str(err) or "a tab character" in str(err)  # PyYAML's words, or libyaml's


def test_unknown_field_is_called_a_typo(tmp_path: Path) -> None:
    p = write(tmp_path, STEP_HEAD + "- id: s2\n  action: click\n  selecter: '#b'\n")
    msg = str(load_error(p))
    assert "step 's2' (#2), field 'selecter'" in msg
    assert "unknown field" in msg and "spelling" in msg


def test_unknown_top_level_field(tmp_path: Path) -> None:
    msg = str(load_error(write(tmp_path, STEP_HEAD + "stpes: []\n")))
    assert "field 'stpes'" in msg and "unknown field" in msg


@pytest.mark.parametrize(("line", "field"), [
    ("  reversible: maybe\n", "reversible"),
    ("  timeout_ms: soon\n", "timeout_ms"),
    ("  assertions: {kind: visible}\n", "assertions"),
])
def test_wrong_type_names_the_field(tmp_path: Path, line: str, field: str) -> None:
    p = write(tmp_path, STEP_HEAD + "- id: s2\n  action: click\n  selector: '#b'\n" + line)
    msg = str(load_error(p))
    assert str(p) in msg and f"step 's2' (#2), field '{field}'" in msg


def test_nested_assertion_field_is_named(tmp_path: Path) -> None:
    p = write(tmp_path, STEP_HEAD + "- id: s2\n  action: assert\n  assertions: [{kind: text_apears, expected: x}]\n")
    msg = str(load_error(p))
    assert "step 's2' (#2), field 'assertions.0.kind'" in msg
    assert "text_appears" in msg


def test_duplicate_step_id(tmp_path: Path) -> None:
    p = write(tmp_path, STEP_HEAD + "- id: s2\n  action: back\n- id: s1\n  action: back\n")
    msg = str(load_error(p))
    assert "step 's1' (#3), field 'id'" in msg
    assert "duplicate step id 's1'" in msg


def test_newer_schema_version_asks_for_an_upgrade(tmp_path: Path) -> None:
    p = write(tmp_path, STEP_HEAD.replace("schema_version: 1", f"schema_version: {SCHEMA_VERSION + 1}"))
    err = load_error(p)
    assert err.location == "field 'schema_version'"
    assert f"schema_version {SCHEMA_VERSION + 1} is newer" in str(err) and "upgrade" in str(err)


def test_action_that_needs_a_value(tmp_path: Path) -> None:
    msg = str(load_error(write(tmp_path, STEP_HEAD + "- id: go\n  action: navigate\n")))
    assert "step 'go' (#2), field 'value'" in msg and "'navigate' needs a 'value'" in msg


def test_bad_descriptor_in_target(tmp_path: Path) -> None:
    p = write(tmp_path, STEP_HEAD + "- id: s2\n  action: click\n  target: {name: Go, bbox: [1, 2]}\n")
    msg = str(load_error(p))
    assert "step 's2' (#2), field 'target'" in msg and "invalid element descriptor" in msg


@pytest.mark.parametrize("text", ["", "- a\n- b\n", "just text\n"])
def test_top_level_must_be_a_mapping(tmp_path: Path, text: str) -> None:
    msg = str(load_error(write(tmp_path, text)))
    assert "expected a mapping" in msg


def test_many_problems_are_reported_as_one_error_with_a_count(tmp_path: Path) -> None:
    p = write(tmp_path, STEP_HEAD + "- id: s2\n  action: klick\n  selecter: x\n  reversible: maybe\n")
    msg = str(load_error(p))
    assert msg.count(str(p)) == 1
    assert "(and 2 more problems)" in msg


def test_missing_file(tmp_path: Path) -> None:
    msg = str(load_error(tmp_path / "nope.yaml"))
    assert "nope.yaml" in msg and "file not found" in msg


# --- projects ------------------------------------------------------------------------------


def make_project(tmp_path: Path, settings: str, flows: dict[str, str] | None = None) -> Path:
    root = tmp_path / "proj"
    (root / "flows").mkdir(parents=True)
    (root / "steadyhand.yaml").write_text(textwrap.dedent(settings), encoding="utf-8")
    for name, text in (flows or {}).items():
        (root / "flows" / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def project_error(root: Path) -> ProjectError:
    with pytest.raises(ProjectError) as info:
        load_project(root)
    return info.value


def test_project_loads_settings_and_flows_in_file_order(tmp_path: Path) -> None:
    root = make_project(tmp_path, "name: demo\nsite: demo\nparams: {user: alice}\n",
                        {"b.yaml": "name: second\nsteps: []\n", "a.yaml": VALID_FLOW})
    project = load_project(root)
    assert project.name == "demo"
    assert project.settings.site == "demo"
    assert project.settings.breaker.threshold == 3
    assert list(project.flows) == ["login_lockout", "second"]
    assert project.data_dir == root.resolve() / ".steadyhand"
    assert (project.data_dir / ".gitignore").read_text(encoding="utf-8") == "*\n"


def test_unknown_site(tmp_path: Path) -> None:
    err = project_error(make_project(tmp_path, "name: p\nsite: demoo\n"))
    assert err.path.endswith("steadyhand.yaml")
    assert err.location == "field 'site'"
    assert "'demo'" in str(err) and "'miniwob'" in str(err)


def test_neither_site_nor_base_url(tmp_path: Path) -> None:
    err = project_error(make_project(tmp_path, "name: p\n"))
    assert err.path.endswith("steadyhand.yaml")
    assert "'site'" in str(err) and "'base_url'" in str(err)


def test_project_settings_typo_and_nested_range(tmp_path: Path) -> None:
    err = project_error(make_project(tmp_path, "name: p\nbase_url: http://x\nbrowzer: {}\n"))
    assert err.location == "field 'browzer'" and "unknown field" in str(err)
    err = project_error(make_project(tmp_path / "2", "name: p\nbase_url: http://x\nbrowser: {viewport: {width: 10}}\n"))
    assert err.location == "field 'browser.viewport.width'"


def test_project_newer_schema_version(tmp_path: Path) -> None:
    err = project_error(make_project(tmp_path, f"schema_version: {SCHEMA_VERSION + 1}\nname: p\nsite: demo\n"))
    assert "newer" in str(err) and err.location == "field 'schema_version'"


def test_bad_flow_in_project_names_the_flow_file(tmp_path: Path) -> None:
    root = make_project(tmp_path, "name: p\nsite: demo\n", {"bad.yaml": STEP_HEAD + "- id: s2\n  action: klick\n"})
    err = project_error(root)
    assert err.path.endswith("bad.yaml") and "step 's2' (#2), field 'action'" in str(err)


def test_two_files_with_the_same_flow_name(tmp_path: Path) -> None:
    root = make_project(tmp_path, "name: p\nsite: demo\n",
                        {"a.yaml": "name: same\nsteps: []\n", "b.yaml": "name: same\nsteps: []\n"})
    err = project_error(root)
    assert err.path.endswith("b.yaml") and "'same' is already used" in str(err)


def test_missing_project_folder_and_settings(tmp_path: Path) -> None:
    assert "project folder not found" in str(project_error(tmp_path / "absent"))
    (tmp_path / "empty").mkdir()
    err = project_error(tmp_path / "empty")
    assert err.path.endswith("steadyhand.yaml") and "file not found" in str(err)


def test_a_misspelt_model_key_is_named_before_the_field_it_leaves_missing(tmp_path: Path) -> None:
    err = project_error(make_project(tmp_path, "name: p\nbase_url: http://x\nmodel:\n  name: m\n  endpoint: http://y\n"))
    assert err.location == "field 'model.endpoint'"
    assert "unknown field" in str(err) and "'base_url' is missing" in str(err)
