"""Benchmarks of engine parts on public data sets (no browser needed for the locator)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .similo import BenchReport, format_report, run_similo_benchmark

__all__ = ["BenchReport", "format_report", "run_similo_benchmark"]


def __getattr__(name: str) -> Any:
    """The similo benchmark's names, imported on first use: the CLI's parser loads this package for every command
    and needs none of the locator chain behind them."""
    if name in __all__:
        from . import similo

        return getattr(similo, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
