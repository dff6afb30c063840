"""Heals on evidence that exists (issue 19): identity by role and name, siblings, ties, structural crops.

Pure logic; the same rules run end to end in tests/e2e/test_locate_evidence_run.py.
"""
from __future__ import annotations

import numpy as np

from core.domain import BBox, Candidate, ElementDescriptor
from core.locate import resolve


def el(tag: str, role: str, name: str, x: float, y: float, *, w: float = 100, h: float = 30, **kw) -> ElementDescriptor:
    fields = dict(tag=tag, role=role, name=name, text=name if tag != "input" else "", bbox=BBox(x, y, w, h))
    fields.update(kw)
    return ElementDescriptor(**fields)


def cand(ref: str, d: ElementDescriptor, **kw) -> Candidate:
    return Candidate(ref=ref, descriptor=d, **kw)


# --- the same role and name, unique in its form: the same control across a tag change ----------------

def test_submit_input_that_became_a_button_is_the_same_control_even_for_an_irreversible_step() -> None:
    recorded = el("input", "button", "Sign in", 40, 200, type="submit", id="login-btn",
                  xpath="/html/body/main/form/input[3]", container="Sign in")
    page = [cand("0:0", el("input", "textbox", "Username", 40, 100, xpath="/html/body/main/form/input[1]",
                           container="Sign in")),
            cand("0:1", el("button", "button", "Sign in", 60, 260, type="submit", id="submit",
                           xpath="/html/body/main/form/div/button", container="Sign in")),
            cand("0:2", el("a", "link", "Forgot password?", 60, 320, xpath="/html/body/main/form/a"))]
    res = resolve(recorded, page, irreversible=True)
    assert not res.abstained, res.reason
    assert res.ref == "0:1" and "identity" in res.confirmed_by and "the same control" in res.reason


def test_div_button_that_became_a_button_is_the_same_control() -> None:
    recorded = el("div", "button", "Delete draft", 40, 200, xpath="/html/body/main/section/div[2]")
    page = [cand("0:0", el("button", "button", "Delete draft", 300, 420, xpath="/html/body/main/section/button")),
            cand("0:1", el("button", "button", "Keep draft", 420, 420, xpath="/html/body/main/section/button[2]"))]
    res = resolve(recorded, page, irreversible=True)
    assert res.ref == "0:0" and "identity" in res.confirmed_by


def test_role_and_name_twice_on_the_page_or_in_another_form_is_no_identity() -> None:
    recorded = el("input", "button", "Save", 40, 200, type="submit", xpath="/html/body/main/form/input")
    twice = [cand("0:0", el("button", "button", "Save", 300, 400, xpath="/html/body/main/form/button")),
             cand("0:1", el("button", "button", "Save", 300, 700, xpath="/html/body/footer/button"))]
    assert resolve(recorded, twice, irreversible=True).abstained
    elsewhere = [cand("0:0", el("button", "button", "Save", 300, 400, xpath="/html/body/aside/div/button"))]
    res = resolve(recorded, elsewhere, irreversible=True)  # out of the form: not what the recording pressed
    assert res.abstained or "identity" not in res.confirmed_by
    case = [cand("0:0", el("button", "button", "SAVE", 300, 400, xpath="/html/body/main/form/button"))]
    res = resolve(recorded, case, irreversible=True)  # exact=True: the name as shown
    assert res.abstained or "identity" not in res.confirmed_by


def _task_page(*, renamed_keeps_id: bool, form_kept: bool) -> list[Candidate]:
    """The recorded form's "Add task" (``#add``) renamed "Save"; a new "Add task" (``#tpl-add``) in a new section."""
    form = "My list" if form_kept else ""
    page = [cand("0:0", el("input", "textbox", "New task", 40, 100, id="task", container=form,
                           xpath="/html/body/form/div[1]/input")),
            cand("0:1", el("button", "button", "Save", 40, 200, id="add" if renamed_keeps_id else "save",
                           container=form, xpath="/html/body/form/button[1]")),
            cand("0:2", el("button", "button", "Add task", 40, 600, id="tpl-add",
                           xpath="/html/body/section/button[1]"))]
    return page


_ADD = dict(id="add", css_path="button#add", xpath="/html/body/form/button[1]", container="My list",
            neighbours=("New task", "Priority"))


def test_the_same_name_elsewhere_while_the_recorded_id_is_on_the_page_is_another_control() -> None:
    recorded = el("button", "button", "Add task", 40, 200, **_ADD)
    for irreversible in (False, True):
        res = resolve(recorded, _task_page(renamed_keeps_id=True, form_kept=True), irreversible=irreversible)
        assert res.abstained and res.ref is None, res.reason
        assert "the recorded id 'add' is still on the page" in res.reason


def test_the_same_name_outside_the_recorded_form_still_on_the_page_is_another_control() -> None:
    recorded = el("button", "button", "Add task", 40, 200, **_ADD)
    res = resolve(recorded, _task_page(renamed_keeps_id=False, form_kept=True))
    assert res.abstained and res.ref is None, res.reason
    assert "the recorded form or region 'my list' is still on the page" in res.reason


def test_the_same_name_heals_when_the_recorded_form_and_id_are_gone() -> None:
    recorded = el("button", "button", "Add task", 40, 200, **_ADD)
    page = [cand("0:0", el("input", "textbox", "Search", 40, 100, id="q", xpath="/html/body/section/input")),
            cand("0:1", el("button", "button", "Add task", 40, 600, id="new-add",
                           xpath="/html/body/section/button[1]"))]
    res = resolve(recorded, page)
    assert not res.abstained and res.ref == "0:1", res.reason


# --- siblings of one role whose names share nothing with the recording: a guess ----------------------

def _radios(labels: list[str]) -> list[Candidate]:
    return [cand(f"0:{i}", el("input", "radio", lab, 20, 60 + 20 * i, w=16, h=16, type="radio", id=f"ch{i}",
                              name_attr="radio", xpath=f"/html/body/div/div[2]/div/label[{i + 1}]/input",
                              neighbours=("Select an option", "Submit")))
            for i, lab in enumerate(labels)]


def test_a_radio_with_new_random_labels_is_never_picked_by_its_positional_id_or_place() -> None:
    recorded = _radios(["Qdp", "Xwvr", "Kula"])[1].descriptor  # clicked 'Xwvr' (id ch1) on episode 1
    page = _radios(["Tiz", "Ebnao", "Mufo"])  # next episode: same ids, same places, other labels
    res = resolve(recorded, page)
    assert res.abstained and res.ref is None, res.reason
    assert "guess" in res.reason or "another name" in res.reason


def test_a_parameter_bound_option_is_still_found_among_its_siblings() -> None:
    recorded = _radios(["Qdp", "{option}", "Kula"])[1].descriptor
    bound = recorded.with_(name="Mufo")  # what the run binds the parameter to
    res = resolve(bound, _radios(["Tiz", "Ebnao", "Mufo"]))
    assert res.ref == "0:2" and not res.abstained


def test_a_renamed_link_with_its_own_id_is_still_healed() -> None:
    recorded = el("a", "link", "Post to classifieds", 20, 40, id="post", href="/post",
                  xpath="/html/body/div/section/ul/li[1]/a")
    page = [cand(f"0:{i}", el("a", "link", name, 20, 40 + 20 * i, id=ident, href=href,
                             xpath=f"/html/body/div/section/ul/li[{i + 1}]/a"))
            for i, (name, ident, href) in enumerate([("Create a posting", "post", "/post"),
                                                     ("My account", "", "/account"), ("Help", "", "/help")])]
    res = resolve(recorded, page)
    assert res.ref == "0:0"


def test_a_candidate_sharing_nothing_is_not_taken_for_its_place_alone() -> None:
    recorded = el("button", "button", "Archive", 400, 300, classes=("btn", "btn-primary"),
                  xpath="/html/body/main/div/button")
    page = [cand("0:0", el("button", "button", "Publish", 400, 300, classes=("btn", "btn-primary"),
                           xpath="/html/body/main/div/button")),
            cand("0:1", el("a", "link", "Home", 20, 20, xpath="/html/body/header/a"))]
    assert resolve(recorded, page).abstained


# --- ties ------------------------------------------------------------------------------------------

def test_a_heal_tied_under_the_floor_abstains_and_shows_both() -> None:
    recorded = el("button", "button", "Export", 40, 100, xpath="/html/body/main/div/button")
    page = [cand("0:0", el("button", "button", "Export", 40, 300, xpath="/html/body/main/section/button")),
            cand("0:1", el("button", "button", "Export", 40, 600, xpath="/html/body/footer/button"))]
    from core.locate.identity import TIE_FLOOR

    res = resolve(recorded, page)
    assert res.abstained and "tie" in res.reason and TIE_FLOOR > 0
    assert {s.ref for s in res.top[:2]} == {"0:0", "0:1"}


def test_copies_of_one_link_to_one_page_may_still_be_told_apart_by_place() -> None:
    recorded = el("a", "link", "books", 20, 40, href="/db/books", xpath="/html/body/header/nav/p/a[2]")
    page = [cand("0:0", el("a", "link", "books", 20, 80, href="/db/books", xpath="/html/body/header/nav/p/a[2]")),
            cand("0:1", el("a", "link", "books", 20, 130, href="/db/books", xpath="/html/body/main/h1/a"))]
    assert resolve(recorded, page).ref == "0:0"


# --- VISUAL on structure, not colours ----------------------------------------------------------------

def _button(text: str, fg: int, bg: int, border: int) -> np.ndarray:
    import cv2

    img = np.full((34, 120), bg, np.uint8)
    cv2.rectangle(img, (0, 0), (119, 33), border, 1)
    cv2.putText(img, text, (12, 23), cv2.FONT_HERSHEY_SIMPLEX, 0.6, fg, 1, cv2.LINE_AA)
    return img


def _shot(button: np.ndarray, x: int, y: int) -> bytes:
    import cv2

    page = np.full((400, 640), 245, np.uint8)
    page[y:y + button.shape[0], x:x + button.shape[1]] = button
    return cv2.imencode(".png", page)[1].tobytes()


def _visual(crop: np.ndarray, shot: bytes):
    import cv2

    target = ElementDescriptor(tag="div", role="button", bbox=BBox(20, 20, 120, 34), crop="c.png")
    page = [cand("0:0", ElementDescriptor(tag="button", role="button", bbox=BBox(300, 200, 120, 34))),
            cand("0:1", ElementDescriptor(tag="button", role="button", bbox=BBox(300, 300, 120, 34)))]
    res = resolve(target, page, screenshot=shot, crop=cv2.imencode(".png", crop)[1].tobytes())
    return res, next(tr for tr in res.trace if tr.level == "visual")


def test_a_recoloured_button_still_matches_its_crop_by_outline() -> None:
    crop = _button("Save", 20, 230, 120)  # dark text on light grey
    res, vis = _visual(crop, _shot(_button("Save", 250, 40, 40), 300, 200))  # light text on dark: restyled
    assert (res.ref, res.strategy) == ("0:0", "visual"), vis.reason


def test_a_look_alike_of_the_same_style_does_not_match_the_crop() -> None:
    crop = _button("Save", 20, 230, 120)
    res, vis = _visual(crop, _shot(_button("Sane", 20, 230, 120), 300, 200))
    assert res.abstained and not vis.winner


# --- links that differ only by their query string (datasette 1.0a41, issue 19) --------------------------------

def _genre_page(facet_first: bool) -> list[Candidate]:
    sort = el("a", "link", "genre", 300, 420, href="http://127.0.0.1:7001/library/books?_sort=genre",
              xpath="/html/body/div/section/div/table/thead/tr/th[5]/a")
    facet = el("a", "link", "genre", 150, 380,
               href="http://127.0.0.1:7001/library/books?_sort=year&_facet=genre#facet-genre",
               xpath="/html/body/div/section/form/div/p/a")
    return [cand("0:16", facet if facet_first else sort), cand("0:25", sort if facet_first else facet)]


def test_links_to_one_page_that_differ_by_their_query_are_told_apart_by_the_recorded_query() -> None:
    recorded = el("a", "link", "genre", 148, 370,
                  href="http://127.0.0.1:50981/library/books?_sort=year&_facet=genre#facet-genre",
                  xpath="/html/body/div/section/p[3]/a")
    for facet_first in (True, False):
        res = resolve(recorded, _genre_page(facet_first))
        assert not res.abstained, res.reason
        assert res.ref == ("0:16" if facet_first else "0:25"), res.reason
        assert "query is the recorded link's" in res.reason, res.reason


def test_a_query_that_matches_neither_link_leaves_the_tie() -> None:
    recorded = el("a", "link", "genre", 148, 370, href="http://127.0.0.1:50981/library/books?_size=50",
                  xpath="/html/body/div/section/p[3]/a")
    res = resolve(recorded, _genre_page(True))
    assert res.abstained and "tie" in res.reason, res.reason
