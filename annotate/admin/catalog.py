"""Admin for the catalog (datasets, subjects, questions, models, response sets) and
the response upload page: upload -> preview -> confirm.

An upload is either a tabular responses file (with optional question and
model files) or evaluation-harness logs: several log files at once and/or
.zip archives of log folders, unpacked safely (no member outside the upload
folder, no links, at most ``ZIP_MAX_BYTES`` unpacked, ``ZIP_MAX_MEMBERS``
members).

Uploaded files wait between preview and confirm in ``UPLOAD_ROOT/<token>/``;
the token lives in the uploader's session, so nobody else can confirm it.
Files are deleted after a load, after a failed check, and when older than
``UPLOAD_MAX_AGE_S`` (swept on every new upload).
"""
from __future__ import annotations

import dataclasses
import re
import secrets
import shutil
import stat
import tempfile
import time
import zipfile
from pathlib import Path, PurePosixPath

from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import path, reverse

from annotate.forms import ConfirmLoadForm, ResponseUploadForm
from annotate.loaders.base import LoadError, ParsedResponseSet, Problem
from annotate.loaders.harness import parse_harness_logs
from annotate.loaders.tabular import parse_files, shorten_quoted
from annotate.models import Dataset, LanguageModel, Question, Response, ResponseSet, Subject
from annotate.services.loading import response_set_load, response_set_preview

UPLOAD_ROOT = Path(getattr(settings, "EIP_UPLOAD_DIR", Path(tempfile.gettempdir()) / "eip-uploads"))
UPLOAD_MAX_AGE_S = 24 * 3600
SESSION_KEY = "response_uploads"
FILE_ROLES = ("responses", "questions", "models")
LOGS_FOLDER = "logs"
ZIP_MAX_BYTES = 2 * 1024**3
ZIP_MAX_MEMBERS = 200_000
PREVIEW_NAMES_LIMIT = 50
PREVIEW_NAME_CHARS = 80
MORE_NAMES = "and {count:,} more"
LOADED_MESSAGE = "Loaded {response_set}: {n_responses:,} responses, {n_questions:,} questions, {n_models} models."
ZIP_UNREADABLE = "not a readable .zip file: {error}"
ZIP_UNSAFE_MEMBER = "member {member!r} would be written outside the upload folder; nothing was unpacked"
ZIP_LINK_MEMBER = "member {member!r} is a link; links are not unpacked"
ZIP_TOO_LARGE = (
    "unpacks to more than {limit:,} bytes; upload fewer logs at a time, or load them with "
    "manage.py load_responses --logs"
)
ZIP_TOO_MANY = "holds more than {limit:,} members; load these logs with manage.py load_responses --logs"
ZIP_ENCRYPTED = "member {member!r} is encrypted"
_DRIVE = re.compile(r"^[A-Za-z]:/")


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
            try:
                files, options = _store_upload(token, form.cleaned_data, request.FILES)
            except LoadError as error:
                return self._problems(request, error.listed())
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
            return self._problems(request, error.listed() if isinstance(error, LoadError) else [str(error)])
        return render(request, "annotate/admin/response_preview.html", self._context(
            request, preview=preview, options=options, files=upload["files"],
            scores_read=_scores_read(parsed), new_datasets=_capped(preview.new_dataset_names),
            new_models=_capped(preview.new_model_names),
            form=ConfirmLoadForm(initial={"token": token}), title="Preview: nothing written yet"))

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


def _store_upload(token: str, data: dict, request_files) -> tuple[dict[str, str], dict]:
    """Save an upload's files under ``token``; return (file paths by role, options).
    Raises LoadError (and keeps nothing) when a .zip cannot be unpacked safely."""
    options = {k: data[k] for k in ("file_format", "dataset", "name", "new_version")}
    if data["logs"]:
        try:
            files = {LOGS_FOLDER: str(_save_logs(token, data["logs"]))}
        except LoadError:
            shutil.rmtree(UPLOAD_ROOT / token, ignore_errors=True)
            raise
        options.update({k: data[k] for k in ("metric", "log_filter", "skip_invalid")})
        default_name = _stem(data["logs"][0].name)
    else:
        files = _save_files(token, request_files)
        options.update({k: data[k] for k in ("subject_column", "keep_columns", "id_column")})
        default_name = Path(files["responses"]).stem
    options["name"] = options["name"] or default_name
    return files, options


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


def _scores_read(parsed: ParsedResponseSet) -> list[tuple[str, str, str]]:
    """(task, metric, filter) a harness parser read, for the preview; [] for tabular files."""
    filters = parsed.options.get("filters_used") or {}
    return [(task, str(metric) if metric else "", filters.get(task) or "")
            for task, metric in (parsed.options.get("metrics_used") or {}).items()]


def _stem(file_name: str) -> str:
    name = Path(file_name).name
    return name[:-4] if name.lower().endswith(".zip") else Path(name).stem


def _unique(path: Path) -> Path:
    candidate, k = path, 1
    while candidate.exists():
        k += 1
        candidate = path.with_name(f"{path.name}-{k}")
    return candidate


def _save_logs(token: str, uploads) -> Path:
    """Save uploaded log files into ``UPLOAD_ROOT/<token>/logs/`` and unpack each
    .zip into a folder of its own there; raises LoadError for an unsafe zip."""
    folder = UPLOAD_ROOT / token / LOGS_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    archives = UPLOAD_ROOT / token / "archives"
    for upload in uploads:
        name = Path(upload.name).name or "log"
        is_zip = name.lower().endswith(".zip")
        if is_zip:
            archives.mkdir(exist_ok=True)
            target = _unique(archives / name)
        else:
            target = _unique(folder / name)
        with target.open("wb") as handle:
            for chunk in upload.chunks():
                handle.write(chunk)
        if is_zip:
            unpack_zip(target, _unique(folder / name), label=name)  # messages then read "x.zip/dir/file"
            target.unlink()
    return folder


def unpack_zip(archive: Path, destination: Path, *, label: str | None = None,
               max_bytes: int | None = None, max_members: int | None = None) -> list[Path]:
    """Unpack a .zip archive of log folders into ``destination``, safely.

    Parameters
    ----------
    archive : Path
        The uploaded .zip file.
    destination : Path
        A folder that does not exist yet; created here.
    label : str, optional
        The archive's name in problems; default ``archive.name``.
    max_bytes, max_members : int, optional
        Caps on the unpacked size (bytes, counted while unpacking, not taken
        from the zip's own directory) and on the number of members; default
        ``ZIP_MAX_BYTES`` and ``ZIP_MAX_MEMBERS``.

    Returns
    -------
    list of Path
        The files written, in archive order. Folders named ``__MACOSX`` are
        skipped.

    Raises
    ------
    LoadError
        Nothing is left in ``destination`` when the archive is unreadable,
        has a member with an absolute path, a drive or a ``..`` part (a path
        traversal), a link, an encrypted member, more than ``max_members``
        members, or unpacks to more than ``max_bytes``.
    """
    label = label or archive.name
    max_bytes = ZIP_MAX_BYTES if max_bytes is None else max_bytes
    max_members = ZIP_MAX_MEMBERS if max_members is None else max_members

    def refuse(message: str) -> LoadError:
        shutil.rmtree(destination, ignore_errors=True)
        return LoadError([Problem(file=label, message=message)])

    try:
        zf = zipfile.ZipFile(archive)
    except (OSError, zipfile.BadZipFile) as exc:
        raise refuse(ZIP_UNREADABLE.format(error=exc)) from exc
    written: list[Path] = []
    with zf:
        infos = zf.infolist()
        if len(infos) > max_members:
            raise refuse(ZIP_TOO_MANY.format(limit=max_members))
        plan = []
        for info in infos:
            raw = info.filename.replace("\\", "/")
            parts = PurePosixPath(raw).parts
            if raw.startswith("/") or _DRIVE.match(raw) or ".." in parts:
                raise refuse(ZIP_UNSAFE_MEMBER.format(member=info.filename))
            if stat.S_ISLNK(info.external_attr >> 16):
                raise refuse(ZIP_LINK_MEMBER.format(member=info.filename))
            if info.flag_bits & 0x1:
                raise refuse(ZIP_ENCRYPTED.format(member=info.filename))
            if not parts or parts[0] == "__MACOSX" or info.is_dir():
                continue
            target = destination.joinpath(*parts)
            if not target.resolve().is_relative_to(destination.resolve()):
                raise refuse(ZIP_UNSAFE_MEMBER.format(member=info.filename))
            plan.append((info, target))
        destination.mkdir(parents=True)
        total = 0
        for info, target in plan:
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                with zf.open(info) as source, target.open("wb") as handle:
                    for block in iter(lambda: source.read(1 << 20), b""):
                        total += len(block)
                        if total > max_bytes:
                            raise refuse(ZIP_TOO_LARGE.format(limit=max_bytes))
                        handle.write(block)
            except (OSError, zipfile.BadZipFile, NotImplementedError, RuntimeError) as exc:
                raise refuse(ZIP_UNREADABLE.format(error=exc)) from exc
            written.append(target)
    return written


def _parse(token: str, upload: dict) -> ParsedResponseSet:
    files, options = upload["files"], upload["options"]
    if LOGS_FOLDER in files:
        return parse_harness_logs(
            files[LOGS_FOLDER], format=None if options["file_format"] == "auto" else options["file_format"],
            metric=options["metric"], filter=options["log_filter"], dataset=options["dataset"],
            skip_invalid=options["skip_invalid"],
        )
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
