"""Safety rules and the RELATIVE / VISUAL levels of the locator chain (R2), pure logic.

Descriptors are built the way the in-page observer builds them: role and
accessible name from the accessibility tree, tag, type, the HTML ``name``
attribute, an XPath, a box in CSS px, the container (form / dialog title)
and, for recorded targets, the anchor.
"""
from __future__ import annotations

import numpy as np
import pytest

from core.domain import Anchor, BBox, Candidate, ElementDescriptor
from core.domain.settings import LocatorConfig
from core.locate import TextBox, resolve
from core.locate.features import features_of, looks_generated
from core.locate.safety import contradicts, crosses_roles, others_agree
from core.locate.textsim import CASE_VARIANT_SCORE


def el(tag: str, role: str, name: str, x: float, y: float, *, w: float = 100, h: float = 30,
       **kw) -> ElementDescriptor:
    fields = dict(tag=tag, role=role, name=name, text=name if tag not in ("input",) else "",
                  bbox=BBox(x, y, w, h))
    fields.update(kw)
    return ElementDescriptor(**fields)


def cand(ref: str, d: ElementDescriptor, **kw) -> Candidate:
    return Candidate(ref=ref, descriptor=d, **kw)


# --- kind 11: case and punctuation variants ---------------------------------------------------

def test_case_variants_on_one_page_are_different_targets() -> None:
    upper = el("button", "button", "No", 10, 10)
    lower = el("button", "button", "no", 10, 60)
    page = [cand("0:0", upper), cand("0:1", lower)]
    assert (resolve(upper, page).ref, resolve(upper, page).strategy) == ("0:0", "exact")
    assert (resolve(lower, page).ref, resolve(lower, page).strategy) == ("0:1", "exact")
    # both moved 200 px: the label as shown still tells them apart (1.00 vs 0.90 = one margin)
    moved = [cand("0:0", upper.with_(bbox=BBox(210, 10, 100, 30))), cand("0:1", lower.with_(bbox=BBox(210, 60, 100, 30)))]
    res = resolve(upper, moved)
    assert res.ref == "0:0" and res.strategy == "fuzzy_text" and res.score == 1.0


def test_a_case_variant_is_not_a_full_match_and_two_of_them_tie() -> None:
    target = el("a", "link", "Ut", 10, 10)
    only = resolve(target, [cand("0:0", el("a", "link", "ut.", 300, 10))])
    assert only.ref == "0:0" and only.score == pytest.approx(CASE_VARIANT_SCORE)
    in_place = resolve(target, [cand("0:0", el("a", "link", "ut.", 10, 10))])  # alone, in its place: a changed name
    assert (in_place.ref, in_place.strategy, in_place.score) == ("0:0", "fuzzy_text", pytest.approx(CASE_VARIANT_SCORE))
    assert in_place.healed and "changed only in case or punctuation" in in_place.reason
    both = resolve(target, [cand("0:0", el("a", "link", "ut.", 10, 10)), cand("0:1", el("a", "link", "UT", 10, 10))])
    assert both.abstained and both.ref is None
    assert all(c.score < 1.0 for c in both.top)


def _sign_in_form(name: str, **kw) -> list[Candidate]:
    return [cand("0:0", el("input", "textbox", "Email", 10, 10, label="Email", container="Sign in")),
            cand("0:1", el("button", "button", name, 10, 60, container="Sign in", **kw)),
            cand("0:2", el("a", "link", "Forgot password?", 10, 110, container="Sign in"))]


@pytest.mark.parametrize("renamed", ["Sign-in", "sign in", "SIGN IN", "Sign in!"])
def test_a_name_changed_only_in_case_or_punctuation_is_a_heal_never_exact(renamed: str) -> None:
    target = el("button", "button", "Sign in", 10, 60, container="Sign in")
    for irreversible in (False, True):  # the same control in the same place: acted on, even for a write
        res = resolve(target, _sign_in_form(renamed), irreversible=irreversible)
        assert res.ref == "0:1" and not res.abstained, res.reason
        assert res.strategy != "exact" and res.healed, (res.strategy, res.reason)
        assert res.score < 1.0 and "'Sign in' -> '%s'" % renamed in res.reason, res.reason
    # the exact level alone (the fast path's and the pending heals' check) finds nothing
    only_exact = resolve(target, _sign_in_form(renamed), config=LocatorConfig(strategies=("exact",)))
    assert only_exact.abstained


def test_a_name_recorded_in_css_capitals_is_the_same_name_shown_in_its_own_case() -> None:
    target = el("button", "button", "EMPLOYEE", 10, 60)  # the recorder read the header as CSS showed it
    res = resolve(target, [cand("0:0", el("button", "button", "Employee", 10, 60)),
                           cand("0:1", el("button", "button", "Type", 120, 60))])
    assert (res.ref, res.strategy, res.score) == ("0:0", "exact", pytest.approx(CASE_VARIANT_SCORE)), res.reason
    # the other way round the page itself now shouts: a changed name, a heal
    back = resolve(el("button", "button", "Employee", 10, 60), [cand("0:0", el("button", "button", "EMPLOYEE", 10, 60))])
    assert back.ref == "0:0" and back.strategy != "exact" and back.healed
    # a punctuation change beside the capitals is no CSS reading either
    other = resolve(el("button", "button", "SIGN IN", 10, 60), [cand("0:0", el("button", "button", "Sign-in", 10, 60))])
    assert other.strategy != "exact"
    # a select's name read in its option's case ("Priority" beside a "priority" option) is the same name
    sel = el("select", "combobox", "Priority", 10, 100, label="Priority")
    read = resolve(sel, [cand("0:0", el("select", "combobox", "priority", 10, 100, label="Priority"))])
    assert (read.ref, read.strategy) == ("0:0", "exact"), read.reason


def test_a_renamed_variant_elsewhere_or_beside_another_variant_is_no_exact_match_nor_place_identity() -> None:
    target = el("button", "button", "Sign in", 10, 60, container="Sign in")
    moved = resolve(target, [cand("0:1", el("button", "button", "Sign-in", 400, 300, container="Sign in"))],
                    irreversible=True)  # moved and renamed: not its place, so another level must agree
    assert moved.strategy != "exact" and "place" not in moved.confirmed_by, moved
    two = _sign_in_form("Sign-in") + [cand("0:3", el("button", "button", "SIGN IN", 10, 160, container="Sign in"))]
    res = resolve(target, two)
    assert res.abstained or res.strategy != "exact"
    assert not (res.ref == "0:1" and "changed only in case" in res.reason)


# --- kind 12 and kind 2: a contradicting name, a vanished input -------------------------------

def radio(label: str, y: float, **kw) -> ElementDescriptor:
    return el("input", "radio", label, 20, y, w=16, h=16, type="radio", name_attr="answer", label=label,
              container="Poll", **kw)


def test_a_radio_with_another_label_is_not_a_semantic_match() -> None:
    target = radio("Maybe", 100, xpath="/html/body/form/fieldset/input[3]")
    page = [cand("0:0", radio("Yes", 60, xpath="/html/body/form/fieldset/input[1]")),
            cand("0:1", radio("No", 100, xpath="/html/body/form/fieldset/input[3]"))]  # "Maybe" is gone
    res = resolve(target, page)
    assert res.abstained
    assert contradicts(features_of(target), features_of(page[1].descriptor))
    sem = next(tr for tr in res.trace if tr.level == "semantic")
    assert not sem.winner


def test_the_target_input_gone_and_another_of_the_same_type_next_to_it_abstains() -> None:
    target = el("input", "textbox", "Email", 100, 100, w=240, type="email", name_attr="email", label="Email",
                container="Sign up", xpath="/html/body/form/div[2]/input")
    page = [cand("0:0", el("input", "textbox", "Phone", 100, 140, w=240, type="email", name_attr="phone",
                           label="Phone", container="Sign up", xpath="/html/body/form/div[2]/input")),
            cand("0:1", el("button", "button", "Sign up", 100, 200, container="Sign up"))]
    res = resolve(target, page)
    assert res.abstained and res.ref is None


# --- kind 15: positive agreement ----------------------------------------------------------------

def test_a_lone_low_scoring_candidate_of_another_role_is_no_heal() -> None:
    target = el("a", "link", "Edit title", 10, 10, href="/books/1/edit", xpath="/html/body/main/table/tr[1]/td[3]/a")
    page = [cand("0:0", el("button", "button", "", 12, 10, xpath="/html/body/main/table/tr[1]/td[3]/button"))]
    res = resolve(target, page)
    assert res.abstained
    assert all(not tr.winner for tr in res.trace)


def test_a_target_without_name_text_or_ids_is_not_healed_on_place_alone() -> None:
    target = ElementDescriptor(tag="button", role="button", xpath="/html/body/div[1]/button[2]", bbox=BBox(10, 10, 30, 30))
    page = [cand("0:0", ElementDescriptor(tag="button", role="button", xpath="/html/body/div[1]/button[2]",
                                          bbox=BBox(60, 10, 30, 30)))]
    res = resolve(target, page)
    assert res.abstained
    assert "no name, text, ids or stable classes" in res.reason


# --- roles ----------------------------------------------------------------------------------------

def test_a_heal_never_crosses_roles_unless_every_other_attribute_agrees() -> None:
    target = el("input", "button", "Save", 400, 500, type="submit", name_attr="_save", container="Change book")
    link = el("a", "link", "Save", 100, 500, href="/books/1/save", container="Change book")
    assert crosses_roles(features_of(target), features_of(link))
    assert not others_agree(features_of(target), features_of(link))  # the name attribute does not agree
    res = resolve(target, [cand("0:0", link)])
    assert res.abstained and "crosses" in res.reason
    # a link that kept the button's name attribute and name: every other attribute agrees
    same = link.with_(name_attr="_save")
    res = resolve(target, [cand("0:0", same)])
    assert res.ref == "0:0" and res.role_crossing


def test_a_name_alone_never_lets_a_heal_cross_roles() -> None:
    """A submit button "Insert" renamed "Save row" beside a tab link "Insert": the two agree by name and by
    nothing else (the name is what the text level matched), so the link is never pressed in its place."""
    target = el("button", "button", "Insert", 400, 500, type="submit", classes=("btn", "btn-primary"))
    tab = el("a", "link", "Insert", 100, 80, href="/customers/insert/", classes=("nav-link",))
    saved = el("button", "button", "Save row", 400, 540, type="submit", classes=("btn", "btn-primary"))
    assert not others_agree(features_of(target), features_of(tab))
    res = resolve(target, [cand("0:0", tab), cand("0:1", saved)])
    assert res.ref != "0:0", res.reason
    # a label of its own (a <label> for it, not its text) that agrees too is another attribute
    assert others_agree(features_of(target.with_(label="Insert")), features_of(tab.with_(label="Insert")))


def test_a_same_named_link_elsewhere_while_the_recorded_address_is_on_the_page_is_another_link() -> None:
    """The tab "Query" (to /customers/query/) renamed "SQL" while the navigation bar's "Query" goes to /query/:
    the recorded link address is still on the page, so the bar's link is another control; the chain abstains."""
    target = el("a", "link", "Query", 300, 120, href="/customers/query/", classes=("nav-link",))
    page = [cand("0:0", el("a", "link", "SQL", 300, 160, href="/customers/query/", classes=("nav-link",))),
            cand("0:1", el("a", "link", "Query", 900, 10, href="/query/", classes=("nav-link",)))]
    res = resolve(target, page)
    assert res.abstained and res.ref is None, res.reason
    assert "the recorded link address '/customers/query' is still on the page" in res.reason


def test_value_taking_roles_and_generic_elements_do_not_cross() -> None:
    f = features_of
    assert not crosses_roles(f(ElementDescriptor(tag="input", role="textbox")), f(ElementDescriptor(tag="div", role="combobox")))
    assert not crosses_roles(f(ElementDescriptor(tag="span")), f(ElementDescriptor(tag="a")))
    assert crosses_roles(f(ElementDescriptor(tag="input", type="checkbox")), f(ElementDescriptor(tag="button")))
    assert crosses_roles(f(ElementDescriptor(tag="input", type="checkbox")), f(ElementDescriptor(tag="input", type="radio")))


# --- kind 3: hidden, disabled or covered best candidate ----------------------------------------

@pytest.mark.parametrize("state", [dict(visible=False), dict(enabled=False), dict(covered=True)])
def test_a_hidden_disabled_or_covered_best_heal_is_not_taken_nor_its_runner_up(state: dict) -> None:
    target = el("button", "button", "Export report", 10, 10, container="Reports")
    page = [cand("0:0", el("button", "button", "Export report (E)", 300, 10, container="Reports"), **state),
            cand("0:1", el("button", "button", "Export", 300, 60, container="Reports"))]
    res = resolve(target, page)
    assert res.abstained and res.ref is None
    assert "runner-up" in res.reason


def test_an_exact_match_that_is_disabled_is_left_to_the_precheck() -> None:
    target = el("button", "button", "Submit", 10, 10)
    res = resolve(target, [cand("0:0", target, enabled=False), cand("0:1", el("button", "button", "Cancel", 10, 60))])
    assert (res.ref, res.strategy) == ("0:0", "exact")


# --- irreversible steps -------------------------------------------------------------------------

def test_an_irreversible_step_is_not_healed_on_one_level() -> None:
    target = el("button", "button", "Submit", 100, 300, container="Leave request",
                anchor=Anchor("Reason", "label", 0.0, 60.0))
    moved = el("button", "button", "Submit (S)", 100, 420, container="Leave request")
    # "Cancel" took the recorded place: the attributes other than the text point at it, not at "Submit (S)"
    page = [cand("0:0", moved), cand("0:1", el("button", "button", "Cancel", 100, 300, container="Leave request"))]
    reversible = resolve(target, page)
    assert reversible.ref == "0:0" and reversible.strategy == "fuzzy_text"
    res = resolve(target, page, irreversible=True)
    assert res.abstained and "irreversible" in res.reason
    # the anchor moved with the button: RELATIVE agrees, a second independent level
    anchors = [TextBox("Reason", "label", BBox(100, 330, 100, 30))]  # centre (150, 345) + (0, 60) -> (150, 405)
    res = resolve(target, page, irreversible=True, anchors=anchors)
    assert res.ref == "0:0" and res.confirmed_by == ("fuzzy_text", "relative")


def test_an_irreversible_heal_confirmed_by_the_other_attributes() -> None:
    # the form's only submit button, same type, classes and neighbours, moved and relabelled
    target = el("button", "button", "Sign in", 475, 516, type="submit", classes=("btn", "btn-primary"),
                neighbours=("Password", "User name"), xpath="/html/body/main/section/form/div[3]/button")
    page = [cand("0:0", el("input", "textbox", "User name", 475, 380, w=330, label="User name",
                           neighbours=("Password",), xpath="/html/body/main/section/form/div[1]/input")),
            cand("0:1", el("a", "link", "Forgot password?", 600, 600, neighbours=("Sign in",),
                           xpath="/html/body/main/section/p/a")),
            cand("0:2", el("button", "button", "Sign in →", 475, 560, type="submit", classes=("btn", "btn-primary"),
                           neighbours=("Password", "User name"), xpath="/html/body/main/section/form/div[4]/button"))]
    res = resolve(target, page, irreversible=True)
    assert res.ref == "0:2" and res.confirmed_by == ("fuzzy_text", "semantic")


def test_an_exact_match_needs_no_confirmation_on_an_irreversible_step() -> None:
    target = el("button", "button", "Delete", 10, 10)
    res = resolve(target, [cand("0:0", target)], irreversible=True)
    assert (res.ref, res.strategy, res.confirmed_by) == ("0:0", "exact", ("exact",))


# --- RELATIVE -------------------------------------------------------------------------------------

def test_relative_finds_an_unnamed_field_at_its_anchor_offset() -> None:
    target = ElementDescriptor(tag="input", role="textbox", bbox=BBox(100, 140, 200, 30),
                               anchor=Anchor("Due date", "label", 0.0, 40.0))
    page = [cand("0:0", ElementDescriptor(tag="input", role="textbox", bbox=BBox(400, 250, 200, 30))),
            cand("0:1", ElementDescriptor(tag="input", role="textbox", bbox=BBox(400, 340, 200, 30)))]
    anchors = [TextBox("Due date", "label", BBox(400, 215, 200, 20))]  # centre y 225 + 40 = 265 -> 0:0
    res = resolve(target, page, anchors=anchors)
    assert (res.ref, res.strategy) == ("0:0", "relative")
    assert res.score == pytest.approx(0.6)
    # the anchor twice on the page is not found exactly: falls through
    twice = anchors + [TextBox("Due date", "label", BBox(400, 305, 200, 20))]
    assert resolve(target, page, anchors=twice).abstained
    # case matters for the anchor too
    assert resolve(target, page, anchors=[TextBox("due date", "label", BBox(400, 215, 200, 20))]).abstained


def test_relative_never_takes_another_role_at_the_offset() -> None:
    target = el("input", "button", "Save", 400, 500, type="submit", anchor=Anchor("Change book", "heading", 300, 400))
    page = [cand("0:0", el("a", "link", "Delete", 400, 500))]  # the link moved where the button was
    res = resolve(target, page, anchors=[TextBox("Change book", "heading", BBox(0, 80, 200, 40))])
    assert res.abstained


# --- VISUAL ---------------------------------------------------------------------------------------

def _page_image(dpr: float, spots: list[tuple[float, float]], patch: np.ndarray) -> np.ndarray:
    """A 640x400 CSS px page (device px = CSS px * dpr) with ``patch`` pasted at CSS ``spots``."""
    import cv2

    img = np.full((int(400 * dpr), int(640 * dpr)), 235, dtype=np.uint8)
    # the page draws the patch at dpr as the locator rescales a crop (bilinear): outlines compare, not blocks
    scaled = cv2.resize(patch, None, fx=dpr, fy=dpr, interpolation=cv2.INTER_LINEAR)
    for x, y in spots:
        X, Y = int(x * dpr), int(y * dpr)
        img[Y:Y + scaled.shape[0], X:X + scaled.shape[1]] = scaled
    return img


def _patch() -> np.ndarray:
    rng = np.random.default_rng(7)
    return (rng.integers(0, 8, size=(8, 30)) * 32).repeat(4, axis=0).repeat(4, axis=1).astype(np.uint8)[:30, :100]


def test_visual_matches_the_crop_and_picks_the_overlapping_candidate() -> None:
    import cv2

    patch = _patch()
    crop = cv2.imencode(".png", patch)[1].tobytes()  # recorded at dpr 1
    target = ElementDescriptor(tag="button", role="button", bbox=BBox(20, 20, 100, 30), crop="f.crops/s1.png")
    page = [cand("0:0", ElementDescriptor(tag="button", role="button", bbox=BBox(300, 200, 100, 30))),
            cand("0:1", ElementDescriptor(tag="button", role="button", bbox=BBox(300, 260, 100, 30)))]
    shot = _page_image(2.0, [(300, 200)], patch)  # replayed on a dpr-2 screen
    res = resolve(target, page, screenshot=cv2.imencode(".png", shot)[1].tobytes(), screenshot_dpr=2.0, crop=crop)
    assert (res.ref, res.strategy) == ("0:0", "visual")
    twice = _page_image(2.0, [(300, 200), (300, 260)], patch)
    res = resolve(target, page, screenshot=twice, screenshot_dpr=2.0, crop=crop)
    assert res.abstained and "matches twice" in res.reason


def test_visual_needs_a_crop_and_a_screenshot() -> None:
    target = ElementDescriptor(tag="button", role="button", bbox=BBox(20, 20, 100, 30))
    res = resolve(target, [cand("0:0", ElementDescriptor(tag="button", role="button", bbox=BBox(300, 200, 100, 30)))])
    vis = next(tr for tr in res.trace if tr.level == "visual")
    assert not vis.winner and "no recorded crop" in vis.reason


# --- kind 10: two same-named links ---------------------------------------------------------------

def link(name: str, xpath: str, y: float) -> ElementDescriptor:
    return el("a", "link", name, 20, y, href="/db/books", xpath=xpath)


def test_breadcrumb_and_title_link_of_one_name_abstain_unless_the_landmark_separates_them() -> None:
    target = link("books", "/html/body/div[1]/div[2]/a[2]", 40)
    flat = [cand("0:0", link("books", "/html/body/div[1]/div[2]/a[2]", 80)),
            cand("0:1", link("books", "/html/body/div[1]/h1/a", 130))]
    res = resolve(target, flat)
    assert res.abstained
    recorded = link("books", "/html/body/header/nav/p/a[2]", 40)
    page = [cand("0:0", link("books", "/html/body/header/nav/p/a[2]", 80)),
            cand("0:1", link("books", "/html/body/main/h1/a", 130))]
    res = resolve(recorded, page)
    assert res.ref == "0:0"


# --- the record of a resolution --------------------------------------------------------------

def test_every_resolution_records_levels_candidates_and_time() -> None:
    target = el("button", "button", "Export report", 10, 10)
    page = [cand("0:0", el("button", "button", "Export report (E)", 300, 10)),
            cand("0:1", el("button", "button", "Save report", 400, 10))]
    res = resolve(target, page)
    assert res.strategy == "fuzzy_text" and res.considered == 2 and res.ms >= 0.0
    assert [tr.level for tr in res.trace] == ["exact", "fuzzy_text"]
    assert not res.trace[0].winner and res.trace[1].winner
    assert res.trace[1].best is not None and res.trace[1].best.ref == "0:0"
    assert res.trace[1].runner_up is not None and res.trace[1].runner_up.ref == "0:1"
    res = resolve(target, [cand("0:1", el("button", "button", "Save report", 400, 10))])
    assert [tr.level for tr in res.trace] == ["exact", "fuzzy_text", "semantic", "relative", "visual"]


def test_generated_classes_and_ids_are_recognised() -> None:
    for tok in ("css-118ydgp", "e1d5eg6m0", "_yb_180ow", "Input-sc-4ry0fw-0", "jbZScm"):
        assert looks_generated(tok), tok
    for tok in ("nav-sprite", "btn-primary", "col-md-6", "select-signin", "uhfLogo"):
        assert not looks_generated(tok), tok
    assert looks_generated("mat-input-4", is_id=True) and not looks_generated("login-password", is_id=True)
    assert features_of(ElementDescriptor(tag="a", id="ember123")).id == ""


def test_a_lone_radio_of_the_group_is_not_the_vanished_one() -> None:
    # the group's name attribute is unique once one radio is left: it names the group, not the radio
    target = radio("Maybe", 100, xpath="/html/body/form/fieldset/div[3]/input")
    res = resolve(target, [cand("0:0", radio("No", 100, xpath="/html/body/form/fieldset/div[2]/input"))])
    assert res.abstained and res.ref is None


# --- a label that gained words, at the recorded CSS path (datasette drift, step s7) --------------

FORM_SUBMIT = "html > body > section > form > div:nth-of-type(4) > input:nth-of-type(2)"


def _submit(name: str, x: float, **kw) -> ElementDescriptor:
    return el("input", "button", name, x, 300, type="submit", css_path=kw.pop("css_path", FORM_SUBMIT), **kw)


def test_a_grown_label_at_the_recorded_css_path_heals_and_only_there() -> None:
    target = _submit("Apply", 16)
    others = [cand("0:1", el("a", "link", "JSON", 600, 40)), cand("0:2", el("button", "button", "Remove filter", 300, 250))]
    moved = cand("0:0", _submit("Apply filters", 290))
    res = resolve(target, [moved, *others])
    assert (res.ref, res.strategy) == ("0:0", "fuzzy_text") and res.score < 0.8
    # the same button elsewhere in the document is not evidence enough
    elsewhere = cand("0:0", _submit("Apply filters", 290, css_path="html > body > section > div > input"))
    assert resolve(target, [elsewhere, *others]).abstained
    # two controls of its kind whose labels hold 'Apply': neither is taken
    twin = cand("0:3", _submit("Apply all", 400, css_path="html > body > section > form > div:nth-of-type(5) > input"))
    assert resolve(target, [moved, twin, *others]).abstained
    # another kind at that path (a link) is not it
    link = cand("0:0", el("a", "link", "Apply filters", 290, 300, css_path=FORM_SUBMIT))
    assert resolve(target, [link, *others]).abstained
    # an irreversible step needs a second, independent level
    assert resolve(target, [moved, *others], irreversible=True).abstained


def test_exact_compares_page_coordinates_when_the_recording_had_scrolled() -> None:
    """A click that scrolled the link into view recorded it at viewport y 500 with scrollY 3200; the replay
    sees the page from its top, the link at y 3700: the same place in the page.  A fixed header button
    keeps its viewport box whatever the scroll: that matches too."""
    recorded = el("a", "link", "Next page", 20, 500, scroll=(0.0, 3200.0))
    page_top = [cand("0:0", el("a", "link", "Next page", 20, 3700, scroll=(0.0, 0.0))),
                cand("0:1", el("a", "link", "Next page", 20, 900, scroll=(0.0, 0.0)))]
    res = resolve(recorded, page_top)
    assert (res.strategy, res.ref) == ("exact", "0:0")
    fixed = el("button", "button", "Menu", 20, 10, scroll=(0.0, 3200.0))
    assert resolve(fixed, [cand("0:0", el("button", "button", "Menu", 20, 10, scroll=(0.0, 0.0)))]).strategy == "exact"
    # without a recorded scroll (older files) only the viewport box counts, as before
    old = el("a", "link", "Next page", 20, 500)
    assert resolve(old, page_top).strategy != "exact"
    assert ElementDescriptor.from_mapping(recorded.to_mapping()).scroll == (0.0, 3200.0)


def test_the_relative_level_never_says_an_anchor_is_absent_when_it_was_not_looked_for() -> None:
    # issue 23: "anchor 'Leave requests' not on the page" while the heading was on the page - the caller had
    # not handed in the page's labels and headings
    target = el("a", "link", "New request", 900, 120, anchor=Anchor("Leave requests", "heading", 700.0, 0.0))
    page = [cand("0:0", el("a", "link", "Add a request", 900, 120)), cand("0:1", el("a", "link", "Sign out", 1200, 20))]
    res = resolve(target, page)
    assert "not on the page" not in res.reason
    assert "anchor 'Leave requests' not looked for (the page's labels and headings were not read)" in res.reason
    heading = [TextBox("Leave requests", "heading", BBox(100, 100, 200, 40))]  # centre (200, 120) + (700, 0)
    res = resolve(target, page, anchors=heading)
    assert "not looked for" not in res.reason and "not among" not in res.reason  # found: the level measured from it
    other = [TextBox("All requests", "heading", BBox(100, 300, 200, 40))]
    assert "anchor 'Leave requests' not among the page's labels and headings" in resolve(target, page,
                                                                                         anchors=other).reason


def test_a_fall_through_names_the_best_then_the_next_best_with_both_scores() -> None:
    target = el("button", "button", "Export report", 10, 10)
    page = [cand("0:0", el("button", "button", "Export reports", 300, 300)),
            cand("0:1", el("button", "button", "Export the report", 600, 300)),
            cand("0:2", el("a", "link", "Help", 10, 500))]
    res = resolve(target, page, config=LocatorConfig(strategies=("fuzzy_text",)))
    assert res.abstained
    fuzzy = res.reason.split("; ")[0]
    (a, sa), (b, sb) = ((c.label, c.score) for c in res.top[:2])
    assert sa >= sb > 0.0 and " leads " not in fuzzy and "<" not in fuzzy, fuzzy
    assert fuzzy.index(f"'{a}'") < fuzzy.index(f"'{b}'"), fuzzy
    assert f"scored {sa:.2f} and the next best" in fuzzy and f"{sb:.2f}: " in fuzzy, fuzzy
    assert "0.10 apart, under the margin 0.10" not in fuzzy and "apart, under the margin 0.10" in fuzzy, fuzzy
    assert all(c.score > 0.0 for c in res.top), res.top  # the link scored 0: not listed beside them
