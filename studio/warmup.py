"""Work the studio does once, right after its window shows, so that a run does not pay for it on the GUI thread.

Two costs stalled the GUI thread during the first run (``bench studio --why``):

* imports: modules first needed when the run started or went (the
  engine's, 1.2 s on the GUI thread while the engine ran in a thread; now
  that it runs in its own process, the process machinery and the store's
  SQLite dialect); PySide6's import hook also reads each new module's
  source (``inspect.getsource``) to look for PySide use;
* garbage collection: the first full collections walked the whole heap of
  the start-up (Qt wrappers, SQLAlchemy's mappers, the imported modules):
  up to 380 ms each.

:func:`start_warmup` imports those modules on a background thread, then
collects once and moves every object alive at that point into the
permanent generation (``gc.freeze()``: later collections skip them).
"""
from __future__ import annotations

import gc
import importlib
import logging
import threading

__all__ = ["WARM_MODULES", "start_warmup", "warm_up"]

_log = logging.getLogger(__name__)

#: Modules the studio's own process imports when a run starts and goes (the engine and the recorder run in their
#: own processes, studio.engine_process): found with ``bench studio --why``, which lists the modules imported
#: while its run went.
WARM_MODULES = (
    "studio.engine_process",
    "multiprocessing.popen_spawn_posix",
    "multiprocessing.resource_tracker",
    "sqlalchemy.dialects.sqlite",
)

def warm_up(modules: tuple[str, ...] = WARM_MODULES) -> list[str]:
    """Import ``modules`` (those that fail are skipped: the run says why when it needs them), then
    ``gc.collect()`` and ``gc.freeze()``; returns the modules that could not be imported."""
    failed = []
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a warm-up never fails the studio
            failed.append(name)
            _log.debug("warm-up: cannot import %s", name, exc_info=True)
    gc.collect()
    gc.freeze()
    return failed


def start_warmup(modules: tuple[str, ...] = WARM_MODULES) -> threading.Thread:
    """Run :func:`warm_up` on a daemon thread named ``studio-warmup`` (started); join it to wait for it."""
    t = threading.Thread(target=warm_up, args=(modules,), name="studio-warmup", daemon=True)
    t.start()
    return t
