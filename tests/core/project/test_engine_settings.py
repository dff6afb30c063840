"""The project file's run settings become one frozen EngineSettings; max_steps is a budget of the run, not a limit on a flow file."""
from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path

import pytest

from core.domain import BreakerSettings, BrowserSettings, EngineSettings, LocatorConfig, WaitSettings
from core.project import ProjectError, load_project
from core.project.schema import BreakerModel, BrowserModel, LocatorModel, ProjectModel, WaitModel

ROOT = Path(__file__).resolve().parents[3]


def make_project(tmp_path: Path, settings: str, flows: dict[str, str] | None = None) -> Path:
    root = tmp_path / "proj"
    (root / "flows").mkdir(parents=True)
    (root / "steadyhand.yaml").write_text(textwrap.dedent(settings), encoding="utf-8")
    for name, text in (flows or {}).items():
        (root / "flows" / name).write_text(text, encoding="utf-8")
    return root


def flow_with(n: int) -> str:
    return "name: long\nsteps:\n" + "".join(f"- id: s{i}\n  action: wait\n" for i in range(1, n + 1))


def test_a_file_without_run_sections_gets_the_domain_defaults(tmp_path: Path) -> None:
    project = load_project(make_project(tmp_path, "name: p\nsite: demo\n"))
    assert project.engine_settings == EngineSettings()


def test_every_section_of_the_file_reaches_the_engine_settings(tmp_path: Path) -> None:
    project = load_project(make_project(tmp_path, """\
        name: p
        site: demo
        browser: {headless: false, viewport: {width: 1024, height: 700}, device_scale_factor: 2,
                  slow_mo_ms: 50, locale: de-DE, timezone: Europe/Berlin, action_timeout_ms: 4000,
                  navigation_timeout_ms: 9000, executable_path: /opt/chromium}
        locator: {margin: 0.2, fuzzy_threshold: 0.9, position_tolerance_px: 8}
        breaker: {threshold: 4, read_only_threshold: 6, write_threshold: 1, recovery_timeout_s: 60,
                  max_failed_probes: 2, loop_repeats: 2, loop_window: 4, stagnation_rounds: 5}
        waits: {retries: 1, retry_delay_ms: 100, settle_max_ms: 700, quiet_ms: 200, loading_max_ms: 10000,
                assertion_timeout_ms: 3000, settle_learned_max_ms: 3000, submit_factor: 3, learn_alpha: 0.5}
        max_steps: 12
        """))
    s = project.engine_settings
    assert s.browser == BrowserSettings(headless=False, executable_path="/opt/chromium", viewport_width=1024,
                                        viewport_height=700, device_scale_factor=2.0, slow_mo_ms=50, locale="de-DE",
                                        timezone="Europe/Berlin", action_timeout_ms=4000, navigation_timeout_ms=9000)
    assert s.locator == LocatorConfig(margin=0.2, fuzzy_threshold=0.9, position_tolerance_px=8.0)
    assert s.breaker == BreakerSettings(threshold=4, read_only_threshold=6, write_threshold=1, recovery_timeout_s=60.0,
                                        max_failed_probes=2, loop_repeats=2, loop_window=4, stagnation_rounds=5)
    assert s.waits == WaitSettings(retries=1, retry_delay_ms=100, settle_max_ms=700, quiet_ms=200,
                                   loading_max_ms=10000, assertion_timeout_ms=3000, settle_learned_max_ms=3000,
                                   submit_factor=3.0, learn_alpha=0.5)
    assert s.max_steps == 12
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.max_steps = 99  # type: ignore[misc]


@pytest.mark.parametrize("model, settings", [
    (BreakerModel, BreakerSettings()), (LocatorModel, LocatorConfig()), (WaitModel, WaitSettings()),
])
def test_schema_defaults_are_the_domain_defaults(model: type, settings: object) -> None:
    for name, value in model().model_dump().items():
        assert getattr(settings, name) == value, name


def test_browser_schema_defaults_are_the_domain_defaults() -> None:
    dumped = BrowserModel().model_dump()
    viewport = dumped.pop("viewport")
    b = BrowserSettings()
    assert viewport == {"width": b.viewport_width, "height": b.viewport_height}
    assert dumped == {k: v for k, v in dataclasses.asdict(b).items() if not k.startswith("viewport_")}
    assert set(dumped) | {"viewport_width", "viewport_height"} == {f.name for f in dataclasses.fields(b)}


def test_waits_and_max_steps_are_in_the_schema_with_defaults() -> None:
    model = ProjectModel(name="p", site="demo")
    assert model.waits == WaitModel() and model.max_steps == EngineSettings().max_steps
    assert set(WaitModel.model_fields) == {f.name for f in dataclasses.fields(WaitSettings)}


@pytest.mark.parametrize("waits, field", [
    ("{retries: -1}", "waits.retries"), ("{quiet_ms: 0}", "waits.quiet_ms"),
    ("{loading_max_ms: 999999}", "waits.loading_max_ms"), ("{retry_delai_ms: 3}", "waits.retry_delai_ms"),
])
def test_out_of_range_waits_name_the_field(tmp_path: Path, waits: str, field: str) -> None:
    with pytest.raises(ProjectError) as info:
        load_project(make_project(tmp_path, f"name: p\nsite: demo\nwaits: {waits}\n"))
    assert info.value.location == f"field '{field}'"


def test_a_flow_longer_than_max_steps_loads_max_steps_is_a_budget_of_the_run(tmp_path: Path) -> None:
    # issue 19, failure kind 7: a recording of 79 steps was refused with max_steps 30 and locked the project
    root = make_project(tmp_path, "name: p\nsite: demo\nmax_steps: 30\n", {"long.yaml": flow_with(79)})
    project = load_project(root)
    assert len(project.flows["long"].steps) == 79 and not project.invalid
    assert project.engine_settings.run_budget(79) == 79 + 30


def test_the_run_budget_is_each_step_once_plus_max_steps() -> None:
    assert EngineSettings(max_steps=3).run_budget(4) == 7
    assert EngineSettings().run_budget(0) == EngineSettings().max_steps


@pytest.mark.parametrize("name", ["demo", "miniwob"])
def test_the_bundled_projects_load_with_their_settings(name: str) -> None:
    project = load_project(ROOT / "projects" / name)
    assert project.engine_settings.browser.viewport_width == project.settings.browser.viewport.width
    assert not project.invalid


def test_an_anti_loop_window_smaller_than_its_repeats_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ProjectError, match="loop_window"):
        load_project(make_project(tmp_path, "name: p\nsite: demo\nbreaker: {loop_repeats: 4, loop_window: 3}\n"))
