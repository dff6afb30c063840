"""Run a flow exported as a plain Playwright script (``steadyhand export --style script``) and time it.

One timing for every bench that sets Steadyhand beside the script it replaces (``bench tweaks``, ``bench
overhead``): the same clock (``time.perf_counter``) around the same work - the site's reset, a fresh browser
context made by the script's own ``new_context(browser)``, and its ``run(page, base_url, params)`` - so the
two sides of a comparison are timed alike.

Errors: none raised by :func:`timed_script_run` for the script's own failure (it is the verdict, returned as
text); :func:`load_script` raises what importing the file raises (SyntaxError, ImportError).
"""
from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path
from typing import Any, Callable, Mapping

__all__ = ["load_script", "script_error", "timed_script_run"]


def load_script(path: Path, module_name: str) -> Any:
    """Import the exported script at ``path`` as a module named ``module_name`` (not left in ``sys.modules``)."""
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(module_name, None)
    return module


def _first_line(text: str, limit: int = 300) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line[:limit]


def script_error(exc: BaseException) -> str:
    """``"TimeoutError: Locator.fill: Timeout 5000ms exceeded. (waiting for get_by_role(...))"``: the first line
    of the exception (at most 300 characters) and the locator Playwright was waiting for, when it says."""
    text = str(exc)
    waiting = next((ln.strip(" -") for ln in text.splitlines() if "waiting for" in ln), "")
    return f"{type(exc).__name__}: {_first_line(text)}" + (f" ({waiting})" if waiting else "")


def timed_script_run(module: Any, browser: Any, base_url: str, params: Mapping[str, str],
                     reset: Callable[[], None] | None = None) -> tuple[float, str]:
    """Run an exported script once; ``(seconds, error)``.

    Seconds: wall time (``time.perf_counter``) of ``reset()`` (when given) + ``module.new_context(browser)`` +
    ``module.run(page, base_url, params)`` + closing the context (as the Steadyhand side's run closes its own).  ``error`` is "" when the script passed, else :func:`script_error` of what it raised.
    """
    started = time.perf_counter()
    if reset is not None:
        reset()
    context = module.new_context(browser)
    error = ""
    try:
        module.run(context.new_page(), base_url, dict(params))
    except Exception as exc:  # noqa: BLE001 - the script's verdict
        error = script_error(exc)
    finally:
        context.close()
    return time.perf_counter() - started, error
