/* Custom listbox that replaces a <select> (tweaked variant, the R tweak "a standard
 * input becomes a custom-drawn widget"): role=combobox + role=listbox/option. */
(function () {
  "use strict";
  var LD = window.LD, h = LD.h;

  /* Replace `select` by a combobox; returns the widget element (role=combobox). */
  function upgradeSelect(select, opts) {
    var labelId = opts.labelId, base = opts.id;
    var options = Array.prototype.filter.call(select.options, function (o) { return o.value; });
    var placeholder = select.options[0] && !select.options[0].value ? select.options[0].text : "";
    var hidden = h("input", { type: "hidden", name: select.name, value: select.value });
    var valueEl = h("span", { class: "combo-value placeholder", text: placeholder });
    var chevron = '<svg viewBox="0 0 12 8" aria-hidden="true"><path d="M1 1l5 5 5-5" fill="none" stroke="currentColor" stroke-width="1.8"/></svg>';
    var combo = h("div", {
      role: "combobox", tabindex: "0", class: "combo-button", id: base + "-combo", "aria-haspopup": "listbox",
      "aria-expanded": "false", "aria-controls": base + "-listbox", "aria-labelledby": labelId, "data-gt": select.dataset.gt
    }, [valueEl]);
    combo.insertAdjacentHTML("beforeend", chevron);
    var list = h("ul", { role: "listbox", id: base + "-listbox", class: "combo-list", "aria-labelledby": labelId, tabindex: "-1", hidden: true });
    var items = options.map(function (o) {
      var li = h("li", {
        role: "option", id: base + "-opt-" + o.value, "aria-selected": "false", "data-value": o.value,
        "data-gt": select.dataset.gt + ".option." + o.value, text: o.text
      });
      li.addEventListener("click", function () { choose(li); close(); combo.focus(); });
      li.addEventListener("mousemove", function () { setActive(li); });
      list.appendChild(li);
      return li;
    });
    var wrap = h("div", { class: "combo" }, [combo, list, hidden]);
    select.parentNode.replaceChild(wrap, select);
    var label = document.getElementById(labelId);
    if (label) { label.removeAttribute("for"); label.addEventListener("click", function () { combo.focus(); }); }
    var active = null;

    function isOpen() { return !list.hidden; }
    function setActive(li) {
      items.forEach(function (x) { x.classList.toggle("is-active", x === li); });
      active = li;
      if (li) combo.setAttribute("aria-activedescendant", li.id); else combo.removeAttribute("aria-activedescendant");
    }
    function open() {
      list.hidden = false;
      combo.setAttribute("aria-expanded", "true");
      setActive(items.filter(function (x) { return x.getAttribute("aria-selected") === "true"; })[0] || items[0]);
    }
    function close() {
      list.hidden = true;
      combo.setAttribute("aria-expanded", "false");
      setActive(null);
    }
    function choose(li) {
      if (hidden.value === li.dataset.value) return;
      items.forEach(function (x) { x.setAttribute("aria-selected", x === li ? "true" : "false"); });
      hidden.value = li.dataset.value;
      valueEl.textContent = li.textContent;
      valueEl.classList.remove("placeholder");
      combo.dispatchEvent(new Event("change", { bubbles: true }));
    }

    combo.addEventListener("click", function () { if (isOpen()) close(); else open(); });
    combo.addEventListener("keydown", function (e) {
      var i = items.indexOf(active);
      if (e.key === "ArrowDown" || e.key === "ArrowUp") {
        e.preventDefault();
        if (!isOpen()) { open(); return; }
        var n = e.key === "ArrowDown" ? Math.min(items.length - 1, i + 1) : Math.max(0, i - 1);
        setActive(items[n]);
      } else if (e.key === "Enter" || e.key === " ") {
        e.preventDefault();
        if (!isOpen()) { open(); return; }
        if (active) choose(active);
        close();
      } else if (e.key === "Escape") {
        if (isOpen()) { e.preventDefault(); e.stopPropagation(); close(); }
      } else if (e.key === "Tab") {
        close();
      }
    });
    document.addEventListener("mousedown", function (e) { if (isOpen() && !wrap.contains(e.target)) close(); }, true);
    return combo;
  }

  LD.upgradeSelect = upgradeSelect;
})();
