"""A heal proposed by a person: an escalation's candidate chosen as the step's new target.

Same proposal as a run's own heals (:meth:`core.heal.HealBook.after_run`: the
flow file's descriptor -> the chosen element's, with the step's before
screenshot and the locator's top candidates as evidence), strategy
``chosen``, score 1.0 (a person's choice) and the locator's margin; it waits
in the review queue (``steadyhand heals``) like any other and changes no flow
file until accepted.
"""
from __future__ import annotations

from typing import Any

from core.domain import Candidate, Flow, Resolution, Step

from .book import CHOSEN_STRATEGY, HealBook, _parametrised, flow_file_name, new_descriptor
from .identity import change_label, old_key, proposal_key

__all__ = ["propose_chosen", "CHOSEN_STRATEGY"]


def propose_chosen(book: HealBook, flow: Flow, run_id: str, index: int, step: Step, cand: Candidate,
                   resolution: Resolution | None) -> tuple[int, str]:
    """Record the proposal; returns ``(proposal id, one line saying what was done)``; id 0 when none was made.

    ``step`` is the step as the flow file has it (placeholders unbound); a parametrised target is
    never proposed (each run names another element).  Store errors propagate.
    """
    if _parametrised(step.target):
        return 0, f"not proposed: the target of step {step.id} has parameters"
    if not flow.source:
        return 0, "not proposed: the flow has no file"
    new = new_descriptor(step.target, cand.descriptor)
    before, after = book._screenshots(run_id, index)
    top: list[dict[str, Any]] = [{"ref": c.ref, "score": float(c.score), "label": c.label}
                                 for c in (resolution.top if resolution else ())]
    name = flow_file_name(flow.source, book.root)
    rec, created = book.table.propose(dict(
        key=proposal_key(flow.name, step.id, step.target, new), old_key=old_key(flow.name, step.id, step.target),
        project=book.project_name, flow=flow.name, flow_file=name, step_id=step.id, step_index=index,
        step_title=step.title, kind="heal", status="pending", old_target=step.target.to_mapping(),
        new_target=new.to_mapping(), strategy=CHOSEN_STRATEGY, score=1.0,
        margin=float(resolution.margin) if resolution else 0.0, top=top,
        resolution_reason=f"chosen by a person from an escalation; the locator said: "
                          f"{resolution.reason if resolution else 'nothing'}",
        before_screenshot=before, after_screenshot=after, run_id=run_id, last_run_id=run_id,
        flow_digest=book._digest(flow)))
    what = change_label(step.target, new)
    if created:
        return rec.id, f"proposed as heal #{rec.id}: {name} step {step.id} ({what}) - {book._review_hint(rec.id)}"
    if rec.status == "pending":
        return rec.id, f"already proposed as heal #{rec.id} (seen {rec.seen}) - {book._review_hint(rec.id)}"
    return rec.id, f"matches {rec.status} heal #{rec.id}: not proposed again"
