"""Joining Chromium's DOM and accessibility trees by element path (pure, no browser)."""
from __future__ import annotations

from core.perception.axtree import aria_role, ax_entries, element_at, frame_documents


def _el(bid, name, children=(), **kw):
    return {"nodeType": 1, "backendNodeId": bid, "localName": name, "nodeName": name.upper(),
            "children": list(children), **kw}


def _doc():
    text = {"nodeType": 3, "backendNodeId": 99, "nodeName": "#text"}
    shadow = {"nodeType": 11, "backendNodeId": 50, "shadowRootType": "open", "children": [_el(51, "button")]}
    ua = {"nodeType": 11, "backendNodeId": 60, "shadowRootType": "user-agent", "children": [_el(61, "div")]}
    frame_doc = {"nodeType": 9, "backendNodeId": 70, "frameId": "F2", "children": [_el(71, "html")]}
    body = _el(3, "body", [text, _el(4, "input", shadowRoots=[ua]), _el(5, "x-card", shadowRoots=[shadow]),
                           _el(6, "iframe", contentDocument=frame_doc)])
    return {"nodeType": 9, "backendNodeId": 1, "frameId": "F1", "children": [
        {"nodeType": 10, "backendNodeId": 2, "nodeName": "html"}, _el(7, "html", [_el(8, "head"), body])]}


def _ax(bid, role, name="", ignored=False):
    return {"backendDOMNodeId": bid, "role": {"type": "role", "value": role},
            "name": {"type": "computedString", "value": name}, "ignored": ignored}


def test_paths_count_element_children_only_and_enter_open_shadow_roots():
    doc = _doc()
    assert element_at(doc, [0, 1, 0])["backendNodeId"] == 4  # text and doctype nodes are not counted
    assert element_at(doc, [0, 1, 1, -1, 0])["backendNodeId"] == 51
    assert element_at(doc, [0, 1, 0, -1, 0]) is None  # a user-agent shadow root is not the page's
    assert element_at(doc, [0, 1, 9]) is None


def test_entries_key_elements_by_path_with_aria_roles_and_clean_names():
    doc = _doc()
    nodes = [_ax(4, "textbox", "  Search \n here "), _ax(51, "button", "Save"), _ax(6, "Iframe"),
             _ax(3, "generic", "", ignored=True), _ax(61, "generic", "inner"), _ax(71, "image", "x" * 300)]
    got = ax_entries(doc, nodes)
    assert got["0/1/0"] == ["input", "textbox", "Search here"]
    assert got["0/1/1/-1/0"] == ["button", "button", "Save"]
    assert got["0/1/2"] == ["iframe", "", ""]  # a Chromium-internal role leaves the page library's
    assert got["0/1"] == ["body", "", ""]  # ignored by the tree: no role, no name
    assert not any(v[2] == "inner" for v in got.values())  # nothing of user-agent shadow roots
    assert not any(v[0] == "html" and v[2] for v in got.values())  # nor of an iframe's document
    assert [d["frameId"] for d in frame_documents(doc)] == ["F1", "F2"]
    own = ax_entries(next(d for d in frame_documents(doc) if d["frameId"] == "F2"), nodes)
    assert own == {"0": ["html", "img", "x" * 120]}


def test_chromium_roles_map_to_aria_roles():
    assert aria_role("image") == "img"
    assert aria_role("button") == "button" and aria_role("rowheader") == "rowheader"
    for internal in ("generic", "none", "StaticText", "LabelText", "Date", "DisclosureTriangle", "RootWebArea"):
        assert aria_role(internal) == ""
