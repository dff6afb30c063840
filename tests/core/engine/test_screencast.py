"""The screencast plugin on the run path: a real session, real Chromium, a page that keeps repainting."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from core.engine.events import ObservationMade, ScreencastFrame
from core.engine.session import ProjectSession
from core.project import load_project
from studio.moving_page import moving_project, serve_moving_page

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def watched(tmp_path_factory: pytest.TempPathFactory) -> tuple[ProjectSession, list[object], object, int]:
    """One run of the moving page's flow with the screencast on (shared: a real run takes a while)."""
    return _run(tmp_path_factory.mktemp("watched"), screencast=True)


def _run(tmp_path: Path, *, screencast: bool) -> tuple[ProjectSession, list[object], object, int]:
    events: list[object] = []
    with serve_moving_page() as base:
        project = load_project(moving_project(tmp_path / "moving", base, rounds=2))
        session = ProjectSession(project, emit=events.append, use_store=False, screencast=screencast,
                                 evidence="full")
        session.open()
        try:
            result = session.run_flow(project.flows["note"])
            after_run = len([e for e in events if isinstance(e, ScreencastFrame)])
            # the spinner keeps repainting: a screencast still running would keep sending frames here
            t0 = time.monotonic()
            while time.monotonic() - t0 < 1.0:
                session.driver.page.wait_for_timeout(100)
        finally:
            session.close()
    return session, events, result, after_run


def test_frames_stream_while_a_flow_runs_and_stop_with_it(watched) -> None:  # noqa: ANN001
    session, events, result, after_run = watched
    assert result.status == "passed"
    frames = [e for e in events if isinstance(e, ScreencastFrame)]
    assert len(frames) >= 10
    assert {f.run_id for f in frames} == {result.run_id} and {f.flow for f in frames} == {"note"}
    f = frames[-1]
    assert f.jpeg[:2] == b"\xff\xd8" and (f.width, f.height) == (1280.0, 800.0)
    # stopped when the flow ended: not one frame more while the page went on moving
    assert len(frames) == after_run
    assert session.screencast is not None and not session.screencast.active
    assert session.screencast.starts == session.screencast.stops == 1


def test_the_secret_field_is_masked_in_every_frame_after_it_was_typed(watched) -> None:  # noqa: ANN001
    _session, events, _result, _ = watched
    typed = next(i for i, e in enumerate(events) if isinstance(e, ObservationMade) and e.when == "after"
                 and e.index == 1)  # the after-observation of "Type the code 1"
    code = next(c for c in events[typed].observation.candidates if c.descriptor.id == "code")
    box = code.descriptor.bbox
    later = [e for e in events[typed:] if isinstance(e, ScreencastFrame)]
    assert later, "frames came after the code was typed"
    for f in later:  # every frame shown after the secret was typed paints over the field
        assert any(m.x <= box.x and m.y <= box.y and m.x + m.width >= box.x + box.width
                   and m.y + m.height >= box.y + box.height for m in f.masks)


def test_steadyhand_run_never_starts_the_screencast(tmp_path: Path) -> None:
    session, events, result, _ = _run(tmp_path, screencast=False)
    assert result.status == "passed"
    assert not [e for e in events if isinstance(e, ScreencastFrame)] and session.screencast is None
