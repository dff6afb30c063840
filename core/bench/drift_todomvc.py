"""``steadyhand bench drift --app todomvc``: one app's flow replayed on its other implementations (issue 19, row 1).

TodoMVC specifies one to-do app and has it written in many frameworks.  The npm package ``todomvc`` at
:data:`VERSION` ships 62 of them ready to serve (``examples/<name>/index.html`` with their libraries vendored
under ``bower_components``: no build step).  :func:`ensure_package` fetches it once with ``npm pack`` (the
npm registry only) into ``~/.cache/steadyhand/drift/todomvc-<VERSION>`` (``STEADYHAND_DRIFT_CACHE``
overrides the folder, as for the other apps) and unpacks it there.

The flow ``add_item`` of ``projects/todomvc`` was recorded once on :data:`RECORDED_ON` (type "Buy milk" in
the new-item field, press Enter).  :func:`run_todomvc` serves the package's files on 127.0.0.1 at the root
and again under :data:`PREFIX` (another server: the same files under another path prefix) and, for each
implementation and each prefix, replays the flow with the session ``steadyhand run`` uses
(``ProjectSession``, ``base_url`` = the implementation's folder) in a fresh browser, then reads the page
itself: the ground truth is the app's own DOM - the to-do list must hold exactly one item, "Buy milk".
Beside it, the same recording exported by ``steadyhand export pytest`` is run as it is
(:func:`core.bench.drift_app_run.run_exported`).

Per implementation and prefix: steps passed (Steadyhand, script), ``items`` (the list's texts afterwards),
``wrong`` (an item other than the one typed appeared), ``repeated`` (the typed item is there more than
once: an effect repeated) and ``ok`` (exactly the one item).  An implementation whose page does not work in
today's Chromium without a network (its list never shows an item, whatever does it) is reported as such by
the script and Steadyhand alike; nothing is excluded.

Errors: :class:`~core.bench.drift_env.DriftEnvError` (npm missing or failing, the package's layout unknown),
:class:`~core.bench.drift.DriftSetupError` (the project does not load, an implementation name that is not one).
"""
from __future__ import annotations

import shutil
import subprocess
import tarfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from .drift_env import DriftEnvError, cache_dir

__all__ = ["VERSION", "RECORDED_ON", "PREFIX", "ITEM", "FLOW", "package_dir", "ensure_package", "implementations",
           "ImplResult", "TodoReport", "run_todomvc", "format_todomvc", "ITEMS_JS", "judge_items"]

#: The npm package's version (the last one published; its examples are the project's released apps).
VERSION = "0.1.1"
#: The implementation the flow was recorded on.
RECORDED_ON = "vanillajs"
#: The other path prefix the package is served under.
PREFIX = "/staging"
#: What the flow types.
ITEM = "Buy milk"
#: The flow replayed.
FLOW = "add_item"
#: Seconds ``npm pack`` may take.
NPM_TIMEOUT_S = 300
#: Milliseconds the page is given, after the run, for its list to show what it holds (a framework that renders
#: on the next animation frame).
SETTLE_MS = 500

#: The to-do list's item texts (TodoMVC's markup: ``#todo-list`` or ``.todo-list``, each item's ``label``).
ITEMS_JS = """() => [...document.querySelectorAll('#todo-list li, .todo-list li')]
  .filter(li => li.offsetParent !== null || getComputedStyle(li).display !== 'none')
  .map(li => ((li.querySelector('label') || li).innerText || '').trim())"""


def package_dir(root: Path | None = None) -> Path:
    """Where the unpacked package lives (its ``package/`` folder)."""
    return (root or cache_dir()) / f"todomvc-{VERSION}" / "package"


def ensure_package(root: Path | None = None, log: Callable[[str], None] = lambda s: None) -> Path:
    """The unpacked package, fetched with ``npm pack todomvc@VERSION`` the first time.

    Raises :class:`DriftEnvError` when npm is missing or fails, or the archive has no ``examples/``.
    """
    pkg = package_dir(root)
    if (pkg / "examples").is_dir():
        return pkg
    npm = shutil.which("npm")
    if npm is None:
        raise DriftEnvError("npm is not installed: it fetches the TodoMVC package (apt-get install npm)")
    dest = pkg.parent
    dest.mkdir(parents=True, exist_ok=True)
    log(f"todomvc: npm pack todomvc@{VERSION}")
    try:
        proc = subprocess.run([npm, "pack", f"todomvc@{VERSION}", "--pack-destination", str(dest)],
                              capture_output=True, text=True, timeout=NPM_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        raise DriftEnvError(f"npm pack todomvc@{VERSION} took more than {NPM_TIMEOUT_S} s") from exc
    archive = dest / f"todomvc-{VERSION}.tgz"
    if proc.returncode != 0 or not archive.is_file():
        raise DriftEnvError(f"npm pack todomvc@{VERSION} failed: {(proc.stderr or proc.stdout)[-800:]}")
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")
    if not (pkg / "examples").is_dir():
        raise DriftEnvError(f"{archive}: no package/examples/ folder in the archive")
    return pkg


def implementations(pkg: Path) -> list[str]:
    """The implementations of the package: ``examples/<name>/index.html`` that exist, sorted by name."""
    return sorted(p.parent.name for p in (pkg / "examples").glob("*/index.html"))


@dataclass
class ImplResult:
    """One implementation at one prefix (see the module docstring)."""

    name: str
    prefix: str
    steps: int
    passed: int
    status: str
    items: list[str] = field(default_factory=list)
    wrong: bool = False
    repeated: int = 0
    ok: bool = False
    heals: dict[str, list[float]] = field(default_factory=dict)
    abstentions: int = 0
    script_passed: int = -1
    script_status: str = ""
    error: str = ""
    seconds: float = 0.0


@dataclass
class TodoReport:
    """Every implementation's results, recorded on :data:`RECORDED_ON`."""

    results: list[ImplResult] = field(default_factory=list)
    recorded_on: str = RECORDED_ON
    version: str = VERSION

    def to_json_dict(self) -> dict[str, Any]:
        """``{"app": "todomvc", "version", "recorded_on", "results": [...]}``."""
        return {"app": "todomvc", "version": self.version, "recorded_on": self.recorded_on,
                "results": [asdict(r) for r in self.results]}


def judge_items(items: Sequence[str]) -> tuple[bool, int, bool]:
    """``(wrong, repeated, ok)`` of the list's texts after the flow: an item other than :data:`ITEM` is a wrong
    action, each copy of :data:`ITEM` beyond one a repeated effect, exactly ``[ITEM]`` the task done."""
    return any(x != ITEM for x in items), max(0, list(items).count(ITEM) - 1), list(items) == [ITEM]


def _replay(project: Any, base_url: str, name: str, prefix: str) -> ImplResult:
    from core.engine.session import ProjectSession

    t0 = time.monotonic()
    flow = project.flows[FLOW]
    out = ImplResult(name, prefix, len(flow.steps), 0, "error")
    try:
        with ProjectSession(project, headless=True, use_store=False, screenshots=False, base_url=base_url) as s:
            result = s.run_flow(flow)
            out.status = result.status
            out.error = (result.error or "")[:200]
            for st in result.steps:
                out.passed += int(st.status == "passed")
                res = st.resolution
                if res is None:
                    continue
                if res.abstained:
                    out.abstentions += 1
                elif res.healed:
                    out.heals.setdefault(res.strategy, []).append(round(float(res.margin), 2))
            page = s.driver.page if s.driver is not None else None
            if page is not None:
                page.wait_for_timeout(SETTLE_MS)
                out.items = [str(x) for x in page.evaluate(ITEMS_JS)]
    except Exception as exc:  # noqa: BLE001 - one implementation's failure is its row, not the bench's end
        out.error = f"{type(exc).__name__}: {exc}"[:200]
    out.wrong, out.repeated, out.ok = judge_items(out.items)
    out.seconds = round(time.monotonic() - t0, 1)
    return out


def run_todomvc(project_dir: Path, names: Sequence[str] = (), *, prefixes: Sequence[str] = ("", PREFIX),
                script: bool = True, progress: Callable[[str], None] = lambda s: None) -> TodoReport:
    """Replay ``add_item`` on each implementation (``names``; default all) at each prefix; see the module docstring."""
    import tempfile

    from core.project import load_project
    from core.sites.server import StaticSite

    from .drift_app_run import run_exported

    from core.project import ProjectError

    from .drift import DriftSetupError

    try:
        project = load_project(project_dir)
    except ProjectError as exc:  # one line, exit 2 (it was a traceback)
        raise DriftSetupError(str(exc)) from None
    pkg = ensure_package(log=progress)
    if FLOW not in project.flows:
        raise DriftEnvError(f"{project_dir}: no flow {FLOW!r} (record it on examples/{RECORDED_ON}/)")
    known = implementations(pkg)
    unknown = [n for n in names if n not in known]
    if unknown:  # a typo would be a row of 404s, or with the fab/flask-admin way, silently every implementation
        raise DriftSetupError(f"--versions: no TodoMVC implementation {', '.join(map(repr, unknown))}; "
                              f"the implementations are: {' '.join(known)}")
    wanted = list(names) or known
    report = TodoReport()
    sites = {p: StaticSite(pkg, mount=(p + "/") if p else "/") for p in prefixes}
    for s in sites.values():
        s.start()
    try:
        with tempfile.TemporaryDirectory(prefix="steadyhand-todomvc-") as work:
            for name in wanted:
                for p, site in sites.items():
                    base = f"{site.base_url}{p}/examples/{name}/"
                    r = _replay(project, base, name, p)
                    if script:
                        got = run_exported(project, FLOW, base, Path(work) / f"script-{name}-{p.strip('/') or 'root'}")
                        r.script_passed, r.script_status = got.passed, got.status
                    report.results.append(r)
                    progress(f"todomvc: {name}{p or ''}: {r.passed}/{r.steps} passed, items {r.items}; "
                             f"script {r.script_passed}/{r.steps}")
    finally:
        for s in sites.values():
            s.stop()
    return report


def format_todomvc(report: TodoReport) -> str:
    """The table: a summary per prefix, then one line per implementation and prefix."""
    lines = [f"todomvc {report.version}: flow {FLOW!r} recorded on {report.recorded_on}, replayed on each "
             "implementation (ground truth: the app's own list)"]
    for p in dict.fromkeys(r.prefix for r in report.results):
        rows = [r for r in report.results if r.prefix == p]
        full = sum(r.passed == r.steps for r in rows)
        sfull = sum(r.script_passed == r.steps for r in rows)
        both = sum(r.script_passed == r.steps and r.passed == r.steps for r in rows)
        heals: dict[str, int] = {}
        for r in rows:
            for k, v in r.heals.items():
                heals[k] = heals.get(k, 0) + len(v)
        lines.append(
            f"  at {p or '/'}: {len(rows)} implementations; Steadyhand passed {full} (exactly one item: "
            f"{sum(r.ok for r in rows)}), script passed {sfull}, both {both}; script passed and Steadyhand not: "
            f"{sfull - both}; wrong {sum(r.wrong for r in rows)}; repeated effects {sum(r.repeated for r in rows)}; "
            f"abstentions {sum(r.abstentions for r in rows)}; heals {heals or '{}'}")
    lines.append(f"  {'implementation':28} {'prefix':9} {'steps':>5} {'script':>6} {'items':>5} wrong rep  result")
    for r in report.results:
        lines.append(f"  {r.name:28} {r.prefix or '/':9} {r.passed:>2}/{r.steps:<2} {r.script_passed:>3}/{r.steps:<2} "
                     f"{len(r.items):>5} {int(r.wrong):>5} {r.repeated:>3}  {r.status}"
                     + (f" ({r.error[:80]})" if r.error and r.status != "passed" else ""))
    return "\n".join(lines)

