"""Breakpoints: where a run pauses by itself - on a step, or when something worth a look happens.

Two kinds:

- **step breakpoints**: by flow name and step id (ids survive inserting or
  moving steps); the run pauses before that step's first attempt begins
  (nothing of it done yet);
- **conditional breakpoints** (:class:`Conditions`), checked in every step:

  ``changed``
      the screen before the step differs from its R1 baseline
      (:class:`core.domain.change.ChangeReport` status ``changed``); pauses
      after ``fingerprint``, before anything is decided or done;
  ``low_confidence``
      the resolution's score is below ``confidence_below`` (0..1; default
      0.8, the level under which a heal is worth checking by eye, R2);
      pauses after ``resolve``, before the pre-check and the action;
  ``abstained``
      the locator chain abstained (R2); pauses before the step's failure is
      handled (before any retry or escalation);
  ``verdict``
      the post-verification verdict is not ``as_expected`` (S5); pauses
      before the failure is handled;
  ``irreversible``
      the step is irreversible (S6); pauses before ``act``.

Everything here is pure: :func:`evaluate` takes the facts of one moment of
a step (:class:`BreakFacts`) and says which breakpoints fire.  The plugin
:class:`core.engine.plugins.breakpoints.BreakpointPlugin` answers the
kernel's ``breakpoint_hit`` hook at its pause points from the run control's
``breakpoints``, and the kernel pauses through the control's ``break_here``
(a control without them - the headless command line - never pauses).

The studio keeps the breakpoints in the project's local settings,
``<project>/.steadyhand/studio.json`` (key ``breakpoints``; not versioned),
through :func:`load_breakpoints` / :func:`save_breakpoints`, and sends them
to the engine with :class:`core.engine.events.SetBreakpoints`.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping

if TYPE_CHECKING:
    from core.engine.step import StepContext

__all__ = [
    "CONDITIONS", "DEFAULT_CONFIDENCE", "LOCAL_SETTINGS", "Conditions", "Breakpoints", "BreakFacts", "Hit",
    "BreakpointsError", "evaluate", "facts_of", "load_breakpoints", "save_breakpoints",
]

#: The conditional breakpoints, in the order a step meets them.
CONDITIONS: tuple[str, ...] = ("changed", "low_confidence", "abstained", "verdict", "irreversible")
#: Default confidence threshold of ``low_confidence`` (0.8: under it a heal is worth a look, R2).
DEFAULT_CONFIDENCE = 0.8
#: The project's local (not versioned) studio settings file, relative to the project root.
LOCAL_SETTINGS = Path(".steadyhand") / "studio.json"


class BreakpointsError(ValueError):
    """The local settings file holds breakpoints that cannot be read; the message names file and field."""


@dataclass(frozen=True, slots=True)
class Conditions:
    """Which conditional breakpoints are on; ``confidence_below`` is the ``low_confidence`` threshold (0..1)."""

    changed: bool = False
    low_confidence: bool = False
    abstained: bool = False
    verdict: bool = False
    irreversible: bool = False
    confidence_below: float = DEFAULT_CONFIDENCE

    def enabled(self) -> tuple[str, ...]:
        """The names (of :data:`CONDITIONS`) that are on."""
        return tuple(c for c in CONDITIONS if getattr(self, c))


@dataclass(frozen=True, slots=True)
class Breakpoints:
    """All breakpoints of a project: step ids per flow name, and the conditions."""

    steps: Mapping[str, frozenset[str]] = field(default_factory=dict)
    conditions: Conditions = field(default_factory=Conditions)

    @property
    def empty(self) -> bool:
        return not any(self.steps.values()) and not self.conditions.enabled()

    def on(self, flow: str, step_id: str) -> bool:
        """True when step ``step_id`` of ``flow`` has a breakpoint."""
        return step_id in self.steps.get(flow, frozenset())

    def toggled(self, flow: str, step_id: str) -> "Breakpoints":
        """A copy with the breakpoint on that step switched."""
        ids = set(self.steps.get(flow, frozenset()))
        ids.symmetric_difference_update({step_id})
        steps = {k: v for k, v in self.steps.items() if k != flow}
        if ids:
            steps[flow] = frozenset(ids)
        return Breakpoints(steps, self.conditions)

    def with_conditions(self, conditions: Conditions) -> "Breakpoints":
        return Breakpoints(self.steps, conditions)

    def to_json(self) -> dict[str, Any]:
        """``{"steps": {flow: [ids]}, "conditions": {name: bool, ..., "confidence_below": float}}``."""
        c = self.conditions
        return {"steps": {f: sorted(ids) for f, ids in sorted(self.steps.items()) if ids},
                "conditions": {**{n: getattr(c, n) for n in CONDITIONS}, "confidence_below": c.confidence_below}}

    @classmethod
    def from_json(cls, doc: Any, *, where: str = "breakpoints") -> "Breakpoints":
        """Parse :meth:`to_json`'s shape; raises :class:`BreakpointsError` naming ``where`` and the field."""
        if not isinstance(doc, dict):
            raise BreakpointsError(f"{where}: expected an object with 'steps' and 'conditions'")
        steps_doc = doc.get("steps", {})
        if not isinstance(steps_doc, dict):
            raise BreakpointsError(f"{where}.steps: expected an object of flow name -> list of step ids")
        steps: dict[str, frozenset[str]] = {}
        for flow, ids in steps_doc.items():
            if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
                raise BreakpointsError(f"{where}.steps.{flow}: expected a list of step ids (strings)")
            if ids:
                steps[str(flow)] = frozenset(ids)
        cond_doc = doc.get("conditions", {})
        if not isinstance(cond_doc, dict):
            raise BreakpointsError(f"{where}.conditions: expected an object")
        values: dict[str, Any] = {}
        for name in CONDITIONS:
            v = cond_doc.get(name, False)
            if not isinstance(v, bool):
                raise BreakpointsError(f"{where}.conditions.{name}: expected true or false, got {v!r}")
            values[name] = v
        t = cond_doc.get("confidence_below", DEFAULT_CONFIDENCE)
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0.0 <= float(t) <= 1.0:
            raise BreakpointsError(f"{where}.conditions.confidence_below: expected a number from 0 to 1, got {t!r}")
        unknown = sorted(set(cond_doc) - set(CONDITIONS) - {"confidence_below"})
        if unknown:
            raise BreakpointsError(f"{where}.conditions.{unknown[0]}: unknown condition (known: "
                                   f"{', '.join(CONDITIONS)}, confidence_below)")
        return cls(steps, Conditions(**values, confidence_below=float(t)))


@dataclass(frozen=True, slots=True)
class BreakFacts:
    """What is known of one step at one moment (the input of :func:`evaluate`).

    ``phase`` is the phase about to run (:data:`core.engine.events.PHASES`),
    or ``"failed"`` when an attempt just failed (before recovery).  Unknown
    facts are None.  ``confidence`` is the resolution's score 0..1.
    """

    flow: str
    index: int
    step_id: str
    title: str
    attempt: int
    phase: str
    change: str | None = None
    change_reasons: tuple[str, ...] = ()
    strategy: str = ""
    confidence: float | None = None
    abstained: bool = False
    verdict: str | None = None
    verdict_reason: str = ""
    irreversible: bool | None = None


@dataclass(frozen=True, slots=True)
class Hit:
    """A breakpoint that fires: ``kind`` is ``"step"`` or one of :data:`CONDITIONS`; ``reason`` one sentence."""

    kind: str
    reason: str


def evaluate(bps: Breakpoints, facts: BreakFacts, fired: Iterable[str] = ()) -> tuple[Hit, ...]:
    """The breakpoints that fire now, in :data:`CONDITIONS` order (step first).

    Each fires at most once per attempt of a step: ``fired`` holds the kinds
    that already fired on this attempt.  A step breakpoint fires only before
    the first attempt's ``observe`` (a retry is not a new step).
    """
    done = set(fired)
    c = bps.conditions
    f = facts
    where = f"step {f.index + 1} '{f.title}'"
    hits: list[Hit] = []
    if (f.phase == "observe" and f.attempt == 1 and "step" not in done and bps.on(f.flow, f.step_id)):
        hits.append(Hit("step", f"{where}, before it starts"))
    if c.changed and "changed" not in done and f.change == "changed":
        why = "; ".join(f.change_reasons[:2])
        hits.append(Hit("changed", f"the page before {where} changed against its baseline" + (f": {why}" if why else "")))
    if (c.low_confidence and "low_confidence" not in done and f.confidence is not None and not f.abstained
            and f.confidence < c.confidence_below):
        hits.append(Hit("low_confidence", f"{where}: {f.strategy or 'resolution'} confidence {f.confidence:.2f} "
                                          f"is below {c.confidence_below:.2f}"))
    if c.abstained and "abstained" not in done and f.abstained:
        hits.append(Hit("abstained", f"{where}: the locator abstained"))
    if c.verdict and "verdict" not in done and f.verdict is not None and f.verdict != "as_expected":
        label = f.verdict.replace("_", " ")
        hits.append(Hit("verdict", f"{where}: verdict {label}" + (f" ({f.verdict_reason})" if f.verdict_reason else "")))
    if c.irreversible and "irreversible" not in done and f.phase == "act" and f.irreversible:
        hits.append(Hit("irreversible", f"{where} is irreversible: paused before it acts"))
    return tuple(hits)


def facts_of(ctx: "StepContext", phase: str) -> BreakFacts:
    """The :class:`BreakFacts` of a step's context before ``phase`` (or ``"failed"``)."""
    run = ctx.run
    flow_step = run.flow.steps[ctx.index] if 0 <= ctx.index < len(run.flow.steps) else None
    step = ctx.decided or flow_step
    res, verdict = ctx.resolution, ctx.verdict
    return BreakFacts(
        flow=run.flow.name, index=ctx.index, step_id=flow_step.id if flow_step is not None else "",
        title=ctx.title, attempt=ctx.attempt, phase=phase,
        change=ctx.change.status if ctx.change is not None else None,
        change_reasons=tuple(ctx.change.reasons) if ctx.change is not None else (),
        strategy=res.strategy if res is not None else "", confidence=res.score if res is not None else None,
        abstained=bool(res is not None and res.abstained),
        verdict=verdict.kind if verdict is not None else None, verdict_reason=verdict.reason if verdict else "",
        irreversible=(not ctx.effective_reversible) if step is not None and ctx.step is not None else None)


def load_breakpoints(root: Path | str) -> Breakpoints:
    """The breakpoints kept in ``<root>/.steadyhand/studio.json``; none when the file or key is missing.

    Raises
    ------
    BreakpointsError
        The file is not JSON or the ``breakpoints`` value is malformed (message names file and field).
    """
    path = Path(root) / LOCAL_SETTINGS
    if not path.is_file():
        return Breakpoints()
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BreakpointsError(f"{path}: cannot read the studio settings: {exc}") from None
    if not isinstance(doc, dict) or "breakpoints" not in doc:
        return Breakpoints()
    return Breakpoints.from_json(doc["breakpoints"], where=f"{path}: breakpoints")


def save_breakpoints(root: Path | str, bps: Breakpoints) -> Path:
    """Write ``bps`` under the key ``breakpoints`` of ``<root>/.steadyhand/studio.json``, keeping other keys.

    Written to a temporary file then renamed (a crash never leaves half a file).  Returns the path.

    Raises
    ------
    BreakpointsError
        The existing file cannot be read as a JSON object (it is left as it is).
    """
    path = Path(root) / LOCAL_SETTINGS
    path.parent.mkdir(parents=True, exist_ok=True)
    doc: dict[str, Any] = {}
    if path.is_file():
        try:
            loaded = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:  # never overwrite what we cannot read
            raise BreakpointsError(f"{path}: cannot read the studio settings, not overwritten: {exc}") from None
        if not isinstance(loaded, dict):
            raise BreakpointsError(f"{path}: expected a JSON object, not overwritten")
        doc = loaded
    doc["breakpoints"] = bps.to_json()
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path
