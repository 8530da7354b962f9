"""What a command's options name, found through the selectors, or a
``CommandError`` that says what was not found. Every command taking
``--study`` or ``--run`` uses these, so they all accept the same keys."""
from __future__ import annotations

from django.core.management.base import CommandError

from annotate.models import ScoringRun, Study
from annotate.selectors.scoring import scoring_run_get
from annotate.selectors.studies import study_get_by_key

NO_STUDY = "no study named or numbered {key!r}"
NO_RUN = "no scoring run with id {run_id}"


def study_from_option(key: str) -> Study:
    """The study ``--study`` names: by name first, then by id
    (see :func:`annotate.selectors.studies.study_get_by_key`)."""
    study = study_get_by_key(key=str(key))
    if study is None:
        raise CommandError(NO_STUDY.format(key=str(key)))
    return study


def scoring_run_from_option(run_id: int) -> ScoringRun:
    """The scoring run ``--run`` names by id."""
    run = scoring_run_get(pk=run_id)
    if run is None:
        raise CommandError(NO_RUN.format(run_id=run_id))
    return run
