"""What a page keeps that an action may have changed: the browser side of "never repeat an effect" (issue 19).

:func:`snapshot` reads, in one ``page.evaluate`` plus one cookie query,

- every ``localStorage`` and ``sessionStorage`` key of the page's origin,
  each with a 32-bit FNV-1a digest of its value;
- every cookie the browser would send to the page's URL (``HttpOnly`` ones
  included, from the browser context), each by a SHA-256 digest of its value;
- every IndexedDB database of the origin (``indexedDB.databases()``): the
  record count of each object store, read under a time bound;
- counts of list-like items in the main document (``li``, ``tr``, ARIA
  ``listitem`` / ``row`` / ``option`` / ``article`` / ``treeitem``), of
  all its elements and of the dialogs shown (``dialog``);
- a digest of each form control's value or checked state (password fields
  left out), keyed by id, name or position;
- the URL.

No value is ever kept in clear: storage values, cookie values and control
values are reduced to digests in the page or here, so a secret a page stores
(a session token, a typed password) never reaches a log, a report or the
store.  The comparison of two snapshots is pure and lives in
:mod:`core.recover.effects`.

:class:`EffectWatch` keeps, per page, the snapshot taken right before the
step's action (:meth:`EffectWatch.mark`) and the keys learnt to change on
their own (timers, heartbeats: :attr:`EffectWatch.background`).

Cost (measured on ``tests/e2e/fixtures/norepeat/list.html`` in headless
Chromium, 2 shared cores): about 3-6 ms per snapshot without IndexedDB.
"""
from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

__all__ = ["EffectSnapshot", "EffectWatch", "snapshot", "item_counts", "SNAPSHOT_JS", "ITEMS_JS", "IDB_LIMIT_MS",
           "COOKIES_KEPT_S"]

#: Longest a cookie reading is used again (s) by :meth:`EffectWatch.mark` while nothing could have changed it:
#: a cookie that expires meanwhile is then seen gone at the next reading at the latest.
COOKIES_KEPT_S = 30.0

#: Longest wait (ms) for the IndexedDB counts in one snapshot: opening a database another tab is upgrading
#: blocks; past the bound the databases are reported as unreadable ("?") rather than waited for.
IDB_LIMIT_MS = 300

#: The list-like items counted, kind -> CSS selector (a JS object literal, shared by SNAPSHOT_JS and ITEMS_JS).
_ITEM_KINDS = ("{li: 'li', tr: 'tr', listitem: '[role=listitem]', row: '[role=row]', option: '[role=option]', "
               "article: 'article,[role=article]', treeitem: '[role=treeitem]'}")

#: Dialogs shown (a JS expression): displayed, not hidden, with a box - a dialog still fading in counts (its
#: opacity is not looked at): a confirmation box that opened is the action's effect from its first frame.
_DIALOGS = ("[...document.querySelectorAll('[role=dialog],[role=alertdialog],dialog[open],[aria-modal=true]')]"
            ".filter(d => { const cs = getComputedStyle(d), r = d.getBoundingClientRect();"
            " return cs.display !== 'none' && cs.visibility !== 'hidden' && r.width > 0 && r.height > 0; }).length")

#: The page side of :func:`snapshot`: async, returns plain JSON (digests and counts only).
SNAPSHOT_JS = """
async (idbLimitMs) => {
  const fnv = (s) => { let h = 0x811c9dc5; s = String(s);
    for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 0x01000193); }
    return (h >>> 0).toString(16); };
  const storage = (name) => { const out = {};
    try { const s = window[name]; for (let i = 0; i < s.length; i++) { const k = s.key(i);
      out[k] = fnv(s.getItem(k)); } } catch (e) { return null; }
    return out; };
  const items = {};
  const kinds = __ITEM_KINDS__;
  for (const [k, sel] of Object.entries(kinds)) items[k] = document.querySelectorAll(sel).length;
  items.elements = document.body ? document.body.getElementsByTagName('*').length : 0;
  items.dialog = __DIALOGS__;
  const values = {};
  let n = 0;
  for (const el of document.querySelectorAll('input,select,textarea')) {
    n += 1;
    if (el.type === 'password') continue;
    const key = el.id || el.name || ('#' + n);
    values[key] = fnv((el.type === 'checkbox' || el.type === 'radio') ? String(el.checked) : el.value);
  }
  const idb = {};
  try {
    if (window.indexedDB && indexedDB.databases) {
      const count = async () => {
        for (const d of await indexedDB.databases()) {
          if (!d.name) continue;
          const db = await new Promise((ok, fail) => { const r = indexedDB.open(d.name);
            r.onsuccess = () => ok(r.result); r.onerror = () => fail(r.error);
            r.onupgradeneeded = () => { try { r.transaction.abort(); } catch (e) {} }; });
          try {
            for (const s of db.objectStoreNames) {
              idb[d.name + '/' + s] = String(await new Promise((ok, fail) => {
                const q = db.transaction(s).objectStore(s).count(); q.onsuccess = () => ok(q.result);
                q.onerror = () => fail(q.error); }));
            }
          } finally { db.close(); }
        }
      };
      // the page library's pristine timer: this limit is Steadyhand's own, never a reaction the settle wait
      // waits for (page_lib.js reactionsSince)
      const lib = window.__steadyhand;
      const later = lib && lib.sleep ? lib.sleep(idbLimitMs) : new Promise(ok => setTimeout(ok, idbLimitMs));
      await Promise.race([count(), later.then(() => { idb['?'] = 'timeout'; })]);
    }
  } catch (e) { idb['?'] = 'unreadable'; }
  let cookie = '';
  try { cookie = fnv(document.cookie); } catch (e) { cookie = '?'; }
  return {url: location.href, local: storage('localStorage'), session: storage('sessionStorage'),
          items, values, idb, cookie};
}
""".replace("__ITEM_KINDS__", _ITEM_KINDS).replace("__DIALOGS__", _DIALOGS)

#: The item counts of :func:`snapshot` alone (:func:`item_counts`): no storage, cookie or IndexedDB read.
ITEMS_JS = """() => {
  const items = {};
  for (const [k, sel] of Object.entries(__ITEM_KINDS__)) items[k] = document.querySelectorAll(sel).length;
  items.elements = document.body ? document.body.getElementsByTagName('*').length : 0;
  items.dialog = __DIALOGS__;
  return items;
}""".replace("__ITEM_KINDS__", _ITEM_KINDS).replace("__DIALOGS__", _DIALOGS)


@dataclass(frozen=True, slots=True)
class EffectSnapshot:
    """What the page keeps, at one moment: digests and counts only, never a value in clear.

    Attributes
    ----------
    url : str
        The page's URL.
    local, session : Mapping[str, str]
        ``localStorage`` / ``sessionStorage`` key -> FNV-1a digest of its value (empty when unreadable).
    cookies : Mapping[str, str]
        Cookie name (``name@domain/path``) -> SHA-256 hex prefix of its value.
    idb : Mapping[str, str]
        ``"database/store"`` -> record count (as text); ``"?"`` -> why the counts are incomplete.
    items : Mapping[str, int]
        List-like item counts of the main document (``li``, ``tr``, ``listitem``, ``row``, ``option``,
        ``article``, ``treeitem``), ``elements``, all its elements, and ``dialog``, the dialogs shown.
    values : Mapping[str, str]
        Form control key -> digest of its value or checked state (password fields left out).
    """

    url: str = ""
    local: Mapping[str, str] = field(default_factory=dict)
    session: Mapping[str, str] = field(default_factory=dict)
    cookies: Mapping[str, str] = field(default_factory=dict)
    idb: Mapping[str, str] = field(default_factory=dict)
    items: Mapping[str, int] = field(default_factory=dict)
    values: Mapping[str, str] = field(default_factory=dict)


def _cookie_digest(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8", "replace")).hexdigest()[:16]


def snapshot(driver: Any, read: Any = None, *,
             cookies_kept: Callable[[Mapping[str, Any]], Mapping[str, str] | None] | None = None
             ) -> EffectSnapshot | None:
    """The page's kept state now (see the module docstring); None when the driver has no page to read or the
    page would not answer (then nothing can be told, and the caller says so).

    ``read``: what :data:`SNAPSHOT_JS` returned in a round trip the caller made anyway
    (:meth:`core.perception.driver.PlaywrightDriver.probe_and_read`, right before); None reads it now.
    The cookies are read now, unless ``cookies_kept`` (given the page read) answers the cookies of an
    earlier reading that cannot have changed since (:meth:`EffectWatch.mark`).

    Never raises: a page that is navigating, closed or busy gives None.
    """
    own = getattr(driver, "effect_snapshot", None)
    if callable(own):  # a driver that knows its page's state itself (the scripted fake)
        try:
            return own()
        except Exception:  # noqa: BLE001
            return None
    page = getattr(driver, "page", None)
    evaluate = getattr(driver, "evaluate", None)
    if page is None or evaluate is None or not hasattr(page, "context"):
        return None
    try:
        raw = read if isinstance(read, dict) else evaluate(SNAPSHOT_JS, IDB_LIMIT_MS)
    except Exception:  # noqa: BLE001 - a page navigating or not answering: nothing to compare
        return None
    if not isinstance(raw, dict):
        return None
    kept = cookies_kept(raw) if cookies_kept is not None else None
    cookies: dict[str, str] = dict(kept) if kept is not None else {}
    try:
        for c in (page.context.cookies(str(raw.get("url") or page.url)) if kept is None else ()):
            cookies[f"{c.get('name', '')}@{c.get('domain', '')}{c.get('path', '')}"] = _cookie_digest(
                str(c.get("value", "")))
    except Exception:  # noqa: BLE001 - a closed context: cookies unknown
        cookies = {"?": "unreadable"}
    return EffectSnapshot(url=str(raw.get("url") or ""), local=dict(raw.get("local") or {}),
                          session=dict(raw.get("session") or {}), cookies=cookies,
                          idb={str(k): str(v) for k, v in (raw.get("idb") or {}).items()},
                          items={str(k): int(v) for k, v in (raw.get("items") or {}).items()},
                          values={str(k): str(v) for k, v in (raw.get("values") or {}).items()})


def item_counts(driver: Any) -> dict[str, int] | None:
    """The list-like item counts of the driver's page as :func:`snapshot` has them (:attr:`EffectSnapshot.items`),
    read alone (one ``evaluate``, nothing of storage: what the recorder keeps per snapshot); None when the page
    cannot be read.  Never raises."""
    evaluate = getattr(driver, "evaluate", None)
    if evaluate is None or getattr(driver, "page", None) is None:
        return None
    try:
        raw = evaluate(ITEMS_JS)
    except Exception:  # noqa: BLE001 - a page navigating or not answering
        return None
    return {str(k): int(v) for k, v in raw.items()} if isinstance(raw, dict) else None


class EffectWatch:
    """Per page: the snapshot before the current action, and the keys that change on their own.

    Attributes
    ----------
    before : EffectSnapshot | None
        Taken by :meth:`mark` right before the step's action; None when the page could not be read.
    background : set[str]
        Keys (as :func:`core.recover.effects.changed_keys` names them, e.g. ``"localStorage heartbeat"``)
        seen to change while no action was in flight: never counted as an action's effect.
    """

    def __init__(self, page: Any) -> None:
        self.page = page
        self.before: EffectSnapshot | None = None
        self.background: set[str] = set()
        #: Cookie readings from the browser made by :meth:`mark` (the others reused the last one).
        self.cookie_reads = 0
        self._cookies: tuple[Any, float, dict[str, str]] | None = None

    @classmethod
    def of(cls, driver: Any) -> "EffectWatch | None":
        """The watch of ``driver``'s current page (made on first use); None for drivers without a page."""
        from core.perception.netwatch import follow_page

        if callable(getattr(driver, "effect_snapshot", None)):  # no browser page: one watch per driver
            watch = getattr(driver, "_steadyhand_effects", None)
            if not isinstance(watch, cls):
                watch = cls(None)
                driver._steadyhand_effects = watch
            return watch
        return follow_page(driver, cls, "_steadyhand_effects")

    def mark(self, driver: Any, read: Any = None) -> EffectSnapshot | None:
        """Snapshot the page right before an action (kept as :attr:`before`, also returned); ``read`` as in
        :func:`snapshot`.

        The cookies (a round trip to the browser) are those of the last mark when none can have changed since:
        the same URL and ``document.cookie``, and no request sent nor response received since (beacons left
        out) and no response that set a cookie (:class:`~core.perception.netwatch.NetworkWatch`: an HttpOnly
        cookie comes with a response; a script's cookie shows in ``document.cookie``), within
        :data:`COOKIES_KEPT_S`.  Counted in :attr:`cookie_reads`.
        """
        from core.perception.netwatch import NetworkWatch

        net = NetworkWatch.of(driver) if not callable(getattr(driver, "effect_snapshot", None)) else None

        def key(raw: Mapping[str, Any]) -> tuple[Any, ...] | None:
            if net is None or not raw.get("cookie") or raw.get("cookie") == "?":
                return None
            return (str(raw.get("url") or ""), raw.get("cookie"), net.requests, net.responses, net.cookies_set)

        asked: dict[str, Any] = {"key": None, "reused": False}  # what the snapshot's reading was keyed by

        def kept(raw: Mapping[str, Any]) -> Mapping[str, str] | None:
            k = asked["key"] = key(raw)
            if (k is None or self._cookies is None or self._cookies[0] != k
                    or time.monotonic() - self._cookies[1] > COOKIES_KEPT_S):
                return None
            asked["reused"] = True
            return self._cookies[2]

        self.before = snapshot(driver, read, cookies_kept=kept)
        if self.before is not None and not asked["reused"]:  # the cookies were read from the browser now
            self.cookie_reads += 1
            k = asked["key"]
            self._cookies = ((k, time.monotonic(), dict(self.before.cookies))
                             if k is not None and "?" not in self.before.cookies else None)
        return self.before
