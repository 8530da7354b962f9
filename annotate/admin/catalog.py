"""Admin for the catalog (datasets, subjects, questions, models, response sets) and
the response upload page: upload -> preview -> confirm.

Uploaded files wait between preview and confirm in ``UPLOAD_ROOT/<token>/``;
the token lives in the uploader's session, so nobody else can confirm it.
Files are deleted after a load, after a failed check, and when older than
``UPLOAD_MAX_AGE_S`` (swept on every new upload).
"""
from __future__ import annotations

import secrets
import shutil
import tempfile
import time
from pathlib import Path

from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import path, reverse

from annotate.forms import ConfirmLoadForm, ResponseUploadForm
from annotate.loaders.base import LoadError, ParsedResponseSet
from annotate.loaders.tabular import parse_files
from annotate.models import Dataset, LanguageModel, Question, Response, ResponseSet, Subject
from annotate.services.loading import response_set_load, response_set_preview

UPLOAD_ROOT = Path(getattr(settings, "EIP_UPLOAD_DIR", Path(tempfile.gettempdir()) / "eip-uploads"))
UPLOAD_MAX_AGE_S = 24 * 3600
SESSION_KEY = "response_uploads"
FILE_ROLES = ("responses", "questions", "models")
LOADED_MESSAGE = "Loaded {response_set}: {n_responses:,} responses, {n_questions:,} questions, {n_models} models."


@admin.register(Dataset)
class DatasetAdmin(admin.ModelAdmin):
    list_display = ["name", "created_at"]
    search_fields = ["name"]


@admin.register(Subject)
class SubjectAdmin(admin.ModelAdmin):
    list_display = ["name"]
    search_fields = ["name"]


@admin.register(Question)
class QuestionAdmin(admin.ModelAdmin):
    list_display = ["external_id", "dataset", "subject", "short_text"]
    list_filter = ["dataset", "subject"]
    list_select_related = ["dataset", "subject"]
    search_fields = ["external_id", "text"]
    show_full_result_count = False

    @admin.display(description="text")
    def short_text(self, obj: Question) -> str:
        return obj.text if len(obj.text) <= 80 else obj.text[:79] + "…"


@admin.register(LanguageModel)
class LanguageModelAdmin(admin.ModelAdmin):
    list_display = ["name", "family", "parameters_b", "access", "inferred"]
    list_filter = ["access", "family"]
    search_fields = ["name", "family"]

    @admin.display(description="guessed from the name")
    def inferred(self, obj: LanguageModel) -> str:
        return ", ".join(obj.metadata.get("inferred", [])) if isinstance(obj.metadata, dict) else ""


@admin.register(Response)
class ResponseAdmin(admin.ModelAdmin):
    list_display = ["response_set", "model", "question", "credit"]
    list_filter = ["response_set"]
    list_select_related = ["response_set", "model", "question"]
    raw_id_fields = ["response_set", "model", "question"]
    show_full_result_count = False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(ResponseSet)
class ResponseSetAdmin(admin.ModelAdmin):
    list_display = ["name", "version", "status", "n_questions", "n_models", "n_responses", "file_format",
                    "uploaded_by", "created_at"]
    list_filter = ["status", "file_format"]
    list_select_related = ["uploaded_by"]
    search_fields = ["name", "file_name"]
    readonly_fields = ["name", "version", "file_name", "checksum", "file_format", "uploaded_by", "created_at",
                       "status", "n_questions", "n_models", "n_responses", "options", "summary"]
    change_list_template = "annotate/admin/responseset_change_list.html"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # responses arrive through the upload page, never the bare add form

    def get_urls(self):
        return [
            path("upload/", self.admin_site.admin_view(self.upload_view), name="annotate_responseset_upload"),
            path("upload/<str:token>/", self.admin_site.admin_view(self.preview_view),
                 name="annotate_responseset_upload_preview"),
            *super().get_urls(),
        ]

    # -- the upload flow -----------------------------------------------------------

    def upload_view(self, request: HttpRequest) -> HttpResponse:
        _require_upload_permission(request)
        form = ResponseUploadForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            _sweep_old_uploads()
            token = secrets.token_hex(16)
            files = _save_files(token, request.FILES)
            options = {k: form.cleaned_data[k] for k in ("file_format", "dataset", "subject_column", "keep_columns",
                                                          "id_column", "name", "new_version")}
            options["name"] = options["name"] or Path(files["responses"]).stem
            uploads = request.session.get(SESSION_KEY, {})
            uploads[token] = {"files": files, "options": options}
            request.session[SESSION_KEY] = uploads
            return HttpResponseRedirect(reverse("admin:annotate_responseset_upload_preview", args=[token]))
        return render(request, "annotate/admin/response_upload.html", self._context(request, form=form,
                                                                                   title="Upload responses"))

    def preview_view(self, request: HttpRequest, token: str) -> HttpResponse:
        _require_upload_permission(request)
        upload = request.session.get(SESSION_KEY, {}).get(token)
        if upload is None:
            raise Http404("unknown or expired upload")
        options = upload["options"]
        if request.method == "POST":
            form = ConfirmLoadForm(request.POST)
            if not form.is_valid() or form.cleaned_data["token"] != token:
                raise Http404("unknown or expired upload")
        try:
            parsed = _parse(token, upload)
            if request.method == "POST":
                response_set = response_set_load(parsed=parsed, name=options["name"], user=request.user,
                                                 new_version=options["new_version"])
                _forget(request, token)
                self.message_user(request, LOADED_MESSAGE.format(
                    response_set=response_set, n_responses=response_set.n_responses,
                    n_questions=response_set.n_questions, n_models=response_set.n_models), messages.SUCCESS)
                return HttpResponseRedirect(reverse("admin:annotate_responseset_change", args=[response_set.pk]))
            preview = response_set_preview(parsed=parsed, name=options["name"], new_version=options["new_version"])
        except (LoadError, ValueError) as error:
            _forget(request, token)
            problems = error.problems if isinstance(error, LoadError) else [str(error)]
            return render(request, "annotate/admin/response_problems.html",
                          self._context(request, problems=problems, title="Nothing was loaded"), status=400)
        return render(request, "annotate/admin/response_preview.html", self._context(
            request, preview=preview, options=options, files=upload["files"],
            form=ConfirmLoadForm(initial={"token": token}), title="Preview: nothing written yet"))

    def _context(self, request: HttpRequest, **extra) -> dict:
        return {**self.admin_site.each_context(request), "opts": self.model._meta, **extra}


def _require_upload_permission(request: HttpRequest) -> None:
    if not request.user.has_perm("annotate.add_responseset"):
        raise PermissionDenied


def _save_files(token: str, files) -> dict[str, str]:
    saved: dict[str, str] = {}
    for role in FILE_ROLES:
        upload = files.get(role)
        if upload is None:
            continue
        folder = UPLOAD_ROOT / token / role
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / (Path(upload.name).name or role)
        with target.open("wb") as handle:
            for chunk in upload.chunks():
                handle.write(chunk)
        saved[role] = str(target)
    return saved


def _parse(token: str, upload: dict) -> ParsedResponseSet:
    files, options = upload["files"], upload["options"]
    return parse_files(
        responses=files["responses"], file_format=options["file_format"], dataset=options["dataset"],
        questions=files.get("questions"), models=files.get("models"), subject_column=options["subject_column"],
        keep_columns=options["keep_columns"], id_column=options["id_column"],
    )


def _forget(request: HttpRequest, token: str) -> None:
    uploads = request.session.get(SESSION_KEY, {})
    uploads.pop(token, None)
    request.session[SESSION_KEY] = uploads
    shutil.rmtree(UPLOAD_ROOT / token, ignore_errors=True)


def _sweep_old_uploads() -> None:
    if not UPLOAD_ROOT.is_dir():
        return
    cutoff = time.time() - UPLOAD_MAX_AGE_S
    for folder in UPLOAD_ROOT.iterdir():
        if folder.is_dir() and folder.stat().st_mtime < cutoff:
            shutil.rmtree(folder, ignore_errors=True)
