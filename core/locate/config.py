"""Settings of the locator fallback chain (R2); defined with the other run settings."""
from __future__ import annotations

from core.domain.settings import STRATEGIES, LocatorConfig

__all__ = ["LocatorConfig", "STRATEGIES"]
