"""Plain text with math (annotate/core/rendering.py): a question is shown as written.

The property test goes over every question (and answer option) of every real
set in the shared data folder, parsed by the loaders the upload uses, under the
text format the upload suggests: the visible text equals the source text,
whitespace and math delimiters aside. The visible text is read back from the
HTML (a math span's visible text before KaTeX runs is its TeX source): by the
standard library's HTML parser for every question whose text or options hold
a character that HTML treats specially (``<``, ``>``, ``&``), and by stripping
tags and decoding character references for the others (the parser is slow:
about 2 s per 10,000 tags).
"""
from __future__ import annotations

import re
from html import unescape
from html.parser import HTMLParser

import pytest

from annotate.catalog.loaders.harness import parse_harness_logs
from annotate.catalog.loaders.tabular_files import parse_files, parse_folder
from annotate.catalog.services.load_plan import text_formats_suggest
from annotate.core.rendering import MARKDOWN_SHARE, render_option, render_question, text_format_suggest

PLAIN = {"text_format": "plain"}


class _Visible(HTMLParser):
    """The text a reader sees, as a browser's parser reads it (character references decoded)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)

    def handle_data(self, data):
        self.parts.append(data)


def visible(html: str) -> tuple[str, set[str]]:
    parser = _Visible()
    parser.feed(html)
    parser.close()
    return "".join(parser.parts), parser.tags


_TAG = re.compile(r"<[^>]*>")
_SPECIAL = re.compile(r"[<>&]")


def visible_fast(html: str) -> str:
    """:func:`visible` for HTML whose text has no ``<``, ``>`` or ``&`` (tags stripped, references decoded)."""
    return unescape(_TAG.sub("", html))


_BACKSLASH_DELIMITER = re.compile(r"\\[()\[\]]")
_BLANKS_AND_DOLLARS = dict.fromkeys(map(ord, "$ \t\n\r\f\v\u00a0\u2028\u2029"))


def aside(text: str) -> str:
    """``text`` without whitespace and math delimiters ($, $$, \\( \\), \\[ \\])."""
    if "\\" in text:
        text = _BACKSLASH_DELIMITER.sub("", text)
    return "".join(text.translate(_BLANKS_AND_DOLLARS).split())


@pytest.mark.parametrize("text", [
    "Compute 2*3*4",
    "Is __init__ a method?",
    "# of moles of NaCl",
    "Adverts must not encourage _________, cause unnecessary ________ or _____.",
    "What does <b>bold</b> & <i>x</i> do?",
    "- a list?\n- or not\n\n1. one",
    "[a link](https://example.org) and **stars**",
    "costs \\$95,000 and \\$5",
    "Si + O_2 \\rightarrow SiO_2 (undelimited LaTeX is text)",
])
def test_plain_text_shows_every_character_as_written(text):
    html = render_question(text, **PLAIN)
    shown, tags = visible(html)
    assert shown == re.sub(r"\n\s*\n", "\n", text)  # a blank line ends a paragraph
    assert tags == {"p"}  # no emphasis, heading, list, link or math


def test_plain_text_typesets_only_delimited_math():
    html = render_question("Water $H_2O$, $$E=mc^2$$, \\(a*b*c\\) and \\[x_1\\] cost $5 and $6.", **PLAIN)
    assert html == (
        '<p class="plain-text">Water <span class="math math-inline">H_2O</span>, '
        '<span class="math math-display">E=mc^2</span>, <span class="math math-inline">a*b*c</span> and '
        '<span class="math math-display">x_1</span> cost $5 and $6.</p>'
    )


def test_plain_text_keeps_line_breaks_and_makes_paragraphs_at_blank_lines():
    html = render_question("Refer to:\n  int x;\n\n\n  return x;\n", **PLAIN)
    assert html == '<p class="plain-text">Refer to:\n  int x;</p>\n<p class="plain-text">  return x;</p>'


def test_an_option_in_plain_text_is_inline():
    assert render_option("$10^{-3}$ J, 2*3", **PLAIN) == (
        '<span class="plain-text"><span class="math math-inline">10^{-3}</span> J, 2*3</span>')


def test_the_same_text_in_markdown_is_formatted():
    assert render_question("Compute 2*3*4", text_format="markdown") == "<p>Compute 2<em>3</em>4</p>"


@pytest.mark.parametrize("text_format", ["", "Markdown", "html", None])
def test_an_unknown_text_format_is_refused(text_format):
    with pytest.raises(ValueError, match=r"text_format must be one of plain, markdown, got "):
        render_question("x", text_format=text_format)


def test_the_suggestion_is_plain_unless_a_fifth_of_the_texts_show_markdown():
    plain = ["Compute 2*3*4", "# of moles", "Is __init__ a method?", "blank _____ here", None, float("nan"), " "]
    suggestion = text_format_suggest(plain)
    assert (suggestion.text_format, suggestion.n_texts, suggestion.n_markdown) == ("plain", 4, 0)
    markdown = ["```\nx = 1\n```\nWhat is x?", "See [the docs](https://example.org/).", "**Bold** claim",
                "## Heading\n\nbody", "- one\n- two"]
    for text in markdown:
        assert text_format_suggest([text]).text_format == "markdown", text
    # 1 of 5 texts = 20% = MARKDOWN_SHARE: suggested; 1 of 6 (16.7%): not
    assert MARKDOWN_SHARE == 0.2
    assert text_format_suggest([markdown[0], *plain[:4]]).text_format == "markdown"
    assert text_format_suggest([markdown[0], *plain[:4], "fifth plain"]).text_format == "plain"
    assert text_format_suggest([markdown[0], *plain[:4], "fifth plain"]).reason == (
        "plain text with math: 1 of 6 question texts show Markdown (fenced code 1); Markdown is suggested from 20%")


def _real_sets(root):
    """Every real response set of the shared data folder, parsed as an upload parses it."""
    yield "mmlu-pro", parse_folder(root / "mmlu-pro", dataset="MMLU-Pro", subject_column="category")
    for snapshot in sorted((root / "livecodebench").glob("pass1_*.csv")):
        yield snapshot.name, parse_files(responses=snapshot, file_format="wide", dataset="LiveCodeBench",
                                         questions=root / "livecodebench" / "problems.csv")
    for harness in ("lm-eval", "inspect"):
        yield harness, parse_harness_logs(root / "harness-formats" / harness)


def test_every_real_question_shows_as_written_under_the_suggested_format(shared_data):
    counts = {}
    for name, parsed in _real_sets(shared_data):
        questions = parsed.questions
        formats = {d: s.text_format for d, s in text_formats_suggest(questions=questions).items()}
        n_texts = n_options = 0
        for dataset, text, options in zip(questions["dataset"].tolist(), questions["text"].tolist(),
                                          questions["options"].tolist()):
            text_format = formats[dataset]
            text = text if isinstance(text, str) else ""
            options = list(options) if isinstance(options, (list, tuple)) else []
            # one parse per question: its text, then each option in a list item, as on the judging page
            html = render_question(text, text_format=text_format) + "".join(
                f"<li>{render_option(str(option), text_format=text_format)}</li>" for option in options)
            source = text + "".join(str(option) for option in options)
            shown = visible(html)[0] if _SPECIAL.search(source) else visible_fast(html)
            assert aside(shown) == aside(source), (name, dataset, text)
            n_texts += bool(text.strip())
            n_options += len(options)
        counts[name] = (n_texts, n_options, sorted(set(formats.values())))
    # every question of every set was looked at (LiveCodeBench ships no problem text)
    # 12,032 questions; 113,966 options (the sum of len(json.loads(options_json)) over questions.csv)
    assert counts["mmlu-pro"] == (12_032, 113_966, ["plain"])
    assert counts["lm-eval"][0] == 3 and counts["inspect"][0] == 5
    assert all(counts[name][0] == 0 for name in counts if name.startswith("pass1_"))


def test_the_markdown_count_is_each_sign_searched_in_every_text():
    """The literal pre-checks skip only texts a sign's pattern cannot match: the counts equal a
    plain search of every pattern in every non-blank text."""
    import random

    from annotate.core.rendering import MARKDOWN_SIGNS
    pieces = ["**bold**", "* item\n* item", "- a\n- b", "+ x\n+ y", "# Head\n\nbody", "```\ncode\n```",
              "[a](https://x.org)", "[a](/local)", "2*3*4", "# of moles", "a - b", "x+y", "__init__", "\n", " ",
              "text", "**", "](", "`", "#", "\n\n", "-", "*", "**not bold **", "[b](#top)"]
    rng = random.Random(11)
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 6))) for _ in range(3000)] + ["", "   "]
    suggestion = text_format_suggest(texts)
    blank = [t for t in texts if not t.strip()]
    expected = {name: sum(bool(pattern.search(t)) for t in texts if t.strip())
                for name, pattern in MARKDOWN_SIGNS.items()}
    markdown = sum(any(p.search(t) for p in MARKDOWN_SIGNS.values()) for t in texts if t.strip())
    assert suggestion.signs == expected
    assert (suggestion.n_texts, suggestion.n_markdown) == (len(texts) - len(blank), markdown)
    assert all(expected.values())  # the generated texts show every sign
