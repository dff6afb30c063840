"""Small page facts of our own for post-verification and rollback (R3, S5), beside the collector.

The page library's collector (``page_lib.js``) lists interactive elements;
these scripts read what it does not: the main heading (part of a step's
after-state), the form values of the main document (a checkpoint's data
snapshot) and set them back (a rollback).  Each goes through
``Driver.evaluate``, so the fake driver can script them; a driver that
cannot run one gives None (the fact is then unknown, never guessed).
"""
from __future__ import annotations

from typing import Any

__all__ = ["ARRIVING_JS", "HEADING_JS", "FORM_VALUES_JS", "RESTORE_FORM_JS", "main_heading", "form_values", "restore_form",
           "TOKEN_JS"]

#: The main heading: the first visible h1 / role=heading level 1 outside dialogs, else the first h2.
HEADING_JS = """() => {
  const vis = e => { const r = e.getBoundingClientRect(); const s = getComputedStyle(e);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none'; };
  const outside = e => !e.closest('dialog,[role=dialog],[role=alertdialog],[aria-modal=true]');
  for (const sel of ['h1,[role=heading][aria-level="1"]', 'h2,[role=heading][aria-level="2"]']) {
    for (const e of document.querySelectorAll(sel)) {
      if (vis(e) && outside(e)) return (e.innerText || e.textContent || '').replace(/\\s+/g, ' ').trim().slice(0, 200);
    }
  }
  return '';
}"""

#: Form controls of the main document: key (#id, [name], else a CSS path), label, value, checked, password.
FORM_VALUES_JS = """() => {
  const out = [];
  const keyOf = e => {
    if (e.id) return '#' + CSS.escape(e.id);
    const tag = e.tagName.toLowerCase();
    if (e.name && document.querySelectorAll(tag + '[name="' + CSS.escape(e.name) + '"]').length === 1)
      return tag + '[name="' + CSS.escape(e.name) + '"]';
    const parts = []; let n = e;
    while (n && n.nodeType === 1 && n !== document.body) {
      let i = 1, s = n; while ((s = s.previousElementSibling)) if (s.tagName === n.tagName) i++;
      parts.unshift(n.tagName.toLowerCase() + ':nth-of-type(' + i + ')'); n = n.parentElement;
    }
    return 'body > ' + parts.join(' > ');
  };
  const skip = new Set(['hidden', 'file', 'submit', 'button', 'reset', 'image']);
  for (const e of document.querySelectorAll('input,textarea,select')) {
    const type = (e.getAttribute('type') || '').toLowerCase();
    if (e.tagName === 'INPUT' && skip.has(type)) continue;
    const label = (e.labels && e.labels[0] ? e.labels[0].innerText : '') || e.getAttribute('aria-label') || e.name || '';
    const box = type === 'checkbox' || type === 'radio';
    out.push({key: keyOf(e), label: label.replace(/\\s+/g, ' ').trim().slice(0, 80),
              value: box ? '' : String(e.value), checked: box ? !!e.checked : null,
              password: type === 'password'});
    if (out.length >= 200) break;
  }
  return out;
}"""

#: Sets values back (input and change events, as typing would), returns the keys it could not find.
RESTORE_FORM_JS = """(items) => {
  const missing = [];
  for (const it of items) {
    const e = document.querySelector(it.key);
    if (!e) { missing.push(it.key); continue; }
    if (it.checked !== null && it.checked !== undefined) {
      if (e.checked !== it.checked) { e.checked = it.checked; e.dispatchEvent(new Event('input', {bubbles: true}));
        e.dispatchEvent(new Event('change', {bubbles: true})); }
      continue;
    }
    if (e.value !== it.value) {
      const proto = e.tagName === 'TEXTAREA' ? HTMLTextAreaElement.prototype
        : e.tagName === 'SELECT' ? HTMLSelectElement.prototype : HTMLInputElement.prototype;
      const setter = Object.getOwnPropertyDescriptor(proto, 'value').set;
      setter.call(e, it.value);  // the native setter: frameworks that track the value see the change
      e.dispatchEvent(new Event('input', {bubbles: true}));
      e.dispatchEvent(new Event('change', {bubbles: true}));
    }
  }
  return missing;
}"""


def _run(driver: Any, script: str, arg: Any = None) -> Any:
    try:
        return driver.evaluate(script, arg) if arg is not None else driver.evaluate(script)
    except Exception:  # noqa: BLE001 - the fact is unknown (fake driver, page navigating, hostile page)
        return None


def main_heading(driver: Any) -> str | None:
    """Text of the page's main heading ("" when it has none); None when it cannot be read."""
    got = _run(driver, HEADING_JS)
    return str(got) if isinstance(got, str) else None


def form_values(driver: Any) -> list[dict[str, Any]] | None:
    """Form controls of the main document, clear values included - the caller masks secrets at once.

    Returns ``[{"key", "label", "value", "checked", "password"}]`` or None when it cannot be read.
    """
    got = _run(driver, FORM_VALUES_JS)
    return [dict(x) for x in got if isinstance(x, dict)] if isinstance(got, list) else None


def restore_form(driver: Any, items: list[dict[str, Any]]) -> list[str] | None:
    """Set ``[{"key", "value", "checked"}]`` back; returns the keys not found, None when it could not run."""
    got = _run(driver, RESTORE_FORM_JS, items)
    return [str(k) for k in got] if isinstance(got, list) else None


#: Overlays that cover the page: open dialogs (role=dialog, <dialog open>, aria-modal, Bootstrap's
#: ``.modal.show``) and fixed-position layers over the viewport's centre or over the point given (a
#: cookie banner, a focus-stealing popup) - never a fixed app shell (one holding ``main`` or ``h1``, or
#: more than 12 controls).  Each control inside is tagged ``data-steadyhand-ov="r.i"``
#: so that it can be clicked through a selector; returns ``[{"key", "name", "controls": [{"key",
#: "name", "label", "cls", "dismiss", "enabled", "tag", "type"}]}]``, topmost last.
OVERLAYS_JS = """(pt) => {
  const vis = e => { const r = e.getBoundingClientRect(); const s = getComputedStyle(e);
    return r.width > 1 && r.height > 1 && s.visibility !== 'hidden' && s.display !== 'none' && s.opacity !== '0'; };
  const roots = [];
  const add = e => { if (e && !roots.includes(e) && !roots.some(r => r.contains(e))) {
    for (let i = roots.length - 1; i >= 0; i--) if (e.contains(roots[i])) roots.splice(i, 1);
    roots.push(e); } };
  for (const d of document.querySelectorAll('dialog[open],[role=dialog],[role=alertdialog],[aria-modal=true],.modal.show'))
    if (vis(d)) add(d);
  const pts = [[innerWidth / 2, innerHeight / 2]];
  if (pt && pt[0] >= 0 && pt[1] >= 0) pts.push(pt);
  for (const [x, y] of pts) {
    let e = document.elementFromPoint(x, y), top = null;
    for (let n = e; n && n !== document.body && n !== document.documentElement; n = n.parentElement) {
      const s = getComputedStyle(n);
      if (s.position === 'fixed') top = n;
    }
    // a popup layer, not a fixed app shell: it holds neither the page's main content nor many controls
    if (top && vis(top) && !top.querySelector('main,[role=main],h1') && !top.matches('main,[role=main]')
        && top.querySelectorAll('button,a[href],input,select,textarea,[role=button]').length <= 12
        && top.querySelector('button,a[href],[role=button],input[type=button],input[type=submit]')) add(top);
  }
  const nameOf = d => {
    const by = d.getAttribute('aria-labelledby');
    const lab = by ? by.split(/\\s+/).map(id => document.getElementById(id)).filter(Boolean).map(x => x.innerText).join(' ') : '';
    const h = d.querySelector('h1,h2,h3,h4,h5,.modal-title,legend');
    return (d.getAttribute('aria-label') || lab || (h ? h.innerText : '') || '').replace(/\\s+/g, ' ').trim().slice(0, 120);
  };
  const out = [];
  roots.forEach((d, ri) => {
    const controls = [];
    d.querySelectorAll('button,a[href],[role=button],input[type=button],input[type=submit],input[type=reset]').forEach((c, ci) => {
      if (!vis(c)) return;
      const key = ri + '.' + ci;
      c.setAttribute('data-steadyhand-ov', key);
      controls.push({key, name: (c.getAttribute('aria-label') || c.innerText || c.value || c.title || '').replace(/\\s+/g, ' ').trim().slice(0, 80),
        label: c.getAttribute('aria-label') || '', cls: String(c.className || ''), tag: c.tagName.toLowerCase(),
        type: (c.getAttribute('type') || '').toLowerCase(),
        dismiss: c.hasAttribute('data-dismiss') || c.hasAttribute('data-bs-dismiss') || c.getAttribute('formmethod') === 'dialog'
                 || (c.closest('form') && c.closest('form').getAttribute('method') === 'dialog' && c.value === 'cancel'),
        enabled: !c.disabled && c.getAttribute('aria-disabled') !== 'true'});
    });
    out.push({key: String(ri), name: nameOf(d), controls});
  });
  return out;
}"""


def overlays(driver: Any, point: tuple[float, float] | None = None) -> list[dict[str, Any]] | None:
    """Overlays over the page (:data:`OVERLAYS_JS`), topmost last; None when they cannot be read."""
    got = _run(driver, OVERLAYS_JS, list(point) if point else [-1, -1])
    return [dict(x) for x in got if isinstance(x, dict)] if isinstance(got, list) else None


__all__ += ["OVERLAYS_JS", "overlays"]


#: One cheap read of what can change a page without a new observation: URL, the page library's DOM
#: mutation count (-1 without it), input/scroll/focus/pointer/keyboard/animation events seen since the
#: listeners were installed (installed on the first read, capture phase), scroll offset, child frames,
#: running animations (not those that only repaint: a focus ring's shadow or colour), the document's ready
#: state and its time origin (a reload of the same URL is another document, whatever its mutation count).
TOKEN_JS = r"""() => {
  let c = window.__steadyhandChange;
  if (!c) {
    c = window.__steadyhandChange = { events: 0 };
    for (const t of ['input', 'change', 'scroll', 'focusin', 'focusout', 'keydown', 'keyup', 'pointerdown',
                     'pointerup', 'wheel', 'resize', 'hashchange', 'popstate', 'animationstart',
                     'transitionrun', 'toggle', 'load']) {
      window.addEventListener(t, () => { c.events++; }, { capture: true, passive: true });
    }
  }
  const lib = window.__steadyhand;
  // a running animation that only repaints (a focused field's box-shadow or border colour) moves nothing a look
  // saw: it is not counted
  const PAINT = /^(box-shadow|color|background-color|border(-(top|right|bottom|left))?-color|outline(-color)?|text-shadow|text-decoration-color|caret-color|fill|stroke)$/;
  const paintOnly = (a) => {
    try {
      if (a.transitionProperty) return PAINT.test(a.transitionProperty);
      const props = new Set();
      for (const k of a.effect.getKeyframes()) {
        for (const p in k) if (!['offset', 'easing', 'composite', 'computedOffset'].includes(p)) props.add(p);
      }
      return props.size > 0 && [...props].every((p) => PAINT.test(p.replace(/[A-Z]/g, (m) => '-' + m.toLowerCase())));
    } catch (e) { return false; }
  };
  let anim = -1;
  try { anim = document.getAnimations().filter((a) => a.playState === 'running' && !paintOnly(a)).length; }
  catch (e) { /* old */ }
  return [location.href, lib && lib.state ? lib.state.mutations : -1, c.events, scrollX, scrollY,
          window.frames.length, anim, document.readyState, performance.timeOrigin];
}"""


#: The page side of :func:`dialog_arriving`: true when a dialog is in the page but not shown yet (zero opacity,
#: an opacity an animation is still raising, hidden, or no size - its show animation under way) while a finite
#: CSS animation or transition runs on it, inside it or on one of its ancestors.  The dialog selector is the page library's ``modals()`` one
#: (``core/perception/page_lib.js``).  sweetalert2 11 adds its popup with ``role=dialog`` at opacity 0 and fades
#: it in (``swal2-show``, 300 ms; 3 s on a CPU ten times slower); Bootstrap 3 shows its ``.modal`` at opacity 0
#: and fades it in after its backdrop.
ARRIVING_JS = """
() => {
  const running = document.getAnimations().filter(a => {
    if (a.playState !== 'running') return false;
    try { return Number.isFinite(a.effect.getComputedTiming().endTime); } catch (e) { return false; }
  });
  if (!running.length) return false;
  const targets = running.map(a => a.effect && a.effect.target).filter(t => t && t.nodeType === 1);
  const sel = '[role=dialog],[role=alertdialog],dialog[open],[aria-modal=true],.ui-dialog';
  for (const d of document.querySelectorAll(sel)) {
    const r = d.getBoundingClientRect(), cs = getComputedStyle(d);
    let shown = r.width >= 1 && r.height >= 1 && cs.visibility !== 'hidden' && cs.display !== 'none';
    for (let e = d; shown && e; e = e.parentElement) {
      // transparent, or fading in: an element whose opacity an animation is moving, not opaque yet (a frame
      // after the fade began it is no longer 0: a loaded machine's wait ends frames later)
      const o = parseFloat(getComputedStyle(e).opacity);
      if (o === 0 || (o < 1 && targets.includes(e))) shown = false;
    }
    if (shown) continue;
    if (targets.some(t => t === d || d.contains(t) || t.contains(d))) return true;
  }
  return false;
}
"""
