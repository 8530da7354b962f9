"""The report page's cache: repeated requests reuse one computation, and any
new judgment, evaluator or parameter gives a fresh report."""
from __future__ import annotations

import pytest
from django.core.cache import cache

import annotate.reports.services.cache as report_cache
from tests.annotate.factories import judge, make_catalog, make_evaluator, make_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def counted(monkeypatch):
    cache.clear()
    calls = []
    real = report_cache.alignment_report_compute

    def counting(**kwargs):
        calls.append(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(report_cache, "alignment_report_compute", counting)
    return calls


def test_the_same_report_is_computed_once_and_new_judgments_refresh_it(counted):
    study = make_study(make_catalog(per_subject=4), n_pairs=4, name="Cached")
    ada = make_evaluator(study, "evaluator-ada1")
    judge(ada, ["left", "right"])

    first = report_cache.study_alignment_report_cached(study=study, n_boot=50)
    second = report_cache.study_alignment_report_cached(study=study, n_boot=50)
    assert len(counted) == 1 and first == second

    report_cache.study_alignment_report_cached(study=study, n_boot=60)  # another parameter
    assert len(counted) == 2

    judge(ada, ["left"])  # a new judgment changes the fingerprint
    third = report_cache.study_alignment_report_cached(study=study, n_boot=50)
    assert len(counted) == 3 and third != first

    make_evaluator(study, "evaluator-bob2")  # a new evaluator too
    report_cache.study_alignment_report_cached(study=study, n_boot=50)
    assert len(counted) == 4
