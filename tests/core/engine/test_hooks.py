"""The step kernel and its plugins (issue 20): the kernel runs alone, a failing plugin is logged and the step goes
on, a deciding plugin is never ignored, and a new feature is one registration.

FlowExecutor on a FakeDriver (no browser, no Qt): the page is scripted with :mod:`core.perception.fake`.
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from core.domain import Action, ElementDescriptor, EngineSettings, Flow, Step, WaitSettings
from core.engine.events import (
    PluginFailed, ScreenChanged, StateGraphChanged, StateNoted, StepEvidenceRecorded, StepFinished,
)
from core.engine.executor import FlowExecutor
from core.engine.hooks import (
    FlowBegins, HoldTarget, Held, PluginHost, Ports, RefuseAction, StepRecorded, hookimpl,
)
from core.engine.plugins import default_plugins
from core.engine.step import StepFailure
from core.perception.fake import FakeDriver, FakePage, navigate
from core.recover.policy import Failure
from event_log import EventLog

ROOT = Path(__file__).resolve().parents[3]
PAGES = {
    "/": FakePage([{"id": "user", "role": "textbox", "label": "User name"},
                   {"id": "go", "role": "button", "text": "Sign in"}], title="Login", text="Please sign in"),
    "/home": FakePage([{"id": "save", "role": "button", "text": "Save"}], title="Home", text="Welcome"),
}
STEPS = (
    Step(id="s1", action=Action("input", "alice"),
         target=ElementDescriptor(tag="input", role="textbox", name="User name", label="User name")),
    Step(id="s2", action=Action("click"), target=ElementDescriptor(tag="button", role="button", name="Sign in",
                                                                   text="Sign in")),
)


def _run(plugins: Any = None, extra: tuple[object, ...] = ()) -> tuple[Any, EventLog, FakeDriver, FlowExecutor]:
    fake = FakeDriver(pages=PAGES, reactions={("/", "go", "click"): navigate("/home")})
    log = EventLog()
    ex = FlowExecutor(fake, emit=log, settings=EngineSettings(waits=WaitSettings(retries=1, retry_delay_ms=0)),
                      screenshots=False, plugins=plugins, extra_plugins=extra)
    result = ex.run_flow(Flow("login", "/", STEPS), params={})
    return result, log, fake, ex


def test_the_kernel_runs_a_flow_with_no_plugin_at_all() -> None:
    result, log, fake, _ex = _run(plugins=[])
    assert result.status == "passed", result.error
    assert [(a.element, a.kind) for a in fake.actions] == [("user", "input"), ("go", "click")]
    # no feature ran: no state noted, no graph, no evidence, no screen comparison
    assert not log.of(StateNoted) and not log.of(StateGraphChanged) and not log.of(StepEvidenceRecorded)
    assert not log.of(ScreenChanged)


def test_the_default_plugins_are_the_features() -> None:
    result, log, _fake, ex = _run()
    assert result.status == "passed", result.error
    assert len(log.of(StateNoted)) == 4 and len(log.of(StateGraphChanged)) == 2
    assert len(log.of(StepEvidenceRecorded)) == 2
    names = {name for name, _p in ex.plugins.pm.list_name_plugin()}
    assert {"ScreenPlugin", "AwarenessPlugin", "GraphRecorder", "EvidencePlugin", "CapturePlugin",
            "BreakpointPlugin", "ChosenPlugin", "SkillsPlugin", "TakeoverPlugin"} <= names


class Broken:
    """A notification plugin that fails every time it is called."""

    def __init__(self) -> None:
        self.calls = 0

    @hookimpl
    def step_recorded(self, p: StepRecorded) -> None:
        self.calls += 1
        raise RuntimeError("the plugin's disk is full")


def test_a_failing_notification_is_logged_and_announced_and_the_run_goes_on() -> None:
    broken = Broken()
    result, log, _fake, ex = _run(extra=(broken,))
    assert result.status == "passed", result.error
    assert broken.calls == 2
    failed = log.of(PluginFailed)
    assert [(e.plugin, e.hook, e.index) for e in failed] == [("Broken", "step_recorded", 0),
                                                             ("Broken", "step_recorded", 1)]
    assert failed[0].run_id == result.run_id and "RuntimeError: the plugin's disk is full" in failed[0].error
    assert sum("plugin Broken.step_recorded failed" in e for e in ex.store_errors) == 2
    # the other plugins of the same hook still ran, and every step finished
    assert len(log.of(StepEvidenceRecorded)) == 2 and len(log.of(StepFinished)) == 2


class NeverClickSignIn:
    """A new feature in a few lines: refuses to click "Sign in" (one registration, no kernel edit)."""

    @hookimpl
    def refuse_action(self, p: RefuseAction) -> StepFailure | None:
        cand = p.step.candidate
        if p.step.step is not None and p.step.step.action.kind == "click" and cand is not None \
                and cand.descriptor.label_text == "Sign in":
            return StepFailure(Failure("precondition", "signing in is not allowed here"), escalation="precondition")
        return None


def test_a_deciding_plugin_is_obeyed_the_action_is_never_done() -> None:
    result, _log, fake, _ex = _run(extra=(NeverClickSignIn(),))
    assert result.status == "escalated"
    assert "signing in is not allowed here" in result.error
    assert [(a.element, a.kind) for a in fake.actions] == [("user", "input")]  # the click was never performed


class CrashingDecision:
    """A deciding plugin that raises: the decision is not lost, the step goes the one error path."""

    @hookimpl
    def hold_target(self, p: HoldTarget) -> Held | None:
        raise RuntimeError("rule table unreadable")


def test_a_decision_that_raises_never_lets_the_action_happen() -> None:
    result, log, fake, _ex = _run(extra=(CrashingDecision(),))
    assert result.status == "error" and result.error_kind == "internal"
    assert "rule table unreadable" in result.error
    assert fake.actions == []  # nothing acted on a target whose hold could not be decided
    assert not log.of(PluginFailed)  # a decision is not swallowed like a notification


def test_notifications_run_in_registration_order_and_tryfirst_first() -> None:
    seen: list[str] = []

    class A:
        @hookimpl
        def flow_begins(self, p: FlowBegins) -> None:
            seen.append("a")

    class B:
        @hookimpl
        def flow_begins(self, p: FlowBegins) -> None:
            seen.append("b")

    class First:
        @hookimpl(tryfirst=True)
        def flow_begins(self, p: FlowBegins) -> None:
            seen.append("first")

    host = PluginHost(Ports(driver=None, emit=lambda e: None))
    for plugin in (A(), B(), First()):
        host.register(plugin)
    host.notify(FlowBegins(run=None))  # type: ignore[arg-type]
    assert seen == ["first", "a", "b"]


def test_default_plugins_are_built_from_ports_only() -> None:
    ports = Ports(driver=FakeDriver(pages=PAGES), emit=lambda e: None)
    plugins = default_plugins(ports)
    for plugin in plugins:
        assert getattr(plugin, "ports", getattr(plugin, "ex", None)) is ports, type(plugin).__name__


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(("core.engine." if node.level else "") + node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_no_engine_module_but_the_session_and_resume_imports_the_executor() -> None:
    """The circle of issue 20 (pipeline -> feature -> executor -> pipeline) is gone."""
    importers = sorted(p.stem for p in (ROOT / "core" / "engine").rglob("*.py")
                       if "core.engine.executor" in _imports(p) or "core.engine.pipeline" in _imports(p))
    assert importers == ["executor", "resume", "session"]
