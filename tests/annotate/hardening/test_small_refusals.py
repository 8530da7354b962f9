"""Refusals that name what is wrong: the Markdown preview, the onboarding form and the adaptive
fields of the New-study form with another design."""
from __future__ import annotations

import pytest
from django.urls import reverse

from annotate.models import Study
from annotate.models.studies import DEFAULT_ADAPTIVE_MIN_COMPARISONS, DEFAULT_ADAPTIVE_RANDOM_SHARE
from tests.annotate.factories import client_for, make_catalog, make_evaluator, make_researcher
from tests.annotate.studies.test_study_create_page import form_data

pytestmark = pytest.mark.django_db


def test_the_preview_names_a_nul_character_and_a_long_text_each_for_what_it_is():
    client = client_for(make_researcher("olga"))
    nul = client.post(reverse("annotate:markdown_preview"), {"text": "a\x00b"})
    assert (nul.status_code, nul.json()) == (400, {"error": "No preview: Text: Null characters are not allowed."})
    long = client.post(reverse("annotate:markdown_preview"), {"text": "x" * 100_001})
    assert long.status_code == 400
    assert long.json() == {"error": "No preview: Text: Ensure this value has at most 100000 characters "
                                    "(it has 100001)."}


def test_onboarding_with_an_unknown_subject_is_a_400_naming_it_and_saves_nothing():
    catalog = make_catalog()
    study = Study.objects.create(name="S", scoring_run=catalog.run, seed=1, n_pairs=1)
    study.subjects.set(catalog.subjects)
    ada = make_evaluator(study, "ada", ready=False)
    response = client_for(ada.user).post(reverse("annotate:study_onboarding", kwargs={"study_id": study.pk}), {
        "field_of_study": "engineering", "education_level": "phd_student", "qualified_subjects": ["999999"]})
    assert response.status_code == 400
    assert "Select a valid choice. 999999 is not one of the available choices." in response.content.decode()
    ada.refresh_from_db()
    assert (ada.onboarded_at, ada.field_of_study) == (None, "")


@pytest.mark.parametrize(("field", "valid", "error"), [
    ("adaptive_min_comparisons", "4", "Enter a whole number."), ("adaptive_random_share", "0.5", "Enter a number.")])
def test_an_adaptive_field_holding_a_nul_is_refused_with_any_design(field, valid, error):
    catalog = make_catalog()
    client = client_for(make_researcher("olga"))
    response = client.post(reverse("annotate:study_create"), form_data(catalog, strategy="uniform", **{field: "4\x00"}))
    assert response.status_code == 400 and not Study.objects.exists()
    assert error in response.content.decode()
    client.post(reverse("annotate:study_create"), form_data(catalog, strategy="uniform", **{field: valid}))
    study = Study.objects.get()  # a valid value is not kept with another design: the defaults are
    assert (study.adaptive_min_comparisons, study.adaptive_random_share) == (
        DEFAULT_ADAPTIVE_MIN_COMPARISONS, DEFAULT_ADAPTIVE_RANDOM_SHARE)
