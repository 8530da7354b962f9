"""Report files: CSV that opens safely in a spreadsheet, the raw judgments,
JSON, plots, and the ``alignment_report`` command that writes the bundle."""
from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from annotate.core.downloads import csv_cell, rows_csv_bytes as csv_bytes
from annotate.reports.selectors.alignment import JUDGMENT_COLUMNS, study_judgment_rows
from annotate.reports.services import study_alignment_report
from annotate.reports.services.model import AlignmentReport
from annotate.reports.services.report_files import (
    PLOTS,
    judgments_csv,
    render_plot,
    report_csv,
    report_files,
    report_json,
    report_zip,
    report_zip_stream,
)
from annotate.reports.services.tables import page_tables
from tests.annotate.reports.test_report import build_study

BOM = b"\xef\xbb\xbf"  # never written: every download is UTF-8 without a byte-order mark


def alignment_report(document: dict) -> AlignmentReport:
    return AlignmentReport.from_json(document)


def read_csv(content: bytes) -> list[list[str]]:
    assert not content.startswith(BOM)
    return list(csv.reader(io.StringIO(content.decode("utf-8"), newline="")))


# --- the guard (no database) --------------------------------------------------


@pytest.mark.parametrize("dangerous", ["=cmd|' /C calc'!A0", "+x", "-x", "@x", "\tx", "\rx", "=1+1", "-1+2", "--"])
def test_it_prefixes_text_that_a_spreadsheet_would_run_as_a_formula(dangerous):
    assert csv_cell(dangerous) == "'" + dangerous
    rows = read_csv(csv_bytes([[dangerous]]))
    assert rows == [["'" + dangerous]]


@pytest.mark.parametrize("number", [-0.25, -3, 0, 2.5, 1e-9])
def test_it_leaves_numbers_alone_even_negative_ones(number):
    assert csv_cell(number) == number
    assert read_csv(csv_bytes([[number]])) == [[repr(number) if isinstance(number, float) else str(number)]]


@pytest.mark.parametrize("text", ["-0.25", "+3", "-1e-3", "plain", "a=b", "évaluateur-3f2a", ""])
def test_it_leaves_numeric_and_harmless_text_alone(text):
    assert csv_cell(text) == text


def test_it_writes_utf8_without_a_bom_lf_and_empty_cells_for_none():
    # one format for every download (annotate.core.downloads): the run tables are written the same way
    content = csv_bytes([["a", None, 1.5, True], ["ü", float("nan")]])
    assert content.decode("utf-8") == "a,,1.5,True\r\nü,\r\n"


# --- files from a report --------------------------------------------------------


@pytest.fixture
def study(db):
    return build_study()[0]


@pytest.fixture
def report(study):
    return study_alignment_report(study=study, n_boot=100)


PARAMETER_COLUMNS = ["study", "scoring_run", "min_votes", "tie_rule", "label_key", "label_direction", "n_boot",
                     "bootstrap_seed", "scale_n_boot", "label_n_boot"]


def test_the_report_csv_holds_table_2_with_numbers_and_reasons(study, report):
    # report.csv is the tidy agreement table (issue 11): one row per method and rater, raw fractions, then the
    # report's parameters as constant columns (issue 12, point 9)
    rows = read_csv(report_csv(report))
    assert rows[0] == ["method", "method_label", "rater", "pseudonym", "agreement", "agreement_excluding_ties",
                       "n_pairs", "n_agree", "n_ties", "n_undefined", "kappa", *PARAMETER_COLUMNS]
    # min_votes 1, ties evaluator_weight, no label, 100 replicates, seed 0 (defaults); scale 100, no label analysis
    assert {tuple(r[11:]) for r in rows[1:]} == {
        (str(study.pk), str(study.scoring_run_id), "1", "evaluator_weight", "", "", "100", "0", "100", "")}
    eip = {r[2]: r for r in rows[1:] if r[0] == "eip"}
    # EIP: ada 100, bo 66.67, cy 33.33, dee 100; consensus 100, kappa 1
    assert [float(eip[v][4]) for v in ("V1", "V2", "V3", "V4", "consensus")] == pytest.approx(
        [1.0, 2 / 3, 1 / 3, 1.0, 1.0], abs=1e-12)
    assert eip["consensus"][10] == "1.0" and eip["consensus"][3] == ""
    # EIP kappas, orientation-free 2 p_o - 1: ada 1, bo 2 * 2/3 - 1 = 1/3, cy 2 * 1/3 - 1 = -1/3 (a negative
    # number stays a number: no quote), dee 1 (one agreeing pair)
    assert [float(eip[v][10]) for v in ("V1", "V2", "V3", "V4")] == pytest.approx([1.0, 1 / 3, -1 / 3, 1.0],
                                                                                  abs=1e-12)
    assert not eip["V3"][10].startswith("'")
    # Simple Rank ties on dee's only pair: kappa undefined (blank)
    sr = {r[2]: r for r in rows[1:] if r[0] == "simple_rank"}
    assert sr["V4"][10] == ""
    # the page's table 2 shows the same in percent, with the evaluator mean 75 and the reasons as tooltips
    tables = page_tables(alignment_report(report))
    table2 = tables["table2"]
    assert table2.header == ("Method", "V1", "V2", "V3", "V4", "Evaluator mean", "Consensus", "Consensus excl. ties",
                             "Ties (consensus)", "κ (consensus)")
    assert [c.text for c in table2.page_rows()[0]] == ["EIP", "100.0", "66.7", "33.3", "100.0", "75.0", "100.0",
                                                       "100.0", "0", "1.00"]
    kappa = tables["kappa"].page_rows()[0]
    assert [c.text for c in kappa] == ["EIP", "1.00", "0.33", "-0.33", "1.00", "0.50"]
    # Simple Rank (tie a a b): ada 1/3 -> -1/3, bo 2/2 -> 1, cy 1/2 -> 0, dee none decided; mean 2/9
    kappa = tables["kappa"].page_rows()[1]
    assert [c.text for c in kappa] == ["Simple rank", "-0.33", "1.00", "0.00", "undefined", "0.22"]
    assert kappa[4].reason == "no pair has a verdict FIRST or SECOND from both"
    assert any("kappa mean over 3 of 4 evaluators; 1 undefined" in n for n in tables["kappa"].notes)
    assert any("kappa on pairs is orientation-free: each pair counts in both orders, so chance agreement is 1/2 and "
               "kappa = 2 p_o - 1" in n for n in tables["kappa"].notes)


def test_the_pairs_csv_marks_the_tie_resolved_pair_with_its_votes_and_weights(report):
    rows = read_csv(report_files(report, [])["pairs.csv"])
    assert rows[0] == ["pair_id", "position", "subject", "dataset_a", "question_a", "question_a_pk", "dataset_b",
                       "question_b", "question_b_pk", "votes_a", "votes_b", "n_skips", "consensus", "how", "weight_a",
                       "weight_b", "verdict_eip", "verdict_simple_rank", "verdict_accuracy", "verdict_irt_1pl",
                       "verdict_irt_2pl", "at_bound_irt_1pl", "at_bound_irt_2pl", *PARAMETER_COLUMNS]
    # P4: ada a, cy b, bo skipped; weights ada 1, cy 0 -> a (see test_alignment_service)
    p4 = rows[4]
    dataset = report["pairs"][3]["question_a"]["dataset"]
    assert p4[1:4] == ["4", "Mathematics", dataset]
    assert [p4[4], p4[6], p4[7], *p4[9:21]] == ["q0-6", dataset, "q0-7", "1", "1", "1", "a", "tie_resolved", "1.0",
                                                "0.0", "a", "b", "b", "a", "a"]
    assert rows[1][12:16] == ["b", "majority", "", ""]


def test_the_report_csv_guards_a_hostile_pseudonym(study, report):
    report["evaluators"][0]["pseudonym"] = "=HYPERLINK(\"http://x\")"
    rows = read_csv(report_csv(report))
    cells = [c for r in rows for c in r]
    assert "'=HYPERLINK(\"http://x\")" in cells
    assert "=HYPERLINK(\"http://x\")" not in cells


def test_the_judgments_csv_has_one_row_per_judgment_or_skip_in_pair_order(study):
    rows = read_csv(judgments_csv(study_judgment_rows(study=study)))
    assert rows[0] == list(JUDGMENT_COLUMNS)
    assert len(rows) == 1 + 13  # 13 judgments, 2 of them skips
    first = dict(zip(rows[0], rows[1]))
    # ada on P1: q1 (b) on the left, pressed left -> b harder
    assert (first["evaluator"], first["question_a"], first["question_b"]) == ("ada", "q0-0", "q0-1")
    assert (first["left_question"], first["right_question"], first["choice"]) == ("q0-1", "q0-0", "left")
    assert (first["harder_question"], first["verdict"], first["seconds"]) == ("q0-1", "b", "3.0")
    assert (first["field_of_study"], first["education_level"], first["subject"]) == ("mathematics", "master_student",
                                                                                   "Mathematics")
    skips = [dict(zip(rows[0], r)) for r in rows[1:] if r[rows[0].index("choice")] == "skip"]
    assert [(s["evaluator"], s["harder_question"], s["verdict"]) for s in skips] == [("cy", "", "skip"),
                                                                                     ("bo", "", "skip")]


def test_the_json_is_the_report(report):
    assert json.loads(report_json(report)) == json.loads(json.dumps(report))


@pytest.mark.parametrize("name", sorted(PLOTS))
def test_every_plot_renders_as_png_and_svg(report, name):
    assert render_plot(report, name=name, fmt="png").startswith(b"\x89PNG\r\n\x1a\n")
    svg = render_plot(report, name=name, fmt="svg")
    assert b"<svg" in svg[:2000]


def test_an_unknown_plot_or_format_is_refused(report):
    with pytest.raises(ValueError, match="name must be one of"):
        render_plot(report, name="pie", fmt="png")
    with pytest.raises(ValueError, match=r"fmt must be one of \['png', 'svg'\]; got 'gif'"):
        render_plot(report, name="heatmap", fmt="gif")


def test_the_command_writes_the_bundle_and_sums_it_up(study, tmp_path):
    out = io.StringIO()
    call_command("alignment_report", study=study.name, out=str(tmp_path / "bundle"), n_boot=50, stdout=out)
    names = sorted(p.name for p in (tmp_path / "bundle").iterdir())
    # the files of report.zip, the zip itself and the plots (issue 11: one tidy CSV per table and a codebook)
    tables = ["agreement.csv", "consensus.csv", "evaluators.csv", "excluded_evaluators.csv", "irr.csv", "pools.csv",
              "labels_analysis.csv", "labels.csv", "pairs.csv", "human_scale_summary.csv", "human_scale_methods.csv",
              "human_scale.csv",
              "human_scale_evaluators.csv"]
    assert names == sorted([*tables, "report.json", "parameters.json", "judgments.csv", "codebook.md", "report.zip",
                            *(f"{n}.{f}" for n in PLOTS for f in ("png", "svg"))])
    summary = out.getvalue().strip()
    assert summary == (f"study 'Hand': 4 pairs, 4 evaluators; EIP agrees with the consensus on 100.0% of 4 pairs "
                       f"(kappa 1.00); model pools not computed yet; wrote 30 files to {tmp_path / 'bundle'}")
    saved = json.loads((tmp_path / "bundle" / "report.json").read_text())
    assert saved["params"]["n_boot"] == 50


def test_the_command_names_user_mistakes(study, tmp_path):
    with pytest.raises(CommandError, match="no study named or numbered 'Nope'"):
        call_command("alignment_report", study="Nope", out=str(tmp_path))
    with pytest.raises(CommandError, match="min_votes must be an integer >= 1; got 0"):
        call_command("alignment_report", study=study.name, out=str(tmp_path), min_votes=0)


def test_the_streamed_zip_holds_the_files_of_the_zip_byte_for_byte_and_comes_in_chunks(study, report, monkeypatch):
    import zipfile
    from datetime import datetime

    import annotate.reports.services.report_files as report_files_module

    class FixedClock(datetime):  # the codebook says when it was written: one instant for both zips
        @classmethod
        def now(cls, tz=None):
            return datetime(2026, 12, 3, 12, 0, 0, tzinfo=tz)

    monkeypatch.setattr(report_files_module, "datetime", FixedClock)
    judgments = study_judgment_rows(study=study)
    chunks = list(report_zip_stream(report, iter(judgments)))
    streamed = zipfile.ZipFile(io.BytesIO(b"".join(chunks)))
    whole = zipfile.ZipFile(io.BytesIO(report_zip(report, judgments)))
    assert streamed.testzip() is None
    assert sorted(streamed.namelist()) == sorted(whole.namelist()) == sorted(report_files(report, judgments))
    for name in whole.namelist():
        assert streamed.read(name) == whole.read(name), name
    assert len(chunks) > len(whole.namelist()) and all(chunks)  # one or more chunks per member, none empty
