"""Checkpoints (R3) in the store: one row per step, replaced on a retry; a secret field only by digest."""
from __future__ import annotations

from pathlib import Path

from core.domain import Checkpoint, FieldValue
from core.recover.rollback import digest
from core.secrets import Redactor
from core.store import Store

#: A made-up secret value (never a real credential).
SECRET = "pw-" + "4711"


def _db_bytes(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted((root / ".steadyhand").glob("store.sqlite*")))


def test_a_checkpoint_is_stored_replaced_and_never_holds_a_secret_in_clear(tmp_path: Path) -> None:
    store = Store.open(tmp_path, redactor=Redactor([SECRET]))
    run_id = store.begin_run("demo", "login")
    fields = (FieldValue("#user", "User name", "alice"), FieldValue("#pw", "Password", "", None, digest(SECRET)),
              FieldValue("#remember", "Remember me", "", True))
    cp = Checkpoint(run_id, "login", 2, "s3", f"http://127.0.0.1/login?next={SECRET}", "abc", False,
                    ("step 1 'Save' wrote data",), screenshot=f"screenshots/{run_id}/2_before_1.png",
                    modal_titles=("Sign in",), fields=fields, step_state="running")
    store.record_checkpoint(run_id, cp)
    store.record_checkpoint(run_id, Checkpoint(**{**{f: getattr(cp, f) for f in cp.__slots__}, "step_state": "success"}))
    (row,) = store.checkpoints(run_id)
    assert (row["index"], row["step_id"], row["step_state"], row["reversible"]) == (2, "s3", "success", False)
    assert row["screenshot"].endswith("2_before_1.png") and row["modal_titles"] == ["Sign in"]
    assert [f["key"] for f in row["fields"]] == ["#user", "#pw", "#remember"]
    assert row["fields"][1]["value"] == "" and row["fields"][1]["digest"] == digest(SECRET)
    assert row["fields"][2]["checked"] is True
    assert SECRET not in row["url"]
    store.close()
    assert SECRET.encode() not in _db_bytes(tmp_path)
