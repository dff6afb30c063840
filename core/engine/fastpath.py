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

Nothing else changes with the level: verification, checkpoints, write
inference and change detection read the same observation (without its
image) on every step.  A FlowExecutor built without a level keeps the old
behaviour: ``full`` with screenshots, ``off`` without.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from core.domain import Resolution

if TYPE_CHECKING:
    from core.engine.hooks import Engine as FlowExecutor
    from core.engine.step import StepContext

__all__ = ["LEVELS", "level_of", "screenshot_wanted", "begin_attempt", "failed_attempt", "resolve_looking",
           "before_heal"]

#: The evidence levels of ``steadyhand.yaml``'s ``evidence:``.
LEVELS: tuple[str, ...] = ("full", "failures", "off")


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


def resolve_looking(ex: "FlowExecutor", ctx: "StepContext", run: Callable[[], Resolution]) -> Resolution:
    """The locator chain's answer, ``run()``; at ``failures``, when it is not the exact level's, again on the
    page looked at in full.

    ``run`` reads ``ctx.before`` when called.  When its answer is a heal or
    an abstention and the observation has no screenshot, the page is
    observed again with its screenshot (:func:`before_heal`: candidates and
    refs of the same page, numbered afresh, stored as the step's before) and
    ``run()`` answers once more - the chain's visual level reads the image,
    and the healed step keeps its before and after screenshots as a heal
    proposal's evidence expects.  At ``full`` and ``off``: ``run()`` once.
    """
    resolution = run()
    if resolution.strategy == "exact" and not resolution.abstained:
        return resolution
    if level_of(ex) != "failures" or ctx.before is None:
        return resolution
    ex.full_look = True  # type: ignore[attr-defined]  # the step's after-observation too
    if ctx.before.screenshot_png:
        return resolution  # the chain had the image already (a before taken over from a step looked at in full)
    before_heal(ex, ctx)
    return run()


def before_heal(ex: "FlowExecutor", ctx: "StepContext") -> None:
    """At ``failures``: observe the page again with its screenshot; it replaces ``ctx.before``.

    Nothing happens at ``full`` (already there) or ``off``; the later
    observations of the step have their screenshots too.
    """
    if level_of(ex) != "failures" or ctx.before is None or ctx.before.screenshot_png:
        return
    ex.full_look = True  # type: ignore[attr-defined]
    ctx.before = ex.observe(ctx.run.run_id, ctx.run.flow, ctx.index, "before")
