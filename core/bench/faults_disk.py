"""``bench faults``: a really full disk and a read-only store, judged by the demo app's own log.

``disk-full``
    the project's data folder (``.steadyhand``: the store, its screenshots) is
    a small tmpfs the bench mounts (:data:`DISK_KB`): the run fills it for
    real - SQLite and the screenshot writer both meet ``ENOSPC``.  Then the
    filesystem is grown (the person freed space) and the run is resumed when
    it did not pass.  Mounting needs the right to (root, or ``CAP_SYS_ADMIN``);
    without it the bench says so and uses the best real alternative: a
    file-size limit (``RLIMIT_FSIZE``, with ``SIGXFSZ`` ignored, so a write
    past it fails with ``EFBIG``) on the run's process.
``read-only-store``
    the data folder, with the store of an earlier run in it, is bind-mounted
    read-only (``chmod`` alone does not stop root; without the right to mount
    the folder is made read-only by its mode, and the bench says so).

Each is survived when the run ends with one clear line (or passes), the app's
log shows no write twice and every write a passed run claims, and the store -
once writable again - passes ``PRAGMA integrity_check`` and names only whole
screenshots.
"""
from __future__ import annotations

import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any, Callable

from core.bench.faults import FaultBench, FaultOutcome, check_store
from core.bench.faults_phases import judge_by_app

__all__ = ["DISK_KB", "FULL_AT_START_KB", "can_mount", "disk_full_case", "read_only_case"]

#: Size (KiB) of the tmpfs the run's data folder lives on: enough for the store's tables and the first steps
#: of a run (a fresh store is about 300 KiB; a step's screenshots 50-150 KiB with ``evidence: full``), so the
#: disk fills mid-run.
DISK_KB = 640
#: Size (KiB) of a disk already full when the run starts: too small for the store's tables (about 300 KiB).
FULL_AT_START_KB = 64
#: Size (KiB) the tmpfs is grown to before the resume (the person freed space).
ROOMY_KB = 256 * 1024


def _mount(*args: str) -> tuple[bool, str]:
    try:
        r = subprocess.run(["mount", *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, str(exc)
    return r.returncode == 0, (r.stderr or r.stdout).strip()


def _umount(path: Path) -> None:
    for _ in range(20):  # a child that just died may hold a file open for a moment
        if subprocess.run(["umount", str(path)], capture_output=True, timeout=30).returncode == 0:
            return
        time.sleep(0.25)
    subprocess.run(["umount", "-l", str(path)], capture_output=True, timeout=30)


def can_mount(probe_dir: Path) -> tuple[bool, str]:
    """Whether this process may mount a tmpfs (tried on ``probe_dir``, left as it was); ``(False, why)`` if not."""
    probe_dir.mkdir(parents=True, exist_ok=True)
    ok, why = _mount("-t", "tmpfs", "-o", "size=64k", "tmpfs", str(probe_dir))
    if ok:
        _umount(probe_dir)
        return True, ""
    return False, why or "mount failed"


def _fsize_limit(kb: int) -> Callable[[], None]:
    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # kept across exec: a write past the limit fails (EFBIG)
        resource.setrlimit(resource.RLIMIT_FSIZE, (kb * 1024, kb * 1024))
    return limit


def _check(data: Path) -> dict[str, Any]:
    """:func:`check_store`, with a store that cannot be read at all counted as one corruption."""
    try:
        return check_store(data)
    except sqlite3.Error as exc:
        return {"integrity": f"unreadable: {exc}", "missing": 0, "broken": 0, "temp_files": 0, "corruptions": 1}


def _outcome_of(b: FaultBench, before: set[str], code: int, err: str) -> tuple[str | None, str, str]:
    """``(run id, status, one-line message)`` of a finished run: its status as its exit code says (0 passed),
    its message the last line of its stderr."""
    run_id = b.new_run(before)
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    message = next((ln for ln in lines if "steadyhand:" in ln), lines[-1] if lines else "")
    status = "passed" if code == 0 else ""
    if run_id is not None and code != 0:
        try:
            status = b.run_row(run_id)["status"]
        except Exception:  # noqa: BLE001 - a store the full disk left unreadable: the exit code says it failed
            status = "error"
    return run_id, status or "error", message


def disk_full_case(b: FaultBench, flow: str = "leave_request", *, disk_kb: int = DISK_KB,
                   name: str = "disk-full") -> FaultOutcome:
    """The run on a full disk (a real small tmpfs of ``disk_kb`` KiB, else a file-size limit), then resumed
    with room again when it did not pass."""
    out = FaultOutcome(name, flow, False)
    t0 = time.monotonic()
    b.site.reset()
    data = b.data_dir
    kept = data.with_name(".steadyhand-kept")
    if data.exists():
        data.rename(kept)  # the earlier cases' store, put back afterwards
    data.mkdir()
    mounted, why = _mount("-t", "tmpfs", "-o", f"size={disk_kb}k,mode=0755", "tmpfs", str(data))
    out.detail["disk"] = f"tmpfs of {disk_kb} KiB" if mounted else f"file-size limit of {disk_kb} KiB ({why})"
    try:
        before = b.runs()
        code, err = b.finish(b.spawn(b.run_args(flow), preexec=None if mounted else _fsize_limit(disk_kb)))
        run_id, status, message = _outcome_of(b, before, code, err)
        out.detail.update({"exit": code, "run_id": run_id, "first": status, "first_message": message,
                           "enospc_seen": "No space left" in err or "database or disk is full" in err})
        if mounted:
            _mount("-o", f"remount,size={ROOMY_KB}k", str(data))  # the person frees space
        out.detail["stderr"] = err.strip()[-400:]
        stores = [_check(data)] if (data / "store.sqlite").is_file() else []
        final_status, final_msg = status, message
        if status != "passed" and run_id is not None:
            rcode, rerr, res = b.resume(run_id)
            out.resumed = True
            out.detail["resume"] = {"exit": rcode, "run_id": res.get("run_id"), "status": res.get("status")}
            final_status, final_msg = str(res.get("status") or "error"), str(res.get("error") or rerr)
            stores.append(_check(data))
        elif status != "passed":  # refused before a run began: the person runs it again, with room now
            stores = []  # what the refused run left is judged by the next run's use of it
            before = b.runs()
            rcode, rerr = b.finish(b.spawn(b.run_args(flow)))
            again, final_status, final_msg = _outcome_of(b, before, rcode, rerr)
            out.detail["run_again"] = {"exit": rcode, "run_id": again, "status": final_status}
            stores.append(_check(data))
        n, dup, _ = b.ground(flow)
        out.detail["store"] = stores[-1] if stores else {}
        res_out = judge_by_app(out, flow=flow, n=n, dup=dup, status=final_status, message=final_msg,
                               corruptions=sum(s["corruptions"] for s in stores))
        # the first run on the full disk: passed, or one clear line (never a traceback)
        # (naming the cause: a person told the store is unreadable would move a sound store away)
        first_ok = status == "passed" or (bool(message) and "Traceback" not in err
                                          and ("full" in message or "space" in message))
        res_out.survived = res_out.survived and first_ok
        res_out.message = message or res_out.message
    finally:
        if mounted:
            _umount(data)
        shutil.rmtree(data, ignore_errors=True)
        if kept.exists():
            kept.rename(data)
    out.seconds = time.monotonic() - t0
    return res_out


def read_only_case(b: FaultBench, flow: str = "leave_request") -> FaultOutcome:
    """The run with its store on a read-only filesystem (a read-only bind mount; else mode 0555/0444)."""
    out = FaultOutcome("read-only-store", flow, False)
    t0 = time.monotonic()
    data = b.data_dir
    if not (data / "store.sqlite").is_file():  # a store to be read-only: the one of a first, normal run
        b.site.reset()
        b.finish(b.spawn(b.run_args(flow)))
    b.site.reset()
    for leftover in ("store.sqlite-wal", "store.sqlite-shm"):
        if (data / leftover).exists() and (data / leftover).stat().st_size == 0:
            (data / leftover).unlink()
    mounted, why = _mount("--bind", str(data), str(data))
    if mounted:
        mounted, why = _mount("-o", "remount,bind,ro", str(data))
        if not mounted:
            _umount(data)
    modes: dict[Path, int] = {}
    if not mounted:
        for p in [data, *data.rglob("*")]:
            modes[p] = p.stat().st_mode
            os.chmod(p, 0o555 if p.is_dir() else 0o444)
    out.detail["read_only"] = "read-only bind mount" if mounted else f"file modes ({why})"
    try:
        before = b.runs()
        code, err = b.finish(b.spawn(b.run_args(flow)))
        lines = [ln for ln in err.strip().splitlines() if ln.strip()]
        message = next((ln for ln in lines if "steadyhand:" in ln), lines[-1] if lines else "")
        status = "passed" if code == 0 else "refused"
        out.detail.update({"exit": code, "new_runs": len(b.runs() - before), "stderr": err.strip()[-400:]})
    finally:
        if mounted:
            _umount(data)
        for p, mode in modes.items():
            os.chmod(p, mode)
    n, dup, _ = b.ground(flow)
    store = check_store(data)
    out.detail["store"] = store
    # refused (one clear line, nothing written to the app) or run (each write exactly once, said so)
    res = judge_by_app(out, flow=flow, n=n, dup=dup, status="passed" if status == "passed" else "escalated",
                       message=message, corruptions=store["corruptions"])
    res.status = status
    if status != "passed":
        # the one line names the cause: a person told the store is unreadable would move a sound store away
        res.survived = (res.survived and n == 0 and bool(message) and "Traceback" not in err
                        and "read-only" in message)
    out.seconds = time.monotonic() - t0
    return res
