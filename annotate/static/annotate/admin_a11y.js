/* Accessible names the Django admin's widgets lack (axe-core "label", "aria-prohibited-attr"):
 * - the date and time boxes of a date-time field get "<field label> (date)" / "(time)";
 * - the filter boxes' icon (a span with aria-label) gets role="img", which permits the label;
 * - an empty header cell of an inline table (the object column, the delete column without a
 *   delete permission) becomes a plain cell: it heads nothing ("empty-table-header").
 * Runs after the admin's own load handlers, which build the filter widgets.
 */
(function () {
  "use strict";
  function fieldLabel(input) {
    var row = input.closest(".form-row, .fieldBox, td");
    var label = row && row.querySelector("label");
    return label ? label.textContent.replace(/:\s*$/, "").trim() : input.name;
  }
  function fix() {
    document.querySelectorAll("p.datetime input").forEach(function (input) {
      if (input.labels && input.labels.length) { return; }
      if (input.getAttribute("aria-label")) { return; }
      var part = /_1$/.test(input.id) ? "time" : "date";
      input.setAttribute("aria-label", fieldLabel(input) + " (" + part + ")");
    });
    document.querySelectorAll(".help-tooltip[aria-label]:not([role])").forEach(function (el) {
      el.setAttribute("role", "img");
    });
    document.querySelectorAll(".inline-group thead th").forEach(function (th) {
      if (th.textContent.trim() || th.querySelector("img, svg, input")) { return; }
      var td = document.createElement("td");
      td.className = th.className;
      th.replaceWith(td);
    });
  }
  window.addEventListener("load", function () { window.setTimeout(fix, 0); });
}());
