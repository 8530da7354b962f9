"""Researcher pages: a study's alignment report and its downloads.

Only admins (staff) and members of the "researcher" group may see them:
anonymous visitors go to the login page, everyone else gets 403. Every view
computes the report afresh (nothing is cached) with the parameters of the
query string (``run``, ``min_votes``, ``tie_rule``, ``n_boot``).
"""
from __future__ import annotations


from dataclasses import replace

from django import forms
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, render
from django.urls import reverse

from annotate.models import EducationLevel, FieldOfStudy, ScoringRun, Study
from annotate.views.access import researcher_required
from annotate.services.alignment import judgment_export_rows
from annotate.services.alignment.cache import study_alignment_report_cached
from annotate.services.alignment.tables import Cell, Table, report_tables
from annotate.services.report_files import (
    CONTENT_TYPES,
    PLOTS,
    judgments_csv,
    render_plot,
    report_csv,
    report_json,
)


#: Evaluator table columns whose cells hold a TextChoices code -> label of each code.
CODE_LABELS = {"Field": dict(FieldOfStudy.choices), "Education": dict(EducationLevel.choices)}


def merged_notes(notes: tuple[str, ...]) -> tuple[str, ...]:
    """Each distinct note once: notes "<label>: <text>" that share their text
    become one "<label>, <label>: <text>" (first-seen order); exact repeats go."""
    merged: dict[str, list[str]] = {}
    for note in notes:
        label, sep, rest = note.partition(": ")
        key, who = (rest, label) if sep and label and len(label) <= 40 else (note, "")
        labels = merged.setdefault(key, [])
        if who and who not in labels:
            labels.append(who)
    return tuple(f"{', '.join(labels)}: {key}" if labels else key for key, labels in merged.items())


def display_table(table: Table) -> Table:
    """``table`` as shown on the page: notes merged, evaluator background codes
    ("computer_science") as their labels ("Computer Science")."""
    columns = {i: CODE_LABELS[name] for i, name in enumerate(table.header) if name in CODE_LABELS}
    rows = tuple(
        tuple(Cell(c.value, columns[i].get(c.text, c.text), c.reason) if i in columns else c for i, c in enumerate(row))
        for row in table.rows
    ) if columns else table.rows
    return replace(table, rows=rows, notes=merged_notes(table.notes))


class ReportParamsForm(forms.Form):
    run = forms.IntegerField(required=False, min_value=1, help_text="scoring run id (default: the study's run)")
    min_votes = forms.IntegerField(required=False, min_value=1, max_value=1000, initial=1)
    tie_rule = forms.ChoiceField(required=False, choices=[("evaluator_weight", "evaluator weight"), ("none", "none")])
    n_boot = forms.IntegerField(required=False, min_value=1, max_value=20000, initial=2000)


def _report(request: HttpRequest, study: Study) -> dict | HttpResponse:
    form = ReportParamsForm(request.GET)
    if not form.is_valid():
        return HttpResponseBadRequest(f"Bad report parameters: {form.errors.as_text()}")
    data = form.cleaned_data
    run = None if data["run"] is None else get_object_or_404(ScoringRun, pk=data["run"])
    try:
        return study_alignment_report_cached(
            study=study, run=run, min_votes=data["min_votes"] or 1, tie_rule=data["tie_rule"] or "evaluator_weight",
            n_boot=data["n_boot"] or 2000,
        )
    except ValueError as exc:
        return HttpResponseBadRequest(f"No report: {exc}")


def _download(content: bytes, content_type: str, file_name: str, *, attachment: bool = True) -> HttpResponse:
    response = HttpResponse(content, content_type=content_type)
    disposition = "attachment" if attachment else "inline"
    response["Content-Disposition"] = f'{disposition}; filename="{file_name}"'
    return response


@researcher_required
def study_report(request: HttpRequest, study_id: int) -> HttpResponse:
    study = get_object_or_404(Study.objects.select_related("scoring_run"), pk=study_id)
    report = _report(request, study)
    if isinstance(report, HttpResponse):
        return report
    query = request.GET.urlencode()
    suffix = f"?{query}" if query else ""

    def plot_url(name: str, fmt: str) -> str:
        return reverse("study_report_plot", kwargs={"study_id": study_id, "name": name, "fmt": fmt}) + suffix

    context = {
        "study": study, "report": report, "tables": {t.key: display_table(t) for t in report_tables(report)}, "suffix": suffix,
        "form": ReportParamsForm(request.GET or None),
        "plots": [{"name": n, "png": plot_url(n, "png"), "svg": plot_url(n, "svg")} for n in PLOTS],
    }
    return render(request, "annotate/reports/report.html", context)


@researcher_required
def study_report_json(request: HttpRequest, study_id: int) -> HttpResponse:
    report = _report(request, get_object_or_404(Study, pk=study_id))
    if isinstance(report, HttpResponse):
        return report
    return _download(report_json(report), "application/json", f"study-{study_id}-report.json")


@researcher_required
def study_report_csv(request: HttpRequest, study_id: int) -> HttpResponse:
    report = _report(request, get_object_or_404(Study, pk=study_id))
    if isinstance(report, HttpResponse):
        return report
    return _download(report_csv(report), "text/csv; charset=utf-8", f"study-{study_id}-report.csv")


@researcher_required
def study_judgments_csv(request: HttpRequest, study_id: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=study_id)
    return _download(judgments_csv(judgment_export_rows(study=study)), "text/csv; charset=utf-8",
                     f"study-{study_id}-judgments.csv")


@researcher_required
def study_report_plot(request: HttpRequest, study_id: int, name: str, fmt: str) -> HttpResponse:
    if name not in PLOTS or fmt not in CONTENT_TYPES:
        raise Http404("no such plot")
    report = _report(request, get_object_or_404(Study, pk=study_id))
    if isinstance(report, HttpResponse):
        return report
    return _download(render_plot(report, name=name, fmt=fmt), CONTENT_TYPES[fmt], f"study-{study_id}-{name}.{fmt}",
                     attachment="download" in request.GET)
