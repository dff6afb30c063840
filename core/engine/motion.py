"""The verify phase's second look at a page still in motion (issue 19: judge what an action did as a person would).

:func:`look_when_still` is called by :func:`core.engine.pipeline.verify` right after the step's
after-observation.  When the action's expected effect is not there yet and the page's CSS transitions or
animations are running (a dialog fading in behind its backdrop), it waits for them to end
(:func:`core.recover.motion.wait_motion`, at most :data:`core.recover.motion.MOTION_LIMIT_MS`) and observes the
page again: the verdict is then given on the page as it stands, not on a frame of its animation.  Judging the
half-shown dialog "not opened" made the engine click Delete again after its confirmation box had opened.

Nothing is waited for when the verdict already holds, the step did not act, or nothing moves (one
``evaluate``, about 1 ms, on a failing verdict only).
"""
from __future__ import annotations

from typing import Any

from core.act.expect import expected_delta, judge, observed_deltas
from core.recover.motion import wait_motion

__all__ = ["look_when_still"]


def look_when_still(ex: Any, ctx: Any) -> bool:
    """Observe the page again once its motion ended, when the step's expected change is not seen yet.

    Returns True when ``ctx.after`` was replaced by a new after-observation; False when nothing was
    waited for (the verdict holds, nothing was moving, or the step has no before / after to compare).
    """
    step = ctx.step
    if not ctx.acted or step is None or ctx.before is None or ctx.after is None or getattr(ctx, "already", False):
        return False
    if judge(expected_delta(step), observed_deltas(ctx.before, ctx.after)).kind == "as_expected":
        return False
    if wait_motion(ex.driver) <= 0.0:
        return False
    ctx.after = ex.observe(ctx.run.run_id, ctx.run.flow, ctx.index, "after", ctx=ctx)
    return True
