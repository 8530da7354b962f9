"""Uploads kept between preview and confirm: stored files, zip safety, the kept parse.

An upload's files are stored under ``UPLOAD_ROOT`` behind a random token
(archives unpacked with every member checked: no links, no path outside the
folder, bounded size and count); the parse and check of the preview are
cached beside them, so confirming neither parses nor checks again unless the
catalog changed. Stored uploads older than ``UPLOAD_MAX_AGE_S`` are swept.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import pickle
import re
import secrets
import shutil
import stat
import tempfile
import time
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser

from annotate.catalog.loaders.base import LoadError, ParsedResponseSet, Problem
from annotate.catalog.loaders.limits import (
    CHUNK_BYTES,
    max_unpacked_bytes,
    max_unpacked_total_bytes,
    max_upload_bytes,
)
from annotate.catalog.selectors.catalog import catalog_stamp
from annotate.catalog.services.load_plan import LoadPlan
from annotate.catalog.services.loading import response_set_plan
from annotate.catalog.services.uploads import (
    UPLOAD_TOO_LARGE,
    CheckedUpload,
    StoredUpload,
    UploadedFileLike,
    UploadOptions,
    UploadOutcome,
    UploadSource,
    _stem,
    source_checksum,
    upload_load,
    upload_parse,
    upload_refuse_loaded,
)

UPLOAD_ROOT = Path(getattr(settings, "EIP_UPLOAD_DIR", Path(tempfile.gettempdir()) / "eip-uploads"))


UPLOAD_MAX_AGE_S = 24 * 3600


FILE_ROLES = ("responses", "questions", "models")


LOGS_FOLDER = "logs"


ARCHIVES_FOLDER = "archives"


CACHE_FILE = "parsed.pickle"


CACHE_KEY_FILE = "parsed.sha256"


ZIP_MAX_MEMBERS = 200_000


SAFE_NAME_CHARS = 150


ZIP_UNREADABLE = "not a readable .zip file: {error}"


ZIP_UNSAFE_MEMBER = "member {member!r} would be written outside the upload folder; nothing was unpacked"


ZIP_LINK_MEMBER = "member {member!r} is a link; links are not unpacked"


ZIP_TOO_LARGE = (
    "unpacks to more than {limit:,} bytes (EIP_UPLOAD_MAX_UNPACKED_BYTES); upload fewer logs at a time; "
    "nothing was loaded"
)


ZIP_TOO_MANY = "holds more than {limit:,} members; load these logs with manage.py load_responses --logs"


UNPACKED_TOTAL_TOO_LARGE = (
    "the archives of this upload unpack to more than {limit:,} bytes in total "
    "(EIP_UPLOAD_MAX_UNPACKED_TOTAL_BYTES); nothing was loaded"
)


ZIP_ENCRYPTED = "member {member!r} is encrypted"


NO_FILES = "an upload needs a responses file or at least one log file"


RESPONSES_OR_LOGS = "an upload is a responses file or harness logs, not both"


BAD_TOKEN = "token must be 32 lowercase hex digits; got {token!r}"


UNKNOWN_UPLOAD = "no stored upload {token!r} (unknown, already loaded, or expired)"


UNKNOWN_ROLE = "files must be keyed by {roles}; got {role!r}"


_DRIVE = re.compile(r"^[A-Za-z]:/")


_TOKEN = re.compile(r"^[0-9a-f]{32}$")


_CACHE_ERRORS = (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, IndexError, KeyError,
                 TypeError, ValueError)


def _folder(token: str) -> Path:
    if not isinstance(token, str) or not _TOKEN.match(token):
        raise ValueError(BAD_TOKEN.format(token=token))
    return UPLOAD_ROOT / token


def _safe_name(name: str | None, default: str) -> str:
    """The base name of a client-side file name, without path parts or control
    characters, at most ``SAFE_NAME_CHARS`` characters (keeping a short extension)."""
    base = re.split(r"[\\/]", name or "")[-1]
    base = "".join(ch for ch in base if ch.isprintable()).strip()
    if base in ("", ".", ".."):
        return default
    if len(base) > SAFE_NAME_CHARS:
        suffix = Path(base).suffix if len(Path(base).suffix) <= 16 else ""
        base = base[: SAFE_NAME_CHARS - len(suffix)] + suffix
    return base


def _unique(path: Path) -> Path:
    candidate, k = path, 1
    while candidate.exists():
        k += 1
        candidate = path.with_name(f"{path.name}-{k}")
    return candidate


class _Budget:
    """Bytes left of one upload's ``EIP_UPLOAD_MAX_BYTES`` and ``EIP_UPLOAD_MAX_UNPACKED_TOTAL_BYTES``."""

    def __init__(self) -> None:
        self.stored = max_upload_bytes()
        self.unpacked = max_unpacked_total_bytes()


def _write(upload: UploadedFileLike, target: Path, budget: _Budget) -> Path:
    """Save an uploaded file, counting its bytes against the upload's budget as they stream."""
    with target.open("xb") as handle:
        for chunk in upload.chunks():
            budget.stored -= len(chunk)
            if budget.stored < 0:
                raise LoadError([Problem(file=_safe_name(upload.name, target.name),
                                         message=UPLOAD_TOO_LARGE.format(limit=max_upload_bytes()))])
            handle.write(chunk)
    return target


def _save_logs(folder: Path, uploads: Sequence[UploadedFileLike], budget: _Budget) -> Path:
    """Save log files into ``folder/logs/``; unpack each .zip into a folder of its
    own there (named like the archive, so problems read "x.zip/dir/file")."""
    logs = folder / LOGS_FOLDER
    logs.mkdir()
    archives = folder / ARCHIVES_FOLDER
    for upload in uploads:
        name = _safe_name(upload.name, "log")
        if not name.lower().endswith(".zip"):
            _write(upload, _unique(logs / name), budget)
            continue
        archives.mkdir(exist_ok=True)
        archive = _write(upload, _unique(archives / name), budget)
        per_archive = max_unpacked_bytes()
        total_left = budget.unpacked
        written = zip_unpack(archive=archive, destination=_unique(logs / name), label=name,
                             max_bytes=min(per_archive, total_left), total_limit=(
                                 max_unpacked_total_bytes() if total_left < per_archive else None))
        budget.unpacked -= sum(p.stat().st_size for p in written)
        archive.unlink()
    shutil.rmtree(archives, ignore_errors=True)
    return logs


def _stored_files(folder: Path, files: Mapping[str, str]) -> list[Path]:
    paths: list[Path] = []
    for role in sorted(files):
        path = Path(files[role])
        paths.extend(sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path])
    return paths


def _checksum(folder: Path, files: Mapping[str, str], options: UploadOptions) -> str:
    """SHA-256 of the stored files (relative name and bytes, in order) and the options."""
    parsing = {key: value for key, value in options.as_dict().items() if key != "text_format"}  # read at load
    outer = hashlib.sha256(json.dumps(parsing, sort_keys=True).encode())
    for path in _stored_files(folder, files):
        outer.update(path.relative_to(folder).as_posix().encode() + b"\0")
        inner = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                inner.update(block)
        outer.update(inner.digest())
    return outer.hexdigest()


def upload_store(
    *,
    files: Mapping[str, UploadedFileLike | None] | None = None,
    logs: Sequence[UploadedFileLike] = (),
    options: UploadOptions,
) -> StoredUpload:
    """Save uploaded files in a private folder of their own, ready for a preview.

    Sweeps stale uploads first (see :func:`uploads_sweep`).

    Parameters
    ----------
    files : mapping of str to uploaded file, optional
        A tabular upload: ``"responses"`` and optionally ``"questions"`` and
        ``"models"`` (None values are skipped).
    logs : sequence of uploaded files, optional
        A harness-log upload: log files and/or ``.zip`` archives of log
        folders, each unpacked into a folder of its own by :func:`zip_unpack`.
    options : UploadOptions
        ``name`` None takes the responses file name (or the first log's)
        without its extension.

    Returns
    -------
    StoredUpload

    Raises
    ------
    LoadError
        A ``.zip`` cannot be unpacked safely. Nothing is kept.
    ValueError
        Neither or both of a responses file and logs, or an unknown role.
        Nothing is kept.
    """
    given = {role: f for role, f in (files or {}).items() if f is not None}
    unknown = sorted(set(given) - set(FILE_ROLES))
    if unknown:
        raise ValueError(UNKNOWN_ROLE.format(roles=list(FILE_ROLES), role=unknown[0]))
    if given and logs:
        raise ValueError(RESPONSES_OR_LOGS)
    if "responses" not in given and not logs:
        raise ValueError(NO_FILES)
    uploads_sweep()
    UPLOAD_ROOT.mkdir(parents=True, exist_ok=True, mode=0o700)
    token = secrets.token_hex(16)
    folder = _folder(token)
    folder.mkdir(mode=0o700)
    try:
        budget = _Budget()
        if logs:
            stored = {LOGS_FOLDER: str(_save_logs(folder, logs, budget))}
            default_name = _stem(_safe_name(logs[0].name, "log"))
        else:
            stored = {}
            for role in FILE_ROLES:
                if role in given:
                    (folder / role).mkdir()
                    stored[role] = str(_write(given[role], folder / role / _safe_name(given[role].name, role),
                                              budget))
            default_name = Path(stored["responses"]).stem
        options = dataclasses.replace(options, name=options.name or default_name)
        checksum = _checksum(folder, stored, options)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return StoredUpload(token=token, files=stored, options=options, checksum=checksum)


def _source(upload: StoredUpload) -> UploadSource:
    files = upload.files
    if LOGS_FOLDER in files:
        return UploadSource(logs=(Path(files[LOGS_FOLDER]),))
    return UploadSource(**{role: Path(files[role]) for role in FILE_ROLES if role in files})


def _unpath(text: str, folder: Path) -> str:
    """``text`` without the upload folder: stored paths read as the uploaded names."""
    for prefix in dict.fromkeys((str(folder), str(folder.resolve()))):
        text = re.sub(re.escape(prefix) + r"/(?:" + "|".join((*FILE_ROLES, LOGS_FOLDER)) + r")/", "", text)
        text = text.replace(prefix + "/", "").replace(prefix, "upload")
    return text


def _relabeled(error: Exception, folder: Path) -> Exception:
    """The error with problems naming the uploaded files, never the upload folder."""
    if isinstance(error, LoadError):
        problems = [dataclasses.replace(p, file=_unpath(p.file, folder), message=_unpath(p.message, folder))
                    for p in error.problems]
        return LoadError(problems, n_unlisted=error.n_unlisted)
    return ValueError(_unpath(str(error), folder))


def _cache_read(folder: Path, key: str) -> tuple[ParsedResponseSet, LoadPlan] | None:
    """The kept (parsed, plan) when it was kept for checksum ``key``; None otherwise."""
    try:
        if (folder / CACHE_KEY_FILE).read_text(encoding="ascii").strip() != key:
            return None
        with (folder / CACHE_FILE).open("rb") as handle:
            kept = pickle.load(handle)
        parsed, plan = kept["parsed"], kept["plan"]
    except _CACHE_ERRORS:
        return None
    if not isinstance(parsed, ParsedResponseSet) or not isinstance(plan, LoadPlan) or plan.parsed is not parsed:
        return None
    return parsed, plan


def _cache_write(folder: Path, key: str, checked: CheckedUpload) -> None:
    """Keep the parsed upload and its plan beside the files, under checksum ``key``."""
    (folder / CACHE_KEY_FILE).unlink(missing_ok=True)
    with tempfile.NamedTemporaryFile(dir=folder, prefix=CACHE_FILE, suffix=".partial", delete=False) as handle:
        pickle.dump({"parsed": checked.parsed, "plan": checked.plan}, handle, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(handle.name, folder / CACHE_FILE)  # whole, even when two previews of one upload race
    (folder / CACHE_KEY_FILE).write_text(key, encoding="ascii")


def _kept_or_parsed(upload: StoredUpload, folder: Path) -> tuple[str, ParsedResponseSet, LoadPlan | None]:
    """(checksum of the stored files now, the parsed upload, its kept plan or None)."""
    if not folder.is_dir():
        raise ValueError(UNKNOWN_UPLOAD.format(token=upload.token))
    key = _checksum(folder, upload.files, upload.options)
    kept = _cache_read(folder, key)
    if kept is not None:
        return key, kept[0], kept[1]
    return key, upload_parse(source=_source(upload), options=upload.options), None


def upload_preview(*, upload: StoredUpload) -> CheckedUpload:
    """Parse and check a stored upload once, and keep the result for its confirmation.

    Writes nothing to the database. The parsed upload and its plan are kept
    beside the files, keyed by the checksum of the stored bytes and options;
    a second preview of the same upload reuses them (checking again only if
    the catalog changed).

    Parameters
    ----------
    upload : StoredUpload
        From :func:`upload_store`.

    Returns
    -------
    CheckedUpload

    Raises
    ------
    LoadError
        The upload cannot be loaded; its files are removed.
    ValueError
        An unknown upload or a malformed option; its files are removed.
    """
    return _checked(upload, keep=True)


def checked_upload(upload: StoredUpload) -> CheckedUpload:
    """Parse (or take the parse a preview kept) and plan a stored upload, keeping nothing new;
    on any failure the files are removed (see :func:`upload_preview`)."""
    return _checked(upload, keep=False)


def stored_source(upload: StoredUpload) -> UploadSource:
    """The stored upload's files as an :class:`UploadSource`."""
    return _source(upload)


def stored_bytes_checksum(*, upload: StoredUpload) -> str:
    """SHA-256 of a stored upload's bytes, before any parsing: for tabular files the
    checksum a load stores (:func:`source_checksum`); for logs, of every stored
    file's relative name and bytes."""
    return source_checksum(source=_source(upload)) or _checksum(_folder(upload.token), upload.files, UploadOptions())


def relabeled_error(error: Exception, upload: StoredUpload) -> Exception:
    """``error`` with problems naming the uploaded files, never the upload folder."""
    return _relabeled(error, _folder(upload.token))


def _checked(upload: StoredUpload, *, keep: bool) -> CheckedUpload:
    """Refuse bytes already loaded, then parse (or take the kept parse) and plan; on any
    failure the files are removed."""
    folder = _folder(upload.token)
    options = upload.options
    try:
        if folder.is_dir():
            upload_refuse_loaded(source=_source(upload))
        key, parsed, plan = _kept_or_parsed(upload, folder)
        if plan is not None and plan.stamp == catalog_stamp():
            return CheckedUpload(parsed=parsed, plan=plan)  # kept and still valid: nothing new to keep
        checked = CheckedUpload(parsed=parsed, plan=response_set_plan(parsed=parsed, name=options.name,
                                                                      new_version=options.new_version))
        if keep:
            _cache_write(folder, key, checked)
    except (LoadError, ValueError) as error:
        upload_discard(token=upload.token)
        raise _relabeled(error, folder) from None
    except BaseException:
        upload_discard(token=upload.token)
        raise
    return checked


def upload_discard(*, token: str) -> None:
    """Remove a stored upload's files (nothing happens for an unknown token)."""
    shutil.rmtree(_folder(token), ignore_errors=True)


def uploads_sweep(*, max_age_s: float | None = None) -> int:
    """Remove stored uploads untouched for longer than ``max_age_s``.

    Parameters
    ----------
    max_age_s : float, optional
        Age in seconds (by the folder's modification time); default
        ``UPLOAD_MAX_AGE_S`` (a day).

    Returns
    -------
    int
        How many uploads were removed.
    """
    if not UPLOAD_ROOT.is_dir():
        return 0
    cutoff = time.time() - (UPLOAD_MAX_AGE_S if max_age_s is None else max_age_s)
    removed = 0
    for folder in UPLOAD_ROOT.iterdir():
        if folder.is_dir() and folder.stat().st_mtime < cutoff:
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
    return removed


def upload_receive(
    *,
    files: Mapping[str, UploadedFileLike | None] | None = None,
    logs: Sequence[UploadedFileLike] = (),
    options: UploadOptions,
    user: AbstractBaseUser | None = None,
    dry_run: bool = False,
) -> UploadOutcome:
    """Store, preview and (unless ``dry_run``) load an upload in one call; the
    files are removed whatever happens. The file is parsed and checked once.

    Parameters
    ----------
    files, logs, options
        As :func:`upload_store`.
    user : User or None, default None
        Stored as ``uploaded_by``.
    dry_run : bool, default False
        Check and preview only; write nothing.

    Returns
    -------
    UploadOutcome

    Raises
    ------
    LoadError
        Nothing was written; every problem names the uploaded file.
    ValueError
        A malformed option or upload.
    """
    upload = upload_store(files=files, logs=logs, options=options)
    try:
        checked = _checked(upload, keep=False)
        if dry_run:
            return UploadOutcome(response_set=None, preview=checked.preview)
        folder = _folder(upload.token)
        try:
            response_set = upload_load(checked=checked, user=user, text_format=options.text_format)
        except (LoadError, ValueError) as error:
            raise _relabeled(error, folder) from None
        return UploadOutcome(response_set=response_set, preview=checked.preview)
    finally:
        upload_discard(token=upload.token)


def zip_unpack(*, archive: Path, destination: Path, label: str | None = None,
               max_bytes: int | None = None, max_members: int | None = None,
               total_limit: int | None = None) -> list[Path]:
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
        from the zip's own directory, in chunks of ``CHUNK_BYTES``) and on the
        number of members; default ``EIP_UPLOAD_MAX_UNPACKED_BYTES`` and
        ``ZIP_MAX_MEMBERS``.
    total_limit : int, optional
        When ``max_bytes`` is what is left of the upload's total
        (``EIP_UPLOAD_MAX_UNPACKED_TOTAL_BYTES``), that total, so the refusal
        names it.

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
    max_bytes = max_unpacked_bytes() if max_bytes is None else max_bytes
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
                    for block in iter(lambda: source.read(CHUNK_BYTES), b""):
                        total += len(block)
                        if total > max_bytes:
                            raise refuse(ZIP_TOO_LARGE.format(limit=max_bytes) if total_limit is None
                                         else UNPACKED_TOTAL_TOO_LARGE.format(limit=total_limit))
                        handle.write(block)
            except (OSError, zipfile.BadZipFile, NotImplementedError, RuntimeError) as exc:
                raise refuse(ZIP_UNREADABLE.format(error=exc)) from exc
            written.append(target)
    return written
