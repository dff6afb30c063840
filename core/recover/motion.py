"""A page still in motion after an action: wait for its CSS transitions and animations to end (issue 19).

A dialog that fades in is not there yet for the first look after the
click: Bootstrap 3 first fades its backdrop in (150 ms), and only when that
transition ends shows the dialog and fades it in (another 150-300 ms).  No
DOM mutation happens in between, so the settle wait (quiet for 120 ms) can
end in the gap, and the step that opened the dialog is judged "expected a
dialog but saw elements": a failed verdict about an effect that is still
arriving.  A person waits until the page stops moving before judging what
a click did; :func:`wait_motion` does that, for a step whose verdict did not
hold, before it is judged for good.

Only animations of finite length count (a spinner's infinite rotation
never ends and says nothing), each wait is bounded by the caller's limit,
and a chain (a transition whose end starts the next one) is followed by
looking once more :data:`CHAIN_GAP_MS` after the last one ended.

Errors: none raised; a page that cannot be asked says "no motion".
"""
from __future__ import annotations

from typing import Any

from core.perception.pagefacts import ARRIVING_JS

__all__ = ["ARRIVING_JS", "ARRIVING_ROUNDS", "MOTION_JS", "MOTION_LIMIT_MS", "CHAIN_GAP_MS", "dialog_arriving",
           "wait_dialog_arriving", "wait_motion"]

#: Longest wait (ms) for a page's transitions to end.  UI frameworks' transitions last 150-500 ms (Bootstrap
#: 3: 150 ms backdrop then 300 ms dialog; Material: 150-375 ms); a chain of three fits in 2 s.
MOTION_LIMIT_MS = 2000.0
#: Ms to look again after the running animations ended: the next link of a chain (Bootstrap starts the
#: dialog's fade in the backdrop's ``transitionend`` handler, within a frame or two: 16-33 ms at 60 Hz).
CHAIN_GAP_MS = 60.0

#: The page side of :func:`wait_motion`: ``{"ms": waited, "moved": whether any finite animation ran}``.
MOTION_JS = """
async ([limitMs, gapMs]) => {
  const t0 = performance.now();
  const finite = () => document.getAnimations().filter(a => {
    if (a.playState !== 'running') return false;
    try { return Number.isFinite(a.effect.getComputedTiming().endTime); } catch (e) { return false; }
  });
  const sleep = ms => new Promise(ok => setTimeout(ok, Math.max(0, ms)));
  let moved = false;
  for (let round = 0; round < 50; round++) {
    const left = limitMs - (performance.now() - t0);
    if (left <= 0) break;
    const running = finite();
    if (!running.length) {
      if (!moved) break;
      await sleep(Math.min(gapMs, left));
      if (!finite().length) break;
      continue;
    }
    moved = true;
    await Promise.race([Promise.allSettled(running.map(a => a.finished)), sleep(left)]);
  }
  return {ms: performance.now() - t0, moved};
}
"""


#: At most this many waits for a dialog still arriving (a second for a show animation that starts when the
#: first ends, e.g. a backdrop's then the dialog's); each is bounded by :data:`MOTION_LIMIT_MS`.
ARRIVING_ROUNDS = 2


def dialog_arriving(driver: Any) -> bool:
    """True when a dialog is in the page but still invisible while an animation runs on or around it
    (:data:`ARRIVING_JS`); False when none is, or the page cannot be asked (one ``evaluate``, about 1 ms)."""
    evaluate = getattr(driver, "evaluate", None)
    if evaluate is None or getattr(driver, "page", None) is None:
        return False
    try:
        return bool(evaluate(ARRIVING_JS))
    except Exception:  # noqa: BLE001 - a page navigating or closed: nothing arriving that can be waited for
        return False


def wait_dialog_arriving(driver: Any, limit_ms: float = MOTION_LIMIT_MS, rounds: int = ARRIVING_ROUNDS) -> float:
    """Wait while a dialog is still arriving (:func:`dialog_arriving`) for the page's motion to end: at most
    ``rounds`` waits of at most ``limit_ms`` each (ms).  Returns the milliseconds waited (0.0 when no dialog was
    arriving: one ``evaluate``)."""
    waited = 0.0
    for _ in range(max(0, rounds)):
        if not dialog_arriving(driver):
            break
        ms = wait_motion(driver, limit_ms)
        if ms <= 0.0:
            break  # nothing finite moves after all: nothing to wait for
        waited += ms
    return waited


def wait_motion(driver: Any, limit_ms: float = MOTION_LIMIT_MS, gap_ms: float = CHAIN_GAP_MS) -> float:
    """Wait until the page's finite CSS transitions and animations have ended, at most ``limit_ms``.

    Parameters
    ----------
    driver : Any
        Has ``evaluate(script, arg)`` on the page (the Playwright driver); others have no motion.
    limit_ms, gap_ms : float
        The bound of the whole wait, and how long after the running ones ended the page is looked at
        once more for the next link of a chain (ms).

    Returns
    -------
    float
        Milliseconds waited for motion that was running (0.0 when none ran, or the page could not be asked).
    """
    evaluate = getattr(driver, "evaluate", None)
    if evaluate is None or getattr(driver, "page", None) is None:
        return 0.0
    bound = getattr(driver, "script_timeout_ms", None)  # the driver abandons a longer evaluate
    if isinstance(bound, (int, float)) and bound > 0:
        limit_ms = min(float(limit_ms), 0.8 * float(bound))
    try:
        got = evaluate(MOTION_JS, [float(limit_ms), float(gap_ms)])
    except Exception:  # noqa: BLE001 - a page navigating or closed: nothing is moving that can be waited for
        return 0.0
    if not isinstance(got, dict) or not got.get("moved"):
        return 0.0
    return float(got.get("ms") or 0.0)
