"""Expected deltas and post-verification (S5): progress is only the expected kind of change."""
from __future__ import annotations

import pytest

from core.act.expect import CHANGE_WORDS, NOISE_DELTAS, change_words, expected_delta, judge, observed_deltas
from core.domain import Action, Observation, Step
from core.perception.fake import FakeDriver, FakePage, change_text, open_modal, set_page


def step(kind: str, value: str = "", *, expect: str = "auto") -> Step:
    return Step(id="s", action=Action(kind, value), expect=expect)  # type: ignore[arg-type]


# --- expected_delta -------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "value", "expected"), [
    ("input", "alice", "value"),
    ("select", "Red", "value"),
    ("check", "", "value"),
    ("uncheck", "", "value"),
    ("upload", "/tmp/a.txt", "value"),
    ("navigate", "/home", "navigation"),
    ("back", "", "navigation"),
    ("scroll", "", "scroll"),
    ("press", "Tab", "focus"),
    ("press", "Escape", "overlay_close"),
    ("press", "Enter", "any"),
    ("hover", "", "none"),
    ("wait", "Done", "none"),
    ("assert", "", "none"),
    ("screenshot", "", "none"),
    ("click", "", "any"),
    ("dblclick", "", "any"),
])
def test_expected_delta_per_action_kind(kind: str, value: str, expected: str) -> None:
    assert expected_delta(step(kind, value)) == expected


def test_every_action_kind_has_an_expected_delta() -> None:
    from core.domain import ACTION_KINDS

    allowed = {"navigation", "value", "overlay_open", "overlay_close", "content", "scroll", "focus", "any", "none"}
    assert {expected_delta(step(k, "x")) for k in ACTION_KINDS} <= allowed


@pytest.mark.parametrize("explicit", ["overlay_open", "content", "navigation", "none"])
def test_explicit_expect_overrides_the_action(explicit: str) -> None:
    assert expected_delta(step("click", expect=explicit)) == explicit


# --- judge ------------------------------------------------------------------------------


@pytest.mark.parametrize(("expected", "observed", "kind"), [
    ("value", ("value",), "as_expected"),
    ("value", ("value", "focus"), "as_expected"),
    ("navigation", ("navigation", "content", "elements"), "as_expected"),
    ("navigation", ("content",), "as_expected"),  # page content replaced in place (SPA)
    ("overlay_open", ("overlay_open", "elements", "content"), "as_expected"),
    ("overlay_close", ("overlay_close",), "as_expected"),
    ("content", ("elements",), "as_expected"),
    ("content", ("overlay_open",), "as_expected"),
    ("scroll", ("scroll",), "as_expected"),
    ("any", ("content", "focus"), "as_expected"),
    ("any", ("navigation",), "as_expected"),
    ("value", ("content",), "changed_unexpectedly"),
    ("overlay_open", ("navigation", "content"), "changed_unexpectedly"),
    ("navigation", ("value",), "changed_unexpectedly"),
    ("any", ("errors_up",), "changed_unexpectedly"),
    ("value", (), "unchanged"),
    ("any", (), "unchanged"),
    ("navigation", (), "unchanged"),
])
def test_judge_outcomes(expected: str, observed: tuple[str, ...], kind: str) -> None:
    verdict = judge(expected, observed)
    assert verdict.kind == kind
    assert verdict.expected == expected
    assert verdict.observed == observed
    assert verdict.reason


@pytest.mark.parametrize("expected", ["value", "any", "navigation", "overlay_open", "content", "scroll"])
@pytest.mark.parametrize("noise", [("focus",), ("loading",), ("focus", "loading")])
def test_focus_or_loading_only_changes_count_as_unchanged(expected: str, noise: tuple[str, ...]) -> None:
    verdict = judge(expected, noise)
    assert verdict.kind == "unchanged"
    assert verdict.invalid


def test_noise_set_is_focus_and_loading() -> None:
    assert NOISE_DELTAS == {"focus", "loading"}


def test_expected_none_is_always_as_expected() -> None:
    assert judge("none", ()).kind == "as_expected"
    assert judge("none", ("navigation",)).kind == "as_expected"


def test_expected_focus() -> None:
    assert judge("focus", ("focus",)).kind == "as_expected"
    assert judge("focus", ("content",)).kind == "as_expected"
    assert judge("focus", ()).kind == "unchanged"
    assert judge("focus", ("loading",)).kind == "unchanged"


def test_invalid_verdicts() -> None:
    assert not judge("value", ("value",)).invalid
    assert judge("value", ("content",)).invalid
    assert judge("value", ()).invalid


# --- observed_deltas on real observations (FakeDriver) ---------------------------------


def observe_around(reaction: object, kind: str = "click", value: str = "", element: str = "go",
                   pages: dict | None = None) -> tuple[Observation, Observation]:
    fake = FakeDriver(
        pages=pages or {"/": FakePage([{"id": "q", "role": "textbox", "label": "Search"},
                                       {"id": "go", "role": "button", "text": "Go"}], title="Start", text="Hello"),
                        "/next": [{"id": "back", "role": "link", "text": "Back"}]},
        reactions={("/", element, kind): reaction} if reaction is not None else {},
    )
    fake.goto("/")
    before = fake.observe()
    ref = {c.descriptor.id: c.ref for c in before.candidates}[element]
    fake.perform(Action(kind, value), ref, value)  # type: ignore[arg-type]
    return before, fake.observe()


def test_typing_is_a_value_delta() -> None:
    before, after = observe_around(None, kind="input", value="shoes", element="q")
    assert observed_deltas(before, after) == ("value",)
    assert judge("value", observed_deltas(before, after)).kind == "as_expected"


def test_navigation_delta() -> None:
    from core.perception.fake import navigate

    before, after = observe_around(navigate("/next"))
    deltas = observed_deltas(before, after)
    assert deltas[0] == "navigation"
    assert {"elements", "content"} <= set(deltas)


def test_modal_delta() -> None:
    before, after = observe_around(open_modal("Confirm", [{"id": "ok", "role": "button", "text": "OK"}]))
    deltas = observed_deltas(before, after)
    assert deltas[0] == "overlay_open"
    assert {"elements", "content"} <= set(deltas)
    assert judge("overlay_open", deltas).kind == "as_expected"


def test_a_check_that_only_opened_a_dialog_is_not_a_value_change() -> None:
    fake = FakeDriver(
        pages={"/": [{"id": "agree", "role": "checkbox", "label": "I agree", "checked": False}]},
        reactions={("/", "agree", "check"): open_modal("Terms", [{"id": "ok", "role": "button", "text": "OK"}])},
    )
    fake.goto("/")
    before = fake.observe()
    fake.perform(Action("check"), before.candidates[0].ref, "")
    after = fake.observe()
    assert fake.element("agree")["checked"] is False  # the box was never ticked
    deltas = observed_deltas(before, after)
    assert "value" not in deltas
    assert judge(expected_delta(step("check")), deltas).kind == "changed_unexpectedly"


def test_text_delta() -> None:
    before, after = observe_around(change_text("3 results"))
    assert observed_deltas(before, after) == ("content",)


def test_nothing_happened() -> None:
    before, after = observe_around(None)
    assert observed_deltas(before, after) == ()
    assert judge("any", ()).kind == "unchanged"


@pytest.mark.parametrize(("reaction", "noise"), [
    (set_page(focus="button#go[button]"), ("focus",)),
    (set_page(loading=True), ("loading",)),
])
def test_focus_or_spinner_after_a_click_is_unchanged(reaction: object, noise: tuple[str, ...]) -> None:
    before, after = observe_around(reaction)
    assert observed_deltas(before, after) == noise
    assert judge(expected_delta(step("click")), noise).kind == "unchanged"


def test_volatile_text_only_is_no_delta() -> None:
    before, after = observe_around(change_text("Hello 10:42"),
                                   pages={"/": FakePage([{"id": "go", "role": "button", "text": "Go"}],
                                                        text="Hello 09:15")})
    assert observed_deltas(before, after) == ()


def test_scroll_delta() -> None:
    before, after = observe_around(set_page(scroll=(0.0, 400.0)))
    assert observed_deltas(before, after) == ("scroll",)


@pytest.mark.parametrize("expected, observed, reason", [
    ("any", (), "expected any change but nothing changed beyond noise"),
    ("any", ("value", "focus"), "the page changed: a value change"),
    ("overlay_open", ("overlay_open",), "a dialog opening, as expected"),
    ("overlay_close", ("value", "content"), "expected a dialog closing but saw a value change, a content change"),
    ("value", ("errors_up",), "expected a value change but error messages appeared instead"),
])
def test_a_verdict_reason_names_changes_in_plain_words(expected: str, observed: tuple[str, ...], reason: str) -> None:
    # it said "expected any but nothing but noise changed" and "overlay_open changed as expected"
    verdict = judge(expected, observed)
    assert verdict.reason == reason
    assert (verdict.expected, verdict.observed) == (expected, observed)  # the stored values keep their names
    assert "_" not in verdict.reason


def test_change_words_covers_every_delta_kind_and_says_nothing_for_none() -> None:
    assert change_words(()) == "nothing"
    assert change_words("any") == "any change"
    assert all("_" not in change_words(k) for k in CHANGE_WORDS)
