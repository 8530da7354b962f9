"""The API's views: access check (:func:`annotate.api.auth.api_view`), input
parsing, one service or selector call, a JSON (or CSV) answer.

Errors are JSON ``{"error": "<message>"}`` with a 4xx status; a refused
upload adds ``"problems"`` (each with ``file``, ``row``, ``column``,
``message``), a form error adds ``"fields"``.
"""
from __future__ import annotations

import json

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import reverse

from annotate.api.auth import api_error, api_view
from annotate.api.payloads import preview_json, problem_json, response_set_json, scoring_run_json, study_json
from annotate.api.schema import openapi_schema
from annotate.api.selectors import response_sets_list, scoring_run_get, studies_list
from annotate.api.uploads import response_set_upload
from annotate.forms import ResponseUploadForm
from annotate.loaders.base import LoadError
from annotate.models import ResponseSet, ScoringRun, Study
from annotate.services.alignment import study_alignment_report
from annotate.services.alignment._data import judgment_export_rows
from annotate.services.report_files import judgments_csv, report_csv
from annotate.services.scoring import scoring_run_create, scoring_run_enqueue

ERR_FIELDS = "the upload's fields are invalid"
ERR_LOAD = "nothing was loaded"
ERR_JSON = "the request body must be a JSON object"
ERR_KEYS = "unknown key(s) {keys}; known: {known}"
ERR_RESPONSE_SET = "response_set must be the id of an existing response set; got {value!r}"
ERR_FORMAT = "format must be one of {formats}; got {value!r}"
ERR_INT = "{name} must be an integer; got {value!r}"
ERR_RUN = "run must be the id of an existing scoring run; got {value!r}"
RUN_KEYS = ("response_set", "model_ids", "dataset_ids", "params")
UPLOAD_DEFAULTS = {"file_format": "auto", "id_column": "question_id"}


def _not_found(kind: str, pk: int) -> JsonResponse:
    return api_error(404, f"no {kind} {pk}")


def _flag(request: HttpRequest, name: str) -> bool:
    return request.POST.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


def _attachment(content: bytes, content_type: str, filename: str) -> HttpResponse:
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _format(request: HttpRequest) -> str | None:
    value = request.GET.get("format", "json")
    return value if value in ("json", "csv") else None


@api_view(methods=("GET",), role=None)
def openapi(request: HttpRequest) -> JsonResponse:
    return JsonResponse(openapi_schema())


@api_view(methods=("GET", "POST"), role="staff")
def response_sets(request: HttpRequest) -> JsonResponse:
    """GET: the newest response sets. POST (multipart): upload and load one."""
    if request.method == "GET":
        return JsonResponse({"response_sets": [response_set_json(rs) for rs in response_sets_list()]})
    data = request.POST.copy()
    for field, default in UPLOAD_DEFAULTS.items():
        if not data.get(field):
            data[field] = default
    form = ResponseUploadForm(data, request.FILES)
    if not form.is_valid():
        return api_error(400, ERR_FIELDS, fields={k: [e["message"] for e in v] for k, v in form.errors.get_json_data().items()})
    dry_run = _flag(request, "dry_run")
    try:
        outcome = response_set_upload(files=request.FILES, options=form.cleaned_data, user=request.user, dry_run=dry_run)
    except LoadError as error:
        return api_error(400, ERR_LOAD, problems=[problem_json(p) for p in error.listed()])
    except ValueError as error:
        return api_error(400, str(error))
    if dry_run:
        return JsonResponse({"dry_run": True, "preview": preview_json(outcome.preview)})
    response = JsonResponse(response_set_json(outcome.response_set), status=201)
    response["Location"] = reverse("api_response_set", kwargs={"response_set_id": outcome.response_set.pk})
    return response


@api_view(methods=("GET",), role="staff")
def response_set_detail(request: HttpRequest, response_set_id: int) -> JsonResponse:
    response_set = ResponseSet.objects.filter(pk=response_set_id).first()
    if response_set is None:
        return _not_found("response set", response_set_id)
    return JsonResponse(response_set_json(response_set))


@api_view(methods=("POST",), role="staff")
def scoring_runs(request: HttpRequest) -> JsonResponse:
    """Create a scoring run from a JSON body and hand it to the task worker."""
    try:
        body = json.loads(request.body or b"null")
    except (json.JSONDecodeError, UnicodeDecodeError):
        body = None
    if not isinstance(body, dict):
        return api_error(400, ERR_JSON)
    unknown = sorted(set(body) - set(RUN_KEYS))
    if unknown:
        return api_error(400, ERR_KEYS.format(keys=unknown, known=list(RUN_KEYS)))
    value = body.get("response_set")
    response_set = (
        ResponseSet.objects.filter(pk=value).first() if isinstance(value, int) and not isinstance(value, bool) else None
    )
    if response_set is None:
        return api_error(400, ERR_RESPONSE_SET.format(value=value))
    try:
        run = scoring_run_create(response_set=response_set, model_ids=body.get("model_ids"),
                                 dataset_ids=body.get("dataset_ids"), params=body.get("params"), user=request.user)
        scoring_run_enqueue(run=run)
    except ValueError as error:
        return api_error(400, str(error))
    run.refresh_from_db()
    response = JsonResponse(scoring_run_json(run), status=202)
    response["Location"] = reverse("api_scoring_run", kwargs={"run_id": run.pk})
    return response


@api_view(methods=("GET",), role="staff")
def scoring_run_detail(request: HttpRequest, run_id: int) -> JsonResponse:
    run = scoring_run_get(run_id=run_id)
    if run is None:
        return _not_found("scoring run", run_id)
    return JsonResponse(scoring_run_json(run))


@api_view(methods=("GET",), role="researcher")
def studies(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"studies": [study_json(s) for s in studies_list()]})


def _report_options(request: HttpRequest) -> dict:
    """Query parameters of the report, as keyword arguments; ValueError on a bad one."""
    options: dict = {}
    for name in ("min_votes", "n_boot", "run"):
        raw = request.GET.get(name)
        if raw is None:
            continue
        try:
            options[name] = int(raw)
        except ValueError:
            raise ValueError(ERR_INT.format(name=name, value=raw)) from None
    if "run" in options:
        run = ScoringRun.objects.filter(pk=options["run"]).first()
        if run is None:
            raise ValueError(ERR_RUN.format(value=options["run"]))
        options["run"] = run
    if "tie_rule" in request.GET:
        options["tie_rule"] = request.GET["tie_rule"]
    return options


@api_view(methods=("GET",), role="researcher")
def study_report(request: HttpRequest, study_id: int) -> HttpResponse:
    """The study's alignment report as JSON, or its tables as CSV (``?format=csv``)."""
    study = Study.objects.filter(pk=study_id).first()
    if study is None:
        return _not_found("study", study_id)
    fmt = _format(request)
    if fmt is None:
        return api_error(400, ERR_FORMAT.format(formats=["json", "csv"], value=request.GET.get("format")))
    try:
        report = study_alignment_report(study=study, **_report_options(request))
    except ValueError as error:
        return api_error(400, str(error))
    if fmt == "csv":
        return _attachment(report_csv(report), "text/csv; charset=utf-8", f"study-{study.pk}-report.csv")
    return JsonResponse(report)


@api_view(methods=("GET",), role="researcher")
def study_judgments(request: HttpRequest, study_id: int) -> HttpResponse:
    """Every judgment and skip of the study, evaluators by pseudonym (JSON or ``?format=csv``)."""
    study = Study.objects.filter(pk=study_id).first()
    if study is None:
        return _not_found("study", study_id)
    fmt = _format(request)
    if fmt is None:
        return api_error(400, ERR_FORMAT.format(formats=["json", "csv"], value=request.GET.get("format")))
    rows = judgment_export_rows(study=study)
    if fmt == "csv":
        return _attachment(judgments_csv(rows), "text/csv; charset=utf-8", f"study-{study.pk}-judgments.csv")
    return JsonResponse({"study": study.pk, "judgments": rows})
