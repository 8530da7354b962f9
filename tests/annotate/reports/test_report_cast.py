"""The simulated study of the report tests (:func:`tests.annotate.report_cast.judged_study`) is the same
study whatever primary keys its rows get: PostgreSQL does not reset its sequences between tests, and the
order in which an evaluator is served pairs hashes the pairs' keys, so a cast that drew its answers in
serving order gave a different study (and now and then a negative SSR) from run to run."""
from __future__ import annotations

import pytest
from django.db import transaction

from annotate.models import Judgment
from tests.annotate.factories import make_catalog, make_study
from tests.annotate.report_cast import judged_study

pytestmark = pytest.mark.django_db


def answers(**kwargs) -> list[tuple]:
    """Every judgment of a freshly simulated study, named by content (evaluator, the pair's place and
    questions, the question called harder), never by primary key; the study is rolled back."""
    with transaction.atomic():
        study = judged_study(**kwargs)
        rows = sorted(Judgment.objects.filter(pair__study=study).values_list(
            "participation__user__username", "pair__position", "pair__question_a__external_id",
            "pair__question_b__external_id", "choice", "harder_question__external_id"))
        transaction.set_rollback(True)
    # "left"/"right" depend on the side each evaluator was shown (a hash of the pair's key): keep the outcome
    return [(who, position, a, b, choice == "skip", harder) for who, position, a, b, choice, harder in rows]


@pytest.mark.parametrize("kwargs", [{"n_evaluators": 1, "p_skip": 0.0}, {}])
def test_the_simulated_judgments_do_not_depend_on_the_rows_primary_keys(kwargs):
    before = answers(**kwargs)
    make_study(make_catalog(per_subject=4), n_pairs=5)  # every later key moves on: pairs, questions, users
    after = answers(**kwargs)
    assert len(before) >= 24 and after == before
