"""The landing check's landmark, changed-region and target-state signals (issue 19, item 1) - pure, no browser."""
from __future__ import annotations

from core.act.after import observed_after, target_state
from core.act.landing import judge_landing, weigh_landing
from core.act.regions import PageRegions, changed_regions, region_moved
from core.domain import AfterState, Candidate, ElementDescriptor, Observation, StateSignature


def obs(url: str, *cands: Candidate) -> Observation:
    sig = StateSignature(url, "t", 0, 0, "", "", "", False, 0, "", "d")
    return Observation(url, "t", (1280, 800), 1.0, (0, 0), tuple(cands), "", sig)


def box(checked: bool) -> Candidate:
    return Candidate("0:c", ElementDescriptor(tag="input", role="checkbox", id="done", label="Done"),
                     checked=checked)


REC = AfterState(url_pattern="/admin/", title="Site overview | Acme", heading="Acme administration",
                 landmark="Site overview")


def test_the_main_landmark_is_a_signal_of_its_own() -> None:
    # title and first heading changed, route and main landmark hold: a split
    now = AfterState(url_pattern="/admin/", title="Dashboard - Acme", heading="Site overview",
                     landmark="Site overview")
    assert weigh_landing(REC, now).kind == "elsewhere"  # the landmark unread now: two of three disagree
    assert weigh_landing(REC, now, landmark_known=True).kind == "elsewhere"  # a split, reversible: another page
    got = weigh_landing(REC, now, landmark_known=True, irreversible=True)
    assert got.kind == "drifted" and set(got.drifted) == {"title", "heading"}, got
    # one signal of four drifted: a change whatever the step
    assert weigh_landing(REC, AfterState(url_pattern="/admin/", title="Site overview | Acme", heading="Other",
                                         landmark="Site overview"), landmark_known=True).kind == "drifted"


def test_a_landmark_that_is_the_heading_counts_once() -> None:
    rec = AfterState(url_pattern="/a/", title="T", heading="Orders", landmark="Orders")
    now = AfterState(url_pattern="/a/", title="T", heading="Invoices", landmark="Invoices")
    got = weigh_landing(rec, now, landmark_known=True)
    assert got.kind == "drifted" and got.drifted == ("heading",), got


def test_an_irreversible_step_is_elsewhere_on_evidence_or_when_nothing_agrees() -> None:
    other = AfterState(url_pattern="/login/", title="Log in", heading="Log in", landmark="Log in")
    assert weigh_landing(REC, other, landmark_known=True, irreversible=True).kind == "elsewhere"
    split = AfterState(url_pattern="/admin/", title="Dashboard", heading="Welcome", landmark="Site overview")
    assert weigh_landing(REC, split, landmark_known=True, irreversible=True,
                         evidence="the page answered 500").kind == "elsewhere"


def test_changed_regions_are_innermost_first_and_compare_by_role_and_name() -> None:
    before = PageRegions("Board", (("main: Board", "a", ()), ("region: Pinned", "b", ("main: Board",)),
                                   ("region: Recent", "c", ("main: Board",))))
    after = PageRegions("Board", (("main: Board", "a2", ()), ("region: Pinned", "b2", ("main: Board",)),
                                  ("region: Recent", "c", ("main: Board",))))
    assert changed_regions(before, after) == (["region: Pinned"], ["region: Pinned", "main: Board"])
    present = [k for k, _, _ in before.regions]
    assert region_moved("region: Pinned", ["region: Pinned", "main: Board"], present) == ""
    assert region_moved("region: Pinned notes", ["region: Pinned"], present) == ""  # the same name, shortened
    assert region_moved("region: Pinned", ["region: Recent", "main: Board"], present) == (
        "the step changed the section 'Recent' where the recording changed the section 'Pinned'")
    assert "nothing changed" in region_moved("region: Pinned", [], present)
    # renamed: no region of that name on the page, one of the same role changed
    assert region_moved("region: Starred", ["region: Pinned"], present) == ""
    assert region_moved("form: New note", ["region: Pinned"], present) != ""


def test_judge_landing_reads_the_regions_only_on_the_page_the_step_stayed_on() -> None:
    rec = AfterState(url_pattern="/", title="Board", heading="Board", landmark="Board", region="region: Pinned")
    now = AfterState(url_pattern="/", title="Board", heading="Board")
    before = PageRegions("Board", (("region: Pinned", "b", ()), ("region: Recent", "c", ())))
    moved = PageRegions("Board", (("region: Pinned", "b", ()), ("region: Recent", "c2", ())))
    mism, drift = judge_landing(rec, now, before=obs("http://h/"), after=obs("http://h/"),
                                regions_before=before, regions_after=moved)
    assert not mism and "the section 'Recent' where the recording changed the section 'Pinned'" in drift
    mism, drift = judge_landing(rec, now, before=obs("http://h/"), after=obs("http://h/"))
    assert not mism and not drift  # not read: the recorded region does not count


def test_the_targets_own_state() -> None:
    before, after = obs("http://h/", box(False)), obs("http://h/", box(True))
    assert target_state(before, after, box(False)) == "checked"
    assert target_state(after, before, box(True)) == "unchecked"
    assert target_state(before, before, box(False)) == ""
    assert observed_after(before, after, target=box(False)).target_state == "checked"
    rec = AfterState(url_pattern="/", title="Todo", target_state="checked")
    assert weigh_landing(rec, AfterState(url_pattern="/", title="Todo", target_state="checked")).kind == "holds"
    got = weigh_landing(rec, AfterState(url_pattern="/", title="Todo"))
    assert got.kind == "drifted" and "did not leave the element it acted on checked" in got.reason, got
