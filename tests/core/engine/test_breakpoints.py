"""The breakpoint rules (pure) and their file in the project's local settings."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.engine.breakpoints import (
    BreakFacts, Breakpoints, BreakpointsError, Conditions, evaluate, load_breakpoints, save_breakpoints,
)


def facts(**kw: object) -> BreakFacts:
    base: dict[str, object] = dict(flow="f", index=2, step_id="s3", title="Save", attempt=1, phase="observe")
    base.update(kw)
    return BreakFacts(**base)  # type: ignore[arg-type]


def kinds(bps: Breakpoints, f: BreakFacts, fired: tuple[str, ...] = ()) -> list[str]:
    return [h.kind for h in evaluate(bps, f, fired)]


def test_a_step_breakpoint_fires_before_the_first_attempt_only() -> None:
    bps = Breakpoints({"f": frozenset({"s3"})})
    hit = evaluate(bps, facts())
    assert [(h.kind, h.reason) for h in hit] == [("step", "step 3 'Save', before it starts")]
    assert kinds(bps, facts(attempt=2)) == []          # a retry is not a new step
    assert kinds(bps, facts(phase="decide")) == []      # only before observe
    assert kinds(bps, facts(step_id="s4")) == []        # another step
    assert kinds(bps, facts(flow="g")) == []            # the same id in another flow
    assert kinds(bps, facts(), fired=("step",)) == []   # once per attempt


def test_no_condition_fires_when_it_is_off() -> None:
    f = facts(phase="failed", change="changed", confidence=0.1, abstained=True, verdict="unchanged",
              irreversible=True)
    assert kinds(Breakpoints(), f) == []


def test_changed_fires_on_a_changed_screen_only() -> None:
    bps = Breakpoints(conditions=Conditions(changed=True))
    hit = evaluate(bps, facts(phase="decide", change="changed", change_reasons=("layout signature changed",)))
    assert hit[0].kind == "changed" and "changed against its baseline: layout signature changed" in hit[0].reason
    assert kinds(bps, facts(phase="decide", change="new")) == []
    assert kinds(bps, facts(phase="decide", change="unchanged")) == []
    assert kinds(bps, facts(phase="decide")) == []  # not known yet


def test_low_confidence_uses_its_threshold_and_ignores_abstentions() -> None:
    bps = Breakpoints(conditions=Conditions(low_confidence=True, confidence_below=0.7))
    hit = evaluate(bps, facts(phase="precheck", strategy="fuzzy_text", confidence=0.64))
    assert hit[0].kind == "low_confidence" and "fuzzy_text confidence 0.64 is below 0.70" in hit[0].reason
    assert kinds(bps, facts(phase="precheck", confidence=0.7)) == []   # not below
    assert kinds(bps, facts(phase="precheck", confidence=0.2, abstained=True)) == []  # that is "abstained"
    higher = Breakpoints(conditions=Conditions(low_confidence=True, confidence_below=0.99))
    assert kinds(higher, facts(phase="precheck", confidence=0.98)) == ["low_confidence"]


def test_abstained_verdict_and_irreversible() -> None:
    on = Breakpoints(conditions=Conditions(abstained=True, verdict=True, irreversible=True))
    assert kinds(on, facts(phase="failed", abstained=True, confidence=0.0)) == ["abstained"]
    hit = evaluate(on, facts(phase="failed", verdict="changed_unexpectedly", verdict_reason="a dialog opened"))
    assert hit[0].kind == "verdict" and "verdict changed unexpectedly (a dialog opened)" in hit[0].reason
    assert kinds(on, facts(phase="failed", verdict="as_expected")) == []
    assert kinds(on, facts(phase="act", irreversible=True)) == ["irreversible"]
    assert kinds(on, facts(phase="settle", irreversible=True)) == []  # only before it acts
    assert kinds(on, facts(phase="act", irreversible=False)) == []


def test_several_conditions_fire_together_once_each() -> None:
    on = Breakpoints({"f": frozenset({"s3"})}, Conditions(changed=True, verdict=True))
    assert kinds(on, facts(change="changed")) == ["step", "changed"]
    assert kinds(on, facts(phase="failed", change="changed", verdict="unchanged"), ("step", "changed")) == ["verdict"]


def test_toggling_and_json_round_trip() -> None:
    bps = Breakpoints().toggled("f", "s2").toggled("f", "s5").toggled("g", "s1").toggled("f", "s2")
    assert bps.steps == {"f": frozenset({"s5"}), "g": frozenset({"s1"})}
    bps = bps.with_conditions(Conditions(abstained=True, low_confidence=True, confidence_below=0.65))
    again = Breakpoints.from_json(json.loads(json.dumps(bps.to_json())))
    assert again == bps and not again.empty
    assert Breakpoints().toggled("f", "s1").toggled("f", "s1").empty


def test_the_file_keeps_other_settings_and_survives_a_reload(tmp_path: Path) -> None:
    local = tmp_path / ".steadyhand" / "studio.json"
    local.parent.mkdir()
    local.write_text(json.dumps({"layout": {"docks": "abc"}}))
    assert load_breakpoints(tmp_path) == Breakpoints()
    bps = Breakpoints({"f": frozenset({"s1"})}, Conditions(verdict=True))
    assert save_breakpoints(tmp_path, bps) == local
    doc = json.loads(local.read_text())
    assert doc["layout"] == {"docks": "abc"}
    assert doc["breakpoints"]["steps"] == {"f": ["s1"]}
    assert load_breakpoints(tmp_path) == bps
    assert load_breakpoints(tmp_path / "elsewhere") == Breakpoints()  # no file: none


@pytest.mark.parametrize(("doc", "field"), [
    ({"steps": {"f": "s1"}}, "steps.f"),
    ({"conditions": {"verdict": "yes"}}, "conditions.verdict"),
    ({"conditions": {"confidence_below": 1.5}}, "conditions.confidence_below"),
    ({"conditions": {"verdikt": True}}, "conditions.verdikt"),
    ([], "breakpoints"),
])
def test_a_bad_file_is_named_with_its_field(tmp_path: Path, doc: object, field: str) -> None:
    local = tmp_path / ".steadyhand" / "studio.json"
    local.parent.mkdir()
    local.write_text(json.dumps({"breakpoints": doc}))
    with pytest.raises(BreakpointsError) as err:
        load_breakpoints(tmp_path)
    assert str(local) in str(err.value) and field in str(err.value)


def test_an_unreadable_file_is_never_overwritten(tmp_path: Path) -> None:
    local = tmp_path / ".steadyhand" / "studio.json"
    local.parent.mkdir()
    local.write_text("{not json")
    with pytest.raises(BreakpointsError, match="not overwritten"):
        save_breakpoints(tmp_path, Breakpoints({"f": frozenset({"s1"})}))
    assert local.read_text() == "{not json"


# --- in the step pipeline, through the engine thread's control (fake page, no browser) ------------------

import queue  # noqa: E402
import threading  # noqa: E402
from typing import Any  # noqa: E402

from core.domain import Action, ElementDescriptor, EngineSettings, Flow, Step, WaitSettings  # noqa: E402
from core.engine.events import ActionPerformed, Paused, Resume, StepFinished, StepOnce, StepStarted, Stop  # noqa: E402
from core.engine.executor import FlowExecutor  # noqa: E402
from core.engine.runner import _ThreadControl  # noqa: E402
from core.perception.fake import FakeDriver, FakePage, change_text  # noqa: E402


class Runner:
    """What the control needs of the engine runner; control and executor events go to one list.

    Each ``Paused`` is answered with the next of ``answers`` (as a user would, once the run waits);
    with none left, the run is stopped (a test never hangs).
    """

    def __init__(self, *answers: Any) -> None:
        self._commands: queue.Queue[object] = queue.Queue()
        self.answers = list(answers)
        self._closing = False
        self.events: list[Any] = []

    def _emit(self, event: Any) -> None:
        self.events.append(event)
        if isinstance(event, Paused) and self.answers != [None]:
            self._commands.put(self.answers.pop(0) if self.answers else Stop())


def _click(step_id: str, label: str, **kw: Any) -> Step:
    return Step(id=step_id, action=Action("click"),
                target=ElementDescriptor(tag="button", role="button", name=label, text=label), **kw)


def _run(bps: Breakpoints, *commands: Any, later: tuple[float, Any] | None = None) -> tuple[Any, Runner, FakeDriver]:
    fake = FakeDriver(pages={"/": FakePage([{"id": a, "role": "button", "text": t} for a, t in
                                            (("a", "Apply"), ("b", "Book"), ("c", "Confirm"))])},
                      reactions={("/", e, "click"): change_text(f"done {e}") for e in "abc"})
    runner = Runner(*commands)
    control = _ThreadControl(runner)  # type: ignore[arg-type]
    control.breakpoints = bps
    ex = FlowExecutor(fake, emit=runner._emit, control=control, screenshots=False,
                      settings=EngineSettings(waits=WaitSettings(retries=0, retry_delay_ms=0)))
    flow = Flow("f", "/", (_click("s1", "Apply"), _click("s2", "Book"), _click("s3", "Confirm", reversible=False)))
    if later is not None:
        threading.Timer(later[0], runner._commands.put, args=(later[1],)).start()
    return ex.run_flow(flow, params={}), runner, fake


def _where(events: list[Any]) -> list[tuple[str, int, str]]:
    out = []
    for e in events:
        if isinstance(e, Paused):
            out.append(("paused", e.index, e.reason))
        elif isinstance(e, StepStarted):
            out.append(("started", e.index, ""))
        elif isinstance(e, StepFinished):
            out.append(("finished", e.index, e.status))
    return out


def test_a_step_breakpoint_pauses_before_its_step_and_step_runs_exactly_that_one() -> None:
    result, runner, _ = _run(Breakpoints({"f": frozenset({"s2"})}), StepOnce(), Resume())
    assert result.status == "passed"
    assert _where(runner.events) == [
        ("started", 0, ""), ("finished", 0, "passed"),
        ("started", 1, ""), ("paused", 1, "breakpoint: step 2 'click Book', before it starts"),
        ("finished", 1, "passed"),                      # Step: exactly step 2 ...
        ("started", 2, ""), ("paused", 2, "paused"),    # ... then paused before step 3
        ("finished", 2, "passed")]


def test_an_irreversible_step_pauses_before_it_acts_and_stop_ends_the_run_without_acting() -> None:
    result, runner, fake = _run(Breakpoints(conditions=Conditions(irreversible=True)), Stop())
    assert result.status == "stopped" and [o.status for o in result.steps] == ["passed", "passed", "stopped"]
    paused = [e for e in runner.events if isinstance(e, Paused)]
    assert [(p.index, p.reason) for p in paused] == [
        (2, "breakpoint: step 3 'click Confirm' is irreversible: paused before it acts")]
    assert [a.element for a in fake.actions] == ["a", "b"]  # Confirm was never clicked
    assert not [e for e in runner.events if isinstance(e, ActionPerformed) and e.index == 2]


def test_time_paused_at_a_breakpoint_is_not_the_step_s_duration() -> None:
    result, runner, _ = _run(Breakpoints({"f": frozenset({"s1"})}), None, later=(0.6, Resume()))
    assert result.status == "passed"
    assert result.steps[0].ms < 500  # paused 600 ms before it started: not counted
