"""``steadyhand bench overhead``: what a replay costs against the plain Playwright script it replaces.

Three measurements in one run, on one machine:

* **Flows**: every flow of the demo project (``projects/demo``), run by
  Steadyhand - one :class:`~core.engine.session.ProjectSession`, headless,
  with its store, as ``steadyhand run`` does - and as its ``steadyhand export``
  script (:func:`core.export.export_flow`, ``style="script"``: the locators
  Playwright's codegen would choose), whose ``run(page, base_url, params)`` is
  called in a fresh context of the system Chromium on a demo server of its
  own.  The two sides are interleaved flow by flow, round by round (the side
  that goes first alternates), so a machine busy with something else slows
  both alike.  Both sides are timed the same way: site reset + fresh browser
  context + the flow (wall time, ``time.perf_counter``).  The *ratio* is
  Steadyhand seconds / script seconds, summed over every run.
* **Phases**: ms per step by phase (median and p95 over every step of every
  Steadyhand run), from the ``phase_ms`` the pipeline records for each step
  (:class:`core.domain.StepOutcome`), beside the script's ms per step (its
  flow time / its steps) and the **floor**: a bare Playwright click round
  trip (``locator.click()`` on a button whose handler counts clicks, read
  back) measured in the same browser, in the same run.
* **Scale**: the cost per step on generated pages of 100, 1,000 and 10,000
  elements (:func:`scale_page`: a four-step form flow above N filler
  elements), again Steadyhand and script side by side.

Figures depend on the machine and its load: they are printed, never asserted
(tests check that the command runs and the tables have their rows).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Callable, Sequence

import yaml

__all__ = ["DEFAULT_SIZES", "DEFAULT_ROUNDS", "DEFAULT_LATENCY_MS", "OverheadReport", "PhaseRow", "ScaleRow",
           "scale_page", "run_overhead_benchmark", "format_report", "add_overhead_parser", "overhead_command"]

#: Element counts of the generated pages (issue 20 item 3).
DEFAULT_SIZES: tuple[int, ...] = (100, 1000, 10000)
#: Rounds of every flow on each side (3: a median that one slow run cannot move).
DEFAULT_ROUNDS = 3
#: Submit latency of the demo server on both sides, ms (the same as ``bench tweaks``).
DEFAULT_LATENCY_MS = 200
#: Clicks of the floor measurement (median and p95 of that many round trips).
FLOOR_CLICKS = 30

_PHASES = ("observe", "fingerprint", "decide", "resolve", "precheck", "checkpoint", "act", "settle", "verify")


class OverheadSetupError(RuntimeError):
    """The benchmark could not start (project, Chromium); ``kind`` is ``"input"`` or ``"environment"``."""

    def __init__(self, message: str, kind: str = "input") -> None:
        super().__init__(message)
        self.kind = kind


@dataclass
class PhaseRow:
    """ms per step of one phase: median and p95 over the steps that ran it, and how many did."""

    phase: str
    median_ms: float
    p95_ms: float
    steps: int


@dataclass
class FlowRow:
    """One flow's seconds on both sides (each the median over the rounds) and their statuses."""

    flow: str
    steps: int
    steadyhand_s: float
    script_s: float
    steadyhand_passed: int
    script_passed: int
    rounds: int

    @property
    def ratio(self) -> float | None:
        return self.steadyhand_s / self.script_s if self.script_s > 0 else None


@dataclass
class ScaleRow:
    """The generated page of ``elements`` elements: ms per step on both sides (median over the steps)."""

    elements: int
    candidates: int
    steadyhand_ms: float
    steadyhand_p95_ms: float
    observe_ms: float
    script_ms: float
    passed: bool


@dataclass
class OverheadReport:
    """What ``bench overhead`` measured (see the module docstring)."""

    rounds: int
    latency_ms: int
    flows: list[FlowRow] = field(default_factory=list)
    phases: list[PhaseRow] = field(default_factory=list)
    step_ms: PhaseRow | None = None
    script_step_ms: float = 0.0
    floor_ms: tuple[float, float] = (0.0, 0.0)
    scale: list[ScaleRow] = field(default_factory=list)
    steadyhand_s: float = 0.0
    script_s: float = 0.0
    fast_steps: int = 0
    all_steps: int = 0

    @property
    def ratio(self) -> float | None:
        return self.steadyhand_s / self.script_s if self.script_s > 0 else None

    def to_json_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["ratio"] = self.ratio
        for row, src in zip(out["flows"], self.flows, strict=True):
            row["ratio"] = src.ratio
        return out


def _p95(values: Sequence[float]) -> float:
    """The 95th percentile (nearest rank) of ``values``; 0.0 when empty."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(0.95 * len(ordered))) - 1))]


def _median(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else 0.0


def _load_script(path: Path, module_name: str) -> Any:
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(module_name, None)
    return module


# --- the generated pages ------------------------------------------------------------------


def scale_page(elements: int) -> str:
    """HTML of a page with a small form above about ``elements`` filler elements.

    The form: a text field "Name", buttons "Save" (writes "Saved <name>" into
    the status line) and "Clear" (empties it), and a checkbox "Remember me".
    The filler: rows of a ``<div>``, a ``<span>`` "Item i" and a button
    "Open i" (three elements a row) up to ``elements``.
    """
    rows = max(1, elements // 3)
    filler = "\n".join(f'<div class="row"><span>Item {i}</span> <button type="button" class="open">Open {i}</button>'
                       f"</div>" for i in range(1, rows + 1))
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>Scale {elements}</title>
<style>body {{ font: 14px sans-serif; }} .row {{ padding: 2px; }}</style></head>
<body><main><h1>Scale page</h1>
<form id="f" onsubmit="return false"><label for="name">Name</label> <input id="name" type="text">
<label><input id="remember" type="checkbox"> Remember me</label>
<button type="button" id="save" onclick="document.getElementById('status').textContent =
 'Saved ' + document.getElementById('name').value">Save</button>
<button type="button" id="clear" onclick="document.getElementById('status').textContent = ''">Clear</button>
<p id="status" role="status"></p></form>
<section aria-label="Items">{filler}</section></main></body></html>"""


_SCALE_FLOW = {
    "schema_version": 1, "name": "scale", "description": "Fill a name, save, remember, clear.",
    "start_url": "/page", "params": {"who": "Ada"},
    "steps": [
        {"id": "s1", "name": "Type the name", "action": "input", "value": "{who}",
         "target": {"tag": "input", "role": "textbox", "name": "Name", "label": "Name", "id": "name", "type": "text"}},
        {"id": "s2", "name": "Save", "action": "click",
         "target": {"tag": "button", "role": "button", "name": "Save", "text": "Save", "id": "save"},
         "assertions": [{"kind": "text_appears", "expected": "Saved {who}"}]},
        {"id": "s3", "name": "Remember me", "action": "check",
         "target": {"tag": "input", "role": "checkbox", "name": "Remember me", "label": "Remember me",
                    "id": "remember", "type": "checkbox"}},
        {"id": "s4", "name": "Clear", "action": "click",
         "target": {"tag": "button", "role": "button", "name": "Clear", "text": "Clear", "id": "clear"}},
    ],
}


def _scale_project(root: Path, base_url: str, evidence: str | None) -> Path:
    (root / "flows").mkdir(parents=True, exist_ok=True)
    settings: dict[str, Any] = {"schema_version": 1, "name": "Scale", "base_url": base_url,
                                "browser": {"headless": True, "viewport": {"width": 1280, "height": 800}}}
    if evidence:
        settings["evidence"] = evidence
    (root / "steadyhand.yaml").write_text(yaml.safe_dump(settings, sort_keys=False), encoding="utf-8")
    (root / "flows" / "scale.yaml").write_text(yaml.safe_dump(_SCALE_FLOW, sort_keys=False), encoding="utf-8")
    return root


# --- the two sides -------------------------------------------------------------------------


class _ScriptSide:
    """The exported scripts of a project, run in one Chromium (a context per run).

    Playwright's sync API allows one instance per thread and the Steadyhand
    session holds the main thread's, so every call of this side runs on a
    thread of its own (:meth:`call`); the caller waits for it, so the two
    sides still take turns.
    """

    def __init__(self, project: Any, flows: Sequence[str], folder: Path, thread: Any = None) -> None:
        from concurrent.futures import ThreadPoolExecutor

        from core.export import ExportError, export_flow

        folder.mkdir(parents=True, exist_ok=True)
        self.project = project
        self.modules: dict[str, Any] = {}
        for name in flows:
            path = folder / f"{name}.py"
            try:
                path.write_text(export_flow(project, project.flows[name], style="script"), encoding="utf-8")
            except ExportError as exc:
                raise OverheadSetupError(str(exc)) from None
            self.modules[name] = _load_script(path, f"_steadyhand_overhead_{folder.name}_{name}".replace("-", "_"))
        self._pw: Any = None
        self.browser: Any = None
        self.thread = thread or ThreadPoolExecutor(max_workers=1, thread_name_prefix="script-side")

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` on this side's thread; its result (or its exception)."""
        return self.thread.submit(fn, *args).result()

    def open(self) -> None:
        self.call(self._open)

    def close(self) -> None:
        try:
            self.call(self._close)
        finally:
            self.thread.shutdown(wait=True)

    def run(self, name: str, base_url: str, reset: Callable[[], None]) -> tuple[float, str]:
        """(seconds, error): reset, a fresh context, the flow; "" when it passed."""
        return self.call(self._run, name, base_url, reset)  # type: ignore[no-any-return]

    def floor(self, clicks: int = FLOOR_CLICKS) -> tuple[float, float]:
        """(median, p95) ms of a bare Playwright click round trip: ``locator.click()`` on a counting button."""
        return self.call(self._floor, clicks)  # type: ignore[no-any-return]

    def _open(self) -> None:
        from playwright.sync_api import sync_playwright

        from core.perception.browser import CHROMIUM_ARGS, BrowserLaunchError, find_chromium

        try:
            chromium = find_chromium(self.project.engine_settings.browser.executable_path)
        except BrowserLaunchError as exc:
            raise OverheadSetupError(str(exc), "environment") from None
        self._pw = sync_playwright().start()
        try:
            self.browser = self._pw.chromium.launch(executable_path=chromium, headless=True, args=list(CHROMIUM_ARGS))
        except Exception as exc:  # noqa: BLE001 - Chromium missing or broken: the environment
            self._pw.stop()
            raise OverheadSetupError(f"Chromium did not start: {str(exc).splitlines()[0]}", "environment") from None

    def _close(self) -> None:
        try:
            if self.browser is not None:
                self.browser.close()
        finally:
            if self._pw is not None:
                self._pw.stop()
        self.browser = self._pw = None

    def _run(self, name: str, base_url: str, reset: Callable[[], None]) -> tuple[float, str]:
        from core.engine.session import SessionError, resolve_params

        module = self.modules[name]
        try:
            params, _ = resolve_params(self.project, self.project.flows[name], {})
        except SessionError as exc:
            raise OverheadSetupError(str(exc)) from None
        started = time.perf_counter()
        reset()
        context = module.new_context(self.browser)
        error = ""
        try:
            module.run(context.new_page(), base_url, params)
        except Exception as exc:  # noqa: BLE001 - the script's verdict
            error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        finally:
            context.close()
        return time.perf_counter() - started, error

    def _floor(self, clicks: int) -> tuple[float, float]:
        context = self.browser.new_context()
        try:
            page = context.new_page()
            page.set_content('<button type="button" onclick="this.dataset.n = +(this.dataset.n || 0) + 1">Count'
                             '</button>')
            button = page.get_by_role("button", name="Count", exact=True)
            button.click()  # warm-up
            times = []
            for _ in range(clicks):
                t0 = time.perf_counter()
                button.click()
                times.append((time.perf_counter() - t0) * 1000.0)
            return _median(times), _p95(times)
        finally:
            context.close()


def _copy_project(src: Path, dst: Path, latency_ms: int, variant: str | None, evidence: str | None) -> Path:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".steadyhand"))
    path = dst / "steadyhand.yaml"
    settings = yaml.safe_load(path.read_text(encoding="utf-8"))
    settings.setdefault("site_options", {})
    settings["site_options"]["latency_ms"] = str(latency_ms)
    if variant:
        settings["site_options"]["variant"] = variant
    if evidence:
        settings["evidence"] = evidence
    path.write_text(yaml.safe_dump(settings, sort_keys=False), encoding="utf-8")
    return dst


def _steadyhand_run(session: Any, flow: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    result = session.run_flow(flow)
    return time.perf_counter() - started, result


def run_overhead_benchmark(project_dir: Path | str = "projects/demo", *, flows: Sequence[str] | None = None,
                           rounds: int = DEFAULT_ROUNDS, latency_ms: int = DEFAULT_LATENCY_MS,
                           sizes: Sequence[int] = DEFAULT_SIZES, evidence: str | None = None,
                           progress: Callable[[str], None] = lambda line: None) -> OverheadReport:
    """Run the three measurements of the module docstring and return their figures.

    ``evidence`` overrides the project's evidence level on the Steadyhand side
    (``full``, ``failures`` or ``off``; None keeps the project's).

    Raises
    ------
    OverheadSetupError
        The project cannot be loaded or is not on the bundled demo site (``kind="input"``), or Chromium cannot
        start (``kind="environment"``).
    ValueError
        ``rounds`` < 1 or a size < 10.
    """
    from core.engine.session import ProjectSession, SessionError
    from core.perception.browser import BrowserLaunchError
    from core.project import ProjectError, load_project
    from core.sites.demo import DemoSite

    if rounds < 1 or any(s < 10 for s in sizes):
        raise ValueError(f"rounds must be >= 1 and sizes >= 10, got {rounds} and {list(sizes)}")
    src = Path(project_dir)
    try:
        original = load_project(src)
    except ProjectError as exc:
        raise OverheadSetupError(str(exc)) from None
    if original.settings.site != "demo":
        raise OverheadSetupError(f"{src}: bench overhead needs a project on the bundled demo site (site: demo)")
    names = list(flows or original.flows)
    unknown = [n for n in names if n not in original.flows]
    if unknown:
        raise OverheadSetupError(f"no flow named {', '.join(unknown)} in {src} (flows: {', '.join(original.flows)})")
    report = OverheadReport(rounds=rounds, latency_ms=latency_ms)
    work = Path(tempfile.mkdtemp(prefix="steadyhand-overhead-"))
    opts = original.settings.site_options
    today = date.fromisoformat(opts["today"]) if "today" in opts else None
    try:
        project = load_project(_copy_project(src, work / "steadyhand", latency_ms, None, evidence))
        scripts = _ScriptSide(original, names, work / "script")
        site = DemoSite(**({"today": today} if today else {}), latency_ms=latency_ms)
        site.start()
        scripts.open()
        sh_times: dict[str, list[float]] = {n: [] for n in names}
        sc_times: dict[str, list[float]] = {n: [] for n in names}
        passed = {n: [0, 0] for n in names}
        per_phase: dict[str, list[float]] = {p: [] for p in _PHASES}
        step_ms: list[float] = []
        script_step: list[float] = []
        try:
            with ProjectSession(project, headless=True) as session:
                for r in range(rounds):
                    for i, name in enumerate(names):
                        flow = project.flows[name]
                        order = ("steadyhand", "script") if (r + i) % 2 == 0 else ("script", "steadyhand")
                        for side in order:
                            if side == "steadyhand":
                                secs, result = _steadyhand_run(session, flow)
                                sh_times[name].append(secs)
                                passed[name][0] += int(result.passed)
                                for o in result.steps:
                                    for ph, ms in o.phase_ms:
                                        if ph in per_phase:
                                            per_phase[ph].append(ms)
                                    step_ms.append(o.ms)
                                    report.all_steps += 1
                                    if o.resolution is not None and o.resolution.reason.startswith("fast path"):
                                        report.fast_steps += 1
                                progress(f"  steadyhand {name} round {r + 1}: {result.status} {secs:.2f}s")
                            else:
                                secs, error = scripts.run(name, site.base_url, site.reset)
                                sc_times[name].append(secs)
                                passed[name][1] += int(not error)
                                script_step.append(secs * 1000.0 / max(1, len(flow.steps)))
                                progress(f"  script     {name} round {r + 1}: {'failed' if error else 'passed'} "
                                         f"{secs:.2f}s" + (f" - {error}" if error else ""))
                report.floor_ms = scripts.floor()
                progress(f"  floor: a bare click round trip {report.floor_ms[0]:.1f} ms")
            for size in sizes:  # each its own session: one Playwright per thread
                report.scale.append(_scale_row(size, evidence, work, scripts))
                progress(f"  scale {size} elements: {report.scale[-1].steadyhand_ms:.0f} ms per step")
        finally:
            scripts.close()
            site.stop()
    except BrowserLaunchError as exc:
        raise OverheadSetupError(str(exc), "environment") from None
    except SessionError as exc:
        raise OverheadSetupError(str(exc)) from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for name in names:
        report.flows.append(FlowRow(name, len(project.flows[name].steps), round(_median(sh_times[name]), 3),
                                    round(_median(sc_times[name]), 3), passed[name][0], passed[name][1], rounds))
    report.steadyhand_s = round(sum(sum(v) for v in sh_times.values()), 3)
    report.script_s = round(sum(sum(v) for v in sc_times.values()), 3)
    report.phases = [PhaseRow(p, round(_median(v), 1), round(_p95(v), 1), len(v)) for p, v in per_phase.items() if v]
    report.step_ms = PhaseRow("step", round(_median(step_ms), 1), round(_p95(step_ms), 1), len(step_ms))
    report.script_step_ms = round(_median(script_step), 1)
    return report


def _scale_row(size: int, evidence: str | None, work: Path, scripts: _ScriptSide) -> ScaleRow:
    """The generated page of ``size`` elements: its four-step flow on both sides, ms per step."""
    from core.engine.session import ProjectSession
    from core.project import load_project
    from core.sites.server import LoopbackServer, Response

    html = scale_page(size)
    server = LoopbackServer()
    server.route("GET", "/page", lambda req: Response.text(html, 200, "text/html; charset=utf-8"))
    with server:
        project = load_project(_scale_project(work / f"scale-{size}", server.base_url, evidence))
        flow = project.flows["scale"]
        with ProjectSession(project, headless=True, use_store=False) as session:
            _steadyhand_run(session, flow)  # warm-up: the browser's first page
            _, result = _steadyhand_run(session, flow)
            obs = session.driver.observe(screenshot=False)  # type: ignore[union-attr]
        script = _ScriptSide(project, ["scale"], work / f"scale-script-{size}", thread=scripts.thread)
        script.browser = scripts.browser
        script.run("scale", server.base_url, lambda: None)  # warm-up
        secs, error = script.run("scale", server.base_url, lambda: None)
    ms = [o.ms for o in result.steps]
    observe = [ms_ for o in result.steps for ph, ms_ in o.phase_ms if ph == "observe"]
    return ScaleRow(size, len(obs.candidates), round(_median(ms), 1), round(_p95(ms), 1), round(_median(observe), 1),
                    round(secs * 1000.0 / len(flow.steps), 1), bool(result.passed and not error))


# --- output --------------------------------------------------------------------------------


def _table(rows: list[list[Any]], header: list[str]) -> str:
    cells = [header] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True)))
             for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def format_report(report: OverheadReport) -> str:
    """The three tables (flows, phases, scale) and the ratio, as plain text."""
    ratio = f"{report.ratio:.2f}x" if report.ratio is not None else "n/a"
    out = [f"Steadyhand against its exported Playwright script, demo app, {report.rounds} round(s) interleaved, "
           f"submit latency {report.latency_ms} ms", ""]
    out.append(_table([[f.flow, f.steps, f"{f.steadyhand_s:.2f}", f"{f.script_s:.2f}",
                        f"{f.ratio:.2f}x" if f.ratio is not None else "n/a",
                        f"{f.steadyhand_passed}/{f.rounds}", f"{f.script_passed}/{f.rounds}"] for f in report.flows]
                      + [["all flows", sum(f.steps for f in report.flows), f"{report.steadyhand_s:.2f}",
                          f"{report.script_s:.2f}", ratio, "", ""]],
                      ["flow", "steps", "steadyhand s", "script s", "ratio", "sh passed", "script passed"]))
    out += ["", f"ratio (Steadyhand / script, all runs): {ratio}", "",
            f"ms per step by phase (Steadyhand, {report.all_steps} steps, {report.fast_steps} on the fast path):"]
    rows = [[p.phase, f"{p.median_ms:.1f}", f"{p.p95_ms:.1f}", p.steps] for p in report.phases]
    if report.step_ms is not None:
        rows.append(["whole step", f"{report.step_ms.median_ms:.1f}", f"{report.step_ms.p95_ms:.1f}",
                     report.step_ms.steps])
    rows.append(["script step (flow time / steps)", f"{report.script_step_ms:.1f}", "", ""])
    rows.append(["floor: bare Playwright click", f"{report.floor_ms[0]:.1f}", f"{report.floor_ms[1]:.1f}",
                 FLOOR_CLICKS])
    out.append(_table(rows, ["phase", "median ms", "p95 ms", "n"]))
    if report.scale:
        out += ["", "cost per step on generated pages (a four-step form flow above N elements):"]
        out.append(_table([[s.elements, s.candidates, f"{s.steadyhand_ms:.1f}", f"{s.steadyhand_p95_ms:.1f}",
                            f"{s.observe_ms:.1f}", f"{s.script_ms:.1f}", "yes" if s.passed else "NO"]
                           for s in report.scale],
                          ["elements", "candidates", "steadyhand ms/step", "p95", "observe ms", "script ms/step",
                           "passed"]))
    return "\n".join(out)


# --- command line --------------------------------------------------------------------------


def add_overhead_parser(bsub: Any) -> Any:
    """Register ``steadyhand bench overhead`` on the bench subparsers; returns the parser."""
    b = bsub.add_parser("overhead", help="what a replay costs against its exported Playwright script (ratio, ms "
                                         "per step by phase, cost per step on 100/1,000/10,000 elements)",
                        description="Run the demo's flows as Steadyhand and as their exported Playwright scripts, "
                                    "interleaved, and print the ratio, ms per step by phase beside a bare click "
                                    "round trip, and the cost per step on generated pages.")
    b.add_argument("--project", default="projects/demo", help="a project on the bundled demo site "
                                                              "(default projects/demo)")
    b.add_argument("--flows", nargs="+", metavar="FLOW", help="flows to run (default: all of the project)")
    b.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS, help=f"runs of each flow per side "
                                                                      f"(default {DEFAULT_ROUNDS})")
    b.add_argument("--latency-ms", type=int, default=DEFAULT_LATENCY_MS,
                   help=f"demo submit latency for both sides, ms (default {DEFAULT_LATENCY_MS})")
    b.add_argument("--sizes", nargs="*", type=int, default=list(DEFAULT_SIZES), metavar="N",
                   help="element counts of the generated pages (default 100 1000 10000; none: skip)")
    b.add_argument("--evidence", choices=("full", "failures", "off"), default=None,
                   help="the Steadyhand side's evidence level (default: the project's)")
    b.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    b.set_defaults(func=overhead_command)
    return b


def overhead_command(args: argparse.Namespace) -> int:
    """``steadyhand bench overhead`` (exit 0: the figures are the output; 2 bad input; 4 no Chromium)."""
    from core.exitcodes import EXIT_ENVIRONMENT, EXIT_INPUT, EXIT_OK

    if args.rounds < 1 or any(s < 10 for s in args.sizes):
        print(f"steadyhand: error: --rounds must be at least 1 and --sizes at least 10, got {args.rounds} and "
              f"{args.sizes}", file=sys.stderr)
        return EXIT_INPUT
    try:
        report = run_overhead_benchmark(args.project, flows=args.flows, rounds=args.rounds,
                                        latency_ms=args.latency_ms, sizes=args.sizes, evidence=args.evidence,
                                        progress=lambda line: print(line, file=sys.stderr, flush=True))
    except OverheadSetupError as exc:
        print(f"steadyhand: error: {exc}", file=sys.stderr)
        return EXIT_ENVIRONMENT if exc.kind == "environment" else EXIT_INPUT
    print(format_report(report), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(report.to_json_dict(), indent=2) + "\n", encoding="utf-8")
    return EXIT_OK
