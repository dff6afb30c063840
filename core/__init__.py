"""Steadyhand engine: no Qt, ever.  Runs headless from the CLI, CI and benchmarks."""
__version__ = "0.1.0"
