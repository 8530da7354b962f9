"""Credits within 1e-12 of 0 or 1 are rounded to exactly 0 or 1 on load, counted in the summary (issue 13)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from annotate.catalog.loaders.names import CREDITS_SNAPPED_NOTE, snap_credits
from annotate.catalog.services.uploads import UploadOptions, UploadSource, upload_check, upload_load
from annotate.runs.services.scoring import scoring_run_create, scoring_run_execute
from tests.annotate.factories import stored_responses

pytestmark = pytest.mark.django_db


def test_snap_credits_rounds_only_values_within_1e_12_of_0_or_1():
    import pandas as pd

    given = pd.Series([5e-324, 1e-300, 9.99e-13, 1e-12, 0.5, 1 - 1e-13, 1 - 1e-12, 0.0, 1.0, np.nan])
    out, n_low, n_high = snap_credits(given)
    # 1e-12 itself and 1 - 1e-12 (exactly representable neighbours aside) stay: the intervals are open
    expected = [0.0, 0.0, 0.0, 1e-12, 0.5, 1.0, 1 - 1e-12, 0.0, 1.0, np.nan]
    np.testing.assert_array_equal(out.to_numpy(), np.array(expected))
    assert (n_low, n_high) == (3, 1)


def test_a_5e_324_credit_loads_as_0_with_a_note_and_scores_without_nan(tmp_path: Path):
    path = tmp_path / "r.csv"
    # q2's only non-zero credit is subnormal: unrounded, EIP would divide by 5e-324
    path.write_text("question_id,m1,m2,m3\nq1,1,0,1\nq2,5e-324,0,0\nq3,0,1,0.9999999999999\nq4,1,1,0\n")
    checked = upload_check(source=UploadSource(responses=path), options=UploadOptions(file_format="wide",
                                                                                      dataset="D", name="tiny"))
    response_set = upload_load(checked=checked)
    stored = {(q, m): c for q, m, c in stored_responses(response_set)}
    assert stored[("q2", "m1")] == 0.0 and stored[("q3", "m3")] == 1.0
    assert CREDITS_SNAPPED_NOTE.format(count=2, low=1, high=1) in response_set.summary["notes"]
    run = scoring_run_execute(run=scoring_run_create(response_set=response_set,
                                                     params={"methods": ["eip", "accuracy"]}))
    scores = [r.scores.get("eip") for r in run.question_results.all()]
    assert run.status == "done"
    assert all(s is None or np.isfinite(s) for s in scores)
