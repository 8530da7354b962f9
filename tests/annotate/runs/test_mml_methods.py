"""The marginal-ML IRT methods in a real scoring run, its study report and every download.

Cast: ``rita`` (researcher, owner of the study), evaluators ``e0``..``e3``. A
simulated 2PL response set (16 questions x 8 models) is scored by the real
service with every registered method, then with the JML and EIP methods
alone; judgments are stored through the judging service.
"""
from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pandas as pd
import pytest
from django.test import Client
from django.urls import reverse

from annotate.models import Dataset, LanguageModel, ModelResult, Question, QuestionResult, ResponseSet, Subject
from annotate.runs.services import scoring as service
from annotate.studies.services.judging import judging_screen, judgment_submit
from annotate.studies.services.studies import study_create
from scoring.irt_mml import irt_1pl_mml, irt_2pl_mml
from scoring.methods import JML_VS_MML, get_method
from tests.annotate.factories import make_evaluator, make_researcher, write_responses

pytestmark = pytest.mark.django_db

MML = ("irt_1pl_mml", "irt_2pl_mml")
N_QUESTIONS, N_MODELS = 16, 8


def _body(response) -> bytes:
    """The bytes of a response, streamed (a run's questions table) or whole."""
    return b"".join(response.streaming_content) if response.streaming else response.content


def _simulated_cells() -> np.ndarray:
    rng = np.random.default_rng(28)
    theta, b = rng.normal(size=N_MODELS), np.linspace(-2, 2, N_QUESTIONS)
    p = 1 / (1 + np.exp(-(theta[None, :] - b[:, None])))
    return (rng.random(p.shape) < p).astype(float)


@pytest.fixture
def scored():
    """A response set scored with every registered method; its questions, models and matrix."""
    dataset = Dataset.objects.create(name="Sim")
    subject = Subject.objects.create(name="Mathematics")
    questions = [Question.objects.create(dataset=dataset, subject=subject, external_id=f"q{i}",
                                         text=f"Question {i}: what follows?") for i in range(N_QUESTIONS)]
    models = [LanguageModel.objects.create(name=f"model-{j}") for j in range(N_MODELS)]
    R = _simulated_cells()
    rs = ResponseSet.objects.create(name="Sim set", file_name="s.csv", checksum="e" * 64, file_format="wide")
    write_responses(rs, [(q, m, R[i, j]) for i, q in enumerate(questions) for j, m in enumerate(models)])
    run = service.scoring_run_execute(run=service.scoring_run_create(response_set=rs, params={"mirt_epochs": 20}))
    return run, questions, models, R, rs, dataset


def _report_of(run, dataset, rita):
    study = study_create(created_by=rita, name="MML study", run=run, datasets=[dataset], n_pairs=10, seed=3,
                         strategy="uniform", target_judgments_per_pair=4)
    for k in range(4):
        participation = make_evaluator(study, f"e{k}")
        while True:
            screen = judging_screen(participation=participation)
            if screen is None:
                break
            pair = screen.pair
            # Everyone calls the question with the larger external index harder (the simulated truth).
            harder = max((pair.question_a, pair.question_b), key=lambda q: int(q.external_id[1:]))
            choice = "left" if harder.pk == screen.left.pk else "right"
            judgment_submit(participation=participation, pair_id=pair.pk, left_question_id=screen.left.pk,
                            choice=choice)
    return study


def test_a_run_stores_the_mml_fits_as_the_scoring_functions_compute_them(scored):
    run, questions, models, R, _, _ = scored
    assert set(run.methods.values_list("method", flat=True)) >= set(MML)
    stored = {r.question_id: r.scores for r in QuestionResult.objects.filter(run=run)}
    stored_models = {r.model_id: r.scores for r in ModelResult.objects.filter(run=run)}
    for key, fit in (("irt_1pl_mml", irt_1pl_mml(R)), ("irt_2pl_mml", irt_2pl_mml(R))):
        assert [stored[q.pk][key] for q in questions] == pytest.approx(fit.difficulty.tolist(), abs=1e-12)
        assert [stored_models[m.pk][key] for m in models] == pytest.approx(fit.ability.tolist(), abs=1e-12)
        result = run.methods.get(method=key)
        assert result.converged and result.notes["marginal_log_likelihood"] == pytest.approx(fit.log_likelihood)
    assert [stored[q.pk]["irt_2pl_mml_discrimination"] for q in questions] == pytest.approx(
        irt_2pl_mml(R).discrimination.tolist(), abs=1e-12)


def test_adding_the_mml_methods_leaves_the_jml_figures_unchanged(scored):
    run, questions, _, _, rs, _ = scored
    jml_only = service.scoring_run_execute(run=service.scoring_run_create(
        response_set=rs, params={"methods": ["eip", "accuracy", "irt_1pl", "irt_2pl"]}))
    columns = ("irt_1pl", "irt_2pl", "irt_2pl_discrimination", "eip_scaled")
    with_mml = {r.question_id: r.scores for r in QuestionResult.objects.filter(run=run)}
    without = {r.question_id: r.scores for r in QuestionResult.objects.filter(run=jml_only)}
    for q in questions:
        assert {c: with_mml[q.pk][c] for c in columns} == {c: without[q.pk][c] for c in columns}
    assert {r.model_id: r.scores["irt_2pl"] for r in ModelResult.objects.filter(run=run)} == \
        {r.model_id: r.scores["irt_2pl"] for r in ModelResult.objects.filter(run=jml_only)}


def test_the_report_and_every_download_show_the_mml_methods(scored):
    run, _, _, _, _, dataset = scored
    rita = make_researcher("rita")
    study = _report_of(run, dataset, rita)
    client = Client()
    client.force_login(rita)

    report = json.loads(client.get(reverse("annotate:study_report_json", kwargs={"study_id": study.pk})
                                   + "?n_boot=50").content)
    listed = {m["key"]: m for m in report["methods"]}
    for key in MML:
        assert listed[key]["label"] == get_method(key).label and listed[key]["available"] is True
        assert key in report["consensus_agreement"] and key in report["method_summary"]
    assert report["human_scale"]["available"], report["human_scale"]["undefined_reason"]
    assert set(MML) <= {row["method"] for row in report["human_scale"]["methods"]}
    # Pairs whose verdict rests on a value at the fit's bound, counted by hand from the stored values.
    stored = {r.question_id: r.scores for r in QuestionResult.objects.filter(run=run)}
    study_pairs = [(p.question_a_id, p.question_b_id) for p in study.pairs.all()]
    for key, low, high in (("irt_1pl", -5.0, 5.0), ("irt_2pl", -5.0, 5.0), ("irt_1pl_mml", -6.0, 6.0),
                           ("irt_2pl_mml", -6.0, 6.0)):
        on_bound = sum(any(stored[q][key] <= low + 1e-6 or stored[q][key] >= high - 1e-6 for q in pair)
                       for pair in study_pairs)
        assert listed[key].get("bound_verdicts", 0) == on_bound, key
    assert listed["irt_2pl_mml"]["bound_verdicts"] > 0 and "bound_verdicts" not in listed["eip"]
    page = client.get(reverse("annotate:study_report", kwargs={"study_id": study.pk})).content.decode()
    assert "1PL IRT (MML)" in page and "2PL IRT (MML)" in page
    assert (f"2PL IRT (MML): {listed['irt_2pl_mml']['bound_verdicts']} of {len(study_pairs)} pair verdicts involve "
            "a question whose value lies on the fit&#x27;s bound") in page

    response = client.get(reverse("annotate:study_report_zip", kwargs={"study_id": study.pk}) + "?n_boot=50")
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    agreement = pd.read_csv(io.BytesIO(archive.read("agreement.csv")))
    assert set(MML) <= set(agreement["method"])
    pairs = pd.read_csv(io.BytesIO(archive.read("pairs.csv")))
    assert {"verdict_irt_1pl_mml", "verdict_irt_2pl_mml"} <= set(pairs.columns)

    run_args = {"run_id": run.pk}
    frame = pd.read_csv(io.BytesIO(_body(client.get(reverse("annotate:run_questions_csv", kwargs=run_args)))))
    for key in MML:
        assert frame[key].notna().all()
        # blank = undefined: the standard error of a difficulty on its bound (all solved or all failed)
        assert (frame[f"{key}_se"].isna() == (frame[key].abs() == 6.0)).all()
    assert frame["irt_2pl_mml_discrimination"].notna().all()
    models = pd.read_csv(io.BytesIO(_body(client.get(reverse("annotate:run_models_csv", kwargs=run_args)))))
    assert {"irt_1pl_mml", "irt_2pl_mml"} <= set(models.columns)
    codebook = client.get(reverse("annotate:run_codebook", kwargs=run_args)).content.decode()
    assert "| `irt_2pl_mml` | number | 2PL IRT (MML): its difficulty, higher = harder" in codebook
    assert JML_VS_MML in codebook
    questions_page = client.get(reverse("annotate:run_questions", kwargs=run_args)).content.decode()
    assert "2PL IRT (MML)" in questions_page and "1PL IRT (MML) standard error of b" in questions_page


def test_downloads_flag_every_irt_value_on_a_bound_as_the_run_page_counts_them(scored):
    from scoring.irt import irt_1pl, irt_2pl

    run, questions, models, R, _, _ = scored
    rita = make_researcher("rita")
    client = Client()
    client.force_login(rita)
    def table(name):
        return pd.read_csv(io.BytesIO(_body(client.get(reverse(name, kwargs={"run_id": run.pk})))))

    frame = table("annotate:run_questions_csv").set_index("question_pk").loc[[q.pk for q in questions]]
    board = table("annotate:run_models_csv")
    board = board.set_index("model_id").loc[[m.pk for m in models]]
    one, two, mml = irt_1pl(R), irt_2pl(R), irt_2pl_mml(R)
    expected = {"irt_1pl": one.difficulty_at_bound, "irt_2pl": two.difficulty_at_bound,
                "irt_2pl_discrimination": two.discrimination_at_bound,
                "irt_2pl_mml": mml.difficulty_at_bound, "irt_2pl_mml_discrimination": mml.discrimination_at_bound}
    for column, mask in expected.items():
        assert frame[f"{column}_at_bound"].tolist() == mask.astype(float).tolist(), column
    assert board["irt_2pl_at_bound"].tolist() == two.ability_at_bound.astype(float).tolist()
    assert board["irt_1pl_at_bound"].tolist() == one.ability_at_bound.astype(float).tolist()
    # the same counts as the run page (the fits' notes)
    notes = {m.method: m.notes for m in run.methods.all()}
    assert frame["irt_2pl_at_bound"].sum() == notes["irt_2pl"]["difficulties_at_bound"]
    assert frame["irt_2pl_discrimination_at_bound"].sum() == notes["irt_2pl"]["discriminations_at_bound"]
    assert frame["irt_2pl_mml_at_bound"].sum() == notes["irt_2pl_mml"]["difficulties_at_bound"] > 0
    codebook = client.get(reverse("annotate:run_codebook", kwargs={"run_id": run.pk})).content.decode()
    assert "| `irt_2pl_at_bound` | number | 2PL IRT: 1 where the value lies on a bound of the fit" in codebook


def test_the_report_flags_each_pair_and_question_whose_value_is_on_a_bound(scored):
    from tests.annotate.reports.test_schema import SCHEMA, errors

    run, _, _, _, _, dataset = scored
    rita = make_researcher("rita")
    study = _report_of(run, dataset, rita)
    client = Client()
    client.force_login(rita)
    response = client.get(reverse("annotate:study_report_zip", kwargs={"study_id": study.pk}) + "?n_boot=50")
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    pairs = pd.read_csv(io.BytesIO(archive.read("pairs.csv")))
    scale = pd.read_csv(io.BytesIO(archive.read("human_scale.csv"))).set_index("question_pk")
    codebook = archive.read("codebook.md").decode()
    report = json.loads(archive.read("report.json"))
    assert errors(report, SCHEMA) == []
    # the run's download flags each question (scoring.methods.at_bound_flags): the one rule every table follows
    frame = pd.read_csv(io.BytesIO(_body(client.get(reverse("annotate:run_questions_csv",
                                                            kwargs={"run_id": run.pk}))))).set_index("question_pk")
    listed = {m["key"]: m for m in report["methods"]}
    for key in ("irt_1pl", "irt_2pl", "irt_1pl_mml", "irt_2pl_mml"):
        flagged = set(frame.index[frame[f"{key}_at_bound"] == 1])
        expected = [int(a in flagged or b in flagged) for a, b in zip(pairs["question_a_pk"], pairs["question_b_pk"],
                                                                      strict=True)]
        assert pairs[f"at_bound_{key}"].tolist() == expected, key
        assert sum(expected) == listed[key].get("bound_verdicts", 0), key  # the count the report's note gives
        assert scale[f"at_bound_{key}"].tolist() == frame.loc[scale.index, f"{key}_at_bound"].tolist(), key
        assert f"| at_bound_{key} | 1 when a question of the pair has its " in codebook
    # 2PL MML puts some questions on its bound: both kinds of pair occur, and a pair of unbounded questions is 0
    column = pairs["at_bound_irt_2pl_mml"]
    assert 0 < column.sum() < len(pairs)
    free = set(frame.index[frame["irt_2pl_mml_at_bound"] == 0])
    unbounded = pairs[pairs["question_a_pk"].isin(free) & pairs["question_b_pk"].isin(free)]
    assert len(unbounded) and (unbounded["at_bound_irt_2pl_mml"] == 0).all()
    assert scale["at_bound_irt_2pl_mml"].sum() > 0
    # only methods with a box have flags
    assert "at_bound_eip" not in pairs.columns and "at_bound_eip" not in scale.columns
    assert "eip" not in report["pairs"][0]["at_bound"] and "irt_2pl_mml" in report["pairs"][0]["at_bound"]
