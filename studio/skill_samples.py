"""A sample skill space for the skill review and library previews: real store rows, drawn pages.

:func:`skill_store` writes, into a project folder, the two sample runs of
:mod:`studio.history_samples` and what a skill space would hold after them:
a failure record (the password field of ``login_lockout`` opened a "Save
this address?" popup that covered it), the takeover correction that
cancelled the popup (screenshot and element crops), the skill proposed from
the two, and a few reviewed skills with uses in those runs - all through the
real :class:`core.store.Store`, :class:`core.store.skills.SkillTable` and
:class:`core.store.corrections.CorrectionTable`.  No Qt here.
"""
from __future__ import annotations

import io
from datetime import datetime, timedelta, timezone
from pathlib import Path

from PIL import Image

from core.domain import ElementDescriptor
from core.domain.flow import Action
from core.domain.skill import (
    ElementCondition, Skill, SkillAction, SkillProvenance, SkillScope, SkillTrigger, SkillValidation, VerifyRule,
)
from core.store import Store, store_path
from core.store.corrections import CorrectionTable
from core.store.media import write_atomic
from core.store.skills import SkillTable

from .history_samples import sample_store
from .samples import SAMPLE_DPR, PageElement, SamplePage, render_page, sample_page

__all__ = ["POPUP_PAGE", "skill_store", "SAMPLE_PROPOSED_ID", "SAMPLE_APPROVED_ID"]

#: The proposed skill of the sample (cancel the autofill popup) and an approved one with uses.
SAMPLE_PROPOSED_ID = "sk-5a1e0popup1"
SAMPLE_APPROVED_ID = "sk-c00k1e0bann"

_DIALOG = (520.0, 250.0, 360.0, 170.0)
_CANCEL = (560.0, 360.0, 130.0, 40.0)
_SAVE = (710.0, 360.0, 130.0, 40.0)


def _popup_page() -> SamplePage:
    base = sample_page("login_user")
    x, y, w, h = _DIALOG
    els = list(base.elements) + [
        PageElement("card", "", _DIALOG),
        PageElement("heading", "Save this address?", (x + 24, y + 22, w - 48, 30)),
        PageElement("text", "Fill it in next time on this site.", (x + 24, y + 64, w - 48, 18)),
        PageElement("button", "Cancel", _CANCEL),
        PageElement("primary", "Save", _SAVE),
    ]
    return SamplePage("login_popup", base.url, base.title, tuple(els))


#: The login page with the autofill popup over the password field (CSS px boxes, 1280 x 720).
POPUP_PAGE = _popup_page()


def _crop(png: bytes, box: tuple[float, float, float, float], pad: float = 4.0) -> bytes:
    img = Image.open(io.BytesIO(png))
    x, y, w, h = box
    d = SAMPLE_DPR
    area = (max(0, round((x - pad) * d)), max(0, round((y - pad) * d)),
            min(img.width, round((x + w + pad) * d)), min(img.height, round((y + h + pad) * d)))
    out = io.BytesIO()
    img.crop(area).save(out, format="PNG", compress_level=1)
    return out.getvalue()


def _target(role: str, name: str, box: tuple[float, float, float, float], tag: str = "") -> dict[str, object]:
    return {"tag": tag, "role": role, "name": name, "bbox": list(box), "viewport": [1280, 720],
            "device_pixel_ratio": SAMPLE_DPR}


def skill_store(project_root: Path) -> tuple[Path, str, str]:
    """Write the sample runs and skill space under ``project_root``; returns ``(media root, run a, run b)``."""
    media, run_a, run_b = sample_store(project_root)
    now = datetime.now(timezone.utc)
    popup_png = render_page(POPUP_PAGE, dpr=SAMPLE_DPR)
    with Store.open(store_path(project_root)) as store:
        table = SkillTable(store)
        write_atomic(store.media_root, "failures/1/page.png", popup_png)
        password = _target("textbox", "Password", (472.0, 290.0, 336.0, 40.0), "input")
        fail = table.add_failure({
            "project": "demo", "run_id": run_a, "flow": "login_lockout", "step_index": 2, "step_id": "s3",
            "error_type": "action_error",
            "message": "the input was intercepted: dialog 'Save this address?' covers textbox 'Password'",
            "state": "sig-login_popup", "url": POPUP_PAGE.url,
            "page": {"url": POPUP_PAGE.url, "title": POPUP_PAGE.title, "device_pixel_ratio": SAMPLE_DPR,
                     "dialogs": ["Save this address?"]},
            "trajectory": [
                {"index": 0, "step_id": "s1", "action": "navigate", "intent": "Open the login page",
                 "target": {}, "status": "passed"},
                {"index": 1, "step_id": "s2", "action": "input", "intent": "Type the user name",
                 "target": _target("textbox", "User name", (472.0, 214.0, 336.0, 40.0), "input"),
                 "status": "passed"},
                {"index": 2, "step_id": "s3", "action": "input", "intent": "Type a wrong password",
                 "target": password, "status": "failed"},
            ],
            "screenshots": ["failures/1/page.png"],
            "attribution": {"cause": "unexpected_state", "confidence": 0.86,
                            "reason": "a dialog appeared that the recording did not show"},
            "outcome": "skill",
        })
        corr = CorrectionTable(store).add({
            "run_id": run_a, "project": "demo", "flow": "login_lockout", "flow_file": "flows/login_lockout.yaml",
            "step_index": 2, "step_id": "s3", "step_title": "Type a wrong password",
            "reason": "the password field is covered by a dialog", "meaning": "insert", "continue_from": 2,
            "state": "kept",
            "page": {"url": POPUP_PAGE.url, "title": POPUP_PAGE.title, "viewport": [1280, 720]},
            "steps": [{"id": "s3a", "name": "Click Cancel", "action": "click",
                       "target": _target("button", "Cancel", _CANCEL, "button")}],
        }, screenshot_png=popup_png, crops={"s3a": _crop(popup_png, _CANCEL)})
        dialog_cancel = ElementCondition(role="button", name="Cancel", in_dialog=True)
        skills = [
            Skill(
                id=SAMPLE_PROPOSED_ID,
                description="Cancel the 'Save this address?' popup that covers a field, then type",
                trigger=SkillTrigger(required=(dialog_cancel,), absent=(), dialog=True,
                                     dialog_name="Save this address", step_action="input"),
                actions=(SkillAction(Action("click"), ElementDescriptor(role="button", name="Cancel", tag="button"),
                                     "cancel the popup, never Save"),),
                verify=(VerifyRule("no_dialog"),),
                scope=SkillScope(product="demo", task_type="login", url_prefix="/login"),
                provenance=SkillProvenance(source="correction", run_id=run_a, flow="login_lockout",
                                           step_ids=("s3",), step_index=2, correction_id=corr.id,
                                           failure_id=fail.id, cause="unexpected_state", cause_confidence=0.86,
                                           extractor="contrast", extracted_at=now - timedelta(minutes=3)),
                validation=SkillValidation(cases=5, passed=4, reproduced=True,
                                           reasons=("case 4 (popup on the user name field): the field stayed "
                                                    "covered after Cancel - verify no_dialog failed",),
                                           checked_at=now - timedelta(minutes=2)),
                quality=0.8, state="proposed"),
            Skill(
                id=SAMPLE_APPROVED_ID, description="Accept the cookie banner before the first click",
                trigger=SkillTrigger(required=(ElementCondition(role="button", name="Accept all cookies"),)),
                actions=(SkillAction(Action("click"), ElementDescriptor(role="button", name="Accept all cookies")),),
                scope=SkillScope(product="demo", url_prefix="/login"),
                provenance=SkillProvenance(source="correction", run_id=run_a, flow="login_lockout",
                                           step_ids=("s1",), step_index=0),
                validation=SkillValidation(cases=4, passed=4, reproduced=True), quality=0.9, state="approved"),
            Skill(
                id="sk-d0ub1ec11ck", description="Double-click the region label to edit a report cell",
                trigger=SkillTrigger(required=(ElementCondition(role="cell", text="{target.label}"),),
                                     step_action="input", title="Reports"),
                actions=(SkillAction(Action("dblclick"), ElementDescriptor(text="{target.label}")),),
                scope=SkillScope(product="demo", task_type="edit", title="Reports"),
                validation=SkillValidation(cases=3, passed=3, reproduced=True), quality=0.45, state="approved"),
            Skill(
                id="sk-deny0de1ete", kind="deny",
                description="Never press 'Delete all' while the export dialog is open",
                trigger=SkillTrigger(dialog=True, dialog_name="Export"),
                actions=(SkillAction(Action("click"), ElementDescriptor(role="button", name="Delete all")),),
                scope=SkillScope(product="demo", task_type="export", url_prefix="/reports"),
                validation=SkillValidation(cases=3, passed=3, reproduced=True), quality=0.7, state="approved"),
            Skill(
                id="sk-wa1t5p1nner", description="Wait for the loading spinner to go before Export",
                trigger=SkillTrigger(required=(ElementCondition(role="progressbar"),)),
                actions=(SkillAction(Action("wait", "2000")),),
                scope=SkillScope(product="demo", task_type="export", url_prefix="/reports"),
                validation=SkillValidation(cases=3, passed=2, reproduced=True), quality=0.2, state="retired",
                review_reason="the slow report server was fixed"),
            Skill(
                id="sk-r3jectedok", description="Press Save on the 'Save this address?' popup",
                trigger=SkillTrigger(dialog=True, dialog_name="Save this address"),
                actions=(SkillAction(Action("click"), ElementDescriptor(role="button", name="Save")),),
                scope=SkillScope(product="demo", task_type="login", url_prefix="/login"),
                validation=SkillValidation(cases=3, passed=1, reproduced=True), quality=0.3, state="rejected",
                review_reason="saving the address is not what the correction did"),
        ]
        for s in skills:
            table.put(s)
        for run, step, sid, outcome, ms in ((run_a, 0, "s1", "passed", 310.0), (run_b, 0, "s1", "passed", 280.0),
                                           (run_b, 3, "s4", "precondition", 12.0)):
            table.record_use(SAMPLE_APPROVED_ID, run_id=run, flow="login_lockout", step_index=step, step_id=sid,
                             outcome=outcome, ms=ms,
                             reason="" if outcome == "passed" else "button 'Accept all cookies' was not there")
        table.record_use("sk-d0ub1ec11ck", run_id=run_b, flow="login_lockout", step_index=5, step_id="s6",
                         outcome="failed", ms=840.0, reason="verify: the cell did not become editable")
        table.record_use("sk-wa1t5p1nner", run_id=run_a, flow="login_lockout", step_index=4, step_id="s5",
                         outcome="passed", ms=2010.0)
    return media, run_a, run_b
