"""The actions exploration tries on one page (P4 exploration) - pure, no browser."""
from __future__ import annotations

from core.domain import BBox, Candidate, ElementDescriptor, Observation, StateSignature
from core.engine.explore import options_of


def _obs(*cands: Candidate) -> Observation:
    sig = StateSignature("http://h/", "t", 0, 0, "", "", "", False, 0, "", "d")
    return Observation("http://h/", "t", (1280, 800), 1.0, (0, 0), cands, "", sig)


def _link(ref: str, name: str, href: str, *, role: str = "link", xpath: str = "") -> Candidate:
    return Candidate(ref, ElementDescriptor(tag="a", role=role, name=name, text=name, href=href,
                                            xpath=xpath or f"/html/body/a[{ref}]", bbox=BBox(0, 0, 50, 20)))


def test_a_link_and_a_tab_to_the_same_address_under_the_same_words_are_one_action() -> None:
    opts = options_of(_obs(_link("1", "Requests", "/requests"), _link("2", "Requests", "/requests", role="tab"),
                           _link("3", "Reports", "/reports")), {}, ())
    assert len(opts) == 2 and opts[0].step.target.role == "link"  # the first seen is kept
    assert sorted(o.step.target.href for o in opts) == ["/reports", "/requests"]


def test_same_words_to_different_addresses_stay_two_actions() -> None:
    opts = options_of(_obs(_link("1", "Next", "/page/2"), _link("2", "Next", "/archive/2")), {}, ())
    assert len(opts) == 2


def test_two_buttons_with_the_same_words_and_no_address_stay_two_actions() -> None:
    b1 = Candidate("1", ElementDescriptor(tag="button", role="button", name="Edit", xpath="/html/body/button[1]"))
    b2 = Candidate("2", ElementDescriptor(tag="button", role="button", name="Edit", xpath="/html/body/button[2]"))
    assert len(options_of(_obs(b1, b2), {}, ())) == 2
