"""Question text to safe HTML, in the dataset's text format, with LaTeX math for KaTeX.

Every page that shows a question (judging, the question list, a study's
pairs, the report, the admin) calls :func:`render_question` with the
question's dataset's :class:`~annotate.models.TextFormat`:

* **plain text with math** (``"plain"``): the text is shown character for
  character (HTML-escaped, line breaks and spaces kept, paragraphs at blank
  lines); only *delimited* math is typeset. ``2*3*4``, ``__init__``,
  ``# of moles`` and blanks ``_____`` stay exactly as written, and so does
  ``\\$`` (it only keeps a dollar from opening math).
* **Markdown with math** (``"markdown"``): the pipeline below; Markdown's
  syntax characters are not shown (``**bold**`` shows "bold" in bold).

:func:`text_format_suggest` proposes a format from a dataset's texts at load
time (the upload preview shows it; the dataset's admin page changes it).

The Markdown pipeline:

1. **Math is set aside first**, so Markdown never sees it (``_`` and ``*``
   inside a formula would otherwise become emphasis, and ``\\(`` lose its
   backslash). Delimiters: ``$$...$$`` and ``\\[...\\]`` (display), ``\\(...\\)``
   and ``$...$`` (inline). A single ``$`` follows pandoc's rule, so prices stay
   prices: the opening ``$`` must be followed by a non-space, the closing one
   preceded by a non-space and not followed by a digit ("$0.08 per pound and
   $0.05 per pound" has no math). ``\\$`` is a literal dollar. Code (fenced
   blocks and backtick spans) is left alone. (Plain text sets math aside by
   the same rules.)
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
   ``\\ding{217}``) is shown as the original characters. Plain text skips
   this step: undelimited LaTeX is shown as written.
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
from collections.abc import Iterable
from dataclasses import dataclass
from html import escape

import markdown
import nh3

from annotate.models.catalog import TextFormat

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


UNKNOWN_TEXT_FORMAT = "text_format must be one of {choices}, got {value!r}"
#: Share of a dataset's non-blank texts that must look like Markdown for :func:`text_format_suggest` to suggest it.
MARKDOWN_SHARE = 0.2
#: What makes a text look like Markdown (name -> pattern): constructs that plain benchmark text does not use by
#: accident. A lone ``# of moles``, ``2*3*4``, ``__init__`` or a blank ``_____`` is not among them.
MARKDOWN_SIGNS = {
    "fenced code": re.compile(r"^[ \t]*```", re.MULTILINE),
    "link": re.compile(r"\[[^\]\n]+\]\((?:https?://|mailto:|/|#)[^)\s]*\)"),
    "bold": re.compile(r"(?<![*\w])\*\*[^\s*](?:[^*\n]*[^\s*])?\*\*(?![*\w])"),
    "heading": re.compile(r"^#{1,6}[ \t]+\S.*\n[ \t]*\n", re.MULTILINE),
    "list": re.compile(r"^[ \t]*[-*+][ \t]+\S.*\n[ \t]*[-*+][ \t]+\S", re.MULTILINE),
}
#: Substrings each sign's pattern cannot match without (a text lacking one is not searched for it).
_SIGN_NEEDS = {
    "fenced code": ("```",),
    "link": ("](",),
    "bold": ("**",),
    "heading": ("#", "\n"),
    "list": ("\n",),
}
#: (first needed substring, second or None, pattern) of each sign, in ``MARKDOWN_SIGNS`` order.
_SIGN_CHECKS = tuple((needs[0], needs[1] if len(needs) > 1 else None, MARKDOWN_SIGNS[name])
                     for name, needs in _SIGN_NEEDS.items())
_TEXT_FORMATS = frozenset(TextFormat.values)
_BLANK_LINE = re.compile(r"\n(?:[ \t]*\n)+")


@dataclass(frozen=True)
class TextFormatSuggestion:
    """The text format :func:`text_format_suggest` proposes for a dataset.

    Attributes
    ----------
    text_format : str
        ``"plain"`` or ``"markdown"`` (a :class:`~annotate.models.TextFormat` value).
    n_texts : int
        Non-blank texts looked at.
    n_markdown : int
        How many of them show a sign of Markdown (:data:`MARKDOWN_SIGNS`).
    signs : dict of str to int
        Texts showing each sign (a text can show several).
    """

    text_format: str
    n_texts: int
    n_markdown: int
    signs: dict[str, int]

    @property
    def reason(self) -> str:
        """One line for the upload preview: what was counted and what it suggests."""
        label = TextFormat(self.text_format).label
        if not self.n_texts:
            return f"{label}: the files hold no question text (the default)"
        if not self.n_markdown:
            return f"{label}: none of {self.n_texts:,} question texts shows Markdown"
        found = ", ".join(f"{name} {n:,}" for name, n in self.signs.items() if n)
        return (f"{label}: {self.n_markdown:,} of {self.n_texts:,} question texts show Markdown ({found}); "
                f"Markdown is suggested from {MARKDOWN_SHARE:.0%}")


def text_format_suggest(texts: Iterable[object]) -> TextFormatSuggestion:
    """Suggest how a dataset's question texts are written.

    Markdown is suggested when at least ``MARKDOWN_SHARE`` (20%) of the
    non-blank texts show a construct that plain text does not use by
    accident (:data:`MARKDOWN_SIGNS`: a fenced code block, a link to a URL,
    ``**bold**``, a heading followed by a blank line, a list of two or more
    items); otherwise plain text with math, which shows every character as
    written.

    Parameters
    ----------
    texts : iterable of str
        The dataset's question texts; anything that is not a non-blank
        string (None, NaN) is skipped.

    Returns
    -------
    TextFormatSuggestion

    Examples
    --------
    >>> text_format_suggest(["Compute 2*3*4.", "# of moles in $H_2O$?"]).text_format
    'plain'
    >>> text_format_suggest(["```\\nx = 1\\n```\\nWhat is x?"]).text_format
    'markdown'
    """
    n_texts = n_markdown = 0
    counts = [0] * len(_SIGN_CHECKS)
    for text in texts:
        if not isinstance(text, str) or not text or text.isspace():  # blank: what strip() empties
            continue
        n_texts += 1
        if not ("*" in text or "`" in text or "](" in text or "#" in text or "-" in text or "+" in text):
            continue
        found = False
        for k, (first, second, pattern) in enumerate(_SIGN_CHECKS):
            if first in text and (second is None or second in text) and pattern.search(text):
                counts[k] += 1
                found = True
        n_markdown += found
    signs = dict(zip(MARKDOWN_SIGNS, counts))
    markdown_wins = n_markdown > 0 and n_markdown >= MARKDOWN_SHARE * n_texts
    return TextFormatSuggestion(text_format=(TextFormat.MARKDOWN if markdown_wins else TextFormat.PLAIN).value,
                                n_texts=n_texts, n_markdown=n_markdown, signs=signs)


def render_question(text: str, *, text_format: str) -> str:
    """Render a question's text as safe HTML, in its dataset's text format.

    Parameters
    ----------
    text : str
        The question as stored.
    text_format : {"plain", "markdown"}
        The dataset's :class:`~annotate.models.TextFormat`: plain text with
        math (every character shown as written, only delimited math typeset)
        or Markdown with math (see the module docstring for both).

    Returns
    -------
    str
        Safe HTML: block elements (plain text: ``<p class="plain-text">``,
        one per paragraph, line breaks kept as newlines for CSS
        ``white-space: pre-wrap``; Markdown: ``<p>``, ``<pre><code>``, lists),
        with math as ``<span class="math math-inline|math-display">TeX</span>``.
        Empty for empty or blank text.

    Raises
    ------
    ValueError
        If ``text_format`` is not a text format.

    Examples
    --------
    >>> render_question("Water: $H_2O$, 2*3*4", text_format="plain")
    '<p class="plain-text">Water: <span class="math math-inline">H_2O</span>, 2*3*4</p>'
    >>> render_question("Water: $H_2O$, **2**", text_format="markdown")
    '<p>Water: <span class="math math-inline">H_2O</span>, <strong>2</strong></p>'
    """
    _check_text_format(text_format)
    if not text.strip():
        return ""
    if text_format == TextFormat.PLAIN:
        return _render_plain(text)
    marked, maths = _set_math_aside(text, markdown=True)
    html = _markdown().convert(marked)
    safe = nh3.clean(html, tags=ALLOWED_TAGS, attributes=ALLOWED_ATTRIBUTES, url_schemes=URL_SCHEMES)
    return _PLACEHOLDER_RE.sub(lambda m: _math_html(*maths[int(m.group(1))]), safe)


def render_option(text: str, *, text_format: str) -> str:
    """Render one answer option as safe inline HTML (as :func:`render_question`,
    without the enclosing paragraph; plain text in ``<span class="plain-text">``).

    Raises
    ------
    ValueError
        If ``text_format`` is not a text format.
    """
    html = render_question(text, text_format=text_format)
    if text_format == TextFormat.PLAIN and html.count("<p ") == 1:
        return '<span class="plain-text">' + html[len('<p class="plain-text">'):-len("</p>")] + "</span>"
    if html.startswith("<p>") and html.endswith("</p>") and html.count("<p>") == 1:
        return html[3:-4]
    return html


def render_question_block(text: str, options: object, *, text_format: str, clip: bool = False) -> str:
    """A question with its answer options as safe HTML: the markup every page
    shows a question in (``annotate/_question_text.html``).

    Parameters
    ----------
    text : str
        The question as stored (None counts as empty).
    options : list of str
        The answer options, in order; each is shown as an item of a list
        lettered A, B, ... (:func:`render_option`). Empty or None: no list.
    text_format : {"plain", "markdown"}
        The dataset's :class:`~annotate.models.TextFormat`.
    clip : bool, default False
        Mark the block for clipping (``question-clip``: the lists of
        questions, where a long question is cut short).

    Returns
    -------
    str
        ``<div class="question-text">`` holding :func:`render_question`'s
        HTML and, when there are options, ``<ol class="options" type="A">``.

    Raises
    ------
    ValueError
        If ``text_format`` is not a text format.

    Examples
    --------
    >>> render_question_block("Which?", [], text_format="plain")
    '<div class="question-text"><p class="plain-text">Which?</p></div>'
    >>> render_question_block("Which?", ["no"], text_format="plain", clip=True)[:41]
    '<div class="question-text question-clip">'
    """
    parts = ['<div class="question-text question-clip">' if clip else '<div class="question-text">',
             render_question(text or "", text_format=text_format)]
    if options:
        parts.append('<ol class="options" type="A">')
        parts.extend(f"<li>{render_option(str(option or ''), text_format=text_format)}</li>" for option in options)
        parts.append("</ol>")
    parts.append("</div>")
    return "".join(parts)


def _render_plain(text: str) -> str:
    """Plain text with math: escaped, paragraphs at blank lines, delimited math set aside."""
    if "$" in text or "\\" in text:  # math needs one of them; most questions have neither
        marked, maths = _set_math_aside(text, markdown=False)
    else:
        marked, maths = text, []
    paragraphs = _BLANK_LINE.split(escape(marked.strip(), quote=False))
    html = "\n".join(f'<p class="plain-text">{p}</p>' for p in paragraphs)
    return _PLACEHOLDER_RE.sub(lambda m: _math_html(*maths[int(m.group(1))]), html) if maths else html


def _check_text_format(text_format: object) -> None:
    if text_format not in _TEXT_FORMATS:
        raise ValueError(UNKNOWN_TEXT_FORMAT.format(choices=", ".join(TextFormat.values), value=text_format))


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


def _set_math_aside(text: str, *, markdown: bool) -> tuple[str, list[tuple[str, bool]]]:
    """Replace every math span by a placeholder; return the text and the spans
    as ``(tex, display)`` in placeholder order. For Markdown, ``\\$`` becomes
    a literal dollar and raw LaTeX is marked; plain text keeps ``\\$`` as
    written and marks only delimited math."""
    maths: list[tuple[str, bool]] = []

    def keep(tex: str, display: bool) -> str:
        maths.append((tex, display))
        return _PLACEHOLDER.format(len(maths) - 1)

    def explicit(match: re.Match[str]) -> str:
        if match.group("fence") or match.group("ticks"):
            return match.group(0)
        if match.group("dollar"):
            return "&#36;" if markdown else match.group(0)
        for name, display in (("display", True), ("display2", True), ("inline2", False), ("inline", False)):
            if match.group(name) is not None:
                return keep(match.group(name), display)
        return match.group(0)  # pragma: no cover - every alternative is handled above

    marked = _EXPLICIT.sub(explicit, text)
    if maths or not markdown:
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
    return render_question(text, text_format=TextFormat.MARKDOWN)
