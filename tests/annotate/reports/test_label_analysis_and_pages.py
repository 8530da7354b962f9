"""The report's label section is a view of the human-label analysis (issue 15, point 4),
and a large report is paged (issue 16, point 3): pairs column-wise, one page of cells on the
page, one page of pairs in report.json, every pair in the streamed pairs.csv.

The study is the hand-built one of ``test_pools_labels``: one subject, questions q0..q7 with
EIP (eip_scaled) 10 20 50 40 30 60 70 65 and ``level`` 1 2 3 1 2 2 3 1.
"""
from __future__ import annotations

import json

import pytest

from annotate.analyses.services import analysis_run_create, analysis_run_execute
from annotate.analyses.services.human_labels import human_labels
from annotate.analyses.services.params import check_params
from annotate.core.downloads import rows_csv_bytes
from annotate.models import AnalysisKind
from annotate.reports.selectors.alignment import study_judgment_rows
from annotate.reports.services import alignment_report_compute
from annotate.reports.services.report_files import judgments_csv, judgments_csv_stream, pairs_csv_stream, report_json
from annotate.reports.services.tables import page_tables, pairs_table, with_parameters
from tests.annotate.reports.test_pools_labels import study  # noqa: F401  (the fixture)
from tests.annotate.reports.test_schema import SCHEMA, errors

pytestmark = pytest.mark.django_db


def _analysis(study, *, harder: bool, margin: float, seed: int) -> dict:  # noqa: F811
    params = check_params(AnalysisKind.HUMAN_LABELS, {"label": "metadata:level", "label_higher_is_harder": harder,
                                                      "margin": margin, "run": study.scoring_run_id, "seed": seed})
    return human_labels(study.scoring_run.response_set, params, lambda f, m: None)


def _eip(doc: dict) -> dict:
    return next(m for m in doc["methods"] if m["method"] == "eip")


@pytest.mark.parametrize("harder", [True, False])
def test_the_label_section_is_the_human_label_analysis(study, harder):  # noqa: F811
    report = alignment_report_compute(study=study, n_boot=20, rng=7, label_higher_is_harder=harder,
                                      label_margin=1.5)
    section = report.labels
    assert section.analysis == _analysis(study, harder=harder, margin=1.5, seed=7)
    assert section.analysis_run is None  # none stored: computed with the analysis's own function
    assert section.direction == ("higher = harder" if harder else "higher = easier")
    # every same-subject pair of the 8 labelled questions: 28, of which 7 have equal levels.
    # EIP agrees with 'higher = harder' on 14 of the 21 others (level 1 vs 2: 4 of 9, 1 vs 3: 5 of 6,
    # 2 vs 3: 5 of 6) and with 'higher = easier' on the other 7; at margin 1.5 only levels 1 vs 3 count.
    zero, wide = _eip(section.analysis)["pairs"]
    assert (zero["margin"], zero["n_pairs"], zero["n_label_ties"], zero["n_method_ties"]) == (0.0, 21, 7, 0)
    assert (zero["n_agree"], zero["n_disagree"]) == ((14, 7) if harder else (7, 14))
    assert zero["agreement"] == pytest.approx(2 / 3 if harder else 1 / 3, abs=1e-12)
    assert (wide["margin"], wide["n_pairs"], wide["n_label_ties"]) == (1.5, 6, 22)
    assert (wide["n_agree"], wide["n_disagree"]) == ((5, 1) if harder else (1, 5))
    lo, hi = zero["agreement_ci"]
    assert 0.0 <= lo <= zero["agreement"] <= hi <= 1.0
    assert report.parameters()["label_direction"] == ("higher_is_harder" if harder else "higher_is_easier")


def test_reversing_the_direction_negates_the_study_question_figures(study):  # noqa: F811
    up = alignment_report_compute(study=study, n_boot=20, rng=0).labels
    down = alignment_report_compute(study=study, n_boot=20, rng=0, label_higher_is_harder=False).labels
    assert down.spearman["eip"].value == pytest.approx(-up.spearman["eip"].value, abs=1e-12)
    a, b = up.scopes["study_pairs"].methods["eip"], down.scopes["study_pairs"].methods["eip"]
    assert (a.n_pairs, b.n_pairs) == (3, 3) and a.n_agree + b.n_agree == 3


def test_a_stored_analysis_with_the_same_parameters_is_read(study):  # noqa: F811
    params = {"label": "metadata:level", "label_higher_is_harder": True, "margin": 0.2, "n_boot": 200,
              "run": study.scoring_run_id, "seed": 3}
    stored = analysis_run_execute(run=analysis_run_create(kind=AnalysisKind.HUMAN_LABELS,
                                                          response_set=study.scoring_run.response_set,
                                                          params=params))
    report = alignment_report_compute(study=study, n_boot=20, rng=3)
    assert report.labels.analysis_run == stored.pk
    assert report.labels.analysis == json.loads(json.dumps(stored.result))
    page = page_tables(report)["labels_analysis"]
    assert [c.value for c in page.rows[0][:4]] == ["eip", "EIP", 0.0, 21]


def test_the_json_pages_the_pairs_and_stays_valid(study):  # noqa: F811
    report = alignment_report_compute(study=study, n_boot=20, rng=0)
    document = json.loads(report_json(report, pairs_offset=1, pairs_limit=2))
    assert document["pairs_page"] == {"offset": 1, "count": 2, "total": 4}
    assert [p["pair_id"] for p in document["pairs"]] == [p.pair_id for p in report.pairs[1:3]]
    assert errors(document, SCHEMA) == []
    whole = json.loads(report_json(report))
    assert whole["pairs_page"] == {"offset": 0, "count": 4, "total": 4} and len(whole["pairs"]) == 4


def test_the_page_shows_one_page_of_pairs(study, monkeypatch):  # noqa: F811
    report = alignment_report_compute(study=study, n_boot=20, rng=0)
    monkeypatch.setitem(__import__("annotate.reports.services.tables", fromlist=["PER_PAGE"]).PER_PAGE, "pairs", 3)
    table = page_tables(report, pages={"pairs": 2})["pairs"]
    assert (table.page.number, table.page.n_pages, table.page.first, table.page.last) == (2, 2, 4, 4)
    assert [row[0].value for row in table.rows] == [report.pairs[3].pair_id]
    clamped = page_tables(report, pages={"pairs": 99})["pairs"]
    assert clamped.page.number == 2


def test_the_streamed_pairs_csv_has_the_cells_of_every_pair(study):  # noqa: F811
    report = alignment_report_compute(study=study, n_boot=20, rng=0)
    full = with_parameters(pairs_table(report), report.parameters())  # every row as page cells
    expected = rows_csv_bytes([[c.key for c in full.columns], *([cell.value for cell in row] for row in full.rows)])
    assert b"".join(pairs_csv_stream(report)) == expected
    assert expected.count(b"\r\n") == 5  # header + 4 pairs


def test_the_streamed_judgments_csv_is_the_judgments_csv(study):  # noqa: F811
    rows = study_judgment_rows(study=study)
    assert len(rows) == 13
    assert b"".join(judgments_csv_stream(iter(rows))) == judgments_csv(rows)


def test_the_pairs_read_like_rows_and_round_trip(study):  # noqa: F811
    report = alignment_report_compute(study=study, n_boot=20, rng=0)
    again = type(report).from_json(report.to_json())
    assert again.pairs == report.pairs
    assert [p.consensus.verdict for p in report.pairs] == ["b", "a", "b", "a"]
    assert report.pairs[-1].position == 3
