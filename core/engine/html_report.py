"""One self-contained HTML file per run, from the store: what a manager or a tester opens in a browser.

:func:`html_report` reads a stored run (:meth:`core.store.Store.run_detail`,
:meth:`core.store.Store.step_evidence`, the heal proposals the run made) and
writes one HTML document with no outside reference: screenshots are embedded
as data URLs (downscaled to at most :data:`SHOT_MAX_W` px wide, JPEG), styles
are inline, there is no script.  It shows

- the run: flow, status, time, steps passed of the flow's, heals;
- each step: its verdict, locator strategy and score, time (active ms, and
  the time spent waiting for a person), the before and after screenshots side
  by side with the changed regions outlined (the regions the engine computed
  once, :mod:`core.state.diff`, the same the studio's timeline shows), the
  expected and observed change, the assertions checked, console errors and
  failed requests;
- heals: the old and the new descriptor side by side;
- the circuit breaker's history: consecutive failed verifications attempt by
  attempt, and where it opened;
- escalations with their reasons.

Texts come from the store, which masked secrets when it wrote them; screenshot
regions of password fields were painted over when they were taken.  Every
text is HTML-escaped.
"""
from __future__ import annotations

import base64
import html
import io
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable, Mapping

__all__ = ["html_report", "write_html_report", "ReportError", "SHOT_MAX_W"]

#: Embedded screenshots are downscaled to at most this width, px (the report stays a few MB).
SHOT_MAX_W = 560
#: JPEG quality of embedded screenshots (0-100).
SHOT_QUALITY = 72


class ReportError(RuntimeError):
    """The run cannot be reported (unknown run id, several runs match a prefix); the message says which."""


_CSS = """
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;background:#f6f7f9;color:#1d232b}
header{background:#1d232b;color:#fff;padding:18px 28px}
header h1{margin:0 0 4px;font-size:22px} header .meta{color:#c3cad4}
main{padding:18px 28px;max-width:1400px}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600}
.passed,.as_expected{background:#dff3e4;color:#17612f} .failed,.error,.changed_unexpectedly{background:#fde2e1;color:#9b1c1c}
.escalated,.unchanged,.stopped,.interrupted{background:#fff1d6;color:#8a5300} .skipped,.manual,.none{background:#e8eaee;color:#444}
section.step{background:#fff;border:1px solid #dde1e6;border-radius:6px;margin:14px 0;padding:12px 16px}
section.step h3{margin:0 0 6px;font-size:16px}
table{border-collapse:collapse} td,th{padding:3px 10px 3px 0;vertical-align:top;text-align:left}
th{color:#5a6472;font-weight:600}
.shots{display:flex;gap:12px;flex-wrap:wrap;margin:8px 0}
.shot{display:inline-block;border:1px solid #ccd2da} .frame{position:relative}
.shot img{display:block;max-width:100%} .shot .cap{font-size:12px;color:#5a6472;padding:2px 4px}
.region{position:absolute;border:2px solid #e5484d;background:rgba(229,72,77,.10)}
.err{color:#9b1c1c} .muted{color:#6b7480} code{font-size:12px;background:#f0f2f5;padding:0 3px}
.desc{display:flex;gap:16px} .desc pre{background:#f0f2f5;padding:6px 8px;margin:0;font-size:12px;max-width:520px;
white-space:pre-wrap}
.breaker span{display:inline-block;width:16px;height:16px;margin-right:2px;border-radius:3px;font-size:10px;
text-align:center;color:#fff}
.breaker .ok{background:#2f9e57} .breaker .bad{background:#e5484d} .breaker .open{background:#8a5300}
"""


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _badge(status: str) -> str:
    return f'<span class="badge {_e(status)}">{_e(status.replace("_", " "))}</span>'


def _shot(path: Path | None, regions: Iterable[Any], css_w: float, css_h: float, caption: str) -> str:
    """An embedded screenshot with ``regions`` (CSS px boxes) outlined; "" when the file is missing."""
    if path is None or not path.is_file():
        return f'<div class="shot"><div class="cap">{_e(caption)}: no screenshot</div></div>'
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
        return f'<div class="shot"><div class="cap">{_e(caption)}: unreadable screenshot</div></div>'
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    boxes = []
    css_w = css_w or w
    css_h = css_h or h
    for r in regions:
        x, y, bw, bh = (r.x, r.y, r.width, r.height) if hasattr(r, "x") else r
        left, top = 100.0 * x / css_w, 100.0 * y / css_h
        boxes.append(f'<div class="region" style="left:{left:.2f}%;top:{top:.2f}%;'
                     f'width:{100.0 * bw / css_w:.2f}%;height:{100.0 * bh / css_h:.2f}%"></div>')
    return (f'<div class="shot" style="width:{shown_w}px"><div class="frame"><img alt="{_e(caption)}" '
            f'width="{shown_w}" height="{shown_h}" src="data:image/jpeg;base64,{data}">{"".join(boxes)}</div>'
            f'<div class="cap">{_e(caption)}</div></div>')


def _descriptor(d: Mapping[str, Any]) -> str:
    keys = ("role", "name", "label", "text", "placeholder", "test_id", "id", "name_attr", "tag", "css_path")
    lines = [f"{k}: {d[k]}" for k in keys if d.get(k)]
    return "\n".join(lines) or "(empty)"


def _breaker_history(detail: Any) -> str:
    """Attempt by attempt: a failed verification counts up, a passed one resets; where it opened."""
    marks, consecutive, most = [], 0, 0
    for v in detail.verdicts:
        if v.kind == "as_expected":
            consecutive = 0
            marks.append('<span class="ok" title="step %d: as expected">&#10003;</span>' % (v.index + 1))
        else:
            consecutive += 1
            most = max(most, consecutive)
            marks.append(f'<span class="bad" title="step {v.index + 1}: {_e(v.kind)}">{consecutive}</span>')
    opened = [e for e in detail.escalations if "circuit breaker open" in e.reason]
    text = f"most consecutive failed verifications: {most}"
    if opened:
        text += "; opened at step " + ", ".join(str(e.index + 1) for e in opened)
        marks.append('<span class="open" title="open">!</span>')
    else:
        text += "; it never opened"
    return f'<div class="breaker">{"".join(marks) or "<em>no verification</em>"}</div><p class="muted">{_e(text)}</p>'


def _step_section(detail: Any, index: int, evidence: Any, store: Any) -> str:
    part = detail.for_step(index)
    step = part["step"]
    res = part["resolutions"][-1] if part["resolutions"] else None
    verdict = part["verdicts"][-1] if part["verdicts"] else None
    obs = {o.when: o for o in part["observations"]}
    ev = evidence.evidence if evidence is not None else None
    rows = [("status", _badge(step.status)), ("attempts", _e(step.attempts))]
    if res is not None:
        how = "abstained" if res.abstained else f"{res.strategy} {res.score:.2f} (margin {res.margin:.2f})"
        rows.append(("locator", _e(how) + (f'<div class="muted">{_e(res.reason)}</div>' if res.reason else "")))
    if verdict is not None:
        rows.append(("verdict", _badge(verdict.kind) + f' expected <code>{_e(verdict.expected)}</code>, observed '
                     f'<code>{_e(", ".join(verdict.observed) or "nothing")}</code>'
                     + (f'<div class="muted">{_e(verdict.reason)}</div>' if verdict.reason else "")))
    waited = ""
    if ev is not None and ev.wall_ms > ev.active_ms + 1:
        waited = f" (+{(ev.wall_ms - ev.active_ms) / 1000:.1f} s waiting for a person)"
    rows.append(("time", f"{step.ms:,.0f} ms{_e(waited)}"))
    if ev is not None and ev.phase_ms:
        rows.append(("phases", _e(" · ".join(f"{p} {ms:,.0f}" for p, ms in ev.phase_ms) + " ms")))
    if step.error:
        rows.append(("why", f'<span class="err">{_e(step.error)}</span>'))
    if ev is not None:
        for a in ev.assertions:
            rows.append(("assertion", ("&#10003; " if a.ok else "&#10007; ") + _e(
                f"{a.kind} {a.expected!r} on {a.target or 'the page'}: {a.observed}")))
        for c in ev.console:
            rows.append(("console", f'<span class="err">{_e(c.kind)}: {_e(c.text)}</span> '
                                    f'<span class="muted">{_e(c.source)}</span>'))
        for r in ev.failed_requests:
            rows.append(("request", f'<span class="err">{_e(r.method)} {_e(r.url)} '
                                    f'{_e(r.status or r.error)}</span>'))
    for e in part["escalations"]:
        rows.append(("escalated", f'<span class="err">{_e(e.reason)}</span>'))
    table = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
    regions = ev.diff.regions if ev is not None and ev.diff is not None else ()
    shots = ""
    if obs:
        def shot(when: str, rel: str | None) -> str:
            o = obs.get(when)
            rel = rel or (o.screenshot if o is not None else None)
            w, h = (o.viewport if o is not None else (0, 0))
            return _shot(store.media_path(rel) if rel else None, regions, w, h, when)

        shots = ('<div class="shots">' + shot("before", evidence.before_screenshot if evidence else None)
                 + shot("after", evidence.after_screenshot if evidence else None) + "</div>")
        if ev is not None and ev.diff is not None:
            shots += f'<p class="muted">{len(regions)} changed region(s), {100 * ev.diff.changed_ratio:.1f}% of ' \
                     f'the page</p>'
    return (f'<section class="step" id="step-{index + 1}"><h3>{index + 1}. {_e(step.title)} '
            f'<span class="muted">{_e(step.step_id)}</span></h3><table>{table}</table>{shots}</section>')


def _heals(store: Any, run_id: str) -> str:
    try:
        from core.store import HealTable

        recs = [r for r in HealTable(store).list() if run_id in (r.run_id, r.last_run_id)]
    except Exception:  # noqa: BLE001 - a store without proposals: nothing to show
        recs = []
    if not recs:
        return "<p class='muted'>No heal proposed or reused in this run.</p>"
    parts = []
    for r in recs:
        parts.append(f'<section class="step"><h3>{_e(r.kind)} #{r.id} · step {_e(r.step_id)} {_e(r.step_title)} '
                     f'{_badge(r.status)}</h3><p>{_e(r.strategy)} {r.score:.2f}, margin {r.margin:.2f}</p>'
                     f'<div class="desc"><div><b>recorded</b><pre>{_e(_descriptor(r.old_target))}</pre></div>'
                     f'<div><b>found</b><pre>{_e(_descriptor(r.new_target))}</pre></div></div></section>')
    return "".join(parts)


def _skills(store: Any, run_id: str) -> str:
    """The run's skill uses (K6): step, skill, outcome, ms and reason, oldest first."""
    try:
        from core.store.skills import SkillTable

        uses = SkillTable(store).uses(run_id=run_id)[::-1]
    except Exception:  # noqa: BLE001 - a store without the skill tables: nothing to show
        uses = []
    if not uses:
        return "<p class='muted'>No skill fired or held an element back in this run.</p>"
    rows = "".join(f"<tr><td>{u.step_index + 1} {_e(u.step_id)}</td><td>{_e(u.skill_id)}</td>"
                   f"<td>{_badge(u.outcome)}</td><td>{u.ms:.0f} ms</td><td>{_e(u.reason)}</td></tr>" for u in uses)
    return (f"<table><tr><th>step</th><th>skill</th><th>outcome</th><th>time</th><th>reason</th></tr>"
            f"{rows}</table>")


def _resolve_run(store: Any, run_id: str) -> str:
    """The full id of ``run_id`` (a full id or a unique prefix, :meth:`core.store.Store.resolve_run_id`)."""
    from core.store import RunIdError

    try:
        return store.resolve_run_id(run_id)
    except RunIdError as exc:
        raise ReportError(str(exc)) from None


def html_report(store: Any, run_id: str, *, total_steps: int | None = None) -> str:
    """The HTML document of run ``run_id`` (a full id or an unambiguous prefix).

    Raises
    ------
    ReportError
        When no run or several runs match ``run_id``.
    """
    run_id = _resolve_run(store, run_id)
    detail = store.run_detail(run_id)
    evidence = {e.index: e for e in store.step_evidence(run_id)}
    run = detail.run
    passed = sum(1 for s in detail.steps if s.status == "passed")
    of = f" of {total_steps}" if total_steps else ""
    when = run.started_at.strftime("%Y-%m-%d %H:%M:%S UTC") if isinstance(run.started_at, datetime) else ""
    seconds = f"{run.seconds:.1f} s" if run.seconds is not None else "not finished"
    head = (f"<header><h1>{_e(run.flow)} {_badge(run.status)}</h1><div class='meta'>{_e(run.project)} · run "
            f"{_e(run.id)} · {_e(when)} · {_e(seconds)} · {passed}{of} step(s) passed · {run.heals} heal(s)"
            f"</div></header>")
    summary = ""
    if run.error:
        summary = f"<p class='err'>{_e(run.error)}</p>"
    steps = "".join(_step_section(detail, s.index, evidence.get(s.index), store) for s in detail.steps)
    body = (f"<main>{summary}<h2>Steps</h2>{steps or '<p>No step ran.</p>'}<h2>Heals</h2>{_heals(store, run_id)}"
            f"<h2>Skills</h2>{_skills(store, run_id)}<h2>Circuit breaker</h2>{_breaker_history(detail)}</main>")
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{_e(run.flow)} · "
            f"{_e(run.status)} · Steadyhand</title><style>{_CSS}</style></head><body>{head}{body}</body></html>\n")


def write_html_report(store: Any, run_id: str, path: Path, *, total_steps: int | None = None) -> Path:
    """Write :func:`html_report` to ``path`` atomically; returns the path.

    Raises
    ------
    ReportError
        As :func:`html_report`.
    OSError
        When the file cannot be written.
    """
    text = html_report(store, run_id, total_steps=total_steps)
    from core.project.loader import write_atomic

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text.encode("utf-8"))
    return path
