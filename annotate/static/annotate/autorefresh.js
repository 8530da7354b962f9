/* Reload a page that shows work in progress every N seconds (the script
 * tag's data-seconds), with a control to stop it: a <meta http-equiv=refresh>
 * cannot be stopped, which fails WCAG 2.2.1 (axe "meta-refresh", critical).
 * The control goes at the start of the admin's #content, else of <main>; pressing it keeps the page still.
 */
(function () {
  "use strict";
  var script = document.currentScript;
  var seconds = Math.max(1, parseInt(script && script.getAttribute("data-seconds"), 10) || 5);
  var timer = null;
  function start() { timer = window.setTimeout(function () { window.location.reload(); }, seconds * 1000); }
  document.addEventListener("DOMContentLoaded", function () {
    var main = document.getElementById("content") || document.querySelector("main");
    if (!main) { return; }
    var bar = document.createElement("p");
    bar.className = "muted small autorefresh";
    var text = document.createElement("span");
    text.textContent = "This page reloads every " + seconds + " s while work is in progress. ";
    var button = document.createElement("button");
    button.type = "button";
    button.className = "link";
    button.id = "autorefresh-stop";
    button.textContent = "Stop reloading";
    button.addEventListener("click", function () {
      window.clearTimeout(timer);
      text.textContent = "Reloading stopped. ";
      button.remove();
    });
    bar.appendChild(text);
    bar.appendChild(button);
    main.insertBefore(bar, main.firstChild);
    start();
  });
}());
