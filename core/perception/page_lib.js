// Steadyhand in-page library: installed in every frame by an init script.
// Observes interactive elements (P1), page-level state (S2) and quiet-ness (P6).
// It never reads the demo app's ground-truth attributes (data-gt*).
(() => {
  if (window.__steadyhand && window.__steadyhand.version === 1) return;
  const GT = /^data-gt/i;
  // ax: element -> {role, name, page} from the browser's accessibility tree at the last collect
  // (page: the in-page name then, to tell a stale entry)
  const state = { mutations: 0, lastMutation: 0, inflight: 0, refs: [], ax: new WeakMap() };

  // --- quiet-ness: DOM mutations and in-flight requests ----------------------------
  try {
    const mo = new MutationObserver((list) => {
      for (const m of list) {
        if (m.type === 'attributes' && m.attributeName && GT.test(m.attributeName)) continue;
        state.mutations++; state.lastMutation = performance.now();
      }
    });
    const startObs = () => mo.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    if (document.documentElement) startObs(); else document.addEventListener('DOMContentLoaded', startObs);
  } catch (e) { /* ignore */ }
  try {
    const of = window.fetch;
    if (of) window.fetch = function (...a) {
      state.inflight++;
      return of.apply(this, a).finally(() => { state.inflight = Math.max(0, state.inflight - 1); state.lastMutation = performance.now(); });
    };
    const oo = XMLHttpRequest.prototype.open, os = XMLHttpRequest.prototype.send;
    XMLHttpRequest.prototype.send = function (...a) {
      state.inflight++;
      this.addEventListener('loadend', () => { state.inflight = Math.max(0, state.inflight - 1); state.lastMutation = performance.now(); });
      return os.apply(this, a);
    };
    XMLHttpRequest.prototype.open = oo;
  } catch (e) { /* ignore */ }

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

  function labelOf(el) {
    let txt = '';
    if (el.labels && el.labels.length) txt = Array.from(el.labels).map(labelText).join(' ');
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
    if (!s) return s;
    const dom = clean(el.textContent, 2000);
    if (dom === s || !dom) return s;
    const i = dom.toLowerCase().indexOf(s.toLowerCase());
    if (i >= 0 && dom.length === dom.toLowerCase().length && s.length === s.toLowerCase().length) {
      return dom.slice(i, i + s.length);
    }
    return s;
  }

  function ownText(el) {
    const tag = el.tagName.toLowerCase();
    if (tag === 'input') {
      const t = (el.type || '').toLowerCase();
      if (['button', 'submit', 'reset'].includes(t)) return clean(el.value, 200);
      return '';
    }
    if (tag === 'select' || tag === 'textarea') return '';
    return domCase(clean(el.innerText || el.textContent, 200), el);
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
    if (text && !['textbox', 'combobox', 'searchbox', 'listbox', 'spinbutton', 'slider'].includes(role)) return clean(text, 120);
    const img = el.querySelector && el.querySelector('img[alt]');
    if (img) return clean(img.getAttribute('alt'), 120);
    return clean(el.getAttribute('title') || el.getAttribute('placeholder') || '', 120);
  }

  function cssPath(el) {
    const parts = [];
    let n = el;
    while (n && n.nodeType === 1 && parts.length < 30) {
      let s = n.tagName.toLowerCase();
      if (n.id && /^[A-Za-z][\w-]*$/.test(n.id)) { parts.unshift(`${s}#${n.id}`); break; }
      const p = n.parentElement;
      if (p) {
        const same = Array.from(p.children).filter((c) => c.tagName === n.tagName);
        if (same.length > 1) s += `:nth-of-type(${same.indexOf(n) + 1})`;
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
      let idx = 1;
      if (p) for (const c of p.children) { if (c === n) break; if (c.tagName === n.tagName) idx++; }
      parts.unshift(`${n.tagName.toLowerCase()}[${idx}]`);
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
      let i = 0;
      for (let c = p.firstElementChild; c && c !== n; c = c.nextElementSibling) i++;
      out.push(i);
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
  const isCandidate = (el) => isInteractive(el) && isVisible(el);

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

  function textNodesNear(el, r) {
    // nearest texts of visible text-bearing elements (labels, headings, cells), nearest first
    const cx = r.x + r.width / 2, cy = r.y + r.height / 2;
    const cands = [];
    for (const n of document.querySelectorAll('label,h1,h2,h3,h4,th,td,legend,p,span,div,li,dt,dd,a,button')) {
      if (n === el || n.contains(el) || el.contains(n)) continue;
      if (n.children.length > 2) continue;
      const t = clean(n.innerText || '', 80);
      if (!t || t.length > 40) continue;  // neighbours are short labels, not paragraphs
      const q = n.getBoundingClientRect();
      if (q.width < 1 || q.height < 1) continue;
      const d = Math.hypot(q.x + q.width / 2 - cx, q.y + q.height / 2 - cy);
      if (d < 250) cands.push([d, t]);
    }
    cands.sort((a, b) => a[0] - b[0]);
    const out = [];
    for (const [, t] of cands) { if (!out.includes(t)) out.push(t); if (out.length >= 4) break; }
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
      covered = !!top && top !== el && !el.contains(top) && !top.contains(el) && !(top.tagName === 'LABEL' && label);
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
    };
  }

  function isLoading() {
    for (const n of document.querySelectorAll('[aria-busy=true],[role=progressbar],.spinner,.loading,.loader')) {
      if (isVisible(n)) return true;
    }
    return false;
  }

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
  function collect(opts) {
    const withNeighbours = !opts || opts.neighbours !== false;
    const ax = (opts && opts.ax) || null;
    const refs = [];
    const items = [];
    const hosts = [];
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
        }
        items.push(describe(el, withNeighbours));
      }
    }
    state.refs = refs;
    return {
      url: location.href, title: document.title, items,
      viewport: [innerWidth, innerHeight], dpr: devicePixelRatio, scroll: [scrollX, scrollY],
      text: visibleText(), shadow_text: shadowText(hosts), modals: modals(), loading: isLoading(), errors: errorCount(), focus: focusDesc(),
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
      inflight: state.inflight, loading: isLoading(), ready: document.readyState,
    };
  }

  function refIndex(el) {
    let i = state.refs.indexOf(el);
    if (i < 0 && el) { state.refs.push(el); i = state.refs.length - 1; }
    return i;
  }

  window.__steadyhand = {
    version: 1, collect, describe, probe, refIndex, secretRects, ref: (i) => state.refs[i] || null, state,
    isInteractive, isCandidate, isVisible, roleOf, cssPath, clean, modals, nodePath, allText: () => visibleText() + ' ' + shadowText(),
  };
})();
