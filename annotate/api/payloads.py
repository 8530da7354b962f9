"""The API's answers built from stored objects (shapes: :mod:`annotate.api.schemas`).

One small function per object, so that what an answer lists (e.g. the
methods of a scoring run) is decided in one place.
"""
from __future__ import annotations

from django.urls import reverse

from annotate.api import schemas
from annotate.catalog import LoadPreview, Problem
from annotate.models import ResponseSet, ScoringRun, Study, UploadJob
from scoring.methods import get_method, method_keys

PREVIEW_KEYS = ("name", "version", "supersedes", "checksum", "file_format", "n_responses", "n_questions", "n_models",
                "questions_new", "questions_existing", "models_new", "models_existing", "subjects_new", "datasets_new")


def problem_out(problem: Problem) -> schemas.Problem:
    return schemas.Problem(file=problem.file, row=problem.row, column=problem.column, message=problem.message)


def response_set_out(response_set: ResponseSet) -> schemas.ResponseSet:
    return schemas.ResponseSet(
        id=response_set.pk, name=response_set.name, version=response_set.version, status=response_set.status,
        file_name=response_set.file_name, file_format=response_set.file_format, checksum=response_set.checksum,
        n_questions=response_set.n_questions, n_models=response_set.n_models, n_responses=response_set.n_responses,
        created_at=response_set.created_at, notes=list(response_set.summary.get("notes", [])),
        is_human=response_set.is_human,
    )


def upload_out(job: UploadJob) -> schemas.UploadStatus:
    done = job.response_set_id
    return schemas.UploadStatus(
        id=job.pk, state=job.state, n_done=job.n_done, n_total=job.n_total, error=job.error,
        problems=[schemas.Problem(file=str(p.get("file", "")), row=p.get("row"), column=p.get("column"),
                                  message=str(p.get("message", ""))) for p in job.problems],
        response_set=done, created_at=job.created_at,
        response_set_url=reverse("annotate:api_response_set", kwargs={"response_set_id": done}) if done else None,
    )


def preview_out(preview: LoadPreview) -> schemas.Preview:
    return schemas.Preview(**{key: getattr(preview, key) for key in PREVIEW_KEYS}, notes=list(preview.notes),
                           text_formats={f.dataset: f.stored or f.suggestion.text_format
                                         for f in preview.text_formats})


def scoring_run_out(run: ScoringRun) -> schemas.ScoringRun:
    """A run's status and progress, and a summary of each method it ran (in registry order)."""
    order = {key: k for k, key in enumerate(method_keys())}
    return schemas.ScoringRun(
        id=run.pk, response_set=run.response_set_id, status=run.status, progress=run.progress, error=run.error,
        params=run.params, created_at=run.created_at, finished_at=run.finished_at,
        methods=[
            schemas.MethodSummary(method=m.method, label=_label(m.method), n_iter=m.n_iter, converged=m.converged,
                                  residual=m.residual, duration_s=m.duration_s)
            for m in sorted(run.methods.all(), key=lambda m: (order.get(m.method, len(order)), m.method))
        ],
    )


def _label(key: str) -> str:
    try:
        return get_method(key).label
    except KeyError:  # stored by a method since removed from the registry
        return key


def study_out(study: Study) -> schemas.Study:
    """A study; ``n_evaluators`` and ``n_judgments`` when the selector annotated them."""
    return schemas.Study(
        id=study.pk, name=study.name, status=study.status, strategy=study.strategy, n_pairs=study.n_pairs,
        target_judgments_per_pair=study.target_judgments_per_pair, scoring_run=study.scoring_run_id,
        adaptive_min_comparisons=study.adaptive_min_comparisons if study.is_adaptive else None,
        adaptive_random_share=study.adaptive_random_share if study.is_adaptive else None,
        created_at=study.created_at, closed_at=study.closed_at,
        n_evaluators=getattr(study, "n_evaluators", None), n_judgments=getattr(study, "n_judgments", None),
    )
