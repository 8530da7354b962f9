"""Every number field of every form has a maximum (a decimal column's digits count as one), and
the seconds-like study settings share one cap (``annotate.core.SECONDS_MAX``, a week): a value
past it is refused on the New-study page and on the manage page, and nothing is saved."""
from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import pytest
from django import forms
from django.urls import reverse

from annotate.analyses.forms import analysis_form_class
from annotate.core import SECONDS_MAX
from annotate.models import AnalysisKind, Study
from annotate.studies.forms.judging import StudyQualitySettingsForm
from annotate.studies.forms.studies import StudyForm
from annotate.studies.services.study_quality import study_quality_settings_update
from tests.annotate.factories import client_for, make_catalog, make_researcher
from tests.annotate.studies.test_study_create_page import form_data

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[3]
NUMBER_FIELDS = (forms.IntegerField, forms.FloatField, forms.DecimalField)


def _form_classes() -> list[tuple[str, type[forms.BaseForm]]]:
    modules = list((ROOT / "annotate").glob("*/forms.py")) + list((ROOT / "annotate").glob("*/forms/*.py"))
    found = []
    for path in modules:
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        module = importlib.import_module(name)
        found += [(f"{name}.{n}", c) for n, c in vars(module).items()
                  if inspect.isclass(c) and issubclass(c, forms.BaseForm) and c.__module__ == name]
    found += [(f"analysis {kind}", analysis_form_class(kind)) for kind in AnalysisKind.values]
    return found


def test_every_number_field_of_every_form_has_a_maximum():
    classes = _form_classes()
    assert {"annotate.studies.forms.studies.StudyForm", "analysis case_study"} <= {n for n, _ in classes}
    unbounded = [f"{name}.{field}" for name, cls in classes for field, f in cls.base_fields.items()
                 if isinstance(f, NUMBER_FIELDS) and f.max_value is None
                 and not (isinstance(f, forms.DecimalField) and f.max_digits is not None)]
    assert unbounded == []


def test_the_seconds_settings_share_one_cap():
    assert StudyForm.base_fields["speeder_seconds"].max_value == SECONDS_MAX == 604_800
    quality = StudyQualitySettingsForm.base_fields
    assert quality["speeder_seconds"].max_value == quality["completion_min_seconds"].max_value == SECONDS_MAX


def test_a_speeder_threshold_past_the_cap_is_refused_on_both_pages():
    catalog, olga = make_catalog(), make_researcher("olga")
    client = client_for(olga)
    response = client.post(reverse("annotate:study_create"),
                           form_data(catalog, speeder_seconds="99999999999999999999"))
    assert response.status_code == 400 and not Study.objects.exists()
    assert "Ensure this value is less than or equal to 604800" in response.content.decode()
    client.post(reverse("annotate:study_create"), form_data(catalog, speeder_seconds=str(SECONDS_MAX)))
    study = Study.objects.get()
    assert study.speeder_seconds == SECONDS_MAX
    response = client.post(reverse("annotate:study_quality_settings", kwargs={"study_id": study.pk}), {
        "speeder_seconds": "99999999999999999999", "participant_param": "PROLIFIC_PID", "study_param": "",
        "session_param": "", "completion_code": "", "completion_url": ""}, follow=True)
    assert "Settings not saved" in response.content.decode()
    assert "less than or equal to 604800" in response.content.decode()
    with pytest.raises(ValueError, match=r"^speeder_seconds must be a finite number from 0 to 604,800; got 1e\+20$"):
        study_quality_settings_update(study=study, speeder_seconds=1e20, participant_param="PROLIFIC_PID",
                                      study_param="", session_param="", completion_code="", completion_url="")
    study.refresh_from_db()
    assert study.speeder_seconds == SECONDS_MAX
