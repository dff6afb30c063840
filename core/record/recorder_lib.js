// Steadyhand recorder: installed in every frame after the page library (init script).
// Listens in the capture phase at the window, so events from open shadow roots arrive
// with their real target (composedPath), and reports each user action through the
// exposed binding window.__steadyhandRecord. It keeps no growing state: one pending
// typed field, one pending scroll, one pending hover check.
// It never reads the demo app's ground-truth attributes and never sends a password value.
// A listener that detaches suspends it (it goes inert: no report, no overlay); one that
// attaches later evaluates this script again, which resumes it.
(() => {
  if (window.__steadyhandRec) { window.__steadyhandRec.resume(); return; }
  const L = () => window.__steadyhand;
  const S = {
    active: true, inspect: false, pending: null, scroll: null, scrollTimer: 0, lastWheel: 0, suppressClickUntil: 0,
    hoverEl: null, hoverTimer: 0, downFocus: null, inherited: null, textPickedAt: 0, overlay: null, badge: null, lastInput: 0, baseCount: -1, baseAt: 0,
  };
  const send = (p) => {
    if (!S.active) return;
    try { if (window.__steadyhandRecord) window.__steadyhandRecord(p); } catch (e) { /* page closing */ }
  };
  // every listener of the recorder runs only while a recording listener is attached
  const on = (type, fn, o) => window.addEventListener(type, (e) => { if (S.active) fn(e); }, o);
  const IDLE_FLUSH_MS = 800;
  const EDIT_TYPES = new Set(['', 'text', 'search', 'email', 'tel', 'url', 'password', 'number', 'date',
    'datetime-local', 'month', 'week', 'time']);

  // The innermost element the event happened on (inside open shadow roots too).
  function realTarget(e) {
    const p = e.composedPath ? e.composedPath() : [];
    for (const n of p) if (n && n.nodeType === 1) return n;
    return e.target && e.target.nodeType === 1 ? e.target : null;
  }
  const parentOf = (n) => n.parentElement || (n.getRootNode && n.getRootNode().host) || null;

  // The innermost element around el that the observer lists as a candidate (the page library's
  // one definition, isCandidate), so that what is recorded is what replay can find; null if none.
  function actionable(el) {
    for (let n = el; n; n = parentOf(n)) {
      if (n === document.body || n === document.documentElement) return null;
      if (L().isCandidate(n)) return n;
    }
    return null;
  }
  function isTextEntry(el) {
    if (!el) return false;
    const tag = el.tagName.toLowerCase();
    if (tag === 'textarea') return !el.readOnly;
    if (tag === 'input') return EDIT_TYPES.has((el.getAttribute('type') || '').toLowerCase()) && !el.readOnly;
    return !!el.isContentEditable;
  }
  // Overlays of a test harness itself, not of the application: MiniWoB++'s start curtain between
  // episodes (core.js of the miniwob package, shown by core.startEpisode, removed by startEpisodeReal).
  // Clicking them is not a step: the harness is driven by the site adapter at replay.
  const HARNESS = '#sync-task-cover';
  const inHarness = (el) => !!(el && el.closest && el.closest(HARNESS));
  // The focused element, inside open shadow roots too.
  function deepActive() {
    let a = document.activeElement;
    while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
    return a;
  }
  const isPassword = (el) => el.tagName === 'INPUT' && (el.getAttribute('type') || '').toLowerCase() === 'password';

  // --- anchors: the stable labelled element a target sits by ------------------------
  // In order: the field's own label, its fieldset's legend, the nearest heading of its section,
  // its column header (a cell or a control in a table); never a link or a button, never farther
  // than the element's section (its nearest sectioning ancestor).
  const SECTION = 'form,fieldset,section,article,aside,nav,header,footer,main,dialog,table,details,'
    + '[role=dialog],[role=alertdialog],[role=region],[role=form],[role=group],[role=main],[role=table],[role=grid],'
    + '[role=navigation],[role=toolbar],[role=tabpanel]';
  const HEADING = 'h1,h2,h3,h4,h5,h6,[role=heading]';
  function sectionOf(el) {
    for (let n = parentOf(el); n; n = parentOf(n)) {
      if (n === document.body || n === document.documentElement) return document.body;
      if (n.matches && n.matches(SECTION)) return n;
    }
    return document.body;
  }
  const isControl = (n) => !!(n.closest && n.closest('a[href],button,[role=button],[role=link],input[type=button],input[type=submit]'));
  function anchorText(n) {
    if (!n || isControl(n) || !L().isVisible(n)) return '';
    const t = L().clean(n.innerText || n.textContent, 80);
    if (!t || t.length > 60 || /^[\d\s.,:/-]+$/.test(t)) return '';  // numbers and dates are not stable
    return t;
  }
  function ownLabel(el) {
    const out = [];
    if (el.labels) out.push(...Array.from(el.labels));
    for (const id of (el.getAttribute('aria-labelledby') || '').split(/\s+/).filter(Boolean)) {
      const root = el.getRootNode();
      const n = (root.getElementById ? root.getElementById(id) : null) || document.getElementById(id);
      if (n && n !== el && !n.contains(el)) out.push(n);
    }
    return out.find((n) => anchorText(n) && !n.contains(el)) || out.find((n) => anchorText(n)) || null;
  }
  function legendOf(el, sec) {
    const fs = sec && sec.tagName === 'FIELDSET' ? sec : null;
    const lg = fs && Array.from(fs.children).find((c) => c.tagName === 'LEGEND');
    return lg && !lg.contains(el) && anchorText(lg) ? lg : null;
  }
  function sectionHeading(el, sec) {
    if (sec.matches('table,[role=table],[role=grid]')) return null;  // a table's headings are its column headers
    let best = null;
    for (const h of sec.querySelectorAll(HEADING)) {
      if (h.contains(el) || !anchorText(h) || sectionOf(h) !== sec) continue;
      if (h.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING) best = h;  // the last one before el
      else break;
    }
    if (best || sec === document.body) return best;
    // the section's own title: aria-labelledby, or a heading just before it
    const lb = ownLabel(sec);
    if (lb) return lb;
    const prev = sec.previousElementSibling;
    return prev && prev.matches(HEADING) && anchorText(prev) ? prev : null;
  }
  function columnHeader(el, sec) {
    if (!sec.matches('table,[role=table],[role=grid]')) return null;
    let cell = null;
    for (let n = el; n && n !== sec; n = parentOf(n)) {
      if (n.matches && n.matches('td,th,[role=cell],[role=gridcell]')) { cell = n; break; }
    }
    if (!cell || !cell.parentElement) return null;
    const colOf = (c) => { let i = 0; for (let p = c.previousElementSibling; p; p = p.previousElementSibling) i += p.colSpan || 1; return i; };
    const col = colOf(cell);
    const rows = Array.from(sec.querySelectorAll('tr,[role=row]')).filter((r) => r.closest('table,[role=table],[role=grid]') === sec);
    for (const r of rows) {
      if (r === cell.parentElement) break;
      const heads = Array.from(r.children);
      if (!heads.length || !heads.every((c) => c.matches('th,[role=columnheader]'))) continue;
      const h = heads.find((c) => colOf(c) <= col && col < colOf(c) + (c.colSpan || 1));
      if (h && anchorText(h)) return h;
    }
    return null;
  }
  // The anchor of a target and the offset from its centre to the target's centre, in CSS px; null when
  // the section offers none.
  function anchorOf(el) {
    const sec = sectionOf(el);
    const a = ownLabel(el) || legendOf(el, sec) || sectionHeading(el, sec) || columnHeader(el, sec);
    if (!a) return null;
    const r = el.getBoundingClientRect();
    const q = a.getBoundingClientRect();
    return { text: anchorText(a), role: L().roleOf(a) || a.tagName.toLowerCase(),
      dx: r.x + r.width / 2 - (q.x + q.width / 2), dy: r.y + r.height / 2 - (q.y + q.height / 2) };
  }

  // The page as the user saw it just before acting: the top-level URL (when readable) and the
  // dialogs open in this frame. The recorder compares consecutive pre-states to learn what each
  // action did (S5), whatever the recorder's own latency.
  function pre() {
    let url = location.href;
    try { url = window.top.location.href; } catch (e) { /* cross-origin frame: its own URL */ }
    const m = L().modals();
    return { url, top: window === window.top, modals: m.length, titles: m };
  }

  // --- scope: what makes a target's role and name unique, as Playwright's locators read them ----------
  // Another element of the target's role whose name contains the target's (case-insensitive, as
  // get_by_role(name=...) matches) makes the name ambiguous: when none of them has the same name, the name
  // must be matched whole (d.exact); else the nearest named row, list item, landmark or labelled container
  // holding the target and none of them, whose own role and name are unique on the page, is its scope.
  // Bounded: at most SCOPE_MAX elements of a role are read.
  const SCOPE_ROLES = new Set(['row', 'listitem', 'article', 'region', 'form', 'dialog', 'alertdialog', 'navigation',
    'group', 'complementary', 'search', 'tabpanel', 'table', 'list', 'main', 'banner', 'contentinfo']);
  const SCOPE_MAX = 400;
  const norm = (t) => L().clean(t || '', 400).toLowerCase();
  // containers' implicit ARIA roles (HTML-AAM) that the page library leaves out (it names controls)
  const IMPLICIT = { TR: 'row', LI: 'listitem', ARTICLE: 'article', FORM: 'form', DIALOG: 'dialog', NAV: 'navigation',
    ASIDE: 'complementary', TABLE: 'table', UL: 'list', OL: 'list', MAIN: 'main', FIELDSET: 'group', SEARCH: 'search' };
  const roleOfAny = (n) => (n.getAttribute && n.getAttribute('role')) || L().roleOf(n)
    || (n.tagName === 'SECTION' && (n.hasAttribute('aria-label') || n.hasAttribute('aria-labelledby')) ? 'region' : '')
    || IMPLICIT[n.tagName] || '';
  function roleName(n, role) {
    if (role === 'row' || role === 'listitem' || role === 'article') return L().clean(n.innerText || n.textContent, 200);
    try { return L().describe(n, false).name || ''; } catch (e) { return ''; }
  }
  function ofRole(role) {
    const out = [];
    for (const n of document.body ? document.body.querySelectorAll('*') : []) {
      if (out.length >= SCOPE_MAX) break;
      if (roleOfAny(n) === role && L().isVisible(n)) out.push(n);
    }
    return out;
  }
  function scopeOf(el, d) {
    if (!d.role || !d.name) return;
    const want = norm(d.name);
    const peers = ofRole(d.role).filter((x) => x !== el && norm(roleName(x, d.role)).includes(want));
    d.exact = false;  // looked: the name may be matched as a substring (unless a peer's name holds it)
    if (!peers.length) return;
    if (!peers.some((x) => norm(roleName(x, d.role)) === want)) { d.exact = true; return; }
    for (let n = parentOf(el); n && n !== document.body && n !== document.documentElement; n = parentOf(n)) {
      const role = roleOfAny(n);
      if (!SCOPE_ROLES.has(role) || peers.some((p) => n.contains(p))) continue;
      const name = roleName(n, role);
      if (!name) continue;
      const key = norm(name);
      if (ofRole(role).filter((x) => norm(roleName(x, role)).includes(key)).length !== 1) continue;
      d.scope = { role, name };
      return;
    }
  }

  function describe(el) {
    const d = L().describe(el, true);
    const a = anchorOf(el);
    if (a) d.anchor = a;
    try { scopeOf(el, d); } catch (e) { /* a page that breaks the DOM walk: no scope */ }
    if (d.is_password) d.value = '';
    try { d.scroll = [window.top.scrollX, window.top.scrollY]; } catch (e) { /* cross-origin frame: unknown */ }
    return d;
  }

  function sendDraft() {
    const p = S.pending;
    if (!p) return;
    const el = p.el;
    send(isPassword(el) ? { kind: 'draft', desc: p.desc, t: p.t, pre: p.pre, is_password: true, value: '' }
      : { kind: 'draft', desc: p.desc, t: p.t, pre: p.pre,
          value: el.isContentEditable ? L().clean(el.innerText, 2000) : String(el.value) });
  }

  function flush() {
    clearTimeout(S.idleTimer);
    const p = S.pending;
    if (!p) return;
    S.pending = null;
    const el = p.el;
    const out = { kind: 'input', desc: p.desc, t: p.t, pre: p.pre };
    if (isPassword(el)) { out.is_password = true; out.value = ''; }
    else out.value = el.isContentEditable ? L().clean(el.innerText, 2000) : String(el.value);
    send(out);
  }

  function emit(kind, el, extra) {
    const before = pre();
    flush();
    send(Object.assign({ kind, desc: el ? describe(el) : null, t: Date.now(), pre: before }, extra || {}));
  }

  // --- inspect mode: pick an element or select text to assert on ---------------------
  function overlay() {
    if (!S.overlay) {
      const o = document.createElement('div');
      o.setAttribute('aria-hidden', 'true');
      o.style.cssText = 'position:fixed;pointer-events:none;z-index:2147483647;border:2px solid #d9480f;'
        + 'background:rgba(217,72,15,.12);display:none;box-sizing:border-box';
      const b = document.createElement('div');
      b.setAttribute('aria-hidden', 'true');
      b.textContent = 'Steadyhand: click an element (or select text) to assert on it; Shift: it goes away';
      b.style.cssText = 'position:fixed;top:4px;right:4px;z-index:2147483647;pointer-events:none;font:12px sans-serif;'
        + 'background:#d9480f;color:#fff;padding:3px 8px;border-radius:3px;display:none';
      document.documentElement.appendChild(o);
      document.documentElement.appendChild(b);
      S.overlay = o; S.badge = b;
    }
    return S.overlay;
  }
  function setInspect(on) {
    S.inspect = !!on;
    if (!on && !S.overlay) return;
    overlay().style.display = 'none';
    S.badge.style.display = on ? 'block' : 'none';
  }
  function countSelector(el) {
    const path = L().cssPath(el);
    const parts = path.split(' > ');
    parts[parts.length - 1] = parts[parts.length - 1].replace(/:nth-of-type\(\d+\)$/, '');
    return parts.join(' > ');
  }
  // A Playwright selector of one element as the page's own main frame sees it: the element's id
  // or test id when unique in its tree, else its CSS path; open shadow hosts and same-origin
  // frames are entered on the way (' >> ', 'internal:control=enter-frame'). '' when a frame of
  // another origin lies on the way.
  function unique(root, css) {
    try { return root.querySelectorAll(css).length === 1; } catch (e) { return false; }
  }
  function localSelector(el) {
    const root = el.getRootNode();
    const q = root.querySelectorAll ? root : document;
    if (el.id && /^[A-Za-z][\w-]*$/.test(el.id) && !/\d{3,}/.test(el.id) && unique(q, '#' + el.id)) return '#' + el.id;
    const tid = el.getAttribute('data-testid');
    if (tid && unique(q, `[data-testid="${CSS.escape(tid)}"]`)) return `[data-testid="${CSS.escape(tid)}"]`;
    return L().cssPath(el);
  }
  function selectorOf(el) {
    const parts = [localSelector(el)];
    for (let root = el.getRootNode(); root && root.host; root = root.host.getRootNode()) parts.unshift(localSelector(root.host));
    for (let w = window; w !== w.top; w = w.parent) {
      let fe = null;
      try { fe = w.frameElement; } catch (e) { fe = null; }
      if (!fe) return '';  // a frame of another origin
      parts.unshift(L().cssPath(fe), 'internal:control=enter-frame');
    }
    return parts.join(' >> ');
  }
  function pick(el, gone) {
    const d = describe(el);
    const sel = countSelector(el);
    let count = 1;
    try { count = (el.getRootNode().querySelectorAll ? el.getRootNode() : document).querySelectorAll(sel).length; } catch (e) { /* keep 1 */ }
    const full = L().clean(el.innerText || el.textContent, 100000);
    const text = full.slice(0, 500);
    send({ kind: 'pick', desc: d, text, whole: full.length <= 500, value: d.is_password ? '' : String(d.value || ''),
      enabled: d.enabled, visible: d.visible, count, count_selector: sel, selector: selectorOf(el),
      interactive: !!actionable(el), gone: !!gone, t: Date.now() });
  }

  // --- listeners --------------------------------------------------------------------
  const opts = { capture: true, passive: false };
  on('mousemove', (e) => {
    if (!S.inspect) return;
    const el = realTarget(e);
    if (!el) return;
    const r = el.getBoundingClientRect();
    const o = overlay();
    o.style.display = 'block';
    o.style.left = r.x + 'px'; o.style.top = r.y + 'px'; o.style.width = r.width + 'px'; o.style.height = r.height + 'px';
  }, { capture: true, passive: true });

  on('click', (e) => {
    if (!e.isTrusted) return;
    const raw = realTarget(e);
    if (!raw) return;
    if (S.inspect) {
      e.preventDefault(); e.stopImmediatePropagation();
      const sel = String(window.getSelection ? window.getSelection() : '').trim();
      if (!sel && Date.now() - S.textPickedAt > 500) pick(actionable(raw) || raw, e.shiftKey);  // Shift: it goes away
      return;
    }
    if (e.detail === 0 && Date.now() < S.suppressClickUntil) return;  // synthetic click of a key press
    if (inHarness(raw)) return;
    const el = actionable(raw);
    if (!el) return;
    const tag = el.tagName.toLowerCase();
    const type = (el.getAttribute('type') || '').toLowerCase();
    if (tag === 'input' && ['checkbox', 'radio', 'file'].includes(type)) return;  // 'change' records these
    if (tag === 'select' || tag === 'option') return;
    if (e.detail >= 2) return;  // second click of a double click: 'dblclick' follows
    if (isTextEntry(el)) {
      // a click that moves the focus into a field is a step (it may open a picker or a list); typing
      // that follows in the same field absorbs it (steps.py); a click in the focused field changes
      // nothing - unless the field already had the focus when this listener attached (the engine's own
      // last action before a takeover): that first click is the person's, and it may open what the
      // next step needs (a calendar, a suggestion list)
      const inherited = S.inherited === el;
      S.inherited = null;
      if (S.downFocus === el && !inherited) return;
      emit('click', el, { detail: e.detail, focus: true });
      return;
    }
    emit('click', el, { detail: e.detail });
  }, opts);

  on('dblclick', (e) => {
    if (!e.isTrusted || S.inspect) { if (S.inspect) { e.preventDefault(); e.stopImmediatePropagation(); } return; }
    const raw = realTarget(e);
    const el = raw && actionable(raw);  // only what the observer can find again
    if (!el || el === document.body || isTextEntry(el) || inHarness(el)) return;
    emit('dblclick', el);
  }, opts);

  // a disabled control gets no click (only pointer events): it is picked when the pointer goes up
  on('pointerup', (e) => {
    if (!S.inspect || !e.isTrusted) return;
    const raw = realTarget(e);
    const el = raw && (actionable(raw) || raw);
    if (el && el.matches && el.matches(':disabled')) pick(el, e.shiftKey);
  }, { capture: true, passive: true });

  // Shift+click in inspect mode picks an element to check that it goes away: no text selection then
  on('mousedown', (e) => { if (S.inspect && e.isTrusted && e.shiftKey) e.preventDefault(); }, opts);

  on('submit', (e) => { if (S.inspect) { e.preventDefault(); e.stopImmediatePropagation(); } }, opts);

  on('mouseup', (e) => {
    if (!S.inspect || !e.isTrusted) return;
    const sel = String(window.getSelection ? window.getSelection() : '').trim();
    if (sel.length >= 2) {
      send({ kind: 'pick_text', text: L().clean(sel, 300), t: Date.now() });
      S.textPickedAt = Date.now();  // the click that ends the selection picks no element
      window.getSelection().removeAllRanges();
    }
  }, opts);

  on('input', (e) => {
    if (!e.isTrusted || S.inspect) return;
    const el = realTarget(e);
    if (!el || !isTextEntry(el)) return;
    if (S.pending && S.pending.el !== el) flush();
    if (!S.pending) S.pending = { el, desc: describe(el), t: Date.now(), pre: pre() };
    // commit after a pause in typing, while the field still has focus (the next action's
    // effect must not be taken for the typing's); typing resumed later merges into one step
    clearTimeout(S.idleTimer);
    S.idleTimer = setTimeout(flush, IDLE_FLUSH_MS);
    // a draft of the typing survives a page closed before the commit
    sendDraft();
  }, opts);

  // An upload is replayed with the same file: small files (<= 2 MB in all) travel with the step.
  const UPLOAD_MAX_BYTES = 2 * 1024 * 1024;
  function uploadFiles(el) {
    const files = Array.from(el.files || []);
    const total = files.reduce((n, f) => n + f.size, 0);
    const names = files.map((f) => f.name);
    if (!files.length || total > UPLOAD_MAX_BYTES) { emit('upload', el, { files: names }); return; }
    const desc = describe(el);
    const before = pre();
    flush();
    Promise.all(files.map((f) => new Promise((ok) => {
      const r = new FileReader();
      r.onload = () => ok(String(r.result).replace(/^data:[^,]*,/, ''));
      r.onerror = () => ok('');
      r.readAsDataURL(f);
    }))).then((data) => send({ kind: 'upload', desc, t: Date.now(), pre: before, files: names, data }));
  }

  // 'change' and 'submit' are not composed: they never leave a shadow root. Listen on every
  // open shadow root an interaction passes through (once per root).
  const shadowRoots = new WeakSet();
  function watchShadowRoots(e) {
    if (!e.composedPath) return;
    for (const n of e.composedPath()) {
      if (n instanceof ShadowRoot && !shadowRoots.has(n)) {
        shadowRoots.add(n);
        n.addEventListener('change', onChange, true);
      }
    }
  }
  for (const type of ['pointerdown', 'focusin', 'keydown']) {
    on(type, watchShadowRoots, { capture: true, passive: true });
  }

  on('change', onChange, opts);
  function onChange(e) {
    if (S.inspect || !S.active) return;
    const el = realTarget(e);
    if (!el) return;
    const tag = el.tagName.toLowerCase();
    const type = (el.getAttribute('type') || '').toLowerCase();
    // Automation (CDP scripts, Playwright's select_option / set_input_files) sets selects and
    // file inputs with untrusted events; accept those for visible controls only, so that page
    // scripts syncing hidden controls are not recorded.
    const settable = tag === 'select' || (tag === 'input' && type === 'file');
    if (!e.isTrusted && !(settable && (L().isVisible(el) || type === 'file'))) return;
    if (S.pending && S.pending.el === el) { flush(); return; }
    if (tag === 'select') {
      const o = el.selectedIndex >= 0 ? el.options[el.selectedIndex] : null;
      emit('select', el, { value: o ? L().clean(o.text, 200) : '' });
    } else if (tag === 'input' && (type === 'checkbox' || type === 'radio')) {
      emit(el.checked || type === 'radio' ? 'check' : 'uncheck', el);
    } else if (tag === 'input' && type === 'file') {
      uploadFiles(el);
    }
  }

  on('focusout', (e) => {
    if (S.pending && realTarget(e) === S.pending.el) flush();
  }, { capture: true, passive: true });

  on('keydown', (e) => {
    if (!e.isTrusted) return;
    if (e.altKey && e.shiftKey && (e.key === 'A' || e.key === 'a')) {  // toggle inspect mode in the page
      e.preventDefault(); e.stopImmediatePropagation();
      setInspect(!S.inspect);
      send({ kind: 'mode', inspect: S.inspect, t: Date.now() });
      return;
    }
    if (S.inspect) { if (e.key === 'Escape') { setInspect(false); send({ kind: 'mode', inspect: false, t: Date.now() }); } return; }
    if (['PageDown', 'PageUp', 'Home', 'End', ' ', 'ArrowDown', 'ArrowUp'].includes(e.key)) S.lastWheel = Date.now();
    if (!['Enter', 'Escape', 'Tab'].includes(e.key) || e.ctrlKey || e.metaKey || e.altKey) return;
    const el = realTarget(e);
    const focus = el && el !== document.body && el !== document.documentElement ? el : null;
    if (e.key === 'Enter' && focus) {
      const tag = focus.tagName.toLowerCase();
      if (tag === 'textarea' || focus.isContentEditable) return;  // a new line is part of the typing
      if (tag === 'button' || tag === 'a' || tag === 'summary') return;  // activates it: the click is recorded
    }
    const key = e.shiftKey && e.key === 'Tab' ? 'Shift+Tab' : e.key;
    if (e.key === 'Enter') S.suppressClickUntil = Date.now() + 300;
    emit('press', focus, { value: key });
  }, opts);

  // Scrolls count only when the user scrolled (wheel or keys), not scroll-into-view on focus.
  const rest = new WeakMap();  // scroll box (document for the page) -> resting [x, y]
  on('wheel', () => { S.lastWheel = Date.now(); }, { capture: true, passive: true });
  // (resting places are followed also while suspended: a scroll made then is not the user's next one)
  window.addEventListener('scroll', (e) => {
    const t = e.target;
    const box = (t === document || t === document.documentElement || t === window || !t || t.nodeType !== 1) ? null : t;
    const key = box || document;
    const pos = box ? [box.scrollLeft, box.scrollTop] : [scrollX, scrollY];
    const user = S.active && !S.inspect && Date.now() - S.lastWheel <= 400;
    if (!user && !(S.scroll && S.scroll.key === key)) { rest.set(key, pos); return; }
    if (!S.scroll || S.scroll.key !== key) {
      if (S.scroll) finishScroll();
      S.scroll = { box, key, start: rest.get(key) || [0, 0], pos };
    }
    S.scroll.pos = pos;
    clearTimeout(S.scrollTimer);
    S.scrollTimer = setTimeout(finishScroll, 400);
  }, { capture: true, passive: true });
  function finishScroll() {
    const s = S.scroll;
    S.scroll = null;
    if (!s) return;
    rest.set(s.key, s.pos);
    const dx = s.pos[0] - s.start[0], dy = s.pos[1] - s.start[1];
    if (Math.abs(dx) < 2 && Math.abs(dy) < 2) return;
    // scrolled as far as it goes ("to the bottom"): say so with the whole extent, so that the
    // replay reaches the end of a longer text too
    const el = s.box || document.scrollingElement || document.documentElement;
    const vertical = Math.abs(dy) >= Math.abs(dx);
    const d = vertical ? dy : dx;
    const pos = vertical ? el.scrollTop : el.scrollLeft;
    const size = vertical ? el.scrollHeight : el.scrollWidth;
    const view = vertical ? el.clientHeight : el.clientWidth;
    const end = d > 0 ? pos + view >= size - 1 : pos <= 0;
    emit('scroll', s.box, { dx, dy, end, extent: size });
  }

  // Hover that opens something: the pointer rests on an element and more interactive
  // elements become visible (menus, tooltips with links, CSS :hover panels).
  function visibleInteractiveCount() {
    let n = 0;
    for (const el of document.querySelectorAll('a[href],button,[role=menuitem],[role=option],[role=link],[role=button],[role=menu],[role=tooltip]')) {
      const r = el.getBoundingClientRect();
      if (r.width >= 1 && r.height >= 1 && getComputedStyle(el).visibility !== 'hidden') n++;
    }
    return n;
  }
  // CSS :hover applies before 'mouseover' is dispatched, so the count to compare with is taken
  // while the pointer was elsewhere (refreshed at most every 300 ms).
  function refreshBase(force) {
    const now = Date.now();
    if (!force && now - S.baseAt < 300) return;
    S.baseAt = now;
    S.baseCount = visibleInteractiveCount();
  }
  on('mouseover', (e) => {
    if (S.inspect || !e.isTrusted) return;
    const raw = realTarget(e);
    const el = raw && !inHarness(raw) && actionable(raw);
    const host = el || (raw && !inHarness(raw) && raw.closest && raw.closest('[aria-haspopup],nav *,.menu,.dropdown'));
    if (!host) { S.hoverEl = null; clearTimeout(S.hoverTimer); refreshBase(); return; }
    if (host === S.hoverEl) return;
    S.hoverEl = host;
    clearTimeout(S.hoverTimer);
    const before = S.baseCount >= 0 ? S.baseCount : visibleInteractiveCount();
    const since = Date.now();
    S.hoverTimer = setTimeout(() => {
      // a click or key press since the pointer arrived explains whatever opened
      if (S.hoverEl !== host || !host.matches(':hover') || S.lastInput >= since) return;
      const now = visibleInteractiveCount();
      S.baseCount = now; S.baseAt = Date.now();
      if (now > before) emit('hover', host);
    }, 350);
  }, { capture: true, passive: true });
  on('mouseout', (e) => {
    const raw = realTarget(e);
    if (S.hoverEl && raw && !S.hoverEl.contains(e.relatedTarget)) { S.hoverEl = null; clearTimeout(S.hoverTimer); }
  }, { capture: true, passive: true });

  // the baseline also follows the page: at load, and after each action has taken effect
  const settledBase = () => { if (!S.hoverEl) refreshBase(true); };
  if (document.readyState === 'complete') setTimeout(settledBase, 0);
  else on('load', () => setTimeout(settledBase, 0));
  // where the focus was when the pointer went down (a click then focuses what it hits)
  on('pointerdown', (e) => { if (e.isTrusted) S.downFocus = deepActive(); }, { capture: true, passive: true });
  // the focus found when the listener attached is not the person's until they move it
  S.inherited = deepActive();
  on('focusin', (e) => { if (realTarget(e) !== S.inherited) S.inherited = null; }, { capture: true, passive: true });
  const touched = () => { S.lastInput = Date.now(); setTimeout(settledBase, 400); };
  on('pointerdown', touched, { capture: true, passive: true });
  on('keydown', touched, { capture: true, passive: true });
  on('pagehide', flush, { capture: true });

  // detached: drop what is pending (the listener flushed it first) and report nothing more
  function suspend() {
    for (const t of [S.idleTimer, S.scrollTimer, S.hoverTimer]) clearTimeout(t);
    setInspect(false);
    Object.assign(S, { active: false, pending: null, scroll: null, hoverEl: null });
  }
  function resume() {
    Object.assign(S, { active: true, inspect: false, pending: null, scroll: null, hoverEl: null, inherited: deepActive() });
    refreshBase(true);
  }

  window.__steadyhandRec = { flush, setInspect, inspecting: () => S.inspect, suspend, resume, active: () => S.active };
})();
