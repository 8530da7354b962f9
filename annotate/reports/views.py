"""Researcher pages: a study's alignment report and its downloads.

Only admins (staff) and the researchers who own the study or were added to it
may see them (:func:`annotate.studies.views.access.study_access_required`; others get 404):
anonymous visitors go to the login page, evaluators get 403. Every view
reads the (cached) typed report for the query string's parameters (``run``,
``min_votes``, ``tie_rule``, ``n_boot``, ``crowd``: judges weighted by
reliability) and renders it; no GET reruns EIP
(the model pools come from a stored analysis, queued by the POST view).
"""
from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotate.core import (
    file_response,
    json_refusals,
    report_parameters_text,
    streamed_file_response,
    whole_number,
)
from annotate.models import ScoringRun, Study
from annotate.reports.forms import ReportParamsForm
from annotate.reports.selectors.alignment import study_judgment_rows_iter
from annotate.reports.services import AlignmentReport, report_pools_start
from annotate.reports.services.cache import study_alignment_report_cached
from annotate.reports.services.headline import report_headline, uncertainty_notes
from annotate.reports.services.report_files import (
    CONTENT_TYPES,
    PLOT_TITLES,
    PLOTS,
    judgments_csv_stream,
    judgments_file_name,
    pairs_csv_stream,
    render_plot,
    report_csv,
    report_file_name,
    report_json,
    report_plot_names,
    report_table_csv,
    report_table_keys,
    report_zip_stream,
)
from annotate.reports.services.tables import PER_PAGE, page_tables
from annotate.runs import scoring_run_diagnostics, study_report_runs
from annotate.studies import study_access_required

ERR_POOLS_RUN = "Say which scoring run's model pools to compute (the form's 'run' field)."
HEADING_POOLS_REFUSED = "No model-pool analysis was queued"


def _params_form(data, study: Study) -> ReportParamsForm:
    runs = [(choice.run.pk, choice.label) for choice in study_report_runs(study=study)]
    return ReportParamsForm(data, runs=runs)


HEADING_SETTINGS_REFUSED = "These report settings are not accepted"
HEADING_NO_REPORT = "No report can be drawn yet"


def _report(request: HttpRequest, study: Study, *, json: bool = False) -> AlignmentReport | HttpResponse:
    """The study's report for the request's parameters, or a 400 saying why not: the site's page naming each
    refused parameter, its value and what it accepts (the page and every download), plain text for
    report.json (:func:`annotate.core.json_refusals` makes it JSON)."""
    form = _params_form(request.GET, study)
    if not form.is_valid():
        if json:
            return HttpResponseBadRequest(f"Bad report parameters: {form.errors.as_text()}")
        return _report_refused(request, study, HEADING_SETTINGS_REFUSED, form.refusals())
    data = form.cleaned_data
    run = None if data["run"] is None else get_object_or_404(ScoringRun, pk=data["run"])
    try:
        return study_alignment_report_cached(
            study=study, run=run, min_votes=data["min_votes"] or 1, tie_rule=data["tie_rule"] or "evaluator_weight",
            n_boot=data["n_boot"] or 2000, crowd=data["crowd"],
        )
    except ValueError as exc:
        if json:
            return HttpResponseBadRequest(f"No report: {exc}")
        return _report_refused(request, study, HEADING_NO_REPORT, [str(exc)])


def _report_refused(request: HttpRequest, study: Study, heading: str, reasons: list[str], *,
                    pools: bool = False) -> HttpResponse:
    """The report page's 400: what was refused and why, with the way back (the report's default settings).
    ``pools``: the refusal of the model-pools button (nothing was queued), not of the report. A download's
    refusal names the file asked for (the last part of its path)."""
    is_page = request.resolver_match is None or request.resolver_match.url_name == "study_report"
    download = None if pools or is_page else request.path.rsplit("/", 1)[-1]
    return render(request, "annotate/reports/report_refused.html",
                  {"study": study, "heading": heading, "reasons": reasons, "pools": pools, "download": download},
                  status=400)


@study_access_required
def study_report(request: HttpRequest, study_id: int) -> HttpResponse:
    study = get_object_or_404(Study.objects.select_related("scoring_run"), pk=study_id)
    report = _report(request, study)
    if isinstance(report, HttpResponse):
        return report
    params = request.GET.copy()
    try:
        pages = {key: _page_number(params.pop(f"{key}_page", ["1"])[-1], name=f"{key}_page") for key in PER_PAGE}
    except ValueError as exc:
        return _report_refused(request, study, HEADING_SETTINGS_REFUSED, [str(exc)])
    query = params.urlencode()
    suffix = f"?{query}" if query else ""

    def plot_url(name: str, fmt: str) -> str:
        return reverse("annotate:study_report_plot", kwargs={"study_id": study_id, "name": name, "fmt": fmt}) + suffix

    def table_url(key: str) -> str:
        return reverse("annotate:study_report_table_csv", kwargs={"study_id": study_id, "key": key}) + suffix

    plots = [{"name": n, "title": PLOT_TITLES.get(n, n), "png": plot_url(n, "png"), "svg": plot_url(n, "svg")}
             for n in report_plot_names(report)]
    forest = next(p for p in plots if p["name"] == "forest")
    context = {
        "study": study, "report": report, "tables": page_tables(report, pages=pages), "suffix": suffix,
        "page_query": f"{query}&" if query else "",
        "parameters": report_parameters_text(report.parameters()),
        "run_diagnostics": scoring_run_diagnostics(pk=report.run.id),
        "form": _params_form(request.GET or None, study),
        "headline": report_headline(report), "notes": uncertainty_notes(report),
        "forest": forest, "plots": [p for p in plots if p is not forest],
        "table_urls": {key: table_url(key) for key in report_table_keys(report)},
        "open_sections": {key for key in PER_PAGE if f"{key}_page" in request.GET},
    }
    return render(request, "annotate/reports/report.html", context)


#: Most a page number or pair offset of the query string may be.
PAGE_MAX = 10**9


def _page_number(raw: str, *, name: str) -> int:
    """A 1-based page number from the query string's ``name``; a ValueError naming it otherwise."""
    return whole_number(raw, label=f"The page number ?{name}=", low=1, high=PAGE_MAX)


@json_refusals
@study_access_required
def study_report_json(request: HttpRequest, study_id: int) -> HttpResponse:
    """report.json; a study of more than ``JSON_PAIRS_LIMIT`` pairs gets one page of pairs
    (``?pairs_offset=``, 0-based; ``pairs_page`` in the document), pairs.csv has them all."""
    report = _report(request, get_object_or_404(Study, pk=study_id), json=True)
    if isinstance(report, HttpResponse):
        return report
    try:
        offset = whole_number(request.GET.get("pairs_offset", "0"), label="The pair offset ?pairs_offset=",
                              high=PAGE_MAX)
    except ValueError as exc:
        return HttpResponseBadRequest(str(exc))
    return file_response(report_json(report, pairs_offset=offset),
                         file_name=report_file_name(report, "report", ext="json"))


@study_access_required
def study_report_pairs_csv(request: HttpRequest, study_id: int) -> StreamingHttpResponse | HttpResponse:
    """Every pair of the report as a tidy CSV (the zip's pairs.csv), streamed."""
    report = _report(request, get_object_or_404(Study, pk=study_id))
    if isinstance(report, HttpResponse):
        return report
    return streamed_file_response(pairs_csv_stream(report), file_name=report_file_name(report, "pairs", ext="csv"))


@study_access_required
def study_report_csv(request: HttpRequest, study_id: int) -> HttpResponse:
    report = _report(request, get_object_or_404(Study, pk=study_id))
    if isinstance(report, HttpResponse):
        return report
    return file_response(report_csv(report), file_name=report_file_name(report, "report", ext="csv"))


@study_access_required
def study_report_zip(request: HttpRequest, study_id: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=study_id)
    report = _report(request, study)
    if isinstance(report, HttpResponse):
        return report
    return streamed_file_response(report_zip_stream(report, study_judgment_rows_iter(study=study)),
                                  file_name=report_file_name(report, "report", ext="zip"))


@study_access_required
@require_POST
def study_report_pools(request: HttpRequest, study_id: int) -> HttpResponse:
    """Queue the stored model-pool analysis the report reads, then back to the report."""
    study = get_object_or_404(Study, pk=study_id)  # 404 for an unknown study before looking at the form
    form = _params_form(request.POST, study)
    if not form.is_valid() or form.cleaned_data["run"] is None:
        return _report_refused(request, study, HEADING_POOLS_REFUSED, [ERR_POOLS_RUN], pools=True)
    run = get_object_or_404(ScoringRun, pk=form.cleaned_data["run"])
    try:
        analysis, created = report_pools_start(run=run, user=request.user)
    except ValueError as exc:
        return _report_refused(request, study, HEADING_POOLS_REFUSED, [str(exc)], pools=True)
    verb = "queued" if created else "already queued"
    messages.info(request, f"Model-pool analysis {analysis.pk} {verb}; the report shows it once the worker is done.")
    query = request.POST.get("query", "")
    return redirect(reverse("annotate:study_report", kwargs={"study_id": study_id}) + (f"?{query}" if query else ""))


@study_access_required
def study_judgments_csv(request: HttpRequest, study_id: int) -> StreamingHttpResponse:
    """Every judgment of the study, streamed from the database as it is written."""
    study = get_object_or_404(Study, pk=study_id)
    return streamed_file_response(judgments_csv_stream(study_judgment_rows_iter(study=study)),
                                  file_name=judgments_file_name(study_id))


@study_access_required
def study_report_table_csv(request: HttpRequest, study_id: int, key: str) -> HttpResponse:
    """One table of the report as its tidy CSV (the zip's ``<key>.csv``)."""
    report = _report(request, get_object_or_404(Study, pk=study_id))
    if isinstance(report, HttpResponse):
        return report
    try:
        content = report_table_csv(report, key)
    except ValueError as exc:
        raise Http404(str(exc)) from exc
    return file_response(content, file_name=report_file_name(report, key, ext="csv"))


@study_access_required
def study_report_plot(request: HttpRequest, study_id: int, name: str, fmt: str) -> HttpResponse:
    if name not in PLOTS or fmt not in CONTENT_TYPES:
        raise Http404("no such plot")
    report = _report(request, get_object_or_404(Study, pk=study_id))
    if isinstance(report, HttpResponse):
        return report
    return file_response(render_plot(report, name=name, fmt=fmt), file_name=report_file_name(report, name, ext=fmt),
                         attachment="download" in request.GET)
