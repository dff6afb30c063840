"""The engine's side of heals: reuse pending heals, turn a run's heals into proposals, fill in descriptors.

Heals are proposals, not silent rewrites (issue 9 part 4, failure kind 9):

* a step that passed with a target resolved by any level but exact (a heal:
  fuzzy text, semantic, relative, visual...) becomes a **proposal**: flow,
  step, the descriptor the flow file holds -> the descriptor of the element
  acted on, with its evidence (before/after screenshots, the level that won,
  score, margin, top candidates, run id).  One proposal per (flow, step, old,
  new) (:func:`core.heal.identity.proposal_key`); seen again, it is counted.
  Only runs that passed (and, for an episode, earned a positive reward) make
  proposals: a heal in a run that went wrong later is no evidence to keep.
* until reviewed, a pending heal is **reused**: the step's target is first
  tried as the proposal's new descriptor, exact level only
  (:meth:`HealBook.reuse`); a match resolves with strategy
  :data:`PENDING_HEAL` (still a heal in the run's counts), its reason says
  "pending heal #N reused", and the proposal counts the reuse.  When the
  original descriptor matches exactly again, or no pending heal matches, the
  normal chain runs on the original descriptor.  A heal seen again that was
  rejected is never proposed again; the step re-heals or escalates normally.
* a **selector-only step** (written or imported with only a selector) whose
  run passed gets its descriptor **filled in** at once and the fill is
  **reported**, not proposed: the author's selector matched exactly one
  element (more or none abstains) and the step's effect was verified, so
  the descriptor adds what the file did not say about the same element
  rather than replacing a choice the author made; the selector stays the
  exact level.  Waiting for a review would leave the step with no fallback
  at all in the meantime.  Each fill is a store row of kind ``filled_in``,
  status ``applied``, with the diff written, and a line of the run's output
  ("filled in #N: ..."): nothing rewrites a flow file silently.

Nothing is proposed, reused or written without the store (``--no-store``).
Steps whose target holds ``{param}`` placeholders are never proposed (each
run names another element).
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Sequence

from core.domain import (
    Anchor, Candidate, ElementDescriptor, Flow, LocatorConfig, Resolution, RunResult, Step, TextBox,
)
from core.locate import resolve
from core.project.loader import load_flow, write_atomic
from core.project.params import TARGET_FIELDS, escape_target, placeholders
from core.store.heals import HealTable

from .flowfile import digest, set_step_target, unified_diff
from .identity import change_label, element_label, old_key, proposal_key

__all__ = ["HealBook", "PENDING_HEAL", "new_descriptor", "flow_file_name", "fresh_anchor", "with_fresh_anchor"]

#: Strategy of a step resolved by reusing a pending heal (a heal in the run's counts: not ``"exact"``).
PENDING_HEAL = "pending_heal"
#: Strategy of a heal a person proposed during an escalation (:mod:`core.heal.chosen`): never reused unreviewed.
CHOSEN_STRATEGY = "chosen"


#: Farthest an anchor taken in place of a recorded one that left the page may sit from the target, CSS px
#: (centre to centre): about a form row or a table column's width; farther, the anchor says nothing.
ANCHOR_REACH_PX = 400.0


def fresh_anchor(old: Anchor | None, acted: ElementDescriptor, anchors: Sequence[TextBox]) -> Anchor | None:
    """The anchor a healed target has on the page it was acted on, or None when none can be told.

    ``old`` is the recorded anchor; ``acted`` the element acted on (its ``bbox``, CSS px); ``anchors`` the
    page's labels, legends, headings and column headers (:attr:`core.domain.Observation.anchors`).  The
    recorded anchor's text on the page (the nearest occurrence) keeps its text and role with the offset
    measured now; else the nearest anchor of the recorded role within :data:`ANCHOR_REACH_PX`.  None when
    there is no recorded anchor, no box, or nothing fits (the caller keeps what it had).
    """
    if old is None or acted.bbox is None or not anchors:
        return None
    cx, cy = acted.bbox.x + acted.bbox.width / 2, acted.bbox.y + acted.bbox.height / 2

    def dist(a: TextBox) -> float:
        ax, ay = a.bbox.x + a.bbox.width / 2, a.bbox.y + a.bbox.height / 2
        return ((cx - ax) ** 2 + (cy - ay) ** 2) ** 0.5

    same_frame = [a for a in anchors if a.frame == acted.frame]
    want = " ".join(old.text.split()).casefold()
    named = [a for a in same_frame if " ".join(a.text.split()).casefold() == want]
    pick = min(named, key=dist) if named else None
    if pick is None:
        near = [a for a in same_frame if a.role == old.role and dist(a) <= ANCHOR_REACH_PX]
        pick = min(near, key=dist) if near else None
    if pick is None:
        return None
    ax, ay = pick.bbox.x + pick.bbox.width / 2, pick.bbox.y + pick.bbox.height / 2
    return Anchor(pick.text if not named else old.text, pick.role or old.role, cx - ax, cy - ay)


def with_fresh_anchor(cand: Candidate, old: ElementDescriptor, anchors: Sequence[TextBox]) -> Candidate:
    """``cand`` whose descriptor carries :func:`fresh_anchor` (unchanged when there is none to tell)."""
    anchor = fresh_anchor(old.anchor, cand.descriptor, anchors)
    return cand if anchor is None else replace(cand, descriptor=cand.descriptor.with_(anchor=anchor))


#: Roles and tags of controls that hold a value: the text such a control shows is its current value or a
#: placeholder ("Select a type…" in a custom combobox before a choice), which the step itself changes - not text
#: that names the element.
VALUE_ROLES = frozenset({"combobox", "textbox", "searchbox", "spinbutton", "listbox"})
VALUE_TAGS = frozenset({"input", "textarea", "select"})


def _shown_value(old: ElementDescriptor, acted: ElementDescriptor) -> bool:
    """True when ``acted.text`` is what a control shows as its value or placeholder, not the element's text."""
    if not acted.text or acted.text == old.text:
        return False
    if acted.placeholder and " ".join(acted.text.split()) == " ".join(acted.placeholder.split()):
        return True
    return acted.role in VALUE_ROLES or acted.tag in VALUE_TAGS


def new_descriptor(old: ElementDescriptor, acted: ElementDescriptor) -> ElementDescriptor:
    """The descriptor a heal proposes: the element acted on, as the page showed it (braces escaped).

    The recorded ``anchor`` is kept when the acted element carries none: the
    engine gives it the anchor measured on the page it was acted on
    (:func:`with_fresh_anchor`) when it can tell one.  The ``crop`` path is
    kept; accepting the heal cuts the new picture into that file
    (:meth:`core.heal.review.HealReview.accept`).  ``exact`` (whether the
    name must match whole) is kept when the page did not say it again.  A
    value-holding control's shown text (its value or placeholder,
    :data:`VALUE_ROLES`) is not stored as its ``text``: it changes as the
    flow fills the control in, and a placeholder is not the element's text.
    """
    new = escape_target(acted)
    return new.with_(anchor=new.anchor or old.anchor, crop=new.crop or old.crop,
                     exact=new.exact if new.exact is not None else old.exact,
                     text=old.text if _shown_value(old, acted) else new.text)


def flow_file_name(source: str | Path, root: Path | None) -> str:
    """The flow file as rows and messages name it: relative to the project folder when inside it."""
    path = Path(source)
    if root is not None:
        try:
            return path.resolve().relative_to(Path(root).resolve()).as_posix()
        except ValueError:
            pass
    return str(path)


def _parametrised(target: ElementDescriptor) -> bool:
    return any(placeholders(getattr(target, f)) for f in TARGET_FIELDS)


def _label(target: ElementDescriptor | dict[str, Any]) -> str:
    return element_label(target)


class HealBook:
    """Pending heals for the engine, and the proposals and fills a run leaves behind.

    Parameters
    ----------
    store : core.store.Store
        The project's open, writable store.
    project_root : Path | None
        The project folder (flow files are named relative to it; messages
        name it in the review commands).
    project_name : str
        Stored with each proposal.

    Used on one thread (the session's).  Store errors propagate to the
    caller (the session keeps the run going and reports them).
    """

    def __init__(self, store: Any, *, project_root: Path | None = None, project_name: str = "") -> None:
        self.store = store
        self.table = HealTable(store)
        self.root = Path(project_root) if project_root is not None else None
        self.project_name = project_name
        self._reused: dict[tuple[str, int], int] = {}
        self.errors: list[str] = []
        self._cache: tuple[tuple[str, str], dict[str, list[Any]]] = (("", ""), {})
        self._rejected_cache: tuple[tuple[str, str], dict[str, Any]] = (("", ""), {})

    def _review_hint(self, pid: int) -> str:
        return f"steadyhand heals show {self.root or 'PROJECT'} {pid}"

    # --- during a run ------------------------------------------------------------------------

    def reuse(self, run_id: str, flow: Flow, index: int, step: Step, candidates: Sequence[Candidate],
              config: LocatorConfig) -> tuple[Resolution | None, Candidate | None]:
        """The step's target through a pending heal, or ``(None, None)`` to run the normal chain.

        ``step`` is the step as the flow file has it (placeholders unbound).
        Each pending heal of (flow, step, this target), most recently seen
        first, is tried by the exact level alone on its new descriptor; the
        first unique exact match wins with strategy :data:`PENDING_HEAL`,
        the score and margin of that exact match, and the reason "pending
        heal #N reused".  Skipped: steps without a target or with a
        parametrised one, and any step whose recorded target matches exactly
        on this page (then no heal is needed).  The flow's pending heals are
        read once per run: a review made during a run applies from the next.
        """
        target = step.target
        if target.is_empty or _parametrised(target) or not flow.name:
            return None, None
        try:
            pending = self._pending(run_id, flow.name).get(old_key(flow.name, step.id, target), [])
        except Exception as exc:  # noqa: BLE001 - a store failure never breaks a run: the chain runs as usual
            self.errors.append(f"pending heals not read: {type(exc).__name__}: {exc}")
            return None, None
        if not pending:
            return None, None
        exact = replace(config, strategies=("exact",))
        if resolve(target, candidates, config=exact).strategy == "exact":
            return None, None
        by_ref = {c.ref: c for c in candidates}
        for p in pending:
            new = ElementDescriptor.from_mapping(p.new_target)
            r = resolve(new, candidates, config=exact)
            if r.abstained or r.strategy != "exact" or r.ref not in by_ref:
                continue
            self._reused[(run_id, index)] = p.id
            reason = (f"pending heal #{p.id} reused: exact on its new descriptor ({_label(p.new_target)}; first "
                      f"healed by {p.strategy} {p.score:.2f}); not yet reviewed - {self._review_hint(p.id)}")
            return Resolution(strategy=PENDING_HEAL, ref=r.ref, score=r.score, margin=r.margin, ms=0.0,
                              reason=reason, top=r.top), by_ref[r.ref]
        return None, None

    def rejected(self, run_id: str, flow: Flow, step: Step, cand: Candidate) -> str:
        """Why acting on ``cand`` for ``step`` was refused by a person, or ``""``.

        A heal a person rejected (``heals reject``) names the element the
        step must not go to: when the chain heals to the same element again
        (same old -> new identity), the engine does not act on it - the
        step escalates with the rejection's id and reason instead of
        pressing what a person called the wrong control.  Read once per run.
        """
        target = step.target
        if target.is_empty or _parametrised(target) or not flow.name:
            return ""
        try:
            rejected = self._rejected(run_id, flow.name)
        except Exception as exc:  # noqa: BLE001 - a store failure: nothing known to refuse
            self.errors.append(f"rejected heals not read: {type(exc).__name__}: {exc}")
            return ""
        rec = rejected.get(proposal_key(flow.name, step.id, target, new_descriptor(target, cand.descriptor)))
        if rec is None:
            return ""
        why = f": {rec.reason}" if getattr(rec, "reason", "") else ""
        return f"the element found is the one of rejected heal #{rec.id}{why} - not acted on"

    def _rejected(self, run_id: str, flow: str) -> dict[str, Any]:
        if self._rejected_cache[0] != (run_id, flow):
            self._rejected_cache = ((run_id, flow), {p.key: p for p in self.table.list(status="rejected", flow=flow)
                                                     if p.kind == "heal"})
        return self._rejected_cache[1]

    def _pending(self, run_id: str, flow: str) -> dict[str, list[Any]]:
        """The flow's pending heals by old key, read once per run (one query per run, not per step)."""
        if self._cache[0] != (run_id, flow):
            by_key: dict[str, list[Any]] = {}
            for p in self.table.list(status="pending", flow=flow):
                # a heal a person proposed during an escalation was never acted on nor verified by a run:
                # it waits for review and is never reused before it is accepted (a wrong click otherwise)
                if p.kind == "heal" and p.strategy != CHOSEN_STRATEGY:
                    by_key.setdefault(p.old_key, []).append(p)
            for group in by_key.values():
                group.sort(key=lambda p: (p.updated_at is not None, p.updated_at, p.id), reverse=True)
            self._cache = ((run_id, flow), by_key)
        return self._cache[1]

    # --- after a run ---------------------------------------------------------------------------

    def after_run(self, flow: Flow, result: RunResult, *, passed: bool,
                  healed: Sequence[tuple[int, Step, Candidate, Resolution]] = (),
                  captured: Sequence[tuple[Step, Candidate]] = ()) -> list[str]:
        """Count reuses, fill in selector-only steps and record proposals; returns one line per thing done.

        Parameters
        ----------
        flow : Flow
            The flow as the run read it (``flow.source`` is its file).
        result : RunResult
            The run's result (reuses are counted as passed or failed by its step outcomes).
        passed : bool
            The run passed (and earned a positive reward): only then are
            descriptors filled in and heals proposed.
        healed : Sequence[tuple[int, Step, Candidate, Resolution]]
            Steps that passed with a heal: index, step (unbound), element acted on, resolution.
        captured : Sequence[tuple[Step, Candidate]]
            Selector-only steps that passed, with the element acted on.
        """
        notes: list[str] = []
        self._cache = (("", ""), {})
        statuses = {o.index: o.status for o in result.steps}
        for (run_id, index), pid in sorted(self._reused.items()):
            if run_id != result.run_id:
                continue
            del self._reused[(run_id, index)]
            ok = statuses.get(index) == "passed"
            self.table.count_reuse(pid, run_id, passed=ok, flow_digest=self._digest(flow))
            rec = self.table.get(pid)
            counts = f"seen {rec.seen}, reused {rec.reused}" if rec else ""
            notes.append(f"pending heal #{pid} reused at step {rec.step_id if rec else index + 1!s} "
                         f"({'passed' if ok else 'the step did not pass'}; {counts}) - {self._review_hint(pid)}")
        if not passed or not flow.source:
            return notes
        notes += self._fill_in(flow, result.run_id, captured)
        file_digest = self._digest(flow)
        name = flow_file_name(flow.source, self.root)
        for index, step, cand, res in healed:
            if res.strategy == PENDING_HEAL:
                continue
            if _parametrised(step.target):
                notes.append(f"heal at step {step.id} not proposed: its target has parameters")
                continue
            new = new_descriptor(step.target, cand.descriptor)
            before, after = self._screenshots(result.run_id, index)
            rec, created = self.table.propose(dict(
                key=proposal_key(flow.name, step.id, step.target, new), old_key=old_key(flow.name, step.id, step.target),
                project=self.project_name, flow=flow.name, flow_file=name, step_id=step.id, step_index=index,
                step_title=step.title, kind="heal", status="pending", old_target=step.target.to_mapping(),
                new_target=new.to_mapping(), strategy=res.strategy, score=float(res.score), margin=float(res.margin),
                top=[{"ref": c.ref, "score": float(c.score), "label": c.label} for c in res.top],
                resolution_reason=res.reason, before_screenshot=before, after_screenshot=after,
                run_id=result.run_id, last_run_id=result.run_id, flow_digest=file_digest))
            what = f"{change_label(step.target, new)}, {res.strategy} {res.score:.2f}"
            if created:
                notes.append(f"heal proposed #{rec.id}: {name} step {step.id} ({what}) - {self._review_hint(rec.id)}")
            elif rec.status == "pending":
                notes.append(f"heal #{rec.id} seen again at step {step.id} (seen {rec.seen}) - "
                             f"{self._review_hint(rec.id)}")
            else:
                notes.append(f"heal at step {step.id} ({what}) matches {rec.status} heal #{rec.id}: "
                             f"not proposed again")
        return notes

    def _digest(self, flow: Flow) -> str:
        try:
            return digest(Path(flow.source).read_bytes()) if flow.source else ""
        except OSError:
            return ""

    def _screenshots(self, run_id: str, index: int) -> tuple[str | None, str | None]:
        """Relative paths of the step's last before and after screenshots in the store (None when none)."""
        detail = self.store.run_detail(run_id)
        shots: dict[str, str | None] = {"before": None, "after": None}
        for o in detail.observations if detail else ():
            if o.index == index and o.screenshot:
                shots[o.when] = o.screenshot
        return shots["before"], shots["after"]

    def _fill_in(self, flow: Flow, run_id: str, captured: Sequence[tuple[Step, Candidate]]) -> list[str]:
        """Write the descriptors of selector-only steps into the flow file (one write) and report each."""
        if not captured:
            return []
        path = Path(flow.source)
        try:
            text = path.read_text(encoding="utf-8")
            current = {s.id: s for s in load_flow(path).steps}
        except Exception:  # noqa: BLE001 - the flow file is the user's; never fail a run over it
            return [f"descriptors not filled in: {flow_file_name(path, self.root)} cannot be read as a flow"]
        name = flow_file_name(path, self.root)
        rows: list[dict[str, Any]] = []
        notes: list[str] = []
        new_text = text
        for step, cand in captured:
            now = current.get(step.id)
            if now is None or not (now.target.is_empty or now.target.imported):
                continue  # edited since the run read it: the file wins
            target = escape_target(cand.descriptor)
            try:
                edited = set_step_target(new_text, step.id, target.to_mapping(), path=path)
            except Exception as exc:  # noqa: BLE001 - FlowEditError, ProjectError: the file stays as it is
                notes.append(f"descriptor of step {step.id} not filled in: {exc}")
                continue
            rows.append(dict(
                key=proposal_key(flow.name, step.id, {}, target, kind=f"filled_in:{run_id}"),
                old_key=old_key(flow.name, step.id, {}), project=self.project_name, flow=flow.name, flow_file=name,
                step_id=step.id, step_index=next((i for i, s in enumerate(flow.steps) if s.id == step.id), 0),
                step_title=step.title, kind="filled_in", status="applied",
                old_target={}, new_target=target.to_mapping(), strategy="exact", score=1.0, margin=1.0,
                resolution_reason=(f"imported hints confirmed by an exact match (selector {step.selector!r})"
                                   if now.target.imported else f"selector {step.selector!r} matched one element"),
                run_id=run_id,
                last_run_id=run_id, flow_digest=digest(edited), diff=unified_diff(new_text, edited, name)))
            new_text = edited
        if new_text == text:
            return notes
        write_atomic(path, new_text.encode("utf-8"))
        for row in rows:
            rec, _ = self.table.propose(row)
            if row["resolution_reason"].startswith("imported hints"):
                notes.append(f"filled in #{rec.id}: {name} step {row['step_id']} - descriptor captured for the "
                             f"imported hints from the element they matched exactly ({_label(row['new_target'])}); "
                             f"not a heal")
                continue
            notes.append(f"filled in #{rec.id}: {name} step {row['step_id']} - descriptor captured from the one "
                         f"element its selector matched ({_label(row['new_target'])}); not a heal, the selector "
                         f"stays the exact level")
        return notes
