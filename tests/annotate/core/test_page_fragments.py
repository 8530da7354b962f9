"""The judging page's fragments written in Python (a question with its options, the progress bar) are the markup
the templates they replace wrote, character for character: the reference templates below are those templates."""
from __future__ import annotations

import pytest
from django.template import engines
from django.template.loader import render_to_string

from annotate.models import Dataset, Question, TextFormat
from annotate.studies.selectors.studies import Progress
from annotate.templatetags.annotate_judging import progress_bar

#: ``annotate/_question_text.html`` as the question lists and the judging page rendered it before.
QUESTION_TEMPLATE = (
    '{% load annotate_rendering %}<div class="question-text{% if clip %} question-clip{% endif %}">'
    "{{ question.text|question_html:question.dataset.text_format }}{% if question.options %}"
    '<ol class="options" type="A">{% for option in question.options %}'
    "<li>{{ option|option_html:question.dataset.text_format }}</li>{% endfor %}</ol>{% endif %}</div>\n"
)
#: ``annotate/judging/_progress.html`` as the judging, done and closed pages rendered it before.
PROGRESS_TEMPLATE = """<div class="progress" aria-label="Your progress">
  {# An SVG bar: widths as attributes, not inline styles (the Content-Security-Policy allows none). #}
  <svg class="progress-bar" viewBox="0 0 {{ progress.total|default:1 }} 1" preserveAspectRatio="none" role="img" \
aria-label="{{ progress.judged }} judged, {{ progress.skipped }} skipped, {{ progress.remaining }} remaining">
    <rect class="seg judged" x="0" y="0" width="{{ progress.judged }}" height="1"/><rect class="seg skipped" \
x="{{ progress.judged }}" y="0" width="{{ progress.skipped }}" height="1"/>
  </svg>
  <p class="progress-text"><span data-count="judged">Judged {{ progress.judged }}</span> · <span \
data-count="skipped">Skipped {{ progress.skipped }}</span> · <span data-count="remaining">Remaining \
{{ progress.remaining }}</span></p>
</div>
"""

QUESTIONS = [
    ("Water: $H_2O$, 2*3*4 <b>&amp;</b>\n\nSecond paragraph", ["$x^2$", "<i>y</i> & z", "", None, 3]),
    ("**Bold** and `code` with \\(a_1\\) and a [link](https://example.org)\n\n- one\n- two", ["**A**", "b\n\nc"]),
    ("Si + O_2 \\rightarrow SiO_2", []),
    ("   ", None),
    ("", ["only an option"]),
]


@pytest.mark.parametrize("text_format", TextFormat.values)
@pytest.mark.parametrize("clip", [False, True])
@pytest.mark.parametrize(("text", "options"), QUESTIONS)
def test_a_question_reads_as_the_template_wrote_it(text, options, clip, text_format):
    question = Question(text=text, options=options, dataset=Dataset(name="d", text_format=text_format))
    context = {"question": question, "clip": clip}
    expected = engines["django"].from_string(QUESTION_TEMPLATE).render(context)
    assert render_to_string("annotate/_question_text.html", context) == expected
    assert expected.startswith('<div class="question-text') and expected.endswith("</div>\n")


def test_a_question_clipped_in_a_list_is_marked_so():
    question = Question(text="Which?", options=["no"], dataset=Dataset(name="d", text_format=TextFormat.PLAIN))
    html = render_to_string("annotate/_question_text.html", {"question": question, "clip": True})
    assert html == ('<div class="question-text question-clip"><p class="plain-text">Which?</p>'
                    '<ol class="options" type="A"><li><span class="plain-text">no</span></li></ol></div>\n')


@pytest.mark.parametrize("counts", [(0, 0, 0), (9, 2, 689), (0, 0, 5), (1234, 56, 78901)])
def test_the_progress_bar_reads_as_the_template_wrote_it(counts):
    progress = Progress(*counts)
    expected = engines["django"].from_string(PROGRESS_TEMPLATE).render({"progress": progress})
    assert render_to_string("annotate/judging/_progress.html", {"progress": progress}) == expected
    assert progress_bar(progress) + "\n" == expected


def test_an_empty_progress_bar_is_one_unit_wide():
    assert 'viewBox="0 0 1 1"' in progress_bar(Progress(0, 0, 0))
    assert 'viewBox="0 0 80 1"' in progress_bar(Progress(50, 20, 10))
