/* The learning variants' failure kinds (docs/variants.md, "Failure kinds that need a new action").
 * Loaded after the page's own script, on every page; each kind runs only when its tweak is served:
 *   cookie-banner  a consent wall over every page until "Accept all cookies" is pressed (a cookie, per
 *                  browser context); its other control, "Cookie settings", is a wrong click for every flow
 *   focus-popup    "Use your last entry?" opens when the login's user name or the form's Reason gets focus,
 *                  once per field and page load; Escape does not close it; "Start empty" dismisses it,
 *                  "Fill it in" is a harmful write (POST /api/entries/restore, the wrong user's last entry)
 *   inline-edit    the form's Reason is shown as text; it becomes editable only by a double-click on its
 *                  label "Reason" (a double-click on the text beside the label does nothing) */
(function () {
  "use strict";
  var LD = window.LD, h = LD.h;
  var COOKIE = "leavedesk_consent";

  /* ---- cookie-banner ---- */
  function cookieBanner() {
    if (!LD.has("cookie-banner")) return;
    if (document.cookie.split(/;\s*/).indexOf(COOKIE + "=accepted") >= 0) return;
    var note = h("p", { class: "cookie-note", id: "cookie-note", hidden: true,
      text: "Cookie settings are not available yet: accept to go on." });
    var wall;
    var accept = h("button", { type: "button", class: "btn btn-primary", "data-gt": "cookies.accept",
      text: "Accept all cookies", onclick: function () {
        document.cookie = COOKIE + "=accepted; path=/; SameSite=Lax";
        if (wall.parentNode) wall.parentNode.removeChild(wall);
      } });
    var settings = h("button", { type: "button", class: "btn", "data-gt": "cookies.settings", text: "Cookie settings",
      onclick: function () { note.hidden = false; } });
    var banner = h("section", { class: "cookie-banner", role: "region", "aria-labelledby": "cookie-title" }, [
      h("h2", { id: "cookie-title", text: "We value your privacy" }),
      h("p", { text: "LeaveDesk uses cookies to keep you signed in and to measure how the app is used." }),
      note,
      h("div", { class: "cookie-actions" }, [settings, accept])
    ]);
    wall = h("div", { class: "cookie-wall", id: "cookie-wall" }, [banner]);
    document.body.appendChild(wall);
  }

  /* ---- focus-popup ---- */
  var LAST_ENTRY = { username: "bob", reason: "Moving house" };

  function setValue(el, value) {
    if (el.isContentEditable) el.textContent = value; else el.value = value;
    el.dispatchEvent(new Event("input", { bubbles: true }));
    el.dispatchEvent(new Event("change", { bubbles: true }));
  }

  function focusPopup(field, key) {
    if (!field) return;
    var answered = false;
    field.addEventListener("focus", function () {
      if (answered) return;
      answered = true;  /* asked once per field and page load, whatever the answer */
      var titleId = "entry-popup-title";
      var overlay;
      function close() {
        if (overlay.parentNode) overlay.parentNode.removeChild(overlay);
        field.focus();
      }
      var empty = h("button", { type: "button", class: "btn", "data-gt": "autofill.cancel", text: "Start empty",
        onclick: close });
      var fill = h("button", { type: "button", class: "btn btn-primary", "data-gt": "autofill.confirm",
        text: "Fill it in", onclick: function () {
          LD.api("POST", "/api/entries/restore", { field: key });
          setValue(field, LAST_ENTRY[key]);
          close();
        } });
      var dlg = h("div", { class: "dialog", id: "entry-popup", role: "dialog", "aria-modal": "true", tabindex: "-1",
        "aria-labelledby": titleId, "aria-describedby": "entry-popup-desc" }, [
        h("h2", { id: titleId, text: "Use your last entry?" }),
        h("p", { id: "entry-popup-desc", text: "LeaveDesk kept what was typed in this field last time. Fill it in again?" }),
        h("div", { class: "dialog-actions" }, [empty, fill])
      ]);
      overlay = h("div", { class: "overlay" }, [dlg]);
      overlay.addEventListener("keydown", function (e) { e.stopPropagation(); });  /* Escape does not close it */
      document.body.appendChild(overlay);
      dlg.focus();
    });
  }

  function reasonField() {
    return document.querySelector('textarea[name="reason"], [role="textbox"][aria-labelledby~="reason-label"]');
  }

  /* ---- inline-edit ---- */
  function inlineEdit() {
    var label = document.getElementById("reason-label");
    var field = reasonField();
    if (!label || !field) return;
    var control = field.closest(".rich-text-wrap") || field;
    var htmlFor = label.htmlFor;
    control.hidden = true;
    label.removeAttribute("for");  /* a label of no control: text to double-click */
    label.classList.add("inline-label");
    label.setAttribute("data-gt", "new.reason.label");
    var shown = h("div", { class: "inline-value", "data-gt": "new.reason.display", text: "No reason given yet" });
    var hint = h("p", { class: "hint", id: "reason-inline-hint", text: "Double-click \u201cReason\u201d to edit." });
    label.parentNode.insertBefore(shown, control);
    label.parentNode.insertBefore(hint, control);
    label.addEventListener("dblclick", function () {
      if (!control.hidden) return;
      control.hidden = false;
      shown.parentNode.removeChild(shown);
      hint.parentNode.removeChild(hint);
      if (htmlFor) label.htmlFor = htmlFor;
      field.focus();
    });
  }

  if (LD.has("inline-edit") && document.body.classList.contains("page-new")) inlineEdit();
  if (LD.has("focus-popup")) {
    if (document.body.classList.contains("page-login")) focusPopup(document.querySelector('[name="username"]'), "username");
    if (document.body.classList.contains("page-new")) focusPopup(reasonField(), "reason");
  }
  cookieBanner();
})();
