"""Admin for the catalog (datasets, subjects, questions, models, response sets) and
the response upload page: upload -> preview -> confirm -> progress (the task
worker loads) -> "score now".

The views only parse the form, call the upload service
(:mod:`annotate.catalog.services.uploads`: storing files, zip safety, choosing the
parser, the parse kept between preview and confirm, sweeping old uploads) and
render. An upload's token lives in the uploader's session, so nobody else can
confirm it.
"""
from __future__ import annotations

import dataclasses

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import models
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import path, reverse
from django.utils.safestring import SafeString

from annotate.catalog.admin.deletion import BackgroundDeleteMixin
from annotate.catalog.forms import ConfirmLoadForm, ResponseUploadForm, ScoreNowForm
from annotate.catalog.loaders.base import LoadError, Problem
from annotate.catalog.loaders.tabular import shorten_quoted
from annotate.catalog.selectors.uploads import (
    response_set_models,
    response_set_unanswered_questions,
    upload_job_get,
)
from annotate.catalog.services.edits import catalog_entry_delete, catalog_entry_save
from annotate.catalog.services.human import response_set_mark_human
from annotate.catalog.services.upload_jobs import upload_job_submit
from annotate.catalog.services.upload_store import FILE_ROLES, upload_preview, upload_store
from annotate.catalog.services.uploads import StoredUpload, UploadOptions
from annotate.core import BoundedJSONDecoder, ServiceWritesAdmin, json_display, posted, posted_files
from annotate.models import Dataset, LanguageModel, Question, ResponseSet, Subject, UploadState
from annotate.runs import scoring_run_create, scoring_run_enqueue

SESSION_KEY = "response_uploads"
PREVIEW_NAMES_LIMIT = 50
PREVIEW_NAME_CHARS = 80
MORE_NAMES = "and {count:,} more"
LOADED_MESSAGE = "Loaded {response_set}: {n_responses:,} responses, {n_questions:,} questions, {n_models} models."
QUEUED_MESSAGE = "Upload queued; the task worker parses and loads it (this page follows its progress)."
SCORING_MESSAGE = "Scoring run {run} queued on {response_set}."
UNKNOWN_JOB = "unknown upload"
ACTIVE_STATES = (UploadState.QUEUED, UploadState.PARSING, UploadState.LOADING)
UNKNOWN_UPLOAD = "unknown or expired upload"


@admin.register(Dataset)
class DatasetAdmin(ServiceWritesAdmin):
    save_service = staticmethod(catalog_entry_save)
    delete_service = staticmethod(catalog_entry_delete)
    list_display = ["name", "text_format", "created_at"]
    list_filter = ["text_format"]
    fields = ["name", "description", "text_format"]
    search_fields = ["name"]


class QuestionTextMedia:
    """KaTeX and the question-text styles, for admin pages that show questions as evaluators see them."""

    css = {"all": ["vendor/katex-0.19.1/katex.min.css", "annotate/question_text.css"]}
    js = ["vendor/katex-0.19.1/katex.min.js", "annotate/math.js"]


@admin.register(Subject)
class SubjectAdmin(ServiceWritesAdmin):
    save_service = staticmethod(catalog_entry_save)
    delete_service = staticmethod(catalog_entry_delete)
    list_display = ["name"]
    search_fields = ["name"]


#: Staff edit questions' options and metadata and models' metadata as JSON: parse it bounded.
BOUNDED_JSON = {models.JSONField: {"decoder": BoundedJSONDecoder}}
#: What each JSON box holds, with an example, under the box (the stored value is also shown formatted).
JSON_HELP = {
    "options": 'The answer options in order, as a JSON list of texts, e.g. ["Paris", "Lyon", "Nice", "Lille"].',
    "metadata": 'Extra columns as a JSON object of name: value, e.g. {"level": 2, "source": "exam"}.',
}


class JsonHelpMixin:
    """JSON boxes with a plain-words help text and an example (:data:`JSON_HELP`), and the stored value shown
    formatted beside them."""

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        field = super().formfield_for_dbfield(db_field, request, **kwargs)  # type: ignore[misc]
        if isinstance(db_field, models.JSONField) and db_field.name in JSON_HELP and field is not None:
            field.help_text = JSON_HELP[db_field.name]
        return field


@admin.register(Question)
class QuestionAdmin(JsonHelpMixin, ServiceWritesAdmin):
    save_service = staticmethod(catalog_entry_save)
    delete_service = staticmethod(catalog_entry_delete)
    formfield_overrides = BOUNDED_JSON
    list_display = ["external_id", "dataset", "subject", "shown_text"]
    list_filter = ["dataset", "subject"]
    list_select_related = ["dataset", "subject"]
    readonly_fields = ["as_shown", "stored_options", "stored_metadata"]
    stored_options = json_display("options", "options as stored")
    stored_metadata = json_display("metadata", "metadata as stored")
    search_fields = ["external_id", "text"]
    show_full_result_count = False
    Media = QuestionTextMedia

    @admin.display(description="text")
    def shown_text(self, obj: Question) -> SafeString:
        """The first lines of the text and options as the judging page renders them (the dataset's format)."""
        return render_to_string("annotate/_question_text.html", {"question": obj, "clip": True})

    @admin.display(description="as evaluators see it")
    def as_shown(self, obj: Question) -> SafeString:
        """The text and options rendered as on the judging page (the dataset's text format)."""
        return render_to_string("annotate/_question_text.html", {"question": obj, "clip": False})


class FamilyFilter(admin.AllValuesFieldListFilter):
    """The family filter, with the blank family named (an empty link has no accessible name)."""

    def choices(self, changelist):
        for choice in super().choices(changelist):
            yield {**choice, "display": "(no family)"} if choice["display"] == "" else choice


@admin.register(LanguageModel)
class LanguageModelAdmin(JsonHelpMixin, ServiceWritesAdmin):
    save_service = staticmethod(catalog_entry_save)
    delete_service = staticmethod(catalog_entry_delete)
    formfield_overrides = BOUNDED_JSON
    list_display = ["name", "family", "parameters_b", "access", "inferred"]
    list_filter = ["access", ("family", FamilyFilter)]
    search_fields = ["name", "family"]
    readonly_fields = ["stored_metadata"]
    stored_metadata = json_display("metadata", "metadata as stored")

    @admin.display(description="guessed from the name")
    def inferred(self, obj: LanguageModel) -> str:
        return ", ".join(obj.metadata.get("inferred", [])) if isinstance(obj.metadata, dict) else ""


@admin.register(ResponseSet)
class ResponseSetAdmin(BackgroundDeleteMixin, ServiceWritesAdmin):
    save_service = staticmethod(catalog_entry_save)  # every field is read-only: nothing is written
    list_display = ["name", "version", "status", "is_human", "n_questions", "n_models", "n_responses",
                    "file_format", "uploaded_by", "created_at"]
    list_filter = ["status", "file_format", "is_human"]
    list_select_related = ["uploaded_by"]
    search_fields = ["name", "file_name"]
    readonly_fields = ["name", "version", "file_name", "checksum", "file_format", "uploaded_by", "created_at",
                       "status", "n_questions", "n_models", "n_responses", "loader_options", "load_summary"]
    exclude = ["options", "summary"]  # shown formatted (below), never as a JSON box
    loader_options = json_display("options", "loader options")
    load_summary = json_display("summary", "load summary")
    change_list_template = "annotate/admin/responseset_change_list.html"
    actions = ["delete_in_background", "mark_human", "unmark_human"]  # delete: counts-only confirmation, worker

    @admin.action(description="Mark as human (people's answers: never scored as LLMs)")
    def mark_human(self, request: HttpRequest, queryset) -> None:
        self._set_human(request, queryset, True)

    @admin.action(description="Clear the human mark")
    def unmark_human(self, request: HttpRequest, queryset) -> None:
        self._set_human(request, queryset, False)

    def _set_human(self, request: HttpRequest, queryset, is_human: bool) -> None:
        for response_set in queryset:
            try:
                response_set_mark_human(response_set=response_set, is_human=is_human)
            except ValueError as error:
                self.message_user(request, str(error), level=messages.ERROR)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # responses arrive through the upload page, never the bare add form

    def get_urls(self):
        return [
            path("upload/", self.admin_site.admin_view(self.upload_view), name="annotate_responseset_upload"),
            path("upload/job/<int:job_id>/", self.admin_site.admin_view(self.job_view),
                 name="annotate_responseset_upload_job"),
            path("upload/<str:token>/", self.admin_site.admin_view(self.preview_view),
                 name="annotate_responseset_upload_preview"),
            *super().get_urls(),
        ]

    # -- the upload flow -----------------------------------------------------------

    def upload_view(self, request: HttpRequest) -> HttpResponse:
        _require_upload_permission(request)
        form = ResponseUploadForm(posted(request), posted_files(request))
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            try:
                upload = upload_store(files={role: data[role] for role in FILE_ROLES}, logs=data["logs"],
                                      options=UploadOptions.of(data))
            except LoadError as error:
                return self._problems(request, error.listed())
            request.session[SESSION_KEY] = {**request.session.get(SESSION_KEY, {}),
                                            upload.token: upload.as_session()}
            return HttpResponseRedirect(reverse("admin:annotate_responseset_upload_preview", args=[upload.token]))
        return render(request, "annotate/admin/response_upload.html",
                      self._context(request, form=form, title="Upload responses"),
                      status=400 if request.method == "POST" else 200)  # a POST here: the form was refused

    def preview_view(self, request: HttpRequest, token: str) -> HttpResponse:
        _require_upload_permission(request)
        stored = request.session.get(SESSION_KEY, {}).get(token)
        if stored is None:
            raise Http404(UNKNOWN_UPLOAD)
        if request.method == "POST":
            form = ConfirmLoadForm(request.POST)
            if not form.is_valid() or form.cleaned_data["token"] != token:
                raise Http404(UNKNOWN_UPLOAD)
        upload = StoredUpload.from_session(token, stored)
        try:
            if request.method == "POST":
                _forget(request, token)
                chosen = form.cleaned_data["text_format"] or None
                upload = dataclasses.replace(upload, options=dataclasses.replace(upload.options, text_format=chosen))
                job = upload_job_submit(upload=upload, user=request.user)
                self.message_user(request, QUEUED_MESSAGE, messages.INFO)
                return HttpResponseRedirect(reverse("admin:annotate_responseset_upload_job", args=[job.pk]))
            checked = upload_preview(upload=upload)
        except (LoadError, ValueError) as error:
            _forget(request, token)
            return self._problems(request, error.listed() if isinstance(error, LoadError) else [str(error)])
        preview = checked.preview
        return render(request, "annotate/admin/response_preview.html", self._context(
            request, preview=preview, options=stored["options"], files=upload.files,
            scores_read=checked.scores_read, new_datasets=_capped(preview.new_dataset_names),
            new_models=_capped(preview.new_model_names),
            form=ConfirmLoadForm(initial={"token": token, "text_format": upload.options.text_format or ""}),
            title="Preview: nothing written yet"))

    def job_view(self, request: HttpRequest, job_id: int) -> HttpResponse:
        """An upload's progress while the worker loads it; once done, "score now" (refused: 400, re-shown)."""
        _require_upload_permission(request)
        job = upload_job_get(job_id=job_id)
        if job is None:
            raise Http404(UNKNOWN_JOB)
        response_set = job.response_set if job.state == UploadState.DONE else None
        form = None
        if response_set is not None:
            form = ScoreNowForm(posted(request), models_queryset=response_set_models(response_set=response_set))
            if request.method == "POST" and form.is_valid():
                data = form.cleaned_data
                try:
                    run = scoring_run_create(
                        response_set=response_set, model_ids=[m.pk for m in data["models"]] or None,
                        params={"alpha": data["alpha"], "methods": data["methods"]}, user=request.user)
                    scoring_run_enqueue(run=run)
                except ValueError as error:
                    form.add_error(None, str(error))
                else:
                    self.message_user(request, SCORING_MESSAGE.format(run=run.pk, response_set=response_set),
                                      messages.SUCCESS)
                    return HttpResponseRedirect(reverse("annotate:run_detail", args=[run.pk]))
        elif request.method == "POST":
            raise Http404(UNKNOWN_JOB)
        return render(request, "annotate/admin/upload_job.html", self._context(
            request, job=job, active=job.state in ACTIVE_STATES, response_set=response_set, form=form,
            unanswered=response_set_unanswered_questions(response_set=response_set) if response_set else 0,
            problems=[_shortened(Problem(**p)) if "file" in p else str(p.get("message", "")) for p in job.problems],
            title=f"Upload {job.pk}: {job.get_state_display()}"),
            status=400 if request.method == "POST" else 200)  # a POST here: "score now" was refused

    def _problems(self, request: HttpRequest, problems: list) -> HttpResponse:
        shown = [_shortened(problem) for problem in problems]
        return render(request, "annotate/admin/response_problems.html",
                      self._context(request, problems=shown, title="Nothing was loaded"), status=400)

    def _context(self, request: HttpRequest, **extra) -> dict:
        return {**self.admin_site.each_context(request), "opts": self.model._meta, **extra}


def _shortened(problem: Problem | str) -> Problem | str:
    """A problem (from any parser) with quoted values and its column name cut to 80 characters."""
    if not isinstance(problem, Problem):
        return shorten_quoted(str(problem))
    column = problem.column
    if column is not None and len(column) > PREVIEW_NAME_CHARS:
        column = f"{column[:PREVIEW_NAME_CHARS]}… ({len(column):,} characters)"
    return dataclasses.replace(problem, message=shorten_quoted(problem.message), column=column)


def _capped(names: tuple[str, ...], limit: int = PREVIEW_NAMES_LIMIT) -> tuple[list[str], str]:
    """(the first ``limit`` names, each cut to ``PREVIEW_NAME_CHARS``, and "and N more" or "")."""
    shown = [n if len(n) <= PREVIEW_NAME_CHARS else n[:PREVIEW_NAME_CHARS] + "…" for n in names[:limit]]
    return shown, MORE_NAMES.format(count=len(names) - limit) if len(names) > limit else ""


def _require_upload_permission(request: HttpRequest) -> None:
    if not request.user.has_perm("annotate.add_responseset"):
        raise PermissionDenied


def _forget(request: HttpRequest, token: str) -> None:
    """Drop the token from the session (the service removes the files)."""
    uploads = request.session.get(SESSION_KEY, {})
    uploads.pop(token, None)
    request.session[SESSION_KEY] = uploads
