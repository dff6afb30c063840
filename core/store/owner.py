"""Which process owns a running run, and is that process still alive?

A run row carries ``owner = "<host>|<pid>|<start token>"``.  The start token
is the process start time from ``/proc/<pid>/stat`` (clock ticks since boot,
Linux) or ``""`` elsewhere; it tells a dead owner from an unrelated process
that later got the same pid.
"""
from __future__ import annotations

import os
import socket
import sys

__all__ = ["current_owner", "parse_owner", "owner_alive"]


def _proc_stat(pid: int) -> tuple[str, str] | None:
    """``(state, start time in clock ticks since boot)`` of ``pid`` (Linux), else None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read().decode("ascii", "replace")
    except OSError:
        return None
    # Field 2 (comm) may contain spaces and parentheses: split after the last ')'.
    rest = stat[stat.rfind(")") + 2:].split()
    if len(rest) <= 19:
        return None
    return rest[0], rest[19]  # fields 3 and 22 overall


def _start_token(pid: int) -> str:
    """Start time of ``pid`` (Linux), else ``""``."""
    st = _proc_stat(pid)
    return st[1] if st else ""


def current_owner() -> str:
    """Owner string of this process."""
    pid = os.getpid()
    return f"{socket.gethostname()}|{pid}|{_start_token(pid)}"


def parse_owner(owner: str) -> tuple[str, int, str] | None:
    """``(host, pid, start token)`` or None when ``owner`` is malformed."""
    parts = owner.split("|")
    if len(parts) != 3 or not parts[1].isdigit():
        return None
    return parts[0], int(parts[1]), parts[2]


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    if sys.platform == "win32":  # os.kill(pid, 0) would terminate the process on Windows
        import ctypes

        kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined]
        handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return False
        code = ctypes.c_ulong()
        ok = kernel32.GetExitCodeProcess(handle, ctypes.byref(code))
        kernel32.CloseHandle(handle)
        return bool(ok) and code.value == 259  # STILL_ACTIVE
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def owner_alive(owner: str) -> bool | None:
    """Is the owner process alive?

    Returns
    -------
    bool | None
        True or False for an owner on this host; None when it cannot be
        known (another host, or a malformed owner).
    """
    parsed = parse_owner(owner)
    if parsed is None:
        return None
    host, pid, token = parsed
    if host != socket.gethostname():
        return None
    if not _pid_alive(pid):
        return False
    st = _proc_stat(pid)
    if st is not None:
        if st[0] in ("Z", "X"):
            return False  # exited, not yet reaped by its parent
        if token and st[1] != token:
            return False  # the pid was reused by another process
    return True
