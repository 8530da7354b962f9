"""What a command's options name, found through the selectors, or a
``CommandError`` that says what was not found. Every command taking
``--study``, ``--run``, ``--datasets`` or ``--subjects`` uses these, so they
all accept the same keys."""
from __future__ import annotations

from django.core.management.base import CommandError

from annotate.catalog import dataset_names, datasets_by_name, subject_names, subjects_by_name
from annotate.core import unknown_name
from annotate.models import Dataset, ScoringRun, Study, Subject
from annotate.runs import scoring_run_get
from annotate.studies import study_get_by_key, user_get_by_username

NO_STUDY = "no study named or numbered {key!r}"
NO_RUN = "no scoring run with id {run_id}"
NO_OWNER = "--owner must name an existing user; no user {value!r}"
OWNER_HELP = "the researcher who owns the study (default: none; then only staff see it)"


def study_from_option(key: str) -> Study:
    """The study ``--study`` names: by name first, then by id
    (see :func:`annotate.studies.selectors.studies.study_get_by_key`)."""
    study = study_get_by_key(key=str(key))
    if study is None:
        raise CommandError(NO_STUDY.format(key=str(key)))
    return study


def owner_from_option(username: str | None):
    """The user ``--owner`` names, or None when the option is not given."""
    if username is None:
        return None
    owner = user_get_by_username(username=username)
    if owner is None:
        raise CommandError(NO_OWNER.format(value=username))
    return owner


def scoring_run_from_option(run_id: int) -> ScoringRun:
    """The scoring run ``--run`` names by id."""
    run = scoring_run_get(pk=run_id)
    if run is None:
        raise CommandError(NO_RUN.format(run_id=run_id))
    return run


def datasets_from_option(names: list[str]) -> list[Dataset]:
    """The datasets ``--datasets`` names, in the order given."""
    found = datasets_by_name(names=names)
    missing = [n for n in names if n not in found]
    if missing:
        known = dataset_names()
        raise CommandError(" | ".join(unknown_name(kind="dataset", name=n, known=known) for n in missing))
    return [found[n] for n in names]


def subjects_from_option(names: list[str]) -> list[Subject]:
    """The subjects ``--subjects`` names, in the order given."""
    found = subjects_by_name(names=names)
    missing = [n for n in names if n not in found]
    if missing:
        known = subject_names()
        raise CommandError(" | ".join(unknown_name(kind="subject", name=n, known=known) for n in missing))
    return [found[n] for n in names]
