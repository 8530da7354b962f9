"""Names and ids typed or uploaded by people refuse invisible and
direction-changing characters (one check, ``annotate.core.name_text_problem``),
wherever they come in: the study pages, the manage page, the join link, the
API, commands, judgment imports and study imports. Question text is data and
keeps them. Free text (an exclusion reason, a study's guidelines) has a
maximum length, refused with a clear error, never cut.

Cast: ``olga`` (researcher), ``mallory`` (types the hostile names), ``cy``
(an evaluator of olga's study).
"""
from __future__ import annotations

import json
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core import serializers
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.db.models import Q
from django.test import Client
from django.urls import reverse

from annotate.api.services import api_token_create
from annotate.core import column_value_problem, name_text_problem
from annotate.models import (
    ApiToken,
    ConsentDecline,
    ExclusionEvent,
    Participation,
    Question,
    Study,
)
from annotate.studies.services.judgment_import import ImportFile, JudgmentImportError, judgments_import
from annotate.studies.services.participation import invitation_create
from annotate.studies.services.study_transfer import study_import
from annotate.studies.services.transfer_export import dump_export, study_export
from tests.annotate.factories import client_for, make_catalog, make_evaluator, make_researcher, make_study
from tests.annotate.hardening.test_upload_text_columns import run  # noqa: F401 (the fixture)
from tests.annotate.studies.test_study_create_page import form_data

pytestmark = pytest.mark.django_db

#: One of each kind the check refuses, as code points.
REFUSED = [0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069, 0x200B, 0x200C, 0x200D,
           0x2060, 0xFEFF, 0x00AD, 0x200E, 0x200F, 0x061C]
HOLDS = "holds an invisible or direction-changing character (U+{code:04X})"
EVIL = "\u202eevil\u200b"


@pytest.fixture(autouse=True)
def _fresh_rate_limits():
    cache.clear()


def everything() -> str:
    """Every row the forms and imports below may write, as text, and how many accounts and tokens there are
    (signing in and using a token stamp their rows)."""
    rows = [*Study.objects.order_by("pk"), *Participation.objects.order_by("pk"),
            *ExclusionEvent.objects.order_by("pk"), *ConsentDecline.objects.order_by("pk")]
    counts = f"{get_user_model().objects.count()} accounts, {ApiToken.objects.count()} tokens"
    return serializers.serialize("json", rows) + counts


# --- the check --------------------------------------------------------------------------------


@pytest.mark.parametrize("code", REFUSED)
def test_every_bidi_zero_width_and_format_character_is_refused_in_a_name(code):
    assert name_text_problem(f"ab{chr(code)}c") == f"an invisible or direction-changing character (U+{code:04X})"


@pytest.mark.parametrize("name", ["Llama 3", "José Álvarez", "北京大学", "مرحبا", "a.b-c_d@e", "pid-5f0a1b"])
def test_visible_names_in_any_script_pass(name):
    assert name_text_problem(name) is None


def test_the_upload_check_refuses_them_only_for_names():
    assert column_value_problem(EVIL, model=Participation, field="group") is None  # text: stored as written
    assert column_value_problem(EVIL, model=Participation, field="group", name=True) == (
        "holds an invisible or direction-changing character (U+202E), which cannot be stored")
    assert column_value_problem("a\x00b", model=Participation, field="group", name=True) == (
        "holds a NUL character, which cannot be stored")


# --- the forms ----------------------------------------------------------------------------------


def test_the_new_study_page_refuses_such_a_name_and_creates_nothing():
    catalog, olga = make_catalog(), make_researcher("olga")
    before = everything()
    for code in (0x202E, 0x200B):
        page = client_for(olga).post(reverse("annotate:study_create"),
                                     form_data(catalog, name=f"Paid{chr(code)} study"))
        assert page.status_code == 400
        assert HOLDS.format(code=code) in page.content.decode()
    assert everything() == before


def test_the_edit_page_refuses_such_a_name_and_changes_nothing():
    catalog, olga = make_catalog(), make_researcher("olga")
    study = make_study(catalog, owner=olga, name="Plain")
    before = everything()
    page = client_for(olga).post(reverse("annotate:study_edit", kwargs={"study_id": study.pk}),
                                 form_data(catalog, name="Pl\u202eain"))
    assert page.status_code == 400 and HOLDS.format(code=0x202E) in page.content.decode()
    assert everything() == before


def test_the_manage_page_refuses_such_a_completion_code_and_changes_nothing():
    olga = make_researcher("olga")
    study = make_study(make_catalog(), owner=olga)
    before = everything()
    page = client_for(olga).post(reverse("annotate:study_quality_settings", kwargs={"study_id": study.pk}), {
        "speeder_seconds": "5", "participant_param": "PROLIFIC_PID", "study_param": "STUDY_ID",
        "session_param": "SESSION_ID", "completion_code": "C0DE\u202e-42", "completion_url": ""})
    assert page.status_code == 400 and HOLDS.format(code=0x202E) in page.content.decode()
    assert everything() == before


@pytest.mark.parametrize(("param", "value", "code"), [
    ("PROLIFIC_PID", "ada\u202e", 0x202E), ("STUDY_ID", "st\u200b1", 0x200B), ("SESSION_ID", "\ufeffse", 0xFEFF)])
def test_a_join_link_with_such_an_id_is_refused_and_writes_nothing(param, value, code):
    study = make_study(make_catalog(), name="Crowd")
    url = reverse("annotate:study_join", kwargs={"token": invitation_create(study=study).token})
    before = everything()
    for consent in ("yes", "no"):
        response = Client().post(url + "?" + f"{param}={value}", {"consent": consent})
        assert response.status_code == 400
        assert HOLDS.format(code=code) in response.content.decode()
    assert everything() == before


def test_an_exclusion_reason_over_the_limit_is_refused_not_cut():
    olga = make_researcher("olga")
    study = make_study(make_catalog(), owner=olga)
    cy = make_evaluator(study, "cy")
    url = reverse("annotate:study_evaluator_exclude", kwargs={"study_id": study.pk, "participation_id": cy.pk})
    before = everything()
    page = client_for(olga).post(url, {"reason": "x" * 10_000})
    assert page.status_code == 400
    assert "Ensure this value has at most 500 characters (it has 10000)." in page.content.decode()
    assert everything() == before
    assert client_for(olga).post(url, {"reason": "y" * 500}).status_code == 302
    cy.refresh_from_db()
    assert cy.exclusion_reason == "y" * 500


def test_the_exclusion_service_refuses_a_long_reason_itself():
    from annotate.studies.services.study_quality import participation_exclude
    study = make_study(make_catalog())
    cy = make_evaluator(study, "cy")
    with pytest.raises(ValueError, match=r"reason: at most 500 characters \(it has 10,000\)"):
        participation_exclude(participation=cy, reason="x" * 10_000, by=None)
    assert ExclusionEvent.objects.count() == 0


def test_guidelines_over_the_limit_are_refused_on_the_new_study_page():
    catalog, olga = make_catalog(), make_researcher("olga")
    page = client_for(olga).post(reverse("annotate:study_create"), form_data(catalog, guidelines="g" * 20_001))
    assert page.status_code == 400
    assert "Ensure this value has at most 20000 characters (it has 20001)." in page.content.decode()
    assert Study.objects.count() == 0


# --- the API, commands and imports --------------------------------------------------------------


def _judgments_csv(evaluator: str, group: str = "crowd") -> bytes:
    return ("evaluator,group,dataset_a,question_a,dataset_b,question_b,harder\n"
            f"{evaluator},{group},D,q1,D,q2,a\ne2,crowd,D,q4,D,q5,b\n").encode()


def test_an_imported_evaluator_id_with_such_characters_is_refused_by_file_row_and_column(run):  # noqa: F811
    before = everything()
    with pytest.raises(JudgmentImportError) as caught:
        judgments_import(files=[ImportFile("j.csv", _judgments_csv(EVIL), "csv")], run=run, name="imported")
    assert str(caught.value).count("j.csv, row 2, column evaluator: the value " + HOLDS.format(code=0x202E)) == 1
    with pytest.raises(JudgmentImportError, match=r"row 2, column group: the value holds an invisible"):
        judgments_import(files=[ImportFile("j.csv", _judgments_csv("e1", "cr\u2067owd"), "csv")], run=run,
                         name="imported")
    assert everything() == before


def test_the_api_refuses_such_an_evaluator_and_such_a_study_name(run, client):  # noqa: F811
    _, key = api_token_create(user=make_researcher("rosa"))
    auth = {"HTTP_AUTHORIZATION": f"Token {key}"}
    before = everything()
    for name, evaluator, needle in (("api", EVIL, "column evaluator: the value " + HOLDS.format(code=0x202E)),
                                    ("api\u202e", "e1", "name " + HOLDS.format(code=0x202E))):
        upload = SimpleUploadedFile("judgments.csv", _judgments_csv(evaluator), content_type="text/csv")
        answer = client.post("/api/studies/imported/", data={"run": run.pk, "name": name, "format": "csv",
                                                             "files": [upload]}, **auth)
        assert answer.status_code == 400
        assert needle in answer.json()["error"]
    assert everything() == before


def test_the_commands_refuse_such_names(run, tmp_path):  # noqa: F811
    path = tmp_path / "j.csv"
    path.write_bytes(_judgments_csv("e1"))
    before = everything()
    with pytest.raises(CommandError, match=r"name holds an invisible or direction-changing character \(U\+200B\)"):
        call_command("import_judgments", "--file", str(path), "--run", str(run.pk), "--name", "cmd\u200b",
                     stdout=StringIO())
    with pytest.raises(CommandError, match=r"the group of j.csv holds an invisible or direction-changing character"):
        call_command("import_judgments", "--file", str(path), "--group", "\u202ecrowd", "--run", str(run.pk),
                     "--name", "cmd", stdout=StringIO())
    dataset = Question.objects.filter(Q(external_id="q1")).get().dataset.name
    with pytest.raises(CommandError, match=r"name holds an invisible or direction-changing character \(U\+202E\)"):
        call_command("create_study", "--name", "\u202eevil", "--datasets", dataset, "--pairs", "2",
                     "--run", str(run.pk), "--no-invitation", stdout=StringIO())
    assert everything() == before


def test_an_api_token_name_with_such_characters_is_refused():
    with pytest.raises(ValueError, match=r"name holds an invisible or direction-changing character \(U\+202E\)"):
        api_token_create(user=make_researcher("rosa"), name="ci\u202e")
    assert ApiToken.objects.count() == 0


def test_a_study_export_with_such_a_name_or_id_is_refused_on_import():
    study = make_study(make_catalog(), name="Original")
    make_evaluator(study, "cy")
    document = json.loads(dump_export(study_export(study=study)))
    for mutate, needle in (
            (lambda d: d["study"].update(name="Copy\u202e"), "study.name " + HOLDS.format(code=0x202E)),
            (lambda d: d["study"].update(completion_code="C\u200b"), "completion_code " + HOLDS.format(code=0x200B)),
            (lambda d: d["evaluators"][0].update(platform_participant_id="p\u2066"), HOLDS.format(code=0x2066))):
        changed = json.loads(json.dumps(document))
        mutate(changed)
        before = everything()
        with pytest.raises(ValueError, match=needle.replace("(", r"\(").replace(")", r"\)").replace("+", r"\+")):
            study_import(document=changed, rename="Copy\u202e" if "name" in needle[:10] else "Copy")
        assert everything() == before


# --- data stays as written -----------------------------------------------------------------------


def test_question_text_keeps_bidi_and_zero_width_characters(run):  # noqa: F811
    text = "Which is larger: \u202e123\u202c or \u200b321?"
    question = Question.objects.get(external_id="q1")
    Question.objects.filter(pk=question.pk).update(text=text)
    judgments_import(files=[ImportFile("j.csv", _judgments_csv("e1"), "csv")], run=run, name="imported")
    question.refresh_from_db()
    assert question.text == text


@pytest.mark.parametrize(("field", "value", "needle"), [
    ("evaluator", EVIL, "column evaluator: the value " + HOLDS.format(code=0x202E)),
    ("group_1", "cr\u200bowd", "The group of j.csv " + HOLDS.format(code=0x200B)),
    ("name", "imp\u2068orted", "Study name " + HOLDS.format(code=0x2068)),
])
def test_the_import_page_refuses_such_names_and_creates_nothing(run, field, value, needle):  # noqa: F811
    rosa = make_researcher("rosa")
    data = {"run": run.pk, "name": "imported", "format": "csv", "group_1": ""}
    body = _judgments_csv(value) if field == "evaluator" else _judgments_csv("e1")
    if field != "evaluator":
        data[field] = value
    before = everything()
    page = client_for(rosa).post(reverse("annotate:study_import"),
                                 {**data, "file_1": SimpleUploadedFile("j.csv", body, content_type="text/csv")})
    assert page.status_code == 400
    assert needle in page.content.decode().replace("&#x27;", "'")
    assert everything() == before


# --- uploaded catalog names: cleaned of the same characters ------------------------------------


def test_an_uploaded_response_set_stores_names_without_direction_changing_characters(tmp_path):
    from annotate.catalog.services.uploads import UploadOptions, UploadSource, upload_check, upload_load
    from annotate.models import Dataset, LanguageModel, Subject
    path = tmp_path / "r.csv"
    path.write_text("dataset,question_id,subject,model,credit,question\n"
                    "\u202eDS,q\u20661\u2069,Ma\u200bth,\u202dgpt-4\u202c,1,Is \u202e321\u202c larger?\n"
                    "\u202eDS,q2,Ma\u200bth,\u202dgpt-4\u202c,0,Plain\n", encoding="utf-8")
    checked = upload_check(source=UploadSource(responses=path), options=UploadOptions(file_format="long", name="s"))
    upload_load(checked=checked)
    assert list(Dataset.objects.values_list("name", flat=True)) == ["DS"]
    assert list(Subject.objects.values_list("name", flat=True)) == ["Math"]
    assert list(LanguageModel.objects.values_list("name", flat=True)) == ["gpt-4"]
    assert sorted(Question.objects.values_list("external_id", flat=True)) == ["q1", "q2"]
    assert Question.objects.get(external_id="q1").text == "Is \u202e321\u202c larger?"  # data: as written
