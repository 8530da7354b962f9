/* The human-label page lists the metadata columns of one response set: choosing
 * another set reloads the page for it (the other parameters keep their defaults).
 * Without JavaScript, the form still refuses a column the chosen set lacks and lists the valid ones.
 */
(function () {
  "use strict";
  document.addEventListener("DOMContentLoaded", function () {
    var select = document.getElementById("id_response_set");
    if (!select) { return; }
    select.addEventListener("change", function () {
      window.location.search = "?response_set=" + encodeURIComponent(select.value);
    });
  });
})();
