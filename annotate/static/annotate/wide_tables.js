/* Cues for what a results table does not show at once:
 * - a table wider than its box (.table-scroll) shows the note just before it ("scroll sideways for more
 *   columns"), and its box says so to a screen reader; the note hides again when the window grows;
 * - a clipped question (.question-clip taller than its four lines) gets an ellipsis, and its
 *   "whole question" toggle stays; a question that fits loses the toggle.
 * Without this script every note and toggle stays visible.
 */
(function () {
  "use strict";
  function mark() {
    document.querySelectorAll(".table-scroll").forEach(function (box) {
      var note = box.previousElementSibling;
      if (note && note.classList.contains("scroll-note")) {
        note.hidden = box.scrollWidth <= box.clientWidth + 1;
      }
    });
    document.querySelectorAll(".question-clip").forEach(function (clip) {
      var clipped = clip.scrollHeight > clip.clientHeight + 1;
      clip.classList.toggle("clipped", clipped);
      var whole = clip.parentElement.querySelector("details.question-whole");
      if (whole && !whole.open) { whole.hidden = !clipped; }
    });
  }
  document.addEventListener("DOMContentLoaded", mark);
  window.addEventListener("load", mark);  /* after fonts and math have their final size */
  window.addEventListener("resize", mark);
  document.addEventListener("toggle", mark, true);  /* a table in a section that opens */
}());
