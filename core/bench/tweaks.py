"""``steadyhand bench tweaks``: every demo flow on every UI-tweak variant, Steadyhand against a plain script.

For each variant of the demo app (:data:`core.sites.demo.VARIANTS`, docs/variants.md):

* **Steadyhand**: a copy of the demo project with ``site_options: variant:``
  set (and the bench's latency), its own store, one
  :class:`~core.engine.session.ProjectSession` (as ``steadyhand run``
  does); each flow is run once.
* **Baseline**: the flow exported as a plain Playwright script
  (:func:`core.export.export_flow`, ``style="script"``: the locators
  Playwright's codegen would choose on the unchanged app), its ``run(page,
  base_url, params)`` called in a fresh context of the system Chromium, on a
  demo server of the same variant and latency.

Both sides are judged by the demo server's ground-truth log, never by their
own verdict alone: an activation of a control the flow has no business
touching (:data:`FLOW_EXPECTED`) is a wrong activation (a *wrong click* when
it is a click), a write the server flags as a repeat is a *double write*,
and a write of another kind than the flow's (:data:`FLOW_WRITES`) is an
*unexpected write*.  A run *passed* when it reported passing AND the log
shows no wrong activation, no double write, no unexpected write and the
flow's writes; ``reported_passed`` keeps the runner's own count, so a
silent wrong click shows as the difference.

Seconds of both sides are wall time, ms resolution, measured the same way:
site reset + fresh browser context + the flow.  ``overhead_ratio`` =
Steadyhand seconds / script seconds summed over the flows of the
``baseline`` variant (the unchanged app).  Figures are printed, never
asserted by tests.
"""
from __future__ import annotations

import fnmatch
import shutil
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import yaml

from core.bench.scripted import load_script, timed_script_run
from core.domain import RunResult

__all__ = [
    "FLOW_EXPECTED", "FLOW_WRITES", "DEFAULT_LATENCY_MS", "DEFAULT_VARIANTS", "BenchSetupError", "FlowRun",
    "TweaksReport", "judge", "run_tweaks_benchmark", "format_report",
]

#: The data-gt ids (fnmatch patterns) each demo flow may activate; any other page activation is wrong.
#: Dismissing the popup variant's "What's new" dialog by its close button is allowed; its "Take the tour"
#: is not.  (The same lists as tests/e2e/test_demo.py, plus the popup's close.)
FLOW_EXPECTED: dict[str, tuple[str, ...]] = {
    "login_lockout": ("login.*",),
    "leave_request": ("login.*", "requests.new", "new.type", "new.type.option.*", "new.start*", "new.end*",
                      "new.reason", "new.form", "new.submit", "popup.close"),
    "export_report": ("login.*", "requests.export", "dialog.export.confirm", "popup.close"),
    "sort_table": ("login.*", "requests.sort.employee", "popup.close"),
}
#: What the learning variants' failure kinds add to every flow (docs/variants.md): accepting the cookies,
#: dismissing the focus popup by "Start empty", the double-click on the Reason label (leave_request only).
#: Their other controls ("Cookie settings", "Fill it in", the text beside the label) stay wrong.
for _flow in FLOW_EXPECTED:
    FLOW_EXPECTED[_flow] += ("cookies.accept", "autofill.cancel") + (
        ("new.reason.label",) if _flow == "leave_request" else ())
del _flow
#: Successful writes each flow must make, by op (none: the flow writes nothing).
FLOW_WRITES: dict[str, dict[str, int]] = {"leave_request": {"create_request": 1}}
#: Submit latency of the demo server in the bench, ms (the project uses 800; both sides use the same).
DEFAULT_LATENCY_MS = 200


def _default_variants() -> tuple[str, ...]:
    from core.sites.demo import VARIANTS

    return tuple(v for v in VARIANTS if v != "tweaked")  # "tweaked" is an alias of a set of tweaks


#: Variants run by default: every variant but the ``tweaked`` alias.
DEFAULT_VARIANTS: tuple[str, ...] = _default_variants()


class BenchSetupError(RuntimeError):
    """The bench cannot start; ``kind`` is ``input`` (bad variant, flow or project) or ``environment``."""

    def __init__(self, message: str, kind: str = "input") -> None:
        super().__init__(message)
        self.kind = kind


@dataclass
class FlowRun:
    """One flow on one variant by one side (``steadyhand`` or ``script``).

    ``seconds`` is wall time in s (reset + fresh context + flow).  ``steps`` executed / ``steps_total`` in the
    flow; ``stopped_at`` the first step that did not pass (id), ``reason`` why (secrets masked by the engine;
    the script's exception, first line).  Ground-truth counts come from the demo server's log of this run.
    """

    variant: str
    flow: str
    side: str
    status: str
    passed: bool
    reported_passed: bool
    seconds: float
    steps: int = 0
    steps_total: int = 0
    heals: int = 0
    heals_by_strategy: dict[str, int] = field(default_factory=dict)
    abstained: int = 0
    invalid_actions: int = 0
    stopped_at: str = ""
    reason: str = ""
    error_kind: str = ""
    wrong_clicks: int = 0
    wrong_activations: list[str] = field(default_factory=list)
    double_writes: int = 0
    unexpected_writes: dict[str, int] = field(default_factory=dict)
    missing_writes: dict[str, int] = field(default_factory=dict)
    activations_by_gt: dict[str, int] = field(default_factory=dict)


def judge(flow: str, activations: Iterable[Mapping[str, Any]], writes: Iterable[Mapping[str, Any]]
          ) -> dict[str, Any]:
    """Ground-truth counts of one run from the demo server's logs (:meth:`DemoSite.activations`, ``writes``).

    Returns
    -------
    dict
        ``wrong_activations`` (gt ids of page activations outside :data:`FLOW_EXPECTED`, in order),
        ``wrong_clicks`` (those of kind ``click`` or ``dblclick``), ``double_writes`` (writes flagged duplicate),
        ``unexpected_writes`` / ``missing_writes`` (op -> count against :data:`FLOW_WRITES`),
        ``activations_by_gt`` and ``clean`` (no wrong activation, double, unexpected or missing write).
    """
    patterns = FLOW_EXPECTED.get(flow, ())
    page = [a for a in activations if a.get("source") == "page"]
    wrong = [a for a in page if not any(fnmatch.fnmatchcase(str(a["gt"]), p) for p in patterns)]
    writes = list(writes)
    ok_ops = Counter(str(w["op"]) for w in writes if w.get("ok"))
    want = Counter(FLOW_WRITES.get(flow, {}))
    unexpected = {op: n - want.get(op, 0) for op, n in ok_ops.items() if n > want.get(op, 0)}
    missing = {op: n - ok_ops.get(op, 0) for op, n in want.items() if ok_ops.get(op, 0) < n}
    doubles = sum(bool(w.get("duplicate")) for w in writes)
    return {
        "wrong_activations": [str(a["gt"]) for a in wrong],
        "wrong_clicks": sum(a.get("kind") in ("click", "dblclick") for a in wrong),
        "double_writes": doubles,
        "unexpected_writes": unexpected,
        "missing_writes": missing,
        "activations_by_gt": dict(Counter(str(a["gt"]) for a in page)),
        "clean": not wrong and not doubles and not unexpected and not missing,
    }


@dataclass
class TweaksReport:
    """Runs of both sides; :meth:`to_json_dict` gives the JSON of ``--json``."""

    latency_ms: int
    variants: list[str]
    flows: list[str]
    runs: list[FlowRun] = field(default_factory=list)

    def side(self, side: str, variant: str) -> list[FlowRun]:
        return [r for r in self.runs if r.side == side and r.variant == variant]

    def overhead(self) -> tuple[float, float, float | None]:
        """(Steadyhand s, script s, ratio) over the ``baseline`` variant's flows; ratio None without it."""
        sh = sum(r.seconds for r in self.side("steadyhand", "baseline"))
        sc = sum(r.seconds for r in self.side("script", "baseline"))
        return sh, sc, (round(sh / sc, 3) if sc > 0 and "baseline" in self.variants else None)

    def variant_row(self, variant: str) -> dict[str, Any]:
        runs = self.side("steadyhand", variant)
        heals: Counter[str] = Counter()
        for r in runs:
            heals.update(r.heals_by_strategy)
        steps = sum(r.steps for r in runs)
        invalid = sum(r.invalid_actions for r in runs)
        return {
            "variant": variant, "flows": len(runs), "passed": sum(r.passed for r in runs),
            "reported_passed": sum(r.reported_passed for r in runs),
            "wrong_clicks": sum(r.wrong_clicks for r in runs),
            "wrong_activations": sum(len(r.wrong_activations) for r in runs),
            "double_writes": sum(r.double_writes for r in runs),
            "unexpected_writes": sum(sum(r.unexpected_writes.values()) for r in runs),
            "abstained": sum(r.abstained for r in runs), "heals": sum(r.heals for r in runs),
            "heals_by_strategy": dict(heals), "invalid_actions": invalid,
            "invalid_ratio": round(invalid / steps, 3) if steps else 0.0,
            "steps": steps, "steps_total": sum(r.steps_total for r in runs),
            "seconds": round(sum(r.seconds for r in runs), 3),
            "runs": [asdict(r) for r in runs],
        }

    def baseline_row(self, variant: str) -> dict[str, Any]:
        runs = self.side("script", variant)
        return {
            "variant": variant, "flows": len(runs), "passed": sum(r.passed for r in runs),
            "reported_passed": sum(r.reported_passed for r in runs),
            "wrong_clicks": sum(r.wrong_clicks for r in runs),
            "double_writes": sum(r.double_writes for r in runs),
            "seconds": round(sum(r.seconds for r in runs), 3),
            "runs": [asdict(r) for r in runs],
        }

    def to_json_dict(self) -> dict[str, Any]:
        sh, sc, ratio = self.overhead()
        return {
            "latency_ms": self.latency_ms, "flows": self.flows,
            "variants": [self.variant_row(v) for v in self.variants],
            "baseline": [self.baseline_row(v) for v in self.variants],
            "overhead_ratio": ratio,
            "overhead": {"variant": "baseline", "steadyhand_s": round(sh, 3), "script_s": round(sc, 3)},
        }


def _copy_project(src: Path, dst: Path, variant: str, latency_ms: int) -> Path:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".steadyhand"))
    settings_path = dst / "steadyhand.yaml"
    settings = yaml.safe_load(settings_path.read_text(encoding="utf-8"))
    settings.setdefault("site_options", {})
    settings["site_options"]["variant"] = variant
    settings["site_options"]["latency_ms"] = str(latency_ms)
    settings_path.write_text(yaml.safe_dump(settings, sort_keys=False), encoding="utf-8")
    return dst


def _first_line(text: str, limit: int = 300) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line[:limit]


def _engine_run(variant: str, flow: str, result: RunResult, seconds: float, total: int,
                gt: Mapping[str, Any]) -> FlowRun:
    stop = next((o for o in result.steps if o.status not in ("passed", "skipped", "manual")), None)
    abstained = sum(1 for o in result.steps if o.resolution is not None and o.resolution.abstained)
    reason = ""
    if not result.passed:
        reason = _first_line((stop.error if stop and stop.error else "") or result.error)
    return FlowRun(
        variant=variant, flow=flow, side="steadyhand", status=result.status,
        passed=result.passed and bool(gt["clean"]), reported_passed=result.passed, seconds=round(seconds, 3),
        steps=len(result.steps), steps_total=total, heals=result.heals,
        heals_by_strategy=dict(result.heals_by_strategy), abstained=abstained,
        invalid_actions=result.invalid_actions,
        stopped_at=(f"{stop.step_id} ({stop.title})" if stop else ""), reason=reason,
        error_kind=result.error_kind, wrong_clicks=gt["wrong_clicks"],
        wrong_activations=list(gt["wrong_activations"]), double_writes=gt["double_writes"],
        unexpected_writes=dict(gt["unexpected_writes"]), missing_writes=dict(gt["missing_writes"]),
        activations_by_gt=dict(gt["activations_by_gt"]),
    )


def _wait_quiet(site: Any, settle_s: float = 0.3, limit_s: float = 3.0) -> None:
    """Wait until the page's ground-truth beacons stopped arriving (``settle_s`` without one, at most ``limit_s``)."""
    deadline = time.monotonic() + limit_s
    last = len(site.activations())
    quiet_since = time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.05)
        n = len(site.activations())
        if n != last:
            last, quiet_since = n, time.monotonic()
        elif time.monotonic() - quiet_since >= settle_s:
            return


def _run_steadyhand(project_dir: Path, variant: str, flows: Sequence[str], latency_ms: int, work: Path,
                    progress: Callable[[str], None]) -> list[FlowRun]:
    from core.engine.session import ProjectSession, SessionError
    from core.perception.browser import BrowserLaunchError
    from core.project import ProjectError, load_project

    copy = _copy_project(project_dir, work / f"steadyhand-{variant}", variant, latency_ms)
    try:
        project = load_project(copy)
    except ProjectError as exc:
        raise BenchSetupError(str(exc)) from None
    runs: list[FlowRun] = []
    try:
        with ProjectSession(project, headless=True) as session:
            site = session.site.site  # type: ignore[union-attr]  # the DemoAdapter's DemoSite
            for name in flows:
                flow = project.flows[name]
                started = time.perf_counter()
                result = session.run_flow(flow)
                seconds = time.perf_counter() - started
                _wait_quiet(site)
                gt = judge(name, site.activations(), site.writes())
                run = _engine_run(variant, name, result, seconds, len(flow.steps), gt)
                runs.append(run)
                progress(f"  steadyhand {variant}/{name}: {'passed' if run.passed else run.status}"
                         f"{' (reported passed)' if run.reported_passed and not run.passed else ''}"
                         f" {run.steps}/{run.steps_total} steps, {run.seconds:.1f}s"
                         + (f" - {run.stopped_at}: {run.reason}" if run.reason else ""))
    except BrowserLaunchError as exc:
        raise BenchSetupError(str(exc), "environment") from None
    except SessionError as exc:
        raise BenchSetupError(str(exc)) from None
    return runs


def _run_scripts(project_dir: Path, variant: str, flows: Sequence[str], latency_ms: int, work: Path,
                 progress: Callable[[str], None]) -> list[FlowRun]:
    from playwright.sync_api import sync_playwright

    from core.engine.session import SessionError, resolve_params
    from core.export import ExportError, export_flow
    from core.perception.browser import CHROMIUM_ARGS, BrowserLaunchError, find_chromium
    from core.project import load_project
    from core.sites.demo import DemoSite

    project = load_project(project_dir)  # the unchanged project: the script is exported from what was recorded
    opts = project.settings.site_options
    today = date.fromisoformat(opts["today"]) if "today" in opts else None
    site = DemoSite(**({"today": today} if today else {}), latency_ms=latency_ms, variant=variant)
    folder = work / f"script-{variant}"
    folder.mkdir(parents=True, exist_ok=True)
    scripts: dict[str, Any] = {}
    for name in flows:
        path = folder / f"{name}.py"
        try:
            path.write_text(export_flow(project, project.flows[name], style="script"), encoding="utf-8")
        except ExportError as exc:
            raise BenchSetupError(str(exc)) from None
        scripts[name] = load_script(path, f"_steadyhand_bench_script_{variant.replace('-', '_')}_{name}")
    b = project.engine_settings.browser
    try:
        chromium = find_chromium(b.executable_path)
    except BrowserLaunchError as exc:
        raise BenchSetupError(str(exc), "environment") from None
    runs: list[FlowRun] = []
    site.start()
    try:
        with sync_playwright() as pw:
            try:
                browser = pw.chromium.launch(executable_path=chromium, headless=True, args=list(CHROMIUM_ARGS))
            except Exception as exc:  # noqa: BLE001 - Chromium missing or broken: the environment
                raise BenchSetupError(f"Chromium did not start: {_first_line(str(exc))}", "environment") from None
            try:
                for name in flows:
                    flow = project.flows[name]
                    try:
                        params, _ = resolve_params(project, flow, {})
                    except SessionError as exc:
                        raise BenchSetupError(str(exc)) from None
                    seconds, error = timed_script_run(scripts[name], browser, site.base_url, params, site.reset)
                    _wait_quiet(site)
                    gt = judge(name, site.activations(), site.writes())
                    run = FlowRun(
                        variant=variant, flow=name, side="script", status="failed" if error else "passed",
                        passed=not error and bool(gt["clean"]), reported_passed=not error,
                        seconds=round(seconds, 3), steps_total=len(flow.steps), reason=error,
                        wrong_clicks=gt["wrong_clicks"], wrong_activations=list(gt["wrong_activations"]),
                        double_writes=gt["double_writes"], unexpected_writes=dict(gt["unexpected_writes"]),
                        missing_writes=dict(gt["missing_writes"]), activations_by_gt=dict(gt["activations_by_gt"]),
                    )
                    runs.append(run)
                    progress(f"  script     {variant}/{name}: {'passed' if run.passed else 'failed'} "
                             f"{run.seconds:.1f}s" + (f" - {error}" if error else ""))
            finally:
                browser.close()
    finally:
        site.close()
    return runs


def run_tweaks_benchmark(project_dir: Path | str = "projects/demo", *, variants: Sequence[str] | None = None,
                         flows: Sequence[str] | None = None, latency_ms: int = DEFAULT_LATENCY_MS,
                         progress: Callable[[str], None] = lambda line: None) -> TweaksReport:
    """Run every flow of the demo project on every variant, Steadyhand and the plain script.

    Parameters
    ----------
    project_dir : Path | str
        A project on the bundled ``demo`` site (its flows are run; its store is not touched: each
        variant runs on a temporary copy).
    variants, flows : Sequence[str] | None
        Subsets (default: :data:`DEFAULT_VARIANTS`, every flow of the project).
    latency_ms : int
        Submit latency of the demo server, ms, the same for both sides (:data:`DEFAULT_LATENCY_MS`).
    progress : Callable[[str], None]
        Receives one line per run.

    Raises
    ------
    BenchSetupError
        Unknown variant or flow, not a demo project (``kind="input"``); Chromium missing (``"environment"``).
    """
    from core.project import ProjectError, load_project
    from core.sites.demo import VARIANTS

    project_dir = Path(project_dir)
    try:
        project = load_project(project_dir)
    except ProjectError as exc:
        raise BenchSetupError(str(exc)) from None
    if project.settings.site != "demo":
        raise BenchSetupError(f"{project_dir}: the tweak bench needs a project on the bundled demo site (site: demo)")
    variants = list(variants or DEFAULT_VARIANTS)
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        raise BenchSetupError(f"unknown variant {unknown[0]!r}; expected some of {', '.join(VARIANTS)}")
    flows = list(flows or project.flows)
    missing = [f for f in flows if f not in project.flows]
    if missing:
        raise BenchSetupError(f"{project_dir}: no flow named {missing[0]} (flows: {', '.join(project.flows)})")
    if latency_ms < 0:
        raise BenchSetupError(f"latency must be 0 ms or more, got {latency_ms}")
    report = TweaksReport(latency_ms=latency_ms, variants=variants, flows=flows)
    with tempfile.TemporaryDirectory(prefix="steadyhand-bench-tweaks-") as tmp:
        work = Path(tmp)
        for variant in variants:
            progress(f"variant {variant}:")
            report.runs += _run_steadyhand(project_dir, variant, flows, latency_ms, work, progress)
            report.runs += _run_scripts(project_dir, variant, flows, latency_ms, work, progress)
    return report


def _table(rows: list[list[Any]], header: list[str]) -> str:
    cells = [header] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    line = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True))  # noqa: E731
    return "\n".join([line(cells[0]), "  ".join("-" * w for w in widths)] + [line(r) for r in cells[1:]])


def format_report(report: TweaksReport) -> str:
    """The table of ``steadyhand bench tweaks``: one row per variant, then why each failing run stopped."""
    doc = report.to_json_dict()
    rows = []
    for v, b in zip(doc["variants"], doc["baseline"], strict=True):
        heals = ", ".join(f"{k} {n}" for k, n in sorted(v["heals_by_strategy"].items())) or "-"
        rows.append([v["variant"], f"{v['passed']}/{v['flows']}", v["reported_passed"], heals, v["abstained"],
                     v["wrong_clicks"], v["double_writes"], f"{v['invalid_ratio']:.2f}",
                     f"{v['steps']}/{v['steps_total']}", f"{v['seconds']:.1f}",
                     f"{b['passed']}/{b['flows']}", b["wrong_clicks"], f"{b['seconds']:.1f}"])
    out = [f"Tweak bench: {len(report.flows)} demo flows x {len(report.variants)} variants; demo submit latency "
           f"{report.latency_ms} ms on both sides (the project uses 800 ms).",
           "passed = reported passed AND the server's log shows no wrong activation, double or unexpected write.",
           "",
           _table(rows, ["variant", "passed", "reported", "heals", "abstained", "wrong clicks", "double writes",
                         "invalid ratio", "steps", "seconds", "script passed", "script wrong", "script s"])]
    failing = [r for r in report.runs if not r.passed]
    if failing:
        out += ["", "Runs that did not pass:"]
        for r in failing:
            extra = []
            if r.wrong_activations:
                extra.append(f"wrong activations {r.wrong_activations}")
            if r.double_writes:
                extra.append(f"{r.double_writes} double writes")
            if r.unexpected_writes:
                extra.append(f"unexpected writes {r.unexpected_writes}")
            if r.missing_writes and r.reported_passed:
                extra.append(f"missing writes {r.missing_writes}")
            where = f" at {r.stopped_at}" if r.stopped_at else ""
            out.append(f"  {r.side:10} {r.variant}/{r.flow}: {r.status}{where}: {r.reason or '-'}"
                       + (f" [{'; '.join(extra)}]" if extra else ""))
    sh, sc, ratio = report.overhead()
    if ratio is not None:
        out += ["", f"overhead_ratio (Steadyhand / plain script, unchanged app): {ratio:.2f} "
                    f"({sh:.1f} s / {sc:.1f} s)"]
    return "\n".join(out)
