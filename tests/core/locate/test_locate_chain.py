"""The locator chain on hand-built candidates: the UI tweaks of R (R2)."""
from __future__ import annotations

import pytest

from core.domain import BBox, Candidate, ElementDescriptor
from core.locate import LocatorConfig, resolve


def button(label: str, x: float, y: float, *, w: float = 110, h: float = 32, **kw) -> ElementDescriptor:
    fields = dict(tag="button", role="button", name=label, text=label, bbox=BBox(x, y, w, h))
    fields.update(kw)
    return ElementDescriptor(**fields)


def cand(ref: str, d: ElementDescriptor, **kw) -> Candidate:
    return Candidate(ref=ref, descriptor=d, **kw)


TOOLBAR = {
    "query": button("Query", 10, 10, container="Reports"),
    "export": button("Export report", 130, 10, container="Reports"),
    "save": button("Save report", 250, 10, container="Reports"),
    "delete": button("Delete", 370, 10, container="Reports"),
}


def toolbar_page(**changes: ElementDescriptor | None) -> list[Candidate]:
    """The toolbar with some buttons replaced (or removed with None), plus a search box."""
    out = []
    for i, (key, d) in enumerate(TOOLBAR.items()):
        d = changes.get(key, d)
        if d is not None:
            out.append(cand(f"0:{i}", d))
    out.append(cand("0:9", ElementDescriptor(tag="input", role="textbox", name="Search", placeholder="Search",
                                             bbox=BBox(500, 10, 200, 32), container="Reports")))
    return out


def test_exact_hit_is_not_a_heal() -> None:
    res = resolve(TOOLBAR["export"], toolbar_page())
    assert (res.ref, res.strategy, res.abstained) == ("0:1", "exact", False)
    assert res.score == 1.0 and res.margin == 1.0
    assert not res.healed
    assert res.ms >= 0.0
    assert res.top[0].ref == "0:1" and len(res.top) <= 5


def test_unique_selector_match_counts_as_exact() -> None:
    page = toolbar_page()
    res = resolve(ElementDescriptor(), page, selector_ref="0:2")
    assert (res.ref, res.strategy) == ("0:2", "exact")
    assert not res.healed


def test_selector_ref_not_on_page_falls_back_to_the_chain() -> None:
    res = resolve(TOOLBAR["save"], toolbar_page(), selector_ref="9:9")
    assert res.ref == "0:2"
    assert "selector" in res.reason


def test_button_moved_20px_is_found_and_counted_as_heal() -> None:
    moved = button("Export report", 150, 10, container="Reports")
    res = resolve(TOOLBAR["export"], toolbar_page(export=moved))
    assert res.ref == "0:1"
    assert res.strategy in ("fuzzy_text", "semantic")
    assert res.healed
    assert "exact" in res.reason


def test_button_moved_within_5px_is_still_exact() -> None:
    nudged = button("Export report", 133, 13, container="Reports")
    res = resolve(TOOLBAR["export"], toolbar_page(export=nudged))
    assert (res.ref, res.strategy) == ("0:1", "exact")


def test_moved_button_with_the_same_id_is_exact() -> None:
    target = TOOLBAR["export"].with_(id="export-btn")
    moved = button("Export report", 400, 200, id="export-btn", container="Reports")
    res = resolve(target, toolbar_page(export=moved))
    assert (res.ref, res.strategy) == ("0:1", "exact")


def test_label_gaining_a_shortcut_suffix() -> None:
    res = resolve(TOOLBAR["query"], toolbar_page(query=button("Query (Q)", 10, 10, container="Reports")))
    assert res.ref == "0:0"
    assert res.strategy == "fuzzy_text"
    assert res.score > 0.8
    assert res.healed


def test_export_report_with_suffix_and_moved_next_to_save_report() -> None:
    page = toolbar_page(export=button("Export report (E)", 250, 10, container="Reports"),
                        save=button("Save report", 130, 10, container="Reports"))
    assert resolve(TOOLBAR["export"], page).ref == "0:1"
    assert resolve(TOOLBAR["save"], page).ref == "0:2"


def test_save_report_is_never_taken_for_a_vanished_export_report() -> None:
    # Export report is gone; Save report now sits exactly where it was.
    page = toolbar_page(export=None, save=button("Save report", 130, 10, container="Reports"))
    res = resolve(TOOLBAR["export"], page)
    assert res.abstained
    assert res.ref is None and res.strategy == ""
    for level in ("exact", "fuzzy_text", "semantic"):
        assert level in res.reason
    assert res.top and res.top[0].score <= 1.0


def test_two_identical_candidates_abstain() -> None:
    target = ElementDescriptor(tag="button", role="button", name="Delete", text="Delete")
    twin = ElementDescriptor(tag="button", role="button", name="Delete", text="Delete")
    res = resolve(target, [cand("0:0", twin), cand("0:1", twin), cand("0:2", button("Cancel", 0, 0))])
    assert res.abstained and res.ref is None
    assert "tie" in res.reason
    assert {c.ref for c in res.top[:2]} == {"0:0", "0:1"}
    assert res.top[0].score == res.top[1].score


def test_identical_candidates_prefer_the_visible_one() -> None:
    target = ElementDescriptor(tag="button", role="button", name="Delete", text="Delete")
    twin = ElementDescriptor(tag="button", role="button", name="Delete", text="Delete")
    res = resolve(target, [cand("0:0", twin, visible=False), cand("0:1", twin)])
    assert res.ref == "0:1"
    assert "visible" in res.reason


def test_disabled_candidate_is_still_a_candidate() -> None:
    res = resolve(TOOLBAR["delete"], [cand("0:3", TOOLBAR["delete"], enabled=False)])
    assert res.ref == "0:3" and res.strategy == "exact"


def test_standard_input_that_became_a_custom_widget_is_found_semantically() -> None:
    target = ElementDescriptor(tag="input", role="textbox", type="text", name="Country", label="Country",
                               name_attr="country", placeholder="Choose a country", bbox=BBox(100, 200, 240, 32),
                               neighbours=("City", "Postcode"), container="Shipping address")
    page = [
        cand("0:0", ElementDescriptor(tag="input", role="textbox", type="text", name="City", label="City",
                                      name_attr="city", bbox=BBox(100, 150, 240, 32),
                                      neighbours=("Street", "Country"), container="Shipping address")),
        cand("0:1", ElementDescriptor(tag="div", role="combobox", name="Country", label="Country",
                                      classes=("select__control",), bbox=BBox(100, 200, 240, 36),
                                      neighbours=("City", "Postcode"), container="Shipping address")),
        cand("0:2", ElementDescriptor(tag="input", role="textbox", type="text", name="Postcode",
                                      label="Postcode", name_attr="postcode", bbox=BBox(100, 250, 240, 32),
                                      neighbours=("Country",), container="Shipping address")),
        cand("0:3", button("Continue", 100, 320, container="Shipping address")),
    ]
    res = resolve(target, page)
    assert res.ref == "0:1"
    assert res.strategy == "semantic"
    assert res.healed


def test_reordered_table_columns_are_found_by_name() -> None:
    def header(label: str, x: float) -> ElementDescriptor:
        return ElementDescriptor(tag="button", role="button", name=label, text=label, bbox=BBox(x, 300, 100, 28),
                                 container="Orders", classes=("sort-header",))

    before = {name: header(name, 20 + 100 * i) for i, name in enumerate(("Name", "Price", "Qty", "Total"))}
    after_order = ("Total", "Name", "Qty", "Price")
    page = [cand(f"1:{i}", header(name, 20 + 100 * i)) for i, name in enumerate(after_order)]
    for name, target in before.items():
        res = resolve(target, page)
        assert res.ref == f"1:{after_order.index(name)}", name
        assert page[after_order.index(name)].descriptor.name == name
    # "Qty" kept its place: exact; the others moved: healed by name.
    assert resolve(before["Qty"], page).strategy == "exact"
    assert resolve(before["Price"], page).healed


def test_same_label_in_another_dialog_is_not_exact_or_fuzzy() -> None:
    ok_export = ElementDescriptor(tag="button", role="button", name="OK", container="Confirm export")
    ok_delete = ElementDescriptor(tag="button", role="button", name="OK", container="Delete account")
    res = resolve(ok_export, [cand("0:0", ok_delete)])
    assert res.abstained
    assert res.ref is None


def test_nested_dialog_with_a_similar_title_still_matches() -> None:
    target = ElementDescriptor(tag="button", role="button", name="Export", container="Export")
    page = [cand("0:0", ElementDescriptor(tag="button", role="button", name="Export", container="Export options")),
            cand("0:1", ElementDescriptor(tag="button", role="button", name="Cancel", container="Export options"))]
    assert resolve(target, page).ref == "0:0"


def test_text_span_inside_a_link_hands_the_match_to_the_link() -> None:
    target = ElementDescriptor(tag="a", name="Facebook", text="Facebook", xpath="/html/body/footer/ul/li[1]/a")
    page = [
        cand("0:0", ElementDescriptor(tag="a", text="Facebook (opens overlay)", xpath="/html/body/footer/ul/li[1]/a")),
        cand("0:1", ElementDescriptor(tag="span", text="Facebook", xpath="/html/body/footer/ul/li[1]/a/span")),
        cand("0:2", ElementDescriptor(tag="a", text="Twitter (opens overlay)", xpath="/html/body/footer/ul/li[2]/a")),
    ]
    res = resolve(target, page)
    assert (res.ref, res.strategy) == ("0:0", "fuzzy_text")


def test_no_candidates_and_empty_target_abstain() -> None:
    assert resolve(TOOLBAR["query"], []).abstained
    res = resolve(ElementDescriptor(), toolbar_page())
    assert res.abstained and "empty" in res.reason


def test_only_enabled_strategies_run() -> None:
    moved = button("Export report", 150, 10, container="Reports")
    res = resolve(TOOLBAR["export"], toolbar_page(export=moved), config=LocatorConfig(strategies=("exact",)))
    assert res.abstained
    assert "fuzzy_text" not in res.reason


def test_a_larger_margin_makes_the_chain_more_cautious() -> None:
    # "Query (Q)" and "Query all" both resemble "Query"; with a large margin the chain abstains.
    page = toolbar_page(query=button("Query (Q)", 10, 10, container="Reports"),
                        delete=button("Query all", 370, 10, container="Reports"))
    relaxed = resolve(TOOLBAR["query"], page, config=LocatorConfig(margin=0.05))
    assert relaxed.ref == "0:0"
    strict = resolve(TOOLBAR["query"], page, config=LocatorConfig(margin=0.9))
    assert strict.abstained


@pytest.mark.parametrize("kw", [dict(margin=-0.1), dict(fuzzy_threshold=1.5), dict(strategies=("magic",)),
                                dict(top_k=0), dict(position_tolerance_px=-1)])
def test_config_is_validated(kw: dict) -> None:
    with pytest.raises(ValueError):
        LocatorConfig(**kw)


def test_config_defaults_follow_the_seed() -> None:
    cfg = LocatorConfig()
    assert cfg.position_tolerance_px == 5.0
    assert cfg.fuzzy_threshold == 0.8
    assert cfg.strategies == ("exact", "fuzzy_text", "semantic", "relative", "visual")
