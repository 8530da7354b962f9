"""Every page that shows a question shows it the same way, in its dataset's text
format: the judging page, the run's question list and the study's manage page
(its pairs, before and after launch). Cast: evaluator ``ada``, staff ``root``."""
from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotate.models import Dataset, Question
from tests.annotate.factories import make_catalog, make_evaluator, make_study, make_user

pytestmark = pytest.mark.django_db

TEXT = "Compute 2*3*4 with $x_1$; is __init__ a method? # of moles: _____"
PLAIN_HTML = ('<p class="plain-text">Compute 2*3*4 with <span class="math math-inline">x_1</span>; '
              "is __init__ a method? # of moles: _____</p>")
MARKDOWN_HTML = ('<p>Compute 2<em>3</em>4 with <span class="math math-inline">x_1</span>; '
                 "is <strong>init</strong> a method? # of moles: _____</p>")


@pytest.fixture
def cast():
    catalog = make_catalog(per_subject=4, subjects=("Mathematics",))
    Question.objects.filter(dataset=catalog.dataset).update(text=TEXT)
    study = make_study(catalog, n_pairs=4)
    ada = make_evaluator(study, "ada")
    root = make_user("root", staff=True)
    root.is_superuser = True
    root.save()
    return catalog, study, ada.user, root


def pages(catalog, study, ada, root) -> dict[str, str]:
    urls = {
        "judging": (ada, reverse("annotate:study_judge", kwargs={"study_id": study.pk})),
        "question list": (root, reverse("annotate:run_questions", kwargs={"run_id": catalog.run.pk})),
        "study pairs": (root, reverse("annotate:study_manage", kwargs={"study_id": study.pk})),
    }
    shown = {}
    for name, (user, url) in urls.items():
        client = Client()
        client.force_login(user)
        response = client.get(url)
        assert response.status_code == 200, name
        shown[name] = response.content.decode()
    return shown


def test_every_page_shows_plain_text_as_written_with_its_math_marked(cast):
    for name, html in pages(*cast).items():
        assert PLAIN_HTML in html, name
        assert "vendor/katex-0.19.1/katex.min.js" in html, name  # the math is typeset there too


def test_every_page_follows_the_dataset_when_it_becomes_markdown(cast):
    catalog = cast[0]
    Dataset.objects.filter(pk=catalog.dataset.pk).update(text_format="markdown")
    for name, html in pages(*cast).items():
        assert MARKDOWN_HTML in html, name
        assert PLAIN_HTML not in html, name


def test_the_manage_page_names_each_pair_and_shows_its_texts(cast):
    catalog, study, ada, root = cast
    html = pages(catalog, study, ada, root)["study pairs"]
    # 4 pairs, 2 questions each, every question with the same text
    assert html.count(PLAIN_HTML) == 8
    assert html.count('<td class="pair-question"><span class="question-id">') == 8
