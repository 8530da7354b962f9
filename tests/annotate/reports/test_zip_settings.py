"""Every table of one report download carries the settings actually used for it,
and all of them agree on the settings they share; the label panel says it is
run-wide (the same on every study of the run)."""
from __future__ import annotations

import csv
import io
import json
import zipfile

import pytest

from annotate.reports.services import alignment_report_compute
from annotate.reports.services.headline import report_headline
from annotate.reports.services.report_files import report_zip
from tests.annotate.report_cast import judged_study

pytestmark = pytest.mark.django_db

SHARED = ("study", "scoring_run", "min_votes", "tie_rule", "label_key", "label_direction", "n_boot",
          "bootstrap_seed", "scale_n_boot", "label_n_boot")


def _settings_by_table(data: bytes) -> tuple[dict[str, dict[str, str]], dict]:
    archive = zipfile.ZipFile(io.BytesIO(data))
    tables = {}
    for name in archive.namelist():
        if not name.endswith(".csv") or name == "judgments.csv":
            continue
        rows = list(csv.DictReader(io.StringIO(archive.read(name).decode("utf-8-sig"))))
        for row in rows:  # every row carries the same settings
            assert {k: row[k] for k in SHARED} == {k: rows[0][k] for k in SHARED}, name
        if rows:
            tables[name] = {k: rows[0][k] for k in SHARED}
    return tables, json.loads(archive.read("parameters.json"))


@pytest.mark.parametrize(("n_boot", "scale"), [(300, "200"), (50, "50")])
def test_every_table_of_one_zip_carries_the_same_settings_each_named_for_what_it_counts(n_boot, scale):
    study = judged_study()
    report = alignment_report_compute(study=study, n_boot=n_boot)
    tables, parameters = _settings_by_table(report_zip(report, []))
    assert {"human_scale.csv", "human_scale_methods.csv", "labels_analysis.csv", "consensus.csv"} <= set(tables)
    expected = {"study": str(study.pk), "scoring_run": str(study.scoring_run_id), "min_votes": "1",
                "tie_rule": "evaluator_weight", "label_key": "level", "label_direction": "higher_is_harder",
                "n_boot": str(n_boot), "bootstrap_seed": "0",
                # the scale refits per replicate: at most 200; the label analysis keeps its own 200
                "scale_n_boot": scale, "label_n_boot": "200"}
    for name, settings in tables.items():
        assert settings == expected, name
    assert parameters == {k: (int(v) if v.isdigit() else v) for k, v in expected.items()}


def test_the_label_panel_says_it_is_run_wide():
    study = judged_study()
    report = alignment_report_compute(study=study, n_boot=20)
    [panel] = [p for p in report_headline(report).panels if p.key == "label"]
    assert panel.title == "With the label 'level' (whole run)"
    assert panel.note.startswith(f"every labelled question of scoring run {study.scoring_run_id}, not only this "
                                 "study's, and no judgment of this study")
