"""A browser or page that dies mid-step in real Chromium: the step is still recorded, the run ends at once with
error kind ``browser`` (never a hang, never an escalation offering a retry on a dead page), and the next flow of
the session gets a new browser."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from core.domain import Action, BrowserSettings, ElementDescriptor, EngineSettings, Flow, Step, WaitSettings
from core.engine.control import HeadlessControl
from core.engine.events import EscalationRaised, StepFinished
from core.engine.executor import FlowExecutor
from core.engine.session import ProjectSession
from core.perception.driver import PlaywrightDriver
from core.project import load_project
from core.sites.server import StaticSite

FIXTURES = Path(__file__).parent / "fixtures" / "params"

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def site():
    s = StaticSite(FIXTURES)
    s.start()
    yield s
    s.stop()


class CrashAt(HeadlessControl):
    """Crashes the browser (CDP ``Browser.crash``) or the page's renderer (``Page.crash``) before one phase."""

    def __init__(self, driver: PlaywrightDriver, index: int, phase: str, what: str = "Browser.crash") -> None:
        self.driver, self.index, self.phase, self.what = driver, index, phase, what
        self.done = False

    def pause_point(self, run_id: str, flow: str, index: int, phase: str) -> None:
        if (index, phase) == (self.index, self.phase) and not self.done:
            self.done = True
            cdp = self.driver.page.context.new_cdp_session(self.driver.page)
            try:
                cdp.send(self.what, timeout=3000)  # a crash never answers
            except Exception:
                pass  # the session dies with what it crashed


def two_clicks() -> tuple[Step, ...]:
    def click(sid: str, name: str) -> Step:
        return Step(sid, Action("click"), target=ElementDescriptor(tag="button", role="button", name=name, text=name))
    return click("s1", "One"), click("s2", "Two")


@pytest.mark.parametrize("phase, what", [("act", "Browser.crash"), ("settle", "Browser.crash"),
                                         ("verify", "Browser.crash"), ("settle", "Page.crash")])
def test_a_browser_that_dies_mid_step_ends_the_run_and_the_step_is_recorded(site, phase: str, what: str) -> None:
    driver = PlaywrightDriver(BrowserSettings(), base_url=site.base_url, headless=True)
    driver.open()
    events: list[Any] = []
    try:
        ex = FlowExecutor(driver, emit=events.append, control=CrashAt(driver, 1, phase, what), screenshots=False,
                          settings=EngineSettings(waits=WaitSettings(retry_delay_ms=0)))
        result = ex.run_flow(Flow("f", "/index.html", two_clicks()), params={})
    finally:
        driver.close()
    assert (result.status, result.error_kind) == ("error", "browser"), result.error
    assert [o.status for o in result.steps] == ["passed", "error"]
    assert [(e.index, e.status) for e in events if isinstance(e, StepFinished)] == [(0, "passed"), (1, "error")]
    assert not [e for e in events if isinstance(e, EscalationRaised)]


def test_the_next_flow_after_a_crash_gets_a_new_browser(site, tmp_path: Path) -> None:
    (tmp_path / "flows").mkdir()
    (tmp_path / "steadyhand.yaml").write_text(yaml.safe_dump({"name": "T", "base_url": site.base_url}))
    for name in ("first", "second"):
        steps = [{"id": "s1", "action": "click", "target": {"tag": "button", "role": "button", "name": "One",
                                                            "text": "One"}}]
        (tmp_path / "flows" / f"{name}.yaml").write_text(
            yaml.safe_dump({"name": name, "start_url": "/index.html", "steps": steps}))
    project = load_project(tmp_path)
    with ProjectSession(project, headless=True, use_store=True, screenshots=False) as session:
        session.control = CrashAt(session.driver, 0, "act")
        first = session.run_flow(project.flows["first"])
        session.control = HeadlessControl()
        second = session.run_flow(project.flows["second"])
        assert session.store is not None
        rows = {r.flow: r.status for r in session.store.list_runs()}
    assert (first.status, first.error_kind) == ("error", "browser")
    assert second.status == "passed", second.error
    assert rows == {"first": "error", "second": "passed"}
