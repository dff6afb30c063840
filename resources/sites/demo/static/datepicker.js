/* Calendar popup for a YYYY-MM-DD text input: day buttons named "March 9, 2026",
 * month navigation, arrow-key moves, Escape / outside click closes. */
(function () {
  "use strict";
  var LD = window.LD, h = LD.h;
  var WEEK = [["Mo", "Monday"], ["Tu", "Tuesday"], ["We", "Wednesday"], ["Th", "Thursday"], ["Fr", "Friday"], ["Sa", "Saturday"], ["Su", "Sunday"]];

  function sameDay(a, b) { return !!a && !!b && a.getTime() === b.getTime(); }
  function addDays(d, n) { var x = new Date(d.getTime()); x.setDate(x.getDate() + n); return x; }

  /* opts: {input, button, gt ("new.start"), label ("Choose start date"),
   *        min(): Date|null, initial(): Date|null, today: Date} */
  function DatePicker(opts) {
    var self = this;
    var id = opts.input.name + "-date-picker";
    this.opts = opts;
    this.month = null;  /* first day of the shown month */
    this.monthLabel = h("h2", { id: id + "-month", "aria-live": "polite" });
    var prev = h("button", { type: "button", class: "dp-nav", "aria-label": "Previous month", "data-gt": opts.gt + ".prev", text: "‹" });
    var next = h("button", { type: "button", class: "dp-nav", "aria-label": "Next month", "data-gt": opts.gt + ".next", text: "›" });
    prev.addEventListener("click", function () { self.shift(-1); });
    next.addEventListener("click", function () { self.shift(1); });
    this.grid = h("tbody");
    var headRow = h("tr", {}, WEEK.map(function (w) { return h("th", { scope: "col", abbr: w[1], text: w[0] }); }));
    this.el = h("div", { class: "datepicker", id: id, role: "dialog", "aria-modal": "false", "aria-label": opts.label, hidden: true }, [
      h("div", { class: "dp-head" }, [prev, this.monthLabel, next]),
      h("table", { class: "dp-grid", role: "grid", "aria-labelledby": id + "-month" }, [h("thead", {}, [headRow]), this.grid]),
      h("p", { class: "dp-foot", text: "Today is " + LD.fmtLong(opts.today) })
    ]);
    opts.button.setAttribute("aria-controls", id);
    opts.button.addEventListener("click", function () { if (self.isOpen()) self.close(true); else self.open(); });
    this.el.addEventListener("keydown", function (e) { self.onKey(e); });
    document.addEventListener("keydown", function (e) {
      if (e.key === "Escape" && self.isOpen()) { e.preventDefault(); self.close(self.el.contains(document.activeElement)); }
    });
    document.addEventListener("mousedown", function (e) {
      if (self.isOpen() && !self.el.contains(e.target) && !opts.button.contains(e.target)) self.close(false);
    }, true);
    opts.input.closest(".date-field").appendChild(this.el);
  }

  DatePicker.prototype.isOpen = function () { return !this.el.hidden; };

  DatePicker.prototype.open = function () {
    var o = this.opts;
    var current = LD.parseISO(o.input.value.trim()) || (o.initial && o.initial()) || o.today;
    this.month = new Date(current.getFullYear(), current.getMonth(), 1);
    this.render();
    this.el.hidden = false;
    o.button.setAttribute("aria-expanded", "true");
    var focus = this.el.querySelector(".dp-day.is-selected:not(:disabled)") || this.el.querySelector(".dp-day.is-today:not(:disabled)") ||
      this.el.querySelector(".dp-day:not(:disabled)");
    if (focus) focus.focus();
  };

  DatePicker.prototype.close = function (restoreFocus) {
    if (!this.isOpen()) return;
    this.el.hidden = true;
    this.opts.button.setAttribute("aria-expanded", "false");
    if (restoreFocus) this.opts.button.focus();
  };

  DatePicker.prototype.shift = function (months) {
    this.month = new Date(this.month.getFullYear(), this.month.getMonth() + months, 1);
    this.render();
  };

  DatePicker.prototype.render = function () {
    var o = this.opts, self = this;
    var selected = LD.parseISO(o.input.value.trim());
    var min = o.min ? o.min() : null;
    var y = this.month.getFullYear(), m = this.month.getMonth();
    this.monthLabel.textContent = LD.MONTHS[m] + " " + y;
    this.grid.textContent = "";
    var lead = (this.month.getDay() + 6) % 7;  /* Monday first */
    var days = new Date(y, m + 1, 0).getDate();
    var row = h("tr");
    for (var i = 0; i < lead; i++) row.appendChild(h("td"));
    for (var d = 1; d <= days; d++) {
      var date = new Date(y, m, d);
      var iso = LD.toISO(date);
      var classes = ["dp-day"];
      if (sameDay(date, o.today)) classes.push("is-today");
      if (sameDay(date, selected)) classes.push("is-selected");
      if (date.getDay() === 0 || date.getDay() === 6) classes.push("is-weekend");
      var b = h("button", {
        type: "button", class: classes.join(" "), tabindex: "-1", "aria-label": LD.fmtLong(date),
        "aria-current": sameDay(date, o.today) ? "date" : null, "aria-pressed": sameDay(date, selected) ? "true" : null,
        disabled: !!(min && date < min), "data-date": iso, "data-gt": o.gt + ".day." + iso, text: String(d)
      });
      b.addEventListener("click", (function (value) { return function () { self.pick(value); }; })(iso));
      row.appendChild(h("td", {}, [b]));
      if (row.children.length === 7) { this.grid.appendChild(row); row = h("tr"); }
    }
    if (row.children.length) { while (row.children.length < 7) row.appendChild(h("td")); this.grid.appendChild(row); }
    var focusable = this.el.querySelector(".dp-day.is-selected:not(:disabled)") || this.el.querySelector(".dp-day.is-today:not(:disabled)") ||
      this.el.querySelector(".dp-day:not(:disabled)");
    if (focusable) focusable.tabIndex = 0;
  };

  DatePicker.prototype.pick = function (iso) {
    var input = this.opts.input;
    input.value = iso;
    input.dispatchEvent(new Event("input", { bubbles: true }));
    input.dispatchEvent(new Event("change", { bubbles: true }));
    this.close(true);
  };

  DatePicker.prototype.onKey = function (e) {
    var t = e.target;
    if (!t.classList || !t.classList.contains("dp-day")) return;
    var step = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -7, ArrowDown: 7 }[e.key];
    var date = LD.parseISO(t.getAttribute("data-date"));
    var target = null;
    if (step) target = addDays(date, step);
    else if (e.key === "PageUp") target = new Date(date.getFullYear(), date.getMonth() - 1, Math.min(date.getDate(), 28));
    else if (e.key === "PageDown") target = new Date(date.getFullYear(), date.getMonth() + 1, Math.min(date.getDate(), 28));
    if (!target) return;
    e.preventDefault();
    if (target.getMonth() !== this.month.getMonth() || target.getFullYear() !== this.month.getFullYear()) {
      this.month = new Date(target.getFullYear(), target.getMonth(), 1);
      this.render();
    }
    var b = this.el.querySelector('.dp-day[data-date="' + LD.toISO(target) + '"]');
    if (b) {
      this.el.querySelectorAll(".dp-day").forEach(function (x) { x.tabIndex = -1; });
      b.tabIndex = 0;
      b.focus();
    }
  };

  LD.DatePicker = DatePicker;
})();
