"""Response-set uploads through the API: uploaded files -> parser -> loading service.

The parsers read paths (the checksum is of the file bytes), so the uploaded
files are written to a private temporary folder under their own base names,
parsed, loaded (or previewed), and the folder is removed whatever happens.
"""
from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth.models import AbstractBaseUser
from django.core.files.uploadedfile import UploadedFile

from annotate.loaders.base import LoadError, Problem
from annotate.loaders.tabular import parse_files
from annotate.models import ResponseSet
from annotate.services.loading import LoadPreview, response_set_load, response_set_preview

FILE_ROLES = ("responses", "questions", "models")


@dataclass(frozen=True)
class UploadOutcome:
    """A loaded response set, or (dry run) the preview of one."""

    response_set: ResponseSet | None
    preview: LoadPreview


def _save(folder: Path, role: str, upload: UploadedFile) -> Path:
    target = folder / role / (Path(upload.name or role).name or role)
    target.parent.mkdir(parents=True)
    with target.open("wb") as handle:
        for chunk in upload.chunks():
            handle.write(chunk)
    return target


def _relabel(error: LoadError, folder: Path) -> LoadError:
    """Problems name the uploaded file, never the temporary path."""
    prefix = str(folder)
    problems = [
        Problem(file=Path(p.file).name if p.file.startswith(prefix) else p.file,
                message=p.message.replace(prefix + "/", ""), row=p.row, column=p.column)
        for p in error.problems
    ]
    return LoadError(problems, n_unlisted=error.n_unlisted)


def response_set_upload(
    *,
    files: dict[str, UploadedFile],
    options: dict,
    user: AbstractBaseUser | None,
    dry_run: bool = False,
) -> UploadOutcome:
    """Parse uploaded files and load them as a response set (or only preview).

    Parameters
    ----------
    files : dict
        ``"responses"`` (required), ``"questions"`` and ``"models"`` (optional).
    options : dict
        ``file_format``, ``dataset``, ``subject_column``, ``keep_columns``,
        ``id_column``, ``name`` (None: the responses file name without its
        extension) and ``new_version``, as cleaned by
        :class:`annotate.forms.ResponseUploadForm`.
    user : User or None
        Stored as ``uploaded_by``.
    dry_run : bool, default False
        Check and preview only; write nothing.

    Raises
    ------
    LoadError
        Nothing was written; every problem has file, row and column.
    ValueError
        A malformed option.
    """
    folder = Path(tempfile.mkdtemp(prefix="eip-api-upload-"))
    try:
        paths = {role: _save(folder, role, files[role]) for role in FILE_ROLES if files.get(role) is not None}
        name = options.get("name") or paths["responses"].stem
        try:
            parsed = parse_files(
                responses=paths["responses"], file_format=options["file_format"], dataset=options["dataset"],
                questions=paths.get("questions"), models=paths.get("models"),
                subject_column=options["subject_column"], keep_columns=options["keep_columns"],
                id_column=options["id_column"],
            )
            preview = response_set_preview(parsed=parsed, name=name, new_version=options["new_version"])
            if dry_run:
                return UploadOutcome(response_set=None, preview=preview)
            response_set = response_set_load(parsed=parsed, name=name, user=user, new_version=options["new_version"])
        except LoadError as error:
            raise _relabel(error, folder) from None
        return UploadOutcome(response_set=response_set, preview=preview)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
