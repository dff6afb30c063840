"""One stored step, everything the inspector shows of it, read from the project's store (no Qt).

:func:`load_step_records` reads a run once (``Store.run_detail``,
``Store.step_evidence``) and the step files the engine's
:class:`~core.engine.plugins.snapshot.StepSnapshotPlugin` wrote beside the
screenshots (``<media>/inspect/<run_id>/<index:04d>.json``), and returns one
:class:`StepRecordView` per executed step: its outcome, the screenshots
that were kept (absolute paths, None when the evidence level kept none),
the resolution of its last attempt (level, score, margin, reason, top
candidates), the verdict, the evidence (console, failed requests, time per
phase), the requests it sent, the target's box and the action point, and
the elements of the page before and after the action (with their
descriptors, for picking a new target).

Boxes and points are CSS px in the viewport of their observation; an image
is ``viewport x dpr`` device px, so a box maps onto it by ``dpr``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from core.domain import BBox, Candidate, ElementDescriptor, TextBox
from core.domain.evidence import StepEvidence
from core.engine.plugins.snapshot import SNAPSHOT_VERSION, snapshot_relpath
from core.store import RunDetail, Store
from core.store.records import EscalationRecord, ResolutionRecord, StepRecord, VerdictRecord

__all__ = ["StoredElement", "ObservationSnapshot", "StepRecordView", "load_step_records", "element_at",
           "STRATEGY_WORDS", "strategy_words", "UNFINISHED"]

#: The locator's levels in plain words (what the inspector says for a resolution's strategy).
STRATEGY_WORDS = {
    "exact": "found as recorded",
    "fuzzy_text": "healed: found by similar text",
    "semantic": "healed: found by meaning",
    "relative": "healed: found next to its recorded neighbour",
    "visual": "healed: found by its look",
    "pending_heal": "found by a heal waiting for review",
    "chosen": "chosen by a person",
    "picked": "picked by a person",
}


#: The status of a step the run has begun and not finished (paused at it): listed with its attempts so far.
UNFINISHED = "paused"


def strategy_words(strategy: str, abstained: bool = False) -> str:
    """A resolution's level in plain words ("" strategy: the step has no target)."""
    if abstained:
        return "not found: the locator would not guess"
    if not strategy:
        return "no target (this action needs none)"
    return STRATEGY_WORDS.get(strategy, strategy.replace("_", " "))


@dataclass(frozen=True)
class StoredElement:
    """One element of a stored observation: its ref in that observation, descriptor (box in CSS px) and state."""

    ref: str
    descriptor: ElementDescriptor
    enabled: bool = True
    visible: bool = True
    editable: bool = False
    covered: bool = False
    checked: bool | None = None

    @property
    def box(self) -> BBox | None:
        return self.descriptor.bbox

    def candidate(self) -> Candidate:
        """The element as the locator chain takes it (no value: the store keeps none)."""
        return Candidate(self.ref, self.descriptor, enabled=self.enabled, visible=self.visible,
                         editable=self.editable, checked=self.checked, covered=self.covered)

    def words(self) -> str:
        """``button 'Save'`` - its role (else tag) and label."""
        d = self.descriptor
        label = d.label_text or d.id or d.test_id
        return f"{d.role or d.tag or 'element'} \u2018{label[:60]}\u2019" if label else (d.role or d.tag or "element")


@dataclass(frozen=True)
class ObservationSnapshot:
    """The page before or after a step: url, viewport (CSS px), device pixel ratio and its elements."""

    url: str
    viewport: tuple[int, int]
    dpr: float
    elements: tuple[StoredElement, ...] = ()
    anchors: tuple[TextBox, ...] = ()

    def candidates(self) -> list[Candidate]:
        return [e.candidate() for e in self.elements]

    def element(self, ref: str) -> StoredElement | None:
        return next((e for e in self.elements if e.ref == ref), None)


@dataclass
class StepRecordView:
    """One executed step of a stored run, as the inspector shows it.

    ``before_png`` / ``after_png`` are absolute paths of the screenshots kept
    (None: not kept); ``target_box`` the box of the element acted on and
    ``point`` where a pointer action landed (CSS px; None without a target
    or for a non-pointer action); ``requests`` the requests the step sent
    (``{"method", "url", "type", "status", "t_ms"}``, ``t_ms`` from the
    step's start); ``snapshot`` False when the run has no step file (a run
    from before the inspector, or without a store folder).
    """

    flow: str
    run_id: str
    step: StepRecord
    before_png: Path | None = None
    after_png: Path | None = None
    before_rel: str | None = None
    after_rel: str | None = None
    resolutions: tuple[ResolutionRecord, ...] = ()
    verdicts: tuple[VerdictRecord, ...] = ()
    escalations: tuple[EscalationRecord, ...] = ()
    evidence: StepEvidence | None = None
    action: str = ""
    locator: str = ""
    target_ref: str | None = None
    target_box: BBox | None = None
    point: tuple[float, float] | None = None
    requests: tuple[Mapping[str, Any], ...] = ()
    before: ObservationSnapshot | None = None
    after: ObservationSnapshot | None = None
    snapshot: bool = False
    urls: dict[str, str] = field(default_factory=dict)

    @property
    def index(self) -> int:
        return self.step.index

    @property
    def resolution(self) -> ResolutionRecord | None:
        """The last attempt's resolution."""
        return self.resolutions[-1] if self.resolutions else None

    @property
    def verdict(self) -> VerdictRecord | None:
        return self.verdicts[-1] if self.verdicts else None

    def image(self, when: str) -> Path | None:
        return self.before_png if when == "before" else self.after_png

    def observation(self, when: str) -> ObservationSnapshot | None:
        return self.before if when == "before" else self.after


def _bbox(v: Any) -> BBox | None:
    return BBox(*(float(c) for c in v)) if isinstance(v, (list, tuple)) and len(v) == 4 else None


def _observation(data: Mapping[str, Any] | None) -> ObservationSnapshot | None:
    if not data:
        return None
    elements = []
    for e in data.get("elements") or ():
        try:
            elements.append(StoredElement(str(e["ref"]), ElementDescriptor.from_mapping(e.get("descriptor") or {}),
                                          bool(e.get("enabled", True)), bool(e.get("visible", True)),
                                          bool(e.get("editable", False)), bool(e.get("covered", False)),
                                          e.get("checked")))
        except (KeyError, TypeError, ValueError):
            continue  # one damaged element does not hide the others
    anchors = []
    for a in data.get("anchors") or ():
        box = _bbox(a.get("box"))
        if box is not None:
            anchors.append(TextBox(str(a.get("text", "")), str(a.get("role", "")), box, str(a.get("frame", ""))))
    vp = tuple(data.get("viewport") or (0, 0))
    return ObservationSnapshot(str(data.get("url", "")), (int(vp[0]), int(vp[1])) if len(vp) == 2 else (0, 0),
                               float(data.get("dpr") or 1.0), tuple(elements), tuple(anchors))


def _read_snapshot(media_root: Path, run_id: str, index: int) -> dict[str, Any] | None:
    try:
        path = Path(media_root, *snapshot_relpath(run_id, index).split("/"))
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or int(data.get("version", 0)) > SNAPSHOT_VERSION:
        return None
    return data


def load_step_records(store: Store, run_id: str) -> tuple[RunDetail, list[StepRecordView]] | None:
    """Every executed step of run ``run_id`` (in index order), None for a run the store does not know."""
    detail = store.run_detail(run_id)
    if detail is None:
        return None
    evidence = {e.index: e for e in store.step_evidence(run_id)}
    shots: dict[tuple[int, str], str] = {}
    urls: dict[tuple[int, str], str] = {}
    for o in detail.observations:
        if o.screenshot:
            shots[(o.index, o.when)] = o.screenshot  # the last of each step and moment (the last attempt's)
        urls[(o.index, o.when)] = o.url
    out = []
    steps = list(detail.steps)
    finished = {st.index for st in steps}
    # a step the run is paused at (an escalation, a breakpoint, a takeover) has no step row yet: its attempts so
    # far (resolutions, verdicts, escalations, screenshots) are stored, so it is listed with them (trial-57)
    begun = ({o.index for o in detail.observations if o.when == "before"} | {r.index for r in detail.resolutions}
             | {e.index for e in detail.escalations})
    for index in sorted(i for i in begun if i >= 0 and i not in finished):
        tries = max(sum(1 for r in detail.resolutions if r.index == index),
                    sum(1 for v in detail.verdicts if v.index == index), 1)
        esc = next((e for e in reversed(detail.escalations) if e.index == index), None)
        steps.append(StepRecord(index=index, step_id="", title=esc.step_title if esc else "", status=UNFINISHED,
                                attempts=tries, ms=0.0, error=(esc.plain or esc.reason) if esc else ""))
    steps.sort(key=lambda st: st.index)
    for st in steps:
        rec = evidence.get(st.index)
        before_rel = (rec.before_screenshot if rec else None) or shots.get((st.index, "before"))
        after_rel = (rec.after_screenshot if rec else None) or shots.get((st.index, "after"))

        def path(rel: str | None) -> Path | None:
            if not rel:
                return None
            p = store.media_path(rel)
            return p if p.is_file() else None

        view = StepRecordView(
            flow=detail.run.flow, run_id=run_id, step=st, before_png=path(before_rel), after_png=path(after_rel),
            before_rel=before_rel, after_rel=after_rel,
            resolutions=tuple(r for r in detail.resolutions if r.index == st.index),
            verdicts=tuple(v for v in detail.verdicts if v.index == st.index),
            escalations=tuple(e for e in detail.escalations if e.index == st.index),
            evidence=rec.evidence if rec else None,
            urls={w: u for (i, w), u in urls.items() if i == st.index})
        snap = _read_snapshot(store.media_root, run_id, st.index)
        if snap is not None:
            target = snap.get("target") or {}
            point = snap.get("point")
            view.snapshot = True
            view.action = str(snap.get("action", ""))
            view.locator = str(snap.get("locator", ""))
            view.target_ref = target.get("ref")
            view.target_box = _bbox(target.get("box"))
            view.point = (float(point[0]), float(point[1])) if isinstance(point, list) and len(point) == 2 else None
            view.requests = tuple(r for r in snap.get("requests") or () if isinstance(r, dict))
            view.before, view.after = _observation(snap.get("before")), _observation(snap.get("after"))
        elif view.evidence is not None:
            view.action = view.evidence.action
        out.append(view)
    return detail, out


def element_at(elements: tuple[StoredElement, ...] | list[StoredElement], x: float, y: float) -> StoredElement | None:
    """The visible element under CSS px point (``x``, ``y``): the smallest box holding it (the innermost)."""
    best: StoredElement | None = None
    best_area = float("inf")
    for e in elements:
        b = e.box
        if b is None or not e.visible or b.width <= 0 or b.height <= 0:
            continue
        if b.x <= x <= b.x + b.width and b.y <= y <= b.y + b.height:
            area = b.width * b.height
            if area < best_area:
                best, best_area = e, area
    return best
