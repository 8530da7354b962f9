"""JSON shapes of the API's objects (see the schema in :mod:`annotate.api.schema`)."""
from __future__ import annotations

from datetime import datetime

from annotate.loaders.base import Problem
from annotate.models import ResponseSet, ScoringRun, Study
from annotate.services.loading import LoadPreview


def _time(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def problem_json(problem: Problem) -> dict:
    return {"file": problem.file, "row": problem.row, "column": problem.column, "message": problem.message}


def response_set_json(response_set: ResponseSet) -> dict:
    return {
        "id": response_set.pk,
        "name": response_set.name,
        "version": response_set.version,
        "status": response_set.status,
        "file_name": response_set.file_name,
        "file_format": response_set.file_format,
        "checksum": response_set.checksum,
        "n_questions": response_set.n_questions,
        "n_models": response_set.n_models,
        "n_responses": response_set.n_responses,
        "created_at": _time(response_set.created_at),
        "notes": list(response_set.summary.get("notes", [])),
    }


def preview_json(preview: LoadPreview) -> dict:
    keys = ("name", "version", "supersedes", "checksum", "file_format", "n_responses", "n_questions", "n_models",
            "questions_new", "questions_existing", "models_new", "models_existing", "subjects_new", "datasets_new")
    return {**{key: getattr(preview, key) for key in keys}, "notes": list(preview.notes)}


def scoring_run_json(run: ScoringRun) -> dict:
    return {
        "id": run.pk,
        "response_set": run.response_set_id,
        "status": run.status,
        "progress": run.progress,
        "error": run.error,
        "params": run.params,
        "created_at": _time(run.created_at),
        "finished_at": _time(run.finished_at),
        "methods": [
            {"method": m.method, "n_iter": m.n_iter, "converged": m.converged, "residual": m.residual,
             "duration_s": m.duration_s}
            for m in run.methods.order_by("method")
        ],
    }


def study_json(study: Study) -> dict:
    return {
        "id": study.pk,
        "name": study.name,
        "status": study.status,
        "strategy": study.strategy,
        "n_pairs": study.n_pairs,
        "target_judgments_per_pair": study.target_judgments_per_pair,
        "scoring_run": study.scoring_run_id,
        "created_at": _time(study.created_at),
        "closed_at": _time(study.closed_at),
        "n_evaluators": getattr(study, "n_evaluators", None),
        "n_judgments": getattr(study, "n_judgments", None),
    }
