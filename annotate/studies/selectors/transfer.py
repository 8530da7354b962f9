"""Reads of a study export (annotate/studies/services/study_transfer.py builds the
document from these rows; the import side, which writes, stays in the service).

Every read is by database id; the service turns ids into natural keys.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import connection
from django.db.models import Q
from django.db.models.functions import Collate

from annotate.models import (
    AdaptivePoolQuestion,
    Assignment,
    Dataset,
    ExclusionEvent,
    Judgment,
    LanguageModel,
    MethodResult,
    Pair,
    Participation,
    Question,
    QuestionResult,
    Study,
)

#: Rows read per query while an export streams the questions and the run's results.
EXPORT_CHUNK = 2000
#: Question ids per query when looking up natural keys.
KEY_BLOCK = 5000
#: Fields of a ``QuestionResult`` an export carries.
RESULT_FIELDS = ("kept", "n_observed", "scores")
#: Fields of a ``MethodResult`` an export carries.
METHOD_FIELDS = ("method", "params", "n_iter", "converged", "residual", "duration_s", "notes")
#: Fields of a ``LanguageModel`` an export carries (for the run's ``models_used``).
MODEL_FIELDS = ("name", "family", "parameters_b", "access")
#: Fields of a stored pools ``AnalysisRun`` an export carries.
POOLS_FIELDS = ("params", "result", "created_at", "started_at", "finished_at", "duration_s")
#: Fields of a ``Judgment`` an export carries (besides its participation).
JUDGMENT_FIELDS = ("pair_id", "choice", "left_question_id", "harder_question_id", "shown_at", "submitted_at",
                   "seconds", "client_seconds")


@dataclass(frozen=True)
class StudyExportRows:
    """The small part of a study export :func:`study_export_rows` reads, as plain rows.

    The run's question results and the questions are not among them: they grow
    with the run, so :func:`study_export_questions` and
    :func:`study_export_results` read them a block at a time.

    Attributes
    ----------
    pairs : list of (pk, position, question_a_id, question_b_id, stratum)
        In position order.
    keys : dict of int to (str, str)
        Question id -> (dataset name, external id) of every question a pair or
        the adaptive pool refers to.
    datasets : list of (name, description)
        The study's datasets and those of the exported questions, by name.
    study_datasets, study_subjects : list of str
        Names of the study's datasets and subjects, sorted.
    methods : list of dict
        :data:`METHOD_FIELDS` of the run's method results, by method.
    participations : list of Participation
        With ``user`` and ``qualified_subjects`` loaded.
    assignments : list of (participation_id, pair_id, left_question_id, shown_at)
    judgments : list of dict
        ``participation_id`` and :data:`JUDGMENT_FIELDS`.
    models_used : list of dict
        :data:`MODEL_FIELDS` of the run's ``models_used``, by name.
    attention_checks : dict of int to int
        Pair id -> expected harder question id, for the attention-check pairs.
    exclusion_events : list of (participation_id, action, reason, by username or None, at)
        The exclusion audit trail, oldest first.
    pool : list of (question_id, block)
        The adaptive pool (empty for other strategies).
    """

    pairs: list[tuple[int, int, int, int, int | None]]
    keys: dict[int, tuple[str, str]]
    datasets: list[tuple[str, str]]
    study_datasets: list[str]
    study_subjects: list[str]
    methods: list[dict]
    participations: list[Participation]
    assignments: list[tuple]
    judgments: list[dict]
    models_used: list[dict]
    attention_checks: dict[int, int] = field(default_factory=dict)
    exclusion_events: list[tuple] = field(default_factory=list)
    pool: list[tuple[int, int | None]] = field(default_factory=list)


def _exported_questions(study: Study) -> Q:
    """The questions an export of ``study`` carries: every one its run scored
    (the report's profiles and label correlations read all of them, its pairs
    read any question's) and every one of its pairs."""
    scored = QuestionResult.objects.filter(run_id=study.scoring_run_id).values("question_id")
    paired = Pair.objects.filter(study=study)
    return (Q(pk__in=scored) | Q(pk__in=paired.values("question_a_id"))
            | Q(pk__in=paired.values("question_b_id")))


def study_export_rows(*, study: Study) -> StudyExportRows:
    """Read the small part of an export of ``study`` (about 15 queries, none per row)."""
    run_id = study.scoring_run_id
    pairs = list(Pair.objects.filter(study=study).order_by("position").values_list(
        "pk", "position", "question_a_id", "question_b_id", "stratum"))
    pool = list(AdaptivePoolQuestion.objects.filter(study=study).values_list("question_id", "block"))
    exported = Question.objects.filter(_exported_questions(study))
    datasets = list(Dataset.objects.filter(Q(pk__in=study.datasets.values("pk"))
                                           | Q(pk__in=exported.values("dataset_id")))
                    .order_by("name").values_list("name", "description"))
    return StudyExportRows(
        pairs=pairs,
        keys=study_export_keys(study=study, question_ids={q for p in pairs for q in (p[2], p[3])}
                               | {q for q, _ in pool}),
        datasets=datasets,
        study_datasets=sorted(study.datasets.values_list("name", flat=True)),
        study_subjects=sorted(study.subjects.values_list("name", flat=True)),
        methods=list(MethodResult.objects.filter(run_id=run_id).order_by("method").values(*METHOD_FIELDS)),
        participations=list(Participation.objects.filter(study=study).select_related("user", "excluded_by")
                            .prefetch_related("qualified_subjects")),
        assignments=list(Assignment.objects.filter(participation__study=study).values_list(
            "participation_id", "pair_id", "left_question_id", "shown_at")),
        judgments=list(Judgment.objects.filter(participation__study=study).values(
            "participation_id", *JUDGMENT_FIELDS)),
        models_used=list(LanguageModel.objects.filter(pk__in=study.scoring_run.models_used.values("pk"))
                         .order_by("name").values(*MODEL_FIELDS)),
        attention_checks=dict(Pair.objects.filter(study=study, attention_check=True)
                              .values_list("pk", "expected_harder_id")),
        exclusion_events=list(ExclusionEvent.objects.filter(participation__study=study).order_by("at", "pk")
                              .values_list("participation_id", "action", "reason", "by__username", "at")),
        pool=pool,
    )


def study_export_keys(*, study: Study, question_ids: Iterable[int]) -> dict[int, tuple[str, str]]:
    """Question id -> (dataset name, external id) of those of ``question_ids``
    that an export of ``study`` carries (a block of ids per query)."""
    ids = sorted(set(question_ids))
    exported = Question.objects.filter(_exported_questions(study))
    found: dict[int, tuple[str, str]] = {}
    for start in range(0, len(ids), KEY_BLOCK):
        for pk, dataset, external_id in exported.filter(pk__in=ids[start:start + KEY_BLOCK]).values_list(
                "pk", "dataset__name", "external_id"):
            found[pk] = (dataset, external_id)
    return found


def study_export_questions(*, study: Study, chunk_size: int = EXPORT_CHUNK) -> Iterator[dict]:
    """Every question an export of ``study`` carries, ascending id, read
    ``chunk_size`` rows at a time: ``pk``, ``dataset__name``, ``external_id``,
    ``subject__name``, ``text``, ``options``, ``reference_answer``, ``metadata``."""
    return (Question.objects.filter(_exported_questions(study)).order_by("pk")
            .values("pk", "dataset__name", "external_id", "subject__name", "text", "options", "reference_answer",
                    "metadata")
            .iterator(chunk_size=chunk_size))


def _code_point_order(field_name: str) -> Collate:
    """``field_name`` compared character by character as Python compares strings
    (byte order of UTF-8, whatever the database's default collation)."""
    return Collate(field_name, "C" if connection.vendor == "postgresql" else "BINARY")


def study_export_results(*, study: Study, chunk_size: int = EXPORT_CHUNK) -> Iterator[dict]:
    """Every question result of the study's run, ``chunk_size`` rows at a time,
    ordered by (dataset name, external id) as Python orders the pair of strings:
    ``question__dataset__name``, ``question__external_id`` and :data:`RESULT_FIELDS`."""
    return (QuestionResult.objects.filter(run_id=study.scoring_run_id)
            .order_by(_code_point_order("question__dataset__name"), _code_point_order("question__external_id"))
            .values("question__dataset__name", "question__external_id", *RESULT_FIELDS)
            .iterator(chunk_size=chunk_size))


# --- what an import checks against -----------------------------------------------------


def questions_by_key(*, dataset_names: Iterable[str]) -> dict[tuple[str, str], Question]:
    """The stored questions of the datasets named, by (dataset name, external id),
    with ``dataset`` and ``subject`` loaded."""
    return {
        (q.dataset.name, q.external_id): q
        for q in Question.objects.filter(dataset__name__in=list(dataset_names)).select_related("dataset", "subject")
    }


def models_by_name(*, names: Iterable[str]) -> dict[str, LanguageModel]:
    """The stored language models among ``names`` (name -> model)."""
    return {m.name: m for m in LanguageModel.objects.filter(name__in=list(names))}


def users_by_username(*, usernames: Iterable[str]) -> dict[str, AbstractBaseUser]:
    """The accounts among ``usernames`` that exist (username -> user)."""
    return {u.get_username(): u for u in get_user_model().objects.filter(username__in=list(usernames))}


def study_name_taken(*, name: str) -> bool:
    """Whether a study is called ``name`` (names are unique)."""
    return Study.objects.filter(name=name).exists()
