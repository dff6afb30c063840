"""The verify phase's second look at a page still in motion (issue 19: judge what an action did as a person would).

:func:`look_when_still` is called by :func:`core.engine.pipeline.verify` right after the step's
after-observation.  When the action's expected effect is not there yet and the page's CSS transitions or
animations are running (a dialog fading in behind its backdrop), it waits for them to end
(:func:`core.recover.motion.wait_motion`, at most :data:`core.recover.motion.MOTION_LIMIT_MS`) and observes the
page again: the verdict is then given on the page as it stands, not on a frame of its animation.  Judging the
half-shown dialog "not opened" made the engine click Delete again after its confirmation box had opened.

When the verdict holds, the page is still looked at once for a dialog the action set arriving
(:func:`core.recover.motion.dialog_arriving`: in the page, still invisible, its show animation running): the
recorded after-state (no dialog) would hold on that frame and the step pass, and the dialog - the step's effect -
would then be met only by the next step, over its target.  Such a dialog is waited for (at most
:data:`core.recover.motion.ARRIVING_ROUNDS` waits of :data:`core.recover.motion.MOTION_LIMIT_MS`) and the page
observed again, so that the step's verification meets it and an approved skill answers it there.

Nothing is waited for when the step did not act or nothing moves (one ``evaluate``, about 1 ms; none when the
step's settle wait said that nothing was animating as it ended, ``ctx.settled["moving"]``, or that no dialog was
arriving then, ``ctx.settled["arriving"]``).
"""
from __future__ import annotations

from typing import Any

from core.act.expect import expected_delta, judge, observed_deltas
from core.recover.motion import wait_dialog_arriving, wait_motion

__all__ = ["look_when_still"]


def look_when_still(ex: Any, ctx: Any) -> bool:
    """Observe the page again once its motion ended, when the step's expected change is not seen yet or a dialog
    is still arriving.

    Returns True when ``ctx.after`` was replaced by a new after-observation; False when nothing was
    waited for (nothing was moving - or, when the verdict holds, no dialog was arriving -, or the step has no
    before / after to compare).
    """
    step = ctx.step
    if not ctx.acted or step is None or ctx.before is None or ctx.after is None or getattr(ctx, "already", False):
        return False
    if judge(expected_delta(step), observed_deltas(ctx.before, ctx.after)).kind == "as_expected":
        settled = getattr(ctx, "settled", None) or {}
        if settled.get("moving") is False or settled.get("arriving") is False:
            return False  # nothing was animating when the page settled, or no dialog was arriving then
        waited = wait_dialog_arriving(ex.driver)  # a dialog the action opened, still fading in: its effect too
    else:
        waited = wait_motion(ex.driver)
    if waited <= 0.0:
        return False
    ctx.after = ex.observe(ctx.run.run_id, ctx.run.flow, ctx.index, "after", ctx=ctx)
    return True
