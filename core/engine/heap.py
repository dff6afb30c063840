"""The garbage collector of a process that replays flows: its start-up heap frozen, young collections rarer.

Python's cyclic garbage collector walks the whole heap at every full
collection.  In a process that replays flows that heap is mostly the
start-up's: the engine's modules, SQLAlchemy's mappers, Playwright's
protocol objects, the browser's connection.  Measured on the demo's four
flows (28 steps a round, the 2-core test machine): one full collection
every three rounds, 105 ms, on the step that happened to allocate; 99
young collections (700 allocations each), about 1 ms each - 74 ms of a
round's ~4.9 s.  After :func:`freeze_startup`: 17 ms a round, no full
collection.

:func:`freeze_startup` moves every object alive at that point into the
permanent generation (``gc.freeze()``: later collections skip them) and
raises the first generation's threshold to :data:`YOUNG_THRESHOLD`.  It
changes the whole process, so it is called where Steadyhand owns the
process - ``steadyhand run`` once its browser is up, the studio's engine
process, ``bench overhead`` - never by the session itself (a user's pytest
process keeps its own settings).
"""
from __future__ import annotations

import gc

__all__ = ["YOUNG_THRESHOLD", "freeze_startup"]

#: Allocations of container objects between two young collections (CPython's default is 700): a young
#: collection of 5,000 costs about 2 ms on the test machine, and a step allocates some 800.
YOUNG_THRESHOLD = 5000

_frozen = [False]


def freeze_startup() -> bool:
    """Freeze the heap as it is now and raise the young threshold; once per process (later calls do nothing).

    Returns whether this call did it.  Objects frozen are never collected: call it after the start-up's
    garbage is gone (a fresh session has made little).
    """
    if _frozen[0]:
        return False
    _frozen[0] = True
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
    return True
