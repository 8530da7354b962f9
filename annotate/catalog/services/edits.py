"""Staff's edits of catalog entries in the admin: datasets, subjects, questions, models.

Response sets are not edited here: they arrive through the upload service
and leave through background deletion (:mod:`annotate.catalog.services.deletion`).
"""
from __future__ import annotations

from collections.abc import Sequence

from django.db import transaction

from annotate.models import Dataset, LanguageModel, Question, ResponseSet, Subject

CatalogEntry = Dataset | Subject | Question | LanguageModel | ResponseSet


@transaction.atomic
def catalog_entry_save(*, entry: CatalogEntry, fields: Sequence[str] | None) -> CatalogEntry:
    """Save a catalog entry added or changed in the admin.

    Parameters
    ----------
    entry : Dataset, Subject, Question, LanguageModel or ResponseSet
        The entry with the form's values set on it.
    fields : sequence of str or None
        ``None`` for a new entry (every field written); else the model fields
        the form changed: only those are written, and nothing at all when it
        is empty (a response set's admin page changes nothing).

    Returns
    -------
    The saved entry.
    """
    if fields is None or entry.pk is None:
        entry.save()
    elif fields:
        entry.save(update_fields=list(fields))
    return entry


@transaction.atomic
def catalog_entry_delete(*, entry: Dataset | Subject | Question | LanguageModel) -> None:
    """Delete a catalog entry from the admin.

    Raises
    ------
    django.db.models.ProtectedError
        While questions, responses, pairs or studies still reference it
        (nothing is deleted; the admin's confirmation page lists them first).
    """
    entry.delete()
