// Steadyhand in-page library: installed in every frame by an init script.
// Observes interactive elements (P1), page-level state (S2) and quiet-ness (P6).
// It never reads the demo app's ground-truth attributes (data-gt*).
//
// Robust to the page's own scripts: the built-ins it relies on (Array and its prototype, JSON,
// Object, String, querySelectorAll, getBoundingClientRect, NodeList iteration...) are taken
// pristine at injection - from this realm when the init script runs before the page's scripts,
// else from a fresh iframe realm - and every entry point swaps them back in for the duration of
// the call (GUARDED below), restoring the page's own afterwards. Results leave the page as JSON
// text made by the pristine JSON.stringify (call()), so the page's overrides cannot garble them.
(() => {
  if (window.__steadyhand && window.__steadyhand.version === 1) return;

  // --- pristine built-ins -------------------------------------------------------------
  const R = (() => {
    // before the page's scripts ran (an init script at document start) this realm is pristine
    if (!document.documentElement || !document.scripts || document.scripts.length === 0) return window;
    try {
      const f = Document.prototype.createElement.call(document, 'iframe');
      f.setAttribute('aria-hidden', 'true');
      f.style.cssText = 'display:none';
      Node.prototype.appendChild.call(document.documentElement, f);
      const w = f.contentWindow;
      const realm = {};
      const names = ['Array', 'Object', 'String', 'JSON', 'Math', 'Reflect', 'Symbol', 'Set', 'Map', 'WeakMap',
        'Number', 'Function', 'Node', 'Element', 'Document', 'DocumentFragment', 'ShadowRoot', 'NodeList',
        'HTMLCollection', 'DOMTokenList', 'CSS', 'parseInt', 'parseFloat', 'getComputedStyle', 'RegExp', 'Promise',
        'EventTarget'];
      for (let i = 0; i < names.length; i++) realm[names[i]] = w[names[i]];
      Node.prototype.removeChild.call(document.documentElement, f);
      return realm;
    } catch (e) { return window; }
  })();
  const gOPD = R.Object.getOwnPropertyDescriptor, defProp = R.Object.defineProperty;
  const delProp = R.Reflect.deleteProperty, rApply = R.Reflect.apply;
  const pStringify = R.JSON.stringify, pParse = R.JSON.parse;
  const IT = R.Symbol.iterator;
  // [holder path, keys]: 'window' is the page's global, paths are read from the page and from R.
  const GUARDED = [
    ['Array', ['from', 'isArray', 'of']],
    ['Array.prototype', ['push', 'pop', 'shift', 'unshift', 'slice', 'splice', 'concat', 'join', 'indexOf',
      'lastIndexOf', 'includes', 'map', 'filter', 'forEach', 'some', 'every', 'reduce', 'find', 'findIndex', 'sort',
      'reverse', 'keys', 'values', 'entries', 'fill', 'flat', IT, 'toJSON']],
    ['Object', ['keys', 'values', 'entries', 'assign', 'freeze', 'create', 'getOwnPropertyDescriptor', 'defineProperty']],
    ['Object.prototype', ['toJSON', 'hasOwnProperty', 'toString', 'valueOf']],
    ['String.prototype', ['trim', 'replace', 'slice', 'split', 'toLowerCase', 'toUpperCase', 'indexOf', 'includes',
      'startsWith', 'endsWith', 'padStart', 'repeat', 'substring', 'charAt', 'match', 'toJSON', IT]],
    ['Number.prototype', ['toJSON', 'toString']], ['Boolean.prototype', ['toJSON']],
    ['JSON', ['stringify', 'parse']],
    ['Math', ['hypot', 'max', 'min', 'abs', 'round', 'floor', 'ceil']],
    ['Function.prototype', ['call', 'apply', 'bind']],
    ['RegExp.prototype', ['test', 'exec']],
    ['Set.prototype', ['has', 'add', 'delete', IT]], ['Map.prototype', ['get', 'set', 'has', 'delete', IT]],
    ['WeakMap.prototype', ['get', 'set', 'has', 'delete']],
    ['Node.prototype', ['contains', 'getRootNode']],
    ['Element.prototype', ['getBoundingClientRect', 'getClientRects', 'querySelector', 'querySelectorAll', 'closest',
      'matches', 'getAttribute', 'hasAttribute']],
    ['Document.prototype', ['querySelector', 'querySelectorAll', 'getElementById', 'elementFromPoint',
      'createTreeWalker', 'createRange']],
    ['DocumentFragment.prototype', ['querySelector', 'querySelectorAll', 'getElementById']],
    ['ShadowRoot.prototype', ['elementFromPoint']],
    ['NodeList.prototype', [IT, 'item', 'forEach']], ['HTMLCollection.prototype', [IT, 'item']],
    ['DOMTokenList.prototype', [IT]],
    ['CSS', ['escape']],
    ['window', ['getComputedStyle', 'parseInt', 'parseFloat', 'Set', 'Map', 'WeakMap']],
    ['document', ['querySelector', 'querySelectorAll', 'getElementById', 'elementFromPoint', 'createTreeWalker',
      'createRange']],
  ];
  const at = (root, path) => {
    let o = root;
    const parts = path === 'window' ? [] : path === 'document' ? null : path.split('.');
    if (parts === null) return root === window ? document : null;  // the document's own properties: none pristine
    for (let i = 0; i < parts.length && o; i++) o = o[parts[i]];
    return o || null;
  };
  const SWAPS = [];  // [holder in the page, key, pristine descriptor or undefined]
  for (let i = 0; i < GUARDED.length; i++) {
    const holder = at(window, GUARDED[i][0]);
    const source = GUARDED[i][0] === 'window' ? R : at(R, GUARDED[i][0]);
    if (!holder) continue;
    const keys = GUARDED[i][1];
    for (let j = 0; j < keys.length; j++) {
      let d;
      try { d = source ? gOPD(source, keys[j]) : undefined; } catch (e) { d = undefined; }
      if (GUARDED[i][0] === 'window') d = gOPD(window, keys[j]);  // the page's global functions as injected
      SWAPS[SWAPS.length] = [holder, keys[j], d];
    }
  }
  const sameDesc = (a, b) => (!a && !b) || (!!a && !!b && a.value === b.value && a.get === b.get && a.set === b.set);
  function swapIn() {
    const undo = [];
    for (let i = 0; i < SWAPS.length; i++) {
      const holder = SWAPS[i][0], key = SWAPS[i][1], want = SWAPS[i][2];
      let cur;
      try { cur = gOPD(holder, key); } catch (e) { continue; }
      if (sameDesc(cur, want)) continue;
      try {
        if (want) defProp(holder, key, want); else if (!delProp(holder, key)) continue;
        undo[undo.length] = [holder, key, cur];
      } catch (e) { /* a non-configurable override stays: the call may fail and say so */ }
    }
    return undo;
  }
  function swapOut(undo) {
    for (let i = undo.length - 1; i >= 0; i--) {
      const holder = undo[i][0], key = undo[i][1], was = undo[i][2];
      try { if (was) defProp(holder, key, was); else delProp(holder, key); } catch (e) { /* ignore */ }
    }
  }
  let depth = 0;
  // fn with the pristine built-ins swapped in for the duration of the outermost call.
  function guarded(fn) {
    return function () {
      if (depth > 0) return rApply(fn, this, arguments);
      depth++;
      const undo = swapIn();
      try { return rApply(fn, this, arguments); } finally { swapOut(undo); depth--; }
    };
  }

  const GT = /^data-gt/i;
  // ax: element -> {role, name, page} from the browser's accessibility tree at the last collect
  // (page: the in-page name then, to tell a stale entry)
  // lastMutation starts at the library's own start (the document's): a page just loaded has been quiet since it
  // began, not since its navigation started (the server's time before it is no quiet of this document's)
  const state = { mutations: 0, lastMutation: performance.now(), inflight: 0, refs: [], ax: new WeakMap(),
                  doc: `${Math.random()}` };

  // --- quiet-ness: DOM mutations and in-flight requests ----------------------------
  try {
    const mo = new MutationObserver(guarded((list) => {
      for (let i = 0; i < list.length; i++) {
        const m = list[i];
        if (m.type === 'attributes' && m.attributeName && GT.test(m.attributeName)) continue;
        state.mutations++; state.lastMutation = performance.now();
      }
    }));
    const startObs = () => mo.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    if (document.documentElement) startObs(); else document.addEventListener('DOMContentLoaded', startObs);
  } catch (e) { /* ignore */ }
  try {
    const of = window.fetch;
    if (of) window.fetch = function (...a) {
      state.inflight++;
      return rApply(of, this, a).finally(() => { state.inflight = Math.max(0, state.inflight - 1); state.lastMutation = performance.now(); });
    };
    const oo = XMLHttpRequest.prototype.open, os = XMLHttpRequest.prototype.send;
    XMLHttpRequest.prototype.send = function (...a) {
      state.inflight++;
      this.addEventListener('loadend', () => { state.inflight = Math.max(0, state.inflight - 1); state.lastMutation = performance.now(); });
      return rApply(os, this, a);
    };
    XMLHttpRequest.prototype.open = oo;
  } catch (e) { /* ignore */ }

  // --- reactions: work that an action's handlers put off for later (a validator's setTimeout) ---------
  // A timeout or idle callback of at most REACTION_MS is a *reaction* while pending when it was scheduled
  // outside a timer's callback (an event handler, a promise, a request's answer: what an action can set
  // off) or inside the callback of another reaction (a chain the action started).  What a poller schedules
  // (inside a setInterval callback, or a timeout chain that is no reaction) is not.  Each reaction keeps the
  // sequence number of its scheduling: the fast settle wait (core/perception/driver.py, _SETTLE_JS) ends
  // before its idle bound only when no reaction scheduled since the action began is pending
  // (reactionsSince).  The library's own waits use the pristine setTimeout (sleep), never counted.
  const REACTION_MS = 1000;
  state.timerSeq = 0;
  const reactions = new Map();  // timer id -> seq (timeouts), 'i' + id -> seq (idle callbacks)
  let running = '';  // the kind of timer callback running now: '' none, 'reaction', 'poll'
  const pSetTimeout = window.setTimeout;
  function sleep(ms) { return new R.Promise((r) => { rApply(pSetTimeout, window, [r, ms]); }); }
  try {
    const st = window.setTimeout, ct = window.clearTimeout, si = window.setInterval;
    const within = (fn, kind, key) => function (...a) {
      if (key !== undefined) reactions.delete(key());
      const was = running;
      running = kind;
      try { return rApply(fn, this, a); } finally { running = was; }
    };
    window.setTimeout = function (fn, ms, ...rest) {
      if (typeof fn !== 'function') return rApply(st, window, [fn, ms, ...rest]);
      const react = running !== 'poll' && (Number(ms) || 0) <= REACTION_MS;
      let id = 0;
      id = rApply(st, window, [within(fn, react ? 'reaction' : 'poll', () => id), ms, ...rest]);
      if (react) reactions.set(id, ++state.timerSeq);
      return id;
    };
    window.clearTimeout = function (id) { reactions.delete(id); return rApply(ct, window, [id]); };
    window.setInterval = function (fn, ms, ...rest) {
      if (typeof fn !== 'function') return rApply(si, window, [fn, ms, ...rest]);
      return rApply(si, window, [within(fn, 'poll'), ms, ...rest]);
    };
    const ric = window.requestIdleCallback, cic = window.cancelIdleCallback;
    if (ric) {
      window.requestIdleCallback = function (fn, opts, ...rest) {
        if (typeof fn !== 'function') return rApply(ric, window, [fn, opts, ...rest]);
        const react = running !== 'poll';
        let id = 0;
        id = rApply(ric, window, [within(fn, react ? 'reaction' : 'poll', () => 'i' + id), opts, ...rest]);
        if (react) reactions.set('i' + id, ++state.timerSeq);
        return id;
      };
      if (cic) window.cancelIdleCallback = function (id) { reactions.delete('i' + id); return rApply(cic, window, [id]); };
    }
  } catch (e) { /* ignore */ }
  // An animation frame callback is a reaction too (a widget that normalises a value in its next frame), as
  // long as it is a short chain: one requested outside a frame callback (not by a poller) has depth 1, one
  // requested inside a reaction's frame callback depth + 1; from depth FRAME_CHAIN on it is an animation loop
  // (a spinner, a canvas), never waited for.  The library's own frame waits use the pristine one (frame).
  const FRAME_CHAIN = 3;
  let frameDepth = 0;  // the depth of the reaction frame callback running now (0: none)
  const pRaf = window.requestAnimationFrame;
  function frame(fn) { return rApply(pRaf, window, [fn]); }
  try {
    const raf = window.requestAnimationFrame, caf = window.cancelAnimationFrame;
    if (raf) {
      window.requestAnimationFrame = function (fn, ...rest) {
        if (typeof fn !== 'function') return rApply(raf, window, [fn, ...rest]);
        const depth = running === 'frame' ? 0 : (frameDepth > 0 ? frameDepth + 1 : 1);
        const react = running !== 'poll' && depth > 0 && depth < FRAME_CHAIN + 1;
        let id = 0;
        const cb = function (...a) {
          reactions.delete('f' + id);
          const was = running, wasDepth = frameDepth;
          running = react ? 'reaction' : 'frame';
          frameDepth = react ? depth : 0;
          try { return rApply(fn, this, a); } finally { running = was; frameDepth = wasDepth; }
        };
        id = rApply(raf, window, [cb, ...rest]);
        if (react) reactions.set('f' + id, ++state.timerSeq);
        return id;
      };
      if (caf) window.cancelAnimationFrame = function (id) { reactions.delete('f' + id); return rApply(caf, window, [id]); };
    }
  } catch (e) { /* ignore */ }
  // A navigation to another document under way (the Navigation API's navigate event: a link, a form, a script's
  // location.assign): the page is about to be replaced, so it is not settled - until the new document replaces
  // this one (the wait then goes on in it), or LEAVE_MS passed (a 204 answer, a navigation cancelled later).
  // A download, and a navigation a script cancels or takes over in the same document, do not count.
  state.leaving = 0;
  try {
    if (window.navigation && navigation.addEventListener) {
      navigation.addEventListener('navigate', guarded((e) => {
        if (e.destination && e.destination.sameDocument) return;
        if (e.downloadRequest !== null && e.downloadRequest !== undefined) return;
        const at = performance.now();
        state.leaving = at;
        // once every listener had the event (a router may cancel it, or take it over in this document)
        rApply(pSetTimeout, window, [() => {
          if (state.leaving === at && (e.defaultPrevented || navigation.transition
              || location.href === e.destination.url)) state.leaving = 0;
        }, 0]);
      }));
    }
  } catch (e) { /* ignore */ }
  // A message posted (window or MessageChannel: how React's scheduler and others queue their next slice of
  // work) is activity the fast settle wait sees: its quiet time counts from the last one (lastPost).
  state.lastPost = 0;
  try {
    const mpm = MessagePort.prototype.postMessage;
    MessagePort.prototype.postMessage = function (...a) { state.lastPost = performance.now(); return rApply(mpm, this, a); };
    const wpm = window.postMessage;
    window.postMessage = function (...a) { state.lastPost = performance.now(); return rApply(wpm, this, a); };
  } catch (e) { /* ignore */ }
  // reactions scheduled after sequence number seq and still pending
  function reactionsSince(seq) {
    let n = 0;
    reactions.forEach((s) => { if (s > seq) n++; });
    return n;
  }

  // --- a key held back as it arrives: the skill guard's focus check in the key's own task ----------------
  // core/engine/skilled.py arms it with the very evaluate that checks where a skill's key would go; the
  // check is made again here, in the keydown's dispatch - no timer can move focus between it and the
  // key's default action.  Armed for the next trusted keydown of that key only (its modifiers pass):
  // {key, target: element | null, tags, roles, types}; with a target, the key is held back unless it lands
  // on it; without one, when the element it lands on is one of tags / roles (its role attribute) / types
  // (its type attribute).  Held back: preventDefault and no page listener sees it (nor its keyup).
  // Registered at document start, before the page's scripts: the first capture listener on window.
  const keyGuard = { armed: null, seen: false, held: null, up: '' };
  try {
    const evp = Event.prototype;
    const pPrevent = evp.preventDefault, pStop = evp.stopImmediatePropagation, pPath = evp.composedPath;
    const pGetAttr = Element.prototype.getAttribute;
    const attr = (el, a) => { try { return String(rApply(pGetAttr, el, [a]) || '').toLowerCase(); } catch (e) { return ''; } };
    const hold = (ev) => { rApply(pPrevent, ev, []); rApply(pStop, ev, []); };
    const onKey = (ev) => {
      if (!ev.isTrusted) return;
      if (ev.type === 'keyup') {
        if (keyGuard.up && (ev.key === keyGuard.up || ev.code === keyGuard.up)) { keyGuard.up = ''; hold(ev); }
        return;
      }
      const g = keyGuard.armed;
      if (!g || (ev.key !== g.key && ev.code !== g.key)) return;
      keyGuard.armed = null; keyGuard.seen = true;
      const path = rApply(pPath, ev, []);
      const t = path && path.length ? path[0] : ev.target;
      const tag = t && t.tagName ? String(t.tagName).toLowerCase() : '';
      const info = { is_target: !!g.target && t === g.target, tag, role: t && t.tagName ? attr(t, 'role') : '',
        type: t && t.tagName ? attr(t, 'type') : '' };
      const refuse = g.target ? !info.is_target
        : g.tags.indexOf(tag) >= 0 || g.roles.indexOf(info.role) >= 0 || g.types.indexOf(info.type) >= 0;
      if (refuse) { keyGuard.held = info; keyGuard.up = ev.key; hold(ev); }
    };
    window.addEventListener('keydown', onKey, true);
    window.addEventListener('keyup', onKey, true);
  } catch (e) { /* no guard: keyHeld() says the key was not seen */ }
  // arm for the next key (see above); the key name is the last part of a chord ("Shift+Tab" -> "Tab")
  function armKey(spec) {
    const k = String(spec.key || '').split('+');
    keyGuard.armed = { key: k[k.length - 1], target: spec.target || null, tags: spec.tags || [],
      roles: spec.roles || [], types: spec.types || [] };
    keyGuard.seen = false; keyGuard.held = null; keyGuard.up = '';
  }
  // what became of the armed key, and disarm: {seen: it arrived here, held: {is_target, tag, role, type} | null}
  function keyHeld() {
    const r = { seen: keyGuard.seen, held: keyGuard.held };
    keyGuard.armed = null; keyGuard.seen = false; keyGuard.held = null;
    return r;
  }

  const INTERACTIVE_TAGS = new Set(['a', 'button', 'input', 'select', 'textarea', 'summary', 'option']);
  const INTERACTIVE_ROLES = new Set(['button', 'link', 'checkbox', 'radio', 'tab', 'menuitem', 'menuitemcheckbox',
    'menuitemradio', 'option', 'combobox', 'listbox', 'switch', 'textbox', 'searchbox', 'slider', 'spinbutton',
    'treeitem', 'gridcell', 'columnheader']);
  const IMPLICIT = { a: 'link', button: 'button', select: 'combobox', textarea: 'textbox', summary: 'button',
    option: 'option', h1: 'heading', h2: 'heading', h3: 'heading', img: 'img', dialog: 'dialog', form: 'form', th: 'columnheader', td: 'cell' };
  const INPUT_ROLES = { button: 'button', submit: 'button', reset: 'button', image: 'button', checkbox: 'checkbox',
    radio: 'radio', range: 'slider', number: 'spinbutton', search: 'searchbox', email: 'textbox', tel: 'textbox',
    text: 'textbox', url: 'textbox', password: 'textbox', date: 'textbox', file: 'button' };

  const clean = (s, n = 200) => (s || '').replace(/\s+/g, ' ').trim().slice(0, n);

  function roleOf(el) {
    const r = el.getAttribute('role');
    if (r) return r.split(/\s+/)[0];
    const tag = el.tagName.toLowerCase();
    if (tag === 'input') {
      const t = (el.getAttribute('type') || 'text').toLowerCase();
      if (t === 'hidden') return '';
      if (t === 'text' && el.getAttribute('list')) return 'combobox';
      return INPUT_ROLES[t] || 'textbox';
    }
    if (tag === 'a') return el.hasAttribute('href') ? 'link' : '';
    if (el.isContentEditable) return 'textbox';
    return IMPLICIT[tag] || '';
  }

  function byIds(el, attr) {
    const ids = (el.getAttribute(attr) || '').split(/\s+/).filter(Boolean);
    const root = el.getRootNode();
    return ids.map((id) => { const n = (root.getElementById ? root.getElementById(id) : null) || document.getElementById(id); return n ? n.textContent : ''; }).join(' ');
  }

  // Text of a <label>: its text, else the alt text of images in it (a label that is an icon).
  function labelText(l) {
    const t = clean(l.textContent);
    if (t) return t;
    return clean(Array.from(l.querySelectorAll('img[alt]')).map((i) => i.getAttribute('alt')).join(' '));
  }

  const BUTTON_INPUTS = new Set(['button', 'submit', 'reset', 'image', 'file', 'color']);

  // The <label>s of el (el.labels), from one pass over each tree's labels per collect: el.labels scans the
  // whole tree scope on every read, quadratic over a long table of buttons.
  let labelCache = null;  // per collect: tree root -> Map(control -> [label])
  function labelsOf(el) {
    if (!labelCache) return el.labels ? Array.from(el.labels) : [];
    if (!('labels' in el)) return [];
    const root = el.getRootNode();
    let map = labelCache.get(root);
    if (!map) {
      map = new Map();
      const ls = root.querySelectorAll ? root.querySelectorAll('label') : [];
      for (let i = 0; i < ls.length; i++) {
        const c = ls[i].control;
        if (!c) continue;
        if (!map.has(c)) map.set(c, []);
        map.get(c).push(ls[i]);
      }
      labelCache.set(root, map);
    }
    return map.get(el) || [];
  }

  function labelOf(el) {
    let txt = '';
    const labels = labelsOf(el);
    if (labels.length) txt = labels.map(labelText).join(' ');
    if (!clean(txt) && el.id) {
      const root = el.getRootNode();
      const l = root.querySelector ? root.querySelector(`label[for="${CSS.escape(el.id)}"]`) : null;
      if (l) txt = labelText(l);
    }
    if (!clean(txt)) { const l = el.closest('label'); if (l) txt = labelText(l); }
    // a field without a <label>: the text beside it (never for a button: its value names it)
    const buttonLike = el.tagName === 'INPUT' && BUTTON_INPUTS.has((el.getAttribute('type') || '').toLowerCase());
    if (!clean(txt) && /^(input|textarea|select)$/i.test(el.tagName) && !buttonLike) txt = proximityLabel(el);
    return clean(txt, 120);
  }

  // A form field without a <label>: the short text just before it (same row / cell header).
  function proximityLabel(el) {
    const short = (n) => { const t = clean(n && (n.innerText || n.textContent), 60); return t && t.length <= 40 ? t : ''; };
    let p = el.previousElementSibling;
    while (p && !clean(p.innerText || p.textContent)) p = p.previousElementSibling;
    if (p && !p.matches('input,select,textarea,button')) { const t = short(p); if (t) return t; }
    const cell = el.closest('td');
    if (cell) {
      let q = cell.previousElementSibling;
      if (q && (q.tagName === 'TH' || q.tagName === 'TD')) { const t = short(q); if (t) return t; }
    }
    let nx = el.nextElementSibling;
    if (nx && !nx.matches('input,select,textarea,button') && !el.previousElementSibling) { const t = short(nx); if (t) return t; }
    const parent = el.parentElement;
    if (parent && parent.children.length <= 3) {
      let q = parent.previousElementSibling;
      if (q && !q.querySelector('input,select,textarea')) { const t = short(q); if (t) return t; }
    }
    return '';
  }

  // s as the DOM spells it: text shown in other capitals by CSS (text-transform) takes the
  // case of the element's DOM text when the two differ in case only.
  function domCase(s, el) {
    // a select's or text area's content is its options or value, never its name: no case is taken from it
    if (!s || el.tagName === 'SELECT' || el.tagName === 'TEXTAREA') return s;
    const dom = clean(el.textContent, 2000);
    if (dom === s || !dom) return s;
    const i = dom.toLowerCase().indexOf(s.toLowerCase());
    if (i >= 0 && dom.length === dom.toLowerCase().length && s.length === s.toLowerCase().length) {
      return dom.slice(i, i + s.length);
    }
    return s;
  }

  // Text of el as rendered, slotted content included: innerText follows the DOM tree, so a shadow
  // <button><slot></slot></button> (Shoelace's sl-button) reads "" although it shows its host's text.
  function renderedText(el) {
    if (!el.querySelector || !el.querySelector('slot')) return el.innerText || el.textContent || '';
    const parts = [];
    const visit = (n) => {
      if (n.nodeType === 3) { parts.push(n.nodeValue); return; }
      if (n.nodeType !== 1) return;
      if (n.tagName === 'SLOT') {
        const assigned = n.assignedNodes({ flatten: true });
        if (!assigned.length) { for (let c = n.firstChild; c; c = c.nextSibling) visit(c); return; }
        for (let i = 0; i < assigned.length; i++) {
          const a = assigned[i];
          parts.push(a.nodeType === 1 ? (a.innerText || a.textContent || '') : (a.nodeValue || ''));
        }
        return;
      }
      if (n.tagName === 'STYLE' || n.tagName === 'SCRIPT') return;
      for (let c = n.firstChild; c; c = c.nextSibling) visit(c);
    };
    visit(el);
    return parts.join(' ');
  }

  function ownText(el) {
    const tag = el.tagName.toLowerCase();
    if (tag === 'input') {
      const t = (el.type || '').toLowerCase();
      if (['button', 'submit', 'reset'].includes(t)) return clean(el.value, 200);
      return '';
    }
    if (tag === 'select' || tag === 'textarea') return '';
    return domCase(clean(renderedText(el), 200), el);
  }

  // The in-page accessible name: used only where the browser's accessibility tree gave none
  // (an element collected before the tree was read, an out-of-process frame).
  function pageNameOf(el, label, text) {
    const lb = byIds(el, 'aria-labelledby');
    if (clean(lb)) return clean(lb, 120);
    const al = el.getAttribute('aria-label');
    if (clean(al)) return clean(al, 120);
    const tag = el.tagName.toLowerCase();
    const type = (el.getAttribute('type') || '').toLowerCase();
    if (tag === 'input' && ['button', 'submit', 'reset'].includes(type)) {
      return clean(el.value || el.getAttribute('value') || (type === 'reset' ? 'Reset' : type === 'submit' ? 'Submit' : ''), 120);
    }
    if (label) return label;
    if (tag === 'img' || (tag === 'input' && el.type === 'image')) return clean(el.getAttribute('alt'), 120);
    const role = roleOf(el);
    if (text && !['textbox', 'combobox', 'searchbox', 'listbox', 'spinbutton', 'slider'].includes(role)) {
      // as the browser names it: a decorative part marked aria-hidden (an icon's glyph, a logo's letter) is no part
      // of the name, so a light look names the element as a full look (Chromium's tree) does
      if (el.querySelector && el.querySelector('[aria-hidden="true"]')) {
        const shown = el.cloneNode(true);
        shown.querySelectorAll('[aria-hidden="true"]').forEach((n) => n.remove());
        const t = clean(shown.textContent, 120);
        if (t) return t;
      }
      return clean(text, 120);
    }
    const img = el.querySelector && el.querySelector('img[alt]');
    if (img) return clean(img.getAttribute('alt'), 120);
    if (!text && !['textbox', 'combobox', 'searchbox', 'listbox', 'spinbutton', 'slider'].includes(role)) {
      const shown = generatedText(el);  // an icon font's glyph (CSS content), as the browser names it
      if (shown) return shown;
    }
    return clean(el.getAttribute('title') || el.getAttribute('placeholder') || '', 120);
  }

  // The text CSS generates in el and its descendants (::before and ::after with a quoted string content, in
  // document order; aria-hidden parts left out), as the browser's accessible name takes it from content: an
  // icon-only link whose glyph an icon font draws (<a title="Edit"><span class="glyphicon-pencil"></span></a>)
  // is named by its glyph, not its title.  At most 4 levels and 16 parts.
  function generatedText(el) {
    const out = [];
    const part = (n, which) => {
      try {
        const c = getComputedStyle(n, which).content;
        const m = c && /^"((?:[^"\\]|\\.)*)"$/.exec(c);
        if (m && m[1]) out.push(m[1].replace(/\\(.)/g, '$1'));
      } catch (e) { /* no style: nothing generated */ }
    };
    const visit = (n, depth) => {
      if (depth > 4 || out.length >= 16) return;
      part(n, '::before');
      for (let c = n.firstElementChild; c; c = c.nextElementSibling) {
        if (c.getAttribute('aria-hidden') !== 'true') visit(c, depth + 1);
      }
      part(n, '::after');
    };
    visit(el, 0);
    return clean(out.join(''), 120);
  }

  // Per collect (null outside one): element -> [1-based index among same-tag siblings, their count], and
  // element -> index among element siblings; one pass over each parent's children instead of one per element
  // (a 1,000-row table made cssPath, xPath and nodePath quadratic).
  let posCache = null, idxCache = null;
  function typePos(n) {
    const p = n.parentElement;
    if (!p) return [1, 1];
    if (posCache) {
      const hit = posCache.get(n);
      if (hit) return hit;
      const counts = new Map(), kids = p.children;
      for (let i = 0; i < kids.length; i++) {
        const t = kids[i].tagName, c = (counts.get(t) || 0) + 1;
        counts.set(t, c);
        posCache.set(kids[i], [c, 0]);
      }
      for (let i = 0; i < kids.length; i++) posCache.get(kids[i])[1] = counts.get(kids[i].tagName);
      return posCache.get(n) || [1, 1];
    }
    let idx = 1, count = 0;
    for (let c = p.firstElementChild; c; c = c.nextElementSibling) {
      if (c.tagName !== n.tagName) continue;
      count++;
      if (c === n) idx = count;
    }
    return [idx, count];
  }
  function elementIndex(n, p) {
    if (idxCache) {
      const hit = idxCache.get(n);
      if (hit !== undefined) return hit;
      let i = 0;
      for (let c = p.firstElementChild; c; c = c.nextElementSibling) idxCache.set(c, i++);
      return idxCache.get(n);
    }
    let i = 0;
    for (let c = p.firstElementChild; c && c !== n; c = c.nextElementSibling) i++;
    return i;
  }

  function cssPath(el) {
    const parts = [];
    let n = el;
    while (n && n.nodeType === 1 && parts.length < 30) {
      let s = n.tagName.toLowerCase();
      if (n.id && /^[A-Za-z][\w-]*$/.test(n.id)) { parts.unshift(`${s}#${n.id}`); break; }
      const p = n.parentElement;
      if (p) {
        const pos = typePos(n);
        if (pos[1] > 1) s += `:nth-of-type(${pos[0]})`;
      }
      parts.unshift(s);
      n = p;
    }
    return parts.join(' > ');
  }

  function xPath(el) {
    const parts = [];
    let n = el;
    while (n && n.nodeType === 1) {
      const p = n.parentElement;
      parts.unshift(`${n.tagName.toLowerCase()}[${p ? typePos(n)[0] : 1}]`);
      n = p;
    }
    return '/' + parts.join('/');
  }

  function isVisible(el) {
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) return false;
    const cs = getComputedStyle(el);
    if (cs.visibility === 'hidden' || cs.display === 'none' || parseFloat(cs.opacity) === 0) return false;
    if (el.closest('[hidden],[aria-hidden="true"]') && !el.closest('[role=dialog]')) return false;
    return true;
  }

  function isInteractive(el) {
    const tag = el.tagName.toLowerCase();
    if (INTERACTIVE_TAGS.has(tag)) {
      if (tag === 'input' && (el.type || '').toLowerCase() === 'hidden') return false;
      if (tag === 'a' && !el.hasAttribute('href') && !el.getAttribute('role') && !el.onclick) return false;
      if (tag === 'option' && el.closest('select')) return false;
      return true;
    }
    const role = el.getAttribute('role');
    if (role && INTERACTIVE_ROLES.has(role.split(/\s+/)[0])) return true;
    if (el.isContentEditable && (!el.parentElement || !el.parentElement.isContentEditable)) return true;
    if (el.hasAttribute('onclick') || typeof el.onclick === 'function') return true;
    const ti = el.getAttribute('tabindex');
    if (ti !== null && parseInt(ti, 10) >= 0) return true;
    // a <label> of no control is a text target of its own (list items edited on double-click)
    if (tag === 'label' && !el.control && clean(el.textContent)) return true;
    try {
      if (getComputedStyle(el).cursor === 'pointer') {
        if (el.querySelector(NESTED_TARGETS)) return false;  // the targets inside it are the candidates
        const p = el.parentElement;
        if (!p || getComputedStyle(p).cursor !== 'pointer') return true;
        // a named icon inside a clickable region (a toolbar) is a target of its own
        return !!(clean(el.getAttribute('aria-label')) || clean(el.getAttribute('title')));
      }
    } catch (e) { /* ignore */ }
    return false;
  }
  const NESTED_TARGETS = 'a,button,input,select,textarea,[role=button],[role=link],[aria-label],[title]';

  // Element path of el from its document: indices among element children, -1 for "into the
  // open shadow root of the element before" (read against the DOM tree over CDP, core/perception/axtree.py).
  function nodePath(el) {
    const out = [];
    let n = el;
    while (n && n.nodeType === 1) {
      const p = n.parentNode;
      if (!p) return null;
      out.push(elementIndex(n, p));
      if (p.nodeType === 9) return out.reverse().join('/');
      if (p.nodeType === 11) { if (!p.host || p.host.shadowRoot !== p) return null; out.push(-1); n = p.host; }
      else n = p;
    }
    return null;
  }

  // Role and name of el: the browser's accessibility tree's (read at the last collect) unless
  // the element changed since; else the in-page computation.
  function roleNameOf(el, label, text) {
    const pageName = pageNameOf(el, label, text);
    const pageRole = roleOf(el);
    const ax = state.ax.get(el);
    if (ax && ax.page === pageName) return { role: ax.role || pageRole, name: domCase(ax.name, el), source: 'ax' };
    return { role: pageRole, name: pageName, source: 'page' };
  }

  // What can be acted on, for the observer and the recorder alike: an interactive element that is shown.
  // Placeholders (skeleton rows, busy regions) are not: a heal must never land on one (failure kind 4).
  const isCandidate = (el) => isInteractive(el) && isVisible(el) && !inPlaceholder(el);

  function* walk(root) {
    const stack = [root];
    while (stack.length) {
      const n = stack.pop();
      if (n.nodeType === 1) {
        yield n;
        if (n.shadowRoot) stack.push(...Array.from(n.shadowRoot.children).reverse());
      }
      const kids = n.children ? Array.from(n.children) : [];
      for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
    }
  }

  function dialogTitle(d) {
    const lb = byIds(d, 'aria-labelledby');
    if (clean(lb)) return clean(lb, 120);
    if (clean(d.getAttribute('aria-label'))) return clean(d.getAttribute('aria-label'), 120);
    const h = d.querySelector('h1,h2,h3,h4,legend,.title,.ui-dialog-title,[class*=title]');
    return h ? clean(h.textContent, 120) : '';
  }

  function containerOf(el) {
    const d = el.closest('[role=dialog],[role=alertdialog],dialog,form,fieldset,[role=form],section[aria-label],section[aria-labelledby]');
    return d ? dialogTitle(d) : '';
  }

  function modals() {
    const out = [];
    for (const d of document.querySelectorAll('[role=dialog],[role=alertdialog],dialog[open],[aria-modal=true],.ui-dialog')) {
      if (isVisible(d)) out.push(dialogTitle(d));
    }
    return out;
  }

  // Short visible texts of the page bucketed by their centre in cells of NEAR_PX (one pass per collect; a
  // candidate then looks at the 3 x 3 cells around it instead of every text on the page).
  const NEAR_PX = 250;
  const NEAR_SEL = 'label,h1,h2,h3,h4,th,td,legend,p,span,div,li,dt,dd,a,button';
  let textIndex = null;
  function buildTextIndex() {
    const cells = new Map();
    const ns = document.querySelectorAll(NEAR_SEL);
    for (let i = 0; i < ns.length; i++) {
      const n = ns[i];
      if (n.children.length > 2 || !n.firstChild) continue;
      const q = n.getBoundingClientRect();  // before innerText: a box costs less than the text, and hides most
      if (q.width < 1 || q.height < 1) continue;
      const t = clean(n.innerText || '', 80);
      if (!t || t.length > 40) continue;  // neighbours are short labels, not paragraphs
      const cx = q.x + q.width / 2, cy = q.y + q.height / 2;
      const key = `${Math.floor(cx / NEAR_PX)},${Math.floor(cy / NEAR_PX)}`;
      let list = cells.get(key);
      if (!list) { list = []; cells.set(key, list); }
      list.push([cx, cy, t, n, i]);
    }
    return cells;
  }

  function textNodesNear(el, r) {
    // nearest texts of visible text-bearing elements (labels, headings, cells) within NEAR_PX, nearest first
    // (document order among equals)
    const index = textIndex || buildTextIndex();
    const cx = r.x + r.width / 2, cy = r.y + r.height / 2;
    const gx = Math.floor(cx / NEAR_PX), gy = Math.floor(cy / NEAR_PX);
    const cands = [];
    for (let ix = gx - 1; ix <= gx + 1; ix++) {
      for (let iy = gy - 1; iy <= gy + 1; iy++) {
        const list = index.get(`${ix},${iy}`);
        if (!list) continue;
        for (let k = 0; k < list.length; k++) {
          const e = list[k], n = e[3];
          if (n === el || n.contains(el) || el.contains(n)) continue;
          const d = Math.hypot(e[0] - cx, e[1] - cy);
          if (d < NEAR_PX) cands.push([d, e[4], e[2]]);
        }
      }
    }
    cands.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    const out = [];
    for (let k = 0; k < cands.length; k++) {
      const t = cands[k][2];
      if (!out.includes(t)) out.push(t);
      if (out.length >= 4) break;
    }
    return out;
  }

  // CSS paths of the open shadow hosts around el, outermost first, joined by ' >> '.
  function shadowPath(el) {
    const hosts = [];
    let root = el.getRootNode ? el.getRootNode() : null;
    while (root && root.host && hosts.length < 10) {
      hosts.unshift(cssPath(root.host));
      root = root.host.getRootNode();
    }
    return hosts.join(' >> ');
  }

  // a contains b across shadow boundaries (b inside a's shadow tree, or slotted): contains() stops at a root
  function composedContains(a, b) {
    for (let n = b; n; n = n.parentNode || n.host) if (n === a) return true;
    return false;
  }

  function describe(el, withNeighbours = true) {
    const r = el.getBoundingClientRect();
    const tag = el.tagName.toLowerCase();
    const label = labelOf(el);
    const text = ownText(el);
    const type = (el.getAttribute('type') || '').toLowerCase();
    const isPassword = tag === 'input' && type === 'password';
    let value = '';
    if ('value' in el && typeof el.value === 'string' && tag !== 'button' && tag !== 'option') value = el.value;
    else if (el.isContentEditable) value = el.innerText;
    if (tag === 'select' && el.selectedIndex >= 0) value = el.options[el.selectedIndex].text;
    // ARIA value of custom widgets (a combobox drawn with divs shows its value as text)
    const role = roleOf(el);
    if (!value && tag !== 'input' && tag !== 'textarea' && tag !== 'select') {
      if (el.hasAttribute('aria-valuenow')) value = el.getAttribute('aria-valuenow');
      else if (role === 'combobox' || role === 'listbox' || role === 'spinbutton') value = clean(el.innerText || el.textContent, 200);
    }
    const classes = Array.from(el.classList || []).slice(0, 12);
    const cx = r.x + r.width / 2, cy = r.y + r.height / 2;
    let covered = false;
    if (cx >= 0 && cy >= 0 && cx < innerWidth && cy < innerHeight) {
      let top = document.elementFromPoint(cx, cy);
      while (top && top.shadowRoot) { const inner = top.shadowRoot.elementFromPoint(cx, cy); if (!inner || inner === top) break; top = inner; }
      covered = !!top && top !== el && !composedContains(el, top) && !composedContains(top, el) && !(top.tagName === 'LABEL' && label);
    }
    const disabled = !!el.disabled || el.getAttribute('aria-disabled') === 'true' || !!el.closest('fieldset[disabled]');
    const checked = ('checked' in el && (type === 'checkbox' || type === 'radio')) ? !!el.checked
      : (el.getAttribute('aria-checked') ? el.getAttribute('aria-checked') === 'true' : null);
    const rn = roleNameOf(el, label, text);
    return {
      tag, role: rn.role, name: rn.name, name_source: rn.source, label, text,
      placeholder: clean(el.getAttribute('placeholder'), 120), id: el.id || '', name_attr: el.getAttribute('name') || '',
      type, classes, href: el.getAttribute('href') || '', test_id: el.getAttribute('data-testid') || el.getAttribute('data-test-id') || '',
      alt: clean(el.getAttribute('alt'), 120), title: clean(el.getAttribute('title'), 120),
      css_path: cssPath(el), xpath: xPath(el),
      bbox: [r.x, r.y, r.width, r.height],
      neighbours: withNeighbours ? textNodesNear(el, r) : [], container: containerOf(el), shadow: shadowPath(el),
      enabled: !disabled, visible: isVisible(el),
      editable: (tag === 'input' && !['button', 'submit', 'reset', 'checkbox', 'radio', 'file', 'image', 'range', 'color'].includes(type)) || tag === 'textarea' || el.isContentEditable,
      checked, value: isPassword ? (value ? '\u2022'.repeat(6) : '') : value.slice(0, 500), is_password: isPassword, covered,
      in_viewport: r.bottom > 0 && r.right > 0 && r.top < innerHeight && r.left < innerWidth,
      focused: document.activeElement === el,
      required: !!el.required || el.getAttribute('aria-required') === 'true',
    };
  }

  // --- still loading (failure kind 4): spinners, skeleton rows, busy regions ------------------
  // A class token naming a placeholder box: skeleton / shimmer anywhere in it (MuiSkeleton-root,
  // ant-skeleton-input, skeleton-row), or placeholder as a word of it (Bootstrap's placeholder,
  // placeholder-glow) on an element without text of its own - "placeholder" also names the grey hint
  // text of a select widget (react-select__placeholder, select2-selection__placeholder), which is no box.
  const SKELETON_TOKEN = /skeleton|shimmer/i;
  const PLACEHOLDER_WORD = /(^|[-_])placeholders?([-_]|$)/i;
  // spinner / loader / loading as a word of a class: loading evidence only on an element holding no control
  // (jQuery UI's "ui-spinner" is a number field, not a spinner)
  const SPINNER_TOKEN = /(^|[-_])(spinner|loader|loading)([-_]|$)/i;
  const CONTROLS = 'input,select,textarea,button,a[href],[role=button],[role=spinbutton]';
  const LOADING_SEL = '[aria-busy=true],[role=progressbar],progress,[class*=skeleton i],[class*=shimmer i],' +
    '[class*=placeholder i],[class*=spinner i],[class*=loader i],[class*=loading i]';
  const classMatching = (n, re) => {
    const cl = n.classList;
    if (!cl) return '';
    for (let i = 0; i < cl.length; i++) if (re.test(cl[i])) return cl[i];
    return '';
  };
  const placeholderClass = (n) => {
    const sk = classMatching(n, SKELETON_TOKEN);
    if (sk) return sk;
    const ph = classMatching(n, PLACEHOLDER_WORD);
    return ph && !clean(n.textContent) ? ph : '';
  };
  // Why node n says "still loading", or '' (an indeterminate progress bar only: a determinate one is a meter).
  function loadingReason(n) {
    if (n.getAttribute('aria-busy') === 'true') return 'aria-busy="true"';
    if (n.getAttribute('role') === 'progressbar' && !n.hasAttribute('aria-valuenow')) return 'role=progressbar (indeterminate)';
    if (n.tagName === 'PROGRESS' && !n.hasAttribute('value')) return 'indeterminate <progress>';
    const c = placeholderClass(n);
    if (c) return `class "${c}"`;
    const sp = classMatching(n, SPINNER_TOKEN);
    if (sp && !n.matches(CONTROLS) && !n.querySelector(CONTROLS) && !isInteractive(n)) return `class "${sp}"`;
    return '';
  }
  const short = (n) => `${n.tagName.toLowerCase()}${n.id ? '#' + n.id : ''}`;
  // Evidence that the page is still loading: up to 5 strings like 'aria-busy="true" on tbody#rows',
  // then '+N more'; [] when nothing visible says so.
  function loadingEvidence() {
    const out = [];
    let more = 0;
    const roots = [document];
    for (let r = 0; r < roots.length; r++) {
      const found = roots[r].querySelectorAll(LOADING_SEL);
      for (let i = 0; i < found.length; i++) {
        const n = found[i];
        const why = loadingReason(n);
        if (!why || !isVisible(n)) continue;
        if (out.length < 5) out.push(`${why} on ${short(n)}`); else more++;
      }
      if (r === 0 && shadowHosts) for (let i = 0; i < shadowHosts.length; i++) roots.push(shadowHosts[i].shadowRoot);
    }
    if (more) out.push(`+${more} more`);
    return out;
  }
  // el is (inside) a placeholder: a busy region or a skeleton; never a candidate.
  function inPlaceholder(el) {
    for (let n = el; n && n.nodeType === 1; n = n.parentElement || (n.parentNode && n.parentNode.host) || null) {
      if (n.getAttribute('aria-busy') === 'true' || placeholderClass(n)) return true;
    }
    return false;
  }
  let shadowHosts = null;  // open shadow hosts seen by the last collect (loading evidence inside them)

  function errorCount() {
    let c = 0;
    for (const n of document.querySelectorAll('[role=alert],[aria-invalid=true],.error,.invalid-feedback,.field-error')) {
      if (isVisible(n) && (n.getAttribute('aria-invalid') === 'true' || clean(n.textContent))) c++;
    }
    return c;
  }

  function focusDesc() {
    const a = document.activeElement;
    if (!a || a === document.body) return '';
    return `${a.tagName.toLowerCase()}#${a.id || ''}[${roleOf(a)}]`;
  }

  function visibleText() {
    // innerText never contains input values, so password values never appear here
    return clean(document.body ? document.body.innerText : '', 5000);
  }

  // Text inside open shadow roots (innerText of the page does not include it).
  // hosts: the open shadow hosts of the page when the caller already walked it.
  function shadowText(hosts) {
    const out = [];
    let total = 0;
    if (!document.body) return '';
    for (const el of hosts || walk(document.body)) {
      if (!el.shadowRoot) continue;
      for (const c of el.shadowRoot.children) {
        const t = c.innerText || '';
        if (t.trim()) { out.push(t); total += t.length; }
      }
      if (total > 5000) break;
    }
    return clean(out.join(' '), 5000);
  }

  // opts.ax: element path -> [tag, role, name] from the accessibility tree (core/perception/axtree.py)

  // Labels, legends, headings and column headers of this document (and elements named by an
  // aria-labelledby): where a target's recorded anchor is looked for (the recorder's anchorOf, in
  // core/record/recorder_lib.js, keeps the same kinds, text rules and role names). At most
  // ANCHOR_LIMIT, each [text, role, x, y, w, h] in this frame's viewport CSS px.
  const ANCHOR_LIMIT = 400;
  const ANCHOR_SEL = 'label,legend,h1,h2,h3,h4,h5,h6,[role=heading],th,[role=columnheader]';
  const ANCHOR_CONTROL = 'a[href],button,[role=button],[role=link],input[type=button],input[type=submit]';
  function anchorBoxes() {
    const out = [];
    if (!document.body) return out;
    const seen = new Set();
    const els = Array.from(document.body.querySelectorAll(ANCHOR_SEL));
    for (const el of document.body.querySelectorAll('[aria-labelledby]')) {
      for (const id of (el.getAttribute('aria-labelledby') || '').split(/\s+/).filter(Boolean)) {
        const n = document.getElementById(id);
        if (n) els.push(n);
      }
    }
    for (const n of els) {
      if (out.length >= ANCHOR_LIMIT) break;
      if (seen.has(n)) continue;
      seen.add(n);
      if (n.closest(ANCHOR_CONTROL) || !isVisible(n)) continue;
      const t = clean(n.innerText || n.textContent, 80);
      if (!t || t.length > 60 || /^[\d\s.,:/-]+$/.test(t)) continue;
      const r = n.getBoundingClientRect();
      out.push([t, roleOf(n) || n.tagName.toLowerCase(), r.x, r.y, r.width, r.height]);
    }
    return out;
  }

  function collect(opts) {
    const withNeighbours = !opts || opts.neighbours !== false;
    const ax = (opts && opts.ax) || null;
    const refs = [];
    const items = [];
    const hosts = [];
    let unnamed = 0;  // without opts.ax: candidates the kept accessibility-tree entries do not cover
    posCache = new WeakMap(); idxCache = new WeakMap(); labelCache = new Map();
    textIndex = withNeighbours && document.body ? buildTextIndex() : null;
    try {
      if (document.body) {
        for (const el of walk(document.body)) {
          if (el.shadowRoot) hosts.push(el);
          if (!isCandidate(el)) continue;
          refs.push(el);
          if (ax) {
            const e = ax[nodePath(el)];
            if (e && e[0] === el.tagName.toLowerCase()) {
              state.ax.set(el, { role: e[1], name: e[2], page: pageNameOf(el, labelOf(el), ownText(el)) });
            } else state.ax.delete(el);
          } else if (!state.ax.has(el)) unnamed++;
          items.push(describe(el, withNeighbours));
        }
      }
    } finally { posCache = idxCache = textIndex = labelCache = null; }
    state.refs = refs;
    shadowHosts = hosts;
    return {
      url: location.href, title: document.title, items, unnamed,
      viewport: [innerWidth, innerHeight], dpr: devicePixelRatio, scroll: [scrollX, scrollY],
      text: visibleText(), shadow_text: shadowText(hosts), modals: modals(), loading: loadingEvidence(), errors: errorCount(), focus: focusDesc(),
      anchors: anchorBoxes(),
    };
  }

  // Client rects (CSS px, this frame's viewport) of text occurrences of secret values, for masking
  // screenshots. Short values (< 3 chars) only as whole words.
  function secretRects(values) {
    const out = [];
    if (!values || !values.length || !document.body) return out;
    const tw = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const word = /[0-9A-Za-z]/;
    let n;
    while ((n = tw.nextNode())) {
      const t = n.nodeValue;
      if (!t || !t.trim()) continue;
      for (const v of values) {
        if (!v) continue;
        let i = t.indexOf(v);
        while (i >= 0) {
          const short = v.length < 3;
          const okL = !short || i === 0 || !word.test(t[i - 1]);
          const okR = !short || i + v.length >= t.length || !word.test(t[i + v.length]);
          if (okL && okR) {
            const r = document.createRange();
            r.setStart(n, i); r.setEnd(n, i + v.length);
            for (const q of r.getClientRects()) out.push([q.x, q.y, q.width, q.height]);
          }
          i = t.indexOf(v, i + 1);
        }
      }
    }
    return out;
  }

  function probe() {
    return {
      url: location.href, mutations: state.mutations, quietMs: performance.now() - state.lastMutation,
      inflight: state.inflight, loading: loadingEvidence(), ready: document.readyState, timerSeq: state.timerSeq,
      leavingMs: state.leaving ? performance.now() - state.leaving : null, origin: performance.timeOrigin,
    };
  }

  function refIndex(el) {
    let i = state.refs.indexOf(el);
    if (i < 0 && el) { state.refs.push(el); i = state.refs.length - 1; }
    return i;
  }

  const API = {
    pinned: (el, withNeighbours) => ({ i: refIndex(el), d: describe(el, withNeighbours) }),
    assertInfo: (el) => ({ d: describe(el, false), t: String(el.innerText || el.value || '').trim() }),
    // what the driver keys its accessibility-tree cache on: this document (a random token per installation),
    // its DOM mutations so far and its element count
    stamp: () => ({ doc: state.doc, mutations: state.mutations, elements: document.getElementsByTagName('*').length }),
    collect, describe, probe, refIndex, secretRects, isInteractive, isCandidate, isVisible, roleOf, cssPath, clean,
    modals, nodePath, loadingEvidence, allText: () => visibleText() + ' ' + shadowText(),
  };
  // pristine: where the built-ins came from ('init': this realm before the page's scripts; 'iframe': a fresh realm)
  const exported = { version: 1, state, ref: (i) => state.refs[i] || null, pristine: R === window ? 'init' : 'iframe',
                    sleep, frame, reactionsSince, armKey, keyHeld };
  for (const k in API) exported[k] = guarded(API[k]);
  // call(name, argsJson): JSON text {"ok": result, "ms": in-page ms} or {"error": "<the page's error>"}, made with the pristine
  // JSON; the driver's only way in (core/perception/driver.py), so that the page's overrides of JSON,
  // Object.keys or Array cannot garble what crosses to Python.
  // callOn(name, el, argsJson): the same with el as the first argument.
  const callWith = (name, first, argsJson) => {
    try {
      const fn = API[name];
      if (typeof fn !== 'function') return pStringify({ error: `no page library function ${name}` });
      const args = argsJson ? pParse(argsJson) : [];
      if (first !== undefined) args.unshift(first);
      const t0 = performance.now();
      const ok = rApply(fn, null, args);
      return pStringify({ ok, ms: performance.now() - t0 });
    } catch (e) {
      let msg = '';
      try { msg = (e && e.name ? e.name + ': ' : '') + (e && e.message !== undefined ? e.message : String(e)); } catch (e2) { msg = 'an unprintable error'; }
      return pStringify({ error: msg.slice(0, 500) });
    }
  };
  exported.call = guarded((name, argsJson) => callWith(name, undefined, argsJson));
  exported.callOn = guarded((name, el, argsJson) => callWith(name, el, argsJson));
  window.__steadyhand = exported;
})();
