// Manage page: copy an invitation link to the clipboard. No inline script (CSP).
(function () {
  "use strict";
  function announce(text) {
    var status = document.getElementById("copy-status");
    if (status) { status.textContent = text; }
  }
  function fallbackCopy(node) {
    var range = document.createRange();
    range.selectNodeContents(node);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    var ok = false;
    try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
    return ok;
  }
  document.addEventListener("click", function (event) {
    var button = event.target.closest("button[data-copy]");
    if (!button) { return; }
    var node = document.getElementById(button.getAttribute("data-copy"));
    if (!node) { return; }
    var text = node.textContent.trim();
    var done = function () { button.textContent = "Copied"; announce("Link copied: " + text); };
    var failed = function () {
      if (fallbackCopy(node)) { done(); } else { announce("Select the link and copy it by hand."); }
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, failed);
    } else {
      failed();
    }
  });
}());
