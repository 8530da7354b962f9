"""The API's endpoints: ninja parses and checks the input against
:mod:`annotate.api.schemas`, the auth classes check the caller
(:mod:`annotate.api.auth`), then one service or selector call and a JSON (or
CSV) answer. Errors are raised as :class:`annotate.api.errors.ApiError`.

The URL names (``api_response_sets``, ...) are the ones of the hand-written
views this replaced; :mod:`annotate.api.app` mounts the router under ``api/``.
"""
from typing import Annotated, Any

from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from ninja import File, Form, Path, Query, Router, Status, UploadedFile
from pydantic import Field, WithJsonSchema

from annotate.analyses import analysis_run_start
from annotate.api import schemas
from annotate.api.auth import RESEARCHER, STAFF
from annotate.api.errors import ERR_FIELDS, ApiError
from annotate.api.payloads import preview_out, problem_out, response_set_out, scoring_run_out, study_out, upload_out
from annotate.api.schemas import ERR_RESPONSE_SET
from annotate.api.selectors import response_set_get, response_sets_list, scoring_run_get, studies_list
from annotate.api.uploads import response_set_submit, response_set_upload
from annotate.catalog import LoadError, ResponseUploadForm, response_set_mark_human, upload_job_get
from annotate.core import ID_MAX, file_response, streamed_file_response
from annotate.models import AnalysisKind, RunStatus, Study
from annotate.reports import (
    JSON_PAIRS_LIMIT,
    alignment_report_compute,
    analysis_run_get,
    judgments_csv,
    judgments_file_name,
    report_csv,
    report_file_name,
    study_judgment_rows,
)
from annotate.runs import run_table_chunks, scoring_run_request
from annotate.studies import (
    DerivedPreview,
    derived_study_create,
    derived_study_preview,
    judgment_import_file,
    judgments_import,
    study_evaluator_count,
    study_for_researcher,
    study_judgment_count,
)

ERR_LOAD = "nothing was loaded"
ERR_RUN = "run must be the id of an existing scoring run; got {value!r}"
ERR_NOT_FOUND = "no {kind} {pk}"

router = Router()
#: An object id in a path: documented as >= 1, but 0 still answers 404 (no such object), not 400; what is not an
#: integer from 0 to the largest id is refused (400) naming the parameter, before any query.
PathId = Annotated[int, Field(ge=0, le=ID_MAX), WithJsonSchema({"type": "integer", "minimum": 1})]


def _errors(*codes: int) -> dict[int, type[schemas.Error]]:
    return dict.fromkeys(codes, schemas.Error)


def _id(what: str) -> Any:
    """A path id (:data:`PathId`)."""
    return Path(..., description=what)


RESPONSE_SET_ID, RUN_ID, STUDY_ID = _id("response set id"), _id("scoring run id"), _id("study id")
UPLOAD_ID = _id("upload id")
ANALYSIS_ID = _id("analysis run id")


def _csv_too(what: str) -> dict:
    """``openapi_extra`` of an endpoint that also answers ``?format=csv``."""
    return {"responses": {200: {"description": what, "content": {"text/csv": {"schema": {"type": "string"}}}}}}


def _location(status: int, what: str) -> dict:
    """``openapi_extra`` documenting the ``Location`` header of a ``status`` answer."""
    return {"responses": {status: {"headers": {"Location": {"description": what, "schema": {"type": "string"}}}}}}



def _study(request: HttpRequest, study_id: int) -> Study:
    """The study, when the caller may manage it; 404 alike for a missing study and someone else's."""
    study = study_for_researcher(user=request.auth, study_id=study_id)
    if study is None:
        raise ApiError(404, ERR_NOT_FOUND.format(kind="study", pk=study_id))
    return study


# --- response sets ------------------------------------------------------------------------


@router.get("/response-sets/", auth=STAFF, response={200: schemas.ResponseSetList, **_errors(401, 403)},
            url_name="api_response_sets", operation_id="listResponseSets",
            summary="The newest response sets (at most 500), newest first. Staff.")
def response_sets(request: HttpRequest) -> schemas.ResponseSetList:
    return schemas.ResponseSetList(response_sets=[response_set_out(rs) for rs in response_sets_list()])


@router.post(
    "/response-sets/", auth=STAFF,
    response={200: schemas.DryRun, 202: schemas.UploadStatus, **_errors(400, 401, 403)},
    url_name="api_response_sets", operation_id="uploadResponseSet",
    summary="Upload a response set; the task worker parses and loads it. Staff.",
    description=(
        "Multipart form. The files are stored and answered with 202 and a status URL in `Location`; the task "
        "worker (`manage.py run_worker`) parses them with the same loaders as `manage.py load_responses` and "
        "the admin upload page and loads them, all or nothing. Poll the status until `state` is `done` (then "
        "`response_set` is the new set's id) or `failed` (`error` and `problems`, each located by file, row "
        "and column). Files over the size limits, and bytes already loaded (checked before any parsing), "
        "answer 400 at once. With `dry_run=true` the files are checked in the request, nothing is written "
        "and the preview is returned (200)."
    ),
    openapi_extra=_location(202, "URL of the upload's status"),
)
def response_set_create(
    request: HttpRequest,
    response: HttpResponse,
    fields: Form[schemas.UploadFields],
    responses: File[UploadedFile | None] = None,
    questions: File[UploadedFile | None] = None,
    models: File[UploadedFile | None] = None,
    logs: File[list[UploadedFile]] | None = None,
) -> Any:
    """``responses`` (wide CSV, long CSV/TSV or JSON Lines), optional ``questions`` and ``models`` files;
    or ``logs``: evaluation-harness logs (several files and/or .zip archives), as on the admin upload page.

    The file parameters document and type-check the parts; the form (and the
    upload) read ``request.FILES``, which also holds any other part sent.
    """
    form = ResponseUploadForm(fields.model_dump(exclude={"dry_run"}), request.FILES)
    if not form.is_valid():
        raise ApiError(400, ERR_FIELDS, fields={k: [e["message"] for e in v]
                                                for k, v in form.errors.get_json_data().items()})
    try:
        if fields.dry_run:
            outcome = response_set_upload(files=request.FILES, options=form.cleaned_data, user=request.auth,
                                          dry_run=True)
            return Status(200, schemas.DryRun(dry_run=True, preview=preview_out(outcome.preview)))
        job = response_set_submit(files=request.FILES, options=form.cleaned_data, user=request.auth)
    except LoadError as error:
        raise ApiError(400, ERR_LOAD, problems=[problem_out(p).model_dump() for p in error.listed()]) from None
    except ValueError as error:
        raise ApiError(400, str(error)) from None
    response["Location"] = reverse("annotate:api_upload", kwargs={"upload_id": job.pk})
    return Status(202, upload_out(job))


@router.get("/uploads/{upload_id}/", auth=STAFF, response={200: schemas.UploadStatus, **_errors(401, 403, 404)},
            url_name="api_upload", operation_id="getUpload",
            summary="State and progress of an upload the worker loads. Staff.")
def upload_detail(request: HttpRequest, upload_id: PathId = UPLOAD_ID) -> schemas.UploadStatus:
    job = upload_job_get(job_id=upload_id)
    if job is None:
        raise ApiError(404, ERR_NOT_FOUND.format(kind="upload", pk=upload_id))
    return upload_out(job)


@router.get("/response-sets/{response_set_id}/", auth=STAFF,
            response={200: schemas.ResponseSet, **_errors(401, 403, 404)},
            url_name="api_response_set", operation_id="getResponseSet", summary="One response set. Staff.")
def response_set_detail(request: HttpRequest,
                        response_set_id: PathId = RESPONSE_SET_ID) -> schemas.ResponseSet:
    response_set = response_set_get(response_set_id=response_set_id)
    if response_set is None:
        raise ApiError(404, ERR_NOT_FOUND.format(kind="response set", pk=response_set_id))
    return response_set_out(response_set)


# --- scoring runs -------------------------------------------------------------------------


@router.post(
    "/scoring-runs/", auth=STAFF, response={202: schemas.ScoringRun, **_errors(400, 401, 403)},
    url_name="api_scoring_runs", operation_id="startScoringRun",
    summary="Create a scoring run and queue it for the task worker. Staff.",
    description=(
        "Runs every difficulty method on the response set (optionally a subset of models and datasets) "
        "outside the request, in `manage.py run_worker`. Poll the `Location` URL until `status` is `done` "
        "or `failed`. A request identical to a queued or running run (same response set, methods, "
        "parameters and subsets) returns that run instead of queuing another."
    ),
    openapi_extra=_location(202, "URL to poll"),
)
def scoring_run_start(request: HttpRequest, response: HttpResponse, payload: schemas.RunRequest) -> Any:
    response_set = response_set_get(response_set_id=payload.response_set)
    if response_set is None:
        raise ApiError(400, ERR_RESPONSE_SET.format(value=payload.response_set))
    try:
        run = scoring_run_request(response_set=response_set, model_ids=payload.model_ids,
                                  dataset_ids=payload.dataset_ids, params=payload.params, user=request.auth).run
    except ValueError as error:
        raise ApiError(400, str(error)) from None
    run.refresh_from_db()
    response["Location"] = reverse("annotate:api_scoring_run", kwargs={"run_id": run.pk})
    return Status(202, scoring_run_out(run))


@router.get("/scoring-runs/{run_id}/", auth=STAFF,
            response={200: schemas.ScoringRun, **_errors(401, 403, 404)},
            url_name="api_scoring_run", operation_id="getScoringRun",
            summary="Status and progress of a scoring run. Staff.")
def scoring_run_detail(request: HttpRequest, run_id: PathId = RUN_ID) -> schemas.ScoringRun:
    run = scoring_run_get(run_id=run_id)
    if run is None:
        raise ApiError(404, ERR_NOT_FOUND.format(kind="scoring run", pk=run_id))
    return scoring_run_out(run)


def _table_endpoint(table: str, what: str) -> Any:
    @router.get(f"/scoring-runs/{{run_id}}/{table}/", auth=RESEARCHER, response={**_errors(400, 401, 403, 404)},
                url_name=f"api_scoring_run_{table}", operation_id=f"getScoringRun{table.title()}",
                summary=f"{what} of a finished scoring run, as a tidy CSV (default) or Parquet. "
                        "Researchers and staff.",
                openapi_extra={"responses": {200: {"description": what, "content": {
                    "text/csv": {"schema": {"type": "string"}},
                    "application/vnd.apache.parquet": {"schema": {"type": "string", "format": "binary"}}}}}})
    def download(request: HttpRequest, query: Query[schemas.TableQuery],
                 run_id: PathId = RUN_ID) -> HttpResponse:
        run = scoring_run_get(run_id=run_id)
        if run is None or run.status != RunStatus.DONE:
            raise ApiError(404, ERR_NOT_FOUND.format(kind="finished scoring run", pk=run_id))
        chunks, file_name = run_table_chunks(run=run, table=table, fmt=query.format)
        return streamed_file_response(chunks, file_name=file_name)

    download.__name__ = f"scoring_run_{table}"
    return download


scoring_run_questions = _table_endpoint("questions", "Per-question difficulty of every method")
scoring_run_models = _table_endpoint("models", "The model leaderboard: every method's competency and the ranks")


# --- studies, reports, judgments ------------------------------------------------------------


@router.get("/studies/", auth=RESEARCHER, response={200: schemas.StudyList, **_errors(401, 403)},
            url_name="api_studies", operation_id="listStudies",
            summary="The caller's studies (staff: every study), newest first. Researchers and staff.")
def studies(request: HttpRequest) -> schemas.StudyList:
    return schemas.StudyList(studies=[study_out(s) for s in studies_list(user=request.auth)])


@router.get("/studies/{study_id}/report/", auth=RESEARCHER,
            response={200: schemas.Report, **_errors(400, 401, 403, 404)},
            url_name="api_study_report", operation_id="getStudyReport",
            summary="The study's alignment report (agreement of each method with the human judgments). "
                    "Researchers and staff.",
            openapi_extra=_csv_too("The report (schema: annotate/report_schema.json), or its tables as CSV."))
def study_report(request: HttpRequest, query: Query[schemas.ReportQuery], study_id: PathId = STUDY_ID) -> Any:
    study = _study(request, study_id)
    run = None
    if query.run is not None:
        run = scoring_run_get(run_id=query.run)
        if run is None:
            raise ApiError(400, ERR_RUN.format(value=query.run))
    try:
        report = alignment_report_compute(study=study, run=run, min_votes=query.min_votes,
                                          tie_rule=query.tie_rule, n_boot=query.n_boot, crowd=query.crowd)
    except ValueError as error:
        raise ApiError(400, str(error)) from None
    if query.format == "csv":
        return file_response(report_csv(report), file_name=report_file_name(report, "report", ext="csv"))
    # one page of pairs, as the report.json download (pairs_page says which; pairs.csv has them all)
    return report.to_json(pairs_offset=query.pairs_offset, pairs_limit=JSON_PAIRS_LIMIT)


@router.get("/studies/{study_id}/judgments/", auth=RESEARCHER,
            response={200: schemas.JudgmentList, **_errors(400, 401, 403, 404)},
            url_name="api_study_judgments", operation_id="getStudyJudgments",
            summary="Every judgment and skip, evaluators by pseudonym. Researchers and staff.",
            openapi_extra=_csv_too("One row per judgment or skip, by pair then evaluator; JSON or CSV."))
def study_judgments(request: HttpRequest, query: Query[schemas.FormatQuery], study_id: PathId = STUDY_ID) -> Any:
    study = _study(request, study_id)
    rows = study_judgment_rows(study=study)
    if query.format == "csv":
        return file_response(judgments_csv(rows), file_name=judgments_file_name(study.pk))
    return schemas.JudgmentList(study=study.pk, judgments=rows)


# --- human labels ---------------------------------------------------------------------


def _analysis_out(run) -> schemas.AnalysisRunOut:
    return schemas.AnalysisRunOut(id=run.pk, kind=run.kind, response_set=run.response_set_id, status=run.status,
                                  progress=run.progress, error=run.error, params=run.params, result=run.result)


def _response_set(response_set_id: int):
    response_set = response_set_get(response_set_id=response_set_id)
    if response_set is None:
        raise ApiError(404, ERR_NOT_FOUND.format(kind="response set", pk=response_set_id))
    return response_set


@router.post("/response-sets/{response_set_id}/human/", auth=STAFF,
             response={200: schemas.ResponseSet, **_errors(400, 401, 403, 404)},
             url_name="api_response_set_human", operation_id="markResponseSetHuman",
             summary="Mark a response set as people's answers (never scored as LLMs), or clear the mark. Staff.")
def response_set_human(request: HttpRequest, payload: schemas.HumanFlag,
                       response_set_id: PathId = RESPONSE_SET_ID) -> schemas.ResponseSet:
    try:
        response_set = response_set_mark_human(response_set=_response_set(response_set_id),
                                               is_human=payload.is_human)
    except ValueError as error:
        raise ApiError(400, str(error)) from None
    return response_set_out(response_set)


@router.post("/response-sets/{response_set_id}/human-labels/", auth=RESEARCHER,
             response={202: schemas.AnalysisRunOut, **_errors(400, 401, 403, 404)},
             url_name="api_human_labels", operation_id="startHumanLabelAnalysis",
             summary="Compare every method of a scoring run of this set with a human difficulty label (a "
                     "metadata column or a human response set); queued for the task worker. Researchers and staff.",
             openapi_extra=_location(202, "URL of the analysis run"))
def human_labels_start(request: HttpRequest, response: HttpResponse, payload: schemas.HumanLabelRequest,
                       response_set_id: PathId = RESPONSE_SET_ID) -> Any:
    response_set = _response_set(response_set_id)
    params = {k: v for k, v in payload.model_dump().items() if v is not None}
    try:
        run, _ = analysis_run_start(kind=AnalysisKind.HUMAN_LABELS, response_set=response_set, params=params,
                                    user=request.auth)
    except ValueError as error:
        raise ApiError(400, str(error)) from None
    run.refresh_from_db()
    response["Location"] = reverse("annotate:api_analysis_run", kwargs={"analysis_id": run.pk})
    return Status(202, _analysis_out(run))


@router.get("/analysis-runs/{analysis_id}/", auth=RESEARCHER,
            response={200: schemas.AnalysisRunOut, **_errors(401, 403, 404)},
            url_name="api_analysis_run", operation_id="getAnalysisRun",
            summary="One analysis run with its result once done. Researchers and staff.")
def analysis_run_detail(request: HttpRequest,
                        analysis_id: PathId = ANALYSIS_ID) -> schemas.AnalysisRunOut:
    run = analysis_run_get(analysis_id=analysis_id)
    if run is None:
        raise ApiError(404, ERR_NOT_FOUND.format(kind="analysis run", pk=analysis_id))
    return _analysis_out(run)


# --- derived studies ----------------------------------------------------------------------------


def _derived_out(preview: DerivedPreview, study: Study | None) -> schemas.DerivedStudyOut:
    return schemas.DerivedStudyOut(
        study=None if study is None else study.pk, rule=preview.rule, n_persons=preview.n_persons,
        n_questions_shared=preview.n_questions_shared, n_subjects=preview.n_subjects,
        n_possible_pairs=preview.n_possible_pairs, n_pairs=preview.n_pairs, n_votes=preview.n_votes,
        n_no_information=preview.n_no_information, n_unanswered=preview.n_unanswered,
        n_persons_with_judgments=preview.n_persons_with_judgments)


@router.post("/studies/derived/", auth=RESEARCHER,
             response={200: schemas.DerivedStudyOut, 201: schemas.DerivedStudyOut, **_errors(400, 401, 403)},
             url_name="api_study_derive", operation_id="deriveStudy",
             summary="Make a closed study whose judgments are derived from a human response set (per person, the "
                     "one of two same-subject questions answered wrong is harder); dry_run previews the counts "
                     "(200). Researchers and staff.",
             openapi_extra=_location(201, "URL of the new study's report"))
def study_derive(request: HttpRequest, response: HttpResponse, payload: schemas.DerivedStudyRequest) -> Any:
    run = scoring_run_get(run_id=payload.run)
    if run is None:
        raise ApiError(400, ERR_RUN.format(value=payload.run))
    try:
        if payload.dry_run:
            preview = derived_study_preview(human_set_id=payload.human_response_set, run=run,
                                            n_pairs=payload.n_pairs, seed=payload.seed)
            return Status(200, _derived_out(preview, None))
        study, preview = derived_study_create(human_set_id=payload.human_response_set, run=run, name=payload.name,
                                              n_pairs=payload.n_pairs, seed=payload.seed, created_by=request.auth)
    except ValueError as error:
        raise ApiError(400, str(error)) from None
    response["Location"] = reverse("annotate:api_study_report", kwargs={"study_id": study.pk})
    return Status(201, _derived_out(preview, study))


# --- imported studies ---------------------------------------------------------------------------

ERR_IMPORT_FILES = "send at least one file as a 'files' part"


@router.post("/studies/imported/", auth=RESEARCHER,
             response={201: schemas.ImportedStudyOut, **_errors(400, 401, 403)},
             url_name="api_study_import", operation_id="importStudy",
             summary="Import pairwise judgments made elsewhere (CSV, JSON Lines or a Label Studio pairwise export) "
                     "as a closed study of origin 'imported'; every problem is named by file, row and column and "
                     "nothing is written. Researchers and staff.",
             openapi_extra=_location(201, "URL of the new study's report"))
def study_import_judgments(request: HttpRequest, response: HttpResponse, fields: Form[schemas.ImportFields],
                           files: File[list[UploadedFile]] | None = None) -> Any:
    parts = request.FILES.getlist("files")
    if not parts:
        raise ApiError(400, ERR_IMPORT_FILES)
    run = scoring_run_get(run_id=fields.run)
    if run is None:
        raise ApiError(400, ERR_RUN.format(value=fields.run))
    try:
        files_in = [judgment_import_file(name=str(p.name), size=p.size, read=p.read, format=fields.format or None,
                                         group=fields.group) for p in parts]
        study = judgments_import(files=files_in, run=run, name=fields.name, created_by=request.auth)
    except ValueError as error:
        raise ApiError(400, str(error)) from None
    response["Location"] = reverse("annotate:api_study_report", kwargs={"study_id": study.pk})
    return Status(201, schemas.ImportedStudyOut(study=study.pk, n_pairs=study.n_pairs,
                                                n_evaluators=study_evaluator_count(study=study),
                                                n_judgments=study_judgment_count(study=study)))
