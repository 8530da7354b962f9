"""Report files: CSV that opens safely in a spreadsheet, the raw judgments,
JSON, plots, and the ``alignment_report`` command that writes the bundle."""
from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from annotate.services.alignment import JUDGMENT_COLUMNS, judgment_export_rows, study_alignment_report
from annotate.services.report_files import (
    PLOTS,
    csv_bytes,
    csv_cell,
    judgments_csv,
    render_plot,
    report_csv,
    report_json,
)
from tests.annotate.test_alignment_service import build_study

BOM = b"\xef\xbb\xbf"


def read_csv(content: bytes) -> list[list[str]]:
    assert content.startswith(BOM)
    return list(csv.reader(io.StringIO(content[len(BOM):].decode("utf-8"), newline="")))


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


def test_it_writes_a_bom_crlf_and_empty_cells_for_none():
    content = csv_bytes([["a", None, 1.5, True], ["ü", float("nan")]])
    assert content.startswith(BOM)
    assert content[len(BOM):].decode("utf-8") == "a,,1.5,true\r\nü,\r\n"


# --- files from a report --------------------------------------------------------


@pytest.fixture
def study(db):
    return build_study()[0]


@pytest.fixture
def report(study):
    return study_alignment_report(study=study, n_boot=100)


def test_the_report_csv_holds_table_2_with_numbers_and_reasons(report):
    rows = read_csv(report_csv(report))
    start = rows.index(["Agreement with each evaluator and with the consensus (%)"])
    assert rows[start + 1] == ["Method", "V1", "V2", "V3", "V4", "Evaluator mean", "Consensus", "κ (consensus)"]
    # EIP: ada 100, bo 66.67, cy 33.33, dee 100; mean 75; consensus 100, kappa 1
    assert rows[start + 2] == ["EIP", "100.0", "66.67", "33.33", "100.0", "75.0", "100.0", "1.0"]
    kappa = rows.index(["Cohen's kappa of each evaluator with each method"])
    # EIP kappas: 1, 0.4, -0.5 (a negative number stays a number: no quote), dee undefined; mean 0.3
    assert rows[kappa + 2] == ["EIP", "1.0", "0.4", "-0.5", "undefined", "0.3"]
    assert "undefined: EIP / V4: expected agreement p_e = 1: both raters used only the verdict 'b'" in [
        r[0] for r in rows if r]
    assert ["note: EIP: kappa mean over 3 of 4 evaluators; 1 undefined"] in rows


def test_the_report_csv_marks_the_tie_resolved_pair_with_its_votes_and_weights(report):
    rows = read_csv(report_csv(report))
    start = rows.index(["Pairs: votes, consensus and each method's verdict"])
    assert rows[start + 1] == ["#", "Subject", "Question a", "Question b", "Votes a", "Votes b", "Skips", "Consensus",
                               "How", "Weight a", "Weight b", "EIP", "Simple rank", "Accuracy", "1PL IRT", "2PL IRT"]
    # P4: ada a, cy b, bo skipped; weights ada 1, cy 0 -> a (see test_alignment_service)
    assert rows[start + 5] == ["4", "Mathematics", "q0-6", "q0-7", "1", "1", "1", "a", "tie_resolved", "1.0", "0.0",
                               "a", "b", "b", "a", "a"]
    assert rows[start + 2][7:11] == ["b", "majority", "", ""]


def test_the_report_csv_guards_a_hostile_pseudonym(study, report):
    report["evaluators"][0]["pseudonym"] = "=HYPERLINK(\"http://x\")"
    rows = read_csv(report_csv(report))
    cells = [c for r in rows for c in r]
    assert "'=HYPERLINK(\"http://x\")" in cells
    assert "=HYPERLINK(\"http://x\")" not in cells


def test_the_judgments_csv_has_one_row_per_judgment_or_skip_in_pair_order(study):
    rows = read_csv(judgments_csv(judgment_export_rows(study=study)))
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
    assert names == sorted(["report.json", "report.csv", "judgments.csv",
                            *(f"{n}.{f}" for n in PLOTS for f in ("png", "svg"))])
    summary = out.getvalue().strip()
    assert summary == (f"study 'Hand': 4 pairs, 4 evaluators; EIP agrees with the consensus on 100.0% of 4 pairs "
                       f"(kappa 1.00); wrote 11 files to {tmp_path / 'bundle'}")
    saved = json.loads((tmp_path / "bundle" / "report.json").read_text())
    assert saved["params"]["n_boot"] == 50


def test_the_command_names_user_mistakes(study, tmp_path):
    with pytest.raises(CommandError, match="no study named or numbered 'Nope'"):
        call_command("alignment_report", study="Nope", out=str(tmp_path))
    with pytest.raises(CommandError, match="min_votes must be an integer >= 1; got 0"):
        call_command("alignment_report", study=study.name, out=str(tmp_path), min_votes=0)
