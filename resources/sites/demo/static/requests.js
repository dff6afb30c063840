/* Requests page: sortable table, row actions, report export/save, dialogs. */
(function () {
  "use strict";
  var LD = window.LD, h = LD.h;
  LD.initHeader();

  var exportBtn = document.getElementById("export-report");
  var saveBtn = document.getElementById("save-report");
  var table = document.getElementById("requests-table");
  var headRow = table.querySelector("thead tr");
  var body = table.querySelector("tbody");
  var statusLine = document.getElementById("page-status");
  var summary = document.getElementById("summary");
  var sortNote = document.getElementById("sort-note");

  var newBtn = document.getElementById("new-request");
  /* UI tweaks (docs/variants.md): label suffix, renamed ids, reordered columns, relayout */
  if (LD.has("suffix")) exportBtn.textContent = "Export report (E)";
  if (LD.has("apostrophe")) newBtn.textContent = "New request (N)";
  if (LD.has("renamed-ids")) {
    LD.renameIds({ "export-report": "btn-export", "save-report": "btn-save", "requests-table": "leave-grid" });
  }
  if (LD.has("relayout")) {  /* toolbar under the heading, left-aligned: New request, Save report, Export report */
    var toolbar = exportBtn.parentNode, divider = toolbar.querySelector(".divider");
    toolbar.insertBefore(newBtn, toolbar.firstChild);
    toolbar.insertBefore(divider, newBtn.nextSibling);
    toolbar.insertBefore(saveBtn, exportBtn);
    document.querySelector(".page-head").classList.add("is-stacked");
  }

  function text(v) { return document.createTextNode(v); }
  function dateCell(iso) { return h("td", {}, [h("time", { datetime: iso, text: LD.fmtShort(iso) })]); }
  var COLUMNS = {
    ref: { label: "Ref", key: function (r) { return r.id; }, cell: function (r) { return h("td", { class: "ref", text: r.ref }); } },
    employee: { label: "Employee", key: function (r) { return r.employee.toLowerCase(); }, cell: function (r) { return h("td", { text: r.employee }); } },
    type: { label: "Type", key: function (r) { return r.type_label.toLowerCase(); }, cell: function (r) { return h("td", { text: r.type_label }); } },
    start: { label: "Start", key: function (r) { return r.start; }, cell: function (r) { return dateCell(r.start); } },
    end: { label: "End", key: function (r) { return r.end; }, cell: function (r) { return dateCell(r.end); } },
    days: { label: "Days", num: true, key: function (r) { return r.days; }, cell: function (r) { return h("td", { class: "num", text: String(r.days) }); } },
    status: {
      label: "Status", key: function (r) { return r.status_label; },
      cell: function (r) { return h("td", {}, [h("span", { class: "badge badge-" + r.status, text: r.status_label })]); }
    }
  };
  var ORDER = LD.has("columns")
    ? ["ref", "status", "start", "end", "days", "employee", "type"]
    : ["ref", "employee", "type", "start", "end", "days", "status"];
  var sort = { col: "start", dir: "ascending" };
  var rows = [];
  var highlight = null;

  function setStatus(msg, isError) {
    statusLine.textContent = msg;
    statusLine.classList.toggle("is-error", !!isError);
  }

  /* ---- header with sort buttons ---- */
  var ths = {};
  ORDER.forEach(function (col) {
    var c = COLUMNS[col];
    var icon = '<svg class="sort-icon" viewBox="0 0 10 14" aria-hidden="true"><path class="up" d="M1.5 5.5 5 2l3.5 3.5"/><path class="down" d="M1.5 8.5 5 12l3.5-3.5"/></svg>';
    var btn = h("button", { type: "button", class: "sort", "data-gt": "requests.sort." + col }, [text(c.label)]);
    btn.insertAdjacentHTML("beforeend", icon);
    btn.addEventListener("click", function () {
      sort = sort.col === col ? { col: col, dir: sort.dir === "ascending" ? "descending" : "ascending" } : { col: col, dir: "ascending" };
      renderSort();
      renderBody();
    });
    ths[col] = h("th", { scope: "col", class: c.num ? "num" : null }, [btn]);
    headRow.appendChild(ths[col]);
  });
  headRow.appendChild(h("th", { scope: "col", class: "actions-col", text: "Actions" }));

  function renderSort() {
    Object.keys(ths).forEach(function (col) {
      if (col === sort.col) ths[col].setAttribute("aria-sort", sort.dir);
      else ths[col].removeAttribute("aria-sort");
    });
    sortNote.textContent = "Sorted by " + COLUMNS[sort.col].label + ", " + sort.dir;
  }

  function sorted() {
    var key = COLUMNS[sort.col].key, sign = sort.dir === "ascending" ? 1 : -1;
    return rows.slice().sort(function (a, b) {
      var ka = key(a), kb = key(b);
      if (ka < kb) return -sign;
      if (ka > kb) return sign;
      return a.id - b.id;
    });
  }

  /* ---- body ---- */
  function renderBody() {
    body.textContent = "";
    if (!rows.length) {
      body.appendChild(h("tr", {}, [h("td", { class: "empty", colspan: String(ORDER.length + 1), text: "No leave requests yet." })]));
    }
    sorted().forEach(function (r) {
      var tr = h("tr", { "data-id": String(r.id), class: r.ref === highlight ? "is-new" : null });
      ORDER.forEach(function (col) { tr.appendChild(COLUMNS[col].cell(r)); });
      var approve = h("button", {
        type: "button", class: "btn btn-sm", "data-gt": "row." + r.id + ".approve",
        disabled: r.status !== "pending", text: "Approve"
      });
      approve.addEventListener("click", function () { approveRow(r, approve); });
      var del = h("button", { type: "button", class: "btn btn-sm btn-ghost-danger", "data-gt": "row." + r.id + ".delete", text: "Delete" });
      del.addEventListener("click", function () { confirmDelete(r); });
      tr.appendChild(h("td", {}, [h("div", { class: "actions" }, [approve, del])]));
      body.appendChild(tr);
    });
    renderSummary();
  }

  function renderSummary() {
    var pending = rows.filter(function (r) { return r.status === "pending"; }).length;
    summary.textContent = rows.length + (rows.length === 1 ? " request" : " requests") + " · " + pending + " pending approval" +
      (LD.has("noise") ? " · refreshed " + LD.clock() : "");
  }

  function load() {
    return LD.api("GET", "/api/requests").then(function (r) {
      if (!r.ok) { setStatus("Could not load the requests.", true); return; }
      rows = r.data.requests;
      renderBody();
    });
  }

  /* ---- row actions ---- */
  function approveRow(r, button) {
    button.disabled = true;
    LD.api("POST", "/api/requests/" + r.id + "/approve").then(function (res) {
      if (!res.ok) { setStatus(res.data.error || "Could not approve the request.", true); button.disabled = false; return; }
      rows = rows.map(function (x) { return x.id === r.id ? res.data.request : x; });
      renderBody();
      setStatus("Request " + r.ref + " approved.");
    });
  }

  function deleteRow(r, button, dialogs) {
    button.disabled = true;
    LD.api("DELETE", "/api/requests/" + r.id).then(function (res) {
      dialogs.slice().reverse().forEach(function (d) { d.close(); });
      if (!res.ok) { setStatus(res.data.error || "Could not delete the request.", true); return; }
      rows = rows.filter(function (x) { return x.id !== r.id; });
      renderBody();
      setStatus("Request " + r.ref + " deleted.");
    });
  }

  function confirmDelete(r) {
    var what = r.ref + " (" + r.employee + ", " + r.type_label + ", " + LD.fmtRange(r.start, r.end) + ")";
    LD.openDialog({
      id: "delete-dialog", title: "Delete request?",
      text: what + " will be deleted. This cannot be undone.",
      actions: [
        { label: "Cancel", gt: "dialog.delete.cancel", focus: true, onClick: function (d) { d.close(); } },
        {
          label: "Delete", gt: "dialog.delete.confirm", className: "btn-danger",
          onClick: function (outer, button) {
            if (!LD.has("nested-delete")) { deleteRow(r, button, [outer]); return; }
            LD.openDialog({  /* UI tweak of R: the confirmation becomes two nested dialogs */
              id: "confirm-delete-dialog", title: "Confirm deletion", parent: outer.element,
              text: "Are you sure? " + r.ref + " will be permanently deleted.",
              actions: [
                { label: "Cancel", gt: "dialog.delete2.cancel", focus: true, onClick: function (inner) { inner.close(); } },
                {
                  label: "Yes, delete", gt: "dialog.delete2.confirm", className: "btn-danger",
                  onClick: function (inner, b2) { deleteRow(r, b2, [outer, inner]); }
                }
              ]
            });
          }
        }
      ]
    });
  }

  /* ---- reports ---- */
  exportBtn.addEventListener("click", function () {
    var n = rows.length;
    var question = "Export " + n + " leave " + (n === 1 ? "request" : "requests") + " as a CSV file?";
    var nested = LD.has("nested-export");  /* one dialog becomes two nested dialogs (docs/variants.md) */
    LD.openDialog({
      id: "export-dialog", title: "Export report",
      text: nested ? "The report lists every leave request of the team." : question,
      nest: nested ? { id: "export-options", title: "Export options", text: question + " Format: CSV (UTF-8)." } : null,
      actions: [
        { label: "Cancel", gt: "dialog.export.cancel", onClick: function (d) { d.close(); } },
        {
          label: "Confirm", gt: "dialog.export.confirm", className: "btn-primary", focus: true,
          onClick: function (d, button) {
            button.disabled = true;
            fetch("/api/reports/export", { credentials: "same-origin" }).then(function (resp) {
              var count = resp.headers.get("X-Row-Count");
              return resp.text().then(function (csv) { return { ok: resp.ok, csv: csv, count: count }; });
            }).then(function (res) {
              d.close();
              if (!res.ok) { setStatus("The export failed.", true); return; }
              var a = document.createElement("a");
              a.href = URL.createObjectURL(new Blob([res.csv], { type: "text/csv" }));
              a.download = "leave-report-" + LD.config.today + ".csv";
              a.click();
              setTimeout(function () { URL.revokeObjectURL(a.href); }, 10000);
              setStatus("Report exported (" + res.count + " requests).");
            });
          }
        }
      ]
    });
  });

  saveBtn.addEventListener("click", function () {
    saveBtn.disabled = true;
    LD.api("POST", "/api/reports").then(function (res) {
      saveBtn.disabled = false;
      if (!res.ok) { setStatus(res.data.error || "Could not save the report.", true); return; }
      setStatus("Report saved as " + res.data.report.ref + " (" + res.data.report.rows + " requests).");
    });
  });

  /* ---- "Request submitted" toast after the form (in the page flow: it never covers a control) ---- */
  function showSubmittedToast(ref) {
    var detail = h("div", { class: "toast-detail", text: ref + " is waiting for approval." });
    var close = h("button", { type: "button", class: "toast-close", "aria-label": "Dismiss", "data-gt": "toast.dismiss", text: "×" });
    var toast = h("div", { class: "toast", id: "toast", role: "status" }, [
      h("div", { class: "toast-body" }, [h("div", { class: "toast-title", text: "Request submitted" }), detail]),
      close
    ]);
    close.addEventListener("click", function () { toast.remove(); });
    statusLine.parentNode.insertBefore(toast, statusLine);
    return function fill() {
      var r = rows.filter(function (x) { return x.ref === ref; })[0];
      if (r) detail.textContent = r.ref + " · " + r.type_label + " · " + LD.fmtRange(r.start, r.end) + " is waiting for approval.";
    };
  }

  renderSort();
  var submitted = new URLSearchParams(location.search).get("submitted");
  if (submitted) {
    highlight = submitted;
    history.replaceState(null, "", "/requests");
  }
  var fillToast = submitted ? showSubmittedToast(submitted) : null;
  LD.maybePopup();  /* opens over the page before the table has loaded */
  load().then(function () { if (fillToast) fillToast(); });
  if (LD.has("noise")) setInterval(function () { if (rows.length) renderSummary(); }, 1000);
})();
