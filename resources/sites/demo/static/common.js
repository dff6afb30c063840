/* Shared helpers of the LeaveDesk pages: config, API calls, dates, header, dialogs. */
(function () {
  "use strict";
  var CONFIG = window.DEMO_CONFIG || { variant: "baseline", tweaks: [], today: "2026-03-02", user: null, leave_types: [] };
  var TWEAKS = CONFIG.tweaks || [];
  /* True when the served variant applies `tweak` (docs/variants.md). */
  function has(tweak) { return TWEAKS.indexOf(tweak) >= 0; }
  var MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
    "September", "October", "November", "December"];
  var DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

  /* ---- dates (ISO strings "YYYY-MM-DD", local calendar, no time zones) ---- */
  function parseISO(s) {
    var m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s || "");
    if (!m) return null;
    var d = new Date(+m[1], +m[2] - 1, +m[3]);
    if (d.getFullYear() !== +m[1] || d.getMonth() !== +m[2] - 1 || d.getDate() !== +m[3]) return null;
    return d;
  }
  function toISO(d) {
    return d.getFullYear() + "-" + String(d.getMonth() + 1).padStart(2, "0") + "-" + String(d.getDate()).padStart(2, "0");
  }
  function fmtShort(iso) {  /* "Mar 16, 2026" */
    var d = parseISO(iso);
    return d ? MONTHS[d.getMonth()].slice(0, 3) + " " + d.getDate() + ", " + d.getFullYear() : iso;
  }
  function fmtLong(d) {  /* "March 16, 2026" */
    return MONTHS[d.getMonth()] + " " + d.getDate() + ", " + d.getFullYear();
  }
  function fmtRange(a, b) {
    return a === b ? fmtShort(a) : fmtShort(a) + " – " + fmtShort(b);
  }
  function workingDays(a, b) {
    var n = 0, d = new Date(a.getTime());
    while (d <= b) { if (d.getDay() !== 0 && d.getDay() !== 6) n += 1; d.setDate(d.getDate() + 1); }
    return n;
  }

  /* ---- API ---- */
  function api(method, path, body) {
    var init = { method: method, headers: { "Accept": "application/json" }, credentials: "same-origin" };
    if (body !== undefined) { init.headers["Content-Type"] = "application/json"; init.body = JSON.stringify(body); }
    return fetch(path, init).then(function (resp) {
      var type = resp.headers.get("Content-Type") || "";
      var parse = type.indexOf("application/json") === 0 ? resp.json() : resp.text();
      return parse.then(function (data) {
        if (resp.status === 401 && path !== "/api/login") {
          location.assign("/login?next=" + encodeURIComponent(location.pathname));
        }
        return { ok: resp.ok, status: resp.status, data: data };
      });
    });
  }

  /* ---- DOM ---- */
  function h(tag, attrs, children) {
    var el = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      var v = attrs[k];
      if (v === null || v === undefined || v === false) return;
      if (k === "text") el.textContent = v;
      else if (k === "class") el.className = v;
      else if (k.slice(0, 2) === "on") el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? "" : v);
    });
    (children || []).forEach(function (c) { if (c) el.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
    return el;
  }

  /* Rename ids (tweaked variant) and the references to them (for, aria-*). */
  function renameIds(map) {
    Object.keys(map).forEach(function (oldId) {
      var el = document.getElementById(oldId);
      if (!el) return;
      var newId = map[oldId];
      el.id = newId;
      document.querySelectorAll('label[for="' + oldId + '"]').forEach(function (l) { l.htmlFor = newId; });
      ["aria-labelledby", "aria-describedby", "aria-controls"].forEach(function (a) {
        document.querySelectorAll("[" + a + "]").forEach(function (n) {
          var ids = n.getAttribute(a).split(/\s+/).map(function (x) { return x === oldId ? newId : x; });
          n.setAttribute(a, ids.join(" "));
        });
      });
    });
  }

  /* ---- header (signed-in pages) ---- */
  function initHeader() {
    var user = CONFIG.user;
    var nameEl = document.getElementById("current-user");
    if (nameEl && user) nameEl.textContent = user.name;
    var av = document.getElementById("avatar");
    if (av && user) av.textContent = user.name.split(" ").map(function (p) { return p[0]; }).join("").slice(0, 2);
    var today = parseISO(CONFIG.today);
    var todayEl = document.getElementById("today");
    if (todayEl && today) todayEl.textContent = "Today: " + DAYS[today.getDay()].slice(0, 3) + ", " + fmtShort(CONFIG.today);
    startNoise(document.querySelector(".topbar .spacer"));
    var out = document.getElementById("sign-out");
    if (out) out.addEventListener("click", function () {
      out.disabled = true;
      api("POST", "/api/logout").then(function () { location.assign("/login"); });
    });
  }

  /* ---- dialogs: <div role="dialog" aria-modal="true"> over a backdrop ---- */
  var FOCUSABLE = 'button:not([disabled]), [href], input:not([disabled]), select, textarea, [tabindex]:not([tabindex="-1"])';

  /* opts: {id, title, text, actions: [{label, gt, className, focus, onClick(handle, button)}], parent,
   *        nest: {id, title, text}}: with `nest` the actions sit in a second dialog nested inside the first
   *        (the nested-export tweak). */
  function openDialog(opts) {
    var returnTo = document.activeElement;
    var titleId = opts.id + "-title", descId = opts.id + "-desc";
    var actions = h("div", { class: "dialog-actions" });
    var body = actions;
    if (opts.nest) {
      var n = opts.nest;
      body = h("div", {
        class: "dialog dialog-inner", id: n.id, role: "dialog", "aria-modal": "false",
        "aria-labelledby": n.id + "-title", "aria-describedby": n.text ? n.id + "-desc" : null
      }, [h("h3", { id: n.id + "-title", text: n.title }), n.text ? h("p", { id: n.id + "-desc", text: n.text }) : null, actions]);
    }
    var dlg = h("div", {
      class: "dialog", id: opts.id, role: "dialog", "aria-modal": "true",
      "aria-labelledby": titleId, "aria-describedby": opts.text ? descId : null
    }, [h("h2", { id: titleId, text: opts.title }), opts.text ? h("p", { id: descId, text: opts.text }) : null, body]);
    var overlay = h("div", { class: "overlay" }, [dlg]);
    var handle = {
      element: dlg,
      overlay: overlay,
      close: function () {
        if (!overlay.parentNode) return;
        overlay.parentNode.removeChild(overlay);
        if (returnTo && document.contains(returnTo) && returnTo.focus) returnTo.focus();
        if (opts.onClose) opts.onClose();
      }
    };
    opts.actions.forEach(function (a) {
      var b = h("button", { type: "button", class: "btn " + (a.className || ""), "data-gt": a.gt, text: a.label,
        "aria-label": a.aria || null });
      b.addEventListener("click", function () { a.onClick(handle, b); });
      actions.appendChild(b);
      if (a.focus) handle.initialFocus = b;
    });
    overlay.addEventListener("keydown", function (e) {
      e.stopPropagation();  /* a nested dialog handles its own keys */
      if (e.key === "Escape") { handle.close(); return; }
      if (e.key !== "Tab") return;
      var items = Array.prototype.filter.call(dlg.querySelectorAll(FOCUSABLE), function (n) { return n.offsetParent !== null; });
      if (!items.length) return;
      var first = items[0], last = items[items.length - 1];
      if (e.shiftKey && document.activeElement === first) { e.preventDefault(); last.focus(); }
      else if (!e.shiftKey && document.activeElement === last) { e.preventDefault(); first.focus(); }
    });
    (opts.parent || document.body).appendChild(overlay);
    (handle.initialFocus || actions.querySelector("button")).focus();
    return handle;
  }

  /* ---- async noise (noise tweak): a clock, a trace UUID and a spinner that come and go ---- */
  function uuid() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    return "xxxxxxxx-xxxx-4xxx-8xxx-xxxxxxxxxxxx".replace(/x/g, function () { return (Math.random() * 16 | 0).toString(16); });
  }
  function clock() {
    var d = new Date();
    return [d.getHours(), d.getMinutes(), d.getSeconds()].map(function (x) { return String(x).padStart(2, "0"); }).join(":") +
      "." + String(d.getMilliseconds()).padStart(3, "0");
  }
  /* Appends the noise line to `host`; every 400 ms the text changes, every 1.5 s a spinner shows for 300 ms. */
  function startNoise(host) {
    if (!has("noise") || !host) return;
    var spin = h("span", { class: "spinner spinner-sm", role: "progressbar", "aria-label": "Syncing", hidden: true });
    var line = h("span", { class: "noise-text" });
    var box = h("span", { class: "noise", id: "sync-status" }, [spin, line]);
    host.appendChild(box);
    function tick() { line.textContent = "Synced " + clock() + " · trace " + uuid(); }
    tick();
    setInterval(tick, 400);
    setInterval(function () { spin.hidden = false; setTimeout(function () { spin.hidden = true; }, 300); }, 1500);
  }

  /* ---- unexpected popup (popup tweak): once per tab session, as the page starts ---- */
  function maybePopup() {
    if (!has("popup")) return;
    var KEY = "leavedesk-whats-new-seen";
    try { if (sessionStorage.getItem(KEY)) return; sessionStorage.setItem(KEY, "1"); } catch (e) { /* storage off: every time */ }
    openDialog({
      id: "whats-new", title: "What’s new in LeaveDesk",
      text: "Reports can now be scheduled every week. Take a short tour of the new features?",
      actions: [
        { label: "×", gt: "popup.close", className: "dialog-close", aria: "Close", focus: true, onClick: function (d) { d.close(); } },
        {
          label: "Take the tour", gt: "popup.tour", className: "btn-primary",
          onClick: function (d) { d.close(); var s = document.getElementById("page-status"); if (s) s.textContent = "The tour starts on your next visit."; }
        }
      ]
    });
  }

  window.LD = {
    config: CONFIG, variant: CONFIG.variant, tweaks: TWEAKS, has: has, startNoise: startNoise, maybePopup: maybePopup,
    uuid: uuid, clock: clock, MONTHS: MONTHS, DAYS: DAYS,
    parseISO: parseISO, toISO: toISO, fmtShort: fmtShort, fmtLong: fmtLong, fmtRange: fmtRange,
    workingDays: workingDays, api: api, h: h, renameIds: renameIds, initHeader: initHeader, openDialog: openDialog
  };
})();
