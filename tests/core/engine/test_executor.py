"""FlowExecutor on a FakeDriver: phases, heals, retries, escalations, breaker, parameters, stop.

No browser and no Qt: the page is scripted with :mod:`core.perception.fake`.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence


from core.domain import (
    Action, Assertion, Candidate, ElementDescriptor, EngineSettings, Escalation, Flow, RunResult,
    Step, WaitSettings,
)
from core.engine.control import Answer, HeadlessControl, StopRequested
from core.engine.events import (
    ActionPerformed, BreakerChanged, EngineEvent, EscalationRaised, FlowStarted, ObservationMade, PhaseChanged,
    StepFinished, StepStarted, TargetResolved, VerdictReached,
)
from core.engine.executor import FlowExecutor
from event_log import EventLog
from core.perception.fake import FakeDriver, FakePage, change_text, fail, navigate, nothing, set_value, update

#: Made-up secret values for masking tests (never real credentials).
FIXTURE_SECRET = "s3" + "cret"
SHORT_FIXTURE_SECRET = "x"


def settings(retries: int = 2, **kw: Any) -> EngineSettings:
    """Run settings for the fake page: retries wait 300 ms (P6) on a real page, here they need not."""
    return EngineSettings(waits=WaitSettings(retries=retries, retry_delay_ms=0), **kw)


# --- helpers ------------------------------------------------------------------------------


def button(element_id: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"id": element_id, "role": "button", "text": text, **extra}


def textbox(element_id: str, label: str, **extra: Any) -> dict[str, Any]:
    return {"id": element_id, "role": "textbox", "label": label, **extra}


def target(label: str, role: str = "button") -> ElementDescriptor:
    tag = {"button": "button", "textbox": "input"}[role]
    if role == "textbox":
        return ElementDescriptor(tag=tag, role=role, name=label, label=label)
    return ElementDescriptor(tag=tag, role=role, name=label, text=label)


def click(step_id: str, label: str, **kw: Any) -> Step:
    return Step(id=step_id, action=Action("click"), target=target(label), **kw)


def type_into(step_id: str, label: str, value: str, **kw: Any) -> Step:
    return Step(id=step_id, action=Action("input", value), target=target(label, "textbox"), **kw)


def execute(fake: FakeDriver, steps: Sequence[Step], *, params: Mapping[str, str] | None = None,
            start_url: str = "/", control: Any = None, config: EngineSettings | None = None,
            on_descriptor_captured: Callable[[Flow, Step, Candidate], None] | None = None,
            flow_params: Mapping[str, str] | None = None) -> tuple[RunResult, EventLog]:
    rec = EventLog()
    ex = FlowExecutor(fake, emit=rec, control=control, settings=config or settings(), screenshots=False,
                      project_name="test", on_descriptor_captured=on_descriptor_captured)
    flow = Flow("checkout", start_url, tuple(steps), params=dict(flow_params or {}))
    result = ex.run_flow(flow, params=params or {})
    return result, rec


LOGIN = {
    "/": FakePage([textbox("user", "User name"), textbox("pw", "Password"), button("go", "Sign in")],
                  title="Login", text="Please sign in"),
    "/home": FakePage([button("q", "Query"), button("save", "Save"), button("submit", "Submit")],
                      title="Home", text="Welcome"),
}


# --- the happy path and its phases -----------------------------------------------------------


def test_a_flow_passes_with_phases_in_order() -> None:
    fake = FakeDriver(pages=LOGIN, reactions={("/", "go", "click"): navigate("/home")})
    steps = [type_into("s1", "User name", "alice"), click("s2", "Sign in",
                                                          assertions=(Assertion("url_contains", "/home"),))]
    result, rec = execute(fake, steps)

    assert result.status == "passed", result.error
    assert [o.status for o in result.steps] == ["passed", "passed"]
    assert result.heals == 0 and result.invalid_actions == 0
    assert [(a.element, a.kind, a.value) for a in fake.actions] == [("user", "input", "alice"), ("go", "click", "")]
    expected = ["observe", "fingerprint", "decide", "resolve", "precheck", "checkpoint", "act", "settle", "verify",
                "record"]
    assert rec.phases(0) == expected
    assert rec.phases(1) == expected
    assert {e.run_id for e in rec.events} == {result.run_id}


def test_events_sit_between_the_right_phases() -> None:
    fake = FakeDriver(pages=LOGIN)
    _, rec = execute(fake, [type_into("s1", "User name", "alice")])

    def label(e: EngineEvent) -> str:
        if isinstance(e, PhaseChanged):
            return e.phase
        if isinstance(e, ObservationMade):
            return f"observation:{e.when}"
        return type(e).__name__

    assert [label(e) for e in rec.events] == [
        "FlowStarted", "BreakerChanged",
        "StepStarted", "observe", "observation:before", "fingerprint", "StateNoted", "decide", "resolve",
        "TargetResolved", "precheck", "checkpoint", "act", "ActionPerformed", "settle", "verify",
        "observation:after", "StateNoted", "VerdictReached",
        "BreakerChanged", "record", "StateGraphChanged", "StepEvidenceRecorded", "StepFinished",
    ]
    assert rec.of(FlowStarted)[0].step_titles == ("input User name",)
    assert rec.of(StepStarted)[0].attempt == 1
    assert rec.of(VerdictReached)[0].verdict.kind == "as_expected"
    assert rec.of(VerdictReached)[0].verdict.observed == ("value",)
    finished = rec.of(StepFinished)[0]
    assert (finished.index, finished.status, finished.healed) == (0, "passed", False)


def test_targetless_step_skips_resolve() -> None:
    fake = FakeDriver(pages=LOGIN)
    result, rec = execute(fake, [Step(id="n", action=Action("navigate", "/home"))])
    assert result.status == "passed"
    assert rec.phases() == ["observe", "fingerprint", "decide", "precheck", "checkpoint", "act", "settle", "verify",
                            "record"]
    assert fake.actions[0].ref is None and fake.path == "/home"


def test_start_url_that_cannot_load_ends_in_error() -> None:
    result, _ = execute(FakeDriver(pages=LOGIN), [click("s1", "Sign in")], start_url="/missing")
    assert result.status == "error"
    assert "cannot load" in result.error and result.steps == ()


def test_a_value_already_in_place_is_not_typed_again() -> None:
    pages = {"/": [textbox("user", "User name", value="alice")]}
    fake = FakeDriver(pages=pages)
    result, rec = execute(fake, [type_into("s1", "User name", "alice")])
    assert result.status == "passed"
    assert fake.actions == []
    assert rec.of(ActionPerformed)[0].error == "already in the wanted state"


# --- heals ---------------------------------------------------------------------------------


def test_a_renamed_target_is_healed_and_counted() -> None:
    pages = {"/": [button("q", "Query (Q)"), button("r", "Reset")]}
    fake = FakeDriver(pages=pages, reactions={("/", "q", "click"): change_text("3 results")})
    result, rec = execute(fake, [click("s1", "Query")])
    assert result.status == "passed", result.error
    assert result.heals == 1
    assert result.heals_by_strategy == {"fuzzy_text": 1}
    resolution = result.steps[0].resolution
    assert resolution is not None and resolution.healed and resolution.strategy == "fuzzy_text"
    assert rec.of(TargetResolved)[0].candidate.descriptor.id == "q"
    assert rec.of(StepFinished)[0].healed is True
    assert [a.element for a in fake.actions] == ["q"]


def test_an_unchanged_target_is_not_a_heal() -> None:
    fake = FakeDriver(pages={"/": [button("q", "Query")]}, reactions={("/", "q", "click"): change_text("done")})
    result, _ = execute(fake, [click("s1", "Query")])
    assert result.status == "passed"
    assert result.heals == 0 and result.heals_by_strategy == {}
    assert result.steps[0].resolution.strategy == "exact"


def test_a_broken_selector_falls_back_to_the_descriptor() -> None:
    fake = FakeDriver(pages={"/": [button("query-btn", "Query (Q)")]},
                      reactions={("/", "query-btn", "click"): change_text("done")})
    result, _ = execute(fake, [click("s1", "Query", selector="#old-query")])
    assert result.status == "passed", result.error
    assert result.heals_by_strategy == {"fuzzy_text": 1}


# --- invalid actions and retries (P6) -------------------------------------------------------


def test_an_invalid_click_is_retried_twice_then_escalated() -> None:
    fake = FakeDriver(pages={"/": [button("go", "Go")]}, reactions={("/", "go", "click"): nothing()})
    result, rec = execute(fake, [click("s1", "Go")])
    assert [a.element for a in fake.actions] == ["go", "go", "go"]  # 1 + 2 retries (P6)
    assert result.invalid_actions == 3
    assert result.status == "escalated"
    assert result.steps[0].attempts == 3
    assert [v.verdict.kind for v in rec.of(VerdictReached)] == ["unchanged"] * 3
    assert [s.attempt for s in rec.of(StepStarted)] == [1, 2, 3]
    assert len(rec.of(EscalationRaised)) == 1


def test_a_retry_that_works_passes() -> None:
    calls = {"n": 0}

    def flaky(d: FakeDriver, el: dict | None, value: str) -> None:
        calls["n"] += 1
        if calls["n"] >= 2:
            change_text("loaded")(d, el, value)

    fake = FakeDriver(pages={"/": [button("go", "Go")]}, reactions={("/", "go", "click"): flaky})
    result, rec = execute(fake, [click("s1", "Go")])
    assert result.status == "passed"
    assert result.steps[0].attempts == 2
    assert result.invalid_actions == 1
    assert [b.state for b in rec.of(BreakerChanged)] == ["closed", "closed", "closed"]
    assert rec.of(BreakerChanged)[-1].consecutive_failures == 0


def test_retries_are_configurable() -> None:
    fake = FakeDriver(pages={"/": [button("go", "Go")]}, reactions={("/", "go", "click"): nothing()})
    result, _ = execute(fake, [click("s1", "Go")], config=settings(retries=0))
    assert len(fake.actions) == 1 and result.status == "escalated"
    assert "failed after 1 attempt" in result.error


def test_action_error_is_a_failed_attempt() -> None:
    fake = FakeDriver(pages={"/": [button("go", "Go")]}, reactions={("/", "go", "click"): fail("element is covered")})
    result, rec = execute(fake, [click("s1", "Go", read_only=True)])
    assert len(fake.actions) == 3
    assert result.status == "escalated"
    assert result.error == "failed after 3 attempts: element is covered"  # read-only: breaker still closed
    assert [a.ok for a in rec.of(ActionPerformed)] == [False] * 3
    assert result.invalid_actions == 0  # the action did not run, so it is not an invalid action


# --- irreversible steps (S6) -----------------------------------------------------------------


def irreversible_pages() -> FakeDriver:
    return FakeDriver(pages={"/": [button("save", "Save"), button("submit", "Submit")]},
                      reactions={("/", "save", "click"): change_text("Saved draft"),
                                 ("/", "submit", "click"): nothing()})


def test_an_irreversible_step_that_fails_verification_runs_once_and_escalates() -> None:
    fake = irreversible_pages()
    result, rec = execute(fake, [click("s1", "Save", reversible=False), click("s2", "Submit", reversible=False)])
    assert [a.element for a in fake.actions] == ["save", "submit"]  # Submit performed ONCE
    assert result.status == "escalated"
    assert result.steps[1].attempts == 1
    assert "irreversible step failed verification" in result.error
    (esc,) = rec.of(EscalationRaised)
    assert esc.index == 1
    assert esc.side_effects == ("step 1 'click Save' wrote data",)


def test_an_irreversible_step_is_not_retried_even_when_a_human_says_retry() -> None:
    class Retry(HeadlessControl):
        def escalate(self, event: Escalation) -> Answer:
            return Answer("retry")

    fake = irreversible_pages()
    result, _ = execute(fake, [click("s2", "Submit", reversible=False)], control=Retry())
    assert [a.element for a in fake.actions] == ["submit"]
    assert result.status == "escalated"


def test_an_irreversible_step_whose_assertion_fails_runs_once() -> None:
    fake = irreversible_pages()
    step = click("s1", "Save", reversible=False, assertions=(Assertion("text_appears", "Saved for good"),))
    result, rec = execute(fake, [step])
    assert [a.element for a in fake.actions] == ["save"]
    assert result.status == "failed"
    assert rec.of(VerdictReached)[0].verdict.kind == "failed"
    assert "Saved for good" in rec.of(VerdictReached)[0].verdict.reason


def test_reversible_steps_leave_no_side_effects() -> None:
    fake = irreversible_pages()
    result, rec = execute(fake, [click("s1", "Save"), click("s2", "Submit")])
    assert result.status == "escalated"
    assert rec.of(EscalationRaised)[0].side_effects == ()


# --- ambiguity, breaker, pre-check ---------------------------------------------------------------


def test_an_ambiguous_target_abstains_and_escalates_with_candidates() -> None:
    fake = FakeDriver(pages={"/": [button("d1", "Delete"), button("d2", "Delete"), button("k", "Keep")]})
    result, rec = execute(fake, [click("s1", "Delete")])
    assert fake.actions == []  # a silent wrong pick is worse than asking
    assert result.status == "escalated"
    resolution = result.steps[0].resolution
    assert resolution is not None and resolution.abstained and resolution.ref is None
    assert "tie" in resolution.reason
    (esc,) = rec.of(EscalationRaised)
    assert esc.reason.startswith("locator abstained")
    assert len(esc.candidates) >= 2 and all(c.label == "Delete" for c in esc.candidates[:2])
    assert {c.ref for c in esc.candidates[:2]} == {c.ref for c in rec.of(ObservationMade)[0].observation.candidates
                                                   if c.descriptor.id in ("d1", "d2")}
    assert all(c.box is not None and c.score > 0 for c in esc.candidates[:2])
    assert esc.kind == "abstained" and "retry" in esc.answers


def test_a_human_can_resolve_an_escalation_and_retry() -> None:
    class FixThePage(HeadlessControl):
        def __init__(self, fake: FakeDriver) -> None:
            self.fake = fake
            self.asked = 0

        def escalate(self, event: Escalation) -> Answer:
            self.asked += 1
            self.fake.elements = [e for e in self.fake.elements if e["id"] != "d2"]
            return Answer("retry")

    fake = FakeDriver(pages={"/": [button("d1", "Delete"), button("d2", "Delete")]},
                      reactions={("/", "d1", "click"): change_text("deleted")})
    control = FixThePage(fake)
    result, _ = execute(fake, [click("s1", "Delete")], control=control)
    assert result.status == "passed" and control.asked == 1
    assert result.steps[0].attempts == 2


def test_an_optional_step_whose_target_is_missing_is_skipped() -> None:
    fake = FakeDriver(pages={"/": [button("go", "Go")]}, reactions={("/", "go", "click"): change_text("ok")})
    result, _ = execute(fake, [click("s1", "Accept cookies", optional=True), click("s2", "Go")])
    assert result.status == "passed"
    assert [o.status for o in result.steps] == ["skipped", "passed"]


def test_the_breaker_opens_after_three_consecutive_failures_and_escalates() -> None:
    fake = FakeDriver(pages={"/": [button("go", "Go")]}, reactions={("/", "go", "click"): nothing()})
    config = settings(retries=10)  # the breaker, not the retry budget, stops it
    result, rec = execute(fake, [click("s1", "Go")], config=config)
    assert len(fake.actions) == 3
    assert result.status == "escalated"
    states = [(b.state, b.consecutive_failures) for b in rec.of(BreakerChanged)]
    assert states == [("closed", 0), ("closed", 1), ("closed", 2), ("open", 3)]
    assert rec.of(BreakerChanged)[-1].threshold == 3
    assert len(rec.of(EscalationRaised)) == 1


def test_read_only_steps_get_five_failures_before_the_breaker_opens() -> None:
    # the action raises (it is not performed), so neither P8 nor K2 counts it: the breaker's own limit shows
    fake = FakeDriver(pages={"/": [button("go", "Go")]}, reactions={("/", "go", "click"): fail("element is covered")})
    config = settings(retries=10)
    result, rec = execute(fake, [click("s1", "Go", read_only=True)], config=config)
    assert len(fake.actions) == 5
    assert (rec.of(BreakerChanged)[-1].state, rec.of(BreakerChanged)[-1].threshold) == ("open", 5)
    assert rec.of(EscalationRaised)[-1].kind == "breaker_open"


def test_a_read_only_step_that_changes_nothing_stagnates_before_its_breaker_limit() -> None:
    fake = FakeDriver(pages={"/": [button("go", "Go")]}, reactions={("/", "go", "click"): nothing()})
    result, rec = execute(fake, [click("s1", "Go", read_only=True)], config=settings(retries=10))
    assert len(fake.actions) == 3  # K2: 3 rounds without a real change, though the breaker would allow 5
    assert rec.of(BreakerChanged)[-1].state == "closed"
    (esc,) = rec.of(EscalationRaised)
    assert esc.kind == "stagnation" and "3 rounds in a row without a real state change" in esc.reason
    assert result.stop_kind == "stagnation" and result.stopped_at == 0


def test_after_a_human_resume_the_open_breaker_lets_one_probe_through() -> None:
    class RetryOnce(HeadlessControl):
        def __init__(self) -> None:
            self.asked = 0

        def escalate(self, event: Escalation) -> Answer:
            self.asked += 1
            return Answer("retry" if self.asked == 1 else "stop")

    fake = FakeDriver(pages={"/": [button("go", "Go")]}, reactions={("/", "go", "click"): nothing()})
    control = RetryOnce()
    result, rec = execute(fake, [click("s1", "Go")], control=control)
    assert len(fake.actions) == 4  # 3 until the breaker opens, then exactly one probe
    assert control.asked == 2
    assert [b.state for b in rec.of(BreakerChanged)][-3:] == ["open", "half_open", "open"]
    assert result.status == "escalated"


def test_a_disabled_target_is_a_precondition_failure() -> None:
    fake = FakeDriver(pages={"/": [button("go", "Go", enabled=False)]})
    result, rec = execute(fake, [click("s1", "Go")])
    assert fake.actions == []  # never clicked
    assert result.status == "escalated"
    assert "precondition not met: target is disabled" in result.error
    assert rec.of(ActionPerformed) == []
    assert result.steps[0].verdict is not None and result.steps[0].verdict.kind == "failed"
    assert "act" not in rec.phases()


def test_typing_into_a_non_editable_target_is_a_precondition_failure() -> None:
    fake = FakeDriver(pages={"/": [{"id": "n", "role": "status", "tag": "div", "label": "Name"}]})
    step = Step(id="s1", action=Action("input", "x"),
                target=ElementDescriptor(tag="div", role="status", name="Name", label="Name"))
    result, _ = execute(fake, [step], config=settings(retries=0))
    assert "precondition not met: target is not an editable field" in result.error
    assert fake.actions == []


# --- selector-only steps and descriptor capture ------------------------------------------------


def test_a_selector_only_step_captures_its_descriptor() -> None:
    captured: list[tuple[Flow, Step, Candidate]] = []
    fake = FakeDriver(pages={**LOGIN, "/": [textbox("email", "E-mail"), button("go", "Continue")]},
                      reactions={("/", "go", "click"): navigate("/home")})
    step = Step(id="s1", action=Action("click"), selector="#go")
    result, _ = execute(fake, [step], on_descriptor_captured=lambda f, s, c: captured.append((f, s, c)))
    assert result.status == "passed", result.error
    assert result.steps[0].resolution.strategy == "exact" and result.heals == 0
    ((flow, got_step, cand),) = captured
    assert flow.name == "checkout" and got_step is step
    d = cand.descriptor
    assert (d.id, d.tag, d.role, d.name, d.text) == ("go", "button", "button", "Continue", "Continue")
    assert d.bbox is not None and d.viewport == (1280, 800)


def test_a_step_with_a_descriptor_is_not_captured_again() -> None:
    captured: list[Candidate] = []
    fake = FakeDriver(pages={"/": [button("go", "Go")]}, reactions={("/", "go", "click"): change_text("ok")})
    result, _ = execute(fake, [click("s1", "Go", selector="#go")],
                        on_descriptor_captured=lambda f, s, c: captured.append(c))
    assert result.status == "passed" and captured == []


def test_a_selector_only_step_that_matches_nothing_escalates() -> None:
    fake = FakeDriver(pages={"/": [button("go", "Go")]})
    result, rec = execute(fake, [Step(id="s1", action=Action("click"), selector="#gone")])
    assert result.status == "escalated"
    assert "'#gone' matched nothing" in rec.of(EscalationRaised)[0].reason


def test_a_selector_matching_two_elements_without_descriptor_escalates() -> None:
    fake = FakeDriver(pages={"/": [button("a", "Delete"), button("b", "Delete")]})
    result, rec = execute(fake, [Step(id="s1", action=Action("click"), selector="text=Delete")])
    assert result.status == "escalated" and fake.actions == []
    assert "matched 2 elements" in rec.of(EscalationRaised)[0].reason


# --- parameters ----------------------------------------------------------------------------


def test_parameters_are_bound() -> None:
    fake = FakeDriver(pages=LOGIN)
    steps = [type_into("s1", "User name", "{user}",
                       assertions=(Assertion("value", "{user}"),)),
             type_into("s2", "Password", "{password}")]
    result, _ = execute(fake, steps, params={"user": "alice", "password": FIXTURE_SECRET})
    assert result.status == "passed", result.error
    assert [a.value for a in fake.actions] == ["alice", FIXTURE_SECRET]
    assert fake.element("user")["value"] == "alice"


def test_an_unknown_parameter_ends_the_flow_with_error_naming_the_step() -> None:
    fake = FakeDriver(pages=LOGIN)
    result, _ = execute(fake, [type_into("s1", "User name", "{user}"), type_into("s2", "Password", "{pasword}")],
                        params={"user": "alice", "password": SHORT_FIXTURE_SECRET})
    assert result.status == "error"
    assert "step 's2'" in result.error and "{pasword}" in result.error
    assert "known: password, user" in result.error
    assert [a.element for a in fake.actions] == ["user"]


# --- stopping ------------------------------------------------------------------------------


class StopAt(HeadlessControl):
    def __init__(self, index: int) -> None:
        self.index = index

    def pause_point(self, run_id: str, flow: str, index: int, phase: str) -> None:
        if index == self.index:
            raise StopRequested()


def test_a_stop_request_ends_the_flow_as_stopped() -> None:
    fake = FakeDriver(pages=LOGIN)
    result, _ = execute(fake, [type_into("s1", "User name", "a"), type_into("s2", "Password", "b")],
                        control=StopAt(1))
    assert result.status == "stopped" and result.error_kind == "stopped"
    assert result.error == "stopped by the user"
    assert [(o.step_id, o.status) for o in result.steps] == [("s1", "passed"), ("s2", "stopped")]
    assert [a.element for a in fake.actions] == ["user"]


def test_a_stop_before_the_first_page_loads() -> None:
    fake = FakeDriver(pages=LOGIN)
    result, _ = execute(fake, [type_into("s1", "User name", "a")], control=StopAt(-1))
    assert result.status == "stopped" and fake.visits == [] and fake.actions == []


# --- counting -----------------------------------------------------------------------------


def test_heals_only_count_passed_steps() -> None:
    pages = {"/": [button("q", "Query (Q)")]}
    fake = FakeDriver(pages=pages, reactions={("/", "q", "click"): nothing()})
    result, _ = execute(fake, [click("s1", "Query")])
    assert result.status == "escalated"
    assert result.heals == 0 and result.heals_by_strategy == {}


def test_invalid_actions_are_counted_per_run() -> None:
    fake = FakeDriver(pages={"/": [button("go", "Go")]}, reactions={("/", "go", "click"): nothing()})
    rec = EventLog()
    ex = FlowExecutor(fake, emit=rec, settings=settings(retries=0), screenshots=False)
    flow = Flow("f", "/", (click("s1", "Go"),))
    first = ex.run_flow(flow, params={})
    second = ex.run_flow(flow, params={})
    assert first.invalid_actions == 1 and second.invalid_actions == 1
    assert first.run_id != second.run_id


def test_a_changed_unexpectedly_verdict_is_invalid() -> None:
    fake = FakeDriver(pages={"/": [textbox("f", "Name"), button("go", "Go")]},
                      reactions={("/", "f", "input"): change_text("Oops")})
    result, rec = execute(fake, [type_into("s1", "Name", "x")], config=settings(retries=0))
    assert rec.of(VerdictReached)[0].verdict.kind == "changed_unexpectedly"
    assert result.invalid_actions == 1 and result.status == "escalated"


def test_a_later_update_disabling_a_button_is_seen_by_the_precheck() -> None:
    fake = FakeDriver(pages={"/": [button("a", "Apply"), button("b", "Buy")]},
                      reactions={("/", "a", "click"): [change_text("applied"), update("b", enabled=False)]})
    result, _ = execute(fake, [click("s1", "Apply"), click("s2", "Buy")],
                        config=settings(retries=0))
    assert [o.status for o in result.steps] == ["passed", "escalated"]
    assert "target is disabled" in result.error
    assert [a.element for a in fake.actions] == ["a"]


def test_set_value_reaction_keeps_state_across_steps() -> None:
    fake = FakeDriver(pages={"/": [textbox("f", "Name"), button("copy", "Copy")]},
                      reactions={("/", "copy", "click"): set_value("copied", element="f")})
    result, _ = execute(fake, [click("s1", "Copy"), Step(id="s2", action=Action("assert"),
                                                         assertions=(Assertion("value", "copied", "#f"),))])
    assert result.status == "passed", result.error


def test_a_working_action_whose_assertion_fails_is_not_performed_again() -> None:
    fake = FakeDriver(pages={"/": [button("go", "Go")]}, reactions={("/", "go", "click"): change_text("Saved")})
    step = click("s1", "Go", assertions=(Assertion("text_appears", "Published"),))  # reversible
    result, rec = execute(fake, [step])
    assert [a.element for a in fake.actions] == ["go"]  # the click worked: doing it again would act twice
    assert result.status == "failed" and result.steps[0].attempts == 1
    assert rec.of(VerdictReached)[0].verdict.kind == "failed"
    # a failed assertion fails the flow without asking anyone (a batch goes on, CLI and studio alike)
    assert rec.of(EscalationRaised) == [] and "Published" in result.error
    assert result.error_kind == "assertion"


def test_an_empty_input_clears_a_filled_field() -> None:
    fake = FakeDriver(pages={"/": [textbox("f", "Name", value="old")]})
    result, _ = execute(fake, [type_into("s1", "Name", "")])
    assert [(a.element, a.value) for a in fake.actions] == [("f", "")]
    assert result.status == "passed" and fake.element("f")["value"] == ""


def test_clearing_an_already_empty_field_passes() -> None:
    fake = FakeDriver(pages={"/": [textbox("f", "Name")]})
    result, _ = execute(fake, [type_into("s1", "Name", "")])
    assert result.status == "passed", result.error
    assert result.invalid_actions == 0
    assert len(fake.actions) <= 1


def test_nothing_is_captured_from_a_run_that_did_not_pass() -> None:
    captured: list[Candidate] = []
    fake = FakeDriver(pages={"/": [button("go", "Go"), button("x", "Next")]},
                      reactions={("/", "go", "click"): change_text("ok"), ("/", "x", "click"): nothing()})
    steps = [Step(id="s1", action=Action("click"), selector="#go"), click("s2", "Next")]
    result, _ = execute(fake, steps, config=settings(retries=0),
                        on_descriptor_captured=lambda f, s, c: captured.append(c))
    assert [o.status for o in result.steps] == ["passed", "escalated"]
    assert captured == []  # s1 passed, but the run did not: its descriptor is not trusted


def test_a_parametrised_selector_is_never_captured() -> None:
    captured: list[Candidate] = []
    fake = FakeDriver(pages={"/": [button("go", "Go")]}, reactions={("/", "go", "click"): change_text("ok")})
    result, _ = execute(fake, [Step(id="s1", action=Action("click"), selector="#{which}")], params={"which": "go"},
                        on_descriptor_captured=lambda f, s, c: captured.append(c))
    assert result.status == "passed", result.error
    assert captured == []  # another run names another element
