"""The page's landmarks: the main landmark's heading and the region a step changed (issue 19, item 1).

Two signals of the landing check (:mod:`core.act.landing`) that a person
uses and that the page's ``<h1>`` alone does not give:

``landmark``
    What the main landmark (``<main>`` or ``role=main``) is called: its
    ``aria-label`` / ``aria-labelledby`` text, else the text of its first
    heading.  The site name moving out of an ``<h1>`` in the page header does
    not change it; another page does.
``region``
    The region the step changed on the page it stayed on: the innermost
    landmark or region (``main``, ``nav``, ``header``, ``footer``, ``aside``,
    ``form``, ``section``, ``article``, ``dialog``, ``fieldset``, ``table``, and their
    ARIA roles) whose text or number of elements changed between right
    before the action and after it, named by role and accessible name
    (``"region: Todos"``, ``"form: New note"``, ``"contentinfo"``).

:data:`REGIONS_JS` reads both in one ``evaluate``; :func:`read_regions` runs it
through any driver with ``evaluate`` (None when it cannot: the signal is then
unknown, never guessed).  :func:`changed_regions` and :func:`region_moved`
are pure.  Nothing is kept in clear: a region's content is reduced to a
32-bit FNV-1a digest in the page (its key is its role and the name a screen
reader would announce).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from core.act.after import same_text

__all__ = ["REGIONS_JS", "MAX_REGIONS", "PageRegions", "read_regions", "changed_regions", "region_moved",
           "region_role", "REGION_SEP"]

#: Most regions read on one page (a long admin page has a few dozen; past it the rest are not read).
MAX_REGIONS = 60
#: Separator of several region keys in ``AfterState.region`` (a key never holds it: names are one line).
REGION_SEP = " | "

#: One ``evaluate``: ``{"landmark": str, "regions": [[key, digest, [ancestor keys]]]}``.  Regions: the
#: elements of ARIA landmark roles (explicit, or implicit from their tag) plus dialogs, fieldsets and tables,
#: visible, in document order, at most MAX_REGIONS.  A region's digest: FNV-1a of its text (textContent with
#: runs of white space folded, a 4000-character prefix and the length) and its element count.
REGIONS_JS = """(max) => {
  const norm = s => (s || '').replace(/\\s+/g, ' ').trim().slice(0, 80);
  const fnv = (s) => { let h = 0x811c9dc5; for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193); } return (h >>> 0).toString(16); };
  const vis = e => { const r = e.getBoundingClientRect(); const s = getComputedStyle(e);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none'; };
  const TAGS = {MAIN: 'main', NAV: 'navigation', ASIDE: 'complementary', HEADER: 'banner', FOOTER: 'contentinfo',
    FORM: 'form', SECTION: 'region', ARTICLE: 'article', DIALOG: 'dialog', FIELDSET: 'group', TABLE: 'table',
    SEARCH: 'search'};
  const ROLES = new Set(['main', 'navigation', 'complementary', 'banner', 'contentinfo', 'form', 'region',
    'search', 'dialog', 'alertdialog', 'article', 'group', 'table', 'grid', 'tabpanel']);
  const roleOf = e => { const r = (e.getAttribute('role') || '').trim().split(/\\s+/)[0];
    return ROLES.has(r) ? r : (TAGS[e.tagName] || ''); };
  const SEL = 'main,nav,aside,header,footer,form,section,article,dialog,fieldset,table,search,[role]';
  const HEAD = 'h1,h2,h3,h4,h5,h6,[role=heading],legend,caption';
  const nameOf = e => {
    const l = e.getAttribute('aria-label'); if (norm(l)) return norm(l);
    const ids = (e.getAttribute('aria-labelledby') || '').split(/\\s+/).filter(Boolean);
    const t = ids.map(i => document.getElementById(i)).filter(Boolean).map(x => x.innerText || x.textContent).join(' ');
    if (norm(t)) return norm(t);
    for (const h of e.querySelectorAll(HEAD)) {
      // the region's own heading: not one of a region inside it
      let p = h.parentElement, own = true;
      while (p && p !== e) { if (roleOf(p) && p.matches(SEL)) { own = false; break; } p = p.parentElement; }
      if (own && vis(h)) return norm(h.innerText || h.textContent);
    }
    return '';
  };
  const keyOf = e => { const n = nameOf(e); return roleOf(e) + (n ? ': ' + n : ''); };
  let landmark = '';
  const main = [...document.querySelectorAll('main,[role=main]')].find(vis);
  if (main) landmark = nameOf(main);
  const regions = [], keys = new Map();
  for (const e of document.querySelectorAll(SEL)) {
    if (regions.length >= max) break;
    if (!roleOf(e) || !vis(e)) continue;
    const key = keyOf(e); keys.set(e, key);
    const anc = []; let p = e.parentElement;
    while (p) { if (keys.has(p)) anc.push(keys.get(p)); p = p.parentElement; }
    const text = (e.textContent || '').replace(/\\s+/g, ' ');  // no layout read: cheap on a long page
    regions.push([key, fnv(text.slice(0, 4000)) + ':' + text.length + ':' + e.getElementsByTagName('*').length, anc]);
  }
  return {landmark, regions};
}"""


@dataclass(frozen=True, slots=True)
class PageRegions:
    """One reading of :data:`REGIONS_JS`.

    Attributes
    ----------
    landmark : str
        The main landmark's name ("" when the page has no visible main landmark, or it has no name).
    regions : tuple[tuple[str, str, tuple[str, ...]], ...]
        ``(key, digest, ancestor keys innermost first)`` per region, in document order.
    """

    landmark: str = ""
    regions: tuple[tuple[str, str, tuple[str, ...]], ...] = field(default_factory=tuple)


def read_regions(driver: Any) -> PageRegions | None:
    """The page's landmark and regions now; None when the driver cannot run a script or the page would not
    answer (navigating, closed).  Never raises."""
    evaluate = getattr(driver, "evaluate", None)
    if evaluate is None:
        return None
    try:
        raw = evaluate(REGIONS_JS, MAX_REGIONS)
    except Exception:  # noqa: BLE001 - a page navigating or not answering: unknown
        return None
    if not isinstance(raw, Mapping) or not isinstance(raw.get("regions"), list):
        return None
    regions = []
    for r in raw["regions"]:
        if isinstance(r, (list, tuple)) and len(r) == 3:
            regions.append((str(r[0]), str(r[1]), tuple(str(a) for a in (r[2] or ()))))
    return PageRegions(str(raw.get("landmark") or ""), tuple(regions))


def _digests(p: PageRegions) -> dict[str, str]:
    out: dict[str, list[str]] = {}
    for key, digest, _ in p.regions:
        out.setdefault(key, []).append(digest)
    return {k: ",".join(v) for k, v in out.items()}


def changed_regions(before: PageRegions, after: PageRegions) -> tuple[list[str], list[str]]:
    """``(innermost, all)``: the keys of the regions whose content changed (or that appeared or left);
    ``all`` lists the innermost first.

    Regions of one key are compared together (their digests in order).  ``innermost`` leaves out a
    region that holds another changed one (the ``main`` around the list that grew), in document order.
    """
    a, b = _digests(before), _digests(after)
    changed = [k for k in dict.fromkeys([*a, *b]) if a.get(k) != b.get(k)]
    outer: set[str] = set()
    for p in (before, after):
        for key, _, anc in p.regions:
            if key in changed:
                outer.update(x for x in anc if x != key)
    inner = [k for k in changed if k not in outer]
    return inner, inner + [k for k in changed if k in outer]


def region_role(key: str) -> str:
    """The role of a region key (``"region: Todos"`` -> ``"region"``)."""
    return key.split(":", 1)[0].strip()


def region_moved(recorded: str, now: Sequence[str], present: Sequence[str]) -> str:
    """Why the region the step changed is not the recorded one ("" when it is, or cannot be told).

    Parameters
    ----------
    recorded : str
        ``AfterState.region``: the recorded innermost changed keys, joined by :data:`REGION_SEP`.
    now : Sequence[str]
        Every region key that changed now (:func:`changed_regions`' second item).
    present : Sequence[str]
        Every region key on the page now (before or after the action).

    A recorded region agrees when a region of the same role and the same name (:func:`same_text`) changed
    now; when no region of that role and name is on the page at all (it was renamed), one of the same role
    that changed agrees.  No region changed at all where the recording changed one: it disagrees.
    """
    want = [k for k in recorded.split(REGION_SEP) if k]
    if not want:
        return ""

    def same(x: str, y: str) -> bool:
        if region_role(x) != region_role(y):
            return False
        nx, ny = x.partition(":")[2].strip(), y.partition(":")[2].strip()
        return nx == ny or bool(nx and ny and same_text(nx, ny))

    for w in want:
        if any(same(w, k) for k in now):
            return ""
        if not any(same(w, k) for k in present) and any(region_role(k) == region_role(w) for k in now):
            return ""
    if not now:
        return f"nothing changed on the page where the recording changed {_say(want[0])}"
    return f"the step changed {_say(now[0])} where the recording changed {_say(want[0])}"


def _say(key: str) -> str:
    role, _, name = key.partition(":")
    role = {"navigation": "navigation", "banner": "page header", "contentinfo": "page footer",
            "complementary": "side panel", "region": "section", "group": "group of fields"}.get(role.strip(),
                                                                                                 role.strip())
    return f"the {role} {name.strip()!r}" if name.strip() else f"the {role}"
