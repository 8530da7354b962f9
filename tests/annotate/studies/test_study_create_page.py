"""The study creation and edit pages, their live counts and Markdown preview,
and the launch / close / reopen confirmation step.

Cast: ``olga`` (researcher, creates the studies), ``max`` (researcher, added
as a member), ``ada`` (evaluator).
"""
from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils.html import escape

from annotate.models import Pair, Study, StudyStatus
from annotate.models.studies import DEFAULT_CONSENT
from annotate.studies.services.judging import judging_screen, judgment_submit
from tests.annotate.factories import client_for, make_catalog, make_evaluator, make_researcher

pytestmark = pytest.mark.django_db



def form_data(catalog, **overrides) -> dict:
    data = {
        "name": "From the page", "run": catalog.run.pk, "datasets": [catalog.dataset.pk], "pairs_mode": "total",
        "n_pairs": 8, "strategy": "uniform", "target_judgments_per_pair": 5, "seed": 42,
        "guidelines": "Pick the **harder** one.", "consent_text": "I agree.",
        "onboarding_questions": ["field_of_study", "education_level", "qualified_subjects"],
    }
    return {**data, **overrides}


def pairs_of(study: Study) -> list[tuple[int, int, int | None]]:
    return list(Pair.objects.filter(study=study).order_by("position")
                .values_list("question_a_id", "question_b_id", "stratum"))


@pytest.mark.parametrize("strategy", ["uniform", "stratified_gap"])
def test_the_page_draws_the_same_pairs_as_the_command_with_the_same_seed(catalog, olga, strategy):
    call_command("create_study", "--name", "From the command", "--datasets", catalog.dataset.name, "--pairs", "8",
                 "--seed", "42", "--strategy", strategy, "--run", str(catalog.run.pk), "--no-invitation",
                 "--owner", "olga",
                 stdout=StringIO())
    response = client_for(olga).post(reverse("annotate:study_create"),
                                     form_data(catalog, strategy=strategy, onboarding_questions=["education_level"]))
    page = Study.objects.get(name="From the page")
    assert response.status_code == 302 and response.url == reverse("annotate:study_manage",
                                                                   kwargs={"study_id": page.pk})
    command = Study.objects.get(name="From the command")
    assert command.created_by == olga and command.status == StudyStatus.OPEN
    assert len(pairs_of(page)) == 8 and pairs_of(page) == pairs_of(command)
    assert (page.status, page.created_by, page.target_judgments_per_pair) == (StudyStatus.DRAFT, olga, 5)
    assert (page.consent_text, page.onboarding_questions) == ("I agree.", ["education_level"])


def test_the_page_adds_attention_checks_on_top_of_the_pairs(olga):
    # One subject of 8 questions, difficulty increasing with the index: percentile ranks k/7, so the
    # candidates with a gap >= 0.5 are (q0, q7) and (q1, q6). 8 regular pairs and a share of 0.2:
    # round(0.2 * 8 / 0.8) = 2 checks, one of them the pair of the easiest and the hardest question.
    catalog = make_catalog(subjects=("Mathematics",), per_subject=8)
    client_for(olga).post(reverse("annotate:study_create"), form_data(catalog, attention_check_share=0.2))
    study = Study.objects.get(name="From the page")
    assert study.attention_check_share == 0.2 and study.n_pairs == 8
    assert Pair.objects.filter(study=study, attention_check=False).count() == 8
    checks = {frozenset((p.question_a.external_id, p.question_b.external_id))
              for p in Pair.objects.filter(study=study, attention_check=True)}
    assert len(checks) == 2 and checks <= {frozenset(("q0-0", "q0-7")), frozenset(("q0-1", "q0-6"))}


def test_too_large_an_attention_share_is_refused_with_the_reason(catalog, olga):
    # Two subjects of 6: ranks are over all 12 questions (k/11), so no same-subject gap reaches 0.5.
    response = client_for(olga).post(reverse("annotate:study_create"), form_data(catalog, attention_check_share=0.2))
    body = response.content.decode()
    assert ("2 attention checks wanted, but only 0 same-subject pairs of questions are at least 0.5 apart on the "
            "percentile scale of EIP difficulty (0 = easiest, 1 = hardest); lower the attention-check share") in body
    assert "difficulty_rank" not in body
    assert not Study.objects.exists()


def test_pairs_per_subject_draws_that_many_in_each_subject(catalog, olga):
    client_for(olga).post(reverse("annotate:study_create"),
                          form_data(catalog, pairs_mode="per_subject", n_pairs=3))
    study = Study.objects.get(name="From the page")
    subjects = list(Pair.objects.filter(study=study).values_list("question_a__subject__name", flat=True))
    assert (study.n_pairs, study.pairs_per_subject) == (6, 3)
    assert sorted(subjects) == ["Mathematics"] * 3 + ["Physics"] * 3


def test_a_refused_study_shows_the_reason_and_writes_nothing(catalog, olga):
    # 6 questions per subject, all kept: 15 + 15 = 30 distinct pairs at most.
    response = client_for(olga).post(reverse("annotate:study_create"), form_data(catalog, n_pairs=31))
    assert response.status_code == 400
    # The sampler's message in the form's words, on the field it is about.
    assert response.context["form"].errors["n_pairs"] == [
        "Number of pairs is 31, but only 30 distinct same-subject pairs are possible from 12 eligible questions"]
    assert "n_pairs" not in " ".join(response.context["form"].errors.get("__all__", []))
    assert not Study.objects.exists()


def test_an_adaptive_study_asking_more_pairs_per_evaluator_than_its_pool_holds_is_refused_at_the_field(
        catalog, olga):
    # Two subjects of 6 questions: 15 + 15 = 30 distinct same-subject pairs in the pool.
    response = client_for(olga).post(reverse("annotate:study_create"),
                                     form_data(catalog, strategy="adaptive", n_pairs=100000))
    assert response.status_code == 400
    assert response.context["form"].errors["n_pairs"] == [
        "Number of pairs must be at most 30 in this adaptive study: it is the pairs each evaluator judges, each pair "
        "at most once, and its pool of 12 questions holds 30 distinct same-subject pairs (entered: 100,000)"]
    assert not Study.objects.exists()


def test_a_member_can_edit_until_the_first_judgment(catalog, olga):
    member = make_researcher("max")
    client_for(olga).post(reverse("annotate:study_create"), form_data(catalog, members=[member.pk]))
    study = Study.objects.get(name="From the page")
    edit = reverse("annotate:study_edit", kwargs={"study_id": study.pk})
    client = client_for(member)
    assert client.get(edit).status_code == 200
    response = client.post(edit, form_data(catalog, name="Renamed", n_pairs=5, members=[member.pk]))
    assert response.status_code == 302
    study.refresh_from_db()
    assert (study.name, study.n_pairs, Pair.objects.filter(study=study).count()) == ("Renamed", 5, 5)
    assert study.created_by == olga  # the owner stays

    client.post(reverse("annotate:study_status", kwargs={"study_id": study.pk}), {"status": "open"})
    study.refresh_from_db()
    ada = make_evaluator(study, "ada")
    screen = judging_screen(participation=ada)
    judgment_submit(participation=ada, pair_id=screen.pair.pk, left_question_id=screen.left.pk, choice="left")
    frozen = client.post(edit, form_data(catalog, name="Too late", n_pairs=4, members=[member.pk]))
    study.refresh_from_db()
    assert frozen.status_code == 302 and study.name == "Renamed" and study.n_pairs == 5
    assert 'id="edit-study"' not in client.get(reverse("annotate:study_manage",
                                                       kwargs={"study_id": study.pk})).content.decode()


def test_launch_close_and_reopen_each_ask_for_confirmation(catalog, olga):
    client = client_for(olga)
    client.post(reverse("annotate:study_create"), form_data(catalog))
    study = Study.objects.get(name="From the page")
    status = reverse("annotate:study_status", kwargs={"study_id": study.pk})
    confirm_url = reverse("annotate:study_status_confirm", kwargs={"study_id": study.pk})
    for target, verb in (("open", "launch"), ("closed", "close"), ("open", "reopen")):
        confirm = client.get(confirm_url)
        body = confirm.content.decode()
        assert confirm.status_code == 200 and f"Yes, {verb} the study</button>" in body
        assert f'name="status" value="{target}"' in body
        study.refresh_from_db()
        assert study.status != target  # the GET changed nothing
        assert client.post(status, {"status": target}).status_code == 302
        study.refresh_from_db()
        assert study.status == target


def test_the_live_counts_answer_json(catalog, olga):
    response = client_for(olga).get(reverse("annotate:study_scope_counts"),
                                    {"run": catalog.run.pk, "datasets": catalog.dataset.pk})
    data = response.json()
    # 6 kept questions with text per subject: 6*5/2 = 15 pairs each.
    assert [(s["name"], s["n_eligible"], s["n_possible_pairs"]) for s in data["subjects"]] == [
        ("Mathematics", 6, 15), ("Physics", 6, 15)]
    assert (data["n_questions"], data["n_eligible"], data["n_possible_pairs"]) == (12, 12, 30)
    assert [e["n"] for e in data["excluded"]] == [0, 0, 0]
    assert client_for(olga).get(reverse("annotate:study_scope_counts")).status_code == 400


def test_the_preview_renders_markdown_and_drops_scripts(olga):
    response = client_for(olga).post(reverse("annotate:markdown_preview"),
                                     {"text": "**bold** <script>alert(1)</script>\n\n- one\n- two"})
    # Raw HTML is shown as text (annotate.core.rendering), never run.
    assert response.json() == {"html": "<p><strong>bold</strong> &lt;script&gt;alert(1)&lt;/script&gt;</p>\n"
                                       "<ul>\n<li>one</li>\n<li>two</li>\n</ul>"}


def test_the_page_lists_the_new_education_levels_on_onboarding(catalog, olga):
    client = client_for(olga)
    client.post(reverse("annotate:study_create"), form_data(catalog, onboarding_questions=["education_level"]))
    study = Study.objects.get(name="From the page")
    client.post(reverse("annotate:study_status", kwargs={"study_id": study.pk}), {"status": "open"})
    study.refresh_from_db()
    ada = make_evaluator(study, "ada", ready=False)
    page = client_for(ada.user).get(reverse("annotate:study_onboarding", kwargs={"study_id": study.pk}))
    body = page.content.decode()
    assert "Prefer not to say" in body and "Secondary (high) school student" in body
    assert 'name="field_of_study"' not in body and 'name="qualified_subjects"' not in body
    response = client_for(ada.user).post(reverse("annotate:study_onboarding", kwargs={"study_id": study.pk}),
                                         {"education_level": "prefer_not_to_say"})
    assert response.status_code == 302
    ada.refresh_from_db()
    assert (ada.education_level, ada.field_of_study) == ("prefer_not_to_say", "")


def test_an_export_carries_the_new_settings_and_an_older_file_gets_the_defaults(catalog, olga):
    from annotate.studies.services.study_transfer import study_import
    from annotate.studies.services.transfer_export import study_export

    data = form_data(catalog, pairs_mode="per_subject", n_pairs=2, onboarding_questions=["field_of_study"])
    client_for(olga).post(reverse("annotate:study_create"), data)
    document = study_export(study=Study.objects.get(name="From the page"))
    copy = study_import(document=document, rename="Copy").study
    assert (copy.pairs_per_subject, copy.consent_text, copy.onboarding_questions) == (2, "I agree.", ["field_of_study"])
    for key in ("pairs_per_subject", "consent_text", "onboarding_questions"):
        del document["study"][key]
    old = study_import(document=document, rename="Older file").study
    assert (old.pairs_per_subject, old.consent_text, old.onboarding_questions) == (
        None, DEFAULT_CONSENT, ["field_of_study", "education_level", "qualified_subjects"])  # always a consent step


CROWD = {"participant_param": "PROLIFIC_PID", "study_param": "STUDY_ID", "session_param": "SESSION_ID",
         "completion_code": "CX-42", "completion_url": "https://app.prolific.com/submissions/complete?cc=CX-42",
         "speeder_seconds": "2.5"}


def test_the_page_sets_the_crowd_platform_fields(catalog, olga):
    client = client_for(olga)
    page = client.get(reverse("annotate:study_create")).content.decode()
    # Prolific's parameter names and the 5 s threshold are the defaults offered
    for field, value in (("participant_param", "PROLIFIC_PID"), ("study_param", "STUDY_ID"),
                         ("session_param", "SESSION_ID"), ("speeder_seconds", "5.0")):
        assert f'name="{field}" value="{value}"' in page
    assert 'name="completion_code"' in page and 'name="completion_url"' in page
    response = client.post(reverse("annotate:study_create"), form_data(catalog, **CROWD))
    assert response.status_code == 302
    study = Study.objects.get(name="From the page")
    assert (study.participant_param, study.study_param, study.session_param, study.completion_code,
            study.completion_url, study.speeder_seconds) == (
        "PROLIFIC_PID", "STUDY_ID", "SESSION_ID", "CX-42",
        "https://app.prolific.com/submissions/complete?cc=CX-42", 2.5)


def test_the_edit_page_shows_and_changes_the_crowd_fields(catalog, olga):
    client = client_for(olga)
    client.post(reverse("annotate:study_create"), form_data(catalog, **CROWD))
    study = Study.objects.get(name="From the page")
    edit = reverse("annotate:study_edit", kwargs={"study_id": study.pk})
    page = client.get(edit).content.decode()
    assert 'name="completion_code" value="CX-42"' in page and 'name="speeder_seconds" value="2.5"' in page
    other = {**CROWD, "participant_param": "workerId", "study_param": "", "session_param": "",
             "completion_code": "", "completion_url": "", "speeder_seconds": ""}
    assert client.post(edit, form_data(catalog, **other)).status_code == 302
    study.refresh_from_db()
    assert (study.participant_param, study.study_param, study.session_param, study.completion_code,
            study.completion_url, study.speeder_seconds) == ("workerId", "", "", "", "", 5.0)  # blank: 5 s


@pytest.mark.parametrize(("field", "value", "message"), [
    # The service's messages (ERR_COMPLETION_URL, ERR_PARAM_NAME, ERR_PARAM_REPEATED) in the form's words.
    ("completion_url", "ftp://example.org/done",
     "Completion URL must start with https:// or http:// (entered: 'ftp://example.org/done')"),
    ("completion_url", "not a url", "Enter a valid URL."),
    ("participant_param", "PROLIFIC PID",
     "Participant id parameter must be letters, digits, '_' or '-' (at most 64) (entered: 'PROLIFIC PID')"),
    ("session_param", "STUDY_ID", "Participant, study and session parameters must differ; 'STUDY_ID' is used twice"),
    ("speeder_seconds", "-1", "Ensure this value is greater than or equal to 0."),
])
def test_bad_crowd_fields_are_refused_and_nothing_is_written(catalog, olga, field, value, message):
    # the service's checks run in the transaction that creates the study: a refusal leaves nothing behind
    response = client_for(olga).post(reverse("annotate:study_create"), form_data(catalog, **{**CROWD, field: value}))
    assert response.status_code == 400
    assert escape(message) in response.content.decode()
    assert not Study.objects.exists() and not Pair.objects.exists()


def test_the_adaptive_settings_are_marked_and_read_only_with_the_adaptive_design(catalog, olga):
    client = client_for(olga)
    page = client.get(reverse("annotate:study_create")).content.decode()
    # Without the page's script both stay visible, labelled; the script (a static file) hides them otherwise.
    adaptive = page.split('id="adaptive-settings"')[1].split("</div>\n    </div>")[0]
    assert '<label for="id_adaptive_min_comparisons">Minimum comparisons per question (adaptive design only):' \
        in adaptive
    assert '<label for="id_adaptive_random_share">Random share (adaptive design only):' in adaptive
    assert 'class="adaptive-only"' in page and "<script>" not in page
    # A uniform study refuses what they hold when it is not valid (named at the top, where it is seen)...
    response = client.post(reverse("annotate:study_create"),
                           form_data(catalog, adaptive_min_comparisons="-4", adaptive_random_share="7"))
    assert response.status_code == 400 and not Study.objects.exists()
    assert response.context["form"].non_field_errors() == [
        "Minimum comparisons per question (adaptive design only): the value is not accepted; the chosen design "
        "does not use it, but it must be valid or blank",
        "Random share (adaptive design only): the value is not accepted; the chosen design does not use it, but it "
        "must be valid or blank"]
    # ...and ignores a valid value: it is created with the defaults.
    response = client.post(reverse("annotate:study_create"),
                           form_data(catalog, adaptive_min_comparisons="4", adaptive_random_share="0.5"))
    assert response.status_code == 302
    study = Study.objects.get(name="From the page")
    assert (study.strategy, study.adaptive_min_comparisons, study.adaptive_random_share) == ("uniform", 5, 0.1)
    # The adaptive design checks them, and names them in the page's words.
    refused = client.post(reverse("annotate:study_create"),
                          form_data(catalog, name="Adaptive", strategy="adaptive", adaptive_random_share="7"))
    assert refused.status_code == 400 and not Study.objects.filter(name="Adaptive").exists()
    assert refused.context["form"].errors["adaptive_random_share"] == [
        "Ensure this value is less than or equal to 1.0."]
    made = client.post(reverse("annotate:study_create"), form_data(
        catalog, name="Adaptive", strategy="adaptive", adaptive_min_comparisons="3", adaptive_random_share="0.3"))
    assert made.status_code == 302
    study = Study.objects.get(name="Adaptive")
    assert (study.adaptive_min_comparisons, study.adaptive_random_share) == (3, 0.3)

