/* What Swagger UI leaves out (axe-core): the server list and any other unnamed
 * select get a name from their place ("select-name"); the operation groups and
 * the schema list, drawn as h3 and h4 under the h1 title, are announced as
 * level-2 headings and an open operation's sections as level 3 ("heading-order"). Applied whenever Swagger UI redraws. */
(function () {
  "use strict";
  var NAMES = { servers: "Server" };
  function name() {
    document.querySelectorAll("#swagger-ui select:not([aria-label])").forEach(function (select) {
      if (!NAMES[select.id] && select.labels && Array.prototype.some.call(select.labels, function (l) {
        return Array.prototype.some.call(l.childNodes, function (n) { return n !== select && n.textContent.trim(); });
      })) {
        return;
      }
      var row = select.closest("tr, .parameters-col_description, .response-control-media-type, .content-type-wrapper");
      var title = row && row.querySelector(".parameter__name, .response-control-media-type__title, label");
      var text = NAMES[select.id] || (title && title.textContent.trim()) || "Media type";
      select.setAttribute("aria-label", text.replace(/\s*\*\s*required\s*$/i, "").trim());
    });
  }
  function levels() {
    document.querySelectorAll("#swagger-ui h3.opblock-tag, #swagger-ui section.models > h4").forEach(function (h) {
      if (h.getAttribute("aria-level") !== "2") { h.setAttribute("aria-level", "2"); }
    });
    document.querySelectorAll("#swagger-ui .opblock-section-header h4").forEach(function (h) {
      if (h.getAttribute("aria-level") !== "3") { h.setAttribute("aria-level", "3"); }
    });
  }
  function fix() { name(); levels(); }
  new MutationObserver(fix).observe(document.getElementById("swagger-ui"), { childList: true, subtree: true });
}());
