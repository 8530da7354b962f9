"""Hostile values (NUL, 10,000 characters, a 20-digit number) in the report's crowd option and the
New-study page's stopping-rule fields: never a 5xx, and a refused study is not written."""
import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from annotate.models import Study
from tests.annotate.factories import judge, make_catalog, make_evaluator, make_researcher, make_study

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("value", ["on\x00", "x" * 10_000, "99999999999999999999"])
def test_hostile_crowd_option_and_stopping_fields(value):
    cache.clear()
    study = make_study(make_catalog(per_subject=4), n_pairs=4)
    judge(make_evaluator(study, "e1"), ["left", "right"])
    researcher = make_researcher("r")
    study.members.add(researcher)
    c = Client()
    c.force_login(researcher)
    for name in ("annotate:study_report", "annotate:study_report_json"):
        resp = c.get(reverse(name, args=[study.pk]), {"crowd": value, "n_boot": 20})
        assert resp.status_code < 500
    n = Study.objects.count()
    data = {"name": value, "target_reliability": value, "alpha": value, "max_judgments": value,
            "budget": value, "pay_per_judgment": value, "method_a": value, "method_b": value}
    resp = c.post(reverse("annotate:study_create"), data)
    assert resp.status_code == 400 and resp.context["form"].errors  # the page again, with its errors
    assert Study.objects.count() == n
