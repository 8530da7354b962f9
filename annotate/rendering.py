"""Question text to safe HTML: Markdown, LaTeX math for KaTeX, sanitised with nh3.

The pipeline of :func:`render_question`:

1. **Math is set aside first**, so Markdown never sees it (``_`` and ``*``
   inside a formula would otherwise become emphasis, and ``\\(`` lose its
   backslash). Delimiters: ``$$...$$`` and ``\\[...\\]`` (display), ``\\(...\\)``
   and ``$...$`` (inline). A single ``$`` follows pandoc's rule, so prices stay
   prices: the opening ``$`` must be followed by a non-space, the closing one
   preceded by a non-space and not followed by a digit ("$0.08 per pound and
   $0.05 per pound" has no math). ``\\$`` is a literal dollar. Code (fenced
   blocks and backtick spans) is left alone.
2. **Raw LaTeX without delimiters** (MMLU-Pro has 689 such questions, e.g.
   ``Si + O_2 \\rightarrow SiO_2``) is marked as inline math only when the
   text has no delimited math at all. The rule works on whitespace-separated
   words: a *math word* contains a command (``\\rightarrow``) or a sub- or
   superscript (``_`` or ``^`` followed by a digit, ``-digit``, ``{`` or one
   letter that does not start a longer word, so ``H_2O`` and ``K_p`` count and
   ``print_list`` does not). A run is a math word, then any further math
   words joined by *glue words* made only of digits and ``+-=<>/*|().,:``
   (``O_2 \\rightarrow SiO_2``), extended until its ``{}`` balance; plain words
   never join a run, so a sentence is never typeset as one formula; trailing
   ``.,;:?!`` stays text, and so do letters glued in front of the run's first
   command (``and\\epsilon_r`` keeps "and" as text). In the browser a run KaTeX cannot parse (``\\DeltaH``,
   ``\\ding{217}``) is shown as the original characters.
3. The rest is **Markdown** (fenced code, line breaks kept as in the data
   files, sane lists). Raw HTML in the text is shown as text, not markup
   (benchmark questions are data: one about ``<b>`` must show ``<b>``). The
   result is then **sanitised** with nh3 to a short list of tags (no script,
   style, iframe, image, event handler or ``javascript:`` link), a second
   line of defence.
4. Each math span goes back in as ``<span class="math math-inline">`` or
   ``<span class="math math-display">`` holding the HTML-escaped TeX source,
   which ``annotate/static/annotate/math.js`` typesets with the vendored KaTeX
   (and which reads as the TeX source without JavaScript).
"""
from __future__ import annotations

import re
import threading
from html import escape

import markdown
import nh3

ALLOWED_TAGS = {
    "p", "br", "em", "strong", "b", "i", "code", "pre", "ul", "ol", "li", "blockquote", "sub", "sup",
    "table", "thead", "tbody", "tr", "th", "td", "hr", "h3", "h4", "h5", "h6", "a", "span",
}
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "th": {"align"}, "td": {"align"}, "ol": {"start"}}
URL_SCHEMES = {"http", "https", "mailto"}
MARKDOWN_EXTENSIONS = ["fenced_code", "nl2br", "sane_lists"]

_EXPLICIT = re.compile(
    r"""(?P<fence>^[ \t]*```[^\n]*\n.*?^[ \t]*```[ \t]*$)   # fenced code block: left alone
      | (?P<ticks>`+)(?P<code>.+?)(?P=ticks)              # inline code: left alone
      | (?P<dollar>\\\$)                                  # \$ is a literal dollar
      | \$\$(?P<display>.+?)\$\$
      | \\\[(?P<display2>.+?)\\\]
      | \\\((?P<inline2>.+?)\\\)
      | \$(?P<inline>[^\s$](?:[^$]*?[^\s$\\])?)\$(?!\d)  # pandoc's rule for a single $
    """,
    re.DOTALL | re.MULTILINE | re.VERBOSE,
)
_CODE = re.compile(r"^[ \t]*```[^\n]*\n.*?^[ \t]*```[ \t]*$|(`+).+?\1", re.DOTALL | re.MULTILINE)
_MATH_WORD = re.compile(r"\\[A-Za-z]+|[_^](?:\d|-\d|\{|[A-Za-z](?![A-Za-z]))")
_GLUED_WORD = re.compile(r"[A-Za-z]{2,}(?=\\)")
_GLUE_WORD = re.compile(r"[-+=<>/*|().,:0-9]+")
_TRAILING = ".,;:?!"
_local = threading.local()
_PLACEHOLDER = "@@EIPMATH{}@@"
_PLACEHOLDER_RE = re.compile(r"@@EIPMATH(\d+)@@")


def render_question(text: str) -> str:
    """Render a question's text as safe HTML.

    Parameters
    ----------
    text : str
        The question as stored (Markdown, possibly with LaTeX math, delimited
        or raw; see the module docstring for the rules).

    Returns
    -------
    str
        Sanitised HTML: block elements (``<p>``, ``<pre><code>``, lists), with
        math as ``<span class="math math-inline|math-display">TeX</span>``.
        Empty for empty or blank text.

    Examples
    --------
    >>> render_question("Water: $H_2O$")
    '<p>Water: <span class="math math-inline">H_2O</span></p>'
    """
    if not text.strip():
        return ""
    marked, maths = _set_math_aside(text)
    html = _markdown().convert(marked)
    safe = nh3.clean(html, tags=ALLOWED_TAGS, attributes=ALLOWED_ATTRIBUTES, url_schemes=URL_SCHEMES)
    return _PLACEHOLDER_RE.sub(lambda m: _math_html(*maths[int(m.group(1))]), safe)


def render_option(text: str) -> str:
    """Render one answer option as safe inline HTML (as :func:`render_question`,
    without the enclosing paragraph)."""
    html = render_question(text)
    if html.startswith("<p>") and html.endswith("</p>") and html.count("<p>") == 1:
        return html[3:-4]
    return html


def _markdown() -> markdown.Markdown:
    """A Markdown converter that treats raw HTML as text (a question about
    ``<b>`` shows ``<b>``). Converters keep state and cost more to build than
    to run: one per thread, reset before each use."""
    md = getattr(_local, "markdown", None)
    if md is None:
        md = markdown.Markdown(extensions=MARKDOWN_EXTENSIONS, output_format="html")
        md.preprocessors.deregister("html_block")
        md.inlinePatterns.deregister("html")
        _local.markdown = md
    return md.reset()


def _math_html(tex: str, display: bool) -> str:
    kind = "math-display" if display else "math-inline"
    return f'<span class="math {kind}">{escape(tex.strip(), quote=False)}</span>'


def _set_math_aside(text: str) -> tuple[str, list[tuple[str, bool]]]:
    """Replace every math span by a placeholder; return the text and the spans
    as ``(tex, display)`` in placeholder order."""
    maths: list[tuple[str, bool]] = []

    def keep(tex: str, display: bool) -> str:
        maths.append((tex, display))
        return _PLACEHOLDER.format(len(maths) - 1)

    def explicit(match: re.Match[str]) -> str:
        if match.group("fence") or match.group("ticks"):
            return match.group(0)
        if match.group("dollar"):
            return "&#36;"
        for name, display in (("display", True), ("display2", True), ("inline2", False), ("inline", False)):
            if match.group(name) is not None:
                return keep(match.group(name), display)
        return match.group(0)  # pragma: no cover - every alternative is handled above

    marked = _EXPLICIT.sub(explicit, text)
    if maths:
        return marked, maths
    return _mark_raw_latex(marked, keep), maths


def _mark_raw_latex(text: str, keep) -> str:
    """Apply the raw-LaTeX rule to the text outside code."""
    out, last = [], 0
    for code in _CODE.finditer(text):
        out.append(_mark_runs(text[last:code.start()], keep))
        out.append(code.group(0))
        last = code.end()
    out.append(_mark_runs(text[last:], keep))
    return "".join(out)


def _mark_runs(segment: str, keep) -> str:
    words = list(re.finditer(r"\S+", segment))
    out, last, i = [], 0, 0
    while i < len(words):
        if not _MATH_WORD.search(words[i].group(0)):
            i += 1
            continue
        end = _run_end(words, i)
        start, stop = words[i].start(), words[end].end()
        glued = _GLUED_WORD.match(words[i].group(0))  # "and\\epsilon_r": "and" stays text
        start += glued.end() if glued else 0
        while stop > start and segment[stop - 1] in _TRAILING and _open_braces(segment[start:stop - 1]) == 0:
            stop -= 1
        out.append(segment[last:start])
        out.append(keep(segment[start:stop], False))
        last, i = stop, end + 1
    out.append(segment[last:])
    return "".join(out)


def _run_end(words: list[re.Match[str]], first: int) -> int:
    """Index of the last word of the run that starts with math word ``first``."""
    end, j = first, first + 1
    while j < len(words):
        text = " ".join(w.group(0) for w in words[first:end + 1])
        if _open_braces(text) > 0:  # inside {...}: take the next word whatever it is
            end, j = j, j + 1
            continue
        k = j
        while k < len(words) and _GLUE_WORD.fullmatch(words[k].group(0)):
            k += 1
        if k < len(words) and _MATH_WORD.search(words[k].group(0)) and not _GLUED_WORD.match(words[k].group(0)):
            end, j = k, k + 1
            continue
        break
    return end


def _open_braces(text: str) -> int:
    """How many ``{`` are still open at the end of ``text`` (a stray ``}`` closes nothing)."""
    depth = 0
    for char in text:
        if char == "{":
            depth += 1
        elif char == "}":
            depth = max(depth - 1, 0)
    return depth


def render_markdown(text: str) -> str:
    """Render a study's guidelines or consent text (Markdown, maybe with math)
    as safe HTML: the same pipeline as :func:`render_question`, so what the
    researcher previews on the study page is what evaluators see.

    Examples
    --------
    >>> render_markdown("**hard** <script>x()</script>")
    '<p><strong>hard</strong> &lt;script&gt;x()&lt;/script&gt;</p>'
    """
    return render_question(text)
