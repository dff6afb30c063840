"""Evidence levels: the full look only where it is needed (issue 20 item 2).

A step's *full look* is its observations with a screenshot (masked), from
which the store writes the PNG files, the record phase computes the image
difference (:mod:`core.engine.evidence`) and the state graph its image hash
(:mod:`core.engine.graph`).  Taking, masking, encoding, hashing and storing
screenshots is most of what an observation costs beyond the page's own
reads, so a run takes it only where someone looks at it.  The level is the
project's ``evidence:`` (``EngineSettings.evidence``):

``full``
    every observation of every step (what the studio's live timeline shows;
    the studio's runner asks for it);
``failures`` (the default of ``steadyhand run``)
    no screenshot on a step that passes at its first attempt with the exact
    level; the full look when a cheap signal disagrees:

    * an attempt failed (:func:`failed_attempt`): the page as the failure left
      it is observed with its screenshot and stored - the step's after (or,
      when it did not act, its before), so the timeline, history, HTML
      report and skills capture (:mod:`core.skills.capture`) have it;
    * the step is tried again (:func:`begin_attempt`): every observation of
      the later attempts has its screenshot, so the last failure has its
      before and after and their difference;
    * the locator chain found the target only past its exact level, or
      abstained (:func:`resolve_looking`): the page is looked at in full and
      the chain asked again - its visual level reads the screenshot;
``off``
    no screenshot at all (as ``--no-screenshots``).

Below ``full`` a step's observations are also *light*: Chromium's
accessibility tree is not read again (:meth:`PlaywrightDriver.observe
<core.perception.driver.PlaywrightDriver.observe>` ``ax=False``: the kept
tree entries name the elements whose in-page name did not change, the page
names the others).  The full look reads it again (every place above that
looks in full).  A step's after-observation is always taken the way its
before was (:func:`after_ax`), so the two compare name for name.

The settle wait and the verification of a step that is not looked at in
full take the fast path (:func:`fast_step`): the wait ends on the page's own
signals - the requests the action started are answered, the change the
step expects is seen, and the DOM has been quiet for :data:`FAST_QUIET_MS`
(not the project's ``waits.quiet_ms``) - and the page is then read once,
light.  When that cheap look disagrees with what the step expects (its
effect, its recorded landing, an assertion) the kernel waits the full
settle time, looks again (with the screenshot the level allows) and judges
that (:func:`look_again`); nothing is ever done twice on the page for it.

Nothing else changes with the level: verification, checkpoints, write
inference and change detection read the same observation (without its
image) on every step.  A FlowExecutor built without a level keeps the old
behaviour: ``full`` with screenshots, ``off`` without.
"""
from __future__ import annotations

import functools
import inspect
import json
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable

from core.domain import Candidate, Observation, Resolution, Step
from core.domain.element import NAMED_BY_AUTHOR
from core.locate.identity import TIE_FLOOR
from core.project.params import placeholders

if TYPE_CHECKING:
    from core.engine.hooks import Engine as FlowExecutor
    from core.engine.step import StepContext

__all__ = ["LEVELS", "scoped_locator", "FAST_QUIET_MS", "level_of", "screenshot_wanted", "full_wanted", "begin_attempt",
           "failed_attempt", "resolve_looking", "before_heal", "driver_observe", "observes_around", "settle_kwargs", "fast_step",
           "look_again", "LookBook", "goto_kwargs", "recorded_locator", "fast_locator", "confirm_target"]

#: The evidence levels of ``steadyhand.yaml``'s ``evidence:``.
LEVELS: tuple[str, ...] = ("full", "failures", "off")

#: The fast path's DOM quiet time, ms: two frames at 60 Hz (33 ms) and a little more.  The settle wait of a
#: step on the fast path ends once the page has been quiet this long after the change it expects (and the
#: requests the action started are answered) instead of the project's ``waits.quiet_ms`` (120 ms): a later
#: change is seen by the light look's verdict (when the step's effect or landing is not there yet the kernel
#: waits the full quiet time and looks again, :func:`look_again`) and by the next step's reuse check (a
#: mutation since the look means a fresh observation), and Playwright's own actionability wait guards the
#: next action.
FAST_QUIET_MS = 40.0  # a value step (fill, choice) keeps its idle bound: its reactions change no DOM


class LookBook:
    """Which of the last observations were full looks (Chromium's accessibility tree read): ``had_ax(obs)``.

    Keeps the last :attr:`KEEP` observations by identity (the objects are
    held, so an ``id`` is never reused while listed).
    """

    KEEP = 8

    def __init__(self) -> None:
        self._seen: list[tuple[Observation, bool]] = []

    def note(self, obs: Observation, ax: bool) -> None:
        """``obs`` was taken with (``ax=True``) or without Chromium's accessibility tree."""
        self._seen = [*self._seen[-(self.KEEP - 1):], (obs, ax)]

    def had_ax(self, obs: Observation | None) -> bool:
        """True when ``obs`` was a full look or is unknown here (an observation from elsewhere)."""
        return next((ax for o, ax in reversed(self._seen) if o is obs), True)


def accepts(fn: Any, name: str) -> bool:
    """Whether callable ``fn`` takes keyword ``name`` (drivers and test doubles that predate it do not)."""
    return _takes(getattr(fn, "__func__", fn), name)


_accepts = accepts


@functools.lru_cache(maxsize=64)
def _takes(fn: Any, name: str) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def driver_observe(driver: Any, *, screenshot: bool, ax: bool = True,
                   around: tuple[str, str] | None = None) -> Observation:
    """``driver.observe(screenshot=...)``, light (``ax=False``) when the driver can look without the tree.

    ``around`` (two page functions read before and after the observation) is passed on only to a driver whose
    ``observe`` takes it (:meth:`core.perception.driver.PlaywrightDriver.observe`); the caller checks
    :func:`observes_around` first and reads them itself otherwise.
    """
    kwargs: dict[str, Any] = {}
    if not ax and _accepts(driver.observe, "ax"):
        kwargs["ax"] = False
    if around is not None and _accepts(driver.observe, "around"):
        kwargs["around"] = around
    return driver.observe(screenshot=screenshot, **kwargs)  # type: ignore[no-any-return]


def observes_around(driver: Any) -> bool:
    """True when ``driver.observe`` reads page functions around its observation (``around``, one round trip
    for each with the page reads it does anyway) and leaves their results in ``driver.around``."""
    return _accepts(getattr(driver, "observe", None), "around") and hasattr(driver, "around")


def settle_kwargs(driver: Any, *, fast: bool, probe: Any = None) -> dict[str, Any]:
    """Extra keywords of ``driver.wait_settled`` for a step on the fast path: ``{"quiet_ms": FAST_QUIET_MS}``,
    ``look`` (the after-look taken in the wait's round trip, ``PlaywrightDriver.wait_settled``),
    and ``react_from`` - the page library's timer sequence number in ``probe`` (the page read right before the
    action) - so that a wait on an action that changed nothing ends once no reaction it set off (a validator's
    timeout) is pending, instead of at its idle bound (``PlaywrightDriver.wait_settled``)."""
    if not fast or not _accepts(driver.wait_settled, "quiet_ms"):
        return {}
    out: dict[str, Any] = {"quiet_ms": FAST_QUIET_MS}
    if _accepts(driver.wait_settled, "look"):
        out["look"] = True  # the step's light after-look is taken as the wait ends, in its round trip
    seq = probe.get("timerSeq") if isinstance(probe, dict) else None
    if isinstance(seq, int) and not isinstance(seq, bool) and _accepts(driver.wait_settled, "react_from"):
        out["react_from"] = seq
    return out


def goto_kwargs(ex: "FlowExecutor", run: Any = None) -> dict[str, Any]:
    """Extra keywords of ``driver.goto`` for a flow's start URL: below ``full`` the page's quiet time after the
    load is :data:`FAST_QUIET_MS` (``{"quiet_ms": ...}``), as a fast step's settle wait - the first step's
    before-look waits for a page still loading or rendering on its own (``Observation.loading``, the
    late-render wait of the resolve phase); at ``full``, or for a driver whose ``goto`` takes no
    ``quiet_ms``, nothing (the project's ``waits.quiet_ms``).  With ``run`` (the run's state), also the first
    step's reads before acting to take after the look (``{"then": ...}``, :func:`core.engine.ahead.first_reads`)."""
    if full_wanted(ex) or not _accepts(getattr(ex.driver, "goto", None), "quiet_ms"):
        return {}
    out: dict[str, Any] = {"quiet_ms": FAST_QUIET_MS}
    if _accepts(ex.driver.goto, "look"):
        out["look"] = True  # the first step's light before-look is taken as the wait ends, in its round trip
        if run is not None and _accepts(ex.driver.goto, "then"):
            from core.engine import ahead

            then = ahead.first_reads(ex, run)
            if then is not None:
                out["then"] = then  # and its reads before acting right after it
    return out


def level_of(ex: "FlowExecutor") -> str:
    """The executor's evidence level: ``"off"`` without screenshots, else its ``evidence`` (``"full"`` if unset)."""
    if not getattr(ex, "screenshots", True):
        return "off"
    level = getattr(ex, "evidence", None) or "full"
    return level if level in LEVELS else "full"


def screenshot_wanted(ex: "FlowExecutor") -> bool:
    """Whether the next observation takes a screenshot: at ``full``, or in a full look at ``failures``."""
    level = level_of(ex)
    return level == "full" or (level == "failures" and bool(getattr(ex, "full_look", False)))


#: Roles Playwright's role selector knows (ARIA 1.2 roles, as ``core.export`` uses for ``get_by_role``).
_ROLES = frozenset("""
alert alertdialog application article banner blockquote button caption cell checkbox code columnheader combobox
complementary contentinfo definition deletion dialog directory document emphasis feed figure form grid gridcell
group heading img insertion link list listbox listitem log main marquee math meter menu menubar menuitem
menuitemcheckbox menuitemradio navigation note option paragraph progressbar radio radiogroup region row rowgroup
rowheader scrollbar search searchbox separator slider spinbutton status strong subscript superscript switch tab
table tablist tabpanel term textbox time timer toolbar tooltip tree treegrid treeitem
""".split())


def _quoted(text: str) -> str:
    """``text`` quoted for a Playwright selector as its own locators quote it: JSON, with every character other
    than the quote and the backslash as it is (Playwright's selector parser reads no ``\\uXXXX`` escape: "\\u270f"
    would ask for those six characters, and a name with an accent or a glyph would match nothing)."""
    return json.dumps(text, ensure_ascii=False)


def recorded_locator(step: Step, decided: Step | None = None) -> str:
    """The Playwright selector codegen would choose for ``step``'s recorded target: its test id, its role with
    its exact name, or its label (exact); "" when it has none of them, or when a ``{param}`` placeholder of
    the recorded step (``decided``) makes it name another element each run.

    ``step`` is the step with its parameters bound.  Names in capitals only
    (``text-transform: uppercase``) get no locator: the exact name is not the
    one shown.
    """
    d = step.target
    if decided is not None and any(placeholders(t) for t in (decided.target.test_id, decided.target.name,
                                                              decided.target.label)):
        return ""
    if d.test_id:
        return f"internal:testid=[data-testid={_quoted(d.test_id)}s]"
    letters = [c for c in d.name if c.isalpha()]
    shouting = len(letters) >= 2 and all(c.isupper() for c in letters)
    password = d.tag == "input" and d.type.lower() == "password"
    if d.role in _ROLES and d.name and not password and not shouting:
        return f"internal:role={d.role}[name={_quoted(d.name)}s]"
    if d.label and not d.label.isupper():
        return f"internal:label={_quoted(d.label)}s"
    return ""


def scoped_locator(step: Step, decided: Step | None = None) -> str:
    """:func:`recorded_locator` within the target's recorded scope (the row, list item or labelled container
    that made it unique when it was recorded), chained as the exported script writes it
    (``core.export.playwright_test``): a scope named by its author's words only (``NAMED_BY_AUTHOR``: a list
    item) is matched by its text, case-insensitively; "" without a scope, without a recorded locator, or
    when a ``{param}`` placeholder in the recorded scope's name makes it name another container each run."""
    base = recorded_locator(step, decided)
    scope = step.target.scope
    if not base or scope is None or scope.role not in _ROLES or not scope.name.strip():
        return ""
    if decided is not None and decided.target.scope is not None and placeholders(decided.target.scope.name):
        return ""
    if scope.role in NAMED_BY_AUTHOR:
        words = r"\s*".join(re.escape(w).replace("/", r"\/") for w in scope.name.split())
        return f"internal:role={scope.role} >> internal:has-text=/{words}/i >> {base}"
    return f"internal:role={scope.role}[name={_quoted(scope.name)}i] >> {base}"


def _tie_broken(ex: "FlowExecutor", ctx: "StepContext",
                resolution: Resolution) -> tuple[Resolution, Candidate] | None:
    """The chain abstained on a tie (its last level's best candidates within the locator's margin of each other,
    ``locator.margin``, 0.1: no level told them apart): the
    recorded locator - alone, else within its recorded scope (:func:`scoped_locator`), as the exported script
    finds it - breaks it when it finds exactly one element, one of the tied, with the recorded role and exact
    name; that element is the target, acted on through that locator (by its ref when the page is looked at in
    full).  None otherwise (the abstention stands).

    Two same-named links whose layout moved by a message above them: the chain's exact level wants the
    recorded place within a few px and its text level ties, where a script's locator names one of them.
    """
    step, before = ctx.step, ctx.before
    top = resolution.top
    indices = getattr(ex.driver, "ref_indices", None)
    if step is None or before is None or indices is None or len(top) < 2:
        return None
    margin = max(TIE_FLOOR, float(getattr(getattr(getattr(ex, "settings", None), "locator", None), "margin", TIE_FLOOR)))
    tied = {t.ref for t in top if top[0].score - t.score < margin}  # no level could tell them apart
    if len(tied) < 2:
        return None
    for selector in (recorded_locator(step, ctx.decided), scoped_locator(step, ctx.decided)):
        if not selector:
            continue
        try:
            found = indices(selector)
        except Exception:  # noqa: BLE001 - a page that does not answer: the abstention stands
            return None
        if len(found) != 1:
            continue  # none or several: the narrower locator next
        ref = f"0:{found[0]}"
        cand = next((c for c in before.candidates if c.ref == ref), None)
        if (found[0] < 0 or ref not in tied or cand is None or cand.descriptor.role != step.target.role
                or cand.descriptor.name != step.target.name):
            return None  # another element than the tied ones, or not the recorded one: never acted on
        ctx.locator = selector
        return replace(resolution, strategy="exact", ref=ref, score=1.0, margin=0.0, abstained=False,
                       confirmed_by=("exact",),
                       reason=f"fast path, its recorded locator finds this element alone among the tied: "
                              f"{resolution.reason}"), cand
    return None


def fast_locator(step: Step, decided: Step | None = None) -> tuple[str, bool]:
    """(selector, the author's own) the fast path acts through: the codegen locator (:func:`recorded_locator`),
    else the step's ``selector`` as its author wrote it (``own`` True) when it names the same element each run
    (no ``{param}`` placeholder in the recorded step's) and stays in the main frame; ("", False) when none."""
    selector = recorded_locator(step, decided)
    if selector:
        return selector, False
    own = step.selector
    if own and not placeholders((decided or step).selector) and "enter-frame" not in own:
        return own, True
    return "", False


def confirm_target(ex: "FlowExecutor", ctx: "StepContext", resolution: Resolution, cand: Candidate | None,
                   rerun: Callable[[], tuple[Resolution, Candidate | None]]) -> tuple[Resolution, Candidate | None]:
    """Below ``full``: the recorded locator (:func:`fast_locator`) must find exactly the element the locator
    chain's exact level found, with its recorded role; then ``ctx.locator`` is that locator (the action goes
    through it, and the step may settle and verify on the fast path).  A step with no codegen locator but its
    author's ``selector`` is confirmed the same way through that selector; when it disagrees the step only
    takes no fast path.

    When the recorded locator finds no element, several, or another one (a
    cheap signal that disagrees) the page is looked at in full
    (:func:`before_heal`) and ``rerun()`` resolves again on that look; its
    answer is returned and the step takes no fast path.  A confirmed
    resolution's reason starts with "fast path" (what ``bench overhead``
    counts).  Anything else -
    a heal, an abstention, no recorded locator, a target in a frame - is
    returned as it is.
    """
    ctx.locator = ""
    step = ctx.step
    if resolution.abstained and cand is None and step is not None:
        broken = _tie_broken(ex, ctx, resolution)
        if broken is not None:
            if full_wanted(ex):  # looked at in full: acted on by its ref, as the chain's answer would be
                ctx.locator = ""
            return broken
    if (full_wanted(ex) or cand is None or step is None or resolution.abstained or resolution.healed
            or resolution.strategy != "exact" or not cand.ref.startswith("0:")):
        return resolution, cand
    selector, own = fast_locator(step, ctx.decided)
    indices = getattr(ex.driver, "ref_indices", None)
    if not selector or indices is None:
        return resolution, cand
    from core.engine import ahead

    found = ahead.indices(ctx, selector)  # read with the reuse check (one round trip less)
    if found is None:
        try:
            found = indices(selector)
        except Exception:  # noqa: BLE001 - a page that does not answer is judged by the full look
            found = None
    if found == [int(cand.ref.split(":", 1)[1])] and cand.descriptor.role == step.target.role:
        ctx.locator = selector
        if not resolution.reason.startswith("fast path"):
            whose = "the step's selector" if own else "its recorded locator"
            resolution = replace(resolution, reason=f"fast path, {whose} finds this element alone: "
                                                    f"{resolution.reason}")
        return resolution, cand
    if own:  # the author's selector is no codegen locator: its disagreement only means no fast path
        return resolution, cand
    before_heal(ex, ctx)  # the codegen locator and the chain disagree: the full look decides, no fast path
    return rerun()


def full_wanted(ex: "FlowExecutor") -> bool:
    """Whether the next observation reads Chromium's accessibility tree again: at ``full``, or in a full look."""
    return level_of(ex) == "full" or bool(getattr(ex, "full_look", False))


def fast_step(ex: "FlowExecutor", ctx: "StepContext") -> bool:
    """Whether the step settles and verifies on the fast path: it acted through its recorded locator
    (:func:`confirm_target`), and it is not looked at in full (not at ``full``, not a retry, no heal or
    abstention so far, its before was light)."""
    book = getattr(ex, "looks", None)
    return (ctx.acted and bool(ctx.locator) and not full_wanted(ex) and book is not None
            and ctx.before is not None and not book.had_ax(ctx.before))


def look_again(ex: "FlowExecutor", ctx: "StepContext", why: str) -> None:
    """The light look disagreed (``why``): settle with the project's full quiet time and observe again.

    From now on the step is looked at in full (its screenshot at
    ``failures``); the new after-observation is taken like its before (light:
    the two compare name for name) and replaces ``ctx.after``; the wait's
    figures are merged into ``ctx.settled``.  ``ctx.looked_again`` keeps ``why``.
    """
    assert ctx.step is not None
    ex.full_look = True  # type: ignore[attr-defined]
    ctx.looked_again = why
    wait = ctx.wait
    more = ex.driver.wait_settled(long=not ctx.step.reversible, start=dict(ctx.probe),
                                  idle_ms=wait.idle_ms if wait is not None else None,
                                  limit_ms=wait.limit_ms if wait is not None else None) or {}
    ctx.settled = {"ms": float(ctx.settled.get("ms", 0.0)) + float(more.get("ms", 0.0)),
                   "changed": bool(ctx.settled.get("changed") or more.get("changed")),
                   "timed_out": bool(more.get("timed_out"))}
    ctx.after = ex.observe(ctx.run.run_id, ctx.run.flow, ctx.index, "after", ctx=ctx)


def begin_attempt(ex: "FlowExecutor", ctx: "StepContext") -> None:
    """A new attempt of a step: the later attempts of a step that failed are looked at in full."""
    ex.full_look = ctx.attempt > 1  # type: ignore[attr-defined]


def failed_attempt(ex: "FlowExecutor", ctx: "StepContext", exc: BaseException) -> None:
    """At ``failures``: the page a failed attempt left is observed with its screenshot and stored (best effort).

    Only for a failure the recovery policy judges (a phase's ``StepFailure``
    or a page that broke its checks): a dead browser has nothing to show.
    The new observation replaces the step's after-observation (its before,
    when it did not act): the same page, its refs the ones the driver knows
    now, its screenshot for the evidence.
    """
    from core.engine.step import StepFailure

    if level_of(ex) != "failures" or not isinstance(exc, StepFailure):
        return
    have = ctx.after if ctx.acted else ctx.before
    if have is not None and have.screenshot_png:
        return  # already looked at in full
    ex.full_look = True  # type: ignore[attr-defined]
    when = "after" if ctx.acted else "before"
    try:
        obs = ex.observe(ctx.run.run_id, ctx.run.flow, ctx.index, when)
    except Exception as exc2:  # noqa: BLE001 - evidence never fails a step; the policy judges the failure
        ex.store_errors.append(f"full look of step {ctx.index + 1} failed: {type(exc2).__name__}: {exc2}")
        return
    # the new observation stands for the page from now on: its refs are the ones the driver knows (an escalation
    # offers its candidates, a rollback reads its dialogs)
    if ctx.acted and ctx.after is not None:
        ctx.after = obs
    elif not ctx.acted and ctx.before is not None:
        ctx.before = obs


def resolve_looking(ex: "FlowExecutor", ctx: "StepContext", run: Callable[[bool], Resolution]) -> Resolution:
    """The locator chain's answer, ``run(ask)``; at ``failures``, when it is not the exact level's, again on the
    page looked at in full.

    ``run`` reads ``ctx.before`` when called; ``ask`` says whether the chain
    may ask the model among tied candidates (a request costs seconds and
    money: it is made once, on the look the answer is taken from).  When the
    first answer is a heal or an abstention and the observation has no
    screenshot, the page is observed again with its screenshot
    (:func:`before_heal`: candidates and refs of the same page, numbered
    afresh, stored as the step's before) and ``run(True)`` answers once more -
    the chain's visual level reads the image, and the healed step keeps its
    before and after screenshots as a heal proposal's evidence expects.  At
    ``full`` and ``off``: ``run(True)`` once.
    """
    again = level_of(ex) != "full" and ctx.before is not None and not _looked_in_full(ex, ctx.before)
    resolution = run(not again)
    if resolution.strategy == "exact" and not resolution.abstained:
        return resolution
    if level_of(ex) == "full" or ctx.before is None:
        return resolution
    ex.full_look = True  # type: ignore[attr-defined]  # the step's after-observation too
    if not again:
        return resolution  # the chain had the image already (a before taken over from a step looked at in full)
    before_heal(ex, ctx)
    return run(True)


def _looked_in_full(ex: "FlowExecutor", obs: Observation) -> bool:
    """``obs`` has what a full look reads at this level: Chromium's tree, and the image unless at ``off``."""
    book = getattr(ex, "looks", None)
    had_ax = book.had_ax(obs) if book is not None else True
    return had_ax and (bool(obs.screenshot_png) or level_of(ex) == "off")


def before_heal(ex: "FlowExecutor", ctx: "StepContext") -> None:
    """Below ``full``: observe the page again in full (Chromium's tree, and the screenshot at ``failures``);
    it replaces ``ctx.before``.

    Nothing happens at ``full`` (already there) or when the before was looked
    at in full; the later observations of the step are full looks too.
    """
    if level_of(ex) == "full" or ctx.before is None or _looked_in_full(ex, ctx.before):
        return
    ex.full_look = True  # type: ignore[attr-defined]
    ctx.before = ex.observe(ctx.run.run_id, ctx.run.flow, ctx.index, "before")
