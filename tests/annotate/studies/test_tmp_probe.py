import pytest
from django.urls import reverse
from tests.annotate.factories import client_for, judge, make_evaluator, make_study
pytestmark = pytest.mark.django_db

def test_probe(catalog, olga):
    study = make_study(catalog, n_pairs=4, name="Frozen", owner=olga)
    judge(make_evaluator(study, "eve"), ["left"])
    r = client_for(olga).post(reverse("annotate:study_edit", args=[study.pk]), {"name": "x"}, follow=True)
    print(r.redirect_chain, r.status_code)
    c = r.content.decode()
    i = c.find("<main")
    print(c[i:i+1500])
