"""StepBuilder, the recording spool and crops: pure logic, no browser."""
from __future__ import annotations

import io

import pytest
from PIL import Image

from core.act.space import needs_target
from core.domain import Anchor, BBox, ElementDescriptor, Flow, StepEvidence
from core.project import load_flow
from core.project.loader import flow_to_mapping
from core.project.params import bind
from core.record.recorder import RecordingSpool, crop_png
from core.record.save import save_recording
from core.record.steps import (
    ASSERTION_LABELS, SecretPolicy, StepBuilder, assertion_step, expect_from_observed, relative_url, slug, step_name,
    suggested_assertions,
)

SECRET_VALUE = "s3cret-value"
FIELD = ElementDescriptor(tag="input", role="textbox", name="User name", label="User name", css_path="input#u",
                          bbox=BBox(10, 20, 200, 30))
PASSWORD = ElementDescriptor(tag="input", role="textbox", name="Password", label="Password", type="password",
                             css_path="input#p")
BUTTON = ElementDescriptor(tag="button", role="button", name="Sign in", text="Sign in", css_path="button#go")


def _builder(**declared: str) -> StepBuilder:
    return StepBuilder(base_url="http://127.0.0.1:8000", secrets=SecretPolicy(declared))


def test_slug_and_relative_url():
    assert slug("User name") == "user_name"
    assert slug("  ") == "value"
    assert slug("2nd line") == "p_2nd_line"
    assert relative_url("http://127.0.0.1:8000/requests/new", "http://127.0.0.1:8000/") == "/requests/new"
    assert relative_url("http://127.0.0.1:8000", "http://127.0.0.1:8000") == "/"
    assert relative_url("https://example.org/x", "http://127.0.0.1:8000") == "https://example.org/x"
    assert relative_url("http://127.0.0.1:8000?q=1", "http://127.0.0.1:8000") == "/?q=1"
    assert relative_url("http://127.0.0.1:80001/x", "http://127.0.0.1:8000") == "http://127.0.0.1:80001/x"
    assert slug("Prénom") == "prenom" and slug("1st", digit_prefix="secret") == "secret_1st"


@pytest.mark.parametrize("kind,observed,reliable,expected", [
    ("click", ("navigation", "content"), True, "navigation"),
    ("click", ("elements", "overlay_open"), True, "overlay_open"),
    ("dblclick", ("overlay_close",), True, "overlay_close"),
    ("click", ("focus",), True, "none"),
    ("click", ("content",), True, "auto"),
    ("click", ("navigation",), False, "auto"),
    ("input", ("value", "navigation"), True, "auto"),
    ("press", ("navigation",), True, "navigation"),
])
def test_expect_from_observed(kind, observed, reliable, expected):
    assert expect_from_observed(kind, observed, reliable=reliable) == expected


def test_password_becomes_the_declared_secret_and_its_value_is_never_used():
    b = _builder(password=SECRET_VALUE)
    step, removed = b.build({"kind": "input", "is_password": True, "value": ""}, PASSWORD, evidence=None)
    assert step.action.value == "{password}" and removed == []
    assert b.flow_secrets == []  # declared by the project already


def test_password_without_declared_secret_becomes_a_flow_secret():
    b = _builder(token="x", api="y")
    step, _ = b.build({"kind": "input", "is_password": True}, PASSWORD, evidence=None)
    assert step.action.value == "{password}"
    assert b.flow_secrets == ["password"]


def test_typed_value_equal_to_a_declared_secret_is_replaced():
    b = _builder(api_key=SECRET_VALUE)
    step, _ = b.build({"kind": "input", "value": SECRET_VALUE}, FIELD, evidence=None)
    assert step.action.value == "{api_key}"
    text = str(flow_to_mapping(Flow("f", "/", (step,))))
    assert SECRET_VALUE not in text


def test_a_declared_secret_inside_typed_text_is_replaced_too():
    b = _builder(api_key=SECRET_VALUE)
    step, _ = b.build({"kind": "input", "value": f"key={SECRET_VALUE};"}, FIELD, evidence=None)
    assert step.action.value == "key={api_key};"


def test_a_value_equal_to_a_project_parameter_becomes_it():
    b = StepBuilder(base_url="", secrets=SecretPolicy({}), known_params={"user": "alice", "n": "1"})
    assert b.build({"kind": "input", "value": "alice"}, FIELD, evidence=None)[0].action.value == "{user}"
    assert b.build({"kind": "input", "value": "1"}, BUTTON, evidence=None)[0].action.value == "1"  # too short to tell


def test_two_clicks_and_a_dblclick_merge_into_one_step_keeping_the_first_before_state():
    b = _builder()
    ev1 = StepEvidence("before-1", "after-1", ())
    s1, _ = b.build({"kind": "click"}, BUTTON, evidence=ev1, t=1.0)
    s2, _ = b.build({"kind": "click"}, BUTTON, evidence=StepEvidence("after-1", "after-2", ()), t=1.1)
    assert (s1.id, s2.id) == ("s1", "s2")
    dbl, removed = b.build({"kind": "dblclick"}, BUTTON, evidence=StepEvidence("after-2", "after-3", ()), t=1.2)
    assert removed == [1, 0]
    assert dbl.id == "s1" and dbl.action.kind == "dblclick"
    assert dbl.recorded is not None and dbl.recorded.state_before == "before-1"
    assert b.next_id() == "s2"


def test_clicks_far_apart_or_on_other_elements_do_not_merge():
    b = _builder()
    b.build({"kind": "click"}, FIELD, evidence=None, t=0.0)
    b.build({"kind": "click"}, BUTTON, evidence=None, t=5.0)
    _, removed = b.build({"kind": "dblclick"}, BUTTON, evidence=None, t=5.1)
    assert removed == [1]  # only the click on the same element, within a second
    assert b.count == 2


def test_typing_resumed_in_the_same_field_is_one_step():
    b = _builder()
    b.build({"kind": "input", "value": "ali"}, FIELD, evidence=StepEvidence("b0", "b1", ("value",)))
    step, removed = b.build({"kind": "input", "value": "alice"}, FIELD, evidence=StepEvidence("b1", "b2", ("value",)))
    assert removed == [0]
    assert step.id == "s1" and step.action.value == "alice"
    assert step.recorded.state_before == "b0"


def test_the_click_that_focused_a_field_is_taken_into_the_typing_that_follows():
    b = _builder()
    b.build({"kind": "click", "focus": True}, FIELD, evidence=StepEvidence("b0", "b1", ("focus",)))
    step, removed = b.build({"kind": "input", "value": "alice"}, FIELD, evidence=StepEvidence("b1", "b2", ("value",)))
    assert removed == [0] and step.id == "s1" and step.recorded.state_before == "b0"
    # a focus click with no typing after it stays a step; so does a plain click on the same element
    b = _builder()
    b.build({"kind": "click", "focus": True}, FIELD, evidence=None)
    b.build({"kind": "click"}, BUTTON, evidence=None)
    step, removed = b.build({"kind": "input", "value": "bob"}, FIELD, evidence=None)
    assert removed == [] and step.id == "s3"
    b = _builder()
    b.build({"kind": "click"}, FIELD, evidence=None)  # not a focus click (a custom widget's click)
    assert b.build({"kind": "input", "value": "x"}, FIELD, evidence=None)[1] == []


def test_a_scrolled_box_is_named_by_its_selector_and_a_scroll_to_the_end_covers_the_whole_extent():
    b = _builder()
    pane = ElementDescriptor(tag="section", css_path="section#pane", bbox=BBox(20, 100, 500, 300))
    s, _ = b.build({"kind": "scroll", "dx": 0, "dy": 929}, pane, evidence=None)
    assert (s.selector, s.expect, s.action.distance) == ("section#pane", "none", 929) and needs_target(s)
    inner = ElementDescriptor(tag="div", css_path="div.list", shadow="x-inbox")
    s, _ = b.build({"kind": "scroll", "dy": -40, "end": True, "extent": 1800}, inner, evidence=None)
    assert (s.selector, s.action.direction, s.action.distance) == ("x-inbox >> div.list", "up", 1800)
    s, _ = b.build({"kind": "scroll", "dy": 500}, ElementDescriptor(), evidence=None)  # the window
    assert s.selector == "" and s.expect == "auto" and not needs_target(s)


def test_scroll_direction_distance_and_flags():
    b = _builder()
    s, _ = b.build({"kind": "scroll", "dx": 0, "dy": -320.4}, ElementDescriptor(), evidence=None)
    assert (s.action.direction, s.action.distance, s.read_only) == ("up", 320, True)
    s, _ = b.build({"kind": "click"}, BUTTON, evidence=None, wrote=True)
    assert s.reversible is False and s.read_only is False


def test_upload_becomes_a_parameter_with_the_file_name_as_default():
    b = _builder()
    up = ElementDescriptor(tag="input", role="button", name="Attachment", label="Attachment", type="file")
    s, _ = b.build({"kind": "upload", "files": ["note.pdf"]}, up, evidence=None)
    assert s.action.value == "{attachment}" and b.params == {"attachment": "note.pdf"}


def test_step_names():
    assert step_name("click", BUTTON) == "Click Sign in"
    assert step_name("input", FIELD) == "Fill User name"
    assert step_name("select", FIELD, "Sick leave") == "Choose Sick leave in User name"
    assert step_name("press", ElementDescriptor(), "Escape") == "Press Escape"
    anchored = ElementDescriptor(tag="div", anchor=Anchor("Totals", "heading", 0, 40))
    assert step_name("click", anchored) == "Click Totals"


def test_assertion_steps():
    s = assertion_step("s4", "text_equals", "Saved", BUTTON)
    assert s.action.kind == "assert" and needs_target(s) and s.target == BUTTON and s.read_only
    page = assertion_step("s5", "text_appears", "Request submitted", BUTTON)
    assert not needs_target(page) and page.assertions[0].kind == "text_appears"
    count = assertion_step("s6", "count", "4", BUTTON, count_selector="table > tbody > tr")
    assert count.assertions[0].selector == "table > tbody > tr" and not needs_target(count)
    with pytest.raises(ValueError, match="unknown assertion kind"):
        assertion_step("s7", "shiny", "", BUTTON)


def test_checks_of_an_element_the_observer_does_not_list_go_through_its_selector():
    status = ElementDescriptor(tag="p", role="status", name="Sent: hello", text="Sent: hello", css_path="p#status")
    s = assertion_step("s3", "text_equals", "Sent: hello", status, selector="#status")
    assert s.target.is_empty and not needs_target(s)
    assert (s.assertions[0].kind, s.assertions[0].selector) == ("text_equals", "#status")
    assert s.name == "Check that the status reads 'Sent: hello'"
    gone = assertion_step("s4", "hidden", "", BUTTON, selector="#go")  # a control that must be gone
    assert gone.target.is_empty and gone.assertions[0].selector == "#go" and gone.name == "Check that Sign in is hidden"
    kept = assertion_step("s5", "enabled", "", BUTTON)  # a control: found by its meaning
    assert kept.target == BUTTON and kept.assertions[0].selector == ""


def test_suggested_checks_of_a_picked_element():
    assert suggested_assertions("button", "Save", interactive=True) == (
        "visible", "enabled", "disabled", "text_equals", "hidden")
    assert suggested_assertions("status", "Saved", interactive=False, count=3) == (
        "text_equals", "text_contains", "visible", "hidden", "count")
    assert suggested_assertions("", "", interactive=False) == ("visible", "hidden")
    for kind in ("text_equals", "hidden", "text_absent", "enabled", "value", "count", "text_appears"):
        assert ASSERTION_LABELS[kind] and "_" not in ASSERTION_LABELS[kind]


def _png(w: int, h: int, colour=(200, 10, 10)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (w, h), colour).save(out, format="PNG")
    return out.getvalue()


def test_crop_uses_device_pixels_and_clips_to_the_screenshot():
    png = _png(200, 100)
    crop = crop_png(png, BBox(10, 10, 20, 10), 2.0, margin=0)
    with Image.open(io.BytesIO(crop)) as im:
        assert im.size == (40, 20)
    edge = crop_png(png, BBox(90, 40, 50, 50), 2.0, margin=4)
    with Image.open(io.BytesIO(edge)) as im:
        assert im.size == (200 - 172, 100 - 72)
    assert crop_png(png, BBox(500, 500, 10, 10), 1.0) == b""
    assert crop_png(b"", BBox(0, 0, 10, 10), 1.0) == b""


def test_spool_survives_removals_and_round_trips_steps(tmp_path):
    spool = RecordingSpool(tmp_path / "rec")
    b = _builder()
    s1, _ = b.build({"kind": "click"}, BUTTON, evidence=StepEvidence("a", "b", ("navigation",)), t=0)
    spool.add(s1, _png(4, 4))
    s2, _ = b.build({"kind": "input", "value": "x"}, FIELD, evidence=None)
    spool.add(s2, b"")
    spool.remove(1)
    s2b, _ = b.build({"kind": "input", "value": "xy"}, FIELD, evidence=None)
    spool.add(s2b, _png(3, 3))
    steps, crops = spool.read()
    assert [(s.id, s.action.value) for s in steps] == [("s1", ""), ("s2", "xy")]
    assert steps[0].recorded == StepEvidence("a", "b", ("navigation",))
    assert set(crops) == {"s1", "s2"}
    spool.close(delete=True)
    assert not (tmp_path / "rec").exists()


def test_save_recording_writes_flow_and_crops_and_drops_stale_crops(tmp_path):
    b = _builder()
    s1, _ = b.build({"kind": "click"}, BUTTON, evidence=None)
    s2, _ = b.build({"kind": "input", "value": "alice"}, FIELD, evidence=None)
    flow = Flow("login", "/login", (s1, s2))
    path = save_recording(tmp_path, flow, {"s1": _png(5, 5), "s2": _png(6, 6)})
    assert path == tmp_path / "flows" / "login.yaml"
    loaded = load_flow(path)
    assert [s.target.crop for s in loaded.steps] == ["login.crops/s1.png", "login.crops/s2.png"]
    # the user deleted step s2 in the editor: its crop goes too
    save_recording(tmp_path, Flow("login", "/login", (loaded.steps[0],)), {})
    assert sorted(p.name for p in (tmp_path / "flows" / "login.crops").iterdir()) == ["s1.png"]
    assert load_flow(path).steps[0].target.crop == "login.crops/s1.png"


def test_page_text_and_typed_text_with_braces_stay_literal_and_secrets_inside_still_become_placeholders():
    b = _builder(token=SECRET_VALUE)
    braced = ElementDescriptor(tag="button", role="button", name="{x} Save", text="{x} Save", css_path="button")
    click, _ = b.build({"kind": "click"}, braced, evidence=None)
    assert click.target.name == "{{x}} Save" and click.name == "Click {x} Save"
    assert bind(click.target.name, {}) == "{x} Save"
    typed, _ = b.build({"kind": "input", "value": f"{{id}}={SECRET_VALUE}"}, FIELD, evidence=None)
    assert typed.action.value == "{{id}}={token}"
    assert bind(typed.action.value, {"token": "t"}) == "{id}=t"
