"""Reads of the catalog (datasets, subjects, questions, models, response sets)."""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from django.db import connection
from django.db.models import QuerySet

from annotate.core import ascii_int
from annotate.models import Dataset, LanguageModel, Question, ResponseSet, ResponseSetStatus, RunStatus, Subject

if TYPE_CHECKING:
    import pandas as pd

ERR_VERSION_CLASH = "--response-set {name!r} names version {named} but --version says {version}"
_NAME_VERSION = re.compile(r"^(?P<name>.+) v(?P<version>\d+)$")
_KEY_CHUNK = 2_000  # rows of question keys fetched at a time


def dataset_ids_by_name(*, names: Iterable[str]) -> dict[str, int]:
    """Ids of the datasets among ``names`` that exist (name -> id)."""
    return dict(Dataset.objects.filter(name__in=list(names)).values_list("name", "id"))


def dataset_text_formats(*, names: Iterable[str]) -> dict[str, str]:
    """Text formats of the datasets among ``names`` that exist (name -> ``TextFormat`` value)."""
    return dict(Dataset.objects.filter(name__in=list(names)).values_list("name", "text_format"))


def subject_ids_by_name(*, names: Iterable[str]) -> dict[str, int]:
    """Ids of the subjects among ``names`` that exist (name -> id)."""
    return dict(Subject.objects.filter(name__in=list(names)).values_list("name", "id"))


def question_table(*, dataset_ids: Iterable[int]) -> pd.DataFrame:
    """Every question of the given datasets.

    Returns
    -------
    DataFrame with columns ``id``, ``dataset`` (name), ``external_id``,
    ``subject`` (name or None) and ``text``; one row per question, in id order.
    """
    import pandas as pd
    rows = (
        Question.objects.filter(dataset_id__in=list(dataset_ids))
        .order_by("id")
        .values_list("id", "dataset__name", "external_id", "subject__name", "text")
    )
    return pd.DataFrame(list(rows), columns=["id", "dataset", "external_id", "subject", "text"])


def question_keys_table(*, dataset_ids: Iterable[int]) -> pd.DataFrame:
    """The id and key of every question of the given datasets (no text: a load's lookup of ids).

    Returns
    -------
    DataFrame with columns ``id``, ``dataset`` (name) and ``external_id``;
    one row per question, in no particular order (the lookup goes by key).
    The rows are read a chunk at a time into one list per column, so that no
    row tuple outlives its chunk.
    """
    import pandas as pd
    dataset_ids = list(dataset_ids)
    names = dict(Dataset.objects.filter(id__in=dataset_ids).values_list("id", "name"))
    rows = (  # no ORDER BY (not even the model's default ordering): the caller looks ids up by key
        Question.objects.filter(dataset_id__in=dataset_ids).order_by().values_list("id", "dataset_id", "external_id")
    )
    ids: list[int] = []
    datasets: list[str] = []  # names looked up here: no join with the dataset table per row
    external_ids: list[str] = []
    for pk, dataset_id, external_id in rows.iterator(chunk_size=_KEY_CHUNK):
        ids.append(pk)
        datasets.append(names[dataset_id])
        external_ids.append(external_id)
    return pd.DataFrame({"id": pd.Series(ids, dtype="int64"), "dataset": datasets, "external_id": external_ids})


def model_table(*, names: Iterable[str]) -> pd.DataFrame:
    """The language models among ``names`` that exist.

    Returns
    -------
    DataFrame with columns ``id``, ``name``, ``family``, ``parameters_b``
    (float, NaN = unknown), ``access`` and ``metadata``.
    """
    import pandas as pd
    rows = LanguageModel.objects.filter(name__in=list(names)).values_list(
        "id", "name", "family", "parameters_b", "access", "metadata"
    )
    frame = pd.DataFrame(list(rows), columns=["id", "name", "family", "parameters_b", "access", "metadata"])
    frame["parameters_b"] = pd.to_numeric(frame["parameters_b"], errors="coerce").astype(float)
    return frame


def response_set_by_checksum(*, checksum: str) -> ResponseSet | None:
    """The response set loaded from files with this SHA-256 checksum, if any."""
    return ResponseSet.objects.filter(checksum=checksum).first()


def response_set_latest(*, name: str) -> ResponseSet | None:
    """The highest version of the response set called ``name``, if any."""
    return ResponseSet.objects.filter(name=name).order_by("-version").first()


def catalog_stamp() -> tuple[tuple[int, int], ...]:
    """A cheap fingerprint of the catalog a load plan depends on.

    Returns
    -------
    tuple of (count, highest id) pairs
        For datasets, subjects, questions, language models and response sets,
        in that order (0 for the id of an empty table). Any row added or
        deleted changes it (ids are never reused); an edit of an existing row
        does not.
    """
    quote = connection.ops.quote_name
    models = (Dataset, Subject, Question, LanguageModel, ResponseSet)
    # One statement (the same counts and highest ids as one aggregate query per table).
    parts = [f"(SELECT COUNT({quote(model._meta.pk.column)}) FROM {quote(model._meta.db_table)}), "
             f"(SELECT MAX({quote(model._meta.pk.column)}) FROM {quote(model._meta.db_table)})" for model in models]
    with connection.cursor() as cursor:
        cursor.execute("SELECT " + ", ".join(parts))
        numbers = cursor.fetchone()
    return tuple((int(numbers[2 * k]), int(numbers[2 * k + 1] or 0)) for k in range(len(models)))


def response_sets_visible() -> QuerySet[ResponseSet]:
    """Every response set but those still ``loading`` (hidden until their last batch is written)."""
    return ResponseSet.objects.exclude(status=ResponseSetStatus.LOADING)


def response_sets_loaded() -> QuerySet[ResponseSet]:
    """The loaded (not superseded) response sets, newest first."""
    return ResponseSet.objects.filter(status=ResponseSetStatus.LOADED).order_by("-created_at")


def response_set_default() -> ResponseSet | None:
    """The response set a page offers first: the newest loaded one that has a
    finished scoring run, else the newest loaded one; None when none is loaded."""
    loaded = response_sets_loaded()
    return loaded.filter(scoring_runs__status=RunStatus.DONE).first() or loaded.first()


def response_set_by_key(*, key: str, version: int | None = None) -> ResponseSet | None:
    """The response set ``key`` names, as a command's ``--response-set`` takes it.

    The lookup order:

    1. a name: the latest version, or ``version`` when given. A name that
       exists is taken as a name first, so a set named ``"7"`` or
       ``"demo v2"`` is still found by its name;
    2. ``"NAME vN"`` as ``str(response_set)`` prints it;
    3. an id (all digits).

    Returns None when nothing matches.

    Raises
    ------
    ValueError
        ``ERR_VERSION_CLASH`` if ``key`` is ``"NAME vN"`` and ``version`` is
        given and differs from N.
    """
    visible = response_sets_visible()
    by_name = visible.filter(name=key)
    if by_name.exists():
        by_name = by_name.filter(version=version) if version is not None else by_name.order_by("-version")
        return by_name.first()
    match = _NAME_VERSION.match(key)
    if match:
        named = int(match["version"])
        if version is not None and version != named:
            raise ValueError(ERR_VERSION_CLASH.format(name=key, named=named, version=version))
        return visible.filter(name=match["name"], version=named).first()
    if ascii_int(key) is not None:
        found = visible.filter(pk=ascii_int(key))
        return (found.filter(version=version) if version is not None else found).first()
    return None


def response_set_labels() -> list[str]:
    """``str()`` of every response set ("NAME vN"), sorted: the keys
    :func:`response_set_by_key` accepts, for "known: ..." messages."""
    return sorted({str(r) for r in response_sets_visible()})


def datasets_by_name(*, names: Iterable[str]) -> dict[str, Dataset]:
    """The datasets among ``names`` that exist (name -> dataset)."""
    return {d.name: d for d in Dataset.objects.filter(name__in=list(names))}


def subjects_by_name(*, names: Iterable[str]) -> dict[str, Subject]:
    """The subjects among ``names`` that exist (name -> subject)."""
    return {s.name: s for s in Subject.objects.filter(name__in=list(names))}


def dataset_names() -> list[str]:
    """Every dataset's name, sorted."""
    return list(Dataset.objects.order_by("name").values_list("name", flat=True))


def subject_names() -> list[str]:
    """Every subject's name, sorted."""
    return list(Subject.objects.order_by("name").values_list("name", flat=True))


def model_ids_by_name(*, names: Iterable[str]) -> dict[str, int]:
    """Ids of the language models among ``names`` that exist (name -> id)."""
    return dict(LanguageModel.objects.filter(name__in=list(names)).values_list("name", "id"))


def response_set_names_loaded() -> list[str]:
    """Names of the loaded response sets, sorted, each once."""
    return sorted(set(response_sets_loaded().values_list("name", flat=True)))


_NAMED = {"dataset": Dataset, "subject": Subject, "model": LanguageModel}


def catalog_names(*, kind: str) -> list[str]:
    """Every stored name of ``kind`` ("dataset", "subject" or "model"), sorted
    (for the case-variant check of a load; these tables hold hundreds to
    thousands of rows)."""
    return list(_NAMED[kind].objects.order_by("name").values_list("name", flat=True))


def question_ids_by_dataset(*, dataset_names: Iterable[str]) -> dict[str, list[str]]:
    """The stored question ids (``external_id``) of each named dataset that exists."""
    out: dict[str, list[str]] = {}
    rows = Question.objects.filter(dataset__name__in=list(dataset_names)).values_list("dataset__name", "external_id")
    for dataset, external_id in rows.iterator(chunk_size=20_000):
        out.setdefault(dataset, []).append(external_id)
    return out
