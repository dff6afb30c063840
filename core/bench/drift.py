"""``steadyhand bench drift``: a flow recorded once on datasette 0.59.4, replayed on later releases.

For each release of :data:`core.bench.drift_env.VERSIONS` (or ``--versions``) the benchmark

1. makes sure the release's virtual environment exists (:func:`~core.bench.drift_env.ensure_venv`,
   created once under ``~/.cache/steadyhand/drift/<version>``, PyPI only);
2. serves it on a free 127.0.0.1 port over one generated SQLite file (:func:`make_books_db`);
3. computes the ground truth: a plain Playwright script does the intended user actions
   (:data:`~core.bench.drift_truth.INTENDED`) on a fresh page, and the page state after each one is what
   the step must reach on that release (:func:`~core.bench.drift_truth.ground_truth`);
4. replays the project's recorded flow with the engine (``ProjectSession``, headless, no store, the
   project's ``base_url`` pointed at that server) and, after each acted attempt of each step (the engine's
   "after" observation), reads the live page's state itself - URL, ``h1``, search box - independently of
   the engine's verdicts.

Per release it reports: steps, steps passed (the engine's status), heals (steps resolved by a strategy
other than exact), abstentions (steps whose resolution abstained), escalations, and **wrong clicks**: steps
where the engine acted (an action was performed, not "already satisfied") and the state reached differs
from the intended one (:func:`~core.bench.drift_truth.diff_states`).  A wrong click on a step the engine
reported as passed is counted again in ``silent_wrong``: the worst outcome there is.  Steps are also
``on_track`` when they started from the intended state: a step after a wrong one is judged against the
intended state all the same (it is the user's task that matters), but the report says it started astray.

A stop hides the steps after it, so each step is also replayed **alone** (``isolated``, unless
``--chained-only``): a flow of that step, started on a fresh load of its intended before-state's URL,
preceded by the steps just before it that do not change the URL (the typing before a submit;
:func:`~core.bench.drift_truth.prep_start`), judged the same way.  An acted attempt after which the live
page cannot be read (between two documents, :data:`READ_ATTEMPTS` tries) is ``unjudged``, never counted
right or wrong.

JSON (``--json PATH``): ``{"versions": [{"version", "steps", "passed", "heals", "wrong_clicks",
"abstentions", "escalations", "silent_wrong", "unjudged", "status", "error_kind", "seconds",
"step_details": [...], "isolated": [...], "isolated_tally": {...}}], "flow", "recorded_on"}``; seconds
are the chained run's wall time (the figures are printed, never asserted).

Errors: :class:`~core.bench.drift_env.DriftEnvError` (environment: install, server) and
:class:`DriftSetupError` (input: the project or its flow does not fit the intended actions).
"""
from __future__ import annotations

import contextlib
import tempfile
import time
from dataclasses import asdict, dataclass, field
from dataclasses import replace as dc_replace
from pathlib import Path
from typing import Any, Callable, Sequence
from urllib.parse import urlsplit

from .drift_proxy import PrefixProxy
from .drift_env import DB_NAME, VERSIONS, DatasetteServer, DriftEnvError, datasette_bin, ensure_venv, make_books_db
from .drift_truth import (
    INTENDED, PageState, TruthStep, diff_states, ground_truth_prefix, page_state, prep_start,
)

__all__ = ["StepReport", "VersionReport", "DriftReport", "DriftSetupError", "run_drift", "format_report",
           "judge_step", "check_flow_fits", "FLOW_NAME", "DEFAULT_PROJECT", "DriftEnvError"]

#: The flow replayed (recorded by ``steadyhand bench drift --record``).
FLOW_NAME = "books_tour"
#: The project holding it.
DEFAULT_PROJECT = "projects/datasette"


class DriftSetupError(ValueError):
    """The project or its flow does not fit the benchmark (missing flow, steps not the intended actions)."""


@dataclass
class StepReport:
    """One step of one release: the engine's outcome and the judgement against the ground truth.

    ``strategy`` / ``score`` / ``margin`` come from the last resolution (``""`` / 0 when none);
    ``picked`` describes the candidate the engine chose (role, name, href, css path); ``acted`` counts
    attempts whose action was performed; ``reached`` is the state after the last acted attempt (None when
    the engine never acted); ``wrong`` is True when an acted attempt reached a state other than
    ``intended``; ``diff`` says how the first wrong attempt's state differs; ``on_track`` is True when the
    step started from its intended before-state.
    """

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
    on_track: bool = True
    reached: dict[str, Any] | None = None
    intended: dict[str, Any] | None = None
    wrong: bool = False
    diff: list[str] = field(default_factory=list)
    error: str = ""
    reason: str = ""
    intended_html: str = ""
    #: acted attempts after which the live page could not be read (neither wrong nor right)
    unjudged: int = 0


@dataclass
class VersionReport:
    """The figures of one release (see the module docstring)."""

    version: str
    steps: int
    passed: int = 0
    heals: int = 0
    wrong_clicks: int = 0
    abstentions: int = 0
    escalations: int = 0
    silent_wrong: int = 0
    unjudged: int = 0
    status: str = ""
    error_kind: str = ""
    error: str = ""
    seconds: float = 0.0
    base_url: str = ""
    #: the path prefix the release was served under ("/" for the root)
    base: str = "/"
    #: the flow exported by ``steadyhand export pytest`` and run as it is against the same release and base
    script_passed: int = 0
    script_status: str = ""
    script_error: str = ""
    #: set when the release's own pages do not do every intended action (the steps after it are unjudged)
    truth_error: str = ""
    #: steps that have a ground truth (all of them unless truth_error)
    judged: int = 0
    step_details: list[StepReport] = field(default_factory=list)
    #: each step replayed alone from its intended before-state (a fresh load of its URL, plus the run-up of
    #: steps that do not change the URL): the figures of every step, not only of those before a stop
    isolated: list[StepReport] = field(default_factory=list)
    isolated_tally: dict[str, int] = field(default_factory=dict)


@dataclass
class DriftReport:
    """The whole benchmark: one :class:`VersionReport` per release, in the order asked."""

    flow: str
    recorded_on: str
    versions: list[VersionReport] = field(default_factory=list)

    def to_json_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_flow_fits(steps: Sequence[Any]) -> None:
    """The recorded flow must have one step per intended action, of the same kind (click / input).

    Raises DriftSetupError naming the first step that does not fit.
    """
    if len(steps) != len(INTENDED):
        raise DriftSetupError(f"the flow has {len(steps)} steps, the intended actions are {len(INTENDED)}: "
                              f"re-record it with `steadyhand bench drift --record`")
    for step, action in zip(steps, INTENDED, strict=True):
        if step.action.kind != action.kind:
            raise DriftSetupError(f"step {step.id} is a {step.action.kind}, the intended action {action.key!r} "
                                  f"is a {action.kind}")


def judge_step(report: StepReport, truth: TruthStep, attempts: Sequence[PageState]) -> StepReport:
    """Fill the judgement of ``report`` from the states after each acted attempt (pure).

    A step is wrong when any acted attempt reached a state other than the intended one.
    """
    report.intended = truth.after.to_json_dict()
    report.intended_html = truth.element_html
    report.acted = len(attempts)
    if attempts:
        report.reached = attempts[-1].to_json_dict()
    for state in attempts:
        diff = diff_states(truth.after, state)
        if diff:
            report.wrong = True
            report.diff = diff
            break
    return report


def _describe(candidate: Any) -> dict[str, str]:
    if candidate is None:
        return {}
    d = candidate.descriptor
    return {k: v for k, v in (("role", d.role), ("name", d.name), ("tag", d.tag), ("href", d.href),
                              ("css_path", d.css_path)) if v}


#: Attempts at reading the live page's state when it is between two documents (each waits for "load").
READ_ATTEMPTS = 3
#: Milliseconds each of those waits may take.
READ_WAIT_MS = 5000


def _read_state(page: Any, base_path: str = "") -> PageState | None:
    """The live page's state, or None when it cannot be read after :data:`READ_ATTEMPTS` tries (the step is
    then counted ``unjudged``, never wrong or right)."""
    for _ in range(READ_ATTEMPTS):
        try:
            return page_state(page, base_path)
        except Exception:  # noqa: BLE001 - a navigation destroyed the context: wait for the next document
            try:
                page.wait_for_load_state("load", timeout=READ_WAIT_MS)
            except Exception:  # noqa: BLE001
                pass
    return None


class _Watcher:
    """The engine's event sink: per step, the resolution, the pick, and the live page's state after each
    acted attempt (read from the page itself, not from the engine's observation)."""

    def __init__(self, session: Any, reports: list[StepReport], base_path: str = "") -> None:
        self.session = session
        self.base_path = base_path
        self.reports = reports
        self.attempts: dict[int, list[PageState]] = {}
        self.acted_now: dict[int, bool] = {}
        self.before: dict[int, PageState] = {}

    def __call__(self, event: Any) -> None:
        from core.engine.events import ActionPerformed, ObservationMade, StepFinished, StepStarted, TargetResolved

        if isinstance(event, StepStarted) and event.attempt == 1:
            state = _read_state(self.session.driver.page, self.base_path)
            if state is not None:
                self.before[event.index] = state
        elif isinstance(event, StepStarted):
            self.acted_now[event.index] = False
        elif isinstance(event, TargetResolved):
            r = self.reports[event.index]
            res = event.resolution
            r.strategy, r.score, r.margin = res.strategy, round(res.score, 3), round(res.margin, 3)
            r.abstained, r.healed, r.reason = res.abstained, res.healed, res.reason[:400]
            r.picked = _describe(event.candidate)
        elif isinstance(event, ActionPerformed):
            # "already in the wanted state" is reported ok with a note: nothing was done then
            self.acted_now[event.index] = bool(event.ok and not event.error)
        elif isinstance(event, ObservationMade) and event.when == "after":
            if self.acted_now.get(event.index):
                state = _read_state(self.session.driver.page, self.base_path)
                if state is None:
                    self.reports[event.index].unjudged += 1
                else:
                    self.attempts.setdefault(event.index, []).append(state)
                self.acted_now[event.index] = False
        elif isinstance(event, StepFinished):
            r = self.reports[event.index]
            r.status, r.error = event.status, event.error[:400]


def _run_one(session: Any, flow: Any, base_path: str = "") -> tuple[Any, list[StepReport], _Watcher]:
    steps = [StepReport(i, s.id, s.name) for i, s in enumerate(flow.steps)]
    watcher = _Watcher(session, steps, base_path)
    session.emit = watcher  # read by the executor made for this run
    result = session.run_flow(flow)
    return result, steps, watcher


def _finish(r: StepReport, truth: TruthStep, watcher: _Watcher, i: int) -> StepReport:
    judge_step(r, truth, watcher.attempts.get(i, []))
    before = watcher.before.get(i)
    r.on_track = before is not None and not diff_states(truth.before, before)
    return r


def _tally(steps: Sequence[StepReport]) -> dict[str, int]:
    return {"passed": sum(r.status == "passed" for r in steps), "heals": sum(r.healed for r in steps),
            "abstentions": sum(r.abstained for r in steps), "escalations": sum(r.status == "escalated" for r in steps),
            "wrong_clicks": sum(r.wrong for r in steps),
            "silent_wrong": sum(r.wrong and r.status == "passed" for r in steps),
            "unjudged": sum(r.unjudged for r in steps)}


def _replay(project: Any, base_url: str, flow_name: str, truth: list[TruthStep], report: VersionReport, *,
            isolated: bool = True) -> None:
    """The chained replay of the whole flow, then (``isolated``) each step alone from its intended state."""
    from dataclasses import replace

    from core.engine.session import ProjectSession
    from core.project.loader import Project

    moved = Project(root=project.root, settings=project.settings.model_copy(update={"base_url": base_url}),
                    flows={flow_name: project.flows[flow_name]})
    flow = moved.flows[flow_name]
    base_path = urlsplit(base_url).path
    with ProjectSession(moved, headless=True, use_store=False) as session:
        result, steps, watcher = _run_one(session, flow, base_path)
        report.status, report.error_kind, report.error = result.status, result.error_kind, result.error[:400]
        report.seconds = round(result.seconds, 1)
        for i, r in enumerate(steps):
            if r.status != "not run" and i < len(truth):
                _finish(r, truth[i], watcher, i)
        report.step_details = steps
        for key, value in _tally(steps).items():
            setattr(report, key, value)
        if not isolated:
            return
        for k in range(min(len(flow.steps), len(truth))):
            j = prep_start(truth, k)
            alone = replace(flow, name=f"{flow.name}_{flow.steps[k].id}", steps=flow.steps[j:k + 1],
                            start_url=truth[j].before.relative_url, source="")
            _, steps_k, watcher_k = _run_one(session, alone, base_path)
            r = steps_k[-1]
            r.index = k
            if r.status == "not run":
                r.error = f"run-up step {steps_k[-2].step_id} did not pass: {steps_k[-2].status}" if len(steps_k) > 1 \
                    else r.error
            else:
                _finish(r, truth[k], watcher_k, k - j)
            report.isolated.append(r)
        report.isolated_tally = _tally(report.isolated)


def run_drift(project_dir: Path | str = DEFAULT_PROJECT, versions: Sequence[str] = VERSIONS, *,
              flow_name: str = FLOW_NAME, root: Path | None = None, isolated: bool = True,
              prefixes: Sequence[str] = ("",), script: bool = False,
              progress: Callable[[str], None] = lambda line: None) -> DriftReport:
    """Run the benchmark (see the module docstring) and return its report.

    ``prefixes``: the URL path prefixes each release is served under in turn (``""`` the root; ``/staging``
    with datasette's ``base_url`` setting behind :class:`~core.bench.drift_proxy.PrefixProxy`, which takes
    the prefix off the requests: the same flow replayed against another base URL, paths judged relative
    to it).  ``script``: also run the flow exported by ``steadyhand export pytest`` as it is, against
    the same server (its steps passed in ``script_passed``).

    Raises DriftSetupError (bad project or flow) and DriftEnvError (install or server failed).
    """
    from core.project import ProjectError, load_project
    from core.perception.browser import CHROMIUM_ARGS, find_chromium

    try:
        project = load_project(project_dir)
    except ProjectError as exc:
        raise DriftSetupError(str(exc)) from None
    if flow_name not in project.flows:
        raise DriftSetupError(f"{project.root}: no flow {flow_name!r}; record it with `steadyhand bench drift "
                              f"--record`")
    check_flow_fits(project.flows[flow_name].steps)
    report = DriftReport(flow=flow_name, recorded_on=VERSIONS[0])
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="steadyhand-drift-") as tmp:
        db = make_books_db(Path(tmp) / DB_NAME)
        for version in versions:
            ensure_venv(version, root, log=progress)
            for prefix in prefixes:
                vr = VersionReport(version=version, steps=len(project.flows[flow_name].steps), base=prefix or "/")
                tag = version + (f"@{prefix}" if prefix else "")
                with contextlib.ExitStack() as stack:
                    server = stack.enter_context(DatasetteServer(datasette_bin(version, root), db, prefix=prefix))
                    if prefix:  # datasette links under base_url and expects a proxy to take the prefix off
                        server = stack.enter_context(PrefixProxy(prefix, server.port))
                    vr.base_url = server.base_url
                    progress(f"drift: {tag} on {server.base_url}: ground truth")
                    with sync_playwright() as pw:
                        browser = pw.chromium.launch(executable_path=find_chromium(), args=list(CHROMIUM_ARGS))
                        try:
                            page = browser.new_page(viewport={"width": 1280, "height": 800})
                            truth, problem = ground_truth_prefix(page, server.base_url)
                        finally:
                            browser.close()
                    vr.judged = len(truth)
                    if problem:
                        # the release's own pages stop doing the intended actions there (datasette doubles the
                        # base_url prefix in its facet-value links): the steps after that are not judged
                        vr.truth_error = problem[:400]
                        progress(f"drift: {tag}: ground truth for {len(truth)} of {vr.steps} steps: {problem}")
                    progress(f"drift: {tag}: replaying {flow_name}")
                    t0 = time.monotonic()
                    _replay(project, server.base_url, flow_name, truth, vr, isolated=isolated)
                    if script:
                        from .drift_app_run import run_exported

                        got = run_exported(project, flow_name, server.base_url,
                                           Path(tmp) / f"script-{version}-{prefix.strip('/') or 'root'}")
                        vr.script_passed, vr.script_status, vr.script_error = got.passed, got.status, got.error
                    progress(f"drift: {tag}: {vr.passed}/{vr.steps} passed, {vr.wrong_clicks} wrong clicks "
                             f"({time.monotonic() - t0:.0f} s); script {vr.script_passed}/{vr.steps}")
                report.versions.append(vr)
    return report


def _label(v: VersionReport) -> str:
    return v.version + ("" if v.base in ("", "/") else f"@{v.base}")


def format_report(report: DriftReport) -> str:
    """The table (one row per release) and, below, every step that was not a clean exact pass."""
    head = f"{'version':<16} {'steps':>5} {'passed':>6} {'heals':>5} {'abstain':>7} {'escal.':>6} " \
           f"{'wrong':>5} {'silent':>6} {'script':>6}  result"
    lines = [f"datasette drift: flow {report.flow!r} recorded on {report.recorded_on}", head, "-" * len(head)]
    for v in report.versions:
        lines.append(f"{_label(v):<16} {v.steps:>5} {v.passed:>6} {v.heals:>5} {v.abstentions:>7} {v.escalations:>6} "
                     f"{v.wrong_clicks:>5} {v.silent_wrong:>6} {v.script_passed if v.script_status else '-':>6}  "
                     f"{v.status}{' (' + v.error_kind + ')' if v.error_kind else ''}")
    if any(v.isolated for v in report.versions):
        lines += ["", "each step alone, from its intended state:", head, "-" * len(head)]
        for v in report.versions:
            t = v.isolated_tally
            lines.append(f"{_label(v):<16} {len(v.isolated):>5} {t['passed']:>6} {t['heals']:>5} {t['abstentions']:>7} "
                         f"{t['escalations']:>6} {t['wrong_clicks']:>5} {t['silent_wrong']:>6}")
    for v in report.versions:
        if v.truth_error:
            lines.append(f"  {_label(v)}: only the first {v.judged} steps are judged (the release's own pages stop "
                         f"there): {v.truth_error[:200]}")
        if v.script_status == "failed":
            lines.append(f"  {_label(v)}: the exported script failed at step {v.script_passed + 1}: {v.script_error[:200]}")
        for s in v.step_details + [dc_replace(s, step_id=s.step_id + " alone") for s in v.isolated]:
            if s.status == "passed" and s.strategy in ("exact", "selector") and not s.wrong:
                continue
            what = "WRONG CLICK" if s.wrong else s.status
            pick = f"{s.picked.get('role', '')} {s.picked.get('name', '')!r}" if s.picked else "nothing"
            lines.append(f"  {_label(v)} {s.step_id} {s.title!r}: {what}; {s.strategy or 'no strategy'} "
                         f"score {s.score:.2f} margin {s.margin:.2f}; picked {pick}; acted {s.acted}x"
                         f"{'' if s.on_track else ' (started astray)'}")
            if s.diff:
                lines.append(f"      reached: {'; '.join(s.diff)}")
            if s.error:
                lines.append(f"      error: {s.error[:200]}")
    return "\n".join(lines)

