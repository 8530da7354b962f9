"""The report's all-same-subject-pairs label scope is counted by the streaming kernel
of the human-label analysis (issue 15, point 4): it equals the enumeration of the pairs."""
from __future__ import annotations

import numpy as np
import pytest

from annotate.models import Question
from annotate.reports.selectors.alignment import study_alignment_data
from annotate.reports.services import human
from annotate.reports.services.labels import (
    SCOPE_ALL_PAIRS,
    SCOPE_TEXT,
    _all_pairs_scope,
    _same_subject_pairs,
    _scope,
)
from tests.annotate.reports.test_report import build_study

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("levels", [(1, 2, 3, 1, 2, 2, 3, 1), (1, None, 3, 3, 2, None, 4, 1)])
def test_the_kernel_scope_equals_the_enumerated_pairs(levels):
    study, pairs = build_study()
    questions = [q for p in pairs for q in (p.question_a, p.question_b)]
    for question, level in zip(questions, levels):
        Question.objects.filter(pk=question.pk).update(metadata={} if level is None else {"level": level})
    data = study_alignment_data(study=study, run=study.scoring_run)
    available = [m.key for m in human.method_availability(data) if m.available]
    by_id = dict(zip((q.pk for q in questions), levels))
    labels = np.array([np.nan if by_id.get(int(q)) is None else by_id[int(q)] for q in data.question_ids], float)
    fast = _all_pairs_scope(data, labels, available)
    slow = _scope(data, labels, _same_subject_pairs(data), available, None, description=SCOPE_TEXT[SCOPE_ALL_PAIRS])
    assert fast.n_pairs == slow.n_pairs > 0
    for key in available:
        assert fast.methods[key] == slow.methods[key], key
