"""Change detection in the run (R1, R5): observations with page facts, baselines, the fast path.

:class:`ScreenTracker` (as :class:`ScreenPlugin`) lives as long as its executor
and serves three phases:

* **observe** - :meth:`ScreenTracker.observe` reads a cheap page token, then
  the driver's observation, then the page facts the fingerprint needs
  (headings, landmarks, main heading) in one ``evaluate``.
  :meth:`ScreenTracker.reusable_before` gives the previous step's
  after-observation as this step's before when nothing happened in between:
  same URL, same DOM mutation count, no input/scroll/focus/pointer/keyboard
  event, same scroll offset, no running animation, no child frame and no open
  shadow root (whose mutations the counter cannot see) - all read in one
  ``evaluate``; otherwise the page is observed again;
* **fingerprint** - :meth:`ScreenTracker.check` fingerprints the screen
  before the step, compares it with the stored baseline of that step's
  screen (:func:`core.state.change.compare`), creates the baseline on the
  first visit, emits :class:`~core.engine.events.ScreenChanged` and stores
  the report when it changed;
* **resolve** - :func:`fast_resolve`: on an unchanged screen the target is
  taken by the EXACT level alone (no selector round trip, no fallback
  level); when exact does not find it the caller goes on with the full
  chain.

At the end of a flow (:meth:`ScreenTracker.end_flow`) a passing run
refreshes the baselines of the screens that stayed within the R1 threshold;
a screen that changed beyond it raises an alert (event + stored flag) and
keeps its baseline.  Baselines are store rows (``screen_baselines``): flow
files are never touched.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping

from core.progress import counted
from core.domain import Candidate, Observation, Resolution
from core.domain.change import BaselineAlert, ChangeReport, ChangeThresholds, ScreenFingerprint
from core.engine.events import BaselineAlertRaised, FlowFinished, ScreenChanged
from core.engine.hooks import (
    CompareScreen, Decided, FlowBegins, FlowEnds, PageHeading, Ports, ResolveFirst, Resolved, ReuseObservation, TakeObservation,
    hookimpl,
)
from core.engine.fastpath import driver_observe, observes_around
from core.engine import ahead
from core.engine.step import StepContext
from core.act.landing import base_path, relative_path
from core.locate import resolve
from core.perception.pagefacts import HEADING_JS, TOKEN_JS
from core.project.params import placeholders, step_texts
from core.state.change import DEFAULT_THRESHOLDS, compare, fingerprint

__all__ = ["ScreenTracker", "ScreenPlugin", "fast_resolve", "change_line", "ChangeLines", "TOKEN_JS", "FACTS_JS"]

#: DOM mutations a Playwright screenshot makes itself, per editable element (``input``, ``textarea``,
#: ``[contenteditable]``): it hides the caret (``caret="hide"``, the default) by setting and then restoring
#: the element's inline ``caret-color`` - two attribute mutations each (Playwright's screenshotter,
#: ``inPagePrepareForScreenshots``).  Any other count between the two reads of
#: :meth:`ScreenTracker.observe` means the page itself changed while it was observed, and the observation
#: is not reused (tests/e2e/test_change_detection.py shows the reuse happening on the demo app).
SCREENSHOT_MUTATIONS_PER_EDITABLE = 2

#: The page facts of a fingerprint, read after an observation: visible headings (h1-h3, role=heading) and
#: landmarks with boxes in page CSS px, the main heading, whether the page has an open shadow root, and
#: the token of :data:`TOKEN_JS` at that moment.
FACTS_JS = "() => { const token = (" + TOKEN_JS + r""")();
  const lib = window.__steadyhand;
  const clean = (s) => (s || '').replace(/\s+/g, ' ').trim().slice(0, 80);
  const vis = (e) => (lib ? lib.isVisible(e) : e.getClientRects().length > 0);
  const path = (e) => (lib ? lib.cssPath(e) : e.tagName.toLowerCase());
  const box = (e) => { const r = e.getBoundingClientRect(); return [r.x + scrollX, r.y + scrollY, r.width, r.height]; };
  const headings = [];
  for (const e of document.querySelectorAll('h1,h2,h3,[role=heading]')) {
    if (headings.length >= 40) break;
    if (!vis(e)) continue;
    const t = clean(e.innerText || e.textContent);
    if (!t) continue;
    const m = /^H(\d)$/.exec(e.tagName);
    headings.push({ role: 'heading', level: m ? +m[1] : +(e.getAttribute('aria-level') || 2), text: t,
                    path: path(e), box: box(e) });
  }
  const ROLE = { main: 'main', nav: 'navigation', header: 'banner', footer: 'contentinfo', aside: 'complementary',
                 search: 'search', form: 'form', section: 'region' };
  const landmarks = [];
  const sel = 'main,nav,header,footer,aside,search,form[aria-label],form[aria-labelledby],section[aria-label],' +
    'section[aria-labelledby],[role=main],[role=navigation],[role=banner],[role=contentinfo],' +
    '[role=complementary],[role=search],[role=region],[role=form]';
  for (const e of document.querySelectorAll(sel)) {
    if (landmarks.length >= 40) break;
    if (!vis(e)) continue;
    const role = (e.getAttribute('role') || ROLE[e.tagName.toLowerCase()] || '').split(/\s+/)[0];
    landmarks.push({ role, text: clean(e.getAttribute('aria-label')), path: path(e), box: box(e) });
  }
  const main = document.querySelector('main,[role=main]');
  const at = (p) => { try { return document.querySelector(p); } catch (e) { return null; } };
  const inMain = main ? headings.find((h) => { const n = at(h.path); return n && main.contains(n); }) : null;
  const h1 = headings.find((h) => h.level === 1);
  const heading = (h1 || inMain || headings[0] || { text: '' }).text;
  let shadow = 0;
  if (document.body) {
    const w = document.createTreeWalker(document.body, NodeFilter.SHOW_ELEMENT);
    while (w.nextNode()) { if (w.currentNode.shadowRoot) { shadow = 1; break; } }
  }
  const editable = document.querySelectorAll('input,textarea,[contenteditable]').length;
  let main_heading = null;  // pagefacts.main_heading's read, for the landing check (one round trip fewer)
  try { main_heading = (""" + HEADING_JS + r""")(); } catch (e) { main_heading = null; }
  return { heading, headings, landmarks, shadow, editable, token, main_heading };
}"""

_READ_LIMIT = 4  # observations whose page facts are kept (the before and after of the last steps)


@dataclass
class _Seen:
    """One step's screen in the current flow: where, its fingerprint and the comparison."""

    index: int
    step_id: str
    fingerprint: ScreenFingerprint
    report: ChangeReport


@dataclass
class _Last:
    """The latest observation the engine made: reusable as the next step's before when nothing happened."""

    run_id: str
    index: int
    when: str
    observation: Observation
    token: Any
    reusable: bool


def _relative_to(fp: ScreenFingerprint, prefix: str) -> ScreenFingerprint:
    """``fp`` with the path of its screen key made relative to the base path ``prefix`` (``/examples/a``).

    A screen is the same screen under another host or path prefix (``run --base-url``): its identity is
    judged relative to the base URL the run was given, as the landing check judges a step's route
    (:func:`core.act.landing.relative_path`).  A key whose path is outside ``prefix`` is kept as it is.
    """
    path, sep, rest = fp.screen_key.partition(" | ")
    rel = relative_path(path, prefix)
    return fp if rel == path else replace(fp, screen_key=f"{rel}{sep}{rest}")


def _token_ok(token: Any) -> bool:
    """A token of :data:`TOKEN_JS` read from a settled page with the page library, no frame, no animation."""
    return (isinstance(token, list) and len(token) == 9 and isinstance(token[1], int) and token[1] >= 0
            and token[5] == 0 and token[6] == 0 and token[7] == "complete")


class ScreenTracker:
    """R1 change detection and observation reuse for one executor (see the module docstring).

    Parameters
    ----------
    ex : Ports
        The ports it uses: ``driver``, ``store``, ``store_call``, ``emit``.
    thresholds : ChangeThresholds
        R1 thresholds (similarity 0.95, shift 20 px).

    Attributes
    ----------
    reused : int
        Before-observations taken over from the previous step in this executor's life.
    """

    def __init__(self, ex: Ports, *, thresholds: ChangeThresholds = DEFAULT_THRESHOLDS) -> None:
        self.ex = ex
        self.thresholds = thresholds
        self.baselines: dict[str, ScreenFingerprint] = {}
        self._memory: dict[str, dict[str, ScreenFingerprint]] = {}  # by flow, when there is no store
        self.seen: dict[str, _Seen] = {}
        self.reused = 0
        self._facts: list[tuple[Observation, Mapping[str, Any]]] = []
        self._last: _Last | None = None

    # --- page reads -------------------------------------------------------------------
    def _eval(self, script: str) -> Any:
        try:
            return self.ex.driver.evaluate(script)
        except Exception:  # noqa: BLE001 - a page that breaks our read only loses the reuse / the facts
            return None

    def observe(self, run_id: str, index: int, when: str, *, screenshot: bool, ax: bool = True) -> Observation:
        """Token, the driver's observation, then the page facts and the token again.

        The observation is reusable when the page did nothing while it was
        observed: the two tokens differ only by the screenshot's own DOM
        mutations (:data:`SCREENSHOT_MUTATIONS_PER_EDITABLE`), and the page has no child
        frame, no open shadow root and no running animation.
        """
        driver = self.ex.driver
        if observes_around(driver):  # the two reads ride on the observation's own first and last round trips
            obs = driver_observe(driver, screenshot=screenshot, ax=ax, around=(TOKEN_JS, FACTS_JS))
            before, facts = driver.around
        else:
            before = self._eval(TOKEN_JS)
            obs = driver_observe(driver, screenshot=screenshot, ax=ax)
            facts = self._eval(FACTS_JS)
        facts = facts if isinstance(facts, Mapping) else {}
        self._facts = [*self._facts[-(_READ_LIMIT - 1):], (obs, facts)]
        after = facts.get("token")
        in_frames = any(c.descriptor.frame or c.descriptor.shadow for c in obs.candidates)
        editable = facts.get("editable")
        own = SCREENSHOT_MUTATIONS_PER_EDITABLE * editable if isinstance(editable, int) and obs.screenshot_png else 0
        reusable = (_token_ok(before) and _token_ok(after) and after[1] - before[1] == own
                    and before[0] == after[0] and before[2:] == after[2:]
                    and not facts.get("shadow", 1) and not in_frames)
        self._last = _Last(run_id, index, when, obs, after, reusable)
        return obs

    def facts_of(self, obs: Observation) -> Mapping[str, Any]:
        """The page facts read with ``obs`` (empty when unknown)."""
        return next((f for o, f in reversed(self._facts) if o is obs), {})

    def reusable_before(self, ctx: StepContext, *, fast: bool = False) -> Observation | None:
        """The previous step's after-observation, when it may stand as this step's before; else None.

        Only on a first attempt, right after the previous step passed with
        that observation, when the page token read now equals the one read
        right after that observation (nothing happened in between) and the
        page did nothing while it was observed (:meth:`observe`).  With ``fast`` (the step may take the fast
        path) the step's reads before acting ride on the token's round trip (:func:`core.engine.ahead.read`).
        """
        last, run = self._last, ctx.run
        if (last is None or ctx.attempt != 1 or last.when != "after" or not last.reusable
                or last.run_id != run.run_id or last.index != ctx.index - 1 or not run.outcomes
                or run.outcomes[-1].index != last.index or run.outcomes[-1].status != "passed"):
            return None
        token = ahead.read(self.ex, ctx, TOKEN_JS, last.token, fast=fast)  # with the step's reads before acting
        if token is None:
            token = self._eval(TOKEN_JS)
        if token is ahead.UNREAD or token != last.token:
            ctx.ahead = None
            return None
        self.reused += 1
        return last.observation

    # --- baselines --------------------------------------------------------------------
    def begin_flow(self, flow_name: str) -> None:
        """Load the flow's baselines from the store; forget the previous flow's observations.

        Without a store the baselines live in memory for this tracker's life.
        """
        if self.ex.store is not None:
            stored = self.ex.store_call("load_baselines", flow_name) or {}
            self.baselines = {sid: b.fingerprint for sid, b in stored.items()}
        else:
            self.baselines = self._memory.setdefault(flow_name, {})
        self.seen = {}
        self._last = None
        self._facts = []

    def check(self, ctx: StepContext) -> ChangeReport | None:
        """Fingerprint the screen before the step and compare it with its baseline (R1); None off the flow."""
        run, obs = ctx.run, ctx.before
        if obs is None or not 0 <= ctx.index < len(run.flow.steps):
            return None
        step = run.flow.steps[ctx.index]
        if getattr(step, "goal", ""):
            return None  # a goal step goes through many pages by design: it has no one screen to compare
        step_id = step.id
        run_base = base_path(getattr(self.ex.driver, "base_url", "") or "")
        fp = _relative_to(fingerprint(obs, self.facts_of(obs)), run_base)
        base = self.baselines.get(step_id)
        if base is not None:  # a baseline of an older release kept the recorded prefix in its path
            base = _relative_to(base, getattr(run.flow, "base_path", "") or run_base)
        if base is not None and not fp.phash and base.phash:
            fp = replace(fp, phash=base.phash)  # a run without screenshots keeps the baseline's hash
        report = compare(base, fp, thresholds=self.thresholds)
        self.seen[step_id] = _Seen(ctx.index, step_id, fp, report)
        if report.status == "new":  # the first visit creates the baseline (R1)
            self.baselines[step_id] = fp
            self.ex.store_call("save_baseline", run.flow.name, step_id, fp)
        elif report.changed:
            self.ex.store_call("record_screen_change", run.run_id, ctx.index, run.flow.name, step_id, report)
            self.ex.emit(ScreenChanged(run.run_id, run.flow.name, ctx.index, report))
        return report

    def end_flow(self, run_id: str, flow_name: str, *, passed: bool) -> tuple[BaselineAlert, ...]:
        """After a flow: refresh the baselines within the threshold (passing runs only); alert the others.

        Returns the alerts raised (each also emitted and stored).
        """
        alerts: list[BaselineAlert] = []
        for seen in self.seen.values():
            if seen.report.unchanged and passed:
                self.baselines[seen.step_id] = seen.fingerprint
                self.ex.store_call("save_baseline", flow_name, seen.step_id, seen.fingerprint)
            elif seen.report.changed:
                alert = BaselineAlert(flow_name, seen.step_id, seen.report.screen_key, seen.report)
                self.ex.store_call("alert_baseline", flow_name, seen.step_id, seen.report, run_id)
                self.ex.emit(BaselineAlertRaised(run_id, alert))
                alerts.append(alert)
        self.seen = {}
        self._last = None
        return tuple(alerts)


def fast_resolve(ex: Ports, ctx: StepContext) -> tuple[Resolution | None, Candidate | None]:
    """The R1 fast path: EXACT alone on an unchanged screen; ``(None, None)`` when it does not apply or find.

    Not taken for a step without a descriptor (its selector must speak) nor
    for one whose selector or target has ``{param}`` placeholders (the
    recorded element may not be this run's).
    """
    step, decided, obs = ctx.step, ctx.decided, ctx.before
    if (ctx.change is None or not ctx.change.unchanged or step is None or decided is None or obs is None
            or step.target.is_empty
            or any(placeholders(text) for f, text in step_texts(decided) if f == "selector" or f.startswith("target."))):
        return None, None
    res = resolve(step.target, obs.candidates, config=replace(ex.settings.locator, strategies=("exact",)))
    if res.abstained or res.ref is None:
        return None, None
    cand = next((c for c in obs.candidates if c.ref == res.ref), None)
    if cand is None:
        return None, None
    return replace(res, reason=f"fast path, screen unchanged since its baseline: {res.reason}"), cand


class ScreenPlugin(ScreenTracker):
    """Change detection (R1) as a plugin of the step kernel: the tracker's work at the kernel's hooks.

    ``take_observation`` / ``reuse_observation`` (observe phase: token and
    page facts around the driver's observation, the previous
    after-observation reused), ``compare_screen`` (fingerprint phase),
    ``resolve_first`` (the unchanged-screen fast path, after a person's
    choice), ``decided`` (a skill's screen is not the flow step's), and the
    baselines at ``flow_begins`` / ``flow_ends``.
    """

    @hookimpl
    def flow_begins(self, p: FlowBegins) -> None:
        self.begin_flow(p.run.flow.name)

    @hookimpl
    def flow_ends(self, p: FlowEnds) -> None:
        self.end_flow(p.run.run_id, p.run.flow.name, passed=p.passed)

    @hookimpl
    def take_observation(self, p: TakeObservation) -> Observation:
        return self.observe(p.run_id, p.index, p.when, screenshot=p.screenshot, ax=p.ax)

    @hookimpl
    def reuse_observation(self, p: ReuseObservation) -> Observation | None:
        return self.reusable_before(p.step, fast=p.fast)

    @hookimpl
    def page_heading(self, p: PageHeading) -> str | None:
        got = self.facts_of(p.observation).get("main_heading")
        return got if isinstance(got, str) else None

    @hookimpl
    def compare_screen(self, p: CompareScreen) -> ChangeReport | None:
        return self.check(p.step)

    @hookimpl
    def resolve_first(self, p: ResolveFirst) -> Resolved | None:
        res, cand = fast_resolve(self.ex, p.step)
        return Resolved(res, cand) if res is not None else None

    @hookimpl
    def decided(self, p: Decided) -> None:
        if p.step.source == "skill":
            self.forget_screen(p.step)

    def forget_screen(self, ctx: StepContext) -> None:
        """A skill acts before the flow step: the screen just checked (R1) is not the flow step's.

        Its comparison is dropped, and a baseline it created in this run is
        forgotten, so the flow step's own check - on the page the skill leaves -
        makes and refreshes the step's baseline (a store baseline is an upsert).
        A change it reported stays reported: the page did differ.
        """
        steps = ctx.run.flow.steps
        if not 0 <= ctx.index < len(steps):
            return
        step_id = steps[ctx.index].id
        seen = self.seen.get(step_id)
        if seen is None or seen.index != ctx.index:
            return
        del self.seen[step_id]
        if seen.report.status == "new":
            self.baselines.pop(step_id, None)


def change_line(event: Any) -> str | None:
    """A progress line for a :class:`ScreenChanged` or :class:`BaselineAlertRaised` event (the CLI's), else None.

    ``  leave_request step 1: screen changed (R1): key elements: 1 moved; button 'Sign in' moved by 28 px ...``
    """
    if isinstance(event, ScreenChanged):
        return f"  {event.flow} step {event.index + 1}: screen changed since its baseline: {event.report.summary()}"
    if isinstance(event, BaselineAlertRaised):
        a = event.alert
        return (f"  {a.flow} step {a.step_id!r}: baseline kept, alert raised (changed more than a passing run "
                f"refreshes): {a.screen_key}")
    return None


class ChangeLines:
    """The command line's R1 progress: a line per changed screen, one line per flow for its alerts.

    Call it with every engine event; it returns the lines to print (often none).
    """

    def __init__(self) -> None:
        self._alerts: dict[str, list[BaselineAlert]] = {}

    def __call__(self, event: Any) -> list[str]:
        if isinstance(event, ScreenChanged):
            return [change_line(event) or ""]
        if isinstance(event, BaselineAlertRaised):
            self._alerts.setdefault(event.run_id, []).append(event.alert)
            return []
        if isinstance(event, FlowFinished):
            alerts = self._alerts.pop(event.run_id, [])
            if alerts:
                steps = ", ".join(repr(a.step_id) for a in alerts)
                return [f"  {alerts[0].flow}: {counted(len(alerts), 'baseline')} kept and flagged, changed more than a "
                        f"passing run refreshes (steps {steps}; `steadyhand baselines reset` forgets them after a real "
                        f"change)"]
        return []
