/* Ground-truth reporter of the LeaveDesk demo.
 *
 * Every control carries data-gt="<stable id>".  One delegated listener per
 * event type (capture phase, so page handlers cannot stop it) posts
 * {gt, kind, ts, page, n} to /__gt/activation when a control is activated:
 *   click         a click on a control (button, link, input, option...)
 *   change        a select / checkbox / custom listbox changed value
 *   input-commit  a text field's edited value was committed (change event; a contenteditable
 *                 textbox fires its own change when left after an edit)
 *   submit        a form was submitted
 *   dblclick      a double-click on any element with an id (a label edited in place)
 * Values are never sent (passwords stay on the page).  This identity is for
 * benchmarks and tests only: the engine, the locator and the recorder never
 * read data-gt.
 */
(function () {
  "use strict";
  var CONTROL = 'a[href], button, input, select, textarea, summary, [role="button"], [role="link"], ' +
    '[role="option"], [role="combobox"], [role="checkbox"], [role="menuitem"], [role="tab"], ' +
    '[role="switch"], [role="radio"], [role="textbox"], [contenteditable="true"]';
  var TEXT_TYPES = ["text", "password", "email", "search", "tel", "url", "number", "date"];
  var counter = 0;

  function send(gt, kind) {
    counter += 1;
    var body = JSON.stringify({ gt: gt, kind: kind, ts: Date.now(), page: location.pathname, n: counter });
    var queued = false;
    try {
      queued = navigator.sendBeacon("/__gt/activation", new Blob([body], { type: "application/json" }));
    } catch (e) { queued = false; }
    if (!queued) {
      fetch("/__gt/activation", {
        method: "POST", body: body, keepalive: true, headers: { "Content-Type": "application/json" }
      }).catch(function () {});
    }
  }

  function controlOf(target) {
    var el = target && target.nodeType === 1 ? target : target && target.parentElement;
    return el ? el.closest(CONTROL) : null;
  }

  function isTextField(el) {
    if (el.tagName === "TEXTAREA" || el.isContentEditable || el.getAttribute("role") === "textbox") return true;
    return el.tagName === "INPUT" && TEXT_TYPES.indexOf((el.getAttribute("type") || "text").toLowerCase()) >= 0;
  }

  document.addEventListener("click", function (e) {
    var el = controlOf(e.target);
    if (el && el.dataset.gt) send(el.dataset.gt, "click");
  }, true);

  document.addEventListener("change", function (e) {
    var el = e.target;
    if (!el || !el.dataset || !el.dataset.gt) return;
    send(el.dataset.gt, isTextField(el) ? "input-commit" : "change");
  }, true);

  /* a double-click on any element with an id (a label edited in place, the text beside it) */
  document.addEventListener("dblclick", function (e) {
    var el = e.target && e.target.nodeType === 1 ? e.target : e.target && e.target.parentElement;
    el = el ? el.closest("[data-gt]") : null;
    if (el) send(el.dataset.gt, "dblclick");
  }, true);

  document.addEventListener("submit", function (e) {
    var form = e.target;
    if (form && form.dataset && form.dataset.gt) send(form.dataset.gt, "submit");
  }, true);
})();
