"""R1 baselines in a real SQLite store: first visit, refresh within the threshold, alert otherwise.

The store's own semantics with hand-made fingerprints, then the whole cycle
through :class:`~core.engine.executor.FlowExecutor` on a scripted page
(:mod:`core.perception.fake`) with a real store: flows are never touched.
"""
from __future__ import annotations

from pathlib import Path

from core.domain import Action, ElementDescriptor, Flow, Step
from core.domain.change import ChangeReport, ElementChange, KeyElement, ScreenFingerprint
from core.engine.events import BaselineAlertRaised, EngineEvent, ScreenChanged
from core.engine.executor import FlowExecutor
from core.perception.fake import FakeDriver, FakePage, navigate
from core.project import load_flow, save_flow
from core.secrets import Redactor
from core.store import Store

FP = ScreenFingerprint("/login | Sign in | Sign in | ", "f0e1d2c3b4a59687", "ab" * 20,
                       (KeyElement("button|#go", "button", "Sign in", 10.0, 20.0, 100.0, 30.0),
                        KeyElement("heading|h1", "heading", "Sign in", 10.0, 0.0, 300.0, 20.0)))


def _store(tmp_path: Path, **kw) -> Store:
    return Store.open(tmp_path / "store.sqlite", **kw)


def test_first_save_creates_and_the_next_refreshes_the_same_row(tmp_path):
    with _store(tmp_path) as store:
        assert store.save_baseline("login", "s1", FP) is True
        got = store.load_baselines("login")
        assert list(got) == ["s1"] and got["s1"].fingerprint == FP and got["s1"].refreshed == 0
        moved = ScreenFingerprint(FP.screen_key, FP.phash, FP.layout,
                                  (KeyElement("button|#go", "button", "Sign in", 14.0, 20.0, 100.0, 30.0),) + FP.elements[1:])
        assert store.save_baseline("login", "s1", moved) is False
        again = store.load_baselines("login")["s1"]
        assert again.fingerprint == moved and again.refreshed == 1
        assert again.updated_at >= got["s1"].updated_at and again.created_at == got["s1"].created_at
        assert store.load_baselines("other") == {}


def test_an_alert_keeps_the_baseline_and_a_refresh_clears_it(tmp_path):
    report = ChangeReport(FP.screen_key, "changed", 0.81, False,
                          (ElementChange("text_changed", "button|#go", "button", "Sign in", "Log in"),),
                          0.0, ("key elements: 1 text changed",))
    with _store(tmp_path) as store:
        run = store.begin_run("demo", "login")
        assert store.alert_baseline("login", "s1", report, run) is False  # no baseline yet: nothing to flag
        store.save_baseline("login", "s1", FP)
        assert store.alert_baseline("login", "s1", report, run) is True
        b = store.load_baselines("login")["s1"]
        assert b.alert and b.fingerprint == FP and b.alert_run_id == run
        assert "text changed from 'Sign in' to 'Log in'" in b.alert_reason
        assert b.alert_report["changes"][0]["after"] == "Log in"
        assert [x.step_id for x in store.baselines(alerts_only=True)] == ["s1"]
        store.save_baseline("login", "s1", FP)
        assert not store.load_baselines("login")["s1"].alert and store.baselines(alerts_only=True) == []


def test_change_reports_are_stored_per_run_and_secrets_masked(tmp_path):
    secret = "hun" + "ter2"
    report = ChangeReport(f"/x | {secret} |  | ", "changed", None, True,
                          (ElementChange("missing", "link|#a", "link", before=f"Hi {secret}"),), 0.0, ("layout",))
    with _store(tmp_path, redactor=Redactor([secret])) as store:
        run = store.begin_run("demo", "f")
        store.record_screen_change(run, 2, "f", "s3", report)
        store.save_baseline("f", "s3", ScreenFingerprint(f"/x | {secret} |  | ", "", "",
                                                         (KeyElement("k", "link", f"Hi {secret}", 0, 0, 1, 1),)))
        (rec,) = store.screen_changes(run)
        assert (rec.step_index, rec.step_id, rec.layout_changed, rec.similarity) == (2, "s3", True, None)
        assert secret not in repr(rec) and rec.report["changes"][0]["kind"] == "missing"
        assert secret not in repr(store.load_baselines("f"))


# --- the cycle through the executor, real store, scripted page -----------------------------------


def _pages(sign_in: str = "Sign in", y: float = 100.0) -> dict:
    return {
        "/login": FakePage([{"id": "user", "role": "textbox", "label": "User name", "bbox": [10, 40, 200, 30]},
                            {"id": "go", "role": "button", "text": sign_in, "bbox": [10, y, 100, 30]}],
                           title="Sign in"),
        "/home": FakePage([{"id": "out", "role": "button", "text": "Sign out"}], title="Home"),
    }


def _flow(tmp_path: Path) -> Flow:
    steps = (Step("s1", Action("input", "ada"), target=ElementDescriptor(tag="input", role="textbox", name="User name",
                                                                          label="User name")),
             Step("s2", Action("click"), target=ElementDescriptor(tag="button", role="button", name="Sign in",
                                                                   text="Sign in")))
    path = tmp_path / "flows" / "login.yaml"
    save_flow(Flow("login", "/login", steps), path)
    return load_flow(path)


def _run(store: Store, flow: Flow, pages: dict) -> tuple[object, list[EngineEvent]]:
    events: list[EngineEvent] = []
    fake = FakeDriver(pages=pages, reactions={("/login", "go", "click"): navigate("/home")})
    ex = FlowExecutor(fake, emit=events.append, store=store, screenshots=False, project_name="t")
    return ex.run_flow(flow, params={}), events


def test_runs_create_refresh_and_alert_and_never_touch_the_flow_file(tmp_path):
    flow = _flow(tmp_path)
    before = Path(flow.source).read_bytes()
    with _store(tmp_path) as store:
        r1, ev1 = _run(store, flow, _pages())
        assert r1.status == "passed" and not [e for e in ev1 if isinstance(e, ScreenChanged)]
        first = store.load_baselines("login")
        assert sorted(first) == ["s1", "s2"] and all(b.refreshed == 0 for b in first.values())

        r2, _ = _run(store, flow, _pages(y=110.0))  # 10 px: within the threshold -> refreshed
        assert r2.status == "passed"
        second = store.load_baselines("login")
        assert all(b.refreshed == 1 and not b.alert for b in second.values())
        go = next(e for e in second["s1"].fingerprint.elements if e.text == "Sign in")
        assert go.y == 110.0

        r3, ev3 = _run(store, flow, _pages(sign_in="Sign in (S)", y=110.0))  # a suffix: healed, but changed
        assert r3.status == "passed" and r3.heals == 1
        changed = [e for e in ev3 if isinstance(e, ScreenChanged)]
        assert {e.index for e in changed} == {0, 1}
        assert any(c.kind == "text_changed" and c.after == "Sign in (S)" for c in changed[0].report.changes)
        alerts = [e.alert for e in ev3 if isinstance(e, BaselineAlertRaised)]
        assert sorted(a.step_id for a in alerts) == ["s1", "s2"]
        third = store.load_baselines("login")
        assert all(b.alert for b in third.values())
        assert third["s1"].fingerprint == second["s1"].fingerprint  # kept, not refreshed
        assert len(store.screen_changes(r3.run_id)) == 2
    assert Path(flow.source).read_bytes() == before
