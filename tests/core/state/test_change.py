"""R1 change detection as pure logic: perceptual hash, key elements, layout signature, comparison.

Synthetic screenshots drawn with Pillow and hand-made candidates; no browser.
"""
from __future__ import annotations

import io
from dataclasses import replace

import pytest
from PIL import Image, ImageDraw, ImageEnhance

from core.domain import BBox, Candidate, ElementDescriptor, Observation
from core.domain.change import ChangeReport, ChangeThresholds, ElementChange, KeyElement
from core.state.change import (
    compare, fingerprint, key_elements, layout_signature, path_pattern, phash_similarity, screen_key, screen_phash,
)
from core.state.signature import light_signature


def _png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def ui(shift: tuple[int, int] = (0, 0), *, panel_at: int = 420, typed: str = "") -> Image.Image:
    """A made-up admin screen: top bar, side menu, a form card with fields and a button (1280 x 800)."""
    im = Image.new("RGB", (1280, 800), (236, 238, 242))
    d = ImageDraw.Draw(im)
    sx, sy = shift
    d.rectangle((0 + sx, 0 + sy, 1280 + sx, 64 + sy), fill=(40, 60, 110))
    d.rectangle((80 + sx, 120 + sy, 300 + sx, 700 + sy), fill=(220, 224, 230))
    d.rectangle((panel_at + sx, 200 + sy, panel_at + 440 + sx, 620 + sy), fill=(255, 255, 255), outline=(200, 200, 210))
    for i in range(6):
        d.rectangle((panel_at + 40 + sx, 240 + sy + i * 50, panel_at + 400 + sx, 270 + sy + i * 50),
                    outline=(150, 150, 160))
    if typed:
        d.text((panel_at + 46 + sx, 246 + sy), typed * 8, fill=(0, 0, 0))
    d.rectangle((panel_at + 40 + sx, 560 + sy, panel_at + 160 + sx, 595 + sy), fill=(30, 100, 220))
    return im


def cand(ref: str, role: str, name: str, x: float, y: float, w: float = 120, h: float = 36, **kw) -> Candidate:
    tag = {"button": "button", "link": "a", "textbox": "input", "columnheader": "th"}.get(role, "div")
    extra = {k: kw.pop(k) for k in ("editable", "value") if k in kw}
    d = ElementDescriptor(tag=tag, role=role, name=name, bbox=BBox(x, y, w, h),
                          css_path=kw.pop("css_path", f"main > {tag}:nth-of-type({ref})"), **kw)
    return Candidate(ref, d, **extra)


def obs(cands: list[Candidate], *, url: str = "http://127.0.0.1:8123/admin/books/7/change/", title: str = "Change book",
        png: bytes = b"", scroll: tuple[float, float] = (0.0, 0.0), modals: tuple[str, ...] = ()) -> Observation:
    sig = light_signature({"url": url, "title": title, "items": []})
    return Observation(url, title, (1280, 800), 1.0, scroll, tuple(cands), "", sig, png, modals)


FORM = [
    cand("1", "textbox", "Title", 460, 240, 360, 30, id="id_title", editable=True, value=""),
    cand("2", "textbox", "Author", 460, 290, 360, 30, id="id_author", editable=True, value=""),
    cand("3", "button", "Save", 460, 560, 120, 35, name_attr="_save"),
    cand("4", "link", "Delete", 600, 560, 80, 35, css_path="main > a.deletelink"),
]
FACTS = {"heading": "Change book",
         "headings": [{"role": "heading", "level": 1, "text": "Change book", "path": "h1", "box": [420, 150, 300, 30]}],
         "landmarks": [{"role": "main", "text": "", "path": "main#content", "box": [0, 64, 1280, 736]}]}


# --- screen identity ---------------------------------------------------------------------------


def test_path_pattern_keeps_the_route_and_drops_ids_host_port_and_query():
    assert path_pattern("http://127.0.0.1:8123/admin/books/7/change/?_changelist_filters=x#top") == \
        "/admin/books/{n}/change/"
    assert path_pattern("https://app.example/orders/3f2b9c1e-7a4d-4c2e-9d1a-0b5c6d7e8f90/") == "/orders/{id}/"
    assert path_pattern("http://h/") == "/"


def test_screen_key_names_path_title_heading_and_dialog_with_volatile_text_normalized():
    a = screen_key("http://127.0.0.1:1/requests/12", "Requests - 10:42", "Requests", "")
    b = screen_key("http://127.0.0.1:2/requests/13", "Requests - 11:05", "Requests", "")
    assert a == b == "/requests/{n} | Requests - <time> | Requests | "
    assert screen_key("http://h/requests", "Requests", "Requests", "Confirm export") != b


# --- perceptual hash -----------------------------------------------------------------------------


def test_phash_is_insensitive_to_brightness_and_small_shifts():
    base = screen_phash(_png(ui()))
    assert len(base) == 16
    for variant in (ImageEnhance.Brightness(ui()).enhance(0.8), ui().point(lambda v: max(0, v - 30)),
                    ui((1, 2)), ui((2, 1)), ui((2, 2))):
        sim = phash_similarity(base, screen_phash(_png(variant)))
        assert sim is not None and sim >= 0.95, sim


def test_phash_sees_a_panel_that_moved():
    sim = phash_similarity(screen_phash(_png(ui())), screen_phash(_png(ui(panel_at=760))))
    assert sim is not None and sim < 0.95


def test_typed_values_are_painted_over_before_hashing():
    boxes = [(460, 240, 360, 30)]
    empty = screen_phash(_png(ui()), boxes)
    typed = screen_phash(_png(ui(typed="W")), boxes)
    assert empty == typed
    assert phash_similarity("", empty) is None


# --- key elements and layout ----------------------------------------------------------------------


def test_key_elements_are_named_controls_headings_and_landmarks_in_page_coordinates():
    rows = [cand(str(10 + i), "link", f"Book {i}", 440, 300 + 30 * i, xpath=f"/html/body/table/tbody/tr[{i}]/td/a")
            for i in range(3)]
    nameless = cand("9", "button", "", 900, 100)
    elements = key_elements(FORM + rows + [nameless], scroll=(0, 100), headings=FACTS["headings"],
                            landmarks=FACTS["landmarks"])
    texts = [(e.role, e.text) for e in elements]
    assert texts == [("textbox", "Title"), ("textbox", "Author"), ("button", "Save"), ("link", "Delete"),
                     ("heading", "Change book"), ("main", "")]
    save = elements[2]
    assert save.key == "button|@_save" and (save.x, save.y) == (460, 660)  # viewport y 560 + scroll 100


def test_a_field_is_named_by_its_label_not_by_the_value_it_shows():
    filled = [replace(FORM[0], value="Dune")] + FORM[1:]
    assert key_elements(filled) == key_elements(FORM)


def test_layout_signature_ignores_a_list_that_grew_but_not_a_new_control():
    rows = [cand(str(10 + i), "link", f"Book {i}", 440, 300 + 30 * i, xpath=f"/html/body/table/tbody/tr[{i}]/td/a")
            for i in range(3)]
    more = rows + [cand("20", "link", "Book 9", 440, 400, xpath="/html/body/table/tbody/tr[4]/td/a")]
    assert layout_signature(FORM + rows) == layout_signature(FORM + more) == layout_signature(FORM)
    assert layout_signature(FORM + [cand("5", "button", "Save and add another", 700, 560)]) != layout_signature(FORM)


# --- comparison -------------------------------------------------------------------------------------


def _fp(cands=FORM, img: Image.Image | None = None, **kw):
    return fingerprint(obs(cands, png=_png(img or ui()), **kw), FACTS)


def test_no_baseline_is_a_first_visit():
    report = compare(None, _fp())
    assert report.status == "new" and not report.changed and not report.unchanged


def test_brightness_a_two_pixel_shift_and_typed_values_stay_unchanged():
    base = _fp()
    nudged = [replace(c, descriptor=c.descriptor.with_(bbox=BBox(c.descriptor.bbox.x + 2, c.descriptor.bbox.y + 1,
                                                                 c.descriptor.bbox.width, c.descriptor.bbox.height)))
              for c in FORM]
    nudged[0] = replace(nudged[0], value="Dune")
    report = compare(base, _fp(nudged, ImageEnhance.Brightness(ui((2, 1), typed="D")).enhance(0.85)))
    assert report.unchanged, report.reasons
    assert report.changes == () and report.similarity is not None and report.similarity >= 0.95
    assert 2.0 < report.drift < 2.5


def test_a_button_moved_more_than_20_px_is_reported_with_its_shift():
    moved = FORM[:2] + [cand("3", "button", "Save", 460, 590, 120, 35, name_attr="_save")] + FORM[3:]
    report = compare(_fp(), _fp(moved))
    assert report.changed
    assert report.changes == (ElementChange("moved", "button|@_save", "button", "Save", "Save", 0.0, 30.0, 30.0),)
    assert "moved by 30 px" in report.changes[0].describe()


def test_a_move_within_20_px_is_not_a_change():
    moved = FORM[:2] + [cand("3", "button", "Save", 475, 560, 120, 35, name_attr="_save")] + FORM[3:]
    report = compare(_fp(), _fp(moved))
    assert report.unchanged and report.drift == 15.0


def test_a_label_that_gained_a_suffix_is_a_text_change_from_to():
    renamed = FORM[:2] + [cand("3", "button", "Save (S)", 460, 560, 120, 35, name_attr="_save")] + FORM[3:]
    report = compare(_fp(), _fp(renamed))
    assert report.changed
    (change,) = report.changes
    assert (change.kind, change.before, change.after, change.distance) == ("text_changed", "Save", "Save (S)", 0.0)
    assert report.summary().endswith("button text changed from 'Save' to 'Save (S)'")


def test_a_missing_element_and_a_new_one_are_both_reported():
    swapped = FORM[:3] + [cand("5", "button", "History", 700, 20)]
    report = compare(_fp(), _fp(swapped))
    kinds = {(c.kind, c.before or c.after) for c in report.changes}
    assert kinds == {("missing", "Delete"), ("added", "History")}
    assert report.layout_changed and report.changed


def test_two_neighbours_that_swapped_places_are_both_moved_not_renamed():
    save, delete = FORM[2], FORM[3]
    swapped = FORM[:2] + [
        replace(save, descriptor=save.descriptor.with_(bbox=delete.descriptor.bbox)),
        replace(delete, descriptor=delete.descriptor.with_(bbox=save.descriptor.bbox)),
    ]
    report = compare(_fp(), _fp(swapped))
    assert sorted((c.kind, c.before) for c in report.changes) == [("moved", "Delete"), ("moved", "Save")]


def test_another_screen_for_the_same_step_is_a_change():
    report = compare(_fp(), _fp(title="Delete book", url="http://127.0.0.1:9/admin/books/7/delete/"))
    assert report.changed and report.changes[0].kind == "screen"
    assert report.changes[0].before.startswith("/admin/books/{n}/change/")


def test_the_screenshot_alone_can_say_changed():
    report = compare(_fp(), _fp(img=ui(panel_at=760)))
    assert report.changed and report.changes == ()
    assert report.reasons[0].startswith("screenshot similarity")


def test_thresholds_come_from_r1_and_are_checked():
    t = ChangeThresholds()
    assert (t.min_similarity, t.max_shift_px) == (0.95, 20.0)
    with pytest.raises(ValueError):
        ChangeThresholds(min_similarity=1.5)
    with pytest.raises(ValueError):
        ChangeThresholds(max_shift_px=-1)


def test_reports_and_elements_round_trip_as_mappings():
    e = KeyElement("button|#go", "button", "Go", 1.04, 2, 3, 4)
    assert KeyElement.from_mapping(e.to_mapping()) == replace(e, x=1.0)
    r = ChangeReport("/x |  |  | ", "changed", 0.9, True, (ElementChange("missing", "k", "link", before="A"),),
                     3.0, ("layout signature changed",))
    m = r.to_mapping()
    assert m["changes"][0]["kind"] == "missing" and m["similarity"] == 0.9


def test_our_phash_gives_imagehash_phash_bits_without_scipy():
    import imagehash

    from core.state.change import phash

    for img in (ui(), ui((2, 1)), ui(panel_at=760), ImageEnhance.Brightness(ui()).enhance(0.7), ui().reduce(4)):
        assert str(phash(img)) == str(imagehash.phash(img))
