"""Every way a run can end sets RunResult.error_kind (FlowExecutor on a FakeDriver, no browser)."""
from __future__ import annotations

from typing import Any


from core.domain import Action, Assertion, ElementDescriptor, EngineSettings, Flow, RunResult, Step, WaitSettings
from core.engine.control import Answer, StopRequested
from core.engine.executor import FlowExecutor
from core.engine.report import EXIT_ENVIRONMENT, EXIT_ESCALATED, EXIT_FAILED, EXIT_INPUT, EXIT_OK, run_exit_code
from core.perception.fake import FakeDriver, change_text

#: The stand-in of a Playwright error: what the executor sees when the browser itself fails.
PlaywrightError = type("Error", (Exception,), {"__module__": "playwright._impl._errors"})


def go(**kw: Any) -> Step:
    return Step(id="s1", action=Action("click"), target=ElementDescriptor(tag="button", role="button", name="Go",
                                                                          text="Go"), **kw)


def run(fake: FakeDriver, steps: tuple[Step, ...], *, start_url: str = "/", params: dict | None = None,
        control: Any = None) -> RunResult:
    ex = FlowExecutor(fake, emit=lambda e: None, control=control, screenshots=False,
                      settings=EngineSettings(waits=WaitSettings(retry_delay_ms=0)))
    return ex.run_flow(Flow("f", start_url, steps), params=params or {})


def page(reaction: Any = None) -> FakeDriver:
    """One page with a Go button; ``reaction`` is what clicking it does (nothing by default)."""
    return FakeDriver(pages={"/": [{"id": "go", "role": "button", "text": "Go"}]},
                      reactions={("/", "go", "click"): reaction} if reaction else {})


def raising(exc: Exception) -> Any:
    def react(d: FakeDriver, el: Any, value: str) -> None:
        raise exc
    return react


class StopAtOnce:
    def pause_point(self, run_id: str, flow: str, index: int, phase: str) -> None:
        raise StopRequested()

    def escalate(self, event: Any) -> Answer:
        return Answer("stop")

    def take_over(self, run_id: str, flow: str, index: int) -> Answer:
        return Answer("stop")


def test_a_passed_run_has_no_kind() -> None:
    result = run(page(change_text("done")), (go(),))
    assert (result.status, result.error_kind, run_exit_code(result)) == ("passed", "", EXIT_OK)


def test_a_start_url_that_cannot_load_is_unreachable() -> None:
    result = run(page(), (go(),), start_url="/missing")
    assert (result.status, result.error_kind, run_exit_code(result)) == ("error", "unreachable", EXIT_ENVIRONMENT)


def test_a_later_page_that_cannot_load_is_navigation() -> None:
    step = Step(id="s1", action=Action("navigate", "/missing"))
    result = run(page(), (step,))
    assert "cannot load" in result.error
    assert (result.status, result.error_kind, run_exit_code(result)) == ("error", "navigation", EXIT_FAILED)


def test_a_parameter_without_value_is_parameter() -> None:
    step = Step(id="s1", action=Action("navigate", "/{nowhere}"))
    result = run(page(), (step,))
    assert (result.status, result.error_kind, run_exit_code(result)) == ("error", "parameter", EXIT_INPUT)


def test_an_assertion_that_does_not_hold_is_assertion() -> None:
    result = run(page(change_text("done")), (go(assertions=(Assertion("text_appears", "Saved"),)),))
    assert (result.status, result.error_kind, run_exit_code(result)) == ("failed", "assertion", EXIT_FAILED)


def test_a_target_not_found_is_escalated() -> None:
    lost = Step(id="s1", action=Action("click"), target=ElementDescriptor(tag="button", role="button", name="Pay"))
    result = run(page(), (lost,))
    assert (result.status, result.error_kind, run_exit_code(result)) == ("escalated", "escalated", EXIT_ESCALATED)


def test_a_stop_is_stopped() -> None:
    result = run(page(), (go(),), control=StopAtOnce())
    assert (result.status, result.error_kind, run_exit_code(result)) == ("stopped", "stopped", EXIT_FAILED)


def test_a_browser_error_is_browser() -> None:
    result = run(page(raising(PlaywrightError("Target page, context or browser has been closed"))), (go(),))
    assert (result.status, result.error_kind, run_exit_code(result)) == ("error", "browser", EXIT_ENVIRONMENT)


def test_any_other_exception_is_internal() -> None:
    result = run(page(raising(KeyError("oops"))), (go(),))
    assert (result.status, result.error_kind, run_exit_code(result)) == ("error", "internal", EXIT_FAILED)
