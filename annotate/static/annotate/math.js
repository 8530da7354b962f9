/* Typeset the math spans written by annotate/rendering.py with the vendored
 * KaTeX. Each <span class="math math-inline|math-display"> holds TeX source;
 * a span KaTeX cannot parse (raw LaTeX such as \DeltaH in a data file) keeps
 * its source text, marked with the class "math-error". KaTeX writes MathML
 * beside the visual rendering, so screen readers read the formula.
 */
(function () {
  "use strict";
  function typeset() {
    if (!window.katex) { return; }
    var spans = document.querySelectorAll("span.math");
    Array.prototype.forEach.call(spans, function (span) {
      var tex = span.textContent;
      try {
        window.katex.render(tex, span, {
          displayMode: span.classList.contains("math-display"),
          throwOnError: true,
          trust: false,
          maxExpand: 1000
        });
        span.classList.add("math-done");
      } catch (error) {
        span.textContent = tex;
        span.classList.add("math-error");
      }
    });
    document.documentElement.setAttribute("data-math", "done");  // browser tests wait for it
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", typeset);
  } else {
    typeset();
  }
}());
