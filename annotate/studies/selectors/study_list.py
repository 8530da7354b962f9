"""The study list as researchers see it: one row per study, every column true
for every kind of study.

A study's kind decides what its columns mean: a study judged on this site
with fixed pairs has a pair strategy and a number of pairs; an adaptive study
has a pool of questions and a number of pairs *per evaluator* (its pairs are
chosen while it runs); an imported or derived study has neither a strategy
nor a sampler, only the pairs its judgments came with. The status says
"full" when a stopping rule fired while the study was open, as the study's
manage page does.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, Exists, IntegerField, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from annotate.models import (
    AdaptivePoolQuestion,
    Pair,
    PairStrategy,
    Participation,
    StoppingRules,
    Study,
    StudyOrigin,
    StudyStatus,
)
from annotate.studies.selectors.studies import studies_visible_to

#: The status a study shows when a stopping rule fired while it was open.
STATUS_FULL = "full"
#: The strategy column of an imported study.
STRATEGY_IMPORTED = "imported judgments"
#: The strategy column of a derived study; ``{name}`` is its human response set.
STRATEGY_DERIVED = "derived from the answers in {name}"


@dataclass(frozen=True)
class StudyListRow:
    """One study as the study list shows it.

    Attributes
    ----------
    pk, name, created_at
        The study's.
    status : str
        "draft", "open", "full" (a stopping rule fired) or "closed".
    strategy : str
        How its pairs were chosen, or where its judgments came from.
    n_pairs : int
        Fixed-pair, imported and derived studies: the study's regular pairs
        (attention checks not included). Adaptive: the pairs each evaluator
        judges.
    n_pool : int or None
        Adaptive studies: the questions of the pool; None otherwise.
    n_evaluators : int
        Participations, excluded evaluators included.
    """

    pk: int
    name: str
    status: str
    strategy: str
    n_pairs: int
    n_pool: int | None
    n_evaluators: int
    created_at: datetime

    @property
    def is_adaptive(self) -> bool:
        return self.n_pool is not None


def _status(study: Study) -> str:
    if study.status == StudyStatus.OPEN and study.is_full:
        return STATUS_FULL
    return "draft" if study.status == StudyStatus.DRAFT else str(study.status)


def _strategy(study: Study) -> str:
    if study.origin == StudyOrigin.IMPORTED:
        return STRATEGY_IMPORTED
    if study.origin == StudyOrigin.DERIVED:
        name = study.derived_from.name if study.derived_from is not None else "a human response set"
        return STRATEGY_DERIVED.format(name=name)
    return str(study.get_strategy_display())


def _count_of(rows: QuerySet) -> Coalesce:
    """The number of ``rows`` of each study, as one subquery (no join that multiplies the rows of others)."""
    counted = rows.filter(study_id=OuterRef("pk")).order_by().values("study_id").annotate(n=Count("pk")).values("n")
    return Coalesce(Subquery(counted, output_field=IntegerField()), Value(0))


def study_list_rows(*, user: AbstractBaseUser | AnonymousUser) -> list[StudyListRow]:
    """The studies ``user`` may see (:func:`studies_visible_to`), newest first, as list rows.

    Parameters
    ----------
    user
        The signed-in user; anyone else sees no row.

    Returns
    -------
    list of StudyListRow
    """
    fired = StoppingRules.objects.filter(study_id=OuterRef("pk"), fired_at__isnull=False)
    studies = (
        studies_visible_to(user=user)
        .select_related("derived_from")
        .annotate(
            n_evaluators=_count_of(Participation.objects.all()),
            n_regular_pairs=_count_of(Pair.objects.filter(attention_check=False)),
            n_pool=_count_of(AdaptivePoolQuestion.objects.all()),
            is_full=Exists(fired),
        )
    )
    rows = []
    for study in studies:
        adaptive = study.origin == StudyOrigin.JUDGED and study.strategy == PairStrategy.ADAPTIVE
        rows.append(StudyListRow(
            pk=study.pk, name=study.name, status=_status(study), strategy=_strategy(study),
            n_pairs=study.n_pairs if adaptive else study.n_regular_pairs,
            n_pool=study.n_pool if adaptive else None, n_evaluators=study.n_evaluators,
            created_at=study.created_at,
        ))
    return rows
