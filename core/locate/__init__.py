"""Locator fallback chain (R2): find a remembered element among candidates.

Pure logic, no browser: :func:`resolve` takes an
:class:`~core.domain.ElementDescriptor` and the candidates of an
observation and returns a :class:`~core.domain.Resolution`.
"""
from .chain import INDEPENDENT, LEVELS, resolve
from .config import STRATEGIES, LocatorConfig
from .inputs import LocateInputs, TextBox, load_crop
from .safety import selector_contradicts
from .semantic import WEIGHTS

__all__ = ["resolve", "LocatorConfig", "STRATEGIES", "LEVELS", "WEIGHTS", "INDEPENDENT", "LocateInputs",
           "TextBox", "load_crop", "selector_contradicts"]
