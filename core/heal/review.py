"""Reviewing heal proposals: list, show (evidence and the diff it would make), accept, reject.

The API the CLI (``steadyhand heals ...``) uses today and the studio's heal
panel will use (no Qt here): :class:`HealReview` over a project folder and
its store.

* :meth:`HealReview.accept` writes the flow file - only the step's
  ``target`` changes (:func:`core.heal.flowfile.set_step_target`), and a
  ``selector`` the step had goes with it (it did not find the element, or
  the step would not have healed: kept, it would be tried first on every
  later run); the result must load as a flow - and returns the unified diff
  it applied.  A reviewer may accept an edited descriptor instead of the
  proposed one (``target=``).  It
  refuses (and writes nothing) when the flow file changed on disk since the
  proposal was last seen by a run (SHA-256 of the file), or when the step's
  target in the file is no longer the proposal's old descriptor.
* :meth:`HealReview.reject` remembers the rejection (with a reason): the same
  old -> new change is never proposed again, and no run reuses it.

Errors are :class:`HealReviewError` subclasses whose message says what to do.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Mapping

from core.domain import ElementDescriptor
from core.project.loader import load_flow, write_atomic
from core.state.crop import crop_png
from core.store import Store, store_path
from core.store.heals import HealConflictError, HealProposalRecord, HealTable

from .flowfile import FlowEditError, digest, set_step_target, unified_diff
from .identity import IDENTITY_FIELDS, change_label, old_key, same_identity

__all__ = [
    "HealReview", "HealEvidence", "HealReviewError", "UnknownHealError", "AlreadyReviewedError",
    "FlowChangedError", "format_list", "format_show",
]


class HealReviewError(RuntimeError):
    """A review could not be done; the message says why and what to do."""


class UnknownHealError(HealReviewError):
    """No proposal with that id."""


class AlreadyReviewedError(HealReviewError):
    """The proposal was already accepted, rejected or applied."""


class FlowChangedError(HealReviewError):
    """The flow file is not the one the proposal was made on; nothing was written."""


@dataclass(frozen=True)
class HealEvidence:
    """What a proposal rests on.

    Attributes
    ----------
    before_screenshot, after_screenshot : Path | None
        Absolute paths of the PNGs of the page before and after the healed
        step's action (None when the run took no screenshot).
    strategy : str
        The level that won (``"fuzzy_text"``, ``"semantic"``...).
    score, margin : float
        Its score and lead over the runner-up, 0..1.
    top : tuple[Mapping[str, Any], ...]
        The level's best candidates, ``{"ref", "score", "label"}``, best first.
    reason : str
        The locator's explanation.
    run_id : str
        The run that first saw the heal; ``seen`` / ``reused`` count later sightings and reuses.
    """

    before_screenshot: Path | None
    after_screenshot: Path | None
    strategy: str
    score: float
    margin: float
    top: tuple[Mapping[str, Any], ...]
    reason: str
    run_id: str
    seen: int
    reused: int
    reuse_failed: int


class HealReview:
    """Heal proposals of one project.

    Parameters
    ----------
    project_root : Path
        The project folder (flow file paths in proposals are relative to it).
    store : core.store.Store | None
        An open writable store; None opens ``<project>/.steadyhand/store.sqlite``
        (closed by :meth:`close`).
    """

    def __init__(self, project_root: Path | str, store: Store | None = None) -> None:
        self.root = Path(project_root).expanduser().resolve()
        self._own = store is None
        self.store = store if store is not None else Store.open(store_path(self.root))
        self.table = HealTable(self.store)

    def close(self) -> None:
        """Close the store when this object opened it."""
        if self._own:
            self.store.close()

    def __enter__(self) -> "HealReview":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- reading --------------------------------------------------------------------------------

    def list(self, status: str | None = None) -> list[HealProposalRecord]:
        """Proposals, newest first (``status``: ``pending``, ``accepted``, ``rejected``, ``applied``, None = all)."""
        return self.table.list(status=status)

    def list_pending(self) -> list[HealProposalRecord]:
        """Proposals waiting for review, newest first."""
        return self.table.list(status="pending")

    def get(self, proposal_id: int) -> HealProposalRecord:
        """One proposal.  Raises :class:`UnknownHealError`."""
        rec = self.table.get(int(proposal_id))
        if rec is None:
            known = ", ".join(f"#{r.id}" for r in self.table.list()[:10]) or "none"
            raise UnknownHealError(f"no heal proposal #{proposal_id} in {self.root} (known: {known}; "
                                   f"see `steadyhand heals list {self.root}`)")
        return rec

    def evidence(self, proposal_id: int) -> HealEvidence:
        """Screenshots (absolute paths) and scores of a proposal.  Raises :class:`UnknownHealError`."""
        rec = self.get(proposal_id)

        def shot(rel: str | None) -> Path | None:
            return self.store.media_path(rel) if rel else None

        return HealEvidence(shot(rec.before_screenshot), shot(rec.after_screenshot), rec.strategy, rec.score,
                            rec.margin, rec.top, rec.resolution_reason, rec.run_id, rec.seen, rec.reused,
                            rec.reuse_failed)

    def flow_path(self, rec: HealProposalRecord) -> Path:
        """The proposal's flow file, absolute."""
        p = Path(rec.flow_file)
        return p if p.is_absolute() else self.root / p

    def preview(self, proposal_id: int, target: Mapping[str, Any] | None = None) -> tuple[str, str]:
        """``(current text, text after accepting)`` of the flow file; nothing is written.

        ``target`` (a descriptor mapping as the flow file holds it) replaces
        the proposed new descriptor (a reviewer's edit); None = as proposed.

        Raises
        ------
        UnknownHealError, AlreadyReviewedError, FlowChangedError
        """
        rec = self.get(proposal_id)
        if rec.status != "pending":
            when = f" at {rec.reviewed_at:%Y-%m-%d %H:%M} UTC" if rec.reviewed_at else ""
            why = f" ({rec.reason})" if rec.reason else ""
            raise AlreadyReviewedError(f"heal #{rec.id} was already {rec.status}{when}{why}: nothing to do")
        path = self.flow_path(rec)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise FlowChangedError(f"{rec.flow_file}: cannot read the flow file ({exc.strerror or exc}); "
                                   f"nothing written") from None
        if rec.flow_digest and digest(data) != rec.flow_digest:
            raise FlowChangedError(f"{rec.flow_file} changed on disk since heal #{rec.id} was proposed; nothing "
                                   f"written - run the flow again to renew the proposal, or edit the file by hand")
        text = data.decode("utf-8")
        try:
            step = next((s for s in load_flow(path).steps if s.id == rec.step_id), None)
        except Exception as exc:  # noqa: BLE001 - a broken file is reported, never written
            raise FlowChangedError(f"{rec.flow_file} does not load ({exc}); nothing written") from None
        if step is None or old_key(rec.flow, step.id, step.target) != rec.old_key:
            raise FlowChangedError(f"{rec.flow_file}: step {rec.step_id!r} no longer has the descriptor heal "
                                   f"#{rec.id} would replace; nothing written")
        try:
            new = rec.new_target if target is None else _checked_target(target, rec.flow_file)
            return text, set_step_target(text, rec.step_id, new, path=path, drop_selector=bool(step.selector))
        except FlowEditError as exc:
            raise FlowChangedError(f"{rec.flow_file}: {exc}; nothing written") from None

    def diff(self, proposal_id: int, target: Mapping[str, Any] | None = None) -> str:
        """The unified diff of the flow file accepting (``target``: edited) would make.  Raises like :meth:`preview`."""
        rec = self.get(proposal_id)
        old, new = self.preview(proposal_id, target)
        return unified_diff(old, new, rec.flow_file)

    # --- reviewing ------------------------------------------------------------------------------

    def accept(self, proposal_id: int, target: Mapping[str, Any] | None = None) -> str:
        """Write the new descriptor (or ``target``, a reviewer's edit of it) into the flow file; returns the diff.

        The step's crop file (when it has one) is cut anew from the heal's
        before screenshot: the element as the release shows it.

        Other pending proposals of the same flow file whose step still has
        their old descriptor get the new file's digest (this change was
        reviewed; it does not make them stale).

        Raises
        ------
        UnknownHealError, AlreadyReviewedError, FlowChangedError
            Nothing is written.
        """
        rec = self.get(proposal_id)
        old, new = self.preview(proposal_id, target)
        diff = unified_diff(old, new, rec.flow_file)
        path = self.flow_path(rec)
        try:
            self.table.review(rec.id, "accepted", diff=diff)
        except HealConflictError as exc:
            raise AlreadyReviewedError(str(exc)) from None
        write_atomic(path, new.encode("utf-8"))
        steps = {s.id: s for s in load_flow(path).steps}
        self._renew_crop(rec, path, steps.get(rec.step_id))
        still = [p.id for p in self.table.list(status="pending", flow=rec.flow)
                 if p.flow_file == rec.flow_file and p.step_id in steps
                 and old_key(p.flow, p.step_id, steps[p.step_id].target) == p.old_key]
        self.table.refresh_digest(still, digest(new))
        return diff

    def _renew_crop(self, rec: HealProposalRecord, path: Path, step: Any) -> None:
        """Cut the accepted element out of the heal's before screenshot into the step's crop file.

        The crop is the visual level's only picture of the element: kept as recorded, it would show the
        look the release changed.  Left as it was when the proposal has no before screenshot, the target
        no box or no crop file inside the flow's folder, or the screenshot cannot be read.
        """
        target = getattr(step, "target", None)
        if target is None or not target.crop or target.bbox is None or not rec.before_screenshot:
            return
        base = path.resolve().parent
        dest = (base / target.crop).resolve()
        try:
            dest.relative_to(base)
            png = self.store.media_path(rec.before_screenshot).read_bytes()
        except (ValueError, OSError):
            return
        crop = crop_png(png, target.bbox, target.device_pixel_ratio or 1.0)
        if crop:
            dest.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(dest, crop)

    def reject(self, proposal_id: int, reason: str = "") -> HealProposalRecord:
        """Remember that this change is wrong: never proposed again, never reused.

        Raises
        ------
        UnknownHealError, AlreadyReviewedError
        """
        rec = self.get(proposal_id)
        if rec.status != "pending":
            raise AlreadyReviewedError(f"heal #{rec.id} was already {rec.status}: nothing to do")
        try:
            return self.table.review(rec.id, "rejected", reason=reason or "rejected by the reviewer")
        except HealConflictError as exc:
            raise AlreadyReviewedError(str(exc)) from None


def _checked_target(target: Mapping[str, Any], flow_file: str) -> dict[str, Any]:
    """A reviewer's descriptor mapping, validated as a flow file's ``target`` (ElementDescriptor fields)."""
    if not isinstance(target, Mapping) or not target:
        raise FlowEditError("the edited descriptor must be a non-empty mapping of descriptor fields")
    known = {f.name for f in fields(ElementDescriptor)}
    unknown = sorted(str(k) for k in target if k not in known)
    if unknown:
        raise FlowEditError(f"the edited descriptor has unknown {'field' if len(unknown) == 1 else 'fields'} {', '.join(unknown)} "
                            f"(known: {', '.join(sorted(known))})")
    return dict(target)


# --- text for the command line ------------------------------------------------------------------


def _short(d: Mapping[str, Any]) -> str:
    name = d.get("name") or d.get("label") or d.get("text") or d.get("placeholder") or d.get("id") or ""
    return f"{d.get('role') or d.get('tag') or '-'} {str(name)[:32]!r}" if d else "(none)"


def format_list(records: list[HealProposalRecord]) -> str:
    """One line per proposal: id, status, kind, flow and step, old -> new, level and score, counts."""
    if not records:
        return "no heal proposals"
    rows = [("id", "status", "kind", "flow / step", "old -> new", "level", "seen", "reused")]
    for r in records:
        kind = "filled in" if r.kind == "filled_in" else "heal"
        rows.append((f"#{r.id}", r.status, kind, f"{r.flow} / {r.step_id}",
                     change_label(r.old_target, r.new_target, width=32, shown=2) if r.old_target
                     else f"(none) -> {_short(r.new_target)}", f"{r.strategy} {r.score:.2f}",
                     str(r.seen), str(r.reused)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows)


def _value(v: Any) -> str:
    if v in (None, "", [], {}):
        return ""
    if isinstance(v, list):
        return "[" + ", ".join(str(x) for x in v) + "]"
    if isinstance(v, dict):
        return ", ".join(f"{k}={x}" for k, x in v.items())
    return str(v)


def format_show(rec: HealProposalRecord, evidence: HealEvidence, diff: str) -> str:
    """The proposal in full: old and new side by side (``*`` marks a changed field), evidence and diff."""
    kind = "FILLED IN (not a heal)" if rec.kind == "filled_in" else "heal"
    out = [f"heal #{rec.id} [{rec.status}] {kind}: flow {rec.flow} ({rec.flow_file}), step {rec.step_id} "
           f"{rec.step_title!r}",
           f"  created {rec.created_at:%Y-%m-%d %H:%M:%S} UTC by run {rec.run_id}; seen {rec.seen}, reused "
           f"{rec.reused}, reuse failed {rec.reuse_failed}" if rec.created_at else ""]
    if rec.reason:
        out.append(f"  reason: {rec.reason}")
    names = [f.name for f in fields(ElementDescriptor) if f.name in rec.old_target or f.name in rec.new_target]
    rows = [("", "field", "old (flow file)", "new (acted on)")]
    for f in names:
        a, b = _value(rec.old_target.get(f)), _value(rec.new_target.get(f))
        mark = "*" if a != b else " "
        rows.append((mark, f + (" (id)" if f in IDENTITY_FIELDS else ""), a[:48], b[:48]))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    out.append("")
    out += ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    same = same_identity(rec.old_target, rec.new_target)
    out += ["", f"  identity {'unchanged (position/context only)' if same else 'changed'}; (id) marks identity fields",
            f"  evidence: level {evidence.strategy}, score {evidence.score:.2f}, margin {evidence.margin:.2f}",
            f"  locator: {evidence.reason}" if evidence.reason else ""]
    for i, c in enumerate(evidence.top):
        out.append(f"    {i + 1}. {float(c.get('score', 0.0)):.2f}  {c.get('label', '')!s}  ({c.get('ref', '')})")
    out.append(f"  screenshot before: {evidence.before_screenshot or '(none)'}")
    out.append(f"  screenshot after:  {evidence.after_screenshot or '(none)'}")
    out += ["", diff.rstrip() if diff else "  (no diff)"]
    return "\n".join(line for line in out if line is not None)
