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
    hoverEl: null, hoverTimer: 0, overlay: null, badge: null, lastInput: 0, baseCount: -1, baseAt: 0,
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
  const isPassword = (el) => el.tagName === 'INPUT' && (el.getAttribute('type') || '').toLowerCase() === 'password';

  // The nearest stable labelled element (label, heading, header cell, legend, labelled control)
  // and the offset from its centre to the target's centre, in CSS px.
  function anchorOf(el) {
    const r = el.getBoundingClientRect();
    const cx = r.x + r.width / 2, cy = r.y + r.height / 2;
    const roots = [document];
    const root = el.getRootNode();
    if (root !== document && root.querySelectorAll) roots.unshift(root);
    let best = null;
    for (const rt of roots) {
      for (const n of rt.querySelectorAll('label,h1,h2,h3,h4,h5,h6,legend,th,[role=heading],[role=columnheader],dt,button,a[href],[aria-label]')) {
        if (n === el || n.contains(el) || el.contains(n)) continue;
        const t = L().clean(n.getAttribute('aria-label') || n.innerText || n.textContent, 80);
        if (!t || t.length > 40 || /^[\d\s.,:/-]+$/.test(t)) continue;  // numbers and dates are not stable
        const q = n.getBoundingClientRect();
        if (q.width < 1 || q.height < 1) continue;
        const tag = n.tagName.toLowerCase();
        const weight = /^(label|legend|th|h\d)$/.test(tag) || n.getAttribute('role') ? 0.7 : 1.0;
        const ax = q.x + q.width / 2, ay = q.y + q.height / 2;
        const d = Math.hypot(ax - cx, ay - cy) * weight;
        if (d < 400 && (!best || d < best.d)) best = { d, text: t, role: L().roleOf(n) || tag, dx: cx - ax, dy: cy - ay };
      }
    }
    return best ? { text: best.text, role: best.role, dx: best.dx, dy: best.dy } : null;
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

  function describe(el) {
    const d = L().describe(el, true);
    const a = anchorOf(el);
    if (a) d.anchor = a;
    if (d.is_password) d.value = '';
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
      b.textContent = 'Steadyhand: click an element (or select text) to assert on it';
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
  function pick(el) {
    const d = describe(el);
    const sel = countSelector(el);
    let count = 1;
    try { count = (el.getRootNode().querySelectorAll ? el.getRootNode() : document).querySelectorAll(sel).length; } catch (e) { /* keep 1 */ }
    const text = L().clean(el.innerText || el.textContent, 500);
    send({ kind: 'pick', desc: d, text, value: d.is_password ? '' : String(d.value || ''), enabled: d.enabled,
      visible: d.visible, count, count_selector: sel, interactive: !!actionable(el), t: Date.now() });
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
      if (!sel) pick(actionable(raw) || raw);
      return;
    }
    if (e.detail === 0 && Date.now() < S.suppressClickUntil) return;  // synthetic click of a key press
    const el = actionable(raw);
    if (!el) return;
    const tag = el.tagName.toLowerCase();
    const type = (el.getAttribute('type') || '').toLowerCase();
    if (tag === 'input' && ['checkbox', 'radio', 'file'].includes(type)) return;  // 'change' records these
    if (tag === 'select' || tag === 'option') return;
    if (isTextEntry(el)) return;  // clicking into a field only focuses it; typing is recorded
    if (e.detail >= 2) return;  // second click of a double click: 'dblclick' follows
    emit('click', el, { detail: e.detail });
  }, opts);

  on('dblclick', (e) => {
    if (!e.isTrusted || S.inspect) { if (S.inspect) { e.preventDefault(); e.stopImmediatePropagation(); } return; }
    const raw = realTarget(e);
    const el = raw && actionable(raw);  // only what the observer can find again
    if (!el || isTextEntry(el)) return;
    emit('dblclick', el);
  }, opts);

  on('submit', (e) => { if (S.inspect) { e.preventDefault(); e.stopImmediatePropagation(); } }, opts);

  on('mouseup', (e) => {
    if (!S.inspect || !e.isTrusted) return;
    const sel = String(window.getSelection ? window.getSelection() : '').trim();
    if (sel.length >= 2) {
      send({ kind: 'pick_text', text: L().clean(sel, 300), t: Date.now() });
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
    emit('scroll', s.box, { dx, dy });
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
    const el = raw && actionable(raw);
    const host = el || (raw && raw.closest && raw.closest('[aria-haspopup],nav *,.menu,.dropdown'));
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
    Object.assign(S, { active: true, inspect: false, pending: null, scroll: null, hoverEl: null });
    refreshBase(true);
  }

  window.__steadyhandRec = { flush, setInspect, inspecting: () => S.inspect, suspend, resume, active: () => S.active };
})();
