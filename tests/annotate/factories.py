"""Small factories for the judging tests: a catalog, a finished scoring run
with distinctive difficulty values, a study, and a cast of users.

The difficulty values and model names are deliberately unusual strings so a
test can search every evaluator-facing page for them.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.test import Client
from django.utils import timezone

from annotate.models import (
    Dataset,
    LanguageModel,
    ModelResult,
    Participation,
    Question,
    QuestionResult,
    ResponseSet,
    ResponseSetModel,
    ResponseSetQuestion,
    RunStatus,
    ScoringRun,
    Study,
    Subject,
)
from annotate.studies.services.judging import judging_screen, judgment_submit
from annotate.studies.services.participation import (
    ensure_role_groups,
    participation_accept_guidelines,
    participation_onboard,
)
from annotate.studies.services.studies import study_create

MODEL_NAMES = ("zebrafinch-70b-secret", "marmoset-8b-hidden", "quokka-3b-private")
_counter = itertools.count(1)


@dataclass
class Catalog:
    dataset: Dataset
    subjects: list[Subject]
    questions: list[Question]
    models: list[LanguageModel]
    response_set: ResponseSet
    run: ScoringRun


def difficulty_of(k: int) -> dict[str, float]:
    """Distinctive per-question values (e.g. 41.379157) unlikely to appear by chance."""
    base = 11.0 + 7.13 * k + 0.000157 * (k + 1)
    return {
        "eip": round(0.0013 + 0.000271 * k + 0.00000089 * k * k, 9),
        "eip_scaled": round(base, 6),
        "simple_rank": round(0.1 + 0.0517 * ((k * 7) % 13) + 0.000031, 6),
        "accuracy_difficulty": round(0.07 + 0.0613 * ((k * 5) % 11) + 0.000047, 6),
        "irt_1pl": round(-2.31 + 0.3179 * ((k * 3) % 17), 6),
        "irt_2pl": round(-1.97 + 0.2833 * ((k * 11) % 19), 6),
        "irt_mirt": round(3.3 + 4.4417 * ((k * 13) % 23), 6),
    }


def make_catalog(
    *,
    subjects: tuple[str, ...] = ("Mathematics", "Physics"),
    per_subject: int = 4,
    unkept: int = 0,
    with_text: str = "",
) -> Catalog:
    """Questions of ``subjects`` (``per_subject`` each), three language models with
    responses, and a finished scoring run. The first ``unkept`` questions of each
    subject get ``kept=False``."""
    n = next(_counter)
    dataset = Dataset.objects.create(name=f"bench-{n}")
    subject_rows = [Subject.objects.get_or_create(name=name)[0] for name in subjects]
    questions = []
    for s, subject in enumerate(subject_rows):
        for k in range(per_subject):
            questions.append(
                Question.objects.create(
                    dataset=dataset,
                    subject=subject,
                    external_id=f"q{s}-{k}",
                    text=f"Question {s}-{k} of {subject.name}: what follows?{with_text}",
                    options=[f"option {c} of {s}-{k}" for c in "abcd"],
                    reference_answer="A",
                    metadata={"secret_level": "college"},
                )
            )
    models = [LanguageModel.objects.get_or_create(name=name)[0] for name in MODEL_NAMES]
    response_set = ResponseSet.objects.create(
        name=f"responses-{n}", file_name="r.csv", checksum=f"{n:064d}", file_format="csv",
        n_questions=len(questions), n_models=len(models),
    )
    write_responses(response_set, [(q, m, float((i + j) % 2)) for i, q in enumerate(questions)
                                   for j, m in enumerate(models)])
    run = ScoringRun.objects.create(
        response_set=response_set, status=RunStatus.DONE, progress=1.0, finished_at=timezone.now()
    )
    QuestionResult.objects.bulk_create(
        QuestionResult(
            run=run, question=q, kept=(i % per_subject) >= unkept, n_observed=len(models), scores=difficulty_of(i)
        )
        for i, q in enumerate(questions)
    )
    ModelResult.objects.bulk_create(
        ModelResult(run=run, model=m, n_observed=len(questions),
                    scores={"eip": 0.123457 + j, "eip_scaled": 87.654321 - j, "accuracy": 0.543219 + 0.1 * j})
        for j, m in enumerate(models)
    )
    return Catalog(dataset, subject_rows, questions, models, response_set, run)


def write_responses(response_set: ResponseSet, cells) -> ResponseSet:
    """Give ``response_set`` these responses, as a load would: its matrix store and
    membership rows (what ``Response.objects.bulk_create`` did before the store).

    ``cells`` is an iterable of ``(question, model, credit)`` with Question and
    LanguageModel rows (or their ids); rows of the matrix in ascending question
    id, columns in ascending model id. Replaces any matrix the set had.
    """
    import numpy as np

    from annotate.catalog import matrix_store

    triples = [(getattr(q, "pk", q), getattr(m, "pk", m), float(c)) for q, m, c in cells]
    question_ids = sorted({q for q, _, _ in triples})
    model_ids = sorted({m for _, m, _ in triples})
    row = {q: i for i, q in enumerate(question_ids)}
    column = {m: j for j, m in enumerate(model_ids)}
    ResponseSetQuestion.objects.filter(response_set=response_set).delete()
    ResponseSetModel.objects.filter(response_set=response_set).delete()
    ResponseSetQuestion.objects.bulk_create(
        ResponseSetQuestion(response_set=response_set, question_id=q, row=i) for q, i in row.items())
    ResponseSetModel.objects.bulk_create(
        ResponseSetModel(response_set=response_set, model_id=m, column=j) for m, j in column.items())
    matrix_store.store_remove(response_set.pk)
    temp = matrix_store.temp_store_path(response_set.pk)
    matrix_store.write_cells(
        temp, np.array([row[q] for q, _, _ in triples], dtype=np.int64),
        np.array([column[m] for _, m, _ in triples], dtype=np.int64),
        np.array([c for _, _, c in triples], dtype=np.float64),
        n_questions=len(row), n_models=len(column), response_set=response_set.pk)
    matrix_store.store_publish(temp, response_set.pk)
    ResponseSet.objects.filter(pk=response_set.pk).update(
        n_questions=len(row), n_models=len(column), n_responses=len(triples))
    response_set.n_questions, response_set.n_models, response_set.n_responses = len(row), len(column), len(triples)
    return response_set


def stored_responses(response_set: ResponseSet) -> list[tuple[str, str, float]]:
    """Every observed cell of ``response_set`` as (question external id, model name,
    credit), sorted: read back from its matrix store and membership rows."""
    import numpy as np

    from annotate.catalog import matrix_store

    questions = dict(ResponseSetQuestion.objects.filter(response_set=response_set)
                     .values_list("row", "question__external_id"))
    models = dict(ResponseSetModel.objects.filter(response_set=response_set).values_list("column", "model__name"))
    if not questions:
        return []
    dense = matrix_store.read_dense(matrix_store.store_path(response_set.pk))
    rows, columns = np.nonzero(~np.isnan(dense))
    return sorted((questions[i], models[j], float(dense[i, j])) for i, j in zip(rows.tolist(), columns.tolist()))


def n_stored_responses(response_set: ResponseSet | None = None) -> int:
    """Observed cells in the stores of ``response_set`` (default: every set)."""
    sets = [response_set] if response_set is not None else list(ResponseSet.objects.all())
    return sum(len(stored_responses(rs)) for rs in sets)


def make_study(catalog: Catalog, *, n_pairs: int = 8, seed: int = 1, target: int = 20, name: str | None = None,
               strategy: str = "uniform", owner: AbstractBaseUser | None = None) -> Study:
    return study_create(
        created_by=owner,
        name=name or f"Study {next(_counter)}",
        run=catalog.run,
        datasets=[catalog.dataset],
        n_pairs=n_pairs,
        seed=seed,
        strategy=strategy,
        target_judgments_per_pair=target,
    )


def make_user(username: str, *, staff: bool = False, password: str | None = None) -> AbstractBaseUser:
    """A user; without ``password`` it has an unusable one (no slow hashing)."""
    return get_user_model().objects.create_user(username=username, password=password, is_staff=staff)


def client_for(user: AbstractBaseUser | None = None) -> Client:
    """A test client signed in as ``user`` (anonymous when ``None``)."""
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def make_researcher(username: str, *, password: str | None = None) -> AbstractBaseUser:
    """A user in the "researcher" group (not staff)."""
    researchers, _ = ensure_role_groups()
    user = make_user(username, password=password)
    user.groups.add(researchers)
    return user


def make_evaluator(study: Study, username: str, *, ready: bool = True) -> Participation:
    """An evaluator in ``study``; ``ready`` = onboarded and guidelines accepted."""
    _, evaluators = ensure_role_groups()
    user = make_user(username)
    user.groups.add(evaluators)
    participation = Participation.objects.create(study=study, user=user)
    if ready:
        participation_onboard(
            participation=participation, field_of_study="mathematics", education_level="master_student",
            qualified_subjects=list(study.subjects.all()[:1]),
        )
        participation_accept_guidelines(participation=participation)
    return participation


def judge(participation: Participation, choices: list[str]) -> None:
    """Answer the screens ``participation`` is shown, one choice (left, right, skip) each, through the services."""
    for choice in choices:
        screen = judging_screen(participation=participation)
        judgment_submit(participation=participation, pair_id=screen.pair.pk, left_question_id=screen.left.pk,
                        choice=choice)


def all_stored_responses() -> list[tuple[str, str, float]]:
    """:func:`stored_responses` of every response set, together, sorted."""
    return sorted(cell for rs in ResponseSet.objects.all() for cell in stored_responses(rs))
