"""A test id shared by several elements of the page is not recorded (issue 19 bench: Gradio's text boxes all
carry ``data-testid="textbox"``) - pure, no browser."""
from __future__ import annotations

from core.domain import Candidate, ElementDescriptor, Observation, StateSignature
from core.record.listener import _unique_test_id


def page(*test_ids: str) -> Observation:
    cands = tuple(Candidate(f"0:{i}", ElementDescriptor(tag="textarea", role="textbox", test_id=t))
                  for i, t in enumerate(test_ids))
    sig = StateSignature("http://h/", "t", 0, 0, "", "", "", False, 0, "", "d")
    return Observation("http://h/", "t", (1280, 800), 1.0, (0, 0), cands, "", sig)


def test_a_shared_test_id_is_dropped_and_a_unique_one_kept() -> None:
    box = ElementDescriptor(tag="textarea", role="textbox", name="Name", test_id="textbox")
    assert _unique_test_id(box, page("textbox", "textbox", "textbox")).test_id == ""
    assert _unique_test_id(box, page("textbox", "save")).test_id == "textbox"
    assert _unique_test_id(box, None).test_id == "textbox"  # the page unknown: kept as seen
    assert _unique_test_id(ElementDescriptor(tag="a"), page("x", "x")) == ElementDescriptor(tag="a")
