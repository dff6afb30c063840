"""Grid grounding (P1, P2): the image sent, the candidate listing and how an answer is tied to a DOM box."""
from __future__ import annotations

import io
from dataclasses import replace

import numpy as np
from PIL import Image

from core.perception.fake import FakeDriver
from core.plan.grounding import GroundAnswer, grounding_view, intersect, rule_fallback
from core.secrets import MASK, Redactor

# 1280 x 800 viewport, 10 x 10 grid: a cell is 128 x 80 CSS px (columns 1-10, rows A-J)
PAGE = [
    {"id": "user", "role": "textbox", "label": "User name", "bbox": [140, 90, 200, 40]},      # B2
    {"id": "pw", "role": "textbox", "label": "Password", "type": "password", "value": "s3cret-pw",
     "bbox": [140, 170, 200, 40]},                                                                # C2
    {"id": "go", "role": "button", "text": "Sign in", "bbox": [400, 330, 100, 40]},            # E4
    {"id": "help", "role": "link", "text": "Help", "bbox": [1160, 20, 60, 30]},                # A10
    {"id": "off", "role": "button", "text": "Delete all", "enabled": False, "bbox": [660, 650, 100, 40]},  # I6
]


def _obs(dpr: float = 2.0):
    d = FakeDriver(pages={"/login": PAGE})
    d.goto("/login")
    obs = d.observe()
    w, h = int(1280 * dpr), int(800 * dpr)
    img = Image.new("RGB", (w, h), (255, 255, 255))
    px = np.array(img)
    x, y, bw, bh = (int(v * dpr) for v in (140, 170, 200, 40))
    px[y:y + bh, x:x + bw] = (10, 200, 10)  # the password field, drawn green
    buf = io.BytesIO()
    Image.fromarray(px).save(buf, format="PNG")
    return replace(obs, screenshot_png=buf.getvalue(), device_pixel_ratio=dpr)


def test_image_downscaled_masked_and_gridded():
    obs = _obs(dpr=2.0)  # a 2560 px wide screenshot
    view = grounding_view(obs, redactor=Redactor(["s3cret-pw"]))
    img = np.array(Image.open(io.BytesIO(view.png)).convert("RGB"))
    assert view.size == (1440, 900) and img.shape[:2] == (900, 1440)
    assert abs(view.scale - 1440 / 1280) < 1e-9
    # the password field's region is painted over: no green pixel is left anywhere
    green = (img[:, :, 1] > 150) & (img[:, :, 0] < 80) & (img[:, :, 2] < 80)
    assert not green.any()
    # 2 px red lines at every cell border (x = 144 for column 2 at this scale), semi-transparent on white
    col = img[450, 143:145]
    assert (col[:, 0] > 200).all() and (col[:, 1] < 150).all()
    assert view.grid.rows == 10 and view.grid.cols == 10


def test_listing_ids_cells_and_no_secret():
    view = grounding_view(_obs(), redactor=Redactor(["s3cret-pw"]), image=False)
    lines = view.listing.splitlines()
    by_name = {view.ids[k].descriptor.label_text: (k, view.cells[k]) for k in view.ids}
    assert by_name["Sign in"][1] == "E4" and by_name["User name"][1] == "B2" and by_name["Help"][1] == "A10"
    assert "s3cret-pw" not in view.listing and MASK in view.listing
    assert any("'Delete all' | disabled" in ln for ln in lines)


def _ans(**kw):
    base = {"grid": "E4", "element_desc": "Sign in button", "action": "click", "reason": "r"}
    return GroundAnswer(**{**base, **kw})


def test_agreement_full_confidence():
    view = grounding_view(_obs(), image=False)
    k = view.id_of(next(c for c in view.ids.values() if c.descriptor.label_text == "Sign in"))
    g = intersect(_ans(element_id=k), view)
    assert g.verdict == "agree" and g.confidence == 1.0 and g.candidate.descriptor.label_text == "Sign in"
    g2 = intersect(_ans(), view)  # no id: the cell's element named like the description
    assert g2.verdict == "agree" and g2.candidate.descriptor.label_text == "Sign in"


def test_conflict_falls_back_to_rules_or_stays():
    view = grounding_view(_obs(), image=False)
    k = view.id_of(next(c for c in view.ids.values() if c.descriptor.label_text == "Sign in"))
    wrong_cell = _ans(grid="A10", element_id=k)
    g = intersect(wrong_cell, view)
    assert g.verdict == "conflict" and g.candidate is None and "E4" in g.reason
    settled = rule_fallback(wrong_cell, view, g)  # the id and the description agree: rules take it
    assert settled.verdict == "rules" and settled.confidence == 0.8 and settled.ok
    vague = _ans(grid="A10", element_id=k, element_desc="the blue thing")
    assert not rule_fallback(vague, view, intersect(vague, view)).ok


def test_disabled_target_refused():
    view = grounding_view(_obs(), image=False)
    k = view.id_of(next(c for c in view.ids.values() if c.descriptor.label_text == "Delete all"))
    g = intersect(_ans(grid="I6", element_id=k, element_desc="Delete all"), view)
    assert g.verdict == "not_actionable" and "disabled" in g.reason and g.candidate is None


def test_cell_outside_the_page():
    view = grounding_view(_obs(), image=False)
    g = intersect(_ans(grid="K12"), view)
    assert g.verdict == "outside" and "outside the 10x10 grid" in g.reason
    assert rule_fallback(_ans(grid="K12"), view, g).verdict == "outside"  # never settled by rules


def test_unknown_action_rejected_by_schema():
    import pytest
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        GroundAnswer(grid="A1", action="drag", element_desc="x")


def test_an_id_whose_element_is_not_the_one_described_is_a_conflict():
    """Ids are positions in this listing: a cached or stale answer can name the right cell and the wrong
    element ("Help" described, "Close account" under that id) - never an agreement."""
    view = grounding_view(_obs(), image=False)
    k = view.id_of(next(c for c in view.ids.values() if c.descriptor.label_text == "Sign in"))
    g = intersect(GroundAnswer(grid="E4", element_desc="Help", action="click", reason="r", element_id=k), view)
    assert g.verdict == "conflict" and not g.ok and "described 'Help'" in g.reason
