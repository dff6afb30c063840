"""Skills, their uses and failure records in the real SQLite store (K1, K2, K6, K7)."""
from __future__ import annotations

import pytest

from core.domain import Action, ElementDescriptor
from core.domain.skill import (
    QUALITY_FAILURE_DELTA, QUALITY_SUCCESS_DELTA, ElementCondition, Skill, SkillAction, SkillScope, SkillTrigger,
    skill_from_mapping, skill_to_mapping,
)
from core.secrets import Redactor
from core.store import SkillConflictError, SkillTable, Store, store_path


def skill(sid: str = "sk-1", *, state: str = "proposed", product: str = "demo", quality: float = 0.8) -> Skill:
    return Skill(id=sid, description="cancel the autofill popup",
                 trigger=SkillTrigger(required=(ElementCondition(role="button", name="Cancel", in_dialog=True),),
                                      dialog_name="Fill from"),
                 actions=(SkillAction(Action("click"), ElementDescriptor(role="button", name="Cancel"), "cancel"),),
                 scope=SkillScope(product=product, url_prefix="/requests"), state=state, quality=quality)  # type: ignore[arg-type]


@pytest.fixture
def table(tmp_path):
    path = store_path(tmp_path)
    path.parent.mkdir(parents=True)
    store = Store.open(path, redactor=Redactor(["s3cret-value"]))
    yield SkillTable(store)
    store.close()


def test_the_plain_shape_round_trips() -> None:
    s = skill()
    assert skill_from_mapping(skill_to_mapping(s)) == s


def test_put_get_list_and_an_approved_skill_is_never_overwritten_silently(table: SkillTable) -> None:
    stored, created = table.put(skill())
    assert created and stored.state == "proposed"
    table.set_state("sk-1", "approved")
    with pytest.raises(SkillConflictError):
        table.put(skill(quality=0.1))
    again, created = table.put(skill(state="approved", quality=0.2), replace_approved=True)
    assert not created and again.quality == 0.2
    table.put(skill("sk-2", product="other"))
    assert [s.id for s in table.list(product="demo")] == ["sk-1"]
    assert table.get("nope") is None


def test_review_states_are_checked(table: SkillTable) -> None:
    table.put(skill())
    with pytest.raises(SkillConflictError):
        table.set_state("sk-1", "retired", expect=("approved",))
    with pytest.raises(ValueError):
        table.set_state("sk-1", "maybe")
    with pytest.raises(KeyError):
        table.set_state("sk-9", "approved")
    assert table.set_state("sk-1", "rejected", reason="wrong button").review_reason == "wrong button"


def test_uses_move_counters_and_quality_within_bounds(table: SkillTable) -> None:
    table.put(skill(quality=0.95))
    table.record_use("sk-1", run_id="r1", flow="f", step_index=2, step_id="s3", outcome="passed",
                     quality_delta=QUALITY_SUCCESS_DELTA, count="success", ms=12.5)
    s = table.get("sk-1")
    assert s is not None and s.successes == 1 and s.quality == 1.0 and s.last_used_at is not None
    table.record_use("sk-1", run_id="r2", flow="f", step_index=2, step_id="s3", outcome="precondition",
                     quality_delta=QUALITY_FAILURE_DELTA, count="failure")
    s = table.get("sk-1")
    assert s is not None and s.failures == 1 and s.quality == pytest.approx(0.5)
    assert [u.run_id for u in table.uses(skill_id="sk-1")] == ["r2", "r1"]
    assert table.use_counts() == {"sk-1": {"passed": 1, "precondition": 1}}
    with pytest.raises(ValueError):
        table.record_use("sk-1", run_id="r", flow="f", step_index=0, step_id="", outcome="great")


def test_failure_records_are_redacted_and_updatable(table: SkillTable) -> None:
    rec = table.add_failure({"project": "demo", "run_id": "r1", "flow": "f", "step_index": 3, "step_id": "s4",
                             "error_type": "verify", "message": "typed s3cret-value into Reason",
                             "trajectory": [{"index": 3, "action": "input", "value": "s3cret-value"}]})
    assert "s3cret-value" not in rec.message and "s3cret-value" not in str(rec.trajectory)
    done = table.update_failure(rec.id, outcome="transient", attribution={"cause": "state_drift"})
    assert done.outcome == "transient" and done.attribution["cause"] == "state_drift"
    with pytest.raises(ValueError):
        table.update_failure(rec.id, outcome="forgotten")
    assert [f.id for f in table.failures(run_id="r1")] == [rec.id]
