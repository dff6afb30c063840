"""Benchmarks of engine parts on public data sets (no browser needed for the locator)."""
from .similo import BenchReport, format_report, run_similo_benchmark

__all__ = ["BenchReport", "format_report", "run_similo_benchmark"]
