"""The floor of ``bench studio``'s stall figures: an empty Qt event loop's heartbeat, in its own process.

``python -m studio.stall_floor`` runs a ``QCoreApplication`` whose only
work is a heartbeat ``QTimer`` of :data:`studio.bench.HEARTBEAT_MS`, measured
exactly as the studio's (the longest gap between two beats minus the
interval, and the 99th percentile of that lateness), until its standard
input closes; then it prints ``{"stall_ms", "p99_ms", "beats"}`` as JSON on
one line.  Run beside the studio's run, it shows what the machine alone
costs an event loop (cores taken by other processes, timer slack): a
stall of the studio above it is the studio's own.
"""
from __future__ import annotations

import json
import os
import sys
import threading
import time

__all__ = ["main"]


def main() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QCoreApplication, QMetaObject, Qt, QTimer  # noqa: PLC0415

    from .bench import HEARTBEAT_MS  # noqa: PLC0415

    app = QCoreApplication(sys.argv[:1])
    gaps: list[float] = []
    last = [time.monotonic()]

    def beat() -> None:
        now = time.monotonic()
        gaps.append((now - last[0]) * 1000.0)
        last[0] = now

    heart = QTimer()
    heart.setInterval(HEARTBEAT_MS)
    heart.timeout.connect(beat)

    def wait_for_eof() -> None:
        sys.stdin.read()
        QMetaObject.invokeMethod(app, "quit", Qt.ConnectionType.QueuedConnection)

    threading.Thread(target=wait_for_eof, name="stall-floor-stdin", daemon=True).start()
    last[0] = time.monotonic()
    heart.start()
    app.exec()
    late = sorted(max(0.0, g - HEARTBEAT_MS) for g in gaps)
    p99 = late[min(len(late) - 1, int(len(late) * 0.99))] if late else 0.0
    print(json.dumps({"stall_ms": round(late[-1], 1) if late else 0.0, "p99_ms": round(p99, 1), "beats": len(gaps)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
