"""Heal proposals on markup we did not write: a Django-admin-like change form across two releases, in Chromium.

The Save button's descriptor is taken from release 1 as the browser shows it
(``fixtures/heals/v1``); the flow replays on release 2, where Save became
"Save changes" and the Delete link moved to where Save was.  The heal must
press Save (the page reached says "changed successfully", never "Are you
sure?"), become a proposal, be reused by the next run, and once accepted
resolve exact.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from core.domain import Action, Assertion, BrowserSettings, Flow, Step
from core.engine.session import ProjectSession
from core.heal import PENDING_HEAL, HealReview
from core.perception.driver import PlaywrightDriver
from core.project import load_flow, load_project, save_flow
from core.project.params import escape_target
from core.secrets import Redactor
from core.sites.server import StaticSite

FIXTURES = Path(__file__).parent / "fixtures" / "heals"

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def site():
    s = StaticSite(FIXTURES)
    s.start()
    yield s
    s.stop()


def _recorded_save(site: StaticSite):
    """The Save button of release 1 as the observer sees it (what a recording keeps)."""
    d = PlaywrightDriver(BrowserSettings(), base_url=site.base_url, redactor=Redactor(()), headless=True)
    d.open()
    try:
        d.goto("/v1/change.html")
        obs = d.observe(screenshot=False)
    finally:
        d.close()
    (save,) = [c for c in obs.candidates if c.descriptor.name_attr == "_save"]
    return escape_target(save.descriptor)


def test_a_release_drift_heal_presses_save_is_proposed_reused_and_accepted(site, tmp_path) -> None:
    recorded = _recorded_save(site)
    assert recorded.name == "Save" and recorded.bbox is not None
    root = tmp_path / "admin"
    (root / "flows").mkdir(parents=True)
    (root / "steadyhand.yaml").write_text(yaml.safe_dump({"name": "Admin", "base_url": site.base_url}))
    path = save_flow(Flow("edit_book", "/v2/change.html", (
        Step(id="s1", name="Save the book", action=Action("click"), target=recorded,
             assertions=(Assertion("text_appears", "was changed successfully"),)),)), root / "flows" / "edit_book.yaml")
    original = path.read_text()

    with ProjectSession(load_project(root), headless=True) as session:
        first = session.run_flow(load_flow(path))
        assert first.status == "passed", first.error  # the assertion proves Save was pressed, not Delete
        res = first.steps[0].resolution
        assert res.healed and res.strategy != PENDING_HEAL
        assert path.read_text() == original
        with HealReview(root, store=session.store) as review:
            (p,) = review.list_pending()
            assert p.new_target["name"] == "Save changes" and p.new_target["name_attr"] == "_save"
            assert p.strategy == res.strategy and review.evidence(p.id).before_screenshot.is_file()
        assert any(n.startswith(f"heal proposed #{p.id}: flows/edit_book.yaml step s1")
                   for n in session.heal_notes[first.run_id])

        second = session.run_flow(load_flow(path))
        assert second.status == "passed", second.error
        assert second.steps[0].resolution.strategy == PENDING_HEAL
        assert f"pending heal #{p.id} reused" in second.steps[0].resolution.reason
        with HealReview(root, store=session.store) as review:
            assert [(r.id, r.seen, r.reused) for r in review.list()] == [(p.id, 1, 1)]
            diff = review.accept(p.id)
        assert "+    name: Save changes" in diff and "-    name: Save" in diff
        assert load_flow(path).steps[0].assertions == (Assertion("text_appears", "was changed successfully"),)

        third = session.run_flow(load_flow(path))
        assert third.status == "passed", third.error
        assert third.steps[0].resolution.strategy == "exact" and third.heals == 0
