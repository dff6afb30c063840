/* New leave request form: validation keeps Submit disabled until the form is
 * valid; submit shows a spinner while the server saves, then goes to /requests. */
(function () {
  "use strict";
  var LD = window.LD;
  LD.initHeader();

  var form = document.getElementById("request-form");
  /* UI tweaks (docs/variants.md) */
  if (LD.has("combobox")) LD.upgradeSelect(document.getElementById("leave-type"), { labelId: "leave-type-label", id: "leave-type" });
  if (LD.has("contenteditable")) LD.upgradeTextarea(document.getElementById("reason"), { labelId: "reason-label" });
  if (LD.has("relayout")) {  /* the notify checkbox moves above Reason; Cancel and Submit swap */
    var reasonField = document.getElementById("reason-label").parentNode;
    reasonField.parentNode.insertBefore(document.getElementById("notify").parentNode, reasonField);
    var submitBtn = document.getElementById("submit-request");
    submitBtn.parentNode.insertBefore(form.querySelector('[data-gt="new.cancel"]'), submitBtn);
  }
  if (LD.has("renamed-ids")) {
    LD.renameIds({
      "start-date": "from-date", "end-date": "to-date", "reason": "leave-reason",
      "submit-request": "btn-submit", "request-form": "leave-form"
    });
  }
  var startInput = form.elements.start, endInput = form.elements.end;
  var reason = form.elements.reason, notify = form.elements.notify;
  var submit = form.querySelector('[type="submit"]');
  var saving = document.getElementById("saving");
  var formError = document.getElementById("form-error");
  var duration = document.getElementById("duration");
  var today = LD.parseISO(LD.config.today);
  var token = (window.crypto && crypto.randomUUID) ? crypto.randomUUID() : String(Date.now()) + "-" + Math.random().toString(16).slice(2);
  var busy = false;
  var committed = { start: false, end: false };

  var pickers = {
    start: new LD.DatePicker({
      input: startInput, button: document.getElementById("start-date-button"), gt: "new.start", label: "Choose start date",
      today: today, min: function () { return today; }, initial: function () { return null; }
    }),
    end: new LD.DatePicker({
      input: endInput, button: document.getElementById("end-date-button"), gt: "new.end", label: "Choose end date",
      today: today,
      min: function () { var s = LD.parseISO(startInput.value.trim()); return s && s > today ? s : today; },
      initial: function () { return LD.parseISO(startInput.value.trim()); }
    })
  };

  function showFieldError(name, input, message) {
    var box = document.getElementById(name + "-date-error");
    box.textContent = message || "";
    box.hidden = !message;
    if (message) input.setAttribute("aria-invalid", "true"); else input.removeAttribute("aria-invalid");
  }

  /* Returns true when the form can be submitted; updates messages and Submit. */
  function check() {
    var sv = startInput.value.trim(), ev = endInput.value.trim();
    var s = LD.parseISO(sv), e = LD.parseISO(ev);
    var startErr = "", endErr = "";
    if (sv && !s) startErr = "Enter the date as YYYY-MM-DD.";
    else if (s && s < today) startErr = "The start date cannot be in the past.";
    if (ev && !e) endErr = "Enter the date as YYYY-MM-DD.";
    else if (s && e && e < s) endErr = "The end date must be on or after the start date.";
    showFieldError("start", startInput, (committed.start || sv.length >= 10) ? startErr : "");
    showFieldError("end", endInput, (committed.end || ev.length >= 10) ? endErr : "");
    var valid = !!form.elements.type.value && !!s && !!e && !startErr && !endErr && !!reason.value.trim();
    if (s && e && !startErr && !endErr) {
      var n = LD.workingDays(s, e);
      duration.textContent = "Duration: " + n + " working day" + (n === 1 ? "" : "s") + " (" + LD.fmtRange(sv, ev) + ")";
      duration.hidden = false;
    } else {
      duration.hidden = true;
    }
    submit.disabled = busy || !valid;
    return valid;
  }

  form.addEventListener("input", check);
  form.addEventListener("change", function (e) {
    if (e.target === startInput) committed.start = true;
    if (e.target === endInput) committed.end = true;
    check();
  });
  startInput.addEventListener("blur", function () { if (startInput.value.trim()) { committed.start = true; check(); } });
  endInput.addEventListener("blur", function () { if (endInput.value.trim()) { committed.end = true; check(); } });

  function setBusy(on) {
    busy = on;
    saving.hidden = !on;
    if (on) form.setAttribute("aria-busy", "true"); else form.removeAttribute("aria-busy");
    check();
  }

  form.addEventListener("submit", function (e) {
    e.preventDefault();
    if (busy || !check()) return;
    formError.hidden = true;
    setBusy(true);
    LD.api("POST", "/api/requests", {
      type: form.elements.type.value, start: startInput.value.trim(), end: endInput.value.trim(),
      reason: reason.value.trim(), notify: notify.checked, client_token: token
    }).then(function (r) {
      if (r.ok) { location.assign("/requests?submitted=" + encodeURIComponent(r.data.request.ref)); return; }
      setBusy(false);
      var fields = (r.data && r.data.fields) || {};
      var detail = Object.keys(fields).map(function (k) { return fields[k]; }).join(" ");
      formError.textContent = ((r.data && r.data.error) || "The request could not be saved.") + (detail ? " " + detail : "");
      formError.hidden = false;
    }, function () {
      setBusy(false);
      formError.textContent = "The server cannot be reached. Try again.";
      formError.hidden = false;
    });
  });

  /* Back/forward cache: a restored page is not saving any more (same token: a re-submit is a duplicate). */
  window.addEventListener("pageshow", function (e) { if (e.persisted) setBusy(false); });
  check();
})();
