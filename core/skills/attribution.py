"""Failure attribution (K3): where the trajectory really changed, the window around the failure, and a cause.

Pure logic over a failure record (:class:`core.store.skills.FailureRecord`,
or any object with its fields): no browser, no store.

* **Segments** - the trajectory is split where the state really changed: an
  entry whose light state signature after (S2 digest) differs from the one
  before ends a segment; entries that left the state as it was (a click that
  did nothing, a retry) stay in the segment they are in.
* **Window** - the :data:`WINDOW` (3) actions before the failure point and the
  3 after it (a person's correction first, then the steps the run went on
  with).
* **Cause** - one of :data:`core.domain.skill.FAILURE_CAUSES`, by rules, with
  a confidence 0..1 (:func:`attribute`):

  ``unexpected_state``
      a dialog or overlay was open at the failure that the recording did not
      have there (the previous step's recorded after-state had no dialog, or
      another one), the target was covered, or the target found lay in a
      dialog it was not recorded in (0.9); a new dialog after the action (0.8).
  ``locator_failure``
      the locator abstained or the action could not be performed on a page
      with no unexpected dialog (0.75; 0.6 when the page before the step was
      not the recorded one, which could also be drift).
  ``state_drift``
      the page changed between the previous step's end and this step's
      action with nobody acting (the state before differs from the previous
      entry's after), or the verdict saw a change other than the expected one
      on a page that was the recorded one (0.6).
  ``wrong_decision``
      the failing action came from the model (``source == "model"``) and did
      not have its effect (0.7), or rounds went by without progress
      (stagnation, loop: 0.55).

* **Refinement** - with a model (:class:`core.plan.model.ModelClient`),
  :func:`refine` asks it to pick the cause from the same four with a fixed
  schema (:class:`CauseAnswer`); its answer replaces the rules' only when it
  is more confident, and a model that fails changes nothing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, Sequence

from pydantic import BaseModel, Field

from core.domain.skill import FAILURE_CAUSES
from core.locate.textsim import normalize

__all__ = ["Attribution", "segments", "window", "attribute", "refine", "CauseAnswer", "WINDOW", "unexpected_dialogs"]

#: Actions kept before and after the failure point (K3: "a window of 3 actions before and after").
WINDOW = 3


@dataclass(frozen=True, slots=True)
class Attribution:
    """The attribution of one failure (K3).

    Attributes
    ----------
    cause : str
        One of :data:`~core.domain.skill.FAILURE_CAUSES`.
    confidence : float
        0..1.
    reasons : tuple[str, ...]
        The rules that fired, in words.
    before, after : tuple[Mapping, ...]
        The window: trajectory entries before the failure point (oldest first)
        and the actions after it (the correction's, then the run's).
    segments : tuple[tuple[int, int], ...]
        ``(first, last)`` trajectory positions of each segment (inclusive).
    failed_segment : int
        Position in ``segments`` of the segment holding the failure point.
    source : str
        ``"rules"`` or ``"model"``.
    """

    cause: str
    confidence: float
    reasons: tuple[str, ...] = ()
    before: tuple[Mapping[str, Any], ...] = ()
    after: tuple[Mapping[str, Any], ...] = ()
    segments: tuple[tuple[int, int], ...] = ()
    failed_segment: int = -1
    source: str = "rules"
    unexpected: tuple[str, ...] = field(default=())

    def to_mapping(self) -> dict[str, Any]:
        """The plain shape stored in ``failure_records.attribution``."""
        return {"cause": self.cause, "confidence": round(self.confidence, 3), "reasons": list(self.reasons),
                "before": [dict(x) for x in self.before], "after": [dict(x) for x in self.after],
                "segments": [list(s) for s in self.segments], "failed_segment": self.failed_segment,
                "source": self.source, "unexpected": list(self.unexpected)}


def segments(trajectory: Sequence[Mapping[str, Any]]) -> list[tuple[int, int]]:
    """``(first, last)`` positions of the runs of entries between real state changes.

    An entry ends its segment when its ``state_after`` is known and differs
    from its ``state_before``; the last entry always ends one.
    """
    out: list[tuple[int, int]] = []
    start = 0
    for i, e in enumerate(trajectory):
        a, b = str(e.get("state_before") or ""), str(e.get("state_after") or "")
        if (a and b and a != b) or i == len(trajectory) - 1:
            out.append((start, i))
            start = i + 1
    return out


def window(trajectory: Sequence[Mapping[str, Any]], point: int, later: Sequence[Mapping[str, Any]] = (),
           size: int = WINDOW) -> tuple[tuple[Mapping[str, Any], ...], tuple[Mapping[str, Any], ...]]:
    """The ``size`` entries before position ``point`` and the ``size`` actions after it (``later`` first)."""
    before = tuple(trajectory[max(0, point - size):point])
    after = (tuple(later) + tuple(trajectory[point + 1:]))[:size]
    return before, after


def unexpected_dialogs(modal_titles: Sequence[str], recorded: Mapping[str, Any]) -> tuple[str, ...]:
    """Dialog titles open at the failure that the recording did not have before the step.

    The recording's knowledge is the previous step's recorded after-state
    (``recorded["after_previous"]``: ``dialog`` False/None = no dialog, or its
    ``dialog_name``) and the step's baseline screen key.  Unknown recording:
    nothing is called unexpected.
    """
    prev = recorded.get("after_previous")
    if prev is None and "screen" not in recorded:
        return ()
    allowed = set()
    if prev and prev.get("dialog") and prev.get("dialog_name"):
        allowed.add(normalize(str(prev["dialog_name"])))
    screen = str(recorded.get("screen") or "")
    if screen:
        top = screen.split("|")[-1].strip()
        if top:
            allowed.add(normalize(top))
    if prev and prev.get("dialog") and not prev.get("dialog_name"):
        return tuple(modal_titles[1:])  # one unnamed dialog was expected: only those stacked over it are new
    return tuple(m for m in modal_titles if m and normalize(m) not in allowed)


def _failure_point(trajectory: Sequence[Mapping[str, Any]], step_index: int) -> int:
    for i in range(len(trajectory) - 1, -1, -1):
        if trajectory[i].get("index") == step_index and trajectory[i].get("status") == "failed":
            return i
    return len(trajectory) - 1


def attribute(record: Any, *, later: Sequence[Mapping[str, Any]] = ()) -> Attribution:
    """The cause of the failure in ``record`` by rules (see the module docstring).

    ``later`` holds what happened after the failure point (a correction's
    steps as trajectory entries, then the run's next steps).
    """
    traj = list(record.trajectory)
    page = record.page or {}
    point = _failure_point(traj, record.step_index)
    before_w, after_w = window(traj, point, later)
    segs = segments(traj)
    seg_at = next((k for k, (a, b) in enumerate(segs) if a <= point <= b), -1)
    snap = page.get("before") or {}
    after = page.get("after") or {}
    recorded = page.get("recorded") or {}
    kind, msg = record.error_type, (record.message or "").lower()
    source = str(page.get("source") or (traj[point].get("source") if traj else "") or "flow")
    reasons: list[str] = []
    new = unexpected_dialogs(tuple(snap.get("modal_titles") or ()), recorded)
    new_after = tuple(m for m in unexpected_dialogs(tuple(after.get("modal_titles") or ()), recorded)
                      if m not in new)
    rec_before = str(recorded.get("state_before") or "")
    drifted = bool(rec_before) and rec_before != record.state
    prev_after = str(traj[point - 1].get("state_after") or "") if point > 0 else ""
    moved_alone = bool(prev_after) and bool(record.state) and prev_after != record.state

    def done(cause: str, conf: float) -> Attribution:
        return Attribution(cause, conf, tuple(reasons), before_w, after_w, tuple(segs), seg_at,
                           unexpected=new or new_after)

    if new:
        reasons.append(f"a dialog the recording did not have was open: {', '.join(repr(m) for m in new)}")
        return done("unexpected_state", 0.9)
    if kind == "precondition" and ("covered by" in msg or "in the dialog" in msg):
        reasons.append("the target was covered or lay in a dialog it was not recorded in")
        return done("unexpected_state", 0.9)
    if new_after:
        reasons.append(f"the action opened a dialog the recording did not have: "
                       f"{', '.join(repr(m) for m in new_after)}")
        return done("unexpected_state", 0.8)
    if source == "model" and kind in ("verify_mismatch", "action_error", "stagnation", "loop"):
        reasons.append("the failing action was the model's choice and did not have its effect")
        return done("wrong_decision", 0.7)
    if kind in ("stagnation", "loop"):
        reasons.append("rounds went by without a real change of the page")
        return done("wrong_decision", 0.55)
    if kind in ("locator", "action_error"):
        reasons.append("the locator abstained" if kind == "locator" else "the action could not be performed")
        if drifted:
            reasons.append("the page before the step was not the recorded one")
            return done("locator_failure", 0.6)
        return done("locator_failure", 0.75)
    if moved_alone:
        reasons.append("the page changed between the previous step and this one with nobody acting")
        return done("state_drift", 0.6)
    if kind == "verify_mismatch":
        reasons.append("the action did not have its recorded effect")
        return done("state_drift" if not drifted else "unexpected_state", 0.5)
    reasons.append(f"a {kind or 'failure'} with no stronger sign")
    return done("state_drift", 0.4)


class CauseAnswer(BaseModel):
    """The fixed schema a model answers a refinement with."""

    cause: Literal["locator_failure", "unexpected_state", "state_drift", "wrong_decision"]
    confidence: float = Field(ge=0.0, le=1.0)
    why: str = Field(default="", max_length=300)


def _describe(e: Mapping[str, Any]) -> str:
    t = e.get("target") or {}
    words = t.get("name") or t.get("label") or t.get("text") or t.get("placeholder") or ""
    return f"{e.get('action', '?')} {t.get('role', '')} {words!r} ({e.get('status', '')})".strip()


def refine(attribution: Attribution, record: Any, client: Any) -> Attribution:
    """Ask a model (``client.complete_json(messages, CauseAnswer)``) to pick the cause; keep the more confident.

    Only texts already in the record (masked by the store) are sent.  Any
    error of the model leaves ``attribution`` as it is.
    """
    page = record.page or {}
    snap = page.get("before") or {}
    lines = [
        "Pick the cause of a failed step of a web flow. Causes: locator_failure (the element could not be found "
        "or used), unexpected_state (the page showed something the recording did not: a popup, a banner), "
        "state_drift (the page changed by itself between observing and acting), wrong_decision (the chosen "
        "action was wrong for the page). Answer one JSON object {\"cause\", \"confidence\" 0..1, \"why\"}.",
        f"Error: {record.error_type}: {record.message[:300]}",
        f"Dialogs open: {', '.join(snap.get('modal_titles') or ()) or 'none'}",
        "Before: " + "; ".join(_describe(e) for e in attribution.before),
        "After (the correction first): " + "; ".join(_describe(e) for e in attribution.after),
        f"Rules said: {attribution.cause} ({attribution.confidence:.2f}): {'; '.join(attribution.reasons)}",
    ]
    try:
        answer, _usage = client.complete_json([{"role": "user", "content": "\n".join(lines)}], CauseAnswer)
    except Exception:  # noqa: BLE001 - a model that fails refines nothing
        return attribution
    if answer.cause not in FAILURE_CAUSES or answer.confidence <= attribution.confidence:
        return attribution
    return Attribution(answer.cause, answer.confidence, attribution.reasons + (f"model: {answer.why}",),
                       attribution.before, attribution.after, attribution.segments, attribution.failed_segment,
                       "model", attribution.unexpected)
