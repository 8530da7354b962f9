"""The upload preview judges subjects as they will be after the load: a
question already stored keeps its stored subject, so a file of people's
answers for stored questions (no subject column) is not said to make no study."""
from __future__ import annotations

from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from annotate.catalog.loaders import tabular as t
from annotate.catalog.services.load_plan import SOME_WITHOUT_SUBJECT_NOTE

pytestmark = pytest.mark.django_db

QUESTIONS = "question_id,category\n892,law\n893,math\n"
MODELS = "question_id,m1,m2\n892,1,0\n893,0,1\n"


@pytest.fixture
def stored(tmp_path):
    """Questions 892 (law) and 893 (math) of dataset mmlu-pro, with a model set."""
    (tmp_path / "questions.csv").write_text(QUESTIONS, encoding="utf-8")
    (tmp_path / "models.csv").write_text(MODELS, encoding="utf-8")
    call_command("load_responses", "--responses", str(tmp_path / "models.csv"), "--format", "wide", "--dataset",
                 "mmlu-pro", "--questions", str(tmp_path / "questions.csv"), "--subject-column", "category",
                 verbosity=0, stdout=StringIO())


def _preview_notes(client, people: bytes) -> list[str]:
    posted = client.post(reverse("admin:annotate_responseset_upload"), {
        "responses": SimpleUploadedFile("people.csv", people, content_type="text/csv"),
        "file_format": "wide", "dataset": "mmlu-pro", "subject_column": "", "keep_columns": "",
        "id_column": "question_id", "name": ""})
    assert posted.status_code == 302
    page = client.get(posted["Location"])
    assert page.status_code == 200
    return list(page.context["preview"].notes)


def test_people_answers_for_stored_questions_keep_their_subjects(client, uploader, upload_root, stored):
    notes = _preview_notes(client, b"question_id,p1,p2\n892,1,0\n893,1,1\n")
    assert not any("no subject" in note for note in notes), notes


def test_some_new_questions_without_a_subject_are_counted(client, uploader, upload_root, stored):
    notes = _preview_notes(client, b"question_id,p1,p2\n892,1,0\n893,1,1\n9000,0,0\n")
    assert SOME_WITHOUT_SUBJECT_NOTE.format(file="people.csv", n=1, total=3) in notes


def test_only_new_questions_without_a_subject_keep_the_note(client, uploader, upload_root, stored):
    notes = _preview_notes(client, b"question_id,p1,p2\n9000,1,0\n9001,1,1\n")
    assert t.NO_SUBJECT_NOTE.format(file="people.csv") in notes
