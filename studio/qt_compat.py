"""Work-arounds for bugs of the installed Qt binding, each guarded by a runtime probe.

PySide6-Essentials 6.12.0 on CPython 3.11: ``SignalInstance.emit()`` returns
``True`` without a new reference, so every signal emitted from Python takes
one reference from ``True``; after a few hundred emits the interpreter aborts
with ``Fatal Python error: bool_dealloc: deallocating True or False``.
(CPython >= 3.12 makes ``True`` immortal, so it cannot die there.)

:func:`install` measures the leak once on a private signal and, only when
it is there, wraps ``SignalInstance.emit`` to give the reference back.  It
is idempotent and becomes a no-op on a fixed binding.
"""
from __future__ import annotations

import ctypes
import sys
from typing import Any

from PySide6.QtCore import QObject, Signal, SignalInstance

__all__ = ["install", "emit_leaks_bool_reference", "EMIT_FIX_INSTALLED"]

_incref = ctypes.pythonapi.Py_IncRef
_incref.argtypes = [ctypes.py_object]
_incref.restype = None

#: True once :func:`install` wrapped ``SignalInstance.emit``.
EMIT_FIX_INSTALLED = False
_PROBES = 16


class _Probe(QObject):
    fired = Signal()


def emit_leaks_bool_reference() -> bool:
    """True when ``SignalInstance.emit`` drops a reference to the bool it returns.

    The references the probe took are given back before returning.
    """
    probe = _Probe()
    before = sys.getrefcount(True), sys.getrefcount(False)
    results = [probe.fired.emit() for _ in range(_PROBES)]
    del results
    after = sys.getrefcount(True), sys.getrefcount(False)
    lost_true, lost_false = before[0] - after[0], before[1] - after[1]
    for _ in range(max(0, lost_true)):
        _incref(True)
    for _ in range(max(0, lost_false)):
        _incref(False)
    return lost_true == _PROBES or lost_false == _PROBES


def install() -> bool:
    """Wrap ``SignalInstance.emit`` when the binding leaks; True when the fix is active."""
    global EMIT_FIX_INSTALLED  # noqa: PLW0603 - process-wide, installed once
    if EMIT_FIX_INSTALLED:
        return True
    if not emit_leaks_bool_reference():
        return False
    original = SignalInstance.emit

    def emit(self: SignalInstance, *args: Any) -> Any:
        result = original(self, *args)
        if result is True or result is False:
            _incref(result)  # the binding returned a borrowed reference as if it were new
        return result

    emit.__doc__ = original.__doc__
    SignalInstance.emit = emit  # type: ignore[method-assign]
    EMIT_FIX_INSTALLED = True
    return True
