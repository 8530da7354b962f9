"""Response-set uploads through the API: a thin wrapper over the upload service.

Every format the admin upload page takes (tabular files, harness logs and
.zip archives of them) goes through :func:`annotate.catalog.services.upload_store.upload_receive`:
stored in a private upload folder, parsed and checked once, loaded (or
previewed), and the files removed whatever happens.
"""
from __future__ import annotations

from collections.abc import Mapping

from django.contrib.auth.models import AbstractBaseUser
from django.core.files.uploadedfile import UploadedFile

from annotate.catalog import FILE_ROLES, UploadOptions, UploadOutcome, upload_job_submit, upload_receive, upload_store
from annotate.models import UploadJob

__all__ = ["UploadOutcome", "response_set_submit", "response_set_upload"]


def response_set_submit(
    *, files: Mapping[str, UploadedFile], options: Mapping[str, object], user: AbstractBaseUser | None
) -> UploadJob:
    """Store uploaded files and queue their load for the task worker.

    Parameters
    ----------
    files, options
        As :func:`response_set_upload`.
    user : User or None
        Stored as ``uploaded_by``.

    Returns
    -------
    UploadJob

    Raises
    ------
    LoadError
        A file over a size limit, an unsafe archive, or bytes already loaded
        (checked before any parsing). Nothing is kept.
    ValueError
        A malformed option.
    """
    logs = list(options.get("logs") or [])
    tabular = {} if logs else {role: files.get(role) for role in FILE_ROLES}
    upload = upload_store(files=tabular, logs=logs, options=UploadOptions.of(options))
    return upload_job_submit(upload=upload, user=user)


def response_set_upload(
    *,
    files: Mapping[str, UploadedFile],
    options: Mapping[str, object],
    user: AbstractBaseUser | None,
    dry_run: bool = False,
) -> UploadOutcome:
    """Store, check and load uploaded files as a response set (or only preview).

    Parameters
    ----------
    files : mapping
        ``"responses"`` with optional ``"questions"`` and ``"models"``; other
        keys are ignored (harness logs come in ``options["logs"]``).
    options : mapping
        As cleaned by :class:`annotate.catalog.forms.ResponseUploadForm`: ``logs``
        (a list of log files and/or .zip archives) and the fields of
        :class:`annotate.catalog.services.uploads.UploadOptions`.
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
    logs = list(options.get("logs") or [])
    tabular = {} if logs else {role: files.get(role) for role in FILE_ROLES}
    return upload_receive(files=tabular, logs=logs, options=UploadOptions.of(options), user=user, dry_run=dry_run)
