"""Failure records and corrections for the pure-logic tests of learning (the shapes capture writes)."""
from __future__ import annotations

from typing import Any

from core.store.skills import FailureRecord

NAME = {"tag": "input", "role": "textbox", "name": "Full name", "label": "Full name"}
EMAIL = {"tag": "input", "role": "textbox", "name": "Email", "label": "Email"}
CONTINUE = {"tag": "button", "role": "button", "name": "Continue", "text": "Continue"}


def cand(**kw: Any) -> dict[str, Any]:
    return dict(kw)


FORM = [cand(**NAME), cand(**EMAIL), cand(**CONTINUE)]
POPUP = [cand(**NAME, covered=True), cand(**EMAIL, covered=True), cand(**CONTINUE, covered=True),
         cand(tag="button", role="button", name="Use saved details", text="Use saved details", container="Autofill?"),
         cand(tag="button", role="button", name="Type them myself", text="Type them myself", container="Autofill?")]
BASELINE = [{"role": "textbox", "text": "Full name"}, {"role": "textbox", "text": "Email"},
            {"role": "button", "text": "Continue"}]


def snap(cands: list[dict], modal: tuple[str, ...] = (), sig: str = "s-popup", url: str = "http://x.test/form"):
    return {"url": url, "title": "Shipping", "modal_titles": list(modal), "signature": sig, "error_count": 0,
            "candidates": cands}


def entry(index: int, step_id: str, action: str, target: dict, *, status: str = "passed", value: str = "",
          before: str = "", after: str = "", source: str = "flow", intent: str = "") -> dict[str, Any]:
    return {"index": index, "step_id": step_id, "action": action, "value": value, "intent": intent or step_id,
            "target": target, "status": status, "source": source, "state_before": before, "state_after": after}


def record(*, error_type: str = "precondition", message: str = "precondition not met: the target is covered by "
           "'Autofill?'", before: dict | None = None, attempts: int = 1, recorded: dict | None = None,
           outcome: str = "open", trajectory: list | None = None, signals: dict | None = None,
           passed_from: dict | None = None, step_index: int = 0, step_id: str = "s1", rid: int = 1,
           run_id: str = "run-1", flow: str = "ship", state: str = "s-popup", source: str = "flow") -> FailureRecord:
    before = before if before is not None else snap(POPUP, ("Autofill?",))
    page: dict[str, Any] = {
        "before": before, "after": {}, "signals": signals or {"console": [], "exceptions": [], "http": []},
        "attempts": [{"attempt": i + 1, "error_type": error_type, "message": message, "state": state,
                      "before": before} for i in range(attempts)],
        "recorded": recorded if recorded is not None else {"baseline": BASELINE,
                                                           "screen": "/form | Shipping | Shipping details | "},
        "source": source}
    if passed_from is not None:
        page["passed_from"] = passed_from
    traj = trajectory if trajectory is not None else [
        entry(step_index, step_id, "input", NAME, status="failed", value="Ada", before=state, source=source)]
    return FailureRecord(id=rid, project="Shipping", run_id=run_id, flow=flow, step_index=step_index,
                         step_id=step_id, error_type=error_type, message=message, state=state, url=before["url"],
                         trajectory=tuple(traj), page=page, screenshots=(), attribution={}, outcome=outcome,
                         correction_id=0, skill_id="", created_at=None)


def correction_step(action: str, target: dict, *, name: str = "", value: str = "") -> dict[str, Any]:
    full = {**target, "id": "own", "css_path": "button#own", "xpath": "/html[1]/body[1]/div[2]/button[2]",
            "bbox": [10.0, 20.0, 100.0, 20.0]}
    return {"id": "s1", "name": name or f"{action} {target.get('name', '')}", "action": action, "value": value,
            "target": full}


OWN = {"tag": "button", "role": "button", "name": "Type them myself", "text": "Type them myself",
       "container": "Autofill?", "anchor": {"text": "Autofill?", "role": "heading", "dx": 15.0, "dy": 90.0}}
