"""A method registered "higher = easier" is compared with people the right way round.

The toy method ``easiness`` stores the negated accuracy difficulty
(``-(1 - mean credit)``) and says so in the registry (``higher_is_harder=False``).
Every comparison with people must then give exactly accuracy's figures:
pair sampling, verdicts, agreement with each evaluator and the consensus,
kappa, bootstrap intervals, McNemar tests, the human-label section, the
human-scale correlations, and the report's JSON and CSV downloads. A second
toy method holds the same values registered the wrong way round
(``higher_is_harder=True``): its figures differ, so the comparison can fail.
"""
from __future__ import annotations

import contextlib
import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest
from django.utils import timezone

import annotate.demo
from annotate.catalog.loaders.tabular_files import parse_folder
from annotate.catalog.services.loading import response_set_load
from annotate.models import Judgment, Pair, QuestionResult
from annotate.reports.services import alignment_report_compute
from annotate.reports.services.report_files import report_files
from annotate.runs.services.scoring import scoring_run_create, scoring_run_execute
from annotate.studies.services.studies import study_create
from scoring.method_runners import MethodInput, MethodOutput
from scoring.methods import DifficultyMethod, register_method, unregister_method
from tests.annotate.factories import make_evaluator

pytestmark = pytest.mark.django_db
DEMO = Path(annotate.demo.__file__).parent


def _easiness(data: MethodInput) -> MethodOutput:
    """Minus the accuracy difficulty, recomputed here: mean credit over observed models, minus 1."""
    observed = ~np.isnan(data.R)
    credit = np.where(observed, data.R, 0.0).sum(axis=1) / observed.sum(axis=1)
    return MethodOutput(question_columns={"easiness": credit - 1.0}, model_columns={})


def _easiness_wrong(data: MethodInput) -> MethodOutput:
    return MethodOutput(question_columns={"easiness_wrong": _easiness(data).question_columns["easiness"]},
                        model_columns={})


EASY = DifficultyMethod(key="easy", label="Toy easiness", runner=_easiness, question_columns=("easiness",),
                        difficulty_column="easiness", higher_is_harder=False, tie_tolerance=1e-12, cost=0.1)
WRONG = DifficultyMethod(key="easy_wrong", label="Toy easiness read as difficulty", runner=_easiness_wrong,
                         question_columns=("easiness_wrong",), difficulty_column="easiness_wrong",
                         higher_is_harder=True, tie_tolerance=1e-12, cost=0.1)
NAMES = {"accuracy": ("accuracy", "Accuracy", "accuracy_difficulty"), "easy": ("easy", "Toy easiness", "easiness")}
DROP = object()


def _view(obj, me: str):
    """The report as seen from method ``me`` ("accuracy" or "easy"): the other one's
    entries are dropped and ``me``'s key, label and column become placeholders. Lists of
    records are compared as sets (the toy comes last in registry order)."""
    other = "easy" if me == "accuracy" else "accuracy"
    placeholder = dict(zip(NAMES[me], ("<key>", "<label>", "<column>"), strict=True))
    if isinstance(obj, dict):
        if any(obj.get(f) in NAMES[other] for f in ("method", "method_a", "method_b", "key")):
            return DROP
        out = {}
        for k, v in obj.items():
            if k in NAMES[other]:
                continue
            v = _view(v, me)
            if v is not DROP:
                out[placeholder.get(k, k)] = v
        return out
    if isinstance(obj, list):
        kept = [v for v in (_view(x, me) for x in obj) if v is not DROP and v != other]
        if any(isinstance(v, dict) or v == "<key>" for v in kept):  # the registry order puts the toy last
            kept.sort(key=lambda v: json.dumps(v, sort_keys=True))
        return kept
    if isinstance(obj, str):
        return placeholder.get(obj, obj)
    return obj


def _csv_view(files: dict[str, bytes], me: str) -> dict:
    """Every CSV of the report zip as seen from ``me`` (rows of the other method dropped,
    columns named after it dropped)."""
    out = {}
    for name, content in files.items():
        if not name.endswith(".csv") or name == "judgments.csv":
            continue
        rows = list(csv.DictReader(io.StringIO(content.decode("utf-8"))))
        out[name] = _view(rows, me)
    return out


def test_a_method_registered_higher_is_easier_gives_exactly_the_figures_of_the_method_it_negates():
    register_method(EASY)
    register_method(WRONG)
    try:
        parsed = parse_folder(DEMO, dataset="EIP-demo", subject_column="category", keep_columns=["level"])
        response_set = response_set_load(parsed=parsed, name="EIP-demo")
        run = scoring_run_execute(run=scoring_run_create(
            response_set=response_set, params={"methods": ["eip", "accuracy", "easy", "easy_wrong"]}))
        # The wrong-way-round method is left out of pair sampling (it would count as a third baseline).
        unregister_method("easy_wrong")
        study = study_create(name="Directions", run=run, datasets=list(run.datasets_used.all()), n_pairs=24,
                             seed=3, strategy="methods_disagree")
        register_method(WRONG)
        pairs = list(Pair.objects.filter(study=study, attention_check=False).order_by("position"))
        scores = {r.question_id: r.scores for r in QuestionResult.objects.filter(run=run)}

        # Pair sampling: a pair's stratum counts the baselines that order it opposite to EIP (pi_Q);
        # the two baselines are accuracy and the easiness read higher = easier, so it is 0 or 2.
        def sign(q_a, q_b, column):
            return np.sign(scores[q_a][column] - scores[q_b][column])

        opposite = [int(sign(p.question_a_id, p.question_b_id, "eip")
                        * sign(p.question_a_id, p.question_b_id, "accuracy_difficulty") < 0) for p in pairs]
        assert [p.stratum for p in pairs] == [2 * d for d in opposite]
        assert sum(opposite) > 0

        # Three evaluators with seeded random verdicts.
        rng = np.random.default_rng(0)
        now = timezone.now()
        for name in ("ann", "bob", "cy"):
            evaluator = make_evaluator(study, name)
            for p in pairs:
                left = p.question_a if rng.random() < 0.5 else p.question_b
                Judgment.objects.create(participation=evaluator, pair=p, choice="left", left_question=left,
                                        harder_question=left, shown_at=now, submitted_at=now, seconds=2.0)

        report = alignment_report_compute(study=study, n_boot=40, rng=0, label_key="level")
        document = report.to_json()
    finally:
        for key in ("easy", "easy_wrong"):
            with contextlib.suppress(KeyError):  # the one left out of pair sampling may be unregistered
                unregister_method(key)

    # The human-scale question table shows each method's stored values: the toys' are accuracy's negated.
    shown = [q["methods"] for q in document["human_scale"]["questions"]]
    assert shown and all(m["easy"] == m["easy_wrong"] == -m["accuracy"] for m in shown)
    for m in shown:
        del m["easy"], m["easy_wrong"], m["accuracy"]

    assert document["consensus_agreement"]["easy"]["n_agree"] > 0
    assert document["labels"]["scopes"]["study_pairs"]["methods"]["easy"]["n_pairs"] > 0
    assert any(r["method"] == "easy" for r in document["human_scale"]["methods"])
    assert any(r["method"] == "easy" for r in document["labels"]["analysis"]["methods"])
    assert _view(document, "easy") == _view(document, "accuracy")

    files = report_files(report, [])
    assert _csv_view(files, "easy") == _csv_view(files, "accuracy")

    # Read the wrong way round, the same values agree where accuracy disagrees.
    acc, wrong = document["consensus_agreement"]["accuracy"], document["consensus_agreement"]["easy_wrong"]
    decided = acc["n_pairs"] - acc["n_ties"] - acc["n_undefined"] - acc["n_human_excluded"]
    assert (wrong["n_agree"], wrong["n_ties"]) == (decided - acc["n_agree"], acc["n_ties"])
    assert wrong["n_agree"] != acc["n_agree"]
    acc_rho = next(r for r in document["human_scale"]["methods"] if r["method"] == "accuracy"
                   and r["scope"] == "overall")["spearman"]["value"]
    wrong_rho = next(r for r in document["human_scale"]["methods"] if r["method"] == "easy_wrong"
                     and r["scope"] == "overall")["spearman"]["value"]
    assert wrong_rho == pytest.approx(-acc_rho, abs=1e-12) and acc_rho != 0
