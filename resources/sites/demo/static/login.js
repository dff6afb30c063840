/* Sign-in page: POST /api/login; three failed attempts lock the account. */
(function () {
  "use strict";
  var LD = window.LD;
  if (LD.has("renamed-ids")) {
    LD.renameIds({ "username": "login-user", "password": "login-secret", "signin": "btn-signin", "login-form": "signin-form" });
  }
  if (LD.has("apostrophe")) {  /* a label gains a typographic apostrophe (docs/variants.md) */
    document.querySelector('label[for="' + document.querySelector('[name="username"]').id + '"]').textContent = "User’s name";
  }
  LD.startNoise(document.querySelector(".footnote"));
  var form = document.querySelector('[data-gt="login.form"]');
  var user = form.querySelector('[name="username"]');
  var pass = form.querySelector('[name="password"]');
  var button = form.querySelector('[type="submit"]');
  var errorBox = document.getElementById("login-error");
  var busy = false;

  function showError(title, sentence) {
    errorBox.textContent = "";
    if (title) errorBox.appendChild(LD.h("strong", { text: title }));
    errorBox.appendChild(LD.h("span", { text: sentence }));
    errorBox.hidden = false;
  }

  function nextUrl() {
    var next = new URLSearchParams(location.search).get("next") || "";
    return /^\/(?!\/)/.test(next) ? next : "/requests";
  }

  form.addEventListener("submit", function (e) {
    e.preventDefault();
    if (busy) return;
    if (!user.value.trim() || !pass.value) {
      showError("", "Enter your user name and password.");
      (user.value.trim() ? pass : user).focus();
      return;
    }
    busy = true;
    button.disabled = true;
    form.setAttribute("aria-busy", "true");
    LD.api("POST", "/api/login", { username: user.value, password: pass.value }).then(function (r) {
      if (r.ok) { location.assign(nextUrl()); return; }
      busy = false;
      button.disabled = false;
      form.removeAttribute("aria-busy");
      var d = r.data || {};
      if (d.code === "locked") showError("Account locked", d.message);
      else showError("", d.error || "Sign-in failed.");
      pass.value = "";
      pass.focus();
    }, function () {
      busy = false;
      button.disabled = false;
      form.removeAttribute("aria-busy");
      showError("", "The server cannot be reached. Try again.");
    });
  });
})();
