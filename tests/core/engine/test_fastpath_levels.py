"""Evidence levels (core/engine/fastpath.py): which observation takes a screenshot (pure logic)."""
from __future__ import annotations

from types import SimpleNamespace

from core.engine import fastpath


def _ex(**kw):
    return SimpleNamespace(**{"screenshots": True, "evidence": None, "full_look": False, **kw})


def test_levels() -> None:
    assert fastpath.level_of(_ex()) == "full"  # an executor built without a level keeps the old behaviour
    assert fastpath.level_of(_ex(screenshots=False, evidence="full")) == "off"
    assert fastpath.level_of(_ex(evidence="failures")) == "failures"
    assert fastpath.level_of(_ex(evidence="nonsense")) == "full"


def test_screenshot_wanted_at_each_level() -> None:
    assert fastpath.screenshot_wanted(_ex(evidence="full"))
    assert not fastpath.screenshot_wanted(_ex(evidence="off", full_look=True))
    ex = _ex(evidence="failures")
    assert not fastpath.screenshot_wanted(ex)
    fastpath.begin_attempt(ex, SimpleNamespace(attempt=2))  # a retried step is looked at in full
    assert fastpath.screenshot_wanted(ex)
    fastpath.begin_attempt(ex, SimpleNamespace(attempt=1))  # the next step is not
    assert not fastpath.screenshot_wanted(ex)


def test_the_recorded_locator_is_the_one_codegen_would_choose() -> None:
    from core.domain import Action, ElementDescriptor, Step

    def step(**target) -> Step:
        return Step("s", Action("click"), target=ElementDescriptor(**target))

    assert fastpath.recorded_locator(step(test_id="save-btn", role="button", name="Save")) == \
        'internal:testid=[data-testid="save-btn"s]'
    assert fastpath.recorded_locator(step(role="button", name='Say "hi"')) == 'internal:role=button[name="Say \\"hi\\""s]'
    # a password field is found by its label (it has no role in ARIA); a name in capitals only has no exact form
    assert fastpath.recorded_locator(step(tag="input", type="password", role="textbox", name="Password",
                                          label="Password")) == 'internal:label="Password"s'
    assert fastpath.recorded_locator(step(role="button", name="EMPLOYEE")) == ""
    assert fastpath.recorded_locator(step(css_path="div > a")) == ""  # nothing codegen would prefer: no fast path
    # a recorded name with a placeholder names another element each run
    assert fastpath.recorded_locator(step(role="link", name="Ada"), step(role="link", name="{who}")) == ""


def test_an_observation_is_light_or_full_by_identity() -> None:
    from core.domain import Observation

    book = fastpath.LookBook()
    light, full = (Observation(url="u", title="", viewport=(1, 1), device_pixel_ratio=1.0, scroll=(0, 0),
                               candidates=(), visible_text="", signature=None) for _ in range(2))  # type: ignore[arg-type]
    book.note(light, False)
    book.note(full, True)
    assert not book.had_ax(light) and book.had_ax(full)
    assert book.had_ax(None)  # unknown: taken as full (never a light look taken for a full one)


def test_a_slow_image_difference_delays_its_step_at_most_its_bound(monkeypatch) -> None:
    import time

    from core.domain import Action, Flow, Step
    from core.engine import evidence as ev
    from core.engine.hooks import FlowEnds, Ports
    from core.engine.step import RunState, StepContext

    def slow_diff(job):  # the worker's part: a slow image difference
        time.sleep(0.4)
        return "diff"

    monkeypatch.setattr(ev, "_diff", slow_diff)
    monkeypatch.setattr(ev, "DIFF_WAIT_MS", 50.0)  # what the record phase gives it before leaving it to the worker
    monkeypatch.setattr(ev, "_diff_job", lambda ex, ctx: (b"a", b"b", 1.0, []))
    stored: list = []
    store = SimpleNamespace(record_step_evidence=lambda run_id, e: stored.append(e))
    plugin = ev.EvidencePlugin(Ports(driver=SimpleNamespace(), emit=lambda e: None, store=store))
    run = RunState("r", Flow("f", "/", (Step("s1", Action("click")), Step("s2", Action("click")))), {})
    t = time.monotonic()
    for i in range(2):
        plugin.collect(StepContext(run, i), active_ms=1.0, wall_ms=1.0)
    assert time.monotonic() - t < 0.3  # two steps recorded while their differences are computed
    assert stored == []
    plugin.flow_ends(FlowEnds(run, True))  # the flow's end waits for them, in step order
    assert [(e.index, e.diff) for e in stored] == [(0, "diff"), (1, "diff")]
