"""Heals through the engine on a scripted page with a real SQLite store: propose, reuse, reject, accept.

The page is :class:`core.perception.fake.FakeDriver` (no browser); the store,
the flow file and its edit are real.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.domain import Action, ElementDescriptor, EngineSettings, Flow, RunResult, Step, WaitSettings
from core.engine.events import EngineEvent, StepFinished, TargetResolved
from core.engine.executor import FlowExecutor
from core.heal import PENDING_HEAL, AlreadyReviewedError, FlowChangedError, HealBook, HealReview, UnknownHealError
from core.perception.fake import FakeDriver, FakePage, change_text
from core.project import load_flow, save_flow
from core.store import Store

EXPORT = ElementDescriptor(tag="button", role="button", name="Export report", text="Export report", id="export")


def page(label: str = "Export report (E)", element_id: str = "btn-export") -> dict[str, FakePage]:
    return {"/": FakePage([{"id": "save", "role": "button", "text": "Save draft"},
                           {"id": element_id, "role": "button", "text": label}], title="Reports")}


class Project:
    """A project folder with one flow file, its store, the engine's heal book and the review API."""

    def __init__(self, root: Path, target: ElementDescriptor = EXPORT, selector: str = "") -> None:
        self.root = root
        (root / "flows").mkdir(parents=True)
        (root / "steadyhand.yaml").write_text("name: T\nbase_url: http://fake.test\n")
        flow = Flow("f", "/", (Step(id="s1", name="Export", action=Action("click"), target=target,
                                    selector=selector),))
        self.path = save_flow(flow, root / "flows" / "f.yaml")
        self.store = Store.open(root / ".steadyhand" / "store.sqlite")
        self.book = HealBook(self.store, project_root=root, project_name="T")
        self.review = HealReview(root, store=self.store)

    def run(self, pages: dict[str, FakePage]) -> tuple[RunResult, list[str], list[EngineEvent]]:
        """One run the way the session does it: executor with the heal book, then ``after_run``."""
        events: list[EngineEvent] = []
        healed: list[Any] = []
        captured: list[Any] = []
        fake = FakeDriver(pages=pages, reactions={("/", el, "click"): change_text(f"clicked {el}")
                                                  for el in ("export", "btn-export", "btn-x", "save")})
        ex = FlowExecutor(fake, emit=events.append, store=self.store, screenshots=False, project_name="T",
                          settings=EngineSettings(waits=WaitSettings(retries=0, retry_delay_ms=0)),
                          on_descriptor_captured=lambda f, s, c: captured.append((s, c)),
                          on_step_healed=lambda f, i, s, c, r: healed.append((i, s, c, r)), pending_heals=self.book)
        flow = load_flow(self.path)
        result = ex.run_flow(flow, params=dict(flow.params))
        ex.finish(result)
        notes = self.book.after_run(flow, result, passed=result.status == "passed", healed=healed,
                                    captured=captured)
        self.clicked = [a.element for a in fake.actions]
        return result, notes, events


@pytest.fixture
def project(tmp_path):
    p = Project(tmp_path / "p")
    yield p
    p.store.close()


def test_a_heal_becomes_a_proposal_with_its_evidence(project) -> None:
    result, notes, _ = project.run(page())
    assert result.status == "passed" and result.heals == 1 and project.clicked == ["btn-export"]
    (p,) = project.review.list_pending()
    assert (p.flow, p.step_id, p.kind, p.status, p.seen, p.reused) == ("f", "s1", "heal", "pending", 1, 0)
    assert p.old_target["name"] == "Export report" and p.new_target["name"] == "Export report (E)"
    assert p.new_target["id"] == "btn-export" and p.run_id == result.run_id
    assert p.strategy == result.steps[0].resolution.strategy == "fuzzy_text"
    assert p.score == pytest.approx(result.steps[0].resolution.score) and p.margin > 0
    assert p.top and p.top[0]["label"] == "Export report (E)"
    assert notes == [f"heal proposed #{p.id}: flows/f.yaml step s1 (button 'Export report' -> button "
                     f"'Export report (E)', fuzzy_text {p.score:.2f}) - steadyhand heals show {project.root} {p.id}"]
    assert project.path.read_text() == save_flow(load_flow(project.path), project.root / "copy.yaml").read_text()


def test_the_second_run_reuses_the_pending_heal_flagged_counted_and_proposes_nothing_new(project) -> None:
    project.run(page())
    (p,) = project.review.list_pending()
    result, notes, events = project.run(page())
    assert result.status == "passed" and project.clicked == ["btn-export"]
    res = result.steps[0].resolution
    assert res.strategy == PENDING_HEAL and res.healed and result.heals == 1  # still a heal in the run's counts
    assert res.reason.startswith(f"pending heal #{p.id} reused: exact on its new descriptor")
    resolved = [e for e in events if isinstance(e, TargetResolved)]
    assert resolved[0].resolution.reason == res.reason
    assert [e.healed for e in events if isinstance(e, StepFinished)] == [True]
    assert notes == [f"pending heal #{p.id} reused at step s1 (passed; seen 1, reused 1) - "
                     f"steadyhand heals show {project.root} {p.id}"]
    assert [(r.id, r.seen, r.reused) for r in project.review.list()] == [(p.id, 1, 1)]
    project.run(page())
    assert project.review.get(p.id).reused == 2 and len(project.review.list()) == 1


def test_a_pending_heal_that_no_longer_matches_leaves_the_step_to_the_normal_chain(project) -> None:
    project.run(page())
    (first,) = project.review.list_pending()
    result, notes, _ = project.run(page("Export report (X)", "btn-x"))  # the UI moved on again
    res = result.steps[0].resolution
    assert res.strategy == "fuzzy_text" and project.clicked == ["btn-x"]
    assert project.review.get(first.id).reused == 0
    assert [r.new_target["name"] for r in project.review.list_pending()] == ["Export report (X)",
                                                                             "Export report (E)"]


def test_when_the_recorded_element_is_back_the_pending_heal_is_not_used(project) -> None:
    project.run(page())
    result, notes, _ = project.run(page("Export report", "export"))
    assert result.steps[0].resolution.strategy == "exact" and result.heals == 0 and notes == []


def test_a_rejected_heal_is_remembered_never_reused_and_never_proposed_again(project) -> None:
    project.run(page())
    (p,) = project.review.list_pending()
    rejected = project.review.reject(p.id, "Export report (E) exports everything, not the report")
    assert rejected.status == "rejected" and rejected.reason.startswith("Export report (E) exports")
    result, notes, _ = project.run(page())
    res = result.steps[0].resolution
    # the chain finds the same element again; a person called it the wrong control: not acted on, not reused
    assert res.abstained and res.ref is None and f"rejected heal #{p.id}" in res.reason
    assert "not the report" in res.reason and result.status != "passed"
    assert project.clicked == [] and notes == []
    assert project.review.list_pending() == [] and len(project.review.list()) == 1
    with pytest.raises(AlreadyReviewedError, match="already rejected"):
        project.review.accept(p.id)


def test_accepting_writes_the_diff_shown_and_the_next_run_resolves_exact(project) -> None:
    project.run(page())
    (p,) = project.review.list_pending()
    before = project.path.read_text()
    shown = project.review.diff(p.id)
    assert project.path.read_text() == before  # showing writes nothing
    applied = project.review.accept(p.id)
    assert applied == shown and "-  target:" not in applied
    assert "+    name: Export report (E)" in applied and "-    name: Export report" in applied
    assert load_flow(project.path).steps[0].target.id == "btn-export"
    rec = project.review.get(p.id)
    assert rec.status == "accepted" and rec.diff == applied and rec.reviewed_at is not None
    result, notes, _ = project.run(page())
    assert result.steps[0].resolution.strategy == "exact" and result.heals == 0 and notes == []
    with pytest.raises(AlreadyReviewedError, match="already accepted"):
        project.review.accept(p.id)


def test_a_flow_file_changed_on_disk_since_the_proposal_is_not_written(project) -> None:
    project.run(page())
    (p,) = project.review.list_pending()
    edited = project.path.read_text().replace("name: Export\n", "name: Export the report\n")
    project.path.write_text(edited)
    with pytest.raises(FlowChangedError, match="changed on disk since heal #"):
        project.review.accept(p.id)
    assert project.path.read_text() == edited and project.review.get(p.id).status == "pending"
    project.run(page())  # a run that reads the edited file renews the proposal
    assert project.review.accept(p.id).count("+    name: Export report (E)") == 1


def test_an_unknown_id_is_a_clear_error(project) -> None:
    with pytest.raises(UnknownHealError, match=r"no heal proposal #42 .*heals list"):
        project.review.accept(42)
    with pytest.raises(UnknownHealError):
        project.review.reject(42)


def test_a_run_that_does_not_pass_proposes_nothing(tmp_path) -> None:
    p = Project(tmp_path / "p")
    p.path.write_text(p.path.read_text() + "- id: s2\n  action: click\n  target: {role: button, name: Gone}\n")
    result, notes, _ = p.run(page())
    assert result.status == "escalated" and result.steps[0].resolution.healed
    assert notes == [] and p.review.list() == []
    p.store.close()


def test_a_parametrised_target_is_never_proposed(tmp_path) -> None:
    p = Project(tmp_path / "p", target=EXPORT.with_(name="{what}", text="{what}"))
    flow_text = p.path.read_text().replace("start_url: /\n", "start_url: /\nparams:\n  what: Export report\n")
    p.path.write_text(flow_text)
    result, notes, _ = p.run(page())
    assert result.status == "passed" and result.heals == 1
    assert notes == ["heal at step s1 not proposed: its target has parameters"] and p.review.list() == []
    p.store.close()


def test_a_selector_only_step_is_filled_in_and_reported_not_proposed(tmp_path) -> None:
    p = Project(tmp_path / "p", target=ElementDescriptor(), selector="#btn-export")
    before = p.path.read_text()
    result, notes, _ = p.run(page())
    assert result.status == "passed" and result.heals == 0
    (rec,) = p.review.list()
    assert (rec.kind, rec.status, rec.old_target) == ("filled_in", "applied", {})
    assert notes == [f"filled in #{rec.id}: flows/f.yaml step s1 - descriptor captured from the one element its "
                     f"selector matched (button 'Export report (E)'); not a heal, the selector stays the exact level"]
    after = p.path.read_text()
    assert after.startswith(before.split("  selector:")[0]) and rec.diff.startswith("--- a/flows/f.yaml")
    assert all(line.startswith(("+  target:", "+    ")) for line in rec.diff.splitlines()[3:] if line[:1] == "+")
    assert load_flow(p.path).steps[0].target.name == "Export report (E)"
    assert p.review.list_pending() == []
    with pytest.raises(AlreadyReviewedError):
        p.review.accept(rec.id)
    p.store.close()


def test_a_heal_a_person_proposed_is_never_reused_before_it_is_accepted(tmp_path) -> None:
    """"Propose as heal" on a look-alike during an escalation: the next run must not click it on its own."""
    from core.heal.chosen import propose_chosen
    from core.perception.fake import FakeDriver as _Fake

    missing = ElementDescriptor(tag="button", role="button", name="Department", text="Department")
    p = Project(tmp_path / "p", target=missing)
    try:
        pages = page("Delete", "btn-x")  # nothing like "Department"; a "Delete" look-alike is there
        first, _, _ = p.run(pages)
        assert first.status != "passed" and p.clicked == []
        flow = load_flow(p.path)
        fake = _Fake(pages=pages)
        fake.goto("/")
        cand = next(c for c in fake.observe().candidates if c.descriptor.name == "Delete")
        pid, _line = propose_chosen(p.book, flow, first.run_id, 0, flow.steps[0], cand, None)
        assert pid and p.review.get(pid).status == "pending"
        second, notes, _ = p.run(pages)
        assert p.clicked == [] and second.status != "passed"  # not reused: still waiting for review
        assert not any("reused" in n for n in notes)
    finally:
        p.store.close()
