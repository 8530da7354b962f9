"""The admin upload page: upload -> preview -> confirm, as a staff user with the add permission."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotate.catalog.loaders import tabular as t
from annotate.models import Dataset, LanguageModel, Question, ResponseSet, ResponseSetQuestion, Subject, UploadJob
from tests.annotate.factories import all_stored_responses

pytestmark = pytest.mark.django_db

TABLES = (Dataset, Subject, Question, LanguageModel, ResponseSet, ResponseSetQuestion)
RESPONSES = b"question_id,m1,m2\nq1,1,0\nq2,,0.5\n"
QUESTIONS = b"question_id,category,question\nq1,math,What is 2+2?\nq2,law,Is it legal?\n"


def counts() -> dict[str, int]:
    return {model.__name__: model.objects.count() for model in TABLES}


@pytest.fixture
def outsider(client):
    """A staff member without permissions on response sets."""
    user = User.objects.create_user("outsider", password="pw", is_staff=True)
    client.force_login(user)
    return user


def upload(client, responses: bytes = RESPONSES, **fields):
    data = {
        "responses": SimpleUploadedFile("scores.csv", responses, content_type="text/csv"),
        "questions": SimpleUploadedFile("questions.csv", QUESTIONS, content_type="text/csv"),
        "file_format": "wide",
        "dataset": "Demo",
        "subject_column": "category",
        "keep_columns": "",
        "id_column": "question_id",
        "name": "",
        **fields,
    }
    return client.post(reverse("admin:annotate_responseset_upload"), data)


def test_the_response_set_list_links_to_the_upload_page(client, uploader):
    page = client.get(reverse("admin:annotate_responseset_changelist"))
    assert page.status_code == 200
    assert reverse("admin:annotate_responseset_upload") in page.content.decode()


def test_upload_preview_confirm_creates_the_response_set(client, uploader, upload_root):
    assert client.get(reverse("admin:annotate_responseset_upload")).status_code == 200
    posted = upload(client)
    assert posted.status_code == 302
    preview = client.get(posted["Location"])
    html = preview.content.decode()
    assert preview.status_code == 200
    assert counts() == dict.fromkeys(counts(), 0)  # nothing written by the preview
    context = preview.context["preview"]
    # 3 non-blank cells; new: 1 dataset, 2 subjects, 2 questions, 2 models
    assert (context.name, context.n_responses, context.datasets_new, context.subjects_new,
            context.questions_new, context.models_new) == ("scores", 3, 1, 2, 2, 2)
    assert '<tr><th scope="row">responses</th><td>3</td>' in html
    assert "<td>Demo</td><td>q2</td><td>law</td><td>m2</td><td>0.5</td>" in html  # a first row
    # 2 questions x 2 models = 4 cells, 3 observed; q1 has 2 models, q2 one (both < 3); one component
    assert (context.n_cells, context.n_missing, context.n_low_coverage, context.n_components) == (4, 1, 2, 1)
    assert ('<p id="preview-diagnostics">1 of 4 model-question cells not observed; 2 questions observed by fewer '
            "than 3 models; the model-question graph has 1 component.</p>") in html
    token = posted["Location"].rstrip("/").rsplit("/", 1)[1]
    assert (upload_root / token / "responses" / "scores.csv").read_bytes() == RESPONSES
    confirmed = client.post(posted["Location"], {"token": token})
    response_set = ResponseSet.objects.get()
    assert confirmed.status_code == 302
    job = UploadJob.objects.get()  # the worker's load ran inline (conftest: immediate task backend)
    assert confirmed["Location"] == reverse("admin:annotate_responseset_upload_job", args=[job.pk])
    assert (job.state, job.response_set, job.n_done, job.n_total) == ("done", response_set, 3, 3)
    progress = client.get(confirmed["Location"])
    assert progress.status_code == 200 and b'data-state="done"' in progress.content
    assert b'id="score-now-form"' in progress.content and b'http-equiv="refresh"' not in progress.content
    assert (response_set.name, response_set.version, response_set.n_responses) == ("scores", 1, 3)
    assert (response_set.summary["n_cells"], response_set.summary["n_missing"]) == (4, 1)
    assert response_set.uploaded_by == uploader
    assert all_stored_responses() == [
        ("q1", "m1", 1.0), ("q1", "m2", 0.0), ("q2", "m2", 0.5)]
    assert not (upload_root / token).exists()  # files are removed after the load
    # the token is spent: confirming again is a 404, not a second load
    assert client.post(posted["Location"], {"token": token}).status_code == 404
    assert ResponseSet.objects.count() == 1


def test_a_bad_file_shows_located_problems_and_writes_nothing(client, uploader, upload_root):
    before = counts()
    posted = upload(client, responses=b"question_id,m1,m2\nq1,1,1.5\nq2,yes,0\n")
    page = client.get(posted["Location"])
    html = page.content.decode()
    assert page.status_code == 400
    assert "scores.csv, row 2, column &#x27;m2&#x27;: " + t.CREDIT_OUT_OF_RANGE.format(value="1.5").replace(
        "'", "&#x27;") in html
    assert "scores.csv, row 3, column &#x27;m1&#x27;: " + t.CREDIT_NOT_A_NUMBER.format(value="yes").replace(
        "'", "&#x27;") in html
    assert counts() == before
    assert list(upload_root.iterdir()) == []  # the rejected upload was deleted


def test_an_upload_of_already_loaded_files_is_refused_at_preview(client, uploader):
    first = upload(client)
    token = first["Location"].rstrip("/").rsplit("/", 1)[1]
    client.post(first["Location"], {"token": token})
    before = counts()
    again = client.get(upload(client, name="other")["Location"])
    assert again.status_code == 400
    assert "already loaded as response set &#x27;scores v1&#x27;" in again.content.decode()
    assert counts() == before


def test_a_new_version_can_be_ticked_on_the_form(client, uploader):
    first = upload(client)
    client.post(first["Location"], {"token": first["Location"].rstrip("/").rsplit("/", 1)[1]})
    second = upload(client, responses=RESPONSES.replace(b"q2,,0.5", b"q2,1,0.5"), new_version="on")
    preview = client.get(second["Location"])
    assert preview.context["preview"].supersedes == "scores v1"
    client.post(second["Location"], {"token": second["Location"].rstrip("/").rsplit("/", 1)[1]})
    assert list(ResponseSet.objects.order_by("version").values_list("version", "status")) == [
        (1, "superseded"), (2, "loaded")]


def test_a_staff_member_without_permission_cannot_upload(client, outsider):
    assert client.get(reverse("admin:annotate_responseset_upload")).status_code == 403
    assert upload(client).status_code == 403
    assert ResponseSet.objects.count() == 0


def test_another_session_cannot_confirm_an_upload(client, uploader, django_user_model):
    posted = upload(client)
    token = posted["Location"].rstrip("/").rsplit("/", 1)[1]
    other = django_user_model.objects.create_user("other", password="pw", is_staff=True)
    other.user_permissions.add(Permission.objects.get(codename="add_responseset"))
    client.force_login(other)
    assert client.post(posted["Location"], {"token": token}).status_code == 404
    assert ResponseSet.objects.count() == 0


# --- oversized uploads (tester's report) ------------------------------------------------


def test_a_header_field_over_the_csv_limit_is_a_problem_page_not_a_server_error(client, uploader, upload_root):
    before = counts()
    posted = upload(client, responses=b"question_id," + b"m" * 200_000 + b"\nq1,1\n")
    page = client.get(posted["Location"])
    html = page.content.decode()
    assert page.status_code == 400
    assert ("scores.csv, row 1: field 2 of the header is 200,000 characters long; a CSV field may hold at most "
            "131,072 characters") in html
    assert counts() == before
    assert list(upload_root.iterdir()) == []


def test_the_problem_page_cuts_a_long_quoted_value(client, uploader):
    text = b"q" * 300_000
    responses = b"dataset,question_id,model,credit,question\nD,1,m1,1," + text + b"\nD,1,m2,0,x\n"
    page = client.get(upload(client, responses=responses, file_format="long", questions="",
                             subject_column="")["Location"])
    html = page.content.decode()
    assert page.status_code == 400
    assert "&#x27;" + "q" * 80 + "…&#x27; (300,000 characters)" in html
    assert "q" * 81 not in html
    assert len(page.content) < 10_000


def test_the_preview_lists_50_new_models_and_counts_the_rest_exactly(client, uploader):
    names = [f"model-{i:03d}" for i in range(120)]
    responses = ("question_id," + ",".join(names) + "\n" + "q1" + ",1" * 120 + "\n").encode()
    page = client.get(upload(client, responses=responses, questions="", subject_column="")["Location"])
    html = page.content.decode()
    assert page.status_code == 200
    assert page.context["preview"].models_new == 120
    # model-000 .. model-049 shown, 120 - 50 = 70 more
    assert '<p id="preview-new-models">New models: ' + ", ".join(names[:50]) + " and 70 more</p>" in html
    assert "model-050" not in html.split('id="preview-rows"')[0]


def test_the_preview_notes_that_questions_without_subjects_cannot_make_a_study(client, uploader):
    page = client.get(upload(client, questions="", subject_column="")["Location"])
    assert page.status_code == 200
    assert "scores.csv: no subject column: questions have no subject, so no study can be made" in page.content.decode()


def test_the_problem_page_cuts_a_long_column_name(client, uploader):
    name = "m" * 1000
    page = client.get(upload(client, responses=f"question_id,{name}\nq1,2\n".encode(), questions="",
                             subject_column="")["Location"])
    assert page.status_code == 400
    [problem] = page.context["problems"]
    # the model column holds credit 2, outside [0, 1]; its 1,000-character name is cut to 80
    assert str(problem) == ("scores.csv, row 2, column '" + "m" * 80 + "… (1,000 characters)': "
                            + t.CREDIT_OUT_OF_RANGE.format(value="2"))


def test_the_job_reads_done_in_the_same_transaction_that_makes_the_set_visible(client, uploader, monkeypatch):
    """No reader ever sees the set listed while its job still says "loading" (or the reverse)."""
    from annotate.catalog.services import loading

    real, seen = loading.matrix_store.store_publish, []

    def publish(temp, pk):  # runs last inside the publish transaction
        seen.append((ResponseSet.objects.get(pk=pk).status, UploadJob.objects.get().state,
                     UploadJob.objects.get().response_set_id))
        real(temp, pk)

    monkeypatch.setattr(loading.matrix_store, "store_publish", publish)
    posted = upload(client)
    client.post(posted["Location"], {"token": posted["Location"].rstrip("/").rsplit("/", 1)[1]})
    assert seen == [("loaded", "done", ResponseSet.objects.get().pk)]
