"""Results pages for staff and researchers: response sets and their scoring
runs, a run's methods, its model leaderboard and its question list, and the
run's tidy downloads (CSV, Parquet, codebook, zip)."""
from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from annotate.catalog import response_sets_visible
from annotate.core import (
    TidyTable,
    bundle_bytes,
    codebook_markdown,
    download_name,
    file_response,
    streamed_file_response,
)
from annotate.models import RunStatus, ScoringRun
from annotate.runs.forms import QuestionFilterForm
from annotate.runs.selectors.results import (
    RUN_TABLES,
    bound_notes,
    model_score_columns,
    question_rows,
    question_score_columns,
    question_sort_choices,
    response_sets_with_runs,
    run_datasets_and_subjects,
    run_datasets_used,
    run_estimation_bounds,
    run_leaderboard,
    run_methods,
    run_methods_table,
    run_min_models,
    run_models_table,
    run_models_used,
    run_provenance,
    run_questions_page,
    run_questions_table,
    run_table_chunks,
    runs_active,
)
from annotate.runs.selectors.settings import run_settings_text
from annotate.runs.services.scoring import DEFAULT_PARAMS, scoring_run_done_before, scoring_run_request
from annotate.studies import researcher_required

QUESTIONS_PER_PAGE = 50
MODELS_PER_PAGE = 100  # leaderboard rows per page (ranks are over every model of the run)
RUN_QUEUED_MESSAGE = "Scoring run {run_id} of {response_set} is queued; this page shows its progress."
RUN_REPEATS_MESSAGE = ("Run {before} already holds the results of the same settings; run {run_id} computes them "
                       "again (to score with other settings, use manage.py score_responses or the API).")
RUN_ACTIVE_MESSAGE = (
    "An identical scoring run of {response_set} (run {run_id}) is already {status}; no second run was queued."
)


def _run(run_id: int) -> ScoringRun:
    return get_object_or_404(ScoringRun.objects.select_related("response_set"), pk=run_id)


@researcher_required
def results_index(request: HttpRequest) -> HttpResponse:
    groups = response_sets_with_runs()
    for group in groups:
        for run in group.runs:
            run.settings_text = run_settings_text(params=run.params or {}, defaults=DEFAULT_PARAMS)
    context = {"groups": groups, "refresh": runs_active(groups=groups), "can_score": request.user.is_staff}
    return render(request, "annotate/results/index.html", context)


@researcher_required
@require_POST
def response_set_score(request: HttpRequest, response_set_id: int) -> HttpResponse:
    if not request.user.is_staff:
        raise PermissionDenied("staff only")
    response_set = get_object_or_404(response_sets_visible(), pk=response_set_id)
    outcome = scoring_run_request(response_set=response_set, user=request.user)
    if outcome.created:
        messages.success(request, RUN_QUEUED_MESSAGE.format(run_id=outcome.run.pk, response_set=response_set))
        before = scoring_run_done_before(run=outcome.run)
        if before is not None:
            messages.info(request, RUN_REPEATS_MESSAGE.format(run_id=outcome.run.pk, before=before.pk))
    else:
        messages.info(request, RUN_ACTIVE_MESSAGE.format(run_id=outcome.run.pk, response_set=response_set,
                                                         status=outcome.run.status))
    return redirect("annotate:results")


@researcher_required
def run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    run = _run(run_id)
    context = {"run": run, "methods": run_methods(run=run), "models_used": run_models_used(run=run),
               "datasets_used": run_datasets_used(run=run)}
    return render(request, "annotate/results/run_detail.html", context)


@researcher_required
def run_models(request: HttpRequest, run_id: int) -> HttpResponse:
    run = _run(run_id)
    page = Paginator(run_leaderboard(run=run), MODELS_PER_PAGE).get_page(request.GET.get("page"))
    context = {"run": run, "page": page, "rows": page.object_list, "columns": model_score_columns()}
    return render(request, "annotate/results/run_models.html", context)


@researcher_required
def run_questions_list(request: HttpRequest, run_id: int) -> HttpResponse:
    run = _run(run_id)
    datasets, subjects = run_datasets_and_subjects(run=run)
    form = QuestionFilterForm(request.GET or None, datasets=datasets, subjects=subjects,
                              sorts=question_sort_choices())
    chosen = form.cleaned_data if form.is_valid() else {}
    page = run_questions_page(run=run, page=request.GET.get("page"), per_page=QUESTIONS_PER_PAGE,
                              dataset=chosen.get("dataset"), subject=chosen.get("subject"),
                              search=chosen.get("q", ""), status=chosen.get("status", ""),
                              coverage=chosen.get("coverage", ""), sort=chosen.get("sort", ""),
                              direction=chosen.get("direction", ""))
    query = request.GET.copy()
    query.pop("page", None)
    min_models = run_min_models(run=run)
    bounds = run_estimation_bounds(run=run)
    context = {"run": run, "form": form, "page": page, "min_models": min_models,
               "rows": question_rows(results=page.object_list, min_models=min_models, bounds=bounds),
               "bounds": bound_notes(bounds),
               "columns": question_score_columns(), "query": query.urlencode(), "kept_query": query}
    return render(request, "annotate/results/run_questions.html", context)


def _done_run(run_id: int) -> ScoringRun:
    return get_object_or_404(ScoringRun.objects.select_related("response_set"), pk=run_id, status=RunStatus.DONE)



@researcher_required
@require_GET
def run_table_download(request: HttpRequest, run_id: int, table: str, fmt: str) -> HttpResponse:
    run = _done_run(run_id)
    chunks, file_name = run_table_chunks(run=run, table=table, fmt=fmt)
    return streamed_file_response(chunks, file_name=file_name)


def _run_codebook(run: ScoringRun, *, parquet: tuple[str, ...]) -> tuple[list[TidyTable], bytes]:
    tables = [run_questions_table(run=run), run_models_table(run=run), run_methods_table(run=run)]
    about = run_provenance(run=run)
    return tables, codebook_markdown(title=about.title, tables=tables, provenance=about.provenance,
                                     parameters=about.parameters, parquet=parquet)


@researcher_required
@require_GET
def run_codebook(request: HttpRequest, run_id: int) -> HttpResponse:
    run = _done_run(run_id)
    _, codebook = _run_codebook(run, parquet=tuple(RUN_TABLES))
    return file_response(codebook, file_name=download_name(*run_provenance(run=run).file_stem, "codebook", ext="md"))


@researcher_required
@require_GET
def run_tables_zip(request: HttpRequest, run_id: int) -> HttpResponse:
    run = _done_run(run_id)
    tables, codebook = _run_codebook(run, parquet=())
    file_name = download_name(*run_provenance(run=run).file_stem, "tables", ext="zip")
    return file_response(bundle_bytes(tables=tables, codebook=codebook), file_name=file_name)
