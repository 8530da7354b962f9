"""The report download is one zip of tidy CSVs, report.json, judgments.csv and a
codebook (issue 11, point 7): pandas reads every CSV as is, ids stay integers,
and the values are the JSON's."""
from __future__ import annotations

import io
import json
import zipfile
from importlib.metadata import version

import pandas as pd
import pytest
from django.contrib.auth.models import Group
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from tests.annotate.factories import make_user
from tests.annotate.reports.test_pools_stored import pool_study, store_pools

pytestmark = pytest.mark.django_db
TOL = 1e-12
TABLES = ("agreement.csv", "consensus.csv", "evaluators.csv", "excluded_evaluators.csv", "irr.csv", "pools.csv",
          "labels_analysis.csv", "labels.csv", "pairs.csv", "human_scale_summary.csv", "human_scale_methods.csv",
          "human_scale.csv",
          "human_scale_evaluators.csv")


@pytest.fixture
def downloaded():
    cache.clear()
    study = pool_study()
    stored = store_pools(study)
    rhea = make_user("rhea")
    rhea.groups.add(Group.objects.get_or_create(name="researcher")[0])
    study.members.add(rhea)
    client = Client()
    client.force_login(rhea)
    kw = {"study_id": study.pk}
    response = client.get(reverse("annotate:study_report_zip", kwargs=kw), {"n_boot": 40})
    assert response["Content-Type"] == "application/zip"
    stem = f"study-{study.pk}_run-{study.scoring_run_id}_minvotes-1_ties-evaluator-weight_boot-40-seed-0_label-none"
    assert response["Content-Disposition"] == f'attachment; filename="{stem}_report.zip"'
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    csv = client.get(reverse("annotate:study_report_csv", kwargs=kw), {"n_boot": 40}).content
    return study, stored, archive, csv


def read(archive: zipfile.ZipFile, name: str) -> pd.DataFrame:
    return pd.read_csv(io.BytesIO(archive.read(name)))  # as is


def test_the_zip_holds_one_tidy_csv_per_table_the_json_the_judgments_and_a_codebook(downloaded):
    _, _, archive, csv = downloaded
    assert sorted(archive.namelist()) == sorted([*TABLES, "judgments.csv", "report.json", "parameters.json",
                                                  "codebook.md"])
    assert archive.read("agreement.csv") == csv  # report.csv is the main agreement table alone
    for name in (*TABLES, "judgments.csv"):
        frame = read(archive, name)
        assert list(frame.columns) == [c for c in frame.columns if c == c.lower() and " " not in c], name
        text = archive.read(name).decode("utf-8")
        assert not any(line.startswith(("note", "undefined")) for line in text.splitlines()), name


def test_pandas_reads_ids_as_integers_and_the_values_are_the_json(downloaded):
    _study, _stored, archive, _ = downloaded
    report = json.loads(archive.read("report.json"))

    pairs = read(archive, "pairs.csv")
    for column in ("pair_id", "position", "question_a_pk", "question_b_pk", "votes_a", "votes_b", "n_skips"):
        assert pairs[column].dtype == "int64", column
    assert pairs["pair_id"].tolist() == [p["pair_id"] for p in report["pairs"]]
    assert pairs["question_b_pk"].tolist() == [p["question_b"]["id"] for p in report["pairs"]]
    assert pairs["consensus"].tolist() == ["b", "a", "b", "a"]
    assert pairs["weight_a"].isna().tolist() == [True, True, True, False]  # blank = missing: only P4 was a tie

    evaluators = read(archive, "evaluators.csv")
    assert evaluators["evaluator_id"].dtype == "int64" and evaluators["n_votes"].dtype == "int64"
    assert evaluators["evaluator_id"].tolist() == [e["id"] for e in report["evaluators"]]
    assert evaluators["field_of_study"].iloc[0] == report["evaluators"][0]["field_of_study"]  # the code, not a label

    agreement = read(archive, "agreement.csv").set_index(["method", "rater"])
    bo = next(e for e in report["evaluators"] if e["pseudonym"] == "bo")
    assert agreement.loc[("eip", bo["short"]), "agreement"] == pytest.approx(bo["methods"]["eip"]["agreement"], abs=TOL)
    assert agreement.loc[("eip", "consensus"), "kappa"] == report["consensus_agreement"]["eip"]["kappa"]["value"]
    dee = next(e for e in report["evaluators"] if e["pseudonym"] == "dee")
    # dee voted only on P1, which Simple Rank ties: no pair both decided, kappa undefined
    assert report["evaluators"][3]["methods"]["simple_rank"]["kappa"]["value"] is None
    assert pd.isna(agreement.loc[("simple_rank", dee["short"]), "kappa"])  # undefined -> blank
    # ... and so is dee's agreement excluding ties (Simple Rank decided none of dee's pairs)
    assert pd.isna(agreement.loc[("simple_rank", dee["short"]), "agreement_excluding_ties"])
    assert agreement.loc[("simple_rank", dee["short"]), "n_ties"] == 1

    consensus = read(archive, "consensus.csv").set_index("method")
    sr = report["consensus_agreement"]["simple_rank"]
    assert consensus.loc["simple_rank", "agreement"] == pytest.approx(sr["agreement"], abs=TOL)
    assert consensus.loc["simple_rank", "agreement_ci_low"] == pytest.approx(sr["ci"]["agreement"][0], abs=TOL)
    assert consensus["n_pairs"].dtype == "int64"
    assert pd.isna(consensus.loc["eip", "mcnemar_p"])  # EIP is not tested against itself

    pools = read(archive, "pools.csv").set_index("pool")
    whole = next(p for p in report["pools"]["pools"] if p["name"] == "whole")
    assert pools.loc["whole", "share_dead"] == pytest.approx(whole["share_dead"], abs=TOL) == 0.25
    assert pools.loc["whole", "consensus_agreement"] == pytest.approx(whole["consensus"]["agreement"], abs=TOL)
    assert pools["n_models"].tolist() == [p["n_models"] for p in report["pools"]["pools"]]

    irr = read(archive, "irr.csv").set_index("statistic")
    alpha = report["irr"]["krippendorff_alpha"]
    assert irr.loc["krippendorff_alpha", "value"] == pytest.approx(alpha["value"], abs=TOL)
    assert irr.loc["krippendorff_alpha", "n_pairs"] == alpha["n_units_pairable"] and irr["n_raters"].dtype == "int64"

    judgments = read(archive, "judgments.csv")
    assert judgments["pair_id"].dtype == "int64" and len(judgments) == 13


def test_the_codebook_names_every_column_the_parameters_the_version_and_the_time(downloaded):
    study, stored, archive, _ = downloaded
    codebook = archive.read("codebook.md").decode()
    report = json.loads(archive.read("report.json"))
    assert f"eip-annotate {version('eip-annotate')}" in codebook
    assert "- written: 20" in codebook and report["generated_at"] in codebook
    assert "bootstrap: 40 replicates, seed 0, 95% percentile intervals" in codebook
    assert f"stored analysis {stored.pk} (EIP alpha 0.85" in codebook
    assert f"scoring run: {study.scoring_run_id} " in codebook
    for name in (*TABLES, "judgments.csv"):
        section = codebook.split(f"## {name}\n", 1)[1].split("\n## ", 1)[0]
        for column in read(archive, name).columns:
            assert f"| {column} | " in section, (name, column)


def test_every_text_file_of_the_zip_is_utf8_without_a_byte_order_mark_and_the_codebook_says_so(downloaded):
    _, _, archive, _ = downloaded
    for name in archive.namelist():
        data = archive.read(name)
        assert not data.startswith(b"\xef\xbb\xbf"), name
        data.decode("utf-8", errors="strict")
    codebook = archive.read("codebook.md").decode("utf-8")
    assert ("Encoding: every text file of this download (CSV, JSON, Markdown, this codebook included) is UTF-8 "
            "without a byte-order mark; CSV rows end in CRLF (RFC 4180).") in codebook
    for name in archive.namelist():
        if name.endswith(".csv"):
            lines = archive.read(name).split(b"\n")
            assert all(line.endswith(b"\r") for line in lines[:-1]) and lines[-1] == b"", name
