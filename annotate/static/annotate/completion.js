/* The done page sends a crowd evaluator back to the platform's completion
 * URL (the link's href) after N seconds (data-seconds), counting down, with a
 * control to stay: a <meta http-equiv=refresh> with a delay cannot be
 * stopped, which fails WCAG 2.2.1 (axe "meta-refresh", critical).
 */
(function () {
  "use strict";
  document.addEventListener("DOMContentLoaded", function () {
    var box = document.getElementById("completion-redirect");
    var link = document.getElementById("completion-link");
    if (!box || !link) { return; }
    var left = Math.max(1, parseInt(box.getAttribute("data-seconds"), 10) || 5);
    var count = document.getElementById("completion-seconds");
    var stay = document.getElementById("completion-stay");
    var timer = window.setInterval(function () {
      left -= 1;
      if (count) { count.textContent = String(Math.max(left, 0)); }
      if (left <= 0) {
        window.clearInterval(timer);
        window.location.assign(link.href);
      }
    }, 1000);
    if (stay) {
      stay.hidden = false;
      stay.addEventListener("click", function () {
        window.clearInterval(timer);
        var note = document.getElementById("completion-note");
        if (note) { note.textContent = "You stay on this page. When you are ready, "; }
        stay.remove();
        link.focus();
      });
    }
  });
})();
