"""A dataset's text format: suggested at upload (the preview shows it), chosen on
confirming, kept by later loads, changed on the dataset's admin page; every
page that shows a question renders it in that format."""
from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from annotate.models import Dataset, Question
from tests.annotate.catalog.admin.test_upload import upload

pytestmark = pytest.mark.django_db

PLAIN_QUESTIONS = (b"question_id,category,question\n"
                   b"q1,math,Compute 2*3*4 and $x_1$\n"
                   b"q2,law,Is __init__ a method? # of moles: _____\n")
MARKDOWN_QUESTIONS = (b"question_id,category,question\n"
                      b'q1,math,"**Bold** claim: see [docs](https://example.org/)"\n'
                      b'q2,law,"```\nx = 2*3\n```\nWhat is x?"\n')


def preview_and_confirm(client, questions: bytes, **confirm):
    posted = upload(client, questions=SimpleUploadedFile("questions.csv", questions, content_type="text/csv"))
    preview = client.get(posted["Location"])
    token = posted["Location"].rstrip("/").rsplit("/", 1)[1]
    confirmed = client.post(posted["Location"], {"token": token, **confirm})
    assert confirmed.status_code == 302
    return preview


def test_the_preview_suggests_plain_text_and_the_load_creates_the_dataset_so(client, uploader):
    preview = preview_and_confirm(client, PLAIN_QUESTIONS)
    (shown,) = preview.context["preview"].text_formats
    assert (shown.dataset, shown.suggestion.text_format, shown.suggestion.n_texts, shown.stored) == (
        "Demo", "plain", 2, None)
    html = preview.content.decode()
    assert "plain text with math: none of 2 question texts shows Markdown" in html
    assert 'name="text_format"' in html  # the confirm form offers the choice
    assert Dataset.objects.get(name="Demo").text_format == "plain"


def test_the_preview_suggests_markdown_for_texts_written_in_it(client, uploader):
    preview = preview_and_confirm(client, MARKDOWN_QUESTIONS)
    (shown,) = preview.context["preview"].text_formats
    # both texts show Markdown: bold and link; fenced code
    assert (shown.suggestion.text_format, shown.suggestion.n_markdown) == ("markdown", 2)
    assert shown.suggestion.signs == {"fenced code": 1, "link": 1, "bold": 1, "heading": 0, "list": 0}
    assert Dataset.objects.get(name="Demo").text_format == "markdown"


def test_the_format_chosen_on_confirming_overrides_the_suggestion(client, uploader):
    preview_and_confirm(client, MARKDOWN_QUESTIONS, text_format="plain")
    assert Dataset.objects.get(name="Demo").text_format == "plain"


def test_an_existing_dataset_keeps_its_format_and_the_preview_says_so(client, uploader):
    preview_and_confirm(client, PLAIN_QUESTIONS, text_format="markdown")
    posted = upload(client, responses=b"question_id,m3\nq1,1\nq2,0\n",
                    questions=SimpleUploadedFile("questions.csv", PLAIN_QUESTIONS, content_type="text/csv"),
                    name="second")
    preview = client.get(posted["Location"])
    (shown,) = preview.context["preview"].text_formats
    assert shown.stored == "markdown"
    assert "Markdown with math (already stored; change it on the dataset" in preview.content.decode()


def test_an_unknown_format_on_confirming_is_refused_and_nothing_is_loaded(client, uploader):
    posted = upload(client, questions=SimpleUploadedFile("questions.csv", PLAIN_QUESTIONS, content_type="text/csv"))
    token = posted["Location"].rstrip("/").rsplit("/", 1)[1]
    assert client.post(posted["Location"], {"token": token, "text_format": "html"}).status_code == 404
    assert not Dataset.objects.exists()


def test_the_command_takes_a_text_format_and_prints_the_suggestion(tmp_path, capsys):
    (tmp_path / "r.csv").write_bytes(b"question_id,m1,m2\nq1,1,0\nq2,0,1\n")
    (tmp_path / "q.csv").write_bytes(PLAIN_QUESTIONS)
    call_command("load_responses", responses=tmp_path / "r.csv", questions=tmp_path / "q.csv", dataset="Cmd",
                 subject_column="category", text_format="markdown")
    assert Dataset.objects.get(name="Cmd").text_format == "markdown"
    assert "question text of Cmd: suggested plain text with math: none of 2" in capsys.readouterr().err


def test_the_dataset_admin_page_changes_the_format_and_the_admin_shows_questions_in_it(admin_client):
    dataset = Dataset.objects.create(name="D")
    question = Question.objects.create(dataset=dataset, external_id="q1", text="Compute 2*3*4 with $x_1$",
                                       options=["a*b*c", "$y$"])
    change = reverse("admin:annotate_question_change", args=[question.pk])
    html = admin_client.get(change).content.decode()
    assert ('<div class="question-text"><p class="plain-text">Compute 2*3*4 with '
            '<span class="math math-inline">x_1</span></p>') in html
    assert "katex.min.js" in html and "annotate/math.js" in html
    posted = admin_client.post(reverse("admin:annotate_dataset_change", args=[dataset.pk]),
                               {"name": "D", "description": "", "text_format": "markdown"})
    assert posted.status_code == 302
    html = admin_client.get(change).content.decode()
    assert "<p>Compute 2<em>3</em>4 with <span class=\"math math-inline\">x_1</span></p>" in html
    listing = admin_client.get(reverse("admin:annotate_question_changelist")).content.decode()
    assert "<li>a<em>b</em>c</li>" in listing


def test_score_now_after_an_upload_lands_on_the_sites_run_page(client, uploader):
    preview_and_confirm(client, PLAIN_QUESTIONS)
    from annotate.models import ResponseSet, ScoringRun, UploadJob

    job = UploadJob.objects.get()
    assert job.response_set == ResponseSet.objects.get()
    url = reverse("admin:annotate_responseset_upload_job", args=[job.pk])
    posted = client.post(url, {"methods": ["eip", "accuracy"], "alpha": "0.85"})
    run = ScoringRun.objects.get()
    assert posted.status_code == 302
    assert posted["Location"] == reverse("annotate:run_detail", args=[run.pk])  # not the admin's change form
    page = client.get(posted["Location"])
    assert page.status_code == 200 and f"Scoring run {run.pk}" in page.content.decode()
