"""The store never holds a secret in clear: not in the database bytes, not in file names."""
from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from core.domain import EscalationCandidate, Resolution, RunResult, ScoredCandidate
from core.engine.events import EscalationRaised
from core.secrets import MASK, Redactor
from core.store import Store

SECRET = "Sup3r-Secret!pw"
LATE_SECRET = "late-token-42"


def _db_bytes(media: Path) -> bytes:
    """Raw bytes of the database and its WAL / shared-memory files."""
    return b"".join(p.read_bytes() for p in sorted(media.glob("store.sqlite*")))


def _assert_clean(media: Path, *secrets: str) -> None:
    raw = _db_bytes(media)
    assert raw, "database files missing"
    for secret in secrets:
        for form in (secret, quote(secret, safe="")):
            for enc in ("utf-8", "utf-16-le", "utf-16-be"):
                assert form.encode(enc) not in raw, f"{form!r} in the database ({enc})"
        for path in media.rglob("*"):
            assert secret not in str(path.relative_to(media)), f"secret in file name {path}"


def test_secrets_never_reach_the_database_or_file_names(tmp_path, make_observation,
                                                        make_outcome, make_verdict, make_png):
    media = tmp_path / ".steadyhand"
    store = Store.open(tmp_path, redactor=Redactor([SECRET]))
    run_id = store.begin_run("demo", f"login {SECRET}")
    store.record_observation(run_id, 0, "before", make_observation(
        url=f"http://127.0.0.1/login?pw={quote(SECRET, safe='')}",
        title=f"Welcome {SECRET}", png=make_png(), labels=(f"value {SECRET}", "User")))
    res = Resolution(strategy="fuzzy_text", ref="0:0", score=0.9, margin=0.3, ms=2.0,
                     reason=f"matched text {SECRET}",
                     top=(ScoredCandidate("0:0", 0.9, f"Password {SECRET}"),))
    store.record_resolution(run_id, 0, res)
    verdict = make_verdict(kind="changed_unexpectedly", reason=f"field shows {SECRET}")
    store.record_verdict(run_id, 0, verdict)
    outcome = make_outcome(0, status="failed", title=f"Type {SECRET}",
                           error=f"Timeout typing {SECRET}", resolution=res, verdict=verdict)
    store.record_step(run_id, outcome)
    store.record_escalation(run_id, EscalationRaised(
        run_id=run_id, flow="login", index=0, step_title=f"Type {SECRET}",
        reason=f"cannot type {SECRET}", candidates=(EscalationCandidate("0:0", f"{SECRET}", 0.5),),
        side_effects=(f"POST /login password={SECRET}",)))
    store.finish_run(run_id, RunResult(
        run_id=run_id, flow="login", status="failed", steps=(outcome,), heals=1,
        invalid_actions=1, seconds=1.5, error=f"failed: {SECRET}",
        heals_by_strategy={"fuzzy_text": 1}))

    # While the store is open (data may still sit in the WAL) ...
    _assert_clean(media, SECRET)

    # ... the masked values are what reads back ...
    detail = store.run_detail(run_id)
    assert detail.run.flow == f"login {MASK}"
    assert detail.run.error == f"failed: {MASK}"
    assert detail.steps[0].title == f"Type {MASK}"
    assert detail.steps[0].error == f"Timeout typing {MASK}"
    obs = detail.observations[0]
    assert obs.url == f"http://127.0.0.1/login?pw={MASK}"
    assert obs.title == f"Welcome {MASK}"
    assert detail.resolutions[0].reason == f"matched text {MASK}"
    assert detail.resolutions[0].top[0]["label"] == f"Password {MASK}"
    assert detail.verdicts[0].reason == f"field shows {MASK}"
    esc = detail.escalations[0]
    assert esc.reason == f"cannot type {MASK}"
    assert [c.label for c in esc.candidates] == [MASK]
    assert esc.side_effects == (f"POST /login password={MASK}",)
    assert store.media_path(obs.screenshot).is_file()
    store.close()

    # ... and after a checkpoint on close.
    _assert_clean(media, SECRET)


def test_secrets_added_after_open_are_masked_too(tmp_path, make_outcome):
    with Store.open(tmp_path) as store:
        run_id = store.begin_run("demo", "f")
        store.add_secrets([LATE_SECRET])
        store.record_step(run_id, make_outcome(0, error=f"bad token {LATE_SECRET}"))
        assert store.run_detail(run_id).steps[0].error == f"bad token {MASK}"
        assert len(store.redactor) == 1
    _assert_clean(tmp_path / ".steadyhand", LATE_SECRET)


def test_without_secrets_text_is_stored_unchanged(tmp_path, make_outcome):
    with Store.open(tmp_path) as store:
        run_id = store.begin_run("demo", "f")
        store.record_step(run_id, make_outcome(0, error="plain text, nothing secret"))
        assert store.run_detail(run_id).steps[0].error == "plain text, nothing secret"
