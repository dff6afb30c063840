"""Reads off the GUI thread reach their panel only while it lives (studio/offthread.py)."""
from __future__ import annotations

import threading
import time

from studio.offthread import OffThreadReads


def test_a_read_hands_its_result_over_and_is_no_longer_busy_from_then_on() -> None:
    got: list[object] = []
    seen_busy: list[bool] = []
    reads: OffThreadReads

    def hand_over(result: object) -> None:
        got.append(result)

    reads = OffThreadReads("t-read", hand_over)
    gate = threading.Event()
    reads.start(lambda x: (gate.wait(5), x * 2)[1], 21)
    seen_busy.append(reads.busy())
    gate.set()
    assert reads.wait(5)
    assert got == [42]
    assert seen_busy == [True] and not reads.busy()


def test_no_hand_over_after_close_even_for_a_read_that_was_going() -> None:
    got: list[object] = []
    reads = OffThreadReads("t-read", got.append)
    gate = threading.Event()
    t = reads.start(lambda: (gate.wait(5), "late")[1])
    closing = threading.Thread(target=reads.close, args=(5.0,))
    closing.start()
    deadline = time.monotonic() + 5
    while not reads._closed and time.monotonic() < deadline:  # noqa: SLF001 - marked before the read ends
        time.sleep(0.001)
    assert reads._closed  # noqa: SLF001
    gate.set()
    closing.join(5)
    t.join(5)
    assert got == [] and not reads.busy()


def test_close_waits_for_the_read_going_and_says_when_it_did_not_end() -> None:
    reads = OffThreadReads("t-read", lambda _r: None)
    gate = threading.Event()
    reads.start(gate.wait, 5)
    assert reads.close(0.05) is False  # still reading: the close gave up waiting, the hand-over is off
    gate.set()
    assert reads.wait(5) is True


def test_a_start_after_close_opens_the_reads_again() -> None:
    got: list[object] = []
    reads = OffThreadReads("t-read", got.append)
    assert reads.close(1) is True
    reads.start(lambda: "again")
    assert reads.wait(5)
    assert got == ["again"]


def test_a_read_that_raises_is_not_busy_afterwards() -> None:
    reads = OffThreadReads("t-read", lambda _r: None)
    old = threading.excepthook
    threading.excepthook = lambda _args: None
    try:
        reads.start(lambda: 1 / 0)
        assert reads.wait(5)
    finally:
        threading.excepthook = old
    assert not reads.busy()


def test_a_closed_review_panel_gets_no_result_of_a_read_still_going(qtbot, tmp_path) -> None:  # noqa: ANN001
    from studio.views.heal_review import HealReviewPanel

    gate = threading.Event()

    class SlowSource:
        def items(self, *, all_states: bool = False) -> list:
            gate.wait(5)
            return []

    panel = HealReviewPanel([SlowSource()], root=tmp_path)
    qtbot.addWidget(panel)
    handed: list[object] = []
    panel._read_done.connect(handed.append)  # noqa: SLF001 - the hand-over signal itself
    panel.refresh_later()
    closing = threading.Timer(0.2, gate.set)
    closing.start()
    panel.close()  # marks the reads closed and joins the read (up to 5 s): the gate opens meanwhile
    assert panel.wait_read(5)
    qtbot.wait(200)  # a hand-over would have been delivered by now
    assert handed == []
    panel.refresh_later()  # the panel lives: a read asked for afterwards is served
    qtbot.waitUntil(lambda: len(handed) == 1, timeout=5000)
