"""Screenshot files of the store.

Screenshots live next to the database, under the media folder (the
project's ``.steadyhand/`` folder)::

    screenshots/<run_id>/<step index, 4 digits>_<before|after>_<n>.png

``n`` counts observations of the same step and moment (1, 2... one per
attempt).  Rows store this path relative to the media folder, with ``/``
separators.  Names are built only from the run id (validated, see
:func:`check_run_id`), the step index and the moment, so no user text - and
so no secret - ever reaches a file name.  Files are written atomically
(temporary file + rename): a killed process leaves either no file or a
whole one.
"""
from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

__all__ = ["SCREENSHOTS_DIR", "PNG_MAGIC", "check_run_id", "screenshot_relpath", "write_atomic"]

#: Folder of screenshots, relative to the media folder.
SCREENSHOTS_DIR = "screenshots"
#: First bytes of every PNG file.
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


def check_run_id(run_id: str) -> str:
    """Return ``run_id`` if it is safe as a key and a folder name, else raise ValueError.

    Allowed: 1-64 chars of ``A-Z a-z 0-9 _ -``, not starting with ``_``/``-``
    (UUIDs qualify).
    """
    if not isinstance(run_id, str) or not _RUN_ID.match(run_id):
        raise ValueError(f"invalid run id {run_id!r}: use 1-64 letters, digits, '_' or '-'")
    return run_id


def screenshot_relpath(run_id: str, index: int, when: str, n: int) -> str:
    """Relative path of the ``n``-th screenshot of step ``index`` at ``when``."""
    if when not in ("before", "after"):
        raise ValueError(f"when must be 'before' or 'after', not {when!r}")
    return f"{SCREENSHOTS_DIR}/{check_run_id(run_id)}/{int(index):04d}_{when}_{int(n)}.png"


def write_atomic(root: Path, relpath: str, data: bytes) -> Path:
    """Write ``data`` to ``root/relpath`` atomically; return the absolute path."""
    target = Path(root, *relpath.split("/"))
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".png", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return target
