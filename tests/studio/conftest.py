"""Studio tests run offscreen: the platform is chosen before any QApplication exists."""
from __future__ import annotations

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"

from pathlib import Path  # noqa: E402
from typing import Callable, Iterator  # noqa: E402

import pytest  # noqa: E402

from studio.bridge import EngineFactory  # noqa: E402
from studio.main_window import MainWindow  # noqa: E402
from studio.samples import SampleProject, sample_project  # noqa: E402
from studio.testing import RecordingEngine  # noqa: E402


@pytest.fixture
def project(tmp_path: Path) -> SampleProject:
    """The sample project (two flows), rooted in a temporary folder."""
    return sample_project(tmp_path)


@pytest.fixture
def make_window(qtbot, project: SampleProject) -> Iterator[Callable[..., MainWindow]]:  # noqa: ANN001
    """Build a MainWindow over the sample project with an injected engine factory.

    Every window is closed (engine stopped and joined) at teardown.
    """
    windows: list[MainWindow] = []

    def make(engine_factory: EngineFactory, **options: object) -> MainWindow:
        w = MainWindow(project.root, engine_factory=engine_factory, project_loader=lambda _p: project,
                       close_timeout=5.0, **options)  # type: ignore[arg-type]
        qtbot.addWidget(w)
        windows.append(w)
        return w

    yield make
    for w in windows:
        w.close()


@pytest.fixture
def recorded(make_window) -> tuple[MainWindow, list[RecordingEngine]]:  # noqa: ANN001
    """A window over a RecordingEngine (the test plays the engine's events)."""
    engines: list[RecordingEngine] = []
    return make_window(RecordingEngine.factory(engines)), engines


@pytest.fixture
def paused_at_escalation(qtbot) -> Callable[..., MainWindow]:  # noqa: ANN001
    """A maker of the studio on a real project folder with only one flow left, running it on show in real Chromium,
    returned once the run is paused at its first escalation (``timeout_ms``, ms)."""
    from studio.run_state import RunState

    def make(project: Path, flow: str, *, timeout_ms: int = 120_000) -> MainWindow:
        for f in (project / "flows").glob("*.yaml"):
            if f.stem != flow:
                f.unlink()
        w = MainWindow(project, run_on_show=True, close_timeout=15.0)
        qtbot.addWidget(w)
        w.resize(1400, 900)
        w.show()
        qtbot.waitUntil(lambda: w.state is RunState.PAUSED and w.escalations_panel.model.open_count == 1,
                        timeout=timeout_ms)
        return w

    return make
