"""core.engine.heap: the start-up heap frozen once per process, the young generation's threshold raised."""
from __future__ import annotations

import subprocess
import sys


def test_freeze_startup_freezes_the_heap_once_and_raises_the_young_threshold() -> None:
    """In a fresh interpreter (the setting is the whole process's): objects alive before the call are in the
    permanent generation after it, the young threshold is YOUNG_THRESHOLD, and a second call does nothing."""
    code = (
        "import gc, json\n"
        "from core.engine.heap import YOUNG_THRESHOLD, freeze_startup\n"
        "before = gc.get_freeze_count()\n"
        "first, second = freeze_startup(), freeze_startup()\n"
        "print(json.dumps([before, gc.get_freeze_count(), gc.get_threshold()[0], YOUNG_THRESHOLD, first, second]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    before, frozen, young, expected, first, second = __import__("json").loads(out.stdout.strip().splitlines()[-1])
    assert before == 0 and frozen > 1000  # the interpreter's and the module's objects
    assert young == expected > 700  # CPython's default is 700
    assert first is True and second is False
