"""The human-label analysis as a report of its own: label choices with type and coverage, unknown
keys refused with the valid ones, the human_labels command, and alignment_report's label direction."""
from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotate.analyses.services import analysis_run_create
from annotate.analyses.services.human_labels import ERR_UNKNOWN_KEY, label_keys
from annotate.models import AnalysisKind, ResponseSet
from annotate.runs.services.scoring import scoring_run_create, scoring_run_execute
from annotate.studies.services.derived import derived_study_create

pytestmark = pytest.mark.django_db

# solve: the share of people who solved a question (higher = easier); level: 1-3 (higher = harder)
QUESTIONS = ("question_id,category,level,solve\nq1,bio,1,0.9\nq2,bio,2,0.5\nq3,bio,3,0.2\nq4,chem,1,0.8\n"
             "q5,chem,2,0.4\nq6,chem,3,\n")
MODELS = ("question_id,m1,m2,m3,m4\n"
          "q1,1,1,1,1\nq2,1,1,0,1\nq3,0,1,0,0\nq4,1,1,1,0\nq5,0,0,1,0\nq6,1,0,0,0\n")
PEOPLE = ("question_id,p1,p2,p3,p4,p5\n"
          "q1,1,1,1,1,1\nq2,1,1,1,0,0\nq3,1,0,0,0,0\nq4,1,1,1,1,0\nq5,1,1,0,0,0\nq6,0,0,1,1,0\n")


def _load(tmp_path, name, text, *extra):
    (tmp_path / "questions.csv").write_text(QUESTIONS, encoding="utf-8")
    (tmp_path / f"{name}.csv").write_text(text, encoding="utf-8")
    call_command("load_responses", "--responses", str(tmp_path / f"{name}.csv"), "--format", "wide", "--dataset",
                 "D", "--questions", str(tmp_path / "questions.csv"), "--subject-column", "category",
                 "--keep-columns", "level,solve", *extra, stdout=StringIO())
    return ResponseSet.objects.get(name=name)


@pytest.fixture
def sets(tmp_path):
    models = _load(tmp_path, "models", MODELS)
    people = _load(tmp_path, "people", PEOPLE, "--human")
    run = scoring_run_create(response_set=models, params={"methods": ["eip", "simple_rank", "accuracy"]})
    scoring_run_execute(run=run)
    return models, people, run


def test_label_keys_say_type_and_coverage(sets):
    models, _, _ = sets
    assert [(k.key, k.kind, k.n_labelled, k.n_questions) for k in label_keys(response_set=models)] == [
        ("level", "numeric", 6, 6), ("solve", "numeric", 5, 6)]


def test_an_unknown_key_is_refused_with_the_valid_ones(sets, client, django_user_model):
    models, _, _ = sets
    with pytest.raises(ValueError) as info:
        analysis_run_create(kind=AnalysisKind.HUMAN_LABELS, response_set=models, params={"label": "metadata:lvl"})
    valid = ("metadata:level (numeric, 6 of 6 questions), metadata:solve (numeric, 5 of 6 questions)")
    assert str(info.value) == ERR_UNKNOWN_KEY.format(response_set=models, key="lvl", valid=valid)
    staff = django_user_model.objects.create_user("staff", password="pw", is_staff=True, is_superuser=True)
    client.force_login(staff)
    page = client.get(reverse("annotate:analysis_kind", kwargs={"kind": "human_labels"}))
    html = page.content.decode()
    assert page.status_code == 200 and "(issue" not in html
    assert '<optgroup label="Question metadata columns of models v1">' in html
    assert "level (question metadata: numeric, 6 of 6 questions)" in html and "higher = easier (a solve rate)" in html
    assert f'value="human:{sets[1].pk}"' in html


def test_the_label_dropdown_lists_the_columns_of_the_run_s_set_only(sets, tmp_path, client, django_user_model):
    models, people, run = sets
    other_dir = tmp_path / "other"
    other_dir.mkdir()
    (other_dir / "questions.csv").write_text("question_id,category,rating\nr1,bio,4\nr2,bio,2\n", encoding="utf-8")
    (other_dir / "other.csv").write_text("question_id,m1,m2\nr1,1,0\nr2,0,1\n", encoding="utf-8")
    call_command("load_responses", "--responses", str(other_dir / "other.csv"), "--format", "wide", "--dataset", "E",
                 "--questions", str(other_dir / "questions.csv"), "--subject-column", "category", "--keep-columns",
                 "rating", stdout=StringIO())
    other = ResponseSet.objects.get(name="other")
    client.force_login(django_user_model.objects.create_user("staff", password="pw", is_staff=True,
                                                             is_superuser=True))
    run_page = client.get(reverse("annotate:run_detail", kwargs={"run_id": run.pk})).content.decode()
    link = reverse("annotate:analysis_kind", kwargs={"kind": "human_labels"}) + f"?response_set={models.pk}"
    assert f'href="{link}" id="human-labels-link"' in run_page

    def labels(query: str) -> list[str]:
        page = client.get(reverse("annotate:analysis_kind", kwargs={"kind": "human_labels"}) + query)
        assert page.status_code == 200
        form = page.context["form"]
        # the first choice is the blank "choose a label"; then one group per set and the human sets
        return [value for group, options in form.fields["label"].choices[1:] for value, _ in options]

    human = f"human:{people.pk}"
    assert labels(f"?response_set={models.pk}") == ["metadata:level", "metadata:solve", human]
    assert labels(f"?response_set={other.pk}") == ["metadata:rating", human]
    page = client.get(reverse("annotate:analysis_kind", kwargs={"kind": "human_labels"}) + f"?response_set={other.pk}")
    assert page.context["form"].initial["response_set"] == other
    # an id that names no model set (the human one) falls back to the set with a finished run
    assert labels(f"?response_set={people.pk}") == ["metadata:level", "metadata:solve", human]
    # a column of another set is refused for this one
    answer = client.post(reverse("annotate:analysis_kind", kwargs={"kind": "human_labels"}), data={
        "response_set": models.pk, "label": "metadata:rating", "label_higher_is_harder": "True", "margin": "0",
        "n_boot": "0", "run": "0", "action": "run"})
    assert answer.status_code == 400
    assert "Select a valid choice. metadata:rating is not one of the available choices." in answer.content.decode()


def test_the_command_reads_a_solve_rate_the_right_way_round(sets, tmp_path):
    models, _, _ = sets
    out = StringIO()
    call_command("human_labels", "--response-set", str(models.pk), "--label", "metadata:solve",
                 "--label-direction", "higher-is-easier", "--n-boot", "0", "--out", str(tmp_path / "out"), stdout=out)
    text = out.getvalue()
    assert "carry the label metadata:solve (higher = easier)" in text
    assert "Simple rank: Spearman" in text  # labels, not keys
    assert (tmp_path / "out" / "result.json").exists()
    # Simple rank (failures 0, 1, 3, 1, 3, 3) against the solve rate read as easier: bio q1 < q2 < q3 in both,
    # chem q4 < q5 in both (q6 unlabelled): Spearman over 5 questions is positive.
    line = next(line for line in text.splitlines() if line.startswith("Simple rank"))
    assert "Spearman -" not in line
    with pytest.raises(CommandError, match="valid: metadata:level"):
        call_command("human_labels", "--response-set", str(models.pk), "--label", "metadata:nope", stdout=StringIO())


def test_alignment_report_takes_a_label_direction(sets, tmp_path):
    _, people, run = sets
    study, _ = derived_study_create(human_set_id=people.pk, run=run, name="derived", n_pairs=50)
    out = StringIO()
    call_command("alignment_report", "--study", str(study.pk), "--out", str(tmp_path / "r"), "--label-key", "solve",
                 "--label-direction", "higher-is-easier", "--n-boot", "10", stdout=out)
    report = (tmp_path / "r" / "report.json").read_text()
    assert '"label_higher_is_harder": false' in report
