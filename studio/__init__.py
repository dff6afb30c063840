"""Steadyhand Studio: PySide6 views, item models and the engine bridge; thin, no engine logic.

Importing the package installs the guarded work-around of
:mod:`studio.qt_compat` (PySide6 6.12.0 drops a reference to ``True`` on
every Python-side signal emit, which aborts CPython 3.11).
"""
from . import qt_compat as _qt_compat

_qt_compat.install()

__all__: list[str] = []
