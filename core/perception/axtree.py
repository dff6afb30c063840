"""Accessible names and roles from Chromium's own accessibility tree, for the elements the page library collects.

The observer (``PlaywrightDriver.observe``) fetches, per observation, the
DOM (``DOM.getDocument``, depth -1, piercing shadow roots and same-process
iframes) and each frame's accessibility tree (``Accessibility.getFullAXTree``)
over one CDP session of the page.  :func:`ax_entries` joins the two by
backend node id and keys every element that has an accessibility node by
its *element path* - the indices among element children from the frame's
document down to it, ``-1`` standing for "into the open shadow root of the
element before" - the same path ``window.__steadyhand.nodePath`` computes in
the page.  The page library then names each collected element from its
entry (``collect({ax})``) and keeps the entry for later descriptions of the
same element (the recorder's), so recorder, observer and locator inputs
carry the browser's names and roles.

Pure functions over CDP result dicts; no browser here (architecture rule 3).
"""
from __future__ import annotations

from typing import Any, Iterator, Mapping

__all__ = ["ARIA_ROLES", "aria_role", "ax_entries", "element_at", "frame_documents", "NAME_MAX"]

#: Longest accessible name kept, characters (the page library clips its names the same way).
NAME_MAX = 120

#: WAI-ARIA 1.2 roles (and the graphics and DPub roles Chromium reports as such).  A Chromium role
#: outside this set is internal (``StaticText``, ``LabelText``, ``Date``, ``DisclosureTriangle``...).
ARIA_ROLES = frozenset("""
alert alertdialog application article banner blockquote button caption cell checkbox code columnheader combobox
comment complementary contentinfo definition deletion dialog directory document emphasis feed figure form
graphics-document graphics-object graphics-symbol grid gridcell group heading img insertion link list listbox
listitem log main mark marquee math menu menubar menuitem menuitemcheckbox menuitemradio meter navigation note
option paragraph progressbar radio radiogroup region row rowgroup rowheader scrollbar search searchbox separator
slider spinbutton status strong subscript superscript switch tab table tablist tabpanel term textbox time timer
toolbar tooltip tree treegrid treeitem
""".split())

#: Chromium's names for ARIA roles it spells its own way.
_CHROMIUM_TO_ARIA = {"image": "img"}
#: Roles that carry no meaning for a target: the page library's own role is kept for these.
_NO_ROLE = frozenset({"generic", "none", "presentation"})


def aria_role(chromium_role: str) -> str:
    """The ARIA role for a Chromium accessibility role; ``""`` when it is internal or generic.

    ``"image"`` -> ``"img"``; ``"generic"``, ``"none"`` and Chromium's own roles
    (``"LabelText"``, ``"Date"``, ``"DisclosureTriangle"``...) -> ``""``, for which the
    page library's HTML-AAM role of the tag is used instead (a date input stays a
    ``textbox``, a ``summary`` a ``button``, as Playwright's ``get_by_role`` sees them).
    """
    role = _CHROMIUM_TO_ARIA.get(chromium_role, chromium_role)
    if role in _NO_ROLE or role not in ARIA_ROLES:
        return ""
    return role


def _elements(children: Any) -> list[Mapping[str, Any]]:
    return [c for c in children or () if c.get("nodeType") == 1]


def _open_shadow(node: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for root in node.get("shadowRoots") or ():
        if root.get("shadowRootType") != "user-agent":
            return root
    return None


def element_at(document: Mapping[str, Any], path: list[int]) -> Mapping[str, Any] | None:
    """The node at element path ``path`` below ``document`` (a CDP ``DOM.Node``), or None."""
    node: Mapping[str, Any] | None = document
    for step in path:
        if node is None:
            return None
        if step == -1:
            node = _open_shadow(node)
            continue
        kids = _elements(node.get("children"))
        node = kids[step] if 0 <= step < len(kids) else None
    return node


def _walk(document: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(path key, element node) of every element under ``document``, not entering iframes' documents."""
    stack: list[tuple[str, Mapping[str, Any]]] = [("", document)]
    while stack:
        key, node = stack.pop()
        if node.get("nodeType") == 1:
            yield key, node
        shadow = _open_shadow(node) if node.get("nodeType") == 1 else None
        if shadow is not None:
            stack.append((f"{key}/-1" if key else "-1", shadow))
        for i, child in enumerate(_elements(node.get("children"))):
            stack.append((f"{key}/{i}" if key else str(i), child))


def frame_documents(root: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Every document in a pierced ``DOM.getDocument`` tree: the root and same-process iframes' documents."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.get("nodeType") == 9:
            yield node
        content = node.get("contentDocument")
        if content is not None:
            stack.append(content)
        stack.extend(node.get("shadowRoots") or ())
        stack.extend(node.get("children") or ())


def _value(field: Any) -> str:
    if isinstance(field, Mapping):
        v = field.get("value")
        return "" if v is None else str(v)
    return ""


def ax_entries(document: Mapping[str, Any], ax_nodes: list[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Element path key -> ``[tag, aria role, name]`` for the elements of ``document`` the AX tree holds.

    Parameters
    ----------
    document : Mapping
        A CDP document node (``DOM.getDocument`` with ``depth=-1, pierce=True``, or one of its
        iframes' ``contentDocument``).
    ax_nodes : list of Mapping
        ``Accessibility.getFullAXTree`` nodes of the same frame.

    Returns
    -------
    dict
        Keys are element paths joined by ``"/"`` (``"1/0/-1/2"``); ``tag`` is lower-case, the
        role comes from :func:`aria_role`, the name is whitespace-collapsed and at most
        :data:`NAME_MAX` characters.  An element the tree ignores (hidden from assistive
        technology) gets an empty role and name.
    """
    by_backend: dict[int, Mapping[str, Any]] = {}
    for n in ax_nodes:
        bid = n.get("backendDOMNodeId")
        if bid is not None and bid not in by_backend:
            by_backend[int(bid)] = n
    out: dict[str, list[str]] = {}
    for key, node in _walk(document):
        ax = by_backend.get(int(node.get("backendNodeId", -1)))
        if ax is None:
            continue
        tag = str(node.get("localName") or node.get("nodeName", "")).lower()
        if ax.get("ignored"):
            out[key] = [tag, "", ""]
            continue
        name = " ".join(_value(ax.get("name")).split())[:NAME_MAX]
        out[key] = [tag, aria_role(_value(ax.get("role"))), name]
    return out
