"""Researcher pages for the paper's analyses: pick an analysis and its
parameters, see the stored result for them or start a run, follow its progress,
download its tables (one tidy CSV each, a codebook, a zip of all), result and plot.

Staff and members of the "researcher" group only: anonymous visitors go to the
login page, everyone else gets 403. Starting a run is a POST that enqueues it
for the task worker and redirects to the run's page (Post/Redirect/Get); the
page refreshes itself while the run is queued or running.
"""
from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_http_methods

from annotate.analyses.forms import analysis_form_class
from annotate.analyses.selectors import label_response_set
from annotate.analyses.services import (
    NEEDS_RESPONSE_SET,
    analysis_codebook,
    analysis_csv,
    analysis_headlines,
    analysis_json,
    analysis_plot,
    analysis_run_latest,
    analysis_run_start,
    analysis_runs_recent,
    analysis_tables,
    analysis_zip,
    check_params,
    defaults,
)
from annotate.analyses.services.files import PLOT_FORMATS
from annotate.analyses.services.human_labels import label_default
from annotate.analyses.services.params import distinct_groups
from annotate.catalog import response_set_default
from annotate.core import file_response, json_refusals
from annotate.models import AnalysisKind, AnalysisRun, ResponseSet, RunStatus
from annotate.studies import researcher_required

RUN_STARTED_MESSAGE = "Analysis run {run_id} is queued; this page shows its progress."
RUN_REUSED_MESSAGE = "Analysis run {run_id} with the same parameters is already {status}; showing it."


def _initial(kind: str, about: ResponseSet | None) -> dict:
    """The defaults, on the newest response set that has a finished scoring run
    (else the newest loaded one); grouped by subject when a grouping analysis
    would find a single dataset. A human-label page is on ``about`` and
    preselects a column whose name says difficulty, else no label
    (:func:`~annotate.analyses.services.human_labels.label_key_default`)."""
    initial = defaults(kind)
    if kind in NEEDS_RESPONSE_SET:
        newest = response_set_default() if about is None else about
        initial["response_set"] = newest
        if newest is not None and initial.get("group_by") == "dataset" \
                and distinct_groups(response_set=newest, group_by="dataset") < 2:
            initial["group_by"] = "subject"
    if kind == AnalysisKind.HUMAN_LABELS:
        initial["label"] = label_default(response_set=about) or ""
    return initial


def _response_set_of(kind: str, value: str | None) -> ResponseSet | None:
    """The model response set a human-label page is about (None for other analyses)."""
    return label_response_set(value=value) if kind == AnalysisKind.HUMAN_LABELS else None


def _chosen(kind: str, form: forms.Form) -> tuple[ResponseSet | None, dict] | None:
    """The response set and parameters the page is about (a valid query, else
    the defaults); None when there is nothing to run."""
    if form.is_bound:
        if not form.is_valid():
            return None
        return form.cleaned_data.get("response_set"), form.cleaned_data["params"]
    response_set = form.initial.get("response_set")
    if (kind in NEEDS_RESPONSE_SET and response_set is None) or form.initial.get("label") == "":
        return None
    return response_set, check_params(kind, {k: form.initial[k] for k in defaults(kind)})


# --- result context -------------------------------------------------------------------------


def _result_context(run: AnalysisRun | None) -> dict:
    if run is None or run.status != RunStatus.DONE:
        return {"tables": [], "headlines": []}
    kind = run.kind

    def url(name: str, **extra) -> str:
        return reverse(f"annotate:{name}", kwargs={"analysis_id": run.pk, **extra})

    return {
        "tables": analysis_tables(kind=kind, result=run.result),
        "headlines": analysis_headlines(kind=kind, result=run.result),
        "downloads": {"json": url("analysis_run_json"), "csv": url("analysis_run_csv"),
                      "zip": url("analysis_run_zip"), "codebook": url("analysis_run_codebook"),
                      "png": url("analysis_run_plot", fmt="png"), "svg": url("analysis_run_plot", fmt="svg"),
                      "run_id": run.pk},
    }


def _kind(kind: str) -> AnalysisKind:
    if kind not in AnalysisKind.values:
        raise Http404("no such analysis")
    return AnalysisKind(kind)


# --- pages ------------------------------------------------------------------------------------


@researcher_required
@require_GET
def analyses_index(request: HttpRequest) -> HttpResponse:
    kinds = [{"kind": k.value, "label": k.label, "synthetic": k.value not in NEEDS_RESPONSE_SET}
             for k in AnalysisKind]
    return render(request, "annotate/analyses/index.html", {"kinds": kinds, "runs": analysis_runs_recent()})


@researcher_required
@require_http_methods(["GET", "POST"])
def analysis_kind(request: HttpRequest, kind: str) -> HttpResponse:
    kind = _kind(kind)
    query = request.POST if request.method == "POST" else request.GET
    about = _response_set_of(kind.value, query.get("response_set"))
    form_class = analysis_form_class(kind.value, response_set=about)
    if request.method == "GET" and query and set(query) <= {"response_set"}:
        query = None  # reached with only the set chosen (from a run or report page): the defaults on that set
    if request.method == "POST":
        form = form_class(request.POST)
        if form.is_valid() and request.POST.get("action") == "show":
            query = {name: request.POST[name] for name in form.fields if name in request.POST}
            return redirect(f"{request.path}?{urlencode(query)}")
        if form.is_valid():
            run, created = analysis_run_start(kind=kind.value, response_set=form.cleaned_data.get("response_set"),
                                              params=form.cleaned_data["params"], user=request.user)
            text = RUN_STARTED_MESSAGE if created else RUN_REUSED_MESSAGE
            messages.success(request, text.format(run_id=run.pk, status=run.get_status_display()))
            return redirect("annotate:analysis_run", analysis_id=run.pk)
    else:
        initial = _initial(kind.value, about)
        form = form_class(query or None, initial=initial)
    stored, chosen = None, _chosen(kind.value, form)
    if chosen is not None:
        response_set, params = chosen
        stored = analysis_run_latest(kind=kind.value, response_set=response_set, params=params)
    context = {"kind": kind, "form": form, "stored": stored, "shown": chosen is not None, **_result_context(stored),
               "runs": analysis_runs_recent(kind=kind.value, limit=20)}
    status = 400 if form.is_bound and not form.is_valid() else 200
    return render(request, "annotate/analyses/kind.html", context, status=status)


@researcher_required
@require_GET
def analysis_run(request: HttpRequest, analysis_id: int) -> HttpResponse:
    run = get_object_or_404(AnalysisRun.objects.select_related("response_set", "created_by"), pk=analysis_id)
    active = run.status in (RunStatus.QUEUED, RunStatus.RUNNING)
    context = {"run": run, "kind": AnalysisKind(run.kind), "active": active, **_result_context(run)}
    return render(request, "annotate/analyses/run.html", context)


def _done_run(analysis_id: int) -> AnalysisRun:
    return get_object_or_404(AnalysisRun.objects.select_related("response_set"), pk=analysis_id,
                             status=RunStatus.DONE)



@json_refusals
@researcher_required
@require_GET
def analysis_run_json(request: HttpRequest, analysis_id: int) -> HttpResponse:
    run = _done_run(analysis_id)
    return file_response(analysis_json(**_about(run)), file_name=f"analysis-{run.pk}-{run.kind}.json")


def _about(run: AnalysisRun) -> dict:
    return {"kind": run.kind, "params": run.params, "result": run.result,
            "response_set": None if run.response_set_id is None else str(run.response_set)}


@researcher_required
@require_GET
def analysis_run_csv(request: HttpRequest, analysis_id: int) -> HttpResponse:
    """The main (first) table; every table is at ``analysis_run_table_csv``."""
    run = _done_run(analysis_id)
    return file_response(analysis_csv(kind=run.kind, result=run.result), file_name=f"analysis-{run.pk}-{run.kind}.csv")


@researcher_required
@require_GET
def analysis_run_table_csv(request: HttpRequest, analysis_id: int, table: str) -> HttpResponse:
    run = _done_run(analysis_id)
    try:
        content = analysis_csv(kind=run.kind, result=run.result, table=table)
    except KeyError:
        raise Http404("no such table") from None
    return file_response(content, file_name=f"analysis-{run.pk}-{run.kind}-{table}.csv")


@researcher_required
@require_GET
def analysis_run_codebook(request: HttpRequest, analysis_id: int) -> HttpResponse:
    run = _done_run(analysis_id)
    return file_response(analysis_codebook(**_about(run), run_id=run.pk),
                         file_name=f"analysis-{run.pk}-{run.kind}-codebook.md")


@researcher_required
@require_GET
def analysis_run_zip(request: HttpRequest, analysis_id: int) -> HttpResponse:
    run = _done_run(analysis_id)
    return file_response(analysis_zip(**_about(run), run_id=run.pk), file_name=f"analysis-{run.pk}-{run.kind}.zip")


@researcher_required
@require_GET
def analysis_run_plot(request: HttpRequest, analysis_id: int, fmt: str) -> HttpResponse:
    if fmt not in PLOT_FORMATS:
        raise Http404("no such plot format")
    run = _done_run(analysis_id)
    return file_response(analysis_plot(kind=run.kind, result=run.result, fmt=fmt),
                         file_name=f"analysis-{run.pk}-{run.kind}.{fmt}", attachment="download" in request.GET)
