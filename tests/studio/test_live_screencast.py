"""The live view streams the engine's page (CDP screencast) during a REAL run: Qt widgets offscreen, real Chromium."""
from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QBuffer, QByteArray, QIODevice
from PySide6.QtGui import QColor, QImage

from core.domain import BBox
from core.engine.events import ScreencastFrame
from studio.bridge import MASK_COLOR, FrameDecoder, thread_engine_factory
from studio.main_window import MainWindow
from studio.moving_page import moving_project, serve_moving_page
from studio.run_state import RunState

TIMEOUT_MS = 180_000


def _jpeg(color: QColor, size: tuple[int, int] = (1280, 800)) -> bytes:
    img = QImage(*size, QImage.Format.Format_RGB32)
    img.fill(color)
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    img.save(buf, "JPEG", 70)
    return bytes(data)


def test_the_decoder_keeps_only_the_newest_frame_and_wakes_once(qtbot) -> None:  # noqa: ANN001
    woken = threading.Event()
    wakes: list[float] = []
    decoder = FrameDecoder(lambda: (wakes.append(time.monotonic()), woken.set()))
    frames = [ScreencastFrame("r", "f", 0, _jpeg(QColor(10 * i, 0, 0)), 1280.0, 800.0) for i in range(20)]
    try:
        for f in frames:  # offered faster than they decode: never more than one waits
            decoder.offer(f, f.jpeg, "JPEG", f.width, (BBox(100, 100, 200, 50),))
        # the newest frame ends up ready (read without taking it, so that the test sees the decoder's own state)
        qtbot.waitUntil(lambda: decoder._ready is not None and decoder._ready.event is frames[-1],  # noqa: SLF001
                        timeout=10_000)
        assert woken.wait(5)
        live = decoder.take()
        assert live is not None and live.event is frames[-1]  # the newest, whatever was decoded before it
        assert live.image.size().width() == 1280
        assert live.image.pixelColor(200, 125) == MASK_COLOR  # the mask is painted into the frame itself
        assert decoder.decoded < 20 and len(wakes) <= decoder.decoded  # skipped frames were never decoded
        assert decoder.take() is None
    finally:
        decoder.close()


@pytest.mark.browser
def test_the_live_view_streams_a_real_run_and_the_screencast_stops_with_it(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    with serve_moving_page() as base:
        project = moving_project(tmp_path / "moving", base, rounds=3)
        # the engine in a thread of this process, so that the test can look into its screencast plugin (the
        # studio runs it in its own process: test_gui_thread_relief streams a run through that)
        w = MainWindow(project, close_timeout=15.0, engine_factory=thread_engine_factory)
        qtbot.addWidget(w)
        w.resize(1400, 900)
        w.show()
        painted_at_start = w.live_view.frames_painted
        assert w.start_run(("note",))
        qtbot.waitUntil(lambda: w.live_view.frames_painted - painted_at_start >= 10 or w.state is RunState.FINISHED,
                        timeout=TIMEOUT_MS)
        # frames of the real page reach the widget while the run goes, with the DOM boxes over them
        assert w.state is not RunState.FINISHED, "the run ended before ten live frames were painted"
        lv = w.live_view
        assert lv.streaming and lv.image.width() == 1280
        qtbot.waitUntil(lambda: w.state is RunState.FINISHED, timeout=TIMEOUT_MS)
        assert [r.status for r in w.steps_panel.model.rows("note")] == ["passed"] * 7
        assert w.bridge.frames_shown >= 10 and lv.frames_painted - painted_at_start >= 10
        names = {c.descriptor.name for c in lv.candidates}
        assert {"Save", "Note", "Code"} <= names and lv.boxes_current()  # the boxes are of the page shown
        # the secret typed into "Code" never shows: its field is painted over in the frame shown
        code = next(c for c in lv.candidates if c.descriptor.name == "Code").descriptor.bbox
        k = lv.device_pixel_ratio
        px = lv.image.pixelColor(round((code.x + code.width / 2) * k), round((code.y + code.height / 2) * k))
        assert max(px.red(), px.green(), px.blue()) < 90, px.name()
        # the screencast ended with the run: stopped on the engine's side, nothing more reaches the view
        screencast = w.bridge.engine.session.screencast
        assert not screencast.active and screencast.starts == screencast.stops >= 1
        shown = w.bridge.frames_shown
        qtbot.wait(1000)
        assert w.bridge.frames_shown == shown
        w.close()


def test_boxes_of_another_page_are_not_drawn_over_a_live_frame(qtbot) -> None:  # noqa: ANN001
    from studio.samples import sample_observation  # noqa: PLC0415
    from studio.views.live_view import LiveView  # noqa: PLC0415

    lv = LiveView()
    qtbot.addWidget(lv)
    lv.resize(800, 500)
    obs = sample_observation("login")
    frame = QImage(obs.viewport[0], obs.viewport[1], QImage.Format.Format_RGB32)
    frame.fill(QColor("white"))
    lv.set_frame(frame, float(obs.viewport[0]), url=obs.url, scroll=obs.scroll)
    lv.set_observation(obs, QImage())  # a streaming run's observation: its boxes, not its picture
    assert lv.streaming and lv.candidates == obs.candidates and lv.boxes_current()
    box = next(c for c in obs.candidates if c.descriptor.bbox is not None)
    at = lv.map_to_widget(box.descriptor.bbox).center()
    assert lv.candidate_at(at) is not None
    # the page navigated (a new flow, a link): the live frame shows another URL, the boxes are not its own
    lv.set_frame(frame, float(obs.viewport[0]), url=obs.url + "next", scroll=obs.scroll)
    assert not lv.boxes_current() and lv.candidate_at(at) is None
    # scrolled since the observation: the boxes would point at the wrong place
    lv.set_frame(frame, float(obs.viewport[0]), url=obs.url, scroll=(obs.scroll[0], obs.scroll[1] + 300))
    assert not lv.boxes_current()
    lv.set_frame(frame, float(obs.viewport[0]), url=obs.url, scroll=obs.scroll)
    assert lv.boxes_current()
