// recallery web UI: small enhancements over pages that work without script.
// Loaded from /static (the Content-Security-Policy allows no inline script).
(function () {
  "use strict";

  // "this page" ticks every row checkbox of the table or queue below it.
  function wireSelectPage(root) {
    var all = root.querySelector("#select-page");
    if (!all) return;
    all.addEventListener("change", function () {
      root.querySelectorAll("input.pick").forEach(function (box) { box.checked = all.checked; });
    });
  }

  // Type-to-confirm: a button marked data-needs-confirm stays disabled until the input with
  // data-confirm in its form holds exactly the expected text (the server checks it too). A
  // button the key may not use (aria-disabled, with its reason) stays disabled whatever is typed.
  function wireConfirm(root) {
    root.querySelectorAll("button[data-needs-confirm]:not([aria-disabled])").forEach(function (button) {
      var input = button.form && button.form.querySelector("[data-confirm]");
      if (!input) return;
      var update = function () { button.disabled = input.value !== input.dataset.confirm; };
      input.addEventListener("input", update);
      update();
    });
  }

  // The review queue from the keyboard: j/k move, c confirms, r rejects, x ticks.
  function items() { return Array.prototype.slice.call(document.querySelectorAll(".review-item")); }
  function focusAt(i) {
    var all = items();
    if (!all.length) return;
    var k = Math.max(0, Math.min(all.length - 1, i));
    all[k].focus();
  }
  function wireQueue() {
    if (!document.querySelector(".queue")) return;
    document.addEventListener("keydown", function (event) {
      var target = event.target;
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      if (target && /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName)) return;
      var all = items();
      var here = all.indexOf(document.activeElement);
      if (event.key === "j" || event.key === "ArrowDown") { focusAt(here + 1); event.preventDefault(); }
      else if (event.key === "k" || event.key === "ArrowUp") { focusAt(here - 1); event.preventDefault(); }
      else if ((event.key === "c" || event.key === "r") && here >= 0) {
        var button = all[here].querySelector('button[data-key="' + event.key + '"]');
        // The verdict replaces this item when it lands; the next one takes the focus now.
        if (button) { button.click(); focusAt(here + 1); event.preventDefault(); }
      } else if (event.key === "x" && here >= 0) {
        var box = all[here].querySelector("input.pick");
        if (box) { box.checked = !box.checked; event.preventDefault(); }
      }
    });
    focusAt(0);
  }

  // A refused htmx request (403, 404, 5xx) is not swapped in: say so beside the control that
  // sent it (its own alert right after it), or above the page when there is no such control.
  function besideControl(control) {
    if (!control || !control.parentNode) return document.getElementById("htmx-error");
    var next = control.nextElementSibling;
    if (next && next.classList.contains("control-error")) return next;
    var box = document.createElement("span");
    box.className = "control-error";
    box.setAttribute("role", "alert");
    control.parentNode.insertBefore(box, control.nextSibling);
    return box;
  }
  function wireErrors() {
    document.body.addEventListener("htmx:responseError", function (event) {
      var box = besideControl(event.detail.elt);
      if (!box) return;
      var xhr = event.detail.xhr;
      var text = "The server refused this (" + xhr.status + ").";
      try {
        var doc = new DOMParser().parseFromString(xhr.responseText, "text/html");
        var found = doc.getElementById("error-text");
        if (found) text = found.textContent;
      } catch (e) { /* keep the plain message */ }
      box.textContent = text;
      box.hidden = false;
    });
  }

  // A read-only field shown once (a new API key): focusing it selects it whole, and its Copy
  // button (hidden without script) puts it on the clipboard and says so.
  function copied(input, ok) {
    var note = document.getElementById(input.id + "-copied");
    if (note) note.textContent = ok ? "Copied." : "Select the key and copy it (Ctrl+C).";
  }
  function wireCopy(root) {
    root.querySelectorAll("input[data-select-all]").forEach(function (input) {
      input.addEventListener("focus", function () { input.select(); });
    });
    root.querySelectorAll("button[data-copy]").forEach(function (button) {
      var input = document.getElementById(button.dataset.copy);
      if (!input) return;
      button.hidden = false;
      button.addEventListener("click", function () {
        input.focus();
        input.select();
        if (navigator.clipboard && window.isSecureContext) {
          navigator.clipboard.writeText(input.value).then(
            function () { copied(input, true); },
            function () { copied(input, false); }
          );
        } else {  // plain http away from localhost: the older command, on the selection
          var ok = false;
          try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
          copied(input, ok);
        }
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    wireSelectPage(document);
    wireCopy(document);
    wireConfirm(document);
    wireQueue();
    wireErrors();
  });
})();
