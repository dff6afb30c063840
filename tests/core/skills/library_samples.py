"""Sample skills and an open store for the skill-library tests (no browser)."""
from __future__ import annotations

import uuid
from datetime import datetime, timezone
from pathlib import Path

from core.domain import Action, ElementDescriptor
from core.domain.skill import (
    ElementCondition, Skill, SkillAction, SkillProvenance, SkillScope, SkillTrigger, SkillValidation, VerifyRule,
)
from core.store import Store
from core.store.skills import SkillTable

#: A declared secret's value for these tests, made afresh each run (no password is kept in the repository).
SECRET = "pw-" + uuid.uuid4().hex[:12]

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=timezone.utc)


def popup_skill(skill_id: str = "sk-000000000001", *, product: str = "demo", state: str = "proposed",
                passed: int = 5, cases: int = 5, reproduced: bool = True, **kw) -> Skill:
    """Cancel the autofill popup a field opens on focus (a skill the learning loop proposes)."""
    base = dict(
        id=skill_id, description="Cancel the autofill popup that opens when a field gets focus",
        trigger=SkillTrigger(required=(ElementCondition(role="button", name="Cancel", in_dialog=True),),
                             dialog=True, dialog_name="Autofill", step_action="input"),
        actions=(SkillAction(Action("click"), ElementDescriptor(role="button", name="Cancel"),
                             note="cancel, never confirm"),),
        verify=(VerifyRule("no_dialog"),),
        scope=SkillScope(product=product),
        provenance=SkillProvenance(source="correction", run_id="run-1", flow="leave_request", step_ids=("s3",),
                                   step_index=2, correction_id=4, cause="unexpected_state", cause_confidence=0.8,
                                   extracted_at=T0),
        validation=SkillValidation(cases=cases, passed=passed, reproduced=reproduced, checked_at=T0),
        quality=passed / cases if cases else 0.0, state=state,
    )
    base.update(kw)
    return Skill(**base)


def open_table(tmp_path: Path, *, secrets: tuple[str, ...] = ()) -> tuple[Store, SkillTable]:
    """A real SQLite store in ``tmp_path`` and its skill table."""
    from core.secrets import Redactor

    store = Store.open(tmp_path / ".steadyhand" / "store.sqlite", redactor=Redactor(secrets))
    return store, SkillTable(store)
