"""``steadyhand bench drift --app NAME``: a CRUD flow recorded once on an app's oldest release, replayed on each
release at the server's root and under a path prefix, beside the same recording exported as a pytest file.

For each release of the app (:data:`core.bench.drift_apps.APPS`) the benchmark

1. makes sure its virtual environment exists (:func:`~core.bench.drift_app_env.ensure_app_venv`, cached
   outside the repository);
2. computes the ground truth on a fresh SQLite file: a scripted user does the intended actions
   (:attr:`AppSpec.actions`, CSS over the release's markup) and the :class:`AppState` before and after
   each is what the step must reach there (:func:`ground_truth`);
3. for each base (``/`` and :data:`~core.bench.drift_apps.PREFIX`), on a fresh file and server each time:
   replays the project's recorded flow with the engine (``ProjectSession``, headless, no store, the
   project's ``base_url`` pointed at that server) and reads, after each acted attempt, the live page's path
   and fields and the database's rows itself (:func:`replay`), judged by
   :func:`~core.bench.drift_apps.judge_attempts`; then runs the flow exported by ``steadyhand export
   pytest`` as it is, in a pytest subprocess against a fresh server (:func:`run_script`), counting the
   steps it passed from the line its traceback names.

The admin password (Flask-AppBuilder) is generated per bench run and passed to the servers, the engine and
the script in the environment (``STEADYHAND_SECRET_PASSWORD``) only; it is never printed or saved.

JSON (``--json PATH``): ``{"apps": [{"app", "title", "flow", "recorded_on", "runs": [{"version", "base",
"steps", "passed", "wrong", "missed", "repeated", "retried", "heals": [[level, margin]], "abstentions",
"escalations", "silent_wrong", "status", "error_kind", "error", "seconds", "script_passed",
"script_status", "script_seconds", "script_repeated", "script_error", "step_details": [...]}]}]}``.

Errors: :class:`~core.bench.drift_env.DriftEnvError` (install, server, recorder) and
:class:`~core.bench.drift.DriftSetupError` (the project or flow does not fit the intended actions).
"""
from __future__ import annotations

import os
import secrets as _secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from dataclasses import replace as dc_replace
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from ..domain.resources import module_name
from .drift import DriftSetupError, _describe
from .drift_app_env import REPO, AppServer, ensure_app_venv, read_rows
from .drift_apps import (
    FIELDS_JS, PREFIX, Action, AppSpec, AppState, AppVersion, heal_summary, judge_attempts, relative_path,
    repeated_rows, script_steps_passed,
)
from .drift_env import DriftEnvError, free_port

__all__ = ["AppStepReport", "AppRunReport", "AppDriftReport", "GroundTruthError", "ground_truth", "record_app_flow",
           "replay", "run_script", "run_exported", "ScriptResult", "run_app_drift", "format_app_report", "PAUSE_MS", "SCRIPT_TIMEOUT_S"]

#: A user's pace between actions, ms (the recorder's steps must not merge; the page settles).
PAUSE_MS = 700
#: Milliseconds a scripted action may take to find its element and act.
ACTION_TIMEOUT_MS = 10_000
#: Milliseconds between two typed characters while recording (a user's typing).
TYPING_DELAY_MS = 60
#: Seconds the exported script's pytest run may take.
SCRIPT_TIMEOUT_S = 300
#: Seconds the recorder may take to print its ready line.
READY_TIMEOUT_S = 60.0
#: Reads of a settling state at most (:func:`_settled_state`), PAUSE_MS apart.
SETTLE_READS = 12
#: Attempts at reading the live page (between two documents each waits for "load", READ_WAIT_MS).
READ_ATTEMPTS, READ_WAIT_MS = 3, 5000
SECRET_ENV = "STEADYHAND_SECRET_PASSWORD"


class GroundTruthError(RuntimeError):
    """The scripted user's intended action did not find its one element, or changed nothing."""


# --------------------------------------------------------------------------- the scripted user

def _locate(page: Any, action: Action) -> Any:
    loc = page.locator(action.selector)
    if action.text:
        texts = [" ".join(t.split()) for t in loc.all_inner_texts()]
        exact = [i for i, t in enumerate(texts) if t == action.text]
        if len(exact) != 1:
            raise GroundTruthError(f"{action.key}: {len(exact)} elements {action.selector!r} with text "
                                   f"{action.text!r} on {page.url}")
        return loc.nth(exact[0])
    visible = [i for i in range(loc.count()) if loc.nth(i).is_visible()]
    if len(visible) != 1:
        raise GroundTruthError(f"{action.key}: {len(visible)} visible elements match {action.selector!r} on {page.url}")
    return loc.nth(visible[0])


def perform(page: Any, action: Action, password: str, *, typing_delay_ms: int = 0) -> None:
    """Do one intended action with real input: a click (accepting the confirm() box it opens when
    ``accept_dialog``), or for an input a click, select-all and typing; then wait for "load"."""
    el = _locate(page, action)
    if action.kind == "click":
        if action.accept_dialog:
            page.once("dialog", lambda dialog: dialog.accept())
        el.click(timeout=ACTION_TIMEOUT_MS)
    elif action.kind == "input":
        el.click(timeout=ACTION_TIMEOUT_MS)
        page.keyboard.press("Control+A")
        value = password if action.value == "{password}" else action.value
        page.keyboard.type(value, delay=typing_delay_ms)
    else:  # pragma: no cover - the specs hold clicks and inputs only
        raise ValueError(action.kind)
    page.wait_for_load_state("load", timeout=ACTION_TIMEOUT_MS)


def read_state(page: Any, db: Path, base_url: str, fields_js: str = FIELDS_JS) -> AppState | None:
    """The live page's path and fields (read by ``fields_js``) and the database's rows; None when the page
    cannot be read after :data:`READ_ATTEMPTS` tries (between two documents)."""
    for _ in range(READ_ATTEMPTS):
        try:
            got = page.evaluate(fields_js)
            return AppState(relative_path(page.url, base_url), read_rows(db), tuple(sorted(got.items())))
        except Exception:  # noqa: BLE001 - a navigation destroyed the context: wait for the next document
            try:
                page.wait_for_load_state("load", timeout=READ_WAIT_MS)
            except Exception:  # noqa: BLE001
                pass
    return None


def _settled_state(page: Any, db: Path, base_url: str, fields_js: str = FIELDS_JS,
                   before: AppState | None = None) -> AppState:
    """The state once it stopped changing: read every :data:`PAUSE_MS` until two reads agree and (with
    ``before``) differ from it, at most :data:`SETTLE_READS` reads (an app answering over a queue, as
    Gradio does, writes after the click returns)."""
    state = None
    for _ in range(SETTLE_READS):
        page.wait_for_timeout(PAUSE_MS)
        now = read_state(page, db, base_url, fields_js)
        if now is not None and now == state and now != before:
            return now
        state = now
    if state is None:
        raise GroundTruthError(f"the page at {page.url} could not be read")
    return state


def _browser(pw: Any) -> Any:
    from core.perception.browser import CHROMIUM_ARGS, find_chromium

    return pw.chromium.launch(executable_path=find_chromium(), args=list(CHROMIUM_ARGS))


def _drive(page: Any, spec: AppSpec, db: Path, base_url: str, password: str, *,
           typing_delay_ms: int = 0, log: Callable[[str], None] = lambda line: None) -> list[tuple[AppState, AppState]]:
    before = _settled_state(page, db, base_url, spec.fields_js)
    out = []
    for action in spec.actions:
        perform(page, action, password, typing_delay_ms=typing_delay_ms)
        after = _settled_state(page, db, base_url, spec.fields_js, before)
        if after == before:
            raise GroundTruthError(f"{action.key} ({action.title}) changed nothing on {page.url}")
        out.append((before, after))
        log(f"  did: {action.title}")
        before = after
    return out


def ground_truth(spec: AppSpec, version: AppVersion, work: Path, password: str, root: Path | None = None
                 ) -> list[tuple[AppState, AppState]]:
    """The (before, after) state of each intended action on ``version``, from a fresh database."""
    from playwright.sync_api import sync_playwright

    db = _fresh_db(work, f"truth-{version.label}")
    with AppServer(spec, version, db, password=password, root=root) as server, sync_playwright() as pw:
        browser = _browser(pw)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(server.base_url + spec.start_path, wait_until="load", timeout=ACTION_TIMEOUT_MS)
            return _drive(page, spec, db, server.base_url, password)
        finally:
            browser.close()


def _fresh_db(work: Path, name: str) -> Path:
    db = work / f"{name}.db"
    for p in (db, db.with_suffix(".log")):
        if p.exists():
            p.unlink()
    return db


# --------------------------------------------------------------------------- recording

def _set_base_url(settings: Path, url: str) -> None:
    lines = settings.read_text(encoding="utf-8").splitlines(keepends=True)
    settings.write_text("".join(f"base_url: {url}\n" if ln.startswith("base_url:") else ln for ln in lines),
                        encoding="utf-8")


def record_app_flow(spec: AppSpec, project: Path | None = None, *, root: Path | None = None,
                    log: Callable[[str], None] = print) -> Path:
    """Record ``spec.flow`` on the oldest release with ``steadyhand record`` driven by the scripted user over
    CDP (as ``core.bench.drift_record`` does for datasette) and copy it into the project; returns its path."""
    from playwright.sync_api import sync_playwright

    project = Path(project or REPO / spec.project).resolve()
    version = spec.recorded_on
    ensure_app_venv(version, root, log=log)
    password = _secrets.token_urlsafe(12)
    with tempfile.TemporaryDirectory(prefix="steadyhand-drift-app-rec-") as tmp_s:
        tmp = Path(tmp_s)
        work = tmp / "project"
        shutil.copytree(project, work, ignore=shutil.ignore_patterns(".steadyhand"))
        db = _fresh_db(tmp, "record")
        with AppServer(spec, version, db, password=password, root=root) as server:
            _set_base_url(work / "steadyhand.yaml", server.base_url)
            port = free_port()
            env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(REPO), SECRET_ENV: password}
            env.pop("DISPLAY", None)
            cmd = [sys.executable, "-m", module_name("core.cli"), "record", "--project", str(work), "--flow", spec.flow,
                   "--headless", "--cdp-port", str(port), "--force", spec.start_path]
            proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                _wait_ready(proc)
                with sync_playwright() as pw:
                    browser = pw.chromium.connect_over_cdp(f"http://127.0.0.1:{port}")
                    try:
                        page = browser.contexts[0].pages[0]
                        page.wait_for_load_state("load")
                        _drive(page, spec, db, server.base_url, password, typing_delay_ms=TYPING_DELAY_MS, log=log)
                        page.wait_for_timeout(PAUSE_MS)
                    finally:
                        browser.close()
                proc.send_signal(signal.SIGTERM)
                out, err = proc.communicate(timeout=90)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.communicate(timeout=30)
            log(out.rstrip())
            if proc.returncode != 0:
                raise DriftEnvError(f"steadyhand record exited with {proc.returncode}: {out[-1500:]}{err[-1500:]}")
        src, dst = work / "flows", project / "flows"
        dst.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src / f"{spec.flow}.yaml", dst / f"{spec.flow}.yaml")
        if (dst / f"{spec.flow}.crops").exists():
            shutil.rmtree(dst / f"{spec.flow}.crops")
        if (src / f"{spec.flow}.crops").exists():
            shutil.copytree(src / f"{spec.flow}.crops", dst / f"{spec.flow}.crops")
    _tidy(dst / f"{spec.flow}.yaml", spec)
    return dst / f"{spec.flow}.yaml"


def _tidy(path: Path, spec: AppSpec) -> None:
    """Step titles from the intended actions when the recording has one step per action; nothing else."""
    from core.project import load_flow, save_flow

    flow = load_flow(path)
    if [s.action.kind for s in flow.steps] != [a.kind for a in spec.actions]:
        return
    steps = tuple(dc_replace(s, name=a.title) for s, a in zip(flow.steps, spec.actions, strict=True))
    what = "Create, edit and delete" if any(a.key == "delete" for a in spec.actions) else "Create and edit"
    description = (f"{what} an item in {spec.title}, recorded by demonstration on "
                   f"{spec.recorded_on.label} (steadyhand bench drift --app {spec.key} --record). Step titles "
                   "from the intended actions.")
    save_flow(dc_replace(flow, steps=steps, description=description), path)


def _wait_ready(proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    head: list[str] = []
    while time.monotonic() < deadline:
        line = proc.stdout.readline() if proc.stdout else ""
        if not line:
            break
        head.append(line)
        if line.startswith("Close the page"):
            return
    proc.kill()
    out, err = proc.communicate(timeout=30)
    raise DriftEnvError(f"the recorder did not start: {''.join(head)}{out}{err[-2000:]}")


# --------------------------------------------------------------------------- the engine's replay

@dataclass
class AppStepReport:
    """One step of one replay: the engine's outcome (``status``, the last resolution's ``strategy`` /
    ``score`` / ``margin``, ``healed``, ``abstained``, ``picked``) and the judgement against the truth
    (``acted`` attempts, ``wrong`` with ``diff``, ``missed``, ``repeated`` rows, ``reached`` / ``intended``
    states, ``on_track``: it started from its intended before-state)."""

    index: int
    step_id: str
    title: str
    status: str = "not run"
    strategy: str = ""
    score: float = 0.0
    margin: float = 0.0
    healed: bool = False
    abstained: bool = False
    picked: dict[str, str] = field(default_factory=dict)
    acted: int = 0
    unjudged: int = 0
    wrong: bool = False
    missed: bool = False
    repeated: int = 0
    retried_after_effect: bool = False
    on_track: bool = True
    diff: list[str] = field(default_factory=list)
    reached: dict[str, Any] | None = None
    intended: dict[str, Any] | None = None
    error: str = ""
    reason: str = ""


@dataclass
class AppRunReport:
    """One release at one base: the engine's figures and the exported script's (see the module docstring)."""

    version: str
    base: str
    steps: int
    passed: int = 0
    wrong: int = 0
    missed: int = 0
    repeated: int = 0
    retried: int = 0
    heals: list[tuple[str, float]] = field(default_factory=list)
    abstentions: int = 0
    escalations: int = 0
    silent_wrong: int = 0
    status: str = ""
    error_kind: str = ""
    error: str = ""
    seconds: float = 0.0
    script_passed: int = 0
    script_status: str = ""
    script_seconds: float = 0.0
    script_repeated: int = 0
    script_error: str = ""
    step_details: list[AppStepReport] = field(default_factory=list)


@dataclass
class AppDriftReport:
    """One app: a :class:`AppRunReport` per release and base, in the order run."""

    app: str
    title: str
    flow: str
    recorded_on: str
    runs: list[AppRunReport] = field(default_factory=list)

    def to_json_dict(self) -> dict[str, Any]:
        return asdict(self)


class _Watcher:
    """The engine's event sink: per step the resolution and pick, the state before its first attempt and
    after each acted attempt (read from the page and the database, not from the engine's observation)."""

    def __init__(self, session: Any, reports: list[AppStepReport], db: Path, base_url: str,
                 fields_js: str = FIELDS_JS) -> None:
        self.session, self.reports, self.db, self.base_url = session, reports, db, base_url
        self.fields_js = fields_js
        self.attempts: dict[int, list[AppState]] = {}
        self.before: dict[int, AppState] = {}
        self.acted_now: dict[int, bool] = {}

    def _read(self) -> AppState | None:
        return read_state(self.session.driver.page, self.db, self.base_url, self.fields_js)

    def __call__(self, event: Any) -> None:
        from core.engine.events import ActionPerformed, ObservationMade, StepFinished, StepStarted, TargetResolved

        if isinstance(event, StepStarted):
            self.acted_now[event.index] = False
            if event.attempt == 1:
                state = self._read()
                if state is not None:
                    self.before[event.index] = state
        elif isinstance(event, TargetResolved):
            r, res = self.reports[event.index], event.resolution
            r.strategy, r.score, r.margin = res.strategy, round(res.score, 3), round(res.margin, 3)
            r.abstained, r.healed, r.reason = res.abstained, res.healed, res.reason[:400]
            r.picked = _describe(event.candidate)
        elif isinstance(event, ActionPerformed):
            self.acted_now[event.index] = bool(event.ok and not event.error)
        elif isinstance(event, ObservationMade) and event.when == "after" and self.acted_now.get(event.index):
            state = self._read()
            if state is None:
                self.reports[event.index].unjudged += 1
            else:
                self.attempts.setdefault(event.index, []).append(state)
            self.acted_now[event.index] = False
        elif isinstance(event, StepFinished):
            r = self.reports[event.index]
            r.status, r.error = event.status, event.error[:400]


@contextmanager
def _secret_env(password: str) -> Iterator[None]:
    old = os.environ.get(SECRET_ENV)
    os.environ[SECRET_ENV] = password
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(SECRET_ENV, None)
        else:
            os.environ[SECRET_ENV] = old


def replay(project: Any, spec: AppSpec, base_url: str, db: Path, truth: Sequence[tuple[AppState, AppState]],
           run: AppRunReport, password: str) -> None:
    """Replay the recorded flow with the engine against ``base_url`` and fill ``run`` with the judged steps."""
    from core.engine.session import ProjectSession
    from core.project.loader import Project

    moved = Project(root=project.root, settings=project.settings.model_copy(update={"base_url": base_url}),
                    flows={spec.flow: project.flows[spec.flow]})
    flow = moved.flows[spec.flow]
    steps = [AppStepReport(i, s.id, s.name) for i, s in enumerate(flow.steps)]
    with _secret_env(password), ProjectSession(moved, headless=True, use_store=False) as session:
        watcher = _Watcher(session, steps, db, base_url, spec.fields_js)
        session.emit = watcher  # read by the executor made for this run
        result = session.run_flow(flow)
        final = read_state(session.driver.page, db, base_url, spec.fields_js)
    run.status, run.error_kind, run.error = result.status, result.error_kind, result.error[:400]
    run.seconds = round(result.seconds, 1)
    last_after: AppState | None = None
    for i, r in enumerate(steps):
        if r.status == "not run":
            continue
        before, after = truth[i]
        last_after = after
        j = judge_attempts(before, after, watcher.attempts.get(i, []))
        r.acted, r.wrong, r.missed, r.repeated, r.diff = j.acted, j.wrong, j.missed, j.repeated, j.diff
        r.retried_after_effect = j.retried_after_effect
        r.intended = after.to_json_dict()
        if watcher.attempts.get(i):
            r.reached = watcher.attempts[i][-1].to_json_dict()
        got_before = watcher.before.get(i)
        r.on_track = got_before is not None and got_before.path == before.path and got_before.rows == before.rows
    run.step_details = steps
    run.passed = sum(r.status == "passed" for r in steps)
    run.wrong = sum(r.wrong for r in steps)
    run.missed = sum(r.missed for r in steps)
    run.retried = sum(r.retried_after_effect for r in steps)
    run.silent_wrong = sum(r.wrong and r.status == "passed" for r in steps)
    run.abstentions = sum(r.abstained for r in steps)
    run.escalations = sum(r.status == "escalated" for r in steps)
    run.heals = [(r.strategy, r.margin) for r in steps if r.healed]
    # rows repeated at any judged attempt, or left in the database at the end of the run
    end = 0
    if final is not None and last_after is not None:
        end = repeated_rows(final.rows, *(s.rows for pair in truth for s in pair))
    run.repeated = max([end] + [r.repeated for r in steps])


# --------------------------------------------------------------------------- the exported script

@dataclass
class ScriptResult:
    """The exported script's run: ``passed`` steps, ``status`` (passed / failed), ``seconds``, ``error`` (the
    first ``E`` line of pytest's output, secrets masked)."""

    passed: int
    status: str
    seconds: float
    error: str = ""


def run_exported(project: Any, flow_name: str, base_url: str, folder: Path, *, password: str = "") -> ScriptResult:
    """Export ``flow_name`` with ``steadyhand export pytest``'s code into ``folder`` (made afresh) and run it as
    it is, in a pytest subprocess against ``base_url`` (at most :data:`SCRIPT_TIMEOUT_S` s)."""
    from core.export import conftest_source, export_flow

    source = export_flow(project, project.flows[flow_name], style="pytest")
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    name = f"test_{project.name.replace('-', '_')}_{flow_name}.py"
    (folder / name).write_text(source, encoding="utf-8")
    (folder / "conftest.py").write_text(conftest_source(project), encoding="utf-8")  # the export's shared set-up
    (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")  # not the repository's settings
    env = {k: v for k, v in os.environ.items() if not k.startswith("STEADYHAND_")}
    env.update(STEADYHAND_BASE_URL=base_url, PYTHONDONTWRITEBYTECODE="1")
    if password:
        env[SECRET_ENV] = password
    t0 = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, "-m", "pytest", name, "-x", "-q", "--tb=short", "-p", "no:cacheprovider",
                               "-p", "no:randomly"], cwd=folder, env=env, capture_output=True, text=True,
                              timeout=SCRIPT_TIMEOUT_S)
        out, code = proc.stdout + proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as exc:
        out, code = f"{exc.stdout or ''}{exc.stderr or ''}\ntimed out after {SCRIPT_TIMEOUT_S} s", -1
    result = ScriptResult(script_steps_passed(source, name, str(out), code), "passed" if code == 0 else "failed",
                          round(time.monotonic() - t0, 1))
    if code != 0:
        lines = [ln for ln in str(out).splitlines() if ln.startswith("E ")]
        tail = str(out).strip().splitlines()
        result.error = (lines[0][2:].strip() if lines else tail[-1] if tail else "")[:300]
        if password:
            result.error = result.error.replace(password, "••••••")
    return result


def run_script(project: Any, spec: AppSpec, base_url: str, db: Path, truth: Sequence[tuple[AppState, AppState]],
               run: AppRunReport, password: str, work: Path) -> None:
    """Run the exported flow (:func:`run_exported`) against ``base_url`` and fill the ``script_*`` figures of
    ``run``, with the rows it left beyond the truth's (``script_repeated``)."""
    got = run_exported(project, spec.flow, base_url, work / f"script-{run.version}-{run.base.strip('/') or 'root'}",
                       password=password if spec.password else "")
    run.script_passed, run.script_status, run.script_seconds, run.script_error = (got.passed, got.status, got.seconds,
                                                                                  got.error)
    run.script_repeated = repeated_rows(read_rows(db), *(s.rows for pair in truth for s in pair))


# --------------------------------------------------------------------------- the whole bench

def _bases(prefixes: Sequence[str]) -> list[str]:
    return [p for p in prefixes]


def run_app_drift(spec: AppSpec, labels: Sequence[str] = (), *, bases: Sequence[str] = ("", PREFIX),
                  project_dir: Path | str | None = None, script: bool = True, root: Path | None = None,
                  progress: Callable[[str], None] = lambda line: None) -> AppDriftReport:
    """Run the bench for one app (see the module docstring) over ``labels`` (default: every release)."""
    from core.project import ProjectError, load_project

    try:
        project = load_project(project_dir or REPO / spec.project)
    except ProjectError as exc:
        raise DriftSetupError(str(exc)) from None
    if spec.flow not in project.flows:
        raise DriftSetupError(f"{project.root}: no flow {spec.flow!r}; record it with `steadyhand bench drift --app "
                              f"{spec.key} --record`")
    steps = project.flows[spec.flow].steps
    if [s.action.kind for s in steps] != [a.kind for a in spec.actions]:
        raise DriftSetupError(f"{spec.flow}: the recorded steps ({[s.action.kind for s in steps]}) are not the intended "
                              f"actions ({[a.kind for a in spec.actions]}): re-record it with --record")
    versions = [spec.version(label) for label in labels] if labels else list(spec.versions)
    report = AppDriftReport(spec.key, spec.title, spec.flow, spec.recorded_on.label)
    password = _secrets.token_urlsafe(12)
    with tempfile.TemporaryDirectory(prefix=f"steadyhand-drift-{spec.key}-") as tmp_s:
        work = Path(tmp_s)
        for version in versions:
            ensure_app_venv(version, root, log=progress)
            progress(f"drift: {spec.key} {version.label}: ground truth")
            try:
                truth = ground_truth(spec, version, work, password, root)
            except GroundTruthError as exc:  # the release does not do the intended actions: nothing to judge
                for base in bases:
                    report.runs.append(AppRunReport(version.label, base or "/", len(steps), status="no ground truth",
                                                    error_kind="environment", error=str(exc)[:400]))
                progress(f"drift: {spec.key} {version.label}: no ground truth: {exc}")
                continue
            for base in bases:
                run = AppRunReport(version.label, base or "/", len(steps))
                db = _fresh_db(work, f"engine-{version.label}")
                with AppServer(spec, version, db, prefix=base, password=password, root=root) as server:
                    replay(project, spec, server.base_url, db, truth, run, password)
                if script:
                    db = _fresh_db(work, f"script-{version.label}")
                    with AppServer(spec, version, db, prefix=base, password=password, root=root) as server:
                        run_script(project, spec, server.base_url, db, truth, run, password, work)
                progress(f"drift: {spec.key} {version.label} at {run.base}: {run.passed}/{run.steps} passed, "
                         f"{run.wrong} wrong, {run.repeated} repeated; script {run.script_passed}/{run.steps}")
                report.runs.append(run)
    return report


def format_app_report(report: AppDriftReport) -> str:
    """The table (one row per release and base) and, below, every step that was not a clean exact pass."""
    head = (f"{'version':<17} {'base':<9} {'steps':>5} {'passed':>6} {'wrong':>5} {'repeat':>6} {'retried':>7} "
            f"{'missed':>6} {'abstain':>7} {'script':>6}  heals (level margin)")
    lines = [f"{report.title} drift: flow {report.flow!r} recorded on {report.recorded_on}", head, "-" * len(head)]
    for r in report.runs:
        lines.append(f"{r.version:<17} {r.base:<9} {r.steps:>5} {r.passed:>6} {r.wrong:>5} {r.repeated:>6} "
                     f"{r.retried:>7} {r.missed:>6} {r.abstentions:>7} {r.script_passed:>6}  {heal_summary(r.heals)}")
    for r in report.runs:
        if r.status and r.status != "passed":
            lines.append(f"  {r.version} at {r.base}: engine {r.status}{' (' + r.error_kind + ')' if r.error_kind else ''}"
                         f": {r.error[:200]}")
        if r.script_status == "failed":
            lines.append(f"  {r.version} at {r.base}: script failed at step {r.script_passed + 1}: {r.script_error[:200]}")
        for s in r.step_details:
            if s.status in ("passed", "not run") and s.strategy in ("exact", "selector", "") and not s.wrong \
                    and not s.repeated and not s.retried_after_effect:
                continue
            what = "WRONG" if s.wrong else s.status
            pick = f"{s.picked.get('role', '')} {s.picked.get('name', '')!r}" if s.picked else "nothing"
            lines.append(f"    {s.step_id} {s.title!r}: {what}; {s.strategy or 'no strategy'} score {s.score:.2f} "
                         f"margin {s.margin:.2f}; picked {pick}; acted {s.acted}x"
                         f"{'' if s.on_track else ' (started astray)'}{'; repeated ' + str(s.repeated) if s.repeated else ''}"
                         f"{'; retried after an effect' if s.retried_after_effect else ''}")
            if s.diff:
                lines.append(f"        reached: {'; '.join(s.diff)[:300]}")
            if s.error:
                lines.append(f"        error: {s.error[:200]}")
    return "\n".join(lines)
