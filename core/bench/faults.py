"""``steadyhand bench faults``: the bad day - kills, a dying browser, a broken server, a full disk.

The demo app (:class:`core.sites.demo.DemoSite`) runs in this process, so
its activation and write log - the ground truth of what was written - lives
through every kill; each run is a subprocess ``steadyhand run PROJECT
--headless`` on a copy of the demo project whose ``base_url`` points at it.

Faults (:func:`plan`; ``--quick``, the default and ``--full`` choose how many; the bench exits 1 when
any is not survived):

``kill@<flow>:<k>:<phase>``
    kill -9 of the run (and its browser) when the engine enters ``phase``
    (observe, resolve, act, settle, verify, record) of step ``k``, then
    ``run --resume`` killed again at the same point, then ``run --resume`` of
    the first run once more (:mod:`core.bench.faults_phases`).
``kill-in-write@<flow>`` (``--full``)
    kill -9 right after the flow's write reached the server, before the run
    judged it: the in-flight case; the resume must not do it again.
``disk-full`` / ``disk-full-at-start``
    the project's data folder on a real small tmpfs the bench mounts, full
    during the run or before it (:mod:`core.bench.faults_disk`).
``read-only-store``
    the data folder, with a store in it, bind-mounted read-only.
``browser-killed`` (``--full``)
    Chromium killed mid-flow; the run ends ``error`` (browser), then resumed.
``server-500`` / ``server-slow`` / ``server-hang`` / ``server-reset`` (``--full``)
    the submit answered 500, answered after the waits, never answered, or
    reset (:mod:`core.sites.faults`).
``page-script-error`` (``--full``)
    every page throws a JavaScript error at load.

Verdicts come from the demo app's own write log (never from the product's
store): a fault is survived when the last run ends with the status expected
and one clear line, the app shows each write the run claims exactly once
and none twice (``double_writes`` counts writes beyond what is owed and
writes the app flagged duplicate, ``lost_steps`` writes owed but missing),
and the store is intact (integrity ``ok``, every screenshot row names a
whole PNG).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import yaml

from core.bench.faults_child import KILL_ENV, _descendants
from core.domain.resources import bundle_root, bundled_project, module_name

__all__ = ["FaultBench", "FaultOutcome", "run_bench", "kill_case", "server_case", "browser_case", "plan", "SCOPES", "FIRST_WRITE", "table", "effects", "expected_effects", "check_store", "add_faults_parser"]

#: Flows of the demo project the bench runs, in order (the quick bench: the first only).
FLOWS = ("leave_request", "export_report", "login_lockout", "sort_table")
#: Longest time (s) one run subprocess may take before it is killed and counted as a hang of ours.
RUN_TIMEOUT_S = 120.0
#: Longest wait (s) for a kill point to come (a step that never starts is reported, not waited on forever).
KILL_POINT_TIMEOUT_S = 60.0
#: ``waits.loading_max_ms`` of the bench's project (doubled for submits, S7): a slow answer beyond it is late.
LOADING_MAX_MS = 4000
#: Poll period (s) of the store while waiting for a kill point.
POLL_S = 0.01


@dataclass
class FaultOutcome:
    """One fault and what came of it (``status``: the final run's; ``resumed``: a resume ran)."""

    fault: str
    flow: str
    survived: bool
    status: str = ""
    error_kind: str = ""
    message: str = ""
    resumed: bool = False
    lost_steps: int = 0
    double_writes: int = 0
    store_corruption: int = 0
    seconds: float = 0.0
    detail: dict[str, Any] = field(default_factory=dict)


def expected_effects(flow: str) -> int:
    """How many times the flow's write happens in one full run of it (the ground truth's unit)."""
    return {"leave_request": 1, "export_report": 1, "login_lockout": 3, "sort_table": 0}.get(flow, 0)


def effects(report: dict[str, Any], activations: list[dict[str, Any]], flow: str) -> tuple[int, int]:
    """``(count, flagged duplicates)`` of the flow's writes in the server's log.

    ``leave_request``: successful ``create_request`` writes; ``export_report``:
    exports; ``login_lockout``: failed sign-ins (``bad_password`` / ``locked``:
    each one counts against the account); ``sort_table``: any write.
    """
    if flow == "leave_request":
        n = int(report.get("writes_by_op", {}).get("create_request", 0))
    elif flow == "export_report":
        n = int(report.get("exports", 0))
    elif flow == "login_lockout":
        n = sum(1 for a in activations if a.get("gt") == "api.login" and a.get("outcome") in ("bad_password", "locked"))
    else:
        n = int(report.get("writes", 0))
    return n, int(report.get("duplicate_writes", 0))


def check_store(data_dir: Path) -> dict[str, Any]:
    """The store after a fault: ``{"integrity", "missing", "broken", "temp_files", "corruptions"}``.

    ``integrity`` is SQLite's ``PRAGMA integrity_check``; ``missing`` rows
    naming a screenshot that is not there, ``broken`` ones naming a file that
    is not a whole PNG (magic and IEND chunk); ``temp_files`` counts
    ``.tmp-*`` files a killed writer left (no row names them: not a
    corruption).  ``corruptions`` = integrity not ok + missing + broken.
    """
    db = data_dir / "store.sqlite"
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
        rels = [r[0] for r in conn.execute("SELECT screenshot FROM observations WHERE screenshot IS NOT NULL")]
        rels += [r[0] for r in conn.execute("SELECT screenshot FROM checkpoints WHERE screenshot IS NOT NULL "
                                            "AND screenshot != ''")]
    finally:
        conn.close()
    missing = broken = 0
    for rel in rels:
        p = data_dir / rel
        if not p.is_file():
            missing += 1
            continue
        data = p.read_bytes()
        if not data.startswith(b"\x89PNG\r\n\x1a\n") or b"IEND" not in data[-16:]:
            broken += 1
    temp = sum(1 for _ in (data_dir / "screenshots").rglob(".tmp-*")) if (data_dir / "screenshots").is_dir() else 0
    return {"integrity": integrity, "missing": missing, "broken": broken, "temp_files": temp,
            "corruptions": int(integrity != "ok") + missing + broken}


def _is_browser(pid: int) -> bool:
    try:
        name = Path(f"/proc/{pid}/comm").read_text().strip().lower()
    except OSError:
        return False
    return "chrom" in name or "headless" in name


def _kill9(proc: subprocess.Popen, *, only_browser: bool = False) -> None:
    """kill -9 of the run process, its process group and every process below it (its Playwright driver and
    browser), or with ``only_browser`` of the browser processes alone."""
    below = _descendants(proc.pid)
    targets = [p for p in below if _is_browser(p)] if only_browser else [proc.pid, *below]
    if not only_browser:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
    for p in targets:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass


class FaultBench:
    """The demo app served here, a copy of the demo project pointing at it, and the run subprocesses.

    Parameters
    ----------
    root : Path
        An empty folder for the project copy and the app's database (the caller removes it).
    latency_ms : int
        The demo app's submit latency, ms.
    log : Callable[[str], None]
        Receives progress lines.
    """

    def __init__(self, root: Path, *, latency_ms: int, log: Callable[[str], None]) -> None:
        from core.sites.demo import DemoSite

        self.root = root
        self.log = log
        self.site = DemoSite(root / "demo-app.sqlite", latency_ms=latency_ms).start()
        self.project = root / "project"
        (self.project / "flows").mkdir(parents=True)
        src = bundled_project("demo")
        for f in (src / "flows").glob("*.yaml"):
            shutil.copy(f, self.project / "flows" / f.name)
        base = yaml.safe_load((src / "steadyhand.yaml").read_text(encoding="utf-8"))
        settings = {"schema_version": 1, "name": "Demo (fault bench)", "base_url": self.site.base_url,
                    "browser": base.get("browser", {}), "params": base.get("params", {}),
                    "secrets": base.get("secrets", {}), "breaker": base.get("breaker", {}),
                    # the waits of a page still loading: 4 s (8 s for a submit, S7) keeps a hang's case short
                    "waits": {"loading_max_ms": LOADING_MAX_MS},
                    # every step's screenshots are written, so a full disk meets them (the default keeps
                    # only those of failing steps)
                    "evidence": "full"}
        (self.project / "steadyhand.yaml").write_text(yaml.safe_dump(settings, sort_keys=False), encoding="utf-8")
        self.data_dir = self.project / ".steadyhand"
        self.repo = bundle_root()  # the checkout (or the bundle) the child processes import Steadyhand from

    def close(self) -> None:
        self.site.set_fault(None)
        self.site.close()

    # -- runs ----------------------------------------------------------------------------
    def spawn(self, args: list[str], *, env: dict[str, str] | None = None,
              preexec: Callable[[], None] | None = None) -> subprocess.Popen:
        """``steadyhand ARGS`` as a subprocess (in a session of its own) through :mod:`core.bench.faults_child`,
        which applies the faults ``env`` names (a kill point; ``STEADYHAND_FAULT_BREAK`` of this process's
        environment is passed on to every run); ``preexec`` runs in the child before it starts."""
        full = dict(os.environ, PYTHONPATH=str(self.repo), **(env or {}))
        if KILL_ENV not in (env or {}):
            full.pop(KILL_ENV, None)
        cmd = [sys.executable, "-m", module_name("core.bench.faults_child"), *args]
        return subprocess.Popen(cmd, cwd=self.repo, env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True, preexec_fn=preexec)

    def run_args(self, flow: str) -> list[str]:
        return ["run", str(self.project), "--flow", flow, "--headless", "-q"]

    def finish(self, proc: subprocess.Popen, timeout: float = RUN_TIMEOUT_S) -> tuple[int, str]:
        try:
            _, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill9(proc)
            _, err = proc.communicate()
            return -9, (err or "") + f"\n(bench: the run took longer than {timeout:.0f} s and was killed)"
        return proc.returncode, err or ""

    def _db(self) -> sqlite3.Connection | None:
        db = self.data_dir / "store.sqlite"
        if not db.is_file():
            return None
        try:
            return sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        except sqlite3.Error:
            return None

    def runs(self) -> set[str]:
        conn = self._db()
        if conn is None:
            return set()
        try:
            return {r[0] for r in conn.execute("SELECT id FROM runs")}
        except sqlite3.Error:
            return set()
        finally:
            conn.close()

    def new_run(self, before: set[str]) -> str | None:
        ids = self.runs() - before
        return sorted(ids)[0] if len(ids) == 1 else (next(iter(ids)) if ids else None)

    def run_row(self, run_id: str) -> dict[str, Any]:
        conn = self._db()
        assert conn is not None
        try:
            row = conn.execute("SELECT status, error FROM runs WHERE id = ?", (run_id,)).fetchone()
            steps = dict(conn.execute("SELECT step_index, status FROM steps WHERE run_id = ?", (run_id,)).fetchall())
            resumed = conn.execute("SELECT run_id FROM run_resumes WHERE resumed_from = ?", (run_id,)).fetchall()
        finally:
            conn.close()
        return {"status": row[0] if row else "", "error": (row[1] if row else "") or "", "steps": steps,
                "resumed_by": [r[0] for r in resumed]}

    def wait_for(self, proc: subprocess.Popen, before: set[str], cond: Callable[[str], bool]) -> str | None:
        """Poll until the new run's id satisfies ``cond``; None when the process ended or time ran out."""
        deadline = time.monotonic() + KILL_POINT_TIMEOUT_S
        run_id = None
        while time.monotonic() < deadline and proc.poll() is None:
            run_id = run_id or self.new_run(before)
            if run_id is not None and cond(run_id):
                return run_id
            time.sleep(POLL_S)
        return None

    def step_started(self, k: int) -> Callable[[str], bool]:
        def cond(run_id: str) -> bool:
            conn = self._db()
            if conn is None:
                return False
            try:
                return conn.execute("SELECT 1 FROM observations WHERE run_id = ? AND step_index = ? AND "
                                    "moment = 'before' LIMIT 1", (run_id, k)).fetchone() is not None
            except sqlite3.Error:
                return False
            finally:
                conn.close()
        return cond

    def ground(self, flow: str) -> tuple[int, int, dict[str, Any]]:
        self.site.wait_idle(quiet_s=0.3, timeout_s=10.0)
        report = self.site.ground_truth_report()
        n, dup = effects(report, self.site.activations(), flow)
        return n, dup, {"effects": n, "server_duplicates": dup}

    def check_store_now(self) -> dict[str, Any]:
        return check_store(self.data_dir)

    # -- one fault ----------------------------------------------------------------------
    def resume(self, run_id: str, *, env: dict[str, str] | None = None) -> tuple[int, str, dict[str, Any]]:
        """``run --resume RUN_ID`` to its end: ``(exit code, stderr, {"run_id" (the new run, None when
        refused), "status", "error", "steps", "resumed_by"})``; ``env`` as :meth:`spawn`."""
        before = self.runs()
        proc = self.spawn(["run", str(self.project), "--resume", run_id, "--headless", "-q"], env=env)
        code, err = self.finish(proc)
        new = self.new_run(before)
        row = self.run_row(new) if new else {"status": "", "error": ""}
        return code, err, {"run_id": new, **row}


def _one_line(text: str) -> bool:
    return bool(text.strip()) and "\n" not in text.strip() and "Traceback" not in text


def effects_upto(flow: str, index: int) -> int:
    """How many of the flow's writes belong to its steps 0..``index`` (0-based): the writes a run that stopped
    at step ``index`` (escalated there, the step itself in flight) must show, no more, no fewer."""
    writing = {"leave_request": (10,), "export_report": (4,), "login_lockout": (2, 4, 6)}.get(flow, ())
    return sum(1 for i in writing if i <= index)


def _judge(out: FaultOutcome, *, flow: str, effects_n: int, dup: int, passed_effect: bool, store: dict[str, Any],
           want_status: tuple[str, ...], message: str, upto: int | None = None) -> FaultOutcome:
    """Fill in the counts and the verdict of one fault (``upto``: the run stopped at that step, 0-based)."""
    want = expected_effects(flow) if upto is None else effects_upto(flow, upto)
    out.double_writes = max(0, effects_n - want) + dup
    out.lost_steps = max(0, want - effects_n) if passed_effect else 0
    out.store_corruption = int(store["corruptions"])
    out.message = message.strip().splitlines()[0] if message.strip() else ""
    out.detail.update({"store": store, "effects": effects_n, "expected_effects": want})
    out.survived = (out.status in want_status and out.double_writes == 0 and out.lost_steps == 0
                    and out.store_corruption == 0 and (out.status == "passed" or _one_line(message)))
    return out


def kill_case(b: FaultBench, flow: str, k: int | None) -> FaultOutcome:
    """kill -9 at step ``k`` started (``k`` None: right after the flow's write reached the server), then resume."""
    name = f"kill@{flow}:{k + 1}" if k is not None else f"kill-in-write@{flow}"
    out = FaultOutcome(name, flow, False)
    t0 = time.monotonic()
    b.site.reset()
    before = b.runs()
    proc = b.spawn(b.run_args(flow))
    if k is not None:
        cond = b.step_started(k)
    else:
        want = max(1, expected_effects(flow) - (1 if flow == "login_lockout" else 0))

        def cond(run_id: str) -> bool:
            n, _ = effects(b.site.ground_truth_report(), b.site.activations(), flow)
            return n >= want
    run_id = b.wait_for(proc, before, cond)
    if run_id is not None:
        _kill9(proc)
    code, err = b.finish(proc)
    run_id = run_id or b.new_run(before)
    out.detail["killed"] = run_id is not None and code == -9
    out.detail["run_id"] = run_id
    if run_id is None:
        out.message = "the run never started: " + err.strip()[-200:]
        return out
    store = b.check_store_now()
    first = b.run_row(run_id)
    out.detail["first"] = {"status": first["status"], "steps": first["steps"], "exit": code}
    if first["status"] == "passed":  # the kill came too late: nothing to resume
        n, dup, g = b.ground(flow)
        out.status = "passed"
        out.detail.update(g)
        return _judge(out, flow=flow, effects_n=n, dup=dup, passed_effect=True, store=store,
                      want_status=("passed",), message="")
    rcode, rerr, res = b.resume(run_id)
    out.resumed = True
    out.status, out.error_kind = res.get("status", ""), ""
    out.detail["resume"] = {"exit": rcode, "run_id": res.get("run_id"), "status": res.get("status"),
                            "steps": res.get("steps"), "stderr": rerr.strip()[-400:]}
    n, dup, g = b.ground(flow)
    out.detail.update(g)
    store2 = b.check_store_now()
    store = {k2: (store[k2] if k2 == "integrity" and store[k2] != "ok" else store2[k2]) for k2 in store2}
    out.seconds = time.monotonic() - t0
    # an escalated resume (the in-flight write not done again) survives when the writes up to that step are
    # there once each; the steps after it are not done (the run says so), not lost
    # owed: the writes of the steps the first run passed (and of the one whose write was under way), and of the
    # steps the resume ran up to where it escalated
    stopped = [int(i) for i, v in (res.get("steps") or {}).items() if v == "escalated"]
    passed = [int(i) for i, v in first["steps"].items() if v == "passed"]
    reached = max(min(stopped), max(passed, default=-1) + (1 if k is None else 0)) if stopped else None
    return _judge(out, flow=flow, effects_n=n, dup=dup, passed_effect=True, store=store,
                  want_status=("passed", "escalated"), message=res.get("error", ""),
                  upto=reached if out.status == "escalated" else None)


def server_case(b: FaultBench, name: str, fault: Any, *, want: tuple[str, ...], effects_after: int | None,
                flow: str = "leave_request") -> FaultOutcome:
    """One run of ``flow`` with ``fault`` set on the server; the fault is cleared when the run ended."""
    out = FaultOutcome(name, flow, False)
    t0 = time.monotonic()
    b.site.reset()
    b.site.set_fault(fault)
    before = b.runs()
    proc = b.spawn(b.run_args(flow))
    try:
        code, err = b.finish(proc)
    finally:
        b.site.set_fault(None)
    run_id = b.new_run(before)
    row = b.run_row(run_id) if run_id else {"status": "", "error": err.strip()[-200:], "steps": {}}
    out.status = row["status"]
    out.detail.update({"exit": code, "run_id": run_id, "steps": row["steps"], "fault_hits": fault.hits})
    n, dup, g = b.ground(flow)
    out.detail.update(g)
    store = b.check_store_now()
    out.seconds = time.monotonic() - t0
    res = _judge(out, flow=flow, effects_n=n, dup=dup, passed_effect=out.status == "passed", store=store,
                 want_status=want, message=row["error"])
    if effects_after is not None and n != effects_after:
        res.survived = False
        res.detail["why"] = f"the server log shows {n} writes, {effects_after} expected"
    return res


def browser_case(b: FaultBench, flow: str = "leave_request", k: int = 3) -> FaultOutcome:
    """Chromium killed when step ``k`` started: the run ends ``error`` (browser); then it is resumed."""
    out = FaultOutcome("browser-killed", flow, False)
    t0 = time.monotonic()
    b.site.reset()
    before = b.runs()
    proc = b.spawn(b.run_args(flow))
    run_id = b.wait_for(proc, before, b.step_started(k))
    if run_id is not None:
        _kill9(proc, only_browser=True)
    code, err = b.finish(proc)
    run_id = run_id or b.new_run(before)
    if run_id is None:
        out.message = "the run never started"
        return out
    first = b.run_row(run_id)
    out.detail["first"] = {"status": first["status"], "error": first["error"], "exit": code}
    ok_first = first["status"] == "error" and _one_line(first["error"])
    rcode, rerr, res = b.resume(run_id)
    out.resumed = True
    out.status = res.get("status", "")
    out.detail["resume"] = {"exit": rcode, "status": res.get("status"), "steps": res.get("steps")}
    n, dup, g = b.ground(flow)
    out.detail.update(g)
    out.seconds = time.monotonic() - t0
    res_out = _judge(out, flow=flow, effects_n=n, dup=dup, passed_effect=True, store=b.check_store_now(),
                     want_status=("passed",), message=first["error"])
    res_out.message = first["error"].strip().splitlines()[0] if first["error"].strip() else ""
    res_out.survived = res_out.survived and ok_first
    return res_out


#: The step (0-based) of each demo flow whose action writes first: the one a kill is most likely to double.
FIRST_WRITE = {"leave_request": 10, "export_report": 4, "login_lockout": 2}
#: What each scope of the bench runs (:func:`plan`).
SCOPES = ("quick", "default", "full")


def plan(b: "FaultBench", project: Any, scope: str = "default") -> list[tuple[str, Callable[[], FaultOutcome]]]:
    """The cases of ``scope``, in order, as ``(name, run)``.

    ``quick``: a kill at each phase (observe, resolve, act, settle, verify, record) of leave_request's
    submit, each with a second kill during the resume; a full disk during the run and before it; a
    read-only store.  ``default``: the same on each flow's first writing step (leave_request,
    export_report, login_lockout).  ``full``: each phase of every step of every demo flow, a kill right
    after a write reached the server, a killed browser, the server faults, the disk and store faults.
    """
    from core.bench.faults_disk import FULL_AT_START_KB, disk_full_case, read_only_case
    from core.bench.faults_phases import kill_points, phase_case
    from core.sites.faults import ServerFault

    if scope not in SCOPES:
        raise ValueError(f"scope {scope!r}: expected one of {', '.join(SCOPES)}")
    flows = ("leave_request",) if scope == "quick" else FLOWS
    cases: list[tuple[str, Callable[[], FaultOutcome]]] = []
    for flow in flows:
        steps = None if scope == "full" else ({FIRST_WRITE[flow]} if flow in FIRST_WRITE else set())
        for k, phase in kill_points(project.flows[flow], steps):
            cases.append((f"kill@{flow}:{k + 1}:{phase}", lambda f=flow, k=k, p=phase: phase_case(b, f, k, p)))
        if scope == "full" and expected_effects(flow):
            cases.append((f"kill-in-write@{flow}", lambda f=flow: kill_case(b, f, None)))
    cases += [
        ("disk-full", lambda: disk_full_case(b)),
        ("disk-full-at-start", lambda: disk_full_case(b, disk_kb=FULL_AT_START_KB, name="disk-full-at-start")),
        ("read-only-store", lambda: read_only_case(b)),
    ]
    if scope != "full":
        return cases
    post = "/api/requests"
    return cases + [
        ("browser-killed", lambda: browser_case(b)),
        ("server-500", lambda: server_case(b, "server-500", ServerFault("error", post, "POST"),
                                           want=("escalated", "failed"), effects_after=0)),
        ("server-slow", lambda: server_case(b, "server-slow", ServerFault("slow", post, "POST",
                                                                          delay_ms=3 * LOADING_MAX_MS),
                                            want=("escalated", "failed"), effects_after=1)),
        ("server-hang", lambda: server_case(b, "server-hang", ServerFault("hang", post, "POST"),
                                            want=("escalated", "failed"), effects_after=0)),
        ("server-reset", lambda: server_case(b, "server-reset", ServerFault("reset", post, "POST"),
                                             want=("escalated", "failed"), effects_after=0)),
        ("page-script-error", lambda: server_case(b, "page-script-error", ServerFault("script_error", "*", "GET"),
                                                  want=("passed",), effects_after=1)),
    ]


def run_bench(*, scope: str = "default", latency_ms: int = 200, log: Callable[[str], None] = lambda s: None,
              only: tuple[str, ...] = ()) -> dict[str, Any]:
    """Run the fault suite; returns ``{"faults", "survived", "not_survived" (names), "lost_steps",
    "double_writes", "store_corruptions", "seconds", "details": [FaultOutcome as dict...]}``.

    ``scope``: one of :data:`SCOPES` (:func:`plan`); ``only``: fault name prefixes to run, taken from the
    ``full`` plan (``("kill@leave_request:11:", "disk-full")``) - any case can be run alone.

    Raises
    ------
    ValueError
        An unknown scope, or ``only`` prefixes that name no case.
    """
    from core.project import load_project

    t0 = time.monotonic()
    root = Path(tempfile.mkdtemp(prefix="steadyhand-faults-"))
    b = FaultBench(root, latency_ms=latency_ms, log=log)
    outcomes: list[FaultOutcome] = []
    try:
        project = load_project(b.project)
        cases = plan(b, project, "full" if only else scope)
        if only:
            cases = [(n, fn) for n, fn in cases if any(n.startswith(o) for o in only)]
            if not cases:
                raise ValueError(f"no fault is named so: {', '.join(only)} (names as in the table: "
                                 f"kill@leave_request:11:settle, disk-full, read-only-store...)")
        for _name, fn in cases:
            o = fn()
            outcomes.append(o)
            log(f"{o.fault:<34} {'survived' if o.survived else 'NOT SURVIVED':<13} {o.status:<10} "
                f"lost={o.lost_steps} double={o.double_writes} corrupt={o.store_corruption} {o.seconds:5.1f}s "
                f"{o.message[:90]}")
    finally:
        b.close()
        shutil.rmtree(root, ignore_errors=True)
    return {
        "faults": len(outcomes),
        "survived": sum(o.survived for o in outcomes),
        "not_survived": [o.fault for o in outcomes if not o.survived],
        "lost_steps": sum(o.lost_steps for o in outcomes),
        "double_writes": sum(o.double_writes for o in outcomes),
        "store_corruptions": sum(o.store_corruption for o in outcomes),
        "seconds": round(time.monotonic() - t0, 1),
        "details": [asdict(o) for o in outcomes],
    }


def table(doc: dict[str, Any]) -> str:
    """The plain-text table of a :func:`run_bench` result: per fault, the verdict, the last run's status, the
    flow's writes in the app's log (``app``), double writes, lost writes, store corruptions, kills made."""
    lines = [f"{'fault':<34} {'outcome':<13} {'status':<10} {'app':>3} {'dbl':>4} {'lost':>4} {'corrupt':>7} "
             f"{'kills':>5}  message"]
    for o in doc["details"]:
        d = o.get("detail", {})
        lines.append(f"{o['fault']:<34} {'survived' if o['survived'] else 'NOT SURVIVED':<13} {o['status']:<10} "
                     f"{d.get('effects', ''):>3} {o['double_writes']:>4} {o['lost_steps']:>4} "
                     f"{o['store_corruption']:>7} {d.get('kills', ''):>5}  {o['message'][:100]}")
    lines.append(f"\n{doc['survived']}/{doc['faults']} faults survived; lost steps {doc['lost_steps']}, double writes "
                 f"{doc['double_writes']}, store corruptions {doc['store_corruptions']} ({doc['seconds']:.0f} s)")
    return "\n".join(lines)


def _cmd(args: argparse.Namespace) -> int:
    scope = "full" if args.full else ("quick" if args.quick else "default")
    try:
        doc = run_bench(scope=scope, latency_ms=args.latency_ms, only=tuple(args.only or ()),
                        log=lambda line: print(line, file=sys.stderr, flush=True))
    except ValueError as exc:
        print(f"steadyhand: error: {exc}", file=sys.stderr)
        return 2
    print(table(doc))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    if doc["not_survived"]:
        print(f"steadyhand: {len(doc['not_survived'])} of {doc['faults']} faults not survived: "
              f"{', '.join(doc['not_survived'][:10])}", file=sys.stderr)
        return 1
    return 0


def add_faults_parser(bsub: Any) -> argparse.ArgumentParser:
    """Register ``steadyhand bench faults`` on the bench subparsers."""
    p = bsub.add_parser("faults", help="kill -9 at each phase of a step and again during the resume, a full "
                                       "disk, a read-only store: nothing lost, nothing done twice, by the app's log",
                        description="Example: steadyhand bench faults --quick --json /tmp/faults.json. "
                                    "Exit codes: 0 every fault survived, 1 one or more not survived, 2 bad usage.")
    scope = p.add_mutually_exclusive_group()
    scope.add_argument("--quick", action="store_true",
                       help="each phase of leave_request's submit, the disk and store faults (a few minutes)")
    scope.add_argument("--full", action="store_true",
                       help="each phase of every step of every demo flow, a killed browser, the server faults "
                            "(about two hours)")
    p.add_argument("--only", nargs="+", metavar="PREFIX",
                   help="only the faults whose name starts so, from the full list (e.g. kill@leave_request:11:)")
    p.add_argument("--latency-ms", type=int, default=200, help="demo submit latency, ms (default 200)")
    p.add_argument("--json", metavar="PATH", help='write {"faults", "survived", "not_survived", "lost_steps", '
                                                  '"double_writes", "store_corruptions", "details"}')
    p.set_defaults(func=_cmd)
    return p
