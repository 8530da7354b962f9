"""Issue 3's end-to-end check on the real MMLU-Pro matrix (12,032 questions x 32 models):
load it with ``load_responses``, score it with the service, and compare the stored
EIP competency with :func:`scoring.eip.eip` run on the CSV file read by pandas."""
from __future__ import annotations

import csv
import io

import numpy as np
import pandas as pd
import pytest
from django.core.management import call_command

from annotate.models import LanguageModel, ModelResult, Question, ResponseSet, RunStatus, Subject
from annotate.runs.services.scoring import scoring_run_create, scoring_run_execute
from scoring.eip import eip
from tests.annotate.factories import n_stored_responses

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

TOL = 1e-12
# The IRT fits take minutes on this matrix; the assertion is about EIP.
FAST_METHODS = ["eip", "simple_rank", "accuracy", "weighted_accuracy"]


def test_mmlu_pro_loads_and_the_stored_eip_equals_eip_on_the_csv(shared_data):
    folder = shared_data / "mmlu-pro"
    with open(folder / "responses_binary.csv", newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        observed = sum(1 for row in reader for cell in row[1:] if cell.strip() != "")

    call_command("load_responses", folder=folder, dataset="MMLU-Pro", subject_column="category",
                 keep_columns="src,mmlu_subject,mmlu_level", stdout=io.StringIO(), stderr=io.StringIO(),
                 verbosity=0)
    assert Question.objects.count() == 12_032
    assert Subject.objects.count() == 14
    assert LanguageModel.objects.count() == 32 == len(header) - 1
    assert n_stored_responses() == observed

    run = scoring_run_create(response_set=ResponseSet.objects.get(), params={"methods": FAST_METHODS})
    run = scoring_run_execute(run=run)
    assert run.status == RunStatus.DONE

    frame = pd.read_csv(folder / "responses_binary.csv", index_col="question_id")
    expected = eip(frame.to_numpy(dtype=np.float64))  # blank -> NaN = not observed
    stored = {r.model.name: r.score("eip") for r in ModelResult.objects.filter(run=run).select_related("model")}
    assert sorted(stored) == sorted(frame.columns)
    for name, pi_m in zip(frame.columns, expected.competency):
        assert abs(stored[name] - pi_m) <= TOL, name
    assert run.question_results.filter(kept=True).count() == int(expected.kept.sum())
