"""annotate/core/rendering.py: question text to safe HTML, Markdown with math (issue 14; plain text:
test_plain_text.py).

Real questions quoted from MMLU-Pro (Wang et al., 2024; TIGER-AI-Lab/MMLU-Pro,
Apache-2.0), by their ``question_id``.
"""
from __future__ import annotations

from html.parser import HTMLParser

import pytest

from annotate.core.rendering import render_option, render_question

MD = {"text_format": "markdown"}


class _Elements(HTMLParser):
    def __init__(self):
        super().__init__()
        self.found: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, attrs))


def elements(html: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    """Every start tag of ``html`` with its attributes, as a browser's parser sees them."""
    parser = _Elements()
    parser.feed(html)
    return parser.found

# question_id 3861: raw LaTeX, no delimiters
MMLU_PRO_3861 = (
    "When 10.0 g of silicon dust, Si, is exploded with 100.0 g of oxygen, O_2, forming silicon dioxide, SiO_2, "
    "how many grams of O_2 remain uncombined? The reaction equation is Si + O_2 \\rightarrow SiO_2 ."
)
# question_id 169 (start): dollars that are prices, not math
MMLU_PRO_169 = (
    "Whole tomatoes sell for $0.08 per pound and paste sells for $0.05 per pound. "
    "(Hint: Let x_WA = pounds of A grade tomatoes used in whole tomatoes"
)
# question_id 9235 (start): delimited math
MMLU_PRO_9235 = "How much work is required to turn an electric dipole $180^{\\circ}$ in a uniform electric field"


def inline(tex: str) -> str:
    return f'<span class="math math-inline">{tex}</span>'


def test_raw_latex_in_a_real_mmlu_pro_question_becomes_inline_math():
    html = render_question(MMLU_PRO_3861, **MD)
    reaction = inline(r"O_2 \rightarrow SiO_2")
    assert html == (
        f"<p>When 10.0 g of silicon dust, Si, is exploded with 100.0 g of oxygen, {inline('O_2')}, forming silicon "
        f"dioxide, {inline('SiO_2')}, how many grams of {inline('O_2')} remain uncombined? The reaction equation is "
        f"Si + {reaction} .</p>"
    )


def test_prices_stay_prices_and_words_with_underscores_stay_words():
    html = render_question(MMLU_PRO_169, **MD)
    assert "math" not in html
    assert "$0.08 per pound and paste sells for $0.05 per pound" in html
    assert "x_WA" in html  # "_W" starts a longer word: not a subscript


def test_delimited_math_in_a_real_mmlu_pro_question():
    degrees = inline(r"180^{\circ}")
    assert render_question(MMLU_PRO_9235, **MD) == (
        f"<p>How much work is required to turn an electric dipole {degrees} in a uniform electric "
        "field</p>"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("$$\\frac{1}{2}$$", '<p><span class="math math-display">\\frac{1}{2}</span></p>'),
        ("\\[a^2\\] and \\(b_1\\)", f'<p><span class="math math-display">a^2</span> and {inline("b_1")}</p>'),
        ("$a*b*c$ and $x_1 < y_2$", f"<p>{inline('a*b*c')} and {inline('x_1 &lt; y_2')}</p>"),
        ("costs \\$5 or $x^2$", f"<p>costs $5 or {inline('x^2')}</p>"),
        ("a $ b $ c", "<p>a $ b $ c</p>"),  # a space after the opening $: not math
    ],
)
def test_math_delimiters(text, expected):
    assert render_question(text, **MD) == expected


def test_raw_latex_runs_never_swallow_plain_words():
    mu, epsilon, limit = inline(r"\mu_r"), inline(r"\epsilon_r="), inline(r"\lim_{x \to c}")
    assert render_question(r"with \mu_r = 1 and\epsilon_r= 4 is", **MD) == f"<p>with {mu} = 1 and{epsilon} 4 is</p>"
    # the open brace keeps "\to" and "c}" in the run; "|f(x)|" is a plain word
    assert render_question(r"\lim_{x \to c} |f(x)| = 0.", **MD) == f"<p>{limit} |f(x)| = 0.</p>"


def test_code_blocks_are_monospace_and_keep_their_text():
    html = render_question("Run:\n\n```\nx_1 = 2*3*4  # $HOME\n```\n\nthen `my_var^2`.", **MD)
    assert "<pre><code>x_1 = 2*3*4  # $HOME\n</code></pre>" in html
    assert "<code>my_var^2</code>" in html
    assert "math" not in html


@pytest.mark.parametrize(
    "text",
    [
        "<script>alert(1)</script>",
        '<img src=x onerror="alert(1)">',
        "[click](javascript:alert(1))",
        "[click](JaVaScRiPt:alert(1))",
        "<javascript:alert(1)>",
        '<a href="#" onclick="alert(1)">x</a>',
        "$</span><script>alert(1)</script>$",
        "\\(<img src=x onerror=alert(1)>\\)",
    ],
)
def test_script_and_event_handlers_never_reach_the_page(text):
    tags = elements(render_question(text, **MD))
    assert all(tag not in {"script", "img", "iframe", "style"} for tag, _ in tags), tags
    for _, attrs in tags:
        assert not any(name.startswith("on") for name, _ in attrs), attrs
        assert not any((value or "").strip().lower().startswith("javascript:") for _, value in attrs), attrs


def test_math_source_is_escaped_inside_its_span():
    assert render_question("$</span><script>alert(1)</script>$", **MD) == (
        f"<p>{inline('&lt;/span&gt;&lt;script&gt;alert(1)&lt;/script&gt;')}</p>"
    )


def test_raw_html_is_shown_as_text():
    assert render_question("What does <b>bold</b> do?", **MD) == "<p>What does &lt;b&gt;bold&lt;/b&gt; do?</p>"


def test_markdown_line_breaks_and_lists():
    assert render_question("one\ntwo", **MD) == "<p>one<br>\ntwo</p>"
    assert render_question("- a\n- b", **MD) == "<ul>\n<li>a</li>\n<li>b</li>\n</ul>"


def test_empty_text_renders_nothing():
    assert render_question("", **MD) == "" and render_question(" \n\t", **MD) == ""


def test_an_option_renders_inline():
    assert render_option("$10^{-3}$ J", **MD) == f"{inline('10^{-3}')} J"
    assert render_option("plain", **MD) == "plain"


def test_one_question_leaves_nothing_behind_for_the_next():
    assert '<a href="https://example.org/"' in render_question("[x][1]\n\n[1]: https://example.org/", **MD)
    assert render_question("[x][1]", **MD) == "<p>[x][1]</p>"  # the reference was the first question's own
