/* A contenteditable ARIA textbox that replaces a <textarea> (the contenteditable tweak,
 * docs/variants.md): <div role="textbox" aria-multiline="true" contenteditable> labelled by the
 * field's label, its text mirrored into a hidden input of the textarea's name so the form reads it.
 * Typing, paste, Tab in and out all work from the keyboard; leaving the field after an edit fires
 * a bubbling "change" (the ground truth logs it as input-commit, like the textarea's change). */
(function () {
  "use strict";
  var LD = window.LD, h = LD.h;

  function upgradeTextarea(textarea, opts) {
    var max = +(textarea.getAttribute("maxlength") || 0);
    var hidden = h("input", { type: "hidden", name: textarea.name, value: textarea.value });
    var editor = h("div", {
      role: "textbox", "aria-multiline": "true", contenteditable: "true", tabindex: "0",
      id: textarea.id, class: "rich-text", "aria-labelledby": opts.labelId, "aria-required": "true",
      "data-gt": textarea.dataset.gt, spellcheck: "true"
    });
    editor.textContent = textarea.value;
    var wrap = h("div", { class: "rich-text-wrap" }, [editor, hidden]);
    textarea.parentNode.replaceChild(wrap, textarea);
    var label = document.getElementById(opts.labelId);
    if (label) { label.removeAttribute("for"); label.addEventListener("click", function () { editor.focus(); }); }
    var atFocus = hidden.value;

    editor.addEventListener("input", function () {
      var text = editor.innerText.replace(/\n$/, "");
      if (max && text.length > max) { text = text.slice(0, max); editor.textContent = text; }
      hidden.value = text;
    });
    editor.addEventListener("focus", function () { atFocus = hidden.value; });
    editor.addEventListener("blur", function () {
      if (hidden.value !== atFocus) editor.dispatchEvent(new Event("change", { bubbles: true }));
    });
    return editor;
  }

  LD.upgradeTextarea = upgradeTextarea;
})();
