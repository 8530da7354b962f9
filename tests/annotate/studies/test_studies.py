"""Creating studies: the service, the management commands, and a 70-pair study
built from the real MMLU-Pro questions."""
from __future__ import annotations

import json
from io import StringIO

import pytest
from django.contrib.auth import authenticate
from django.core.management import CommandError, call_command
from django.db.models import ProtectedError

from annotate.models import (
    Assignment,
    Dataset,
    Invitation,
    Judgment,
    Pair,
    Participation,
    Question,
    QuestionResult,
    ResponseSet,
    RunStatus,
    ScoringRun,
    Study,
    Subject,
)
from annotate.studies.selectors.studies import study_scope_frozen
from annotate.studies.services import scope as scope_service
from annotate.studies.services.judging import judging_screen, judgment_submit
from annotate.studies.services.scope import (
    ERR_NO_DATASETS,
    ERR_SCOPE_FROZEN,
    StudyScopeFrozenError,
    study_scope_guard,
    study_scope_update,
    study_scope_validate,
)
from annotate.studies.services.studies import ERR_NAME_TAKEN, ERR_RUN_NOT_DONE, ERR_TARGET, study_create
from tests.annotate.factories import difficulty_of, make_catalog, make_evaluator, make_study

pytestmark = pytest.mark.django_db


def pair_set(study: Study) -> set[tuple[int, int]]:
    return {tuple(sorted(ab)) for ab in study.pairs.values_list("question_a_id", "question_b_id")}


def assert_valid_pairs(study: Study) -> None:
    rows = list(study.pairs.select_related("question_a", "question_b"))
    assert len(rows) == study.n_pairs
    assert len({frozenset((p.question_a_id, p.question_b_id)) for p in rows}) == len(rows)  # no repeat
    for p in rows:
        assert p.question_a_id != p.question_b_id
        assert p.question_a.subject_id == p.question_b.subject_id is not None
    assert sorted(p.position for p in rows) == list(range(len(rows)))


def test_it_creates_a_study_of_distinct_same_subject_pairs():
    catalog = make_catalog(per_subject=5)
    study = make_study(catalog, n_pairs=12, seed=4)
    assert_valid_pairs(study)
    assert study.status == "open"
    assert set(study.subjects.values_list("name", flat=True)) == {"Mathematics", "Physics"}
    assert list(study.datasets.all()) == [catalog.dataset]


def test_it_is_repeatable_for_a_seed():
    catalog = make_catalog(per_subject=6)
    first = make_study(catalog, n_pairs=10, seed=9)
    again = make_study(catalog, n_pairs=10, seed=9)
    other = make_study(catalog, n_pairs=10, seed=10)
    assert pair_set(first) == pair_set(again)
    assert pair_set(first) != pair_set(other)


def test_each_pair_is_stored_in_a_random_order_that_the_seed_repeats():
    # Ids rise with difficulty in many catalogs; if "a" were always the smaller
    # id, a label like "b is harder" would be constant and kappa meaningless.
    catalog = make_catalog(per_subject=12)
    first = make_study(catalog, n_pairs=60, seed=5)
    again = make_study(catalog, n_pairs=60, seed=5)
    ordered = list(first.pairs.order_by("position").values_list("question_a_id", "question_b_id"))
    assert ordered == list(again.pairs.order_by("position").values_list("question_a_id", "question_b_id"))
    smaller_first = sum(a < b for a, b in ordered)
    # A fair coin over 60 pairs: P(outside 15..45) < 1e-4.
    assert 15 <= smaller_first <= 45


def test_it_leaves_out_questions_every_model_solved_or_failed_unless_asked():
    catalog = make_catalog(per_subject=4, unkept=1)  # 3 kept per subject: 3 + 3 = 6 pairs
    unkept = set(QuestionResult.objects.filter(run=catalog.run, kept=False).values_list("question_id", flat=True))
    assert len(unkept) == 2
    study = make_study(catalog, n_pairs=6)
    used = {q for pair in pair_set(study) for q in pair}
    assert not used & unkept
    with pytest.raises(ValueError, match="only 6 distinct same-subject pairs are possible from 6 eligible"):
        make_study(catalog, n_pairs=7)
    everything = study_create(name="all", run=catalog.run, datasets=[catalog.dataset], n_pairs=12, seed=1,
                              include_unkept=True)
    assert {q for pair in pair_set(everything) for q in pair} >= unkept


def test_it_can_restrict_to_some_subjects():
    catalog = make_catalog(subjects=("Mathematics", "Physics", "Law"), per_subject=4)
    law = Subject.objects.get(name="Law")
    study = study_create(name="law only", run=catalog.run, datasets=[catalog.dataset], subjects=[law],
                         n_pairs=6, seed=2)
    assert {Question.objects.get(pk=a).subject_id for a, _ in pair_set(study)} == {law.pk}
    assert list(study.subjects.all()) == [law]
    stray = Subject.objects.create(name="Astrology")
    with pytest.raises(ValueError, match=r"subjects \['Astrology'\] have no question"):
        study_create(name="x", run=catalog.run, datasets=[catalog.dataset], subjects=[stray], n_pairs=1, seed=2)


def test_methods_disagree_stores_the_number_of_disagreeing_baselines():
    catalog = make_catalog(per_subject=5)
    study = make_study(catalog, n_pairs=20, strategy="methods_disagree")  # all 2 x C(5,2) = 20 pairs
    values = {q.pk: difficulty_of(i) for i, q in enumerate(catalog.questions)}
    for pair in study.pairs.all():
        a, b = values[pair.question_a_id], values[pair.question_b_id]
        # Slow, obvious count: baselines ordering the pair opposite to EIP.
        expected = sum(
            (a["eip"] - b["eip"]) * (a[m] - b[m]) < 0
            for m in ("simple_rank", "accuracy_difficulty", "irt_1pl", "irt_2pl", "irt_mirt")
        )
        assert pair.stratum == expected, (pair, expected)
    assert max(study.pairs.values_list("stratum", flat=True)) >= 1


def test_stratified_gap_spreads_pairs_over_the_gap_tertiles():
    catalog = make_catalog(per_subject=5)
    study = make_study(catalog, n_pairs=9, strategy="stratified_gap")
    assert sorted(study.pairs.values_list("stratum", flat=True)) == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert_valid_pairs(study)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"target_judgments_per_pair": 0}, ERR_TARGET.format(value=0)),
        ({"strategy": "best"}, "strategy must be one of"),
        ({"n_pairs": 0}, "n_pairs must be an integer >= 1; got 0"),
        ({"datasets": []}, "datasets must name at least one dataset"),
        ({"name": "  "}, "name must not be empty"),
        ({"seed": -1}, "seed must be a non-negative integer; got -1"),
    ],
)
def test_it_rejects_bad_arguments(change, message):
    catalog = make_catalog()
    kwargs = {"name": "s", "run": catalog.run, "datasets": [catalog.dataset], "n_pairs": 2, "seed": 1, **change}
    with pytest.raises(ValueError) as err:
        study_create(**kwargs)
    assert message in str(err.value)
    assert Study.objects.count() == 0


def test_it_refuses_a_taken_name_and_an_unfinished_run():
    catalog = make_catalog()
    make_study(catalog, name="pilot", n_pairs=2)
    with pytest.raises(ValueError, match=ERR_NAME_TAKEN.format(name="pilot").replace("'", ".")):
        make_study(catalog, name="pilot", n_pairs=2)
    catalog.run.status = RunStatus.RUNNING
    catalog.run.save()
    with pytest.raises(ValueError) as err:
        make_study(catalog, name="other", n_pairs=2)
    assert str(err.value) == ERR_RUN_NOT_DONE.format(run_id=catalog.run.pk, status="running")


# --- commands -------------------------------------------------------------------


def test_create_study_uses_the_latest_finished_run_and_prints_an_invitation():
    catalog = make_catalog(per_subject=4)
    out = StringIO()
    summary = call_command(
        "create_study", "--name", "Pilot", "--datasets", catalog.dataset.name, "--pairs", "5", "--seed", "2",
        stdout=out,
    )
    study = Study.objects.get(name="Pilot")
    assert summary == f"study {study.pk} 'Pilot': 5 pairs (uniform, seed 2) from run {catalog.run.pk}"
    invitation = Invitation.objects.get(study=study)
    assert f"invitation link: http://127.0.0.1:8000/join/{invitation.token}/\n" in out.getvalue()
    assert len(invitation.token) >= 43  # token_urlsafe(32)
    assert_valid_pairs(study)


def test_create_study_prints_the_full_invitation_url_under_the_given_base():
    catalog = make_catalog(per_subject=4)
    out = StringIO()
    call_command("create_study", "--name", "Remote", "--datasets", catalog.dataset.name, "--pairs", "3",
                 "--base-url", "https://eip.example.org/", stdout=out)
    token = Invitation.objects.get(study__name="Remote").token
    assert f"invitation link: https://eip.example.org/join/{token}/\n" in out.getvalue()
    with pytest.raises(CommandError, match=r"--base-url must start with http:// or https://; got 'eip.example.org'"):
        call_command("create_study", "--name", "Bad", "--datasets", catalog.dataset.name, "--pairs", "3",
                     "--base-url", "eip.example.org", stdout=StringIO())
    assert not Study.objects.filter(name="Bad").exists()


def test_create_study_explains_user_mistakes():
    catalog = make_catalog(per_subject=3)
    with pytest.raises(CommandError, match=r"^no dataset 'nope'; known: "):
        call_command("create_study", "--name", "x", "--datasets", "nope", stdout=StringIO())
    with pytest.raises(CommandError, match="only 6 distinct same-subject pairs"):
        call_command("create_study", "--name", "x", "--datasets", catalog.dataset.name, "--pairs", "70",
                     stdout=StringIO())
    with pytest.raises(CommandError, match="no scoring run with id 999"):
        call_command("create_study", "--name", "x", "--datasets", catalog.dataset.name, "--run", "999",
                     stdout=StringIO())
    assert Study.objects.count() == 0


def test_create_evaluator_prints_a_working_one_time_password(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    study = make_study(make_catalog(), n_pairs=2, name="Pilot")
    out = StringIO()
    summary = call_command("create_evaluator", "--username", "vera", "--study", "Pilot", stdout=out)
    assert summary == f"evaluator 'vera' joined study {study.pk} 'Pilot'"
    password = out.getvalue().split("password (shown once): ")[1].split()[0]
    user = authenticate(username="vera", password=password)
    assert user is not None and user.groups.filter(name="evaluator").exists()
    assert Participation.objects.filter(study=study, user=user).exists()
    assert f"/accounts/login/?next=/studies/{study.pk}/" in out.getvalue()
    with pytest.raises(CommandError, match="username 'vera' is already taken"):
        call_command("create_evaluator", "--username", "vera", "--study", str(study.pk), stdout=StringIO())
    with pytest.raises(CommandError, match="no study named or numbered 'Nope'"):
        call_command("create_evaluator", "--username", "w", "--study", "Nope", stdout=StringIO())


# --- real data ------------------------------------------------------------------


def test_a_70_pair_study_from_mmlu_pro(shared_data):
    """Builds the catalog rows straight from MMLU-Pro's CSVs (the loader is
    someone else's) for 150 questions of each of three categories."""
    import pandas as pd

    folder = shared_data / "mmlu-pro"
    questions = pd.read_csv(folder / "questions.csv", usecols=["question_id", "category", "question", "options_json"])
    chosen = questions[questions["category"].isin(["math", "physics", "law"])].groupby("category").head(150)
    responses = pd.read_csv(folder / "responses_binary.csv").set_index("question_id").loc[chosen["question_id"]]
    solved = responses.mean(axis=1, skipna=True).to_numpy()
    kept = (solved > 0) & (solved < 1)  # EIP drops all-solved and all-failed questions

    dataset = Dataset.objects.create(name="MMLU-Pro")
    subjects = {name: Subject.objects.get_or_create(name=name)[0] for name in chosen["category"].unique()}
    rows = Question.objects.bulk_create(
        Question(dataset=dataset, subject=subjects[r.category], external_id=str(r.question_id),
                 text=r.question, options=json.loads(r.options_json))
        for r in chosen.itertuples()
    )
    response_set = ResponseSet.objects.create(name="mmlu-pro", file_name="responses_binary.csv",
                                              checksum="f" * 64, file_format="wide-csv")
    run = ScoringRun.objects.create(response_set=response_set, status=RunStatus.DONE)
    QuestionResult.objects.bulk_create(
        QuestionResult(run=run, question=q, kept=bool(k), n_observed=int(responses.iloc[i].notna().sum()),
                       scores={"accuracy_difficulty": float(1 - solved[i])})
        for i, (q, k) in enumerate(zip(rows, kept))
    )
    study = study_create(name="MMLU-Pro 70", run=run, datasets=[dataset], n_pairs=70, seed=1)

    pairs = list(Pair.objects.filter(study=study).select_related("question_a", "question_b"))
    assert len(pairs) == 70
    assert len({(p.question_a_id, p.question_b_id) for p in pairs}) == 70
    assert all(p.question_a.subject_id == p.question_b.subject_id for p in pairs)
    kept_ids = {q.pk for q, k in zip(rows, kept) if k}
    assert all(p.question_a_id in kept_ids and p.question_b_id in kept_ids for p in pairs)
    assert len({p.question_a.subject_id for p in pairs}) == 3  # 70 draws hit all three categories
    assert 0 < kept.sum() < len(kept)  # some questions really were dropped


# --- a study's scope freezes at its first judgment ------------------------------


def judge_first_pair(study: Study, *, choice: str = "left", username: str = "ada") -> None:
    """One evaluator answers (or skips) the first pair shown to them."""
    participation = make_evaluator(study, username)
    screen = judging_screen(participation=participation)
    judgment_submit(participation=participation, pair_id=screen.pair.pk, left_question_id=screen.left.pk,
                    choice=choice)


def scope_state(study: Study) -> dict[str, object]:
    """Everything a scope change could touch, read fresh from the database."""
    fresh = Study.objects.get(pk=study.pk)
    return {
        "datasets": sorted(fresh.datasets.values_list("pk", flat=True)),
        "subjects": sorted(fresh.subjects.values_list("pk", flat=True)),
        "n_pairs": fresh.n_pairs,
        "pairs": list(Pair.objects.filter(study=study).order_by("position").values_list(
            "pk", "position", "question_a_id", "question_b_id", "stratum")),
        "assignments": sorted(Assignment.objects.filter(pair__study=study).values_list("pk", flat=True)),
        "judgments": sorted(Judgment.objects.filter(pair__study=study).values_list("pk", flat=True)),
    }


def frozen_message(study: Study, n_judgments: int = 1) -> str:
    return ERR_SCOPE_FROZEN.format(name=study.name, study_id=study.pk, n_judgments=n_judgments)


def test_the_scope_message_names_the_study_and_the_way_forward():
    catalog = make_catalog(per_subject=4)
    study = make_study(catalog, n_pairs=4, name="Pilot 7")
    assert frozen_message(study, 3) == (
        f"study 'Pilot 7' (id {study.pk}) is frozen: it has 3 judgment(s), so its datasets, subjects and pairs can "
        "no longer change; to judge a different scope, create a new study"
    )


def test_before_any_judgment_the_scope_may_change_and_the_pairs_are_drawn_again():
    catalog = make_catalog(per_subject=5)
    other = make_catalog(subjects=("Chemistry", "Biology"), per_subject=5)
    # One run scores both datasets' questions, as a real multi-dataset run does.
    QuestionResult.objects.filter(run=other.run).update(run=catalog.run)
    study = make_study(catalog, n_pairs=6, seed=3)
    participation = make_evaluator(study, "ada")
    judging_screen(participation=participation)  # a pair on screen, not answered: not frozen
    assert study_scope_frozen(study=study) is False
    assert Assignment.objects.filter(pair__study=study).count() == 1

    chemistry = Subject.objects.get(name="Chemistry")
    study_scope_update(study=study, datasets=[other.dataset], subjects=[chemistry], n_pairs=5)

    state = scope_state(study)
    assert state["datasets"] == [other.dataset.pk]
    assert state["subjects"] == [chemistry.pk]
    assert state["n_pairs"] == 5
    assert state["assignments"] == []  # the unanswered pair was withdrawn
    # The same pairs, in the same order, as a new study with this scope.
    fresh = study_create(name="same scope", run=catalog.run, datasets=[other.dataset], subjects=[chemistry],
                         n_pairs=5, seed=3)
    assert [p[1:] for p in state["pairs"]] == list(
        fresh.pairs.order_by("position").values_list("position", "question_a_id", "question_b_id", "stratum"))
    questions = {q for p in state["pairs"] for q in p[2:4]}
    assert set(Question.objects.filter(pk__in=questions).values_list("dataset_id", "subject_id")) == {
        (other.dataset.pk, chemistry.pk)}


@pytest.mark.parametrize("choice", ["left", "skip"])
@pytest.mark.parametrize("change", ["datasets", "subjects", "pairs"])
def test_after_the_first_judgment_no_scope_change_is_accepted(choice, change):
    catalog = make_catalog(per_subject=5)
    other = make_catalog(per_subject=5)
    QuestionResult.objects.filter(run=other.run).update(run=catalog.run)
    study = make_study(catalog, n_pairs=6, seed=3)
    judge_first_pair(study, choice=choice)
    assert study_scope_frozen(study=study) is True
    arguments = {
        "datasets": {"datasets": [catalog.dataset, other.dataset]},
        "subjects": {"datasets": [catalog.dataset], "subjects": catalog.subjects[:1]},
        "pairs": {"datasets": [catalog.dataset], "n_pairs": 4},
    }[change]
    before = scope_state(study)

    for service in (study_scope_validate, study_scope_update):
        with pytest.raises(StudyScopeFrozenError) as caught:
            service(study=study, **arguments)
        assert str(caught.value) == frozen_message(study)
        assert isinstance(caught.value, ValueError)

    assert scope_state(study) == before
    assert len(before["pairs"]) == 6 and len(before["judgments"]) == 1


def test_the_message_counts_every_judgment():
    catalog = make_catalog(per_subject=5)
    study = make_study(catalog, n_pairs=6)
    judge_first_pair(study, username="ada")
    judge_first_pair(study, choice="skip", username="bob")
    with pytest.raises(StudyScopeFrozenError) as caught:
        study_scope_guard(study=study)
    assert str(caught.value) == frozen_message(study, 2)


def test_a_bad_new_scope_changes_nothing():
    catalog = make_catalog(per_subject=5)
    study = make_study(catalog, n_pairs=6)
    before = scope_state(study)
    with pytest.raises(ValueError) as caught:
        study_scope_update(study=study, datasets=[])
    assert str(caught.value) == ERR_NO_DATASETS
    study_scope_validate(study=study, datasets=[catalog.dataset], subjects=catalog.subjects[:1])  # valid: no write
    assert scope_state(study) == before


def test_a_concurrent_judgment_makes_the_scope_change_roll_back(monkeypatch):
    # The guard passed, then a judgment arrived before the old pairs were
    # deleted: the judgment protects its pair, so nothing of the change stays.
    catalog = make_catalog(per_subject=5)
    study = make_study(catalog, n_pairs=6)
    before = scope_state(study)
    monkeypatch.setattr(scope_service, "study_scope_frozen", lambda *, study: False)
    judge_first_pair(study)
    before["judgments"] = scope_state(study)["judgments"]
    before["assignments"] = scope_state(study)["assignments"]
    with pytest.raises(ProtectedError):
        study_scope_update(study=study, datasets=[catalog.dataset], n_pairs=4)
    assert scope_state(study) == before


def test_change_study_scope_draws_the_pairs_again_until_the_first_judgment():
    catalog = make_catalog(per_subject=5)
    study = make_study(catalog, n_pairs=6, seed=3, name="Pilot scope")
    out = StringIO()
    call_command("change_study_scope", "--study", "Pilot scope", "--datasets", catalog.dataset.name,
                 "--subjects", "Physics", "--pairs", "4", stdout=out)
    physics = Subject.objects.get(name="Physics")
    assert out.getvalue().strip() == f"study {study.pk} 'Pilot scope': 4 pairs drawn again from 1 dataset(s), " \
        "1 subject(s)"
    state = scope_state(study)
    assert state["subjects"] == [physics.pk] and state["n_pairs"] == 4 and len(state["pairs"]) == 4

    judge_first_pair(study, choice="skip")
    before = scope_state(study)
    with pytest.raises(CommandError) as caught:
        call_command("change_study_scope", "--study", str(study.pk), "--datasets", catalog.dataset.name)
    assert str(caught.value) == frozen_message(study)
    assert scope_state(study) == before
