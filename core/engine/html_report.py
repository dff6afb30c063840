"""One self-contained HTML file per run, and an index over the runs of one invocation, from the store.

:func:`html_report` reads a stored run (:meth:`core.store.Store.run_detail`,
:meth:`core.store.Store.step_evidence`, the heal proposals the run made) and
renders the Jinja2 template ``templates/run.html.j2`` (autoescaped: every text
is HTML-escaped) into one document with no outside reference: screenshots are
embedded as data URLs (downscaled to at most :data:`SHOT_MAX_W` px wide, JPEG),
styles are inline, there is no script.  It shows

- the run: flow, status, time, steps passed of the flow's, heals, the URL it
  started on and ended on, and where it stopped as a link to that step, with
  the received text of each failed assertion;
- each step: its verdict, locator strategy and score, the page's URL, time
  (active ms, and the time spent waiting for a person), the before and after
  screenshots at the width of the page (click one to see it over the whole
  window; CSS only) with the changed regions outlined (the regions the engine
  computed once, :mod:`core.state.diff`, the same the studio's timeline
  shows), the expected and observed change, the assertions checked (expected
  and received), console errors and failed requests;
- heals: the old and the new descriptor side by side;
- the circuit breaker's history: consecutive failed verifications attempt by
  attempt, and where it opened;
- escalations with their reasons;
- the environment (:func:`environment_facts`: browser and its version, host,
  system, Python, Playwright, base URL) when the caller gives it.

:func:`html_index` renders ``templates/index.html.j2``: one row per run of an
invocation (flow, result, steps passed, heals, time, a link to the run's report
and to the step where it stopped), written at the ``--html`` path whenever
there is more than one run, so that path never changes with the number of flows.

Texts come from the store, which masked secrets when it wrote them; screenshot
regions of password fields were painted over when they were taken.
"""
from __future__ import annotations

import base64
import io
import os
import platform
import socket
import subprocess
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from core.act.expect import change_words
from core.progress import counted

#: An assertion kind (the flow file's ``assertions[].kind``) in plain words, for the report's text.
ASSERTION_WORDS = {
    "visible": "visible", "hidden": "hidden", "text_equals": "text equals", "text_contains": "text contains",
    "enabled": "enabled", "disabled": "disabled", "value": "value", "count": "count", "text_appears": "text appears",
    "text_absent": "text absent", "url_contains": "URL contains",
}

__all__ = ["html_report", "html_index", "index_entry", "write_html_report", "write_html_index", "environment_facts",
           "IndexEntry", "ReportError", "SHOT_MAX_W"]

#: Embedded screenshots are downscaled to at most this width, px: the default viewport's width (1280 CSS px,
#: core.domain.settings), so text reads at its own size when the picture is enlarged.
SHOT_MAX_W = 1280
#: JPEG quality of embedded screenshots (0-100).
SHOT_QUALITY = 72
#: Longest wait for ``chromium --version``, s.
VERSION_TIMEOUT_S = 5.0


class ReportError(RuntimeError):
    """The run cannot be reported (unknown run id, several runs match a prefix); the message says which."""


@lru_cache(maxsize=1)
def _templates() -> Any:
    from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

    return Environment(loader=FileSystemLoader(Path(__file__).with_name("templates")),
                       autoescape=select_autoescape(default=True, default_for_string=True),
                       undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def _shot(path: Path | None, regions: Iterable[Any], css_w: float, css_h: float, caption: str) -> dict[str, Any]:
    """An embedded screenshot (``data``: base64 JPEG, ``w``/``h`` px) with ``regions`` (CSS px boxes) as percent
    boxes; ``missing`` says why there is none."""
    if path is None or not path.is_file():
        return {"caption": caption, "data": "", "missing": "no screenshot"}
    from PIL import Image

    try:
        with Image.open(path) as img:
            img = img.convert("RGB")
            w, h = img.size
            scale = min(1.0, SHOT_MAX_W / max(1, w))
            if scale < 1.0:
                img = img.resize((max(1, int(w * scale)), max(1, int(h * scale))))
            buf = io.BytesIO()
            img.save(buf, format="JPEG", quality=SHOT_QUALITY)
            shown_w, shown_h = img.size
    except OSError:
        return {"caption": caption, "data": "", "missing": "unreadable screenshot"}
    css_w = css_w or w
    css_h = css_h or h
    boxes = []
    for r in regions:
        x, y, bw, bh = (r.x, r.y, r.width, r.height) if hasattr(r, "x") else r
        boxes.append((f"{100.0 * x / css_w:.2f}", f"{100.0 * y / css_h:.2f}", f"{100.0 * bw / css_w:.2f}",
                      f"{100.0 * bh / css_h:.2f}"))
    return {"caption": caption, "data": base64.b64encode(buf.getvalue()).decode("ascii"), "w": shown_w,
            "h": shown_h, "boxes": boxes, "missing": ""}


def _descriptor(d: Mapping[str, Any]) -> str:
    keys = ("role", "name", "label", "text", "placeholder", "test_id", "id", "name_attr", "tag", "css_path")
    lines = [f"{k}: {d[k]}" for k in keys if d.get(k)]
    return "\n".join(lines) or "(empty)"


def _breaker_history(detail: Any) -> dict[str, Any]:
    """Attempt by attempt: a failed verification counts up, a passed one resets; where it opened."""
    marks, consecutive, most = [], 0, 0
    for v in detail.verdicts:
        if v.kind == "as_expected":
            consecutive = 0
            marks.append({"cls": "ok", "title": f"step {v.index + 1}: as expected", "text": "\u2713"})
        else:
            consecutive += 1
            most = max(most, consecutive)
            marks.append({"cls": "bad", "title": f"step {v.index + 1}: {v.kind}", "text": str(consecutive)})
    opened = [e for e in detail.escalations if "circuit breaker open" in e.reason]
    text = f"most consecutive failed verifications: {most}"
    if opened:
        text += "; opened at step " + ", ".join(str(e.index + 1) for e in opened)
        marks.append({"cls": "open", "title": "open", "text": "!"})
    else:
        text += "; it never opened"
    return {"marks": marks, "text": text}


def _assertion_rows(ev: Any) -> list[dict[str, Any]]:
    if ev is None:
        return []
    return [{"ok": a.ok, "kind": ASSERTION_WORDS.get(a.kind, a.kind.replace("_", " ")), "target": a.target,
             "expected": repr(a.expected), "received": a.observed} for a in ev.assertions]


def _step(detail: Any, index: int, evidence: Any, store: Any, stop_index: int | None) -> dict[str, Any]:
    part = detail.for_step(index)
    step = part["step"]
    res = part["resolutions"][-1] if part["resolutions"] else None
    verdict = part["verdicts"][-1] if part["verdicts"] else None
    obs = {o.when: o for o in part["observations"]}
    ev = evidence.evidence if evidence is not None else None
    waited = ""
    if ev is not None and ev.wall_ms > ev.active_ms + 1:
        waited = f" (+{(ev.wall_ms - ev.active_ms) / 1000:.1f} s waiting for a person)"
    after = obs.get("after") or obs.get("before")
    out: dict[str, Any] = {
        "n": index + 1, "title": step.title, "step_id": step.step_id, "status": step.status,
        "attempts": step.attempts, "is_stop": index == stop_index, "error": step.error,
        "locator": ("abstained" if res.abstained else f"{res.strategy} {res.score:.2f} (margin {res.margin:.2f})")
        if res is not None else "", "locator_reason": res.reason if res is not None else "",
        "verdict": {"kind": verdict.kind, "expected": verdict.expected, "observed": ", ".join(verdict.observed),
                    "expected_words": change_words(verdict.expected), "observed_words": change_words(verdict.observed),
                    "reason": verdict.reason} if verdict is not None else None,
        "url": after.url if after is not None else "",
        "time": f"{step.ms:,.0f} ms{waited}",
        "phases": " · ".join(f"{p} {ms:,.0f}" for p, ms in ev.phase_ms) + " ms" if ev is not None and ev.phase_ms
        else "",
        "assertions": _assertion_rows(ev),
        "console": list(ev.console) if ev is not None else [],
        "requests": [f"{r.method} {r.url} {r.status or r.error}" for r in ev.failed_requests] if ev is not None else [],
        "escalations": [e.reason for e in part["escalations"]],
        "shots": [], "diff": "",
    }
    regions = ev.diff.regions if ev is not None and ev.diff is not None else ()
    if obs:
        def shot(when: str, rel: str | None) -> dict[str, Any]:
            o = obs.get(when)
            rel = rel or (o.screenshot if o is not None else None)
            w, h = (o.viewport if o is not None else (0, 0))
            return _shot(store.media_path(rel) if rel else None, regions, w, h, when)

        out["shots"] = [shot("before", evidence.before_screenshot if evidence else None),
                        shot("after", evidence.after_screenshot if evidence else None)]
        if ev is not None and ev.diff is not None:
            out["diff"] = f"{counted(len(regions), 'changed region')}, {100 * ev.diff.changed_ratio:.1f}% of the page"
    return out


def _heals(store: Any, run_id: str) -> list[dict[str, Any]]:
    try:
        from core.store import HealTable

        recs = [r for r in HealTable(store).list() if run_id in (r.run_id, r.last_run_id)]
    except Exception:  # noqa: BLE001 - a store without proposals: nothing to show
        recs = []
    from core.heal.identity import change_label

    return [{"kind": r.kind, "id": r.id, "step_id": r.step_id, "step_title": r.step_title, "status": r.status,
             "change": change_label(r.old_target, r.new_target) if r.old_target else "",
             "how": f"{r.strategy} {r.score:.2f}, margin {r.margin:.2f}", "old": _descriptor(r.old_target),
             "new": _descriptor(r.new_target)} for r in recs]


def _skills(store: Any, run_id: str) -> list[dict[str, Any]]:
    """The run's skill uses (K6): step, skill, outcome, ms and reason, oldest first."""
    try:
        from core.store.skills import SkillTable

        uses = SkillTable(store).uses(run_id=run_id)[::-1]
    except Exception:  # noqa: BLE001 - a store without the skill tables: nothing to show
        uses = []
    return [{"step": f"{u.step_index + 1} {u.step_id}", "skill": u.skill_id, "outcome": u.outcome,
             "ms": f"{u.ms:.0f} ms", "reason": u.reason} for u in uses]


def _stop_index(detail: Any) -> int | None:
    """The step a run that did not pass stopped at: the last step that did not pass, else None."""
    if detail.run.status == "passed":
        return None
    bad = [s.index for s in detail.steps if s.status != "passed"]
    return bad[-1] if bad else None


@lru_cache(maxsize=8)
def _browser_version(executable: str) -> str:
    try:
        out = subprocess.run([executable, "--version"], capture_output=True, text=True, timeout=VERSION_TIMEOUT_S,
                             check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else ""


def environment_facts(executable: str | None = None, *, base_url: str = "", headless: bool | None = None
                      ) -> dict[str, str]:
    """What a reader of a report needs to reproduce it: ``{"browser", "host", "system", "python", "playwright",
    "steadyhand", "base URL"}`` (absent values left out).

    ``executable`` is the Chromium the run used (:func:`core.perception.browser.find_chromium`); its version is
    asked with ``--version`` (at most :data:`VERSION_TIMEOUT_S` s); None is Playwright's own build.
    """
    from importlib.metadata import PackageNotFoundError, version

    def pkg(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return ""

    browser = "Playwright's own Chromium"
    if executable:
        browser = f"{_browser_version(executable) or 'Chromium'} ({executable})"
    if headless is not None:
        browser += ", headless" if headless else ", headed"
    facts = {"browser": browser, "host": socket.gethostname(),
             "system": f"{platform.system()} {platform.release()} ({platform.machine()})",
             "python": platform.python_version(), "playwright": pkg("playwright"), "steadyhand": pkg("steadyhand"),
             "base URL": base_url, "CI": os.environ.get("CI", "")}
    return {k: v for k, v in facts.items() if v}


def _resolve_run(store: Any, run_id: str) -> str:
    """The full id of ``run_id`` (a full id or a unique prefix, :meth:`core.store.Store.resolve_run_id`)."""
    from core.store import RunIdError

    try:
        return store.resolve_run_id(run_id)
    except RunIdError as exc:
        raise ReportError(str(exc)) from None


def html_report(store: Any, run_id: str, *, total_steps: int | None = None,
                environment: Mapping[str, str] | None = None, index_href: str = "") -> str:
    """The HTML document of run ``run_id`` (a full id or an unambiguous prefix).

    ``environment`` (:func:`environment_facts`) is shown at the end; ``index_href`` links back to the index of
    the invocation's runs.  The run's Playwright trace (``run --trace``, :func:`core.engine.trace.trace_file`
    under the store's media folder), when one was kept, is linked in the header with the command that opens it.

    Raises
    ------
    ReportError
        When no run or several runs match ``run_id``.
    """
    run_id = _resolve_run(store, run_id)
    detail = store.run_detail(run_id)
    evidence = {e.index: e for e in store.step_evidence(run_id)}
    run = detail.run
    stop_index = _stop_index(detail)
    steps = [_step(detail, s.index, evidence.get(s.index), store, stop_index) for s in detail.steps]
    stop = None
    if stop_index is not None:
        st = next(x for x in steps if x["n"] == stop_index + 1)
        stop = {"n": st["n"], "step_id": st["step_id"], "title": st["title"],
                "reason": st["error"] or run.error or (st["verdict"] or {}).get("reason") or run.status,
                "failed": [a for a in st["assertions"] if not a["ok"]]}
    urls = [o.url for o in sorted(detail.observations, key=lambda o: (o.index, o.when != "before")) if o.url]
    from core.engine.trace import trace_file

    media_root = getattr(store, "media_root", None)
    trace = trace_file(media_root, run_id) if media_root is not None else None
    return _templates().get_template("run.html.j2").render(
        trace_href=trace.as_uri() if trace is not None else "", trace_path=str(trace) if trace is not None else "",
        run=run, steps=steps, stop=stop, total_steps=total_steps, index_href=index_href,
        passed=sum(1 for s in detail.steps if s.status == "passed"), heals_text=counted(run.heals or 0, "heal"),
        when=run.started_at.strftime("%Y-%m-%d %H:%M:%S UTC") if isinstance(run.started_at, datetime) else "",
        seconds=f"{run.seconds:.1f} s" if run.seconds is not None else "not finished",
        start_url=urls[0] if urls else "", end_url=urls[-1] if urls else "",
        heals=_heals(store, run_id), skills=_skills(store, run_id), breaker=_breaker_history(detail),
        env=dict(environment or {}))


def write_html_report(store: Any, run_id: str, path: Path, *, total_steps: int | None = None,
                      environment: Mapping[str, str] | None = None, index_href: str = "") -> Path:
    """Write :func:`html_report` to ``path`` atomically; returns the path.

    Raises
    ------
    ReportError
        As :func:`html_report`.
    OSError
        When the file cannot be written.
    """
    text = html_report(store, run_id, total_steps=total_steps, environment=environment, index_href=index_href)
    return _write(path, text)


def _write(path: Path, text: str) -> Path:
    from core.project.loader import write_atomic

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text.encode("utf-8"))
    return path


class IndexEntry(dict):  # type: ignore[type-arg]
    """One row of the index: ``flow``, ``status``, ``label`` (the result as the run table says it), ``steps``
    (``"3 of 5"``), ``heals``, ``seconds`` (``"4.2 s"``), ``href`` (the run's report, relative to the index; "" when
    none was written), ``stop_n`` / ``stop_href`` (the step it stopped at and its anchor), ``reason`` and, when
    ``--retries`` ran the flow again after this run, ``retried`` (True: listed, not counted in the headline)."""


def index_entry(result: Any, href: str) -> IndexEntry:
    """The index row of a :class:`core.domain.RunResult` whose report is at ``href`` ("" for none)."""
    from .report import Stop, result_label, succeeded

    passed = sum(1 for o in result.steps if o.status == "passed")
    entry = IndexEntry(flow=result.flow, status="passed" if succeeded(result) else result.status,
                       label=result_label(result), steps=f"{passed} of {result.total_steps or len(result.steps)}",
                       heals=result.heals, seconds=f"{result.seconds:.1f} s", href=href, stop_n=None, stop_href="",
                       reason="")
    if not succeeded(result):
        stop = Stop.of(result)
        entry["reason"] = stop.reason or stop.kind or result.status
        if stop.index is not None:
            entry["stop_n"] = stop.index + 1
            entry["stop_href"] = f"{href}#step-{stop.index + 1}" if href else ""
    return entry


def html_index(project: str, entries: Sequence[Mapping[str, Any]], *, environment: Mapping[str, str] | None = None,
               base_url: str = "", when: datetime | None = None) -> str:
    """The index of one invocation's runs (``templates/index.html.j2``): a row per run (:func:`index_entry`).

    The headline counts the runs that stand, as the run table, the JSON and the JUnit do: a run marked
    ``retried`` (``--retries`` ran the flow again after it) is listed but not counted.
    """
    stamp = (when or datetime.now(timezone.utc)).astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    counted = [e for e in entries if not e.get("retried")]
    return _templates().get_template("index.html.j2").render(
        project=project, runs=list(entries), passed_runs=sum(1 for e in counted if e["status"] == "passed"),
        counted_runs=len(counted), retried_runs=len(entries) - len(counted),
        when=stamp, base_url=base_url, env=dict(environment or {}))


def write_html_index(path: Path, project: str, entries: Sequence[Mapping[str, Any]], *,
                     environment: Mapping[str, str] | None = None, base_url: str = "") -> Path:
    """Write :func:`html_index` to ``path`` atomically; returns the path.  Raises ``OSError`` when it cannot."""
    return _write(path, html_index(project, entries, environment=environment, base_url=base_url))
