"""The store writer lowers the interpreter's switch interval (never raises it): the engine thread waits for the
GIL the writer holds at most SWITCH_INTERVAL_S after each pipe read or write to the browser."""
import sys

from core.store.writer import SWITCH_INTERVAL_S, BackgroundWriter


def test_starting_the_writer_lowers_the_switch_interval():
    before = sys.getswitchinterval()
    try:
        sys.setswitchinterval(0.005)
        w = BackgroundWriter()
        done = []
        w.submit(done.append, (1,))
        assert w.flush(5.0)
        assert done == [1]
        assert sys.getswitchinterval() <= SWITCH_INTERVAL_S + 1e-9
        w.close()
    finally:
        sys.setswitchinterval(before)


def test_a_lower_interval_is_kept():
    before = sys.getswitchinterval()
    try:
        sys.setswitchinterval(SWITCH_INTERVAL_S / 5)
        w = BackgroundWriter()
        w.submit(lambda: None)
        assert w.flush(5.0)
        assert abs(sys.getswitchinterval() - SWITCH_INTERVAL_S / 5) < 1e-9
        w.close()
    finally:
        sys.setswitchinterval(before)
