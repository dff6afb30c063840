"""The PySide6 6.12.0 emit refcount work-around keeps ``True`` alive."""
from __future__ import annotations

import sys

from PySide6.QtCore import QObject, Signal

import studio  # noqa: F401 - importing the package installs the fix
from studio import qt_compat


class _Emitter(QObject):
    fired = Signal(object)


def test_many_emits_do_not_take_references_from_true() -> None:
    e = _Emitter()
    got: list[int] = []
    e.fired.connect(got.append)
    before = sys.getrefcount(True)
    for i in range(5000):
        e.fired.emit(i)
    assert len(got) == 5000
    assert sys.getrefcount(True) >= before - 5  # unpatched 6.12.0 loses exactly 5000


def test_probe_reports_no_leak_once_installed() -> None:
    qt_compat.install()
    assert qt_compat.emit_leaks_bool_reference() is False
