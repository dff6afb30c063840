"""The run process of a ``bench faults`` case that needs a fault inside it: ``python -m core.bench.faults_child
enospc run PROJECT ...`` runs ``steadyhand run ...`` with screenshot writes failing like on a full disk.

``enospc``: the first :data:`GOOD_WRITES` screenshot files are written; every later one writes half its
bytes to its temporary file, then raises ``OSError(ENOSPC)`` - what a full disk does to
:func:`core.store.media.write_atomic`.  Only this harness patches the media writer.
"""
from __future__ import annotations

import errno
import os
import sys
import types
from typing import Any

__all__ = ["GOOD_WRITES", "main"]

#: Screenshots written before the disk is full.
GOOD_WRITES = 3


class _FullDisk:
    """A binary file that takes half of what is written, then raises ENOSPC."""

    def __init__(self, fh: Any) -> None:
        self.fh = fh

    def write(self, data: bytes) -> int:
        self.fh.write(data[: len(data) // 2])
        self.fh.flush()
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def __enter__(self) -> "_FullDisk":
        return self

    def __exit__(self, *exc: object) -> None:
        self.fh.close()


def _full_disk_after(n: int) -> None:
    from core.store import media

    real = os.fdopen
    count = {"n": 0}

    def fdopen(fd: int, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        fh = real(fd, mode, *args, **kwargs)
        count["n"] += 1
        return fh if count["n"] <= n else _FullDisk(fh)

    names = {k: getattr(os, k) for k in dir(os) if not k.startswith("__")}
    names["fdopen"] = fdopen
    media.os = types.SimpleNamespace(**names)  # type: ignore[assignment]


def main(argv: list[str]) -> int:
    """``enospc <steadyhand arguments...>``; returns the command's exit code."""
    if not argv or argv[0] != "enospc":
        print("usage: python -m core.bench.faults_child enospc run PROJECT ...", file=sys.stderr)
        return 2
    _full_disk_after(GOOD_WRITES)
    import runpy

    from core.domain.resources import module_name

    sys.argv = ["steadyhand", *argv[1:]]
    try:
        runpy.run_module(module_name("core.cli"), run_name="__main__")  # the command line as it is, in this process
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
