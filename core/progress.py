"""Progress of long commands: a rich progress bar on a terminal, plain lines otherwise.

``steadyhand run`` shows a bar over its flows (and the steps of the flow
running); the ``bench`` commands a bar over their episodes, flows or
versions.  The bar is drawn only when both the stream it is drawn on
(stderr) and stdout are terminals; in a pipe, a file or a CI log the same
command writes plain lines and not one escape code (``TERM=dumb`` and
``STEADYHAND_PROGRESS=plain`` force plain lines too; ``STEADYHAND_PROGRESS=bar``
forces the bar, for a terminal that is not a tty).

Lines given to :meth:`Progress.log` are printed in both modes (above the bar
on a terminal, so nothing is lost or overwritten).  This module imports
nothing of the project (it sits at the bottom of the import layers).
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import IO, Any

__all__ = ["Progress", "use_bar", "counted"]


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """A count a person reads: ``"1 heal"``, ``"2 heals"``, ``"no heals"`` (never ``"heal(s)"``).

    ``plural`` is the plural form when it is not ``noun + "s"`` (``"success"`` -> ``"successes"``).
    """
    return f"{n if n else 'no'} {noun if n == 1 else (plural or noun + 's')}"


def use_bar(stream: IO[str] | None = None) -> bool:
    """True when a bar may be drawn on ``stream`` (default stderr): it and stdout are terminals.

    ``STEADYHAND_PROGRESS`` (``bar`` or ``plain``) overrides; ``TERM=dumb`` means plain.
    """
    forced = os.environ.get("STEADYHAND_PROGRESS", "").strip().lower()
    if forced in ("bar", "plain"):
        return forced == "bar"
    if os.environ.get("TERM", "") == "dumb":
        return False
    stream = sys.stderr if stream is None else stream
    return _isatty(stream) and _isatty(sys.stdout)


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


class Progress:
    """A bar over ``total`` items (``what``: "flows", "episodes"...) with an optional inner bar over steps.

    Use as a context manager; :meth:`advance` counts one item done, :meth:`start_item` names the item under
    way (and, with ``steps``, starts the inner bar), :meth:`step` advances the inner bar, :meth:`log` prints
    a line.  ``bar=None`` decides by :func:`use_bar`.  ``advance_on`` makes the instance usable as a bench's
    ``progress(line)`` callback: each line is logged, and a line for which it returns True counts one item.
    With ``enabled=False`` (``-q``) nothing is drawn and :meth:`log` is silent.
    """

    def __init__(self, total: int | None, what: str, *, stream: IO[str] | None = None, bar: bool | None = None,
                 enabled: bool = True, advance_on: Callable[[str], bool] | None = None) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.total = total
        self.what = what
        self.enabled = enabled
        self.bar = enabled and (use_bar(self.stream) if bar is None else bar)
        self.advance_on = advance_on
        self.done = 0
        self._rich: Any = None
        self._task: Any = None
        self._steps: Any = None

    def __enter__(self) -> Progress:
        if self.bar:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress as RichProgress, TextColumn
            from rich.progress import TimeElapsedColumn

            console = Console(file=self.stream, force_terminal=True)
            self._rich = RichProgress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                      TimeElapsedColumn(), console=console, transient=False)
            self._rich.start()
            self._task = self._rich.add_task(self.what, total=self.total)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._rich is not None:
            self._rich.stop()
            self._rich = None

    def log(self, line: str) -> None:
        """Print ``line`` (above the bar on a terminal; as is in a pipe); nothing when disabled."""
        if not self.enabled:
            return
        if self._rich is not None:
            self._rich.console.print(line, markup=False, highlight=False, soft_wrap=True)
        else:
            print(line, file=self.stream, flush=True)

    def __call__(self, line: str) -> None:
        """A bench's ``progress(line)`` callback: log the line; count an item when ``advance_on(line)``."""
        self.log(line)
        if self.advance_on is not None and self.advance_on(line):
            self.advance()

    def start_item(self, name: str, steps: int | None = None) -> None:
        """The item ``name`` is under way; ``steps``: its steps, shown as an inner bar (terminal only)."""
        if self._rich is None:
            if self.enabled:  # plain: one line per item, so a log shows what was under way when it stopped
                of = f"/{self.total}" if self.total else ""
                print(f"[{self.done + 1}{of}] {name}", file=self.stream, flush=True)
            return
        self._rich.update(self._task, description=f"{self.what}: {name}")
        if self._steps is not None:
            self._rich.remove_task(self._steps)
            self._steps = None
        if steps:
            self._steps = self._rich.add_task("  steps", total=steps)

    def step(self) -> None:
        """One step of the current item ended (inner bar)."""
        if self._rich is not None and self._steps is not None:
            self._rich.advance(self._steps)

    def advance(self, n: int = 1) -> None:
        """``n`` items done."""
        self.done += n
        if self._rich is not None:
            self._rich.advance(self._task, n)
