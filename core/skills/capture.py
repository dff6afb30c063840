"""Failure capture at the executor (K2): one ``failure_records`` row per failed step of a run.

Called by the failure-capture plugin (:mod:`core.engine.plugins.capture`) at the
kernel's ``failure_seen`` hook (:func:`capture_failure`) and ``step_recorded``
hook (:func:`note_step_end`); both
are best effort: whatever goes wrong here is kept in ``ex.store_errors`` and
never changes the run.  Without a store nothing is captured.

What counts as a failure:

* an action error (``action_error``), a locator that abstained (``locator``),
  a failed pre-check (``precondition``: a covered target, a popup in the way),
  a post-verify mismatch (``verify_mismatch``: unchanged, changed
  unexpectedly, an assertion), stagnation (``stagnation``: 3 rounds without a
  real state change, :class:`core.recover.loops.Stagnation`), a loop
  (``loop``) and a broken page (``page``);
* semantic error signals on a step that passed (``error_signal``): a visible
  error message or alert that the step made appear (the signature's error
  count went up), or a failed write of the step to the page's own origin
  (POST / PUT / PATCH / DELETE by fetch, XHR, a form or a document, answered
  4xx/5xx; never a beacon, a keepalive fetch, a GET or an endpoint the page
  calls by itself, :mod:`core.act.writes`; never a path named like telemetry,
  :data:`TELEMETRY_PATH`, nor an endpoint the run saw written at another
  step already: the page's own traffic, not the step's), or an uncaught
  exception the page threw after the step's action (K2,
  :func:`uncaught_errors`).  A telemetry call that fails or a
  ``console.error`` the page logs is no record.  These become
  records only, never skills by themselves, and never a validation case of
  another kind of failure.

One record per failed step: the first failed attempt creates it, later
attempts of the same step add to its ``page["attempts"]``; when the step then
passes on its own (a retry got past it) the record's outcome becomes
``transient`` - a failure that did not reproduce, which never becomes a skill
(K5).  A step that a person finished by hand keeps ``open`` for learning.

The record (:class:`core.store.skills.FailureRecord`) holds the flow, the
trajectory so far (per step: index, id, action kind, the unbound value
template, intent = the step's title, the recorded target's semantic fields,
status, the state signature digests before and after), the failure point,
the error type and message, the state signature digest, the URL, the
screenshots (the store's own, already masked; paths relative to its media
folder) and in ``page``: a compact snapshot of the page before and after the
failed action (:func:`snapshot`: URL, title, dialog titles, the loading
evidence, the semantic fields of every candidate - never a typed value), the
failed element (``target``: the recorded target's semantic fields, what a
review boxes; empty for a targetless step; ``target_box``: where it was at
the failure, ``{"bbox": [x, y, w, h], "device_pixel_ratio"}`` in viewport
CSS px, only when the element the step located is that very target by
meaning - else None: the target was not on the page, and nothing is to be
boxed), the error signals, the
attempts, and what the recording showed there (:func:`recorded_state`: the
step's recorded before-state digest, the previous step's recorded after-state,
and the step's R1 screen baseline when an earlier run made it).  Every text
goes through the store's redactor.
"""
from __future__ import annotations

import re
from typing import Any, Mapping

from core.progress import counted
from core.domain import Candidate, ElementDescriptor, Observation, StateSignature, Step

__all__ = ["capture_failure", "note_step_end", "failed_writes", "target_box", "snapshot", "observation_of", "semantic_target", "error_type_of",
           "recorded_state", "MAX_CANDIDATES", "ERROR_TYPES"]

#: Candidates kept per snapshot (the first ones, in document order; a long table keeps its head).
MAX_CANDIDATES = 200
#: Error types of a record (K2).
ERROR_TYPES = ("action_error", "locator", "precondition", "verify_mismatch", "stagnation", "loop", "page",
               "error_signal")
#: Failure kinds of :class:`core.recover.policy.Failure` -> error type; kinds not listed are not captured
#: (an open breaker, a budget or a missing decision say nothing about the page).
_KINDS = {"action_error": "action_error", "abstained": "locator", "precondition": "precondition",
          "unchanged": "verify_mismatch", "changed_unexpectedly": "verify_mismatch", "assertion": "verify_mismatch",
          "stagnation": "stagnation", "loop": "loop", "page": "page"}
#: Descriptor fields a snapshot keeps (semantic, plus the dialog container and tag).
_FIELDS = ("tag", "role", "name", "label", "text", "placeholder", "test_id", "title", "alt", "container")
_ATTR = "_skill_capture"
#: Path segments of the page's own reporting (telemetry, analytics, metrics, logs): a failed write there says
#: nothing about the step.
TELEMETRY_PATH = re.compile(r"(^|/)(telemetry|analytics|metrics|tracking|track|collect|beacons?|rum|stats|pixel|"
                            r"logs?|events?-?log)(/|\.|$)", re.I)


def semantic_target(d: ElementDescriptor) -> dict[str, str]:
    """The semantic fields of a descriptor that are set (no id, CSS path, XPath or box)."""
    return {k: getattr(d, k) for k in _FIELDS if getattr(d, k)}


def snapshot(obs: Observation | None, *, redact: Any = None) -> dict[str, Any]:
    """A compact, JSON-able picture of one observation (no value of any field, no screenshot).

    ``redact`` (``str -> str``) masks texts; the store masks again.
    """
    if obs is None:
        return {}
    t = redact or (lambda s: s)
    cands = []
    for c in obs.candidates[:MAX_CANDIDATES]:
        d = {k: t(v) for k, v in semantic_target(c.descriptor).items()}
        if not c.visible:
            d["visible"] = False
        if not c.enabled:
            d["enabled"] = False
        if c.covered:
            d["covered"] = True
        cands.append(d)
    sig = obs.signature
    return {"url": t(obs.url), "title": t(obs.title), "modal_titles": [t(m) for m in obs.modal_titles],
            "signature": sig.digest if sig is not None else "", "error_count": sig.error_count if sig else 0,
            "loading": [t(e) for e in obs.loading] or (["loading indicator"] if sig is not None and sig.loading
                                                       else []),
            "candidates": cands}


def observation_of(snap: Mapping[str, Any]) -> Observation:
    """An :class:`Observation` rebuilt from a :func:`snapshot` (for replaying triggers on stored states)."""
    cands = []
    for i, c in enumerate(snap.get("candidates") or ()):
        desc = ElementDescriptor(**{k: str(c.get(k, "")) for k in _FIELDS})
        cands.append(Candidate(f"s{i}", desc, enabled=bool(c.get("enabled", True)),
                               visible=bool(c.get("visible", True)), covered=bool(c.get("covered", False))))
    url, title = str(snap.get("url", "")), str(snap.get("title", ""))
    sig = StateSignature(url, title, len(cands), len(snap.get("modal_titles") or ()), "", "", "", False,
                         int(snap.get("error_count", 0) or 0), "", str(snap.get("signature", "")))
    return Observation(url, title, (0, 0), 1.0, (0.0, 0.0), tuple(cands), "", sig,
                       modal_titles=tuple(str(m) for m in snap.get("modal_titles") or ()),
                       loading=tuple(str(e) for e in snap.get("loading") or ()))


def error_type_of(exc: BaseException) -> str:
    """The record's error type for an exception of the failure path ("" when it is not captured)."""
    failure = getattr(exc, "failure", None)
    if failure is not None:
        return _KINDS.get(str(getattr(failure, "kind", "")), "")
    from core.perception.driver import PageError

    return "page" if isinstance(exc, PageError) else ""


def _entry(step: Step | None, index: int, *, status: str, state_before: str = "", state_after: str = "",
           source: str = "flow", title: str = "") -> dict[str, Any]:
    if step is None:
        return {"index": index, "status": status}
    return {"index": index, "step_id": step.id, "action": step.action.kind, "value": step.action.value,
            "intent": title or step.title, "target": semantic_target(step.target), "status": status,
            "source": source, "state_before": state_before, "state_after": state_after}


def _trajectory(run: Any, ctx: Any) -> list[dict[str, Any]]:
    """The steps so far and the failing one (state digests from the checkpoints)."""
    states = {cp.index: cp.state for cp in getattr(run, "checkpoints", ())}
    out = []
    for o in run.outcomes:
        step = run.flow.steps[o.index] if 0 <= o.index < len(run.flow.steps) else None
        after = states.get(o.index + 1, "")
        out.append(_entry(step, o.index, status=o.status, state_before=states.get(o.index, ""), state_after=after,
                          source=o.source, title=o.title))
    step = ctx.decided or (run.flow.steps[ctx.index] if 0 <= ctx.index < len(run.flow.steps) else None)
    before = ctx.before.signature.digest if ctx.before is not None else ""
    after = ctx.after.signature.digest if ctx.after is not None else ""
    out.append(_entry(step, ctx.index, status="failed", state_before=before, state_after=after, source=ctx.source,
                      title=ctx.title))
    return out


def _signals(ex: Any, t0: float) -> dict[str, Any]:
    """Console errors, uncaught exceptions and failed requests of the page since ``t0`` (monotonic s)."""
    from core.perception.pagelog import PageLog, failed_requests

    out: dict[str, Any] = {"console": [], "exceptions": [], "http": []}
    log = PageLog.of(ex.driver)
    for e in (log.between(t0) if log is not None else ())[:20]:
        if e.kind == "error":
            out["console"].append(ex.redact(e.text)[:200])
        elif e.kind == "exception":
            out["exceptions"].append(ex.redact(e.text)[:200])
    for _t, method, url, status, rtype, err in failed_requests(ex.driver, t0)[:20]:
        out["http"].append({"method": method, "url": ex.redact(url), "status": status, "type": rtype,
                            "error": ex.redact(err)[:120]})
    return out


def recorded_state(ex: Any, run: Any, index: int) -> dict[str, Any]:
    """What the recording showed before step ``index``: its recorded before-state digest, the previous step's
    recorded after-state (dialog, dialog name, URL pattern, title, heading) and the step's R1 baseline when a
    run before this one made it (``baseline``: ``[{"role", "text"}]`` and ``screen``), else none."""
    steps = run.flow.steps
    step = steps[index] if 0 <= index < len(steps) else None
    out: dict[str, Any] = {}
    if step is not None and step.recorded is not None:
        out["state_before"] = step.recorded.state_before
    prev = steps[index - 1] if 0 < index <= len(steps) else None
    after = prev.recorded.after if prev is not None and prev.recorded is not None else None
    if after is not None:
        out["after_previous"] = {"dialog": after.dialog, "dialog_name": after.dialog_name,
                                 "url_pattern": after.url_pattern, "title": after.title, "heading": after.heading}
    store = ex.store
    if step is None or store is None:
        return out
    try:
        base = store.load_baselines(run.flow.name).get(step.id)
        started = store.get_run(run.run_id)
        began = getattr(started, "started_at", None)
        if base is not None and began is not None and base.created_at < began:
            out["baseline"] = [{"role": e.role, "text": e.text} for e in base.fingerprint.elements][:MAX_CANDIDATES]
            out["screen"] = base.fingerprint.screen_key
    except Exception:  # noqa: BLE001 - no baseline known: the recording's page is unknown
        pass
    return out


def _screenshots(ex: Any, run_id: str, index: int) -> list[str]:
    detail = ex.store.run_detail(run_id)
    if detail is None:
        return []
    shots = [o.screenshot for o in detail.observations if o.index == index and o.screenshot]
    return list(dict.fromkeys(shots))[-4:]


def _state(ex: Any) -> dict[Any, Any]:
    state = getattr(ex, _ATTR, None)
    if state is None:
        state = {}
        setattr(ex, _ATTR, state)
    return state


def capture_failure(ex: Any, ctx: Any, exc: BaseException) -> int:
    """Capture one failed attempt of step ``ctx.index`` (the failure path's hook, K2); returns the record id.

    ``ex`` is the engine's ports (:class:`core.engine.hooks.Ports`: ``driver``,
    ``store``, ``redact``, ``project_name``, ``store_errors``), ``ctx`` the
    step's :class:`~core.engine.step.StepContext`, ``exc`` the attempt's
    exception.  Returns 0 when nothing was captured (no store, an exception
    that says nothing about the page, or an error here - kept in
    ``ex.store_errors``).  Never raises.
    """
    try:
        kind = error_type_of(exc)
        if not kind or ex.store is None:
            return 0
        return _capture(ex, ctx, kind, str(exc))
    except Exception as exc2:  # noqa: BLE001 - capture never breaks a run
        _note(ex, f"failure capture of step {getattr(ctx, 'index', -1) + 1} failed: {type(exc2).__name__}: {exc2}")
        return 0


def _capture(ex: Any, ctx: Any, kind: str, message: str) -> int:
    from core.store.skills import SkillTable

    run = ctx.run
    table = SkillTable(ex.store)
    attempt = {"attempt": ctx.attempt, "error_type": kind, "message": ex.redact(message)[:500],
               "state": ctx.before.signature.digest if ctx.before is not None else "",
               "after": ctx.after.signature.digest if ctx.after is not None else "", "source": ctx.source,
               "before": snapshot(ctx.before, redact=ex.redact)}
    known = _state(ex)
    key = (run.run_id, ctx.index)
    rec = table.failure(known[key]) if key in known else None
    if rec is not None:
        page = dict(rec.page)
        page["attempts"] = list(page.get("attempts") or ()) + [attempt]
        if ctx.after is not None:
            page["after"] = snapshot(ctx.after, redact=ex.redact)
        table.update_failure(rec.id, page=page, screenshots=_screenshots(ex, run.run_id, ctx.index))
        return rec.id
    step = ctx.decided or (run.flow.steps[ctx.index] if 0 <= ctx.index < len(run.flow.steps) else None)
    obs = ctx.before
    page = {"before": attempt["before"], "after": snapshot(ctx.after, redact=ex.redact),
            "signals": _signals(ex, ctx.t0), "attempts": [attempt], "recorded": recorded_state(ex, run, ctx.index),
            "source": ctx.source,
            "target": {k: ex.redact(v) for k, v in semantic_target(step.target).items()} if step is not None else {},
            "target_box": target_box(ctx, step)}
    rec = table.add_failure({
        "project": ex.project_name, "run_id": run.run_id, "flow": run.flow.name, "step_index": ctx.index,
        "step_id": step.id if step is not None else "", "error_type": kind, "message": attempt["message"],
        "state": attempt["state"], "url": ex.redact(obs.url) if obs is not None else "",
        "trajectory": _trajectory(run, ctx), "page": page,
        "screenshots": _screenshots(ex, run.run_id, ctx.index), "outcome": "open"})
    known[key] = rec.id
    return rec.id


def note_step_end(ex: Any, ctx: Any) -> None:
    """At the end of a step (the ``record`` phase's hook): a captured failure the step then got past on its
    own is ``transient``; a passed step that made a visible error message or alert appear, or whose write to
    the page's own origin failed (:func:`failed_writes`), is captured as ``error_signal``.  Never raises."""
    try:
        if ex.store is None:
            return
        from core.store.skills import SkillTable

        run = ctx.run
        known = _state(ex)
        rec_id = known.get((run.run_id, ctx.index))
        if rec_id and ctx.status == "passed":
            table = SkillTable(ex.store)
            if not _taken_over(ex, run, ctx.index):  # a retry got past it, no person did anything on the page
                table.update_failure(rec_id, outcome="transient")
            elif ctx.before is not None and (rec := table.failure(rec_id)) is not None:
                # the page the step passed from after the person's correction: where a skill must not fire
                table.update_failure(rec_id, page={**rec.page, "passed_from": snapshot(ctx.before, redact=ex.redact)})
            return
        if rec_id or ctx.status != "passed" or not ctx.acted:
            return
        bad = failed_writes(ex, ctx)
        shown = _errors_up(ctx)
        thrown = uncaught_errors(ex, ctx)
        if not bad and not shown and not thrown:
            return
        why = "; ".join([f"HTTP {r.status} {r.method} {ex.redact(r.url.split('?')[0])}" for r in bad[:3]]
                        + ([f"{counted(shown, 'more error message')} shown"] if shown else [])
                        + [f"the page threw an uncaught error: {t}" for t in thrown[:2]])
        _capture(ex, ctx, "error_signal", f"the step passed with error signals: {why}")
        known.pop((run.run_id, ctx.index), None)
    except Exception as exc:  # noqa: BLE001 - capture never breaks a run
        _note(ex, f"failure capture at the end of step {getattr(ctx, 'index', -1) + 1} failed: "
                  f"{type(exc).__name__}: {exc}")


def target_box(ctx: Any, step: Step | None) -> dict[str, Any] | None:
    """Where the failed step's own target was at the failure (``{"bbox": [x, y, w, h], "device_pixel_ratio"}``,
    viewport CSS px), or None when the element the step located is not that target by meaning (role and its
    strongest texts, :func:`core.skills.trigger.condition_matches`) or nothing was located."""
    from core.domain.skill import ElementCondition
    from core.skills.trigger import condition_matches

    cand = getattr(ctx, "candidate", None)
    if step is None or cand is None or cand.descriptor.bbox is None:
        return None
    t = step.target
    cond = ElementCondition(role=t.role, name=t.name, label=t.label, placeholder=t.placeholder, test_id=t.test_id,
                            text="" if (t.name or t.label or t.placeholder) else t.text)
    if cond.is_empty or not condition_matches(cond, cand):
        return None
    b = cand.descriptor.bbox
    dpr = float(getattr(ctx.before, "device_pixel_ratio", 1.0) or 1.0)
    return {"bbox": [round(b.x, 1), round(b.y, 1), round(b.width, 1), round(b.height, 1)], "device_pixel_ratio": dpr}


def failed_writes(ex: Any, ctx: Any) -> list[Any]:
    """The step's failed writes to the page's own origin: POST / PUT / PATCH / DELETE by fetch, XHR, a form or
    a document (:func:`core.act.writes.server_writes`: no beacon, no keepalive fetch, no endpoint the page
    calls by itself) since the step began, answered 4xx or 5xx.  A GET, a third-party call and telemetry
    are never one."""
    from urllib.parse import urlsplit

    from core.act.writes import server_writes
    from core.perception.netwatch import NetworkWatch

    watch = NetworkWatch.of(ex.driver)
    obs = ctx.before
    if watch is None or obs is None:
        return []
    u = urlsplit(obs.url)
    writes = server_writes(watch.between(ctx.t0), origin=f"{u.scheme}://{u.netloc}",
                           background=getattr(ctx.run, "background", None))
    seen = _state(ex).setdefault(("endpoints", ctx.run.run_id), {})  # endpoint -> the step that first wrote it
    out = []
    for r in writes:
        key = (r.method, urlsplit(r.url).path)
        first = seen.setdefault(key, ctx.index)
        if r.succeeded is False and first == ctx.index and not TELEMETRY_PATH.search(key[1]):
            out.append(r)
    return out


def uncaught_errors(ex: Any, ctx: Any) -> list[str]:
    """Uncaught exceptions the page threw since the step's action (its ``pageerror`` events,
    :class:`core.perception.pagelog.PageLog`; texts redacted, at most 200 chars each) - seed 001 K2: an uncaught
    error starts a failure record.  A ``console.error`` the page logs by itself is no such error (vendor scripts
    log them freely).  [] when the page's log cannot be read or the step did not act."""
    from core.perception.pagelog import PageLog

    t0 = float(getattr(ctx, "t_act", 0.0) or 0.0)
    if not t0:
        return []
    log = PageLog.of(ex.driver)
    return [ex.redact(e.text)[:200] for e in (log.between(t0) if log is not None else ()) if e.kind == "exception"]


def _errors_up(ctx: Any) -> int:
    """Visible error messages / alerts the step made appear (the after-signature's count minus the before's)."""
    b, a = getattr(ctx.before, "signature", None), getattr(ctx.after, "signature", None)
    if b is None or a is None:
        return 0
    return max(0, int(a.error_count) - int(b.error_count))


def _taken_over(ex: Any, run: Any, index: int) -> bool:
    """True when a person took the page over at this step of this run (a correction is stored for it)."""
    from core.store.corrections import CorrectionTable

    return any(c.run_id == run.run_id and c.step_index == index
               for c in CorrectionTable(ex.store).list(flow=run.flow.name, project=ex.project_name or None))


def _note(ex: Any, message: str) -> None:
    errors = getattr(ex, "store_errors", None)
    if isinstance(errors, list):
        errors.append(message)

